"""Inlining: an `OpFromGraph` built with `inline=True` is replaced by its inner graph,
rebuilt over the node's inputs, so the rest of the pipeline (simplification, fusion)
sees through it. Ops without the flag stay opaque, which keeps their graph shared and
compiled once.

It runs first, so that everything after it optimizes across the op's boundary; an
inline op inside the inlined graph is inlined in turn (the engine rewrites a
replacement's new nodes too).
"""

from __future__ import annotations

from collections.abc import Sequence

from fgraph import Apply, Variable, rebuild
from ops.from_graph import OpFromGraph
from rewrite.rules import RuleSet, rule


@rule(OpFromGraph)
def inline_op_from_graph(node: Apply) -> Sequence[Variable] | None:
    """OpFromGraph{inline}(a, b) -> its inner graph with params p0, p1 replaced by a, b."""
    match node:
        case Apply(op=OpFromGraph(inline=True, inner_graph=inner_graph)):
            return rebuild(inner_graph.outputs, dict(zip(inner_graph.inputs, node.inputs)))
    return None


INLINE = RuleSet("inline", (inline_op_from_graph,))
