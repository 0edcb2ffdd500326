"""Gradient control: a value passed through unchanged whose derivative is cut.

`stop_gradient` (JAX's name; PyTensor calls it `zero_grad`) makes the derivative through
it zero: `grad` of a cost that reaches `wrt` only through it gives zeros, in reverse and
forward mode, through loops and under `vmap`. `disconnected_grad` (PyTensor's) makes it
*disconnected* instead: such a `wrt` follows `grad`'s `disconnected_inputs` rule (an
error by default), as if the cost did not read it at all.

Both are identities in value: the `rewrite` pipelines remove them (`fast_run`,
`fast_compile`), so compiled code pays nothing, while a gradient taken before compiling
keeps their effect. No cotangent flows through either (`grad` does not pull zeros back
through the graph above a stop, so an op there need not be differentiable, and an
`inf` there cannot turn the zero into `nan`); `ops.gradients.backpropagate` gives zeros to
the variables a zero-gradient stop alone connects to the cost.
"""

from __future__ import annotations

import attrs

from fgraph import TensorType, Variable
from fgraph.op import Array, Op, Vectorized
from fgraph.operators import TensorLike
from ops.convert import as_tensor


# Kernel: numba_backend.gradient_control._stop_gradient
@attrs.frozen(cache_hash=True)
class StopGradient(Op):
    """`x` itself, with no derivative through it: zero (`disconnected=False`, JAX's
    `stop_gradient`, PyTensor's `zero_grad`) or disconnected (`disconnected=True`,
    PyTensor's `disconnected_grad`)."""

    disconnected: bool = False

    @property
    def view_map(self) -> tuple[tuple[int, int], ...]:
        return ((0, 0),)  # the result is the input

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != 1:
            raise TypeError(f"{self}: expected 1 input, got {len(input_types)}")
        return input_types

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (inputs[0],)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        return (None,)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        return (None,)

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        return (self(inputs[0]),), (True,)

    def __str__(self) -> str:
        return "DisconnectedGrad" if self.disconnected else "StopGradient"


def stop_gradient(x: TensorLike) -> Variable:
    """`x` in value, with a zero derivative (JAX's `jax.lax.stop_gradient`): `grad` and
    `jvp` treat it as a constant, so `grad(f(x, stop_gradient(g(x))), x)` differentiates
    `f` in its first argument only, and `grad(stop_gradient(x).sum(), x)` is zeros, not
    an error. Removed when optimizing: compiled code computes `x` and nothing more."""
    return StopGradient()(as_tensor(x, name="stop_gradient"))


def zero_grad(x: TensorLike) -> Variable:
    """PyTensor's name for `stop_gradient`: `x` in value, with a zero derivative."""
    return StopGradient()(as_tensor(x, name="zero_grad"))


def disconnected_grad(x: TensorLike) -> Variable:
    """`x` in value, with a *disconnected* derivative (PyTensor's `disconnected_grad`):
    nothing flows through it, and a `wrt` that the cost reaches only through it is
    disconnected, so `grad` raises DisconnectedInputError unless told otherwise with
    `disconnected_inputs` (where `stop_gradient` gives zeros)."""
    return StopGradient(disconnected=True)(as_tensor(x, name="disconnected_grad"))
