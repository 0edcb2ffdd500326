# Type stubs for numba's exception types (numba ships no type information).

class NumbaError(Exception):
    """Base of the errors numba raises for code it cannot type, lower or compile."""

class TypingError(NumbaError):
    """Code numba cannot type: a function given arguments it does not take."""

class NumbaWarning(Warning):
    """Base of numba's warnings (a function it cannot cache, among others)."""
