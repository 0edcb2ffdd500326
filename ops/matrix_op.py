"""`MatrixOp`: the base of linear-algebra ops, which act on the trailing (core) axes of
each input and map over the leading (batch) axes, as NumPy's stacked-matrix functions do.

An op says how long its core is per input (`core_ranks`), what its outputs' core shapes
are for given input core shapes (`core_shapes`, which also refuses a wrong shape, at
build time with static lengths and at run time with actual ones), and how to compute one
batch element (`core_perform`). Batching, dtype checks and the broadcasting of batch axes
(along static length 1, as `MatMul`) are here once. Only float32 and float64 are taken:
LAPACK has no integer routines, and the user functions convert integers to float64 as
NumPy does.
"""

from __future__ import annotations

import abc
from typing import ClassVar

import attrs
import numpy as np

from fgraph import DTypeError, Op, ShapeError, TensorType, Variable, broadcast_shapes, promote
from fgraph.op import Array, Vectorized
from fgraph.operators import TensorLike
from ops.convert import as_tensor
from ops.dimshuffle import DimShuffle
from ops.elemwise import check_static_broadcast
from ops.elementwise_functions import cast

Shape = tuple[int | None, ...]
LinAlgError = np.linalg.LinAlgError
"""Raised for singular and non-positive-definite inputs (a ValueError, as NumPy's)."""

FLOAT_DTYPES = ("float32", "float64")


@attrs.frozen(cache_hash=True)
class MatrixOp(Op, abc.ABC):
    """An op over the trailing `core_ranks[k]` axes of input k, batched over the rest."""

    core_ranks: ClassVar[tuple[int, ...]]
    output_count: ClassVar[int] = 1

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """Batch axes join the op's own leading axes: unbatched operands get leading axes
        of length 1, which broadcast."""
        padded = [v if flag else DimShuffle((*(None,) * batch_ndim, *range(v.ndim)))(v)
                  for v, flag in zip(inputs, batched)]
        outputs = self.apply(*padded)
        return outputs, (True,) * len(outputs)

    @abc.abstractmethod
    def core_shapes(self, *input_cores: Shape) -> tuple[Shape, ...]:
        """The outputs' core shapes for these input core shapes (None: unknown length);
        raise ShapeError naming the op for shapes it cannot take."""

    def output_dtypes(self, dtype: str) -> tuple[str, ...]:
        """The outputs' dtypes when the inputs promote to `dtype` (float32 or float64)."""
        return (dtype,) * self.output_count

    @abc.abstractmethod
    def core_perform(self, *cores: Array) -> tuple[Array, ...]:
        """The outputs for one batch element (inputs already of the output dtype)."""

    def batch_rank(self, input_types: tuple[TensorType, ...]) -> int:
        return input_types[0].ndim - self.core_ranks[0]

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != len(self.core_ranks):
            raise TypeError(f"{self}: expected {len(self.core_ranks)} inputs, got {len(input_types)}")
        for number, (input_type, rank) in enumerate(zip(input_types, self.core_ranks)):
            if input_type.dtype not in FLOAT_DTYPES:
                raise DTypeError(
                    f"{self}: input {number} must be float32 or float64, got {input_type}"
                )
            if input_type.ndim < rank:
                raise ShapeError(f"{self}: input {number} needs at least {rank} axes, got {input_type}")
        batch_ranks = {t.ndim - rank for t, rank in zip(input_types, self.core_ranks)}
        if len(batch_ranks) != 1:
            listed = ", ".join(str(t) for t in input_types)
            raise ShapeError(f"{self}: inputs need equal batch ranks (pad them), got {listed}")
        batch_rank = batch_ranks.pop()
        try:
            batch = broadcast_shapes(*(t.shape[:batch_rank] for t in input_types))
        except ShapeError as error:
            listed = ", ".join(str(t) for t in input_types)
            raise ShapeError(f"{self}: batch axes of {listed} do not broadcast") from error
        cores = self.core_shapes(*(t.shape[batch_rank:] for t in input_types))
        dtypes = self.output_dtypes(promote(*(t.dtype for t in input_types)))
        return tuple(TensorType(dtype, (*batch, *core)) for dtype, core in zip(dtypes, cores))

    def check_values(self, input_types: tuple[TensorType, ...], inputs: tuple[Array, ...]) -> None:
        check_static_broadcast(self, input_types, inputs, range(self.batch_rank(input_types)))

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        batch_rank = inputs[0].ndim - self.core_ranks[0]
        batch = np.broadcast_shapes(*(x.shape[:batch_rank] for x in inputs))
        cores = self.core_shapes(*(x.shape[batch_rank:] for x in inputs))
        dtypes = self.output_dtypes(np.result_type(*inputs).name)
        outputs = [np.empty((*batch, *core), dtype) for core, dtype in zip(cores, dtypes)]
        compute = np.result_type(*inputs)
        for index in np.ndindex(*batch):
            picked = [
                x[tuple(0 if length == 1 else i for length, i in zip(x.shape, index))].astype(
                    compute, copy=False
                )
                for x in inputs
            ]
            for output, value in zip(outputs, self.core_perform(*picked)):
                output[index] = value
        return tuple(outputs)


def square_length(op: Op, core: Shape, what: str = "input") -> int | None:
    """The length of a square core shape; ShapeError naming `op` when it is not square."""
    rows, columns = core
    if rows is not None and columns is not None and rows != columns:
        raise ShapeError(f"{op}: the {what} must be square, got shape ({rows}, {columns})")
    return rows if rows is not None else columns


def same_length(op: Op, first: int | None, second: int | None, what: str) -> int | None:
    """`first` and `second` as one length; ShapeError when both are known and differ."""
    if first is not None and second is not None and first != second:
        raise ShapeError(f"{op}: {what} differ in length ({first} vs {second})")
    return first if first is not None else second


def as_matrix_operand(x: TensorLike, name: str, min_rank: int = 2) -> Variable:
    """`x` as a tensor of a LAPACK dtype: integers and bools become float64, as NumPy's
    `linalg` gives; float16 and complex values are refused with the function's name."""
    variable = as_tensor(x, name=name)
    if variable.ndim < min_rank:
        raise ShapeError(f"{name}: expected at least {min_rank} axes, got {variable.type}")
    if variable.dtype in FLOAT_DTYPES:
        return variable
    if variable.dtype == "bool" or variable.dtype.startswith(("int", "uint")):
        return cast(variable, "float64")
    raise DTypeError(f"{name}: float32 or float64 values are needed, got {variable.type}")


def pad_batch(variables: list[Variable], core_ranks: tuple[int, ...]) -> list[Variable]:
    """Left-pad the batch axes with length-1 axes so all batch ranks are equal."""
    ranks = [v.ndim - core for v, core in zip(variables, core_ranks)]
    target = max(ranks)
    return [
        v if rank == target else DimShuffle((*(None,) * (target - rank), *range(v.ndim)))(v)
        for v, rank in zip(variables, ranks)
    ]
