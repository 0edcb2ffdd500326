"""`unroll`: a short loop of constant length as straight-line code.

Unrolling pays when the copies simplify together: a short recurrence and its
derivatives fold into one fused expression (the seed's second derivative, 4 steps of
`y ** 2`, becomes one expression of `x0`). A long loop would only cost compile time
(numba's grows steeply with the size of a function), hence the bounds below.

The straight-line code fails where the loop would: a sequence is unrolled only when it
has the rows by construction (a check of its length would die with the outputs that
read it), and a carry's new value through `carried_value`
(the loop raises when a step changes a carry's shape).
"""

from __future__ import annotations

from collections.abc import Sequence

from fgraph import Apply, Graph, Variable
from fgraph.traverse import rebuild
from ops.join import stack
from ops.loop_layout import StepResults
from ops.scan_op import Scan
from rewrite.loops_common import (
    carried_value,
    covers_steps,
    loop_op,
    replaced_outputs,
    rows_for_steps,
)
from rewrite.patterns import fit_to_type
from rewrite.rules import rule

UNROLL_MAX_STEPS = 8
"""Loops of more constant steps stay loops: unrolling pays when the copies simplify
together (a short recurrence and its derivatives fold into one fused expression), not for
long loops, whose straight-line code would only cost compile time."""
UNROLL_MAX_NODES = 256
"""Largest unrolled body (steps x body nodes): numba's compile time grows steeply with the
size of a function."""


@rule(Scan)
def unroll(node: Apply) -> Sequence[Variable] | None:
    """A loop of at most `UNROLL_MAX_STEPS` constant steps whose body has at most
    `UNROLL_MAX_NODES` nodes in all copies becomes straight-line code."""
    op = loop_op(node)
    steps = op.length
    if op.while_loop or steps is None or not 1 <= steps <= UNROLL_MAX_STEPS:
        return None
    if steps * max(1, _size(op.inner_graph)) > UNROLL_MAX_NODES:
        return None
    given = op.split_inputs(node.inputs)
    params = op.params
    body = op.inner_graph
    sequences: list[Variable] = []
    for sequence in given.sequences:
        rows = rows_for_steps(sequence, given.n_steps, steps)
        # A checked read of the rows lives only as long as some output reads a row: once
        # none does, the check would be lost with the loop.
        if rows is None or (rows is not sequence and not covers_steps(sequence, given.n_steps)):
            return None
        sequences.append(rows)
    carries = list(given.initials)
    written: dict[int, StepResults[Variable]] = {}
    for step in range(steps - 1, -1, -1) if op.reverse else range(steps):
        inputs = (*carries, *(rows[step] for rows in sequences), *given.non_sequences)
        values = op.split_results(rebuild(body.outputs, dict(zip(body.inputs, inputs))))
        carries = [
            carried_value(value, carry.type, initial)
            for value, carry, initial in zip(values.carries, params.carries, given.initials)
        ]
        written[step] = StepResults(tuple(carries), values.ys, None)
    by_step = [written[step] for step in range(steps)]
    outputs = op.split_outputs(node.outputs)
    found: dict[Variable, Variable] = dict(zip(outputs.finals, carries))
    for k, trace in enumerate(outputs.traces):
        if trace is None:
            continue
        written_rows = [values.carries[k] for values in by_step]
        initial = given.initials[k]
        boundaries = [*written_rows, initial] if op.reverse else [initial, *written_rows]
        window = op.window(k)
        found[trace] = stack(boundaries[-window:] if window else boundaries)
    for y, trace in enumerate(outputs.ys):
        found[trace] = stack([values.ys[y] for values in by_step])
    fitted = {old: fit_to_type(new, old.type) for old, new in found.items()}
    if any(new is None for new in fitted.values()):
        return None
    return replaced_outputs(node, {old: new for old, new in fitted.items() if new is not None})


def _size(graph: Graph) -> int:
    """Nodes of a body, counting those of nested bodies."""
    total = 0
    pending = [graph]
    while pending:
        current = pending.pop()
        total += len(current.nodes)
        pending.extend(n.op.inner_graph for n in current.nodes if isinstance(n.op, Scan))
    return total
