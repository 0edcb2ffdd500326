"""Shape ops: reshape, flatten, shape and the DimShuffle-based transposes (in progress)."""

from __future__ import annotations

from fgraph import Variable
from fgraph.operators import TensorLike
from ops.dimshuffle import expand_dims, squeeze, transpose


def reshape(x: Variable, new_shape: TensorLike) -> Variable:
    raise NotImplementedError("reshape: being implemented")


def flatten(x: Variable) -> Variable:
    raise NotImplementedError("flatten: being implemented")


def shape(x: Variable) -> Variable:
    raise NotImplementedError("shape: being implemented")


__all__ = ["expand_dims", "flatten", "reshape", "shape", "squeeze", "stack", "transpose"]


def stack(tensors: list[Variable], axis: int = 0) -> Variable:
    raise NotImplementedError("stack: being implemented")
