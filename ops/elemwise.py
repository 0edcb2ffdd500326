"""`Elemwise`: a scalar op mapped over arrays with NumPy broadcasting, and the user-level
elementwise functions (`add`, `exp`, `where`, ...).

`Elemwise` nodes always see inputs of equal rank: the functions here left-pad ranks
with `DimShuffle` first, as NumPy's alignment rule does implicitly. Broadcasting then
happens only along axes whose static length is 1; an axis of unknown length that
turns out to be 1 at run time while others are longer is an error, as in PyTensor,
because gradients and compiled loops are fixed when the graph is built.
"""

from __future__ import annotations

import attrs
import numpy as np

from fgraph import Op, ShapeError, TensorType, Variable, broadcast_shapes
from fgraph.dtypes import is_inexact
from fgraph.op import Array
from fgraph.operators import TensorLike
from ops.convert import as_tensors_weak
from ops.dimshuffle import DimShuffle, left_pad_rank
from ops.scalar import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NEQ,
    Abs,
    Add,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    Cast,
    Exp,
    IntDiv,
    Invert,
    Log,
    Mod,
    Mul,
    Neg,
    Pow,
    ScalarOp,
    Second,
    Sign,
    Sub,
    TrueDiv,
)


@attrs.frozen(cache_hash=True)
class Elemwise(Op):
    """`scalar_op` applied elementwise to equal-rank inputs with static broadcasting."""

    scalar_op: ScalarOp

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != self.scalar_op.nin:
            raise TypeError(f"{self}: expected {self.scalar_op.nin} inputs, got {len(input_types)}")
        ranks = {t.ndim for t in input_types}
        if len(ranks) > 1:
            listed = ", ".join(str(t) for t in input_types)
            raise ShapeError(f"{self}: inputs need equal ranks (pad with DimShuffle), got {listed}")
        shape = broadcast_shapes(*(t.shape for t in input_types))
        dtype = self.scalar_op.output_dtype(*(t.dtype for t in input_types))
        return (TensorType(dtype, shape),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        with np.errstate(all="ignore"):
            result = self.scalar_op.impl(*inputs)
        dtype = self.scalar_op.output_dtype(*(x.dtype.name for x in inputs))
        return (np.asarray(result, dtype=dtype),)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (cotangent,) = cotangents
        if cotangent is None:
            return (None,) * len(inputs)
        partials = self.scalar_op.partials(inputs, outputs[0])
        gradients: list[Variable | None] = []
        for x, partial in zip(inputs, partials):
            if partial is None or not is_inexact(x.dtype):
                gradients.append(None)
                continue
            gradients.append(_fit_to(x, mul(cotangent, partial)))
        return tuple(gradients)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (output,) = outputs
        if not is_inexact(output.dtype):
            return (None,)
        partials = self.scalar_op.partials(inputs, output)
        total: Variable | None = None
        for tangent, partial in zip(tangents, partials):
            if tangent is None or partial is None:
                continue
            term = mul(tangent, partial)
            total = term if total is None else add(total, term)
        return (None if total is None else _fit_to(output, total),)

    def __str__(self) -> str:
        return str(self.scalar_op)


def _fit_to(target: Variable, value: Variable) -> Variable:
    """Sum `value` over the axes `target` broadcasts along, and cast to its dtype."""
    axes = tuple(
        axis
        for axis, (want, got) in enumerate(zip(target.type.shape, value.type.shape))
        if want == 1 and got != 1
    )
    if axes:
        from ops.reduction import Sum

        kept = Sum(axes)(value)
        order = iter(range(kept.ndim))
        restored = tuple(None if axis in axes else next(order) for axis in range(value.ndim))
        value = DimShuffle(restored)(kept)
    if value.dtype != target.dtype:
        value = cast(value, target.dtype)
    return value


def elemwise(scalar_op: ScalarOp, *operands: TensorLike) -> Variable:
    """Apply `scalar_op` with NumPy broadcasting (ranks left-padded) and weak scalars."""
    variables = as_tensors_weak(operands)
    rank = max(v.ndim for v in variables)
    return Elemwise(scalar_op)(*(left_pad_rank(v, rank) for v in variables))


def add(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(Add(), x, y)


def sub(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(Sub(), x, y)


def mul(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(Mul(), x, y)


def true_div(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(TrueDiv(), x, y)


def pow(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(Pow(), x, y)


def int_div(x: TensorLike, y: TensorLike) -> Variable:
    """Floor division `x // y`."""
    return elemwise(IntDiv(), x, y)


def mod(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(Mod(), x, y)


def neg(x: TensorLike) -> Variable:
    return elemwise(Neg(), x)


def abs(x: TensorLike) -> Variable:
    return elemwise(Abs(), x)


def sign(x: TensorLike) -> Variable:
    return elemwise(Sign(), x)


def lt(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(LT(), x, y)


def le(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(LE(), x, y)


def gt(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(GT(), x, y)


def ge(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(GE(), x, y)


def eq(x: TensorLike, y: TensorLike) -> Variable:
    """Elementwise `==` (the operator stays identity, since nodes are interned)."""
    return elemwise(EQ(), x, y)


def neq(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(NEQ(), x, y)


def bitwise_and(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(BitwiseAnd(), x, y)


def bitwise_or(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(BitwiseOr(), x, y)


def bitwise_xor(x: TensorLike, y: TensorLike) -> Variable:
    return elemwise(BitwiseXor(), x, y)


def invert(x: TensorLike) -> Variable:
    return elemwise(Invert(), x)


def exp(x: TensorLike) -> Variable:
    return elemwise(Exp(), x)


def log(x: TensorLike) -> Variable:
    return elemwise(Log(), x)


def second(x: TensorLike, y: TensorLike) -> Variable:
    """`y` broadcast against `x` (values of y, shape of both)."""
    return elemwise(Second(), x, y)


def cast(x: TensorLike, dtype: str) -> Variable:
    """`x.astype(dtype)`; a no-op when the dtype already matches."""
    (variable,) = as_tensors_weak((x,))
    return variable if variable.dtype == dtype else elemwise(Cast(dtype), variable)


def ones_like(x: Variable) -> Variable:
    """Ones of `x`'s shape and dtype."""
    return second(x, np.ones((), dtype=x.dtype))


def zeros_like(x: Variable) -> Variable:
    """Zeros of `x`'s shape and dtype."""
    return second(x, np.zeros((), dtype=x.dtype))
