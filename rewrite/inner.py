"""Rewriting the inner graphs of ops (composites, op_from_graph, loops).

The driver never enters an inner graph by itself: a node whose op holds an inner graph
is, to a rule pass, a single node. Inner graphs are rewritten by an explicit outer pass,
`InnerGraphPass(inner_pipeline)`, which maps `inner_pipeline` over each op's inner graph
(innermost first) and rebuilds the node with the new op, `attrs.evolve(op,
inner_graph=new)`. Equal inner graphs are rewritten once per pass.

Folding rules do not fire again inside what they fold. A rule that folds a pattern into
an inner-graph op (elementwise fusion into `Fused`, wrapping into an `OpFromGraph`) puts
that very pattern in the op's inner graph, so running the folding rule set over the
inner graph would fold it again, one level deeper, forever. That cannot happen here,
by construction rather than by a marker on the op: the folding rule belongs to an
outer-graph rule set, and an inner graph is only ever rewritten with the pipeline given
to its `InnerGraphPass`, a separate value (`rewrite.pipelines.INNER_GRAPHS`) that holds
the simplifying rule sets and never the folding ones. A folding rule also need not worry
about the op it just built: the engine treats an inner-graph op as opaque, so its outputs
are ordinary nodes the folding rule sees (and must decline, typically because the op is
already the folded kind).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from fgraph import Apply, Graph, Op, Variable
from rewrite.errors import InvalidReplacementError
from rewrite.pipeline import Pass, pass_name

_evolve: Callable[..., Any] = attrs.evolve  # `Op` is not statically an attrs class


def evolve_inner_graph(op: Op, inner_graph: Graph) -> Op:
    """`op` with its `inner_graph` field replaced (validators run again)."""
    new_op = _evolve(op, inner_graph=inner_graph)
    if not isinstance(new_op, Op):
        raise TypeError(f"evolving {op} gave {new_op!r}, not an Op")
    return new_op


def map_inner_graphs(
    graph: Graph,
    fn: Pass,
    rebuild_op: Callable[[Op, Graph], Op] = evolve_inner_graph,
    skip: tuple[type[Op], ...] = (),
) -> Graph:
    """`graph` with `fn` applied to the inner graph of every op that has one
    (`fgraph.HasInnerGraph`) and is not an instance of a class in `skip`, each such op
    rebuilt by `rebuild_op(op, new_inner_graph)`.

    Only the outer graph's ops are visited; `fn` decides whether to go deeper (as
    `InnerGraphPass` does). Returns `graph` itself when no inner graph changes. The new
    node's outputs must have the old ones' types (or more precise static shapes).
    """
    rewritten: dict[Graph, Graph] = {}
    replacements: dict[Variable, Variable] = {}
    for node in graph.nodes:
        op = node.op
        new_op = op
        # `fgraph.HasInnerGraph`, tested by attribute: a runtime protocol check is ~30x slower.
        inner = getattr(op, "inner_graph", None)
        if isinstance(inner, Graph) and not isinstance(op, skip):
            new_inner = rewritten.get(inner)
            if new_inner is None:
                new_inner = rewritten[inner] = fn(inner)
            if new_inner is not inner:
                new_op = rebuild_op(op, new_inner)
        new_inputs = tuple(replacements.get(variable, variable) for variable in node.inputs)
        if new_op is op and new_inputs == node.inputs:
            continue
        new_node = Apply(new_op, new_inputs, node.position)
        for old, new in zip(node.outputs, new_node.outputs):
            if not new.type.is_subtype_of(old.type):
                raise InvalidReplacementError(
                    f"rewriting the inner graph of {op} with {pass_name(fn)} changed output "
                    f"{old.index} from {old.type} to {new.type}",
                    (pass_name(fn),),
                    node,
                )
            replacements[old] = new
    if not replacements:
        return graph
    outputs = tuple(replacements.get(variable, variable) for variable in graph.outputs)
    return Graph(graph.inputs, outputs, graph.dedup_nodes)


@attrs.frozen
class InnerGraphPass:
    """A pass running `inner` over every inner graph, innermost first (nested inner graphs
    are rewritten before the graph holding them).

    Ops of the classes in `skip` keep their inner graphs as they are: `Fused`, whose inner
    graph the fusion pass builds from nodes the pipeline has already simplified, so that
    rewriting it again would cost a pass over every fused node (and re-optimizing a fused
    graph would no longer be cheap) for nothing.
    """

    inner: Pass
    name: str = "inner_graphs"
    skip: tuple[type[Op], ...] = ()

    def __call__(self, graph: Graph) -> Graph:
        return map_inner_graphs(graph, self._rewrite_inner, skip=self.skip)

    def _rewrite_inner(self, inner_graph: Graph) -> Graph:
        return self.inner(map_inner_graphs(inner_graph, self._rewrite_inner, skip=self.skip))
