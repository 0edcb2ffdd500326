"""The loop rewrites, assembled: `LOOP_RULES` (run by the one rewrite driver), the two
whole-graph passes, and `loop_pass`, which `rewrite.pipelines` runs.

- `LOOP_RULES`: rules on one loop node (or one reader of a trace), restricted to `Scan`
  and `Subtensor`, run by `rewrite_graph` (traced; an error names the rule and node).
  From `rewrite.loops_trace`, `loops_unused`, `loops_push_out` and `loops_unroll`.
- `trim_traces` (`rewrite.loops_trace`): shortening a loop to the prefix its readers
  read, and keeping a window of a trace's last rows; these rewrite the readers of a
  trace, so they need the graph's exact readers.
- `merge_loops` (`rewrite.loops_merge`): merging loops over the same steps.

`loop_pass` runs the three until none changes anything (each enables the others: a
merged loop has unread outputs, a shorter loop unrolls). A graph without a loop costs
one walk over its nodes.
"""

from __future__ import annotations

from fgraph import Graph
from ops.scan_op import Scan
from rewrite.engine import rewrite_graph
from rewrite.errors import RewriteLimitError
from rewrite.loops_merge import merge_loops
from rewrite.loops_push_out import (
    accumulate_outside,
    push_out_invariants,
    push_out_sequence_work,
    repeat_invariant_outputs,
    vectorize_map,
)
from rewrite.loops_trace import final_instead_of_last_row, static_length, trim_traces
from rewrite.loops_unroll import unroll
from rewrite.loops_unused import inline_constants, merge_duplicates, remove_unused
from rewrite.rules import RuleSet

LOOP_RULES = RuleSet(
    "loops",
    (
        static_length,
        final_instead_of_last_row,
        remove_unused,
        merge_duplicates,
        inline_constants,
        push_out_invariants,
        repeat_invariant_outputs,
        vectorize_map,
        accumulate_outside,
        push_out_sequence_work,
        unroll,
    ),
)
"""The loop rules, in the order they are tried at a node."""

MAX_ROUNDS = 100


def loop_pass(graph: Graph) -> Graph:
    """`graph` with the loop rules and passes applied until none changes anything."""
    for _ in range(MAX_ROUNDS):
        if not any(isinstance(node.op, Scan) for node in graph.nodes):
            return graph
        rewritten = merge_loops(trim_traces(rewrite_graph(graph, LOOP_RULES)))
        if rewritten is graph:
            return graph
        graph = rewritten
    raise RewriteLimitError(f"loop_pass: still rewriting after {MAX_ROUNDS} rounds")
