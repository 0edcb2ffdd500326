"""Linear algebra: `MatMul`, the one contraction op, and `matmul`, `dot`, `outer` over it.

`MatMul` multiplies stacks of matrices of equal rank (at least 2), broadcasting the
leading batch axes along static length 1 as `Elemwise` does. NumPy's other conventions
(vector promotion in `matmul`, `dot`'s n-d layout) are spelled with `DimShuffle`
around one `MatMul` node, so rewrites and backends have a single op to handle.
"""

from __future__ import annotations

import attrs
import numpy as np

from fgraph import Op, ShapeError, TensorType, Variable, broadcast_shapes, format_shape, promote
from fgraph.dtypes import is_inexact
from fgraph.op import Array, Vectorized
from fgraph.operators import TensorLike
from ops.convert import as_tensor
from ops.dimshuffle import DimShuffle, left_pad_rank
from ops.elemwise import check_static_broadcast, fit_to
from ops.elementwise_functions import add, mul
from ops.reshape_ops import flatten


# Kernel: numba_backend.matmul_op._matmul
@attrs.frozen(cache_hash=True)
class MatMul(Op):
    """`x @ y` for inputs of equal rank >= 2: (..., m, k) @ (..., k, n) -> (..., m, n)."""

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """Batch axes are MatMul's own leading axes: an unbatched operand gets leading
        axes of length 1, which broadcast."""
        rank = max(v.ndim for v, flag in zip(inputs, batched) if flag)
        x, y = (left_pad_rank(v, rank) for v in inputs)
        return (self(x, y),), (True,)

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != 2:
            raise TypeError(f"{self}: expected 2 inputs, got {len(input_types)}")
        x, y = input_types
        if x.ndim != y.ndim or x.ndim < 2:
            raise ShapeError(
                f"{self}: inputs need equal ranks >= 2 (pad with DimShuffle), got {x} and {y}"
            )
        check_contracted("MatMul", x, y, x.shape[-1], y.shape[-2])
        try:
            batch = broadcast_shapes(x.shape[:-2], y.shape[:-2])
        except ShapeError as error:
            raise ShapeError(f"{self}: batch axes of {x} and {y} do not broadcast") from error
        return (TensorType(promote(x.dtype, y.dtype), (*batch, x.shape[-2], y.shape[-1])),)

    def check_values(self, input_types: tuple[TensorType, ...], inputs: tuple[Array, ...]) -> None:
        check_static_broadcast(self, input_types, inputs, range(inputs[0].ndim - 2))

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        x, y = inputs
        return (np.asarray(np.matmul(x, y), dtype=promote(x.dtype.name, y.dtype.name)),)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        x, y = inputs
        (cotangent,) = cotangents
        if cotangent is None:
            return (None, None)
        x_gradient = fit_to(x, self(cotangent, swap_last_axes(y))) if is_inexact(x.dtype) else None
        y_gradient = fit_to(y, self(swap_last_axes(x), cotangent)) if is_inexact(y.dtype) else None
        return (x_gradient, y_gradient)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        x, y = inputs
        x_tangent, y_tangent = tangents
        if not is_inexact(outputs[0].dtype):
            return (None,)
        # Bilinear: d(x @ y) = dx @ y + x @ dy.
        terms = []
        if x_tangent is not None:
            terms.append(self(x_tangent, y))
        if y_tangent is not None:
            terms.append(self(x, y_tangent))
        if not terms:
            return (None,)
        return (terms[0] if len(terms) == 1 else add(terms[0], terms[1]),)


def check_contracted(
    name: str, x: TensorType, y: TensorType, x_length: int | None, y_length: int | None
) -> None:
    """Raise naming both shapes when the contracted axes have different static lengths."""
    if x_length is not None and y_length is not None and x_length != y_length:
        raise ShapeError(
            f"{name}: contracted axes differ in length ({x_length} vs {y_length}) "
            f"for shapes {format_shape(x.shape)} and {format_shape(y.shape)}"
        )


def swap_last_axes(x: Variable) -> Variable:
    """Transpose the two trailing axes (the matrix transpose of a stack of matrices)."""
    rank = x.ndim
    return DimShuffle((*range(rank - 2), rank - 1, rank - 2))(x)


def matmul(x: TensorLike, y: TensorLike) -> Variable:
    """`x @ y` as `numpy.matmul`: a 1-d operand is promoted to a matrix (a row on the left,
    a column on the right) and the added axis removed from the result; batch axes
    broadcast along static length 1."""
    x_variable, y_variable = as_tensor(x, name="matmul x"), as_tensor(y, name="matmul y")
    x_type, y_type = x_variable.type, y_variable.type
    if x_type.ndim == 0 or y_type.ndim == 0:
        raise ShapeError(
            f"matmul: operands must have rank >= 1, got shapes {format_shape(x_type.shape)} "
            f"and {format_shape(y_type.shape)} (use * to multiply by a scalar)"
        )
    y_contracted = y_type.shape[-2] if y_type.ndim > 1 else y_type.shape[0]
    check_contracted("matmul", x_type, y_type, x_type.shape[-1], y_contracted)
    x_matrix = DimShuffle((None, 0))(x_variable) if x_type.ndim == 1 else x_variable
    y_matrix = DimShuffle((0, None))(y_variable) if y_type.ndim == 1 else y_variable
    rank = max(x_matrix.ndim, y_matrix.ndim)
    product = MatMul()(left_pad_rank(x_matrix, rank), left_pad_rank(y_matrix, rank))
    # Drop the axes a vector operand was promoted with: the row (-2) and/or column (-1).
    dropped = {rank - 2} if x_type.ndim == 1 else set()
    dropped |= {rank - 1} if y_type.ndim == 1 else set()
    return _shuffled(product, tuple(axis for axis in range(rank) if axis not in dropped))


def dot(x: TensorLike, y: TensorLike) -> Variable:
    """`numpy.dot`: a product with a scalar, the inner product of vectors, matrix products,
    and for n-d operands the sum over the last axis of `x` and the second-to-last of `y`
    (result shape x.shape[:-1] + y.shape[:-2] + y.shape[-1:])."""
    x_variable, y_variable = as_tensor(x, name="dot x"), as_tensor(y, name="dot y")
    if x_variable.ndim == 0 or y_variable.ndim == 0:
        return mul(x_variable, y_variable)
    if x_variable.ndim == 1 or y_variable.ndim == 1:
        return matmul(x_variable, y_variable)  # numpy.matmul agrees with numpy.dot here
    check_contracted(
        "dot", x_variable.type, y_variable.type, x_variable.type.shape[-1],
        y_variable.type.shape[-2],
    )
    # x (A.., m, k) -> (A.., 1.., m, k) and y (B.., k, n) -> (1.., B.., k, n) multiply to
    # (A.., B.., m, n); then m moves in front of B.
    x_batch, y_batch = x_variable.ndim - 2, y_variable.ndim - 2
    x_order = (*range(x_batch), *(None,) * y_batch, x_batch, x_batch + 1)
    y_order = (*(None,) * x_batch, *range(y_variable.ndim))
    product = MatMul()(_shuffled(x_variable, x_order), _shuffled(y_variable, y_order))
    batch = x_batch + y_batch
    return _shuffled(product, (*range(x_batch), batch, *range(x_batch, batch), batch + 1))


def _shuffled(x: Variable, order: tuple[int | None, ...]) -> Variable:
    """`DimShuffle(order)(x)`, skipping the identity."""
    return x if order == tuple(range(x.ndim)) else DimShuffle(order)(x)


def outer(x: TensorLike, y: TensorLike) -> Variable:
    """`numpy.outer`: result[i, j] = x[i] * y[j] over the flattened operands, an
    elementwise product of a column and a row."""
    column = DimShuffle((0, None))(_as_vector(as_tensor(x, name="outer x")))
    row = DimShuffle((None, 0))(_as_vector(as_tensor(y, name="outer y")))
    return mul(column, row)


def _as_vector(x: Variable) -> Variable:
    if x.ndim == 1:
        return x
    return DimShuffle((None,))(x) if x.ndim == 0 else flatten(x)
