"""`Elemwise`: a scalar op mapped over arrays with NumPy broadcasting. The user-level
functions that apply it (`add`, `exp`, `where`, ...) are in `ops.elementwise_functions`.

`Elemwise` nodes always see inputs of equal rank: `map_scalar_op` left-pads ranks
with `DimShuffle` first, as NumPy's alignment rule does implicitly. Broadcasting then
happens only along axes whose static length is 1, as in PyTensor, because gradients
and compiled loops are fixed when the graph is built: an axis of unknown length must
not turn out to be 1 at run time while others are longer (give it static length 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from fgraph import Constant, Op, ShapeError, TensorType, Variable, broadcast_shapes
from fgraph.dtypes import is_inexact
from fgraph.op import Array, Vectorized
from ops.dimshuffle import DimShuffle, left_pad_rank
from ops.undefined_gradient import undefined_message
from ops.scalar_ops import Add, Cast, Mul, ScalarOp, Second


@attrs.define
class ReductionOps:
    """The op `fit_to` needs from a module above this one: `sum`, `ops.reduction.Sum`,
    which sums a derivative over the axes its input was broadcast along. `Sum`'s own
    derivative broadcasts with an `Elemwise`, so `ops.reduction` imports this module and
    sets `sum` here when it is imported (the `ops` package imports it), as a loop's
    derivatives register in `ops.scan_op.LOOP_DELEGATES`."""

    sum: Callable[[tuple[int, ...]], Op] | None = None


REDUCTION_OPS = ReductionOps()


def as_destroy_map(pairs: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """Sorted (output, input) pairs of non-negative ints, each output and input once."""
    normalized = tuple(sorted((int(output), int(input_)) for output, input_ in pairs))
    outputs = [output for output, _ in normalized]
    inputs = [input_ for _, input_ in normalized]
    if len(set(outputs)) != len(outputs) or len(set(inputs)) != len(inputs):
        raise ValueError(f"destroy_map {pairs} repeats an output or an input")
    if any(index < 0 for pair in normalized for index in pair):
        raise ValueError(f"destroy_map {pairs} has a negative index")
    return normalized


def same_type_candidates(
    input_types: tuple[TensorType, ...], output_types: tuple[TensorType, ...]
) -> tuple[tuple[int, int], ...]:
    """Each output paired with the first unpaired input of exactly its type (so nothing
    broadcasts along it): the buffers an elementwise loop can write over as it reads."""
    pairs: list[tuple[int, int]] = []
    taken: set[int] = set()
    for output, output_type in enumerate(output_types):
        for number, input_type in enumerate(input_types):
            if number not in taken and input_type == output_type:
                pairs.append((output, number))
                taken.add(number)
                break
    return tuple(pairs)


class ElementwiseOp(Op):
    """What `Elemwise` and `Fused` share: a loop that reads each input element before it
    writes the same output element, so an output may overwrite an input of exactly its
    type (the inplace rewrite decides which, in `destroy_map`)."""

    __slots__ = ()
    destroy_map: tuple[tuple[int, int], ...]

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """Elementwise over batch axes: unbatched operands get leading axes of length 1."""
        padded = [v if flag else left_pad_rank(v, v.ndim + batch_ndim) for v, flag in zip(inputs, batched)]
        outputs = self.apply(*padded)
        return outputs, (True,) * len(outputs)

    def inplace_candidates(
        self, input_types: tuple[TensorType, ...], output_types: tuple[TensorType, ...]
    ) -> tuple[tuple[int, int], ...]:
        return same_type_candidates(input_types, output_types)

    def with_destroy_map(self, destroy_map: tuple[tuple[int, int], ...]) -> Op:
        evolve: Any = attrs.evolve
        updated = evolve(self, destroy_map=destroy_map)
        assert isinstance(updated, Op)
        return updated


def inplace_suffix(destroy_map: tuple[tuple[int, int], ...]) -> str:
    """How printouts mark an op that overwrites inputs: `{inplace=0}`."""
    if not destroy_map:
        return ""
    return "{inplace=" + ",".join(f"{input_}" for _, input_ in destroy_map) + "}"


# Kernel: numba_backend.elemwise._elemwise
@attrs.frozen(cache_hash=True)
class Elemwise(ElementwiseOp):
    """`scalar_op` applied elementwise to equal-rank inputs with static broadcasting.

    Derivatives come from the scalar op's `partials`: the pullback multiplies the output
    cotangent by each partial and sums it over the axes that input was broadcast along;
    the pushforward sums tangent * partial over the inputs. Discrete (integer or bool)
    outputs and inputs carry no derivative.
    """

    scalar_op: ScalarOp
    destroy_map: tuple[tuple[int, int], ...] = attrs.field(default=(), converter=as_destroy_map)
    """Set by the inplace rewrite: ((0, k),) writes the output into input k's buffer."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != self.scalar_op.nin:
            raise TypeError(f"{self}: expected {self.scalar_op.nin} inputs, got {len(input_types)}")
        ranks = {t.ndim for t in input_types}
        if len(ranks) > 1:
            listed = ", ".join(str(t) for t in input_types)
            raise ShapeError(f"{self}: inputs need equal ranks (pad with DimShuffle), got {listed}")
        try:
            shape = broadcast_shapes(*(t.shape for t in input_types))
        except ShapeError as error:
            raise ShapeError(f"{self}: {error}") from error
        dtype = self.scalar_op.output_dtype(*(t.dtype for t in input_types))
        return (TensorType(dtype, shape),)

    def check_values(self, input_types: tuple[TensorType, ...], inputs: tuple[Array, ...]) -> None:
        check_static_broadcast(self, input_types, inputs, range(inputs[0].ndim if inputs else 0))

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
        (output,) = outputs
        if cotangent is None or not is_inexact(output.dtype):
            return (None,) * len(inputs)
        partials = self.scalar_op.partials(inputs, output)
        gradients: list[Variable | None] = []
        for x, partial in zip(inputs, partials):
            if partial is None or not is_inexact(x.dtype):
                gradients.append(None)
                continue
            if undefined_message(partial) is not None:
                gradients.append(partial)  # `grad` raises if x is on a path to a target
                continue
            passed = cotangent if _is_one(partial) else map_scalar_op(Mul(), (cotangent, partial))
            gradients.append(fit_to(x, passed))
        return tuple(gradients)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (output,) = outputs
        active = [
            (number, tangent)
            for number, (x, tangent) in enumerate(zip(inputs, tangents))
            if tangent is not None and is_inexact(x.dtype)
        ]
        if not active or not is_inexact(output.dtype):
            return (None,)
        partials = self.scalar_op.partials(inputs, output)
        total: Variable | None = None
        for number, tangent in active:
            partial = partials[number]
            if partial is None:
                continue
            message = undefined_message(partial)
            if message is not None:
                raise NotImplementedError(message)
            term = map_scalar_op(Mul(), (tangent, partial))
            total = term if total is None else map_scalar_op(Add(), (total, term))
        return (None if total is None else fit_to(output, total),)

    def __str__(self) -> str:
        return str(self.scalar_op) + inplace_suffix(self.destroy_map)


def _is_one(partial: Variable) -> bool:
    """Whether a partial is the scalar constant 1 (of an addition, say), by which the
    cotangent passes unchanged: no `* 1` node per addition, so the pullbacks of a sum of
    n terms all receive the one cotangent of the sum, not a chain of n products by one."""
    return isinstance(partial, Constant) and partial.ndim == 0 and bool(partial.data == 1)


def check_static_broadcast(
    op: Op, input_types: Sequence[TensorType], inputs: Sequence[Array], axes: range
) -> None:
    """Refuse run-time broadcasting along `axes` of an input whose static length there is
    not 1: its gradient (and the compiled loop) was fixed for a full-length axis."""
    for axis in axes:
        full = max((x.shape[axis] for x in inputs), default=1)
        for number, (input_type, x) in enumerate(zip(input_types, inputs)):
            if x.shape[axis] == 1 and full != 1 and input_type.shape[axis] != 1:
                raise ShapeError(
                    f"{op}: input {number} ({input_type}) has length 1 along axis {axis} at run "
                    f"time where others have {full}; broadcasting needs a static length of 1 "
                    "(declare it in the input's shape or use specify_shape)"
                )


def fit_to(target: Variable, value: Variable) -> Variable:
    """Give a derivative `value` the static shape and dtype of `target`: sum it over the
    axes `target` was broadcast along, broadcast it along those only `target` spans."""
    axes = tuple(
        axis
        for axis, (want, got) in enumerate(zip(target.type.shape, value.type.shape))
        if want == 1 and got != 1
    )
    if axes:
        assert REDUCTION_OPS.sum is not None, "ops.reduction registers it"
        kept = REDUCTION_OPS.sum(axes)(value)
        order = iter(range(kept.ndim))
        restored = tuple(None if axis in axes else next(order) for axis in range(value.ndim))
        value = DimShuffle(restored)(kept)
    if any(want != 1 and got == 1 for want, got in zip(target.type.shape, value.type.shape)):
        value = map_scalar_op(Second(), (target, value))
    if value.dtype != target.dtype:
        value = map_scalar_op(Cast(target.dtype), (value,))
    return value


def map_scalar_op(scalar_op: ScalarOp, variables: Sequence[Variable]) -> Variable:
    """`Elemwise(scalar_op)` of `variables`, their ranks left-padded to the largest."""
    rank = max(v.ndim for v in variables)
    return Elemwise(scalar_op)(*(left_pad_rank(v, rank) for v in variables))
