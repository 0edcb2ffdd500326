"""Reading a graph where rewrites and `grad` both need to: constants through the shuffles
that broadcasting puts around them, and fitting an equivalent variable to the exact type
of the one it stands for (a dtype conversion may be added; a shape never changes).
"""

from __future__ import annotations

import numpy as np

from fgraph import Constant, TensorType, Variable
from fgraph.op import Array
from ops.dimshuffle import DimShuffle
from ops.elemwise import Elemwise
from ops.scalar_ops import Cast


def constant_data(variable: Variable) -> Array | None:
    """The value of `variable` when it is a constant, possibly under `DimShuffle`s (how
    `x * 2` pads the rank of its `2`), else None."""
    shuffles: list[DimShuffle] = []
    while variable.owner is not None:
        node = variable.owner
        if not isinstance(node.op, DimShuffle):
            return None
        shuffles.append(node.op)
        variable = node.inputs[0]
    if not isinstance(variable, Constant):
        return None
    data = variable.data
    for shuffle in reversed(shuffles):
        (data,) = shuffle.perform(data)
    return data


def is_constant_value(variable: Variable, value: float) -> bool:
    """Whether `variable` is a non-empty constant (see `constant_data`) whose every
    element equals `value`. Whether its shape broadcasts harmlessly is the caller's
    business (`fit_to_type` checks the final type)."""
    data = constant_data(variable)
    return data is not None and data.size > 0 and bool(np.all(data == value))


def fit_to_type(candidate: Variable, target: TensorType) -> Variable | None:
    """`candidate` made to have type `target` (or a refinement of it), or None if that
    is not cheap: only a dtype conversion is added, a shape is never changed.

    Callers use it where `candidate` equals the replaced value converted to `target`'s
    dtype (`x * 1` with an integer `x` and a float `1` is `x` as a float)."""
    if candidate.type.is_subtype_of(target):
        return candidate
    if candidate.ndim != target.ndim:
        return None
    refined = TensorType(target.dtype, candidate.type.shape)
    if not refined.is_subtype_of(target):
        return None
    return Elemwise(Cast(target.dtype))(candidate)
