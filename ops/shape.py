"""Shape ops, the user-facing namespace: shapes as values (`shape`), reshaping
(`reshape`, `flatten`, `specify_shape`), broadcasting (`broadcast_to`), joining
(`concatenate`, `stack`, `split`) and axis shuffles (`transpose`, `expand_dims`,
`squeeze`). Each op lives in the module named for its job; this one gathers them."""

from __future__ import annotations

from ops.broadcast import BroadcastTo, broadcast_to
from ops.dimshuffle import DimShuffle, expand_dims, squeeze, transpose
from ops.join import Concatenate, Split, concatenate, split, stack
from ops.reshape import Reshape, SpecifyShape, flatten, reshape, specify_shape
from ops.shape_vector import (
    MakeVector,
    Shape,
    ShapeI,
    ShapeLike,
    ShapeVector,
    as_shape_vector,
    shape,
    shape_i,
)

__all__ = [
    "BroadcastTo",
    "Concatenate",
    "DimShuffle",
    "MakeVector",
    "Reshape",
    "Shape",
    "ShapeI",
    "ShapeLike",
    "ShapeVector",
    "SpecifyShape",
    "Split",
    "as_shape_vector",
    "broadcast_to",
    "concatenate",
    "expand_dims",
    "flatten",
    "reshape",
    "shape",
    "shape_i",
    "specify_shape",
    "split",
    "squeeze",
    "stack",
    "transpose",
]
