"""Merging loops: two loops over the same steps become one, which reads the sequences once
and keeps one set of traces.

A pullback asks for the loop it differentiates with every carry traced, beside the
loop the user built (which may trace none): two loops with the same inputs and body.
And independent loops over the same step count (a loss and a regularizer, or the
forward loop of a second derivative and the first derivative's) run as one pass over the
steps. Which loops merge is a decision about pairs of loops anywhere in the graph, not
about one node, so this is a whole-graph pass (like fusion), not a rule:

- `merge_traced_variants`: loops with equal inputs whose ops differ only in which
  carries they trace (and the windows of those traces) become one loop tracing the
  union (a window only where every loop tracing the carry keeps one: the largest).
- `merge_independent_loops`: two for-loops over the same step count, direction, static
  length and gradient truncation, neither reading the other, become one loop running
  both bodies.

A merged loop fails wherever one of the loops it replaces failed (it checks the step
count and every sequence of both), and runs no step either did not run (while-loops,
whose step counts depend on their bodies, are never merged with another loop).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from fgraph import Apply, Graph, Variable, toposort
from fgraph.traverse import rebuild
from ops.loop_layout import LoopInputs, LoopOutputs
from ops.scan_op import Scan
from rewrite.errors import RewriteLimitError
from rewrite.loops_common import Replacements, applied, fresh_params, loop_op, replaced

MAX_ROUNDS = 1000

Merge = Callable[[Sequence[Apply], Graph], Replacements | None]


def merge_loops(graph: Graph, merges: Sequence[Merge] | None = None) -> Graph:
    """`graph` with its loops merged by `merges` (by default `MERGES`; the first that
    applies, again until none does; a graph without two loops costs one walk)."""
    for _ in range(MAX_ROUNDS):
        loops = [node for node in graph.nodes if isinstance(node.op, Scan)]
        if len(loops) < 2:
            return graph
        for merge in MERGES if merges is None else merges:
            found = applied(merge.__name__, loops[0], lambda: merge(loops, graph))
            if found:
                graph = replaced(graph, found, merge.__name__, loops[0])
                break
        else:
            return graph
    raise RewriteLimitError(f"merge_loops: still merging after {MAX_ROUNDS} rounds",
                            ("merge_loops",))


def merge_traced_variants(loops: Sequence[Apply], graph: Graph) -> Replacements | None:
    """Loops with the same inputs whose ops differ only in `traced` and `windows`
    become one."""
    groups: dict[tuple[Scan, tuple[Variable, ...]], list[Apply]] = {}
    for node in loops:
        op = loop_op(node)
        key = (attrs.evolve(op, traced=(False,) * op.n_carries, windows=()), node.inputs)
        groups.setdefault(key, []).append(node)
    for (untraced, inputs), members in groups.items():
        if len(members) < 2:
            continue
        ops = [loop_op(m) for m in members]
        traced = tuple(any(op.traced[k] for op in ops) for k in range(untraced.n_carries))
        windows = tuple(_merged_window([op for op in ops if op.traced[k]], k)
                        for k in range(untraced.n_carries))
        merged_op = attrs.evolve(untraced, traced=traced, windows=windows if any(windows) else ())
        merged = merged_op.split_outputs(merged_op.apply(*inputs))
        found: Replacements = {}
        for member, op in zip(members, ops):
            outputs = op.split_outputs(member.outputs)
            found.update(zip(outputs.finals, merged.finals))
            for k, trace in enumerate(outputs.traces):
                whole = merged.traces[k]
                if trace is None or whole is None:
                    continue
                # A window is the last rows of the whole trace (or of a larger window).
                window = op.window(k)
                found[trace] = whole[-window:] if window and window != merged_op.window(k) else whole
            found.update(zip(outputs.ys, merged.ys))
            if outputs.executed is not None and merged.executed is not None:
                found[outputs.executed] = merged.executed
        return found
    return None


def _merged_window(tracing: Sequence[Scan], carry: int) -> int:
    """The window of a carry in the merged loop: the largest, if every loop tracing the
    carry keeps one; else 0 (the whole trace)."""
    windows = [op.window(carry) for op in tracing]
    return max(windows) if windows and all(windows) else 0


def merge_independent_loops(loops: Sequence[Apply], graph: Graph) -> Replacements | None:
    """Two for-loops over the same step count, direction, static length and gradient
    truncation, neither reading what the other computes, become one loop running both
    bodies (one pass over the steps, one set of sequence reads). `loops` are in graph
    order, so a loop never reads a later one."""
    for number, first in enumerate(loops):
        for second in loops[number + 1 :]:
            a, b = loop_op(first), loop_op(second)
            same_schedule = (
                a.split_inputs(first.inputs).n_steps == b.split_inputs(second.inputs).n_steps
                and (a.reverse, a.length, a.truncate_gradient)
                == (b.reverse, b.length, b.truncate_gradient)
            )
            if not same_schedule or a.while_loop or b.while_loop:
                continue
            if first in toposort(second.inputs):  # the second reads the first
                continue
            return _merged(first, second)
    return None


def _merged(first: Apply, second: Apply) -> Replacements:
    a, b = loop_op(first), loop_op(second)
    # Params are interned on (index, type): both bodies' Param(0) may be one object, so
    # each body's params are mapped by position, never looked up by identity.
    pa, pb = a.params, b.params
    ordered = (pa.carries, pb.carries, pa.rows, pb.rows, pa.non_sequences, pb.non_sequences)
    params = fresh_params([v for group in ordered for v in group])
    fresh = iter(params)
    carries_a, carries_b, rows_a, rows_b, shared_a, shared_b = (
        tuple(next(fresh) for _ in group) for group in ordered
    )
    results_a = a.split_results(rebuild(
        a.inner_graph.outputs, dict(zip(pa.joined(), (*carries_a, *rows_a, *shared_a)))
    ))
    results_b = b.split_results(rebuild(
        b.inner_graph.outputs, dict(zip(pb.joined(), (*carries_b, *rows_b, *shared_b)))
    ))
    body = Graph(params, [*results_a.carries, *results_b.carries, *results_a.ys, *results_b.ys])
    windows: tuple[int, ...] = ()
    if a.windows or b.windows:
        windows = tuple(a.window(k) for k in range(a.n_carries)) + tuple(
            b.window(k) for k in range(b.n_carries)
        )
    op = attrs.evolve(a, inner_graph=body, n_carries=a.n_carries + b.n_carries,
                      n_sequences=a.n_sequences + b.n_sequences, traced=a.traced + b.traced,
                      windows=windows)
    ia, ib = a.split_inputs(first.inputs), b.split_inputs(second.inputs)
    merged = op.apply_loop(LoopInputs(
        ia.n_steps, (*ia.initials, *ib.initials), (*ia.sequences, *ib.sequences),
        (*ia.non_sequences, *ib.non_sequences),
    ))
    found: Replacements = {}
    for node, old, part in ((first, a, _part(merged, 0, a.n_carries, 0, a.n_ys)),
                            (second, b, _part(merged, a.n_carries, b.n_carries, a.n_ys, b.n_ys))):
        outputs = old.split_outputs(node.outputs)
        found.update(zip(outputs.finals, part.finals))
        for trace, new in zip(outputs.traces, part.traces):
            if trace is not None and new is not None:
                found[trace] = new
        found.update(zip(outputs.ys, part.ys))
    return found


def _part(
    merged: LoopOutputs[Variable], first_carry: int, carries: int, first_y: int, ys: int
) -> LoopOutputs[Variable]:
    """The outputs of a merged loop that stand for one of the loops it merged."""
    return LoopOutputs(
        merged.finals[first_carry : first_carry + carries],
        merged.traces[first_carry : first_carry + carries],
        merged.ys[first_y : first_y + ys],
        None,
    )


MERGES: tuple[Merge, ...] = (merge_traced_variants, merge_independent_loops)
"""The merges `merge_loops` applies, in order."""
