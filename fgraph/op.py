"""`Op`: what a node computes. A frozen attrs class whose fields are its parameters.

An op says what it computes and nothing about how a backend does it:

- `infer(*input_types)` validates its inputs and returns the output types; errors name
  the op, what it expected and what it got.
- `perform(*arrays)` is the NumPy reference implementation used by `evaluate`.
- `pullback(inputs, outputs, cotangents)` builds reverse-mode gradients as graph
  variables; `pushforward(inputs, outputs, tangents)` builds forward-mode ones.

Ops that hold an inner graph (composites, op_from_graph, loops) expose it as
`inner_graph` and satisfy `HasInnerGraph`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs
import numpy as np

from fgraph.frozen import Frozen
from fgraph.types import TensorType

if TYPE_CHECKING:  # annotations only: these modules import this one
    from fgraph.graph import Graph
    from fgraph.node import Apply
    from fgraph.variable import Variable

Array = np.ndarray[Any, np.dtype[Any]]


Vectorized = tuple[tuple["Variable", ...], tuple[bool, ...]]
"""A vectorization rule's result: the outputs, and which carry the batch axes."""

class Op(Frozen):
    """Base of all ops. Subclasses are `@attrs.frozen` classes: fields are parameters,
    equality and hashing are by fields, so equal parameters mean the same op."""

    __slots__ = ()

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        raise NotImplementedError(f"{type(self).__name__} does not define infer")

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        raise NotImplementedError(f"{type(self).__name__} does not define perform")

    @property
    def destroy_map(self) -> tuple[tuple[int, int], ...]:
        """(output, input) pairs: that output is written into that input's buffer, which is
        then gone. Only the inplace rewrite sets these; `perform` may ignore them."""
        return ()

    @property
    def view_map(self) -> tuple[tuple[int, int], ...]:
        """(output, input) pairs: that output may share memory with that input, so the
        input's buffer must not be destroyed while the output is still read."""
        return ()

    @property
    def read_only_outputs(self) -> tuple[int, ...]:
        """Outputs that must never be written, nor any view of them: views in which
        several elements may share one memory location (a broadcast), which NumPy and
        numba make read-only. The inplace rewrite never overwrites them."""
        return ()

    def inplace_candidates(
        self, input_types: tuple[TensorType, ...], output_types: tuple[TensorType, ...]
    ) -> tuple[tuple[int, int], ...]:
        """(output, input) pairs this op could compute into the input's buffer, before any
        safety check (the inplace rewrite makes those): the capability an op declares.
        Default: none."""
        return ()

    def with_destroy_map(self, destroy_map: tuple[tuple[int, int], ...]) -> Op:
        """This op computing the `destroy_map` pairs in place (an empty map: none). Ops
        that declare `inplace_candidates` override it; for others only `()` is valid."""
        if destroy_map:
            raise TypeError(f"{self} cannot compute {destroy_map} in place")
        return self

    def check_values(self, input_types: tuple[TensorType, ...], inputs: tuple[Array, ...]) -> None:
        """Run-time checks that need the node's static input types, before `perform`.

        `perform` sees only arrays; an op whose meaning depends on static types (say,
        broadcasting only along axes statically of length 1) checks values here, so the
        reference evaluator rejects what the compiled code would. Default: nothing.
        """

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        """Cotangents of the inputs given those of the outputs (None means zero /
        disconnected, both ways)."""
        raise NotImplementedError(f"{self} has no pullback: it cannot be differentiated")

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        """Tangents of the outputs given those of the inputs (None means zero)."""
        raise NotImplementedError(f"{self} has no pushforward (forward-mode derivative)")

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """This op mapped over `batch_ndim` leading batch axes: the inputs flagged in
        `batched` carry those axes in front of their own, the others do not. Returns
        the outputs and which of them carry the batch axes, or None where the op has no
        rule of its own: `ops.vectorize_graph` then loops over the batch (a `scan` map),
        so every op can be vectorized; a rule only makes it one batched operation."""
        return None

    def make_node(self, *inputs: Variable) -> Apply:
        """The (interned) node applying this op to `inputs`."""
        # Here, not at the top: an op makes nodes and a node checks that it holds an Op,
        # so `fgraph.node` imports this module, which is complete by the first node made.
        from fgraph.node import Apply

        return Apply(self, inputs)

    def apply(self, *inputs: Variable) -> tuple[Variable, ...]:
        """All outputs of applying this op to `inputs`."""
        return self.make_node(*inputs).outputs

    def __call__(self, *inputs: Variable) -> Variable:
        """The output of a single-output op applied to `inputs` (use `apply` otherwise)."""
        outputs = self.apply(*inputs)
        if len(outputs) != 1:
            raise TypeError(f"{self} has {len(outputs)} outputs; use op.apply(...) to get them all")
        return outputs[0]

    def __str__(self) -> str:
        """`Name{param=value, ...}`, the form `dprint` shows."""
        name = type(self).__name__
        fields: tuple[attrs.Attribute[object], ...] = getattr(type(self), "__attrs_attrs__", ())
        params = ", ".join(f"{field.name}={_short(getattr(self, field.name))}" for field in fields)
        return f"{name}{{{params}}}" if params else name


def _short(value: object) -> str:
    if isinstance(value, Op):
        return str(value)
    if type(value).__name__ == "Graph":
        return "<graph>"
    return repr(value)


class NonDifferentiable(Op):
    """Base for ops whose outputs carry no derivative (shapes, indices, booleans, fresh
    uninitialized buffers): no cotangent or tangent flows through them."""

    __slots__ = ()

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        return (None,) * len(inputs)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        return (None,) * len(outputs)


@runtime_checkable
class HasInnerGraph(Protocol):
    """Ops holding a closed inner graph over positional parameters."""

    @property
    def inner_graph(self) -> Graph: ...


def inner_graphs_of(op: Op) -> Sequence[Graph]:
    """The inner graphs an op holds (empty for ordinary ops)."""
    return (op.inner_graph,) if isinstance(op, HasInnerGraph) else ()
