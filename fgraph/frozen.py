"""Assignment to a frozen object says what was refused.

attrs' frozen classes raise `FrozenInstanceError("can't set attribute")`, naming neither
the class nor the attribute. Classes deriving `Frozen` (ops, variables, nodes, types,
graphs) get the same refusal with both named and the way out (build a new value).
"""

from __future__ import annotations

from typing import Any

from attrs.exceptions import FrozenInstanceError


class FrozenError(FrozenInstanceError):
    """Setting or deleting an attribute of a frozen fgraph object."""

    args = BaseException.__dict__["args"]  # attrs' base pins a fixed message

    def __init__(self, message: str) -> None:
        AttributeError.__init__(self, message)


def _refuse_set(self: object, name: str, value: Any) -> None:
    raise FrozenError(
        f"{type(self).__name__} is frozen: cannot set {name!r}; build a new one instead "
        f"(attrs.evolve(value, {name}=...) for ops and types)"
    )


def _refuse_delete(self: object, name: str) -> None:
    raise FrozenError(f"{type(self).__name__} is frozen: cannot delete {name!r}")


class Frozen:
    """Base whose attrs-frozen subclasses refuse assignment with a message naming the
    class and the attribute."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # attrs builds a slotted class anew with its own __setattr__ in the namespace.
        if getattr(cls.__dict__.get("__setattr__"), "__name__", "") == "_frozen_setattrs":
            type.__setattr__(cls, "__setattr__", _refuse_set)
        if getattr(cls.__dict__.get("__delattr__"), "__name__", "") == "_frozen_delattrs":
            type.__setattr__(cls, "__delattr__", _refuse_delete)
