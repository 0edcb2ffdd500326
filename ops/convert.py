"""Turning user values into graph variables.

Python scalars are *weakly typed* as in NumPy 2 (NEP 50): in `x * 2` with a float32 `x`,
the `2` becomes a float32 constant, so the result stays float32. Arrays and NumPy
scalars keep their own dtype.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from fgraph import Constant, DTypeError, Variable, as_dtype
from fgraph.operators import TensorLike


def as_tensor(value: TensorLike, dtype: npt.DTypeLike | None = None, name: str = "value") -> Variable:
    """A variable for `value`: variables pass through, anything array-like becomes a Constant."""
    if isinstance(value, Variable):
        if dtype is not None and value.dtype != as_dtype(dtype):
            raise DTypeError(f"{name}: expected dtype {as_dtype(dtype)}, got {value.dtype}")
        return value
    if isinstance(value, (list, tuple)) and any(isinstance(item, Variable) for item in value):
        raise TypeError(f"{name}: a list holding variables; use ops.stack to combine them")
    try:
        return constant(value, dtype)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name}: cannot convert {value!r} to a tensor: {error}") from error


def as_condition(value: TensorLike, name: str) -> TensorLike:
    """`value`, refused if it is a Python or NumPy bool where a tensor condition is meant.

    `variable == value` and `variable != value` compare identity (nodes are interned, so
    `==` cannot build a node) and give a plain bool; taken as a constant condition, that
    bool would silently select one branch everywhere. A deliberate constant condition
    is written `constant(True)`."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"{name}: expected a tensor condition, got the Python bool {value!r}; "
            "`x == y` and `x != y` compare variables by identity, so write the elementwise "
            f"comparison as pt.eq(x, y) / pt.neq(x, y) (or pt.constant({bool(value)!r}) for "
            "a constant condition)"
        )
    return value


def constant(value: Any, dtype: npt.DTypeLike | None = None) -> Constant:
    """A read-only constant (interned: equal values give the same object)."""
    return Constant(np.asarray(value, dtype=None if dtype is None else as_dtype(dtype)))


def is_weak_scalar(value: object) -> bool:
    """Python numbers, which take their dtype from the tensors they combine with."""
    return isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)


def as_tensors_weak(values: Sequence[TensorLike], name: str = "value") -> tuple[Variable, ...]:
    """Convert operands of one elementwise operation, typing Python scalars like NumPy 2."""
    strong = [
        value.dtype if isinstance(value, Variable) else np.asarray(value).dtype.name
        for value in values
        if not is_weak_scalar(value)
    ]
    converted: list[Variable] = []
    for value in values:
        if isinstance(value, (bool, int, float, complex)) and strong:
            result = np.result_type(*(np.dtype(d) for d in strong), value)
            converted.append(constant(value, _weak_dtype(value, result.name)))
        else:
            converted.append(as_tensor(value, name=name))
    return tuple(converted)


def _weak_dtype(value: object, result: str) -> str:
    """The dtype a weak Python scalar takes next to tensors whose promotion gives `result`."""
    kind = np.dtype(result).kind
    if isinstance(value, bool):
        return "bool" if kind == "b" else result
    if isinstance(value, int):
        return result
    if isinstance(value, float):
        return result if kind in "fc" else "float64"
    return result if kind == "c" else "complex128"
