"""Exception types raised by graph construction, so callers can catch them precisely.

Each derives from the builtin a NumPy user would expect (`TypeError` for dtype and
type mismatches, `ValueError` for shapes), so `except ValueError` keeps working.
"""


class ShapeError(ValueError):
    """Static shapes are incompatible (broadcasting, reshaping, matching a type)."""


class DTypeError(TypeError):
    """A dtype is unsupported or cannot be used where it was given."""


class MissingInputError(ValueError):
    """A graph's outputs depend on an input that the graph does not declare."""
