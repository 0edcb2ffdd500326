"""`Fused`: a maximal elementwise subgraph as one op, produced by the fusion rewrite.

Its inner graph is made of `Elemwise` nodes over rank-0 `Param`s (one per outer input),
so it says, once, what each element of each output is: the numba backend turns it into
one loop with no temporaries, and two fusions of the same expression are equal ops.
Outer inputs have equal ranks and broadcast along static length-1 axes, as for
`Elemwise`.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import numpy as np

from fgraph import Graph, Param, ShapeError, TensorType, Variable, broadcast_shapes
from fgraph.dtypes import is_inexact
from fgraph.op import Array
from fgraph.variable import Constant
from ops.elemwise import (
    Elemwise,
    ElementwiseOp,
    as_destroy_map,
    check_static_broadcast,
    inplace_suffix,
)
from ops.elementwise_functions import elemwise, second, zeros_like
from ops.gradients import jvp, vjp


LABEL_OPS = 32
"""Most inner ops a fused op's label names. Labels name values in run-time error
messages, which the generated code holds one per reader of a value: a label as long as
the fused graph made code generation (and the code) quadratic in a fusion of n terms."""


def _check_scalar_graph(graph: Graph) -> Graph:
    for number, variable in enumerate(graph.inputs):
        if not isinstance(variable, Param) or variable.ndim != 0 or variable.index != number:
            raise TypeError(f"Fused inner input {number} must be Param({number}) of rank 0")
    for node in graph.nodes:
        if not isinstance(node.op, Elemwise):
            raise TypeError(f"Fused inner graphs hold only Elemwise nodes, got {node.op}")
    for number, output in enumerate(graph.outputs):
        if output.ndim != 0:
            raise TypeError(f"Fused inner output {number} must be rank 0, got {output.type}")
    return graph


# Kernel: numba_backend.fused._fused
@attrs.frozen(cache_hash=True)
class Fused(ElementwiseOp):
    """Elementwise composition of scalar ops; `inner_graph` is over rank-0 params."""

    inner_graph: Graph = attrs.field(validator=lambda _, __, graph: _check_scalar_graph(graph))
    destroy_map: tuple[tuple[int, int], ...] = attrs.field(default=(), converter=as_destroy_map)
    """Set by the inplace rewrite: (k, j) writes output k into input j's buffer."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        params = self.inner_graph.inputs
        if len(input_types) != len(params):
            raise TypeError(f"{self}: expected {len(params)} inputs, got {len(input_types)}")
        for number, (given, param) in enumerate(zip(input_types, params)):
            if given.dtype != param.dtype:
                raise TypeError(f"{self}: input {number} must be {param.dtype}, got {given.dtype}")
        ranks = {t.ndim for t in input_types}
        if len(ranks) > 1:
            listed = ", ".join(str(t) for t in input_types)
            raise ShapeError(f"{self}: inputs need equal ranks, got {listed}")
        shape = broadcast_shapes(*(t.shape for t in input_types))
        return tuple(TensorType(output.dtype, shape) for output in self.inner_graph.outputs)

    def check_values(self, input_types: tuple[TensorType, ...], inputs: tuple[Array, ...]) -> None:
        check_static_broadcast(self, input_types, inputs, range(inputs[0].ndim if inputs else 0))

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        shape = np.broadcast_shapes(*(x.shape for x in inputs))
        values: dict[Variable, Array] = dict(zip(self.inner_graph.inputs, inputs))
        for node in self.inner_graph.nodes:
            arguments = [
                variable.data if isinstance(variable, Constant) else values[variable]
                for variable in node.inputs
            ]
            (values[node.out],) = node.op.perform(*arguments)
        results = []
        for output in self.inner_graph.outputs:
            value = output.data if isinstance(output, Constant) else values[output]
            results.append(np.array(np.broadcast_to(value, shape), dtype=output.dtype))
        return tuple(results)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        expanded = expand_fused(self, inputs)
        connected = [(o, c) for o, c in zip(expanded, cotangents) if c is not None]
        if not connected:
            return (None,) * len(inputs)
        differentiable = [x for x in inputs if is_inexact(x.dtype)]
        connected_outputs = [output for output, _ in connected]
        connected_cotangents = [cotangent for _, cotangent in connected]
        gradients = dict(
            zip(differentiable, vjp(connected_outputs, differentiable, connected_cotangents))
        )
        return tuple(gradients.get(x) for x in inputs)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        expanded = expand_fused(self, inputs)
        filled = [zeros_like(x) if t is None else t for x, t in zip(inputs, tangents)]
        return tuple(jvp(expanded, list(inputs), filled))

    def __str__(self) -> str:
        nodes = self.inner_graph.nodes
        names = [str(node.op) for node in nodes[:LABEL_OPS]]
        if len(nodes) > LABEL_OPS:
            names.append(f"+{len(nodes) - LABEL_OPS} more")
        return f"Fused{{{','.join(names)}}}" + inplace_suffix(self.destroy_map)


def expand_fused(op: Fused, inputs: Sequence[Variable]) -> list[Variable]:
    """The fused computation as ordinary `Elemwise` nodes on the outer inputs, each output
    broadcast to the fused op's output shape (needed when it is an input or constant)."""
    values: dict[Variable, Variable] = dict(zip(op.inner_graph.inputs, inputs))
    for node in op.inner_graph.nodes:
        scalar_op = node.op.scalar_op if isinstance(node.op, Elemwise) else None
        if scalar_op is None:
            raise TypeError(f"Fused inner graphs hold only Elemwise nodes, got {node.op}")
        values[node.out] = elemwise(scalar_op, *(values.get(v, v) for v in node.inputs))
    shape = broadcast_shapes(*(x.type.shape for x in inputs))
    results = []
    for output in op.inner_graph.outputs:
        result = values.get(output, output)
        if result.type.shape != shape:
            for x in inputs:
                result = second(x, result)
        results.append(result)
    return results
