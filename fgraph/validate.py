"""`check_graph`: the invariants every graph must satisfy, checked from scratch.

Tests run it on every graph they build, so a rewrite or op that produces an
inconsistent graph fails where it happens, not three passes later.
"""

from __future__ import annotations

from fgraph.graph import Graph
from fgraph.node import Apply
from fgraph.op import inner_graphs_of
from fgraph.variable import Constant, Input, Param, Variable, display_name


class InvalidGraphError(AssertionError):
    """A graph violates an invariant (a bug in whatever built it)."""


def check_graph(graph: Graph) -> None:
    """Raise InvalidGraphError unless `graph` and all its inner graphs are consistent:
    inputs are distinct inputs/params, every node reads only inputs, constants and
    earlier nodes, output types agree with `infer`, nodes are interned, and positions
    match the graph's dedup mode."""
    pending = [graph]
    # Keyed by identity: hashing a graph builds its canonical form (a rebuild of every
    # node over params), which would double the cost of checking a large graph. Every
    # graph reached is held by `graph`, so ids cannot be reused during the walk.
    checked: set[int] = set()
    while pending:
        current = pending.pop()
        if id(current) in checked:
            continue
        checked.add(id(current))
        _check_one(current)
        for node in current.nodes:
            pending.extend(inner_graphs_of(node.op))


def _check_one(graph: Graph) -> None:
    defined: set[Variable] = set()
    for variable in graph.inputs:
        if not isinstance(variable, (Input, Param)) or variable in defined:
            raise InvalidGraphError(f"bad or repeated graph input {variable!r}")
        defined.add(variable)
    for number, node in enumerate(graph.nodes):
        for input_ in node.inputs:
            if input_ not in defined and not isinstance(input_, Constant):
                raise InvalidGraphError(
                    f"node {number} ({node.op}) reads {display_name(input_)}, which is neither an "
                    "input, a constant, nor computed earlier"
                )
        inferred = tuple(node.op.infer(*(input_.type for input_ in node.inputs)))
        if inferred != node.output_types:
            raise InvalidGraphError(
                f"node {number} ({node.op}) has output types {node.output_types}, infer gives {inferred}"
            )
        if Apply(node.op, node.inputs, node.position) is not node:
            raise InvalidGraphError(f"node {number} ({node.op}) is not the interned node")
        expected_position = 0 if graph.dedup_nodes else number
        if node.position != expected_position:
            raise InvalidGraphError(
                f"node {number} ({node.op}) has position {node.position}, expected {expected_position}"
            )
        defined.update(node.outputs)
    for number, output in enumerate(graph.outputs):
        if output not in defined and not isinstance(output, Constant):
            raise InvalidGraphError(f"graph output {number} ({display_name(output)}) is not computed")
