"""Loop rules about what a loop reads and returns: drop what nobody needs, read each
value once, and move constants into the body.

A loop built by `pt.scan`, and even more one built by a pullback, computes and keeps
more than its readers use: traces nobody reads, carries only its derivative needed,
inputs the simplified body no longer reads. Each of these costs memory or work at every
step, so the rules here shrink the loop to what its readers use. They are context rules
(who reads an output is a fact about the graph, not the node), restricted to `Scan`.

- `remove_unused`: outputs nobody reads, carries whose final value and trace are unread
  and that no kept value depends on (groups feeding only each other included), traces
  nobody reads, and inputs the kept body no longer reads. A sequence keeps being given
  to the loop, read or not, unless its length check cannot fail (see
  `rewrite.loops_common`): a rewrite never turns an error into a value.
- `merge_duplicates`: per-step outputs the body computes as one variable are one output,
  and inputs given the same outer variable are read through one param.
- `inline_constants`: constant non-sequences, and sequences of identical constant rows,
  become constants of the body (so the body's own rewrites can fold them); the params
  they replace are then unread, and `remove_unused` drops them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fgraph import Apply, Constant, Graph, Variable
from fgraph.traverse import rebuild
from ops.scan_op import Scan
from ops.loop_layout import LoopInputs, StepParams
from rewrite.context import RewriteContext
from rewrite.loops_common import (
    body_over,
    covers_steps,
    evolved,
    fresh_params,
    is_read,
    loop_op,
    param_reads,
    replaced_outputs,
)
from rewrite.rules import context_rule, rule


@context_rule(Scan)
def remove_unused(node: Apply, context: RewriteContext) -> Sequence[Variable] | None:
    """Drop what nobody reads: see the module docstring."""
    op = loop_op(node)
    given = op.split_inputs(node.inputs)
    outputs = op.split_outputs(node.outputs)
    final_read = [is_read(v, context) for v in outputs.finals]
    trace_read = [v is not None and is_read(v, context) for v in outputs.traces]
    ys_read = [is_read(v, context) for v in outputs.ys]
    executed_read = outputs.executed is not None and is_read(outputs.executed, context)
    if not any((*final_read, *trace_read, *ys_read, executed_read)):
        return None  # a node the pass reached is read: its readers are not known yet
    body = op.inner_graph
    every_output = all(final_read) and all(ys_read) and all(
        read for read, trace in zip(trace_read, outputs.traces) if trace is not None
    )
    if every_output and all(body.clients.get(p) or p in body.outputs for p in body.inputs):
        return None  # every output read and every param read by the body: nothing to drop
    positions = op.split_params(range(len(body.inputs)))
    reads = op.split_results(param_reads(body))
    carry_of = {p: k for k, p in enumerate(positions.carries)}

    needed = {k for k in range(op.n_carries) if final_read[k] or trace_read[k]}
    roots = [found for found, read in zip(reads.ys, ys_read) if read]
    if reads.stop is not None:
        roots.append(reads.stop)
    for params_read in roots:
        needed |= {carry_of[p] for p in params_read if p in carry_of}
    pending = list(needed)
    while pending:
        for p in reads.carries[pending.pop()]:
            k = carry_of.get(p)
            if k is not None and k not in needed:
                needed.add(k)
                pending.append(k)
    kept_carries = sorted(needed)
    kept_ys = [y for y, read in enumerate(ys_read) if read]
    used = set(positions.carries[k] for k in kept_carries).union(
        *(reads.carries[k] for k in kept_carries), *(reads.ys[y] for y in kept_ys),
        *(() if reads.stop is None else (reads.stop,)),
    )
    kept_sequences = _kept_sequences(given, positions, used)
    kept_non_sequences = [j for j, p in enumerate(positions.non_sequences) if p in used]
    traced = tuple(op.traced[k] and trace_read[k] for k in kept_carries)
    if (
        len(kept_carries) == op.n_carries
        and len(kept_ys) == op.n_ys
        and len(kept_sequences) == op.n_sequences
        and len(kept_non_sequences) == op.n_non_sequences
        and traced == op.traced
    ):
        return None

    old_params = StepParams(
        tuple(op.params.carries[k] for k in kept_carries),
        tuple(op.params.rows[s] for s in kept_sequences),
        tuple(op.params.non_sequences[j] for j in kept_non_sequences),
    ).joined()
    params = fresh_params(old_params)
    results = op.results
    new_body = body_over(
        params,
        (
            *(results.carries[k] for k in kept_carries),
            *(results.ys[y] for y in kept_ys),
            *(() if results.stop is None else (results.stop,)),
        ),
        dict(zip(old_params, params)),
    )
    new_op = evolved(op, new_body, len(kept_carries), len(kept_sequences), traced, kept_carries)
    new = new_op.apply_loop(LoopInputs(
        given.n_steps,
        tuple(given.initials[k] for k in kept_carries),
        tuple(given.sequences[s] for s in kept_sequences),
        tuple(given.non_sequences[j] for j in kept_non_sequences),
    ))
    found: dict[Variable, Variable] = {}
    for number, k in enumerate(kept_carries):
        found[outputs.finals[k]] = new.finals[number]
        old_trace, new_trace = outputs.traces[k], new.traces[number]
        if old_trace is not None and new_trace is not None:
            found[old_trace] = new_trace
    for number, y in enumerate(kept_ys):
        found[outputs.ys[y]] = new.ys[number]
    if outputs.executed is not None and new.executed is not None:
        found[outputs.executed] = new.executed
    return replaced_outputs(node, found)


def _kept_sequences(
    given: LoopInputs[Variable], positions: StepParams[int], used: set[int]
) -> list[int]:
    """The sequences the kept body reads, and those it does not read whose length check
    could fail (unless the same outer variable is a sequence kept anyway)."""
    kept: list[int] = []
    for s, position in enumerate(positions.rows):
        if position in used:
            kept.append(s)
    for s, sequence in enumerate(given.sequences):
        if s in kept or covers_steps(sequence, given.n_steps):
            continue
        if not any(given.sequences[other] == sequence for other in kept):
            kept.append(s)
    return sorted(kept)


@context_rule(Scan)
def merge_duplicates(node: Apply, context: RewriteContext) -> Sequence[Variable] | None:
    """Per-step outputs the body computes as the same variable are one output (a read
    duplicate is replaced by the first); sequences or non-sequences given the same outer
    variable are read through one param (the others are then unread, and
    `remove_unused` drops them)."""
    op = loop_op(node)
    outputs = op.split_outputs(node.outputs)
    results = op.results
    found: dict[Variable, Variable] = {}
    for later, value in enumerate(results.ys):
        earlier = results.ys.index(value)
        if earlier != later and is_read(outputs.ys[later], context):
            found[outputs.ys[later]] = outputs.ys[earlier]
    if found:
        return replaced_outputs(node, found)

    given = op.split_inputs(node.inputs)
    params = op.params
    body = op.inner_graph
    read = {v for n in body.nodes for v in n.inputs} | set(body.outputs)
    same: dict[Variable, Variable] = {}
    for outer, inner in ((given.sequences, params.rows),
                         (given.non_sequences, params.non_sequences)):
        first_use: dict[Variable, Variable] = {}
        for value, param in zip(outer, inner):
            kept = first_use.setdefault(value, param)
            if kept is not param and param in read:
                same[param] = kept
    if not same:
        return None
    new_body = Graph(body.inputs, rebuild(body.outputs, same))
    new_op = evolved(op, new_body, op.n_carries, op.n_sequences, op.traced, range(op.n_carries))
    return new_op.apply(*node.inputs)


def _uniform_row(sequence: Variable) -> Constant | None:
    """The row of a constant sequence whose rows are all equal."""
    if not isinstance(sequence, Constant) or sequence.ndim == 0 or sequence.data.shape[0] == 0:
        return None
    rows = sequence.data
    if not all(np.array_equal(rows[0], row, equal_nan=rows.dtype.kind in "fc") for row in rows):
        return None
    return Constant(np.array(rows[0], copy=True))


@rule(Scan)
def inline_constants(node: Apply) -> Sequence[Variable] | None:
    """Constant non-sequences, and constant sequences of equal rows, become constants of
    the body; their params are left unread (`remove_unused` drops them where it may)."""
    op = loop_op(node)
    given = op.split_inputs(node.inputs)
    params = op.params
    body = op.inner_graph
    read = {v for n in body.nodes for v in n.inputs} | set(body.outputs)
    inlined: dict[Variable, Variable] = {}
    for sequence, param in zip(given.sequences, params.rows):
        row = _uniform_row(sequence) if param in read else None
        if row is not None:
            inlined[param] = row
    for value, param in zip(given.non_sequences, params.non_sequences):
        if isinstance(value, Constant) and param in read:
            inlined[param] = value
    if not inlined:
        return None
    new_body = Graph(body.inputs, rebuild(body.outputs, inlined))
    new_op = evolved(op, new_body, op.n_carries, op.n_sequences, op.traced, range(op.n_carries))
    return new_op.apply(*node.inputs)
