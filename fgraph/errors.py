"""Exception types raised by graph construction, so callers can catch them precisely,
and how run-time errors get told where they happened.

Each derives from the builtin a NumPy user would expect (`TypeError` for dtype and
type mismatches, `ValueError` for shapes), so `except ValueError` keeps working. A
run-time error keeps its type too when it is told where it happened (the node and the
user's names of its inputs, the step of a loop): it is raised again as a new exception
of the same type, chained `from` the original.
"""

from typing import NoReturn


class ShapeError(ValueError):
    """Static shapes are incompatible (broadcasting, reshaping, matching a type)."""


class DTypeError(TypeError):
    """A dtype is unsupported or cannot be used where it was given."""


class MissingInputError(ValueError):
    """A graph's outputs depend on an input that the graph does not declare."""


RUN_TIME_ERRORS = (ValueError, IndexError, ArithmeticError)
"""What computing a value raises on bad values (NumPy's errors and the ops' own checks);
the reference evaluator and loops add where it happened to these and let others pass."""


def reraise_in_context(error: Exception, context: str, said: str = "") -> NoReturn:
    """Raise `error` again with `context` (where it happened, named as the user named
    things) before its message: as a new exception of the same type chained `from` it,
    so `except` clauses keep working; an exception its type cannot rebuild from one
    message (extra constructor arguments) is raised itself, the context added as a note.
    `said`: a start of the message that the context says already (dropped)."""
    original = str(error)
    message = f"{context}: {original.removeprefix(said) if said else original}"
    try:
        located = type(error)(message)
    except Exception:  # a type whose constructor needs more than a message
        located = None
    if located is None or str(located) != message:
        error.add_note(context)
        located = error
    setattr(located, _LOCATED, True)
    if located is error:
        raise error
    raise located from error


def is_located(error: BaseException) -> bool:
    """Whether `error` was raised by `reraise_in_context`: it says where it happened, so
    an outer evaluation (of the node running a loop) does not say it again."""
    return bool(getattr(error, _LOCATED, False))


_LOCATED = "_fgraph_located"
