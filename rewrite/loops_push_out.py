"""Loop rules moving work out of a loop: what every step computes alike runs once, what
reads only the sequences runs once over all of them, and sums a loop accumulates are
taken after it.

A loop runs its body step after step, one row at a time; the same work outside is one
batched operation over whole arrays (a matrix product instead of n matrix-vector
products, one vectorized elementwise pass). Batching a body value along the time axis is
`Op.vectorize(inputs, batched, 1)`, the rule every op declares for `vectorize_graph`; an
op without one stays in the loop.

- `push_out_invariants`: body work that reads only non-sequences and constants runs
  once, before the loop, and enters it as a non-sequence.
- `push_out_sequence_work`: body work reading sequences but no carry runs once over the
  whole sequences; the loop reads its rows as new sequences.
- `repeat_invariant_outputs`: a per-step output no step changes is its value repeated.
- `vectorize_map`: a loop with no carries whose per-step outputs all batch is that
  batched computation: the loop disappears.
- `accumulate_outside`: carries that only add a per-step term to themselves, and that
  nothing else reads, are summed after the loop (a sum of outer products is one matrix
  product).

Where work leaves the loop, the sequences it reads are taken with `rows_for_steps`,
which keeps the loop's check of their length (see `rewrite.loops_common`).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from fgraph import Apply, Graph, Param, Variable
from fgraph.traverse import rebuild
from ops.creation import alloc
from ops.dimshuffle import DimShuffle, transpose
from ops.elemwise import Elemwise
from ops.loop_layout import LoopInputs, StepParams
from ops.loop_ragged import steps_vary
from ops.matmul_op import MatMul, matmul
from ops.reduction import sum as reduce_sum
from ops.scalar_ops import Add
from ops.scan_op import Scan
from ops.shape_vector import shape_i
from rewrite.loops_common import (
    body_over,
    evolved,
    fresh_params,
    loop_op,
    param_reads,
    replaced_outputs,
    rows_for_steps,
    loop_checks_hold,
    sequences_cover,
)
from rewrite.patterns import fit_to_type
from rewrite.rules import rule


@rule(Scan)
def push_out_invariants(node: Apply) -> Sequence[Variable] | None:
    """Body work that reads only non-sequences and constants is computed once before the
    loop; the values the rest of the body reads from it become new non-sequences."""
    op = loop_op(node)
    given = op.split_inputs(node.inputs)
    params = op.params
    body = op.inner_graph
    varying: set[Variable] = {*params.carries, *params.rows}
    invariant: set[Variable] = set(params.non_sequences)
    for inner_node in body.nodes:
        if any(v in varying for v in inner_node.inputs):
            varying.update(inner_node.outputs)
        elif any(v in invariant for v in inner_node.inputs):
            invariant.update(inner_node.outputs)
    # Work on constants alone stays: the body's own constant folding removes it.
    boundary = list(dict.fromkeys(
        v
        for v in (
            *(v for n in body.nodes if any(o in varying for o in n.outputs) for v in n.inputs),
            *body.outputs,
        )
        if v.owner is not None and v in invariant
    ))
    if not boundary:
        return None
    hoisted = rebuild(boundary, dict(zip(params.non_sequences, given.non_sequences)))
    old = (*body.inputs, *boundary)  # new non-sequences go last
    new_params = fresh_params(old)
    new_body = body_over(new_params, body.outputs, dict(zip(old, new_params)))
    new_op = evolved(op, new_body, op.n_carries, op.n_sequences, op.traced, range(op.n_carries))
    return new_op.apply_loop(
        attrs.evolve(given, non_sequences=(*given.non_sequences, *hoisted))
    ).joined()


@rule(Scan)
def repeat_invariant_outputs(node: Apply) -> Sequence[Variable] | None:
    """A for-loop's per-step output that is a non-sequence (after `push_out_invariants`,
    any output no step changes) is that value repeated once per step. Besides sparing
    the copies, the repeat knows its rows' shape after zero steps, where an empty trace
    would not (its unknown row lengths read as 0). Only where the loop's sequences are
    long enough by construction: the repeat does not check them, and a loop left with
    no output read is dropped, its checks with it (a negative step count fails the
    repeat as it fails the loop, with a ValueError)."""
    op = loop_op(node)
    given = op.split_inputs(node.inputs)
    if op.while_loop or not sequences_cover(given.sequences, given.n_steps, op.length):
        return None
    params = op.params
    outputs = op.split_outputs(node.outputs)
    found: dict[Variable, Variable] = {}
    for trace, value in zip(outputs.ys, op.results.ys):
        if value not in params.non_sequences:
            continue
        outer = given.non_sequences[params.non_sequences.index(value)]
        lengths = [
            static if static is not None else shape_i(outer, axis)
            for axis, static in enumerate(outer.type.shape)
        ]
        fitted = fit_to_type(alloc(outer, given.n_steps, *lengths), trace.type)
        if fitted is not None:
            found[trace] = fitted
    return replaced_outputs(node, found) if found else None


@attrs.frozen
class _Batched:
    """Body values computed for every step at once (`whole`: body value -> the stacked
    outer value), and the body values that read a carry."""

    whole: dict[Variable, Variable]
    carried: frozenset[Variable]


def _over_whole_sequences(node: Apply, checked: bool) -> _Batched | None:
    """The sequence params as the first n_steps rows of the sequences, then, in body
    order, every value that reads them and no carry and whose op batches along the time
    axis (`Op.vectorize`). `checked`: the rows must fail where the loop's length check
    would (the loop may disappear); None when they cannot, also when a sequence no output
    reads is not long enough by construction (its rows' check would go with the loop).
    Otherwise the loop stays and reads the batched values, which have no more rows than
    the sequences, as sequences: it checks them itself."""
    op = loop_op(node)
    given = op.split_inputs(node.inputs)
    params = op.params
    body = op.inner_graph
    steps = given.n_steps
    read = frozenset().union(*param_reads(body))
    whole: dict[Variable, Variable] = {}
    for param, sequence in zip(params.rows, given.sequences):
        known = sequence.type.shape[0]
        if op.length is not None and known is not None and known < op.length:
            return None  # the loop always fails: left as it is
        rows = rows_for_steps(sequence, steps, op.length)
        unread = body.inputs.index(param) not in read
        if checked and (rows is None or unread and not sequences_cover([sequence], steps, op.length)):
            return None
        whole[param] = sequence[:steps] if rows is None else rows
    if len({value.type.shape[0] for value in whole.values()} - {None}) > 1:
        return None  # rows of two static lengths for one step count: the loop always fails
    shared = dict(zip(params.non_sequences, given.non_sequences))
    carried: set[Variable] = set(params.carries)
    for inner_node in body.nodes:
        reads = inner_node.inputs
        if any(v in carried for v in reads):
            carried.update(inner_node.outputs)
            continue
        if not any(v in whole for v in reads) or any(
            v.owner is not None and v not in whole for v in reads
        ):
            continue
        operands = tuple(whole.get(v, shared.get(v, v)) for v in reads)
        flags = tuple(v in whole for v in reads)
        if isinstance(inner_node.op, Scan) and steps_vary(inner_node.op, flags):
            continue  # a loop stopping at different steps per row: its traces would be ragged
        batched = inner_node.op.vectorize(operands, flags, 1)
        if batched is None:
            continue
        for output, value, flag in zip(inner_node.outputs, *batched):
            if flag and value.dtype == output.dtype:
                whole[output] = value
    return _Batched(whole, frozenset(carried))


def _all_scalars(body: Graph) -> bool:
    """A body of 0-d values only runs as plain scalar code: its elementwise work costs the
    same inside the loop as outside, where it would cost a pass over memory more."""
    values = [*body.inputs, *(o for node in body.nodes for o in node.outputs)]
    return all(value.ndim == 0 for value in values)


def _view_of_row(variable: Variable, params: set[Variable]) -> bool:
    """A shuffle of a row the loop reads anyway: nothing to gain from a new sequence."""
    node = variable.owner
    return node is not None and isinstance(node.op, DimShuffle) and node.inputs[0] in params


@rule(Scan)
def push_out_sequence_work(node: Apply) -> Sequence[Variable] | None:
    """Body work that reads sequences (and values every step shares) but no carry runs
    once over the whole sequences, before the loop; the loop reads its rows as new
    sequences (added after the old ones)."""
    op = loop_op(node)
    body = op.inner_graph
    if op.n_sequences == 0 or _all_scalars(body):
        return None
    batched = _over_whole_sequences(node, checked=False)
    if batched is None:
        return None
    whole = batched.whole
    params = set(body.inputs)
    readers = [
        v for n in body.nodes if any(o in batched.carried for o in n.outputs) for v in n.inputs
    ]
    boundary = list(dict.fromkeys(
        v for v in (*readers, *body.outputs)
        if v in whole and v not in params and not _view_of_row(v, params)
    ))
    if not boundary:
        return None
    given = op.split_inputs(node.inputs)
    old = op.params
    old_params = StepParams(old.carries, (*old.rows, *boundary), old.non_sequences).joined()
    # A new param has the body value's type: what the body knows of its shape is true
    # of each row of the batched value too.
    new_params = tuple(Param(k, v.type) for k, v in enumerate(old_params))
    new_body = body_over(new_params, body.outputs, dict(zip(old_params, new_params)))
    new_op = evolved(op, new_body, op.n_carries, op.n_sequences + len(boundary), op.traced,
                     range(op.n_carries))
    return new_op.apply_loop(
        attrs.evolve(given, sequences=(*given.sequences, *(whole[v] for v in boundary)))
    ).joined()


@rule(Scan)
def vectorize_map(node: Apply) -> Sequence[Variable] | None:
    """A loop with no carries whose every per-step output batches (see
    `push_out_sequence_work`) is that computation, done once: the loop disappears (its
    checks kept, `_over_whole_sequences`'s `checked`)."""
    op = loop_op(node)
    if op.n_carries or op.while_loop or op.n_sequences == 0:
        return None
    if not all(t.is_fully_static for t in op.ys_types):  # an empty trace's row shape
        return None
    batched = _over_whole_sequences(node, checked=True)
    if batched is None:
        return None
    outputs = op.split_outputs(node.outputs)
    found: dict[Variable, Variable] = {}
    for trace, value in zip(outputs.ys, op.results.ys):
        whole = batched.whole.get(value)
        fitted = None if whole is None else fit_to_type(whole, trace.type)
        if fitted is None:
            return None
        found[trace] = fitted
    return replaced_outputs(node, found)


@attrs.frozen
class _Accumulator:
    """A carry that only adds a per-step term to itself: `acc' = acc + term`. The term
    is an outer product of two vectors (kept as its two factors) or any other value."""

    carry: int
    term: Variable
    factors: tuple[Variable, Variable] | None


def _accumulator(op: Scan, k: int, reads: Sequence[frozenset[int]]) -> _Accumulator | None:
    """Carry k as an accumulator, if its update is `carry + term` and nothing else the
    body computes (no other output, the stop condition included) reads the carry."""
    body = op.inner_graph
    param, update = op.params.carries[k], op.results.carries[k]
    readers = body.clients.get(param, ())
    if any(k in found for j, found in enumerate(reads) if j != k):
        return None
    match update.owner:
        case Apply(op=Elemwise(scalar_op=Add()), inputs=(first, second)) if len(readers) == 1:
            term = second if first is param else first if second is param else None
            if term is None or term.type != param.type:
                return None
            match term.owner:
                case Apply(op=MatMul(), inputs=(left, right)):
                    column = _shuffled_vector(left, (0, None))
                    row = _shuffled_vector(right, (None, 0))
                    if column is not None and row is not None:
                        return _Accumulator(k, term, (column, row))
            return _Accumulator(k, term, None)
    return None


def _shuffled_vector(variable: Variable, order: tuple[int | None, ...]) -> Variable | None:
    """The vector `v` when `variable` is `v` under shuffles amounting to `order`."""
    composed: tuple[int | None, ...] | None = None
    while variable.owner is not None and isinstance(variable.owner.op, DimShuffle):
        inner_order = variable.owner.op.order
        composed = inner_order if composed is None else tuple(
            None if axis is None else inner_order[axis] for axis in composed
        )
        variable = variable.owner.inputs[0]
    return variable if composed == order and variable.ndim == 1 else None


@rule(Scan)
def accumulate_outside(node: Apply) -> Sequence[Variable] | None:
    """Carries that only sum a per-step term become per-step outputs summed after the
    loop; a sum of outer products `column_t @ row_t` (how every gradient of a matrix
    product accumulates) becomes one matrix product of the stacked factors. Only where
    the traces' row shapes are known (an empty trace's unknown lengths are 0, which would
    not add to the initial value)."""
    op = loop_op(node)
    if op.while_loop or not loop_checks_hold(node.inputs, op):
        return None  # the loop may vanish with its carries, and its checks with it
    given = op.split_inputs(node.inputs)
    params = op.params
    sequence_of = dict(zip(params.rows, given.sequences))
    reads = param_reads(op.inner_graph)
    stacked_sequences: dict[Variable, Variable] = {}

    def stackable(value: Variable) -> bool:
        if value in sequence_of:
            rows = rows_for_steps(sequence_of[value], given.n_steps, op.length)
            if rows is not None:
                stacked_sequences[value] = rows
            return rows is not None
        return value.type.is_fully_static or (op.length or 0) >= 1

    found = [
        a for k in range(op.n_carries)
        if not op.traced[k] and (a := _accumulator(op, k, reads)) is not None
        and all(stackable(v) for v in a.factors or (a.term,))
    ]
    if not found:
        return None
    removed = {a.carry for a in found}
    kept = [k for k in range(op.n_carries) if k not in removed]
    new_ys: list[Variable] = []
    for accumulator in found:
        for value in accumulator.factors or (accumulator.term,):
            if value not in sequence_of and value not in new_ys:
                new_ys.append(value)
    results = op.results
    old_params = StepParams(
        tuple(params.carries[k] for k in kept), params.rows, params.non_sequences
    ).joined()
    new_params = fresh_params(old_params)
    new_body = body_over(
        new_params,
        (*(results.carries[k] for k in kept), *results.ys, *new_ys),
        dict(zip(old_params, new_params)),
    )
    new_op = evolved(op, new_body, len(kept), op.n_sequences,
                     tuple(op.traced[k] for k in kept), kept)
    new = new_op.apply_loop(LoopInputs(
        given.n_steps, tuple(given.initials[k] for k in kept), given.sequences,
        given.non_sequences,
    ))
    outputs = op.split_outputs(node.outputs)

    def stacked(value: Variable) -> Variable:
        if value in stacked_sequences:
            return stacked_sequences[value]
        return new.ys[op.n_ys + new_ys.index(value)]

    replacement: dict[Variable, Variable] = {}
    for number, k in enumerate(kept):
        replacement[outputs.finals[k]] = new.finals[number]
        old_trace, new_trace = outputs.traces[k], new.traces[number]
        if old_trace is not None and new_trace is not None:
            replacement[old_trace] = new_trace
    replacement.update(zip(outputs.ys, new.ys[: op.n_ys]))
    for accumulator in found:
        if accumulator.factors is None:
            total = reduce_sum(stacked(accumulator.term), axis=0)
        else:  # sum over t of outer(column_t, row_t): one product of the stacked vectors
            column, row = (stacked(v) for v in accumulator.factors)
            total = matmul(transpose(column), row)
        final = outputs.finals[accumulator.carry]
        fitted = fit_to_type(given.initials[accumulator.carry] + total, final.type)
        if fitted is None:
            return None
        replacement[final] = fitted
    return replaced_outputs(node, replacement)
