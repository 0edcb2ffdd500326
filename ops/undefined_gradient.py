"""`UndefinedGradient`: the partial derivative of an op in an input where it is not
implemented (the order v of the Bessel functions, the argument of zeta), as PyTensor's
`grad_not_implemented`. It stands in a scalar op's `partials`; differentiating along it
raises `NotImplementedError` with its message when the graph is built, in `grad` (only
if the input lies on the path to a requested variable: a constant order differentiates
fine in the other inputs) and in `jvp` (only if that input has a tangent)."""

from __future__ import annotations

import attrs

from fgraph import Op, TensorType, Variable
from fgraph.op import Array


# Kernel: numba_backend.undefined_gradient._undefined_gradient
@attrs.frozen
class UndefinedGradient(Op):
    """A placeholder of its input's type; `message` says which derivative is missing."""

    message: str

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return (input_types[0],)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        raise NotImplementedError(self.message)


def undefined_gradient(wrt: Variable, message: str) -> Variable:
    """The partial in `wrt` that is not implemented, saying `message` when needed."""
    return UndefinedGradient(message)(wrt)


def undefined_message(derivative: Variable) -> str | None:
    """The message if `derivative` is an undefined gradient, else None."""
    owner = derivative.owner
    if owner is not None and isinstance(owner.op, UndefinedGradient):
        return owner.op.message
    return None
