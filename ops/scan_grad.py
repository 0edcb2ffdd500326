"""Derivatives of loops are loops.

**Reverse mode.** The pullback runs a second `Scan` the other way. It needs the carries'
values before every step, so it reads the traces of the forward loop with every carry
traced: that is the forward node itself when all its carries are traced already, else a
node with the same inputs and body differing only in `traced` (`rewrite.loops_merge` merges
the two into one loop). Each backward step recomputes the forward step's body from
those values and pulls the carries' cotangents back through it: carries of the
backward loop are the carries' cotangents and running sums of the non-sequences'
gradients; its per-step outputs are the sequences' gradients. Intermediate values of
the body are recomputed, never stored: the forward loop keeps only what it must.

While-loops: the backward loop runs as many steps as the forward one executed (its
`executed` output). `truncate_gradient=m` keeps the last m steps only. Rows of a
sequence that no backward step covers get zero gradient.

**Forward mode.** The pushforward is one forward loop carrying the tangents beside the
primal values, with the body's pushforward as its step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from fgraph import Constant, Graph, Input, Param, TensorType, Variable
from fgraph.dtypes import is_inexact
from fgraph.traverse import rebuild
from ops.elemwise import Elemwise
from ops.elementwise_functions import add, eq, minimum, where, zeros_like
from ops.gradients import backpropagate, propagate_tangents, sum_by_variable
from ops.dimshuffle import DimShuffle
from ops.loop_connection import loop_dependencies
from ops.loop_layout import LoopInputs
from ops.scan_op import LOOP_DELEGATES, Scan
from ops.reshape_ops import reshape
from ops.shape_vector import static_value
from ops.scalar_ops import Second
from ops.indexing import Slice
from ops.subtensor import IncSubtensor, set_subtensor


def closed_scan(
    carries: Sequence[Input],
    sequences: Sequence[Input],
    non_sequences: Sequence[Input],
    outputs: Sequence[Variable],
    n_carries: int,
    traced: tuple[bool, ...],
    reverse: bool,
    while_loop: bool,
    length: int | None,
    windows: tuple[int, ...] = (),
) -> Scan:
    """The `Scan` whose body computes `outputs` from the given inputs, renamed to params."""
    inputs = (*carries, *sequences, *non_sequences)
    body = Graph(inputs, outputs)
    params = tuple(Param(k, v.type) for k, v in enumerate(inputs))
    return Scan(
        Graph(params, body.canonical_outputs),
        n_carries=n_carries,
        n_sequences=len(sequences),
        traced=traced,
        reverse=reverse,
        while_loop=while_loop,
        length=length,
        windows=windows,
    )


def _fresh(variables: Sequence[Variable], label: str) -> list[Input]:
    return [Input(v.type, f"{label}{k}") for k, v in enumerate(variables)]


def _rows(variable: Variable, label: str) -> Input:
    return Input(TensorType(variable.dtype, variable.type.shape[1:]), label)


def scan_pullback(
    op: Scan, inputs: tuple[Variable, ...], cotangents: tuple[Variable | None, ...]
) -> tuple[Variable | None, ...]:
    n_carries, n_sequences = op.n_carries, op.n_sequences
    given = op.split_inputs(inputs)
    n_steps, initials = given.n_steps, given.initials
    sequences, non_sequences = given.sequences, given.non_sequences
    output_cotangents = op.split_outputs(cotangents)
    final_cotangents = list(output_cotangents.finals)
    trace_cotangents = {
        k: cotangent for k, cotangent in enumerate(output_cotangents.traces) if op.traced[k]
    }
    initial_cotangents: dict[int, Variable] = {}
    for k, cotangent in trace_cotangents.items():
        if cotangent is None:
            continue
        last = _last_row_cotangent(cotangent, op)
        if last is not None:  # `trace[-1]` read the final value: seed it directly
            found = final_cotangents[k]
            final_cotangents[k] = last if found is None else add(found, last)
            trace_cotangents[k] = None
            continue
        steps_rows = _steps_rows_cotangent(cotangent, op)
        if steps_rows is not None:  # `scan(...)` read the rows after the initial one only
            trace_cotangents[k] = steps_rows
            continue
        # The initial value's row goes straight to the initial value; the other rows are
        # what the steps wrote.
        initial_cotangents[k] = cotangent[-1] if op.reverse else cotangent[0]
        trace_cotangents[k] = cotangent[:-1] if op.reverse else cotangent[1:]
    ys_cotangents = list(output_cotangents.ys)
    reached = _reached(op, final_cotangents, trace_cotangents, initial_cotangents, ys_cotangents)
    if not reached:
        return (None,) * len(inputs)

    full_op = attrs.evolve(op, traced=(True,) * n_carries, windows=())
    full = full_op.apply_loop(given)
    traces = [_given(trace) for trace in full.traces]
    executed = n_steps if full.executed is None else full.executed
    # Trace row i is step `offset + i`: a reversed while-loop ran the top rows.
    offset = n_steps - executed if (op.reverse and op.while_loop) else None
    if op.truncate_gradient > 0:
        kept = minimum(executed, op.truncate_gradient)
        lo, hi = (None, kept) if op.reverse else (executed - kept, executed)
    else:
        kept, lo, hi = executed, None, None

    def window(variable: Variable, shift: Variable | None) -> Variable:
        start = _plus(shift, lo)
        stop = _plus(shift, hi)
        if start is None and stop is None:
            return variable
        return variable[slice(start, stop)]

    # The values entering each step: a view of the trace (its boundary rows).
    befores = [trace[1:] if op.reverse else trace[:-1] for trace in traces]
    differentiable_carries = [k for k in range(n_carries) if is_inexact(initials[k].dtype)]
    differentiable_non_sequences = [
        k for k, v in enumerate(non_sequences) if is_inexact(v.dtype)
    ]

    # The backward body, over fresh inputs.
    cotangent_inputs = [Input(initials[k].type, f"d_carry{k}") for k in differentiable_carries]
    sum_inputs = [
        Input(non_sequences[k].type, f"d_non_sequence{k}") for k in differentiable_non_sequences
    ]
    before_inputs = [_rows(b, f"carry{k}") for k, b in enumerate(befores)]
    row_inputs = [_rows(s, f"sequence{k}") for k, s in enumerate(sequences)]
    given_traces = [k for k in op.traced_carries if trace_cotangents[k] is not None]
    given_ys = [y for y, c in enumerate(ys_cotangents) if c is not None]
    trace_inputs = [_rows(_given(trace_cotangents[k]), f"d_trace{k}") for k in given_traces]
    ys_inputs = [_rows(_given(ys_cotangents[y]), f"d_ys{y}") for y in given_ys]
    non_sequence_inputs = _fresh(non_sequences, "non_sequence")

    primal = dict(zip(op.inner_graph.inputs, (*before_inputs, *row_inputs, *non_sequence_inputs)))
    step_outputs = rebuild(op.inner_graph.outputs, primal)
    seeds: list[tuple[Variable, Variable]] = []
    for number, k in enumerate(differentiable_carries):
        seeds.append((step_outputs[k], cotangent_inputs[number]))
    for number, k in enumerate(given_traces):
        seeds.append((step_outputs[k], trace_inputs[number]))
    for number, y in enumerate(given_ys):
        seeds.append((step_outputs[n_carries + y], ys_inputs[number]))
    targets = [
        *(before_inputs[k] for k in differentiable_carries),
        *row_inputs,
        *(non_sequence_inputs[k] for k in differentiable_non_sequences),
    ]
    gradients_found = backpropagate(sum_by_variable(seeds), targets)
    carry_grads = gradients_found[: len(differentiable_carries)]
    row_grads = gradients_found[len(differentiable_carries) : len(differentiable_carries) + n_sequences]
    non_sequence_grads = gradients_found[len(differentiable_carries) + n_sequences :]
    rows_with_grad = [k for k, g in enumerate(row_grads) if g is not None]

    next_cotangents = [
        zeros_like(before_inputs[k]) if g is None else g
        for k, g in zip(differentiable_carries, carry_grads)
    ]
    next_sums = [
        total if g is None else add(total, g) for total, g in zip(sum_inputs, non_sequence_grads)
    ]
    backward_outputs = [*next_cotangents, *next_sums]
    backward_outputs += [_given(row_grads[k]) for k in rows_with_grad]
    # What the step computed is in the forward traces: the backward step reads it there
    # instead of computing it again (tanh's derivative reads tanh's output, say).
    afters = [trace[:-1] if op.reverse else trace[1:] for trace in traces]
    step_traces = [*afters, *full.ys]
    computed = step_outputs[: n_carries + op.n_ys]
    read_back = [k for k, v in enumerate(computed) if v.owner is not None]
    stored_inputs = [_rows(step_traces[k], f"step_output{k}") for k in read_back]
    backward_outputs = list(
        rebuild(backward_outputs, {computed[k]: v for k, v in zip(read_back, stored_inputs)})
    )
    backward = closed_scan(
        [*cotangent_inputs, *sum_inputs],
        [*before_inputs, *row_inputs, *trace_inputs, *ys_inputs, *stored_inputs],
        non_sequence_inputs,
        backward_outputs,
        n_carries=len(cotangent_inputs) + len(sum_inputs),
        traced=(False,) * (len(cotangent_inputs) + len(sum_inputs)),
        reverse=not op.reverse,
        while_loop=False,
        length=_kept_length(op),
    )
    start_cotangents = [
        zeros_like(initials[k]) if final_cotangents[k] is None else _given(final_cotangents[k])
        for k in differentiable_carries
    ]
    start_sums = [zeros_like(non_sequences[k]) for k in differentiable_non_sequences]
    backward_sequences = [
        *(window(b, None) for b in befores),
        *(window(s, offset) for s in sequences),
        *(window(_given(trace_cotangents[k]), None) for k in given_traces),
        *(window(_given(ys_cotangents[y]), None) for y in given_ys),
        *(window(step_traces[k], None) for k in read_back),
    ]
    results = backward.apply_loop(LoopInputs(
        kept, (*start_cotangents, *start_sums), tuple(backward_sequences), non_sequences
    ))

    initial_grads: list[Variable | None] = [None] * n_carries
    for number, k in enumerate(differentiable_carries):
        gradient = results.finals[number]
        if op.truncate_gradient > 0:
            gradient = where(eq(kept, executed), gradient, zeros_like(gradient))
        if k in initial_cotangents:
            gradient = add(gradient, initial_cotangents[k])
        initial_grads[k] = gradient
    summed_grads: list[Variable | None] = [None] * len(non_sequences)
    for number, k in enumerate(differentiable_non_sequences):
        summed_grads[k] = results.finals[len(cotangent_inputs) + number]
    sequence_grads: list[Variable | None] = [None] * n_sequences
    for number, k in enumerate(rows_with_grad):
        start, stop = _plus(offset, lo), _given(_plus(offset, executed if hi is None else hi))
        sequence_grads[k] = _place(results.ys[number], sequences[k], start, stop)
    positions = op.split_params(range(len(op.inner_graph.inputs)))

    def connected(
        grads: Sequence[Variable | None], where: Sequence[int]
    ) -> tuple[Variable | None, ...]:
        return tuple(g if position in reached else None for g, position in zip(grads, where))

    return LoopInputs(
        None,
        connected(initial_grads, positions.carries),
        connected(sequence_grads, positions.rows),
        connected(summed_grads, positions.non_sequences),
    ).joined()


def _reached(
    op: Scan,
    finals: Sequence[Variable | None],
    traces: Mapping[int, Variable | None],
    initial_rows: Mapping[int, Variable],
    ys: Sequence[Variable | None],
) -> frozenset[int]:
    """The positions of the inputs (after n_steps) that the outputs given a cotangent
    depend on: the others get None (disconnected), not zeros."""
    depends = loop_dependencies(op)
    return frozenset(initial_rows).union(
        *(depends.finals[k] for k, c in enumerate(finals) if c is not None),
        *(depends.step_rows[k] for k, c in traces.items() if c is not None),
        *(depends.ys[y] for y, c in enumerate(ys) if c is not None),
    )


def _last_row_cotangent(cotangent: Variable, op: Scan) -> Variable | None:
    """The value `v` when a trace's cotangent is that of reading the row the loop wrote
    last, else None: `inc_subtensor(zeros[last], v)` (from `trace[-1]`), or that update
    of the rows after the initial one, `inc_subtensor(zeros[1:], ...)` (from
    `scan(...)[-1]`, which reads `trace[1:][-1]`). That row is the carry's final value,
    so `v` seeds the final cotangent instead of a sequence of zeros with one row set."""
    last = 0 if op.reverse else -1
    rows = {last} if op.length is None else {last, last % (op.length + 1)}
    update = _update_of_zeros(cotangent)
    if update is not None and update[0] == (_steps_written(op),):
        update = _update_of_zeros(update[1])
        rows = {0} if op.reverse else {-1}
    if update is None or update[0] not in {(row,) for row in rows}:
        return None
    return update[1]


def _steps_rows_cotangent(cotangent: Variable, op: Scan) -> Variable | None:
    """The value `v` when a trace's cotangent is `inc_subtensor(zeros[1:], v)` (from
    reading `scan(...)`, the rows after the initial one), else None: the initial row's
    cotangent is then a structural zero, and the initial value is not reached through
    it."""
    update = _update_of_zeros(cotangent)
    if update is None or update[0] != (_steps_written(op),):
        return None
    return update[1]


def _steps_written(op: Scan) -> Slice:
    """The rows of a carry's trace that the steps wrote (all but the initial value's)."""
    return Slice(None, -1) if op.reverse else Slice(1, None)


def _update_of_zeros(variable: Variable) -> tuple[tuple[object, ...], Variable] | None:
    """(index, value) when `variable` is `inc_subtensor(zeros[index], value)`."""
    node = variable.owner
    if node is None or not isinstance(node.op, IncSubtensor) or len(node.inputs) != 2:
        return None
    zeros, value = node.inputs
    if node.op.set_instead_of_inc or not _is_zeros(zeros):
        return None
    return node.op.idx_list, value


def _is_zeros(variable: Variable) -> bool:
    """`zeros_like(x)` as the op library builds it: `second(x, 0)`."""
    node = variable.owner
    if node is None or not isinstance(node.op, Elemwise) or not isinstance(node.op.scalar_op, Second):
        return False
    fill = node.inputs[1]
    while fill.owner is not None and isinstance(fill.owner.op, DimShuffle):
        fill = fill.owner.inputs[0]
    return isinstance(fill, Constant) and fill.data.size == 1 and float(fill.data.reshape(())) == 0


def _kept_length(op: Scan) -> int | None:
    """How many steps the backward loop runs, when that is known statically."""
    if op.length is None or op.truncate_gradient < 0:
        return op.length
    return min(op.length, op.truncate_gradient)


def _given(variable: Variable | None) -> Variable:
    if variable is None:
        raise AssertionError("a derivative selected as given is None")
    return variable


def _plus(shift: Variable | None, value: Variable | None) -> Variable | None:
    if shift is None:
        return value
    if value is None:
        return shift
    return add(shift, value)


def _place(rows: Variable, sequence: Variable, start: Variable | None, stop: Variable) -> Variable:
    """The gradient of `sequence` whose rows start:stop are `rows` and the rest zeros;
    `rows` itself when they cover the sequence by construction (stop is its length)."""
    length = sequence.shape[0]
    same_as_length = stop.owner is not None and (stop.owner, stop.index) == (length.owner, 0)
    covers_end = same_as_length or (
        static_value(stop) is not None and static_value(stop) == sequence.type.shape[0]
    )
    rows = _rows_shaped_like(rows, sequence)
    if start is None and covers_end:
        return rows
    return set_subtensor(zeros_like(sequence)[slice(start, stop)], rows)


def _rows_shaped_like(rows: Variable, sequence: Variable) -> Variable:
    """`rows` with the sequence's row shape. A per-step output's trace after zero steps
    has length 0 along its unknown axes too; a gradient must have its primal's shape."""
    row_shape = sequence.type.shape[1:]
    if all(n is not None for n in row_shape) and rows.type.shape[1:] == row_shape:
        return rows
    lengths = [rows.shape[0], *(sequence.shape[axis] for axis in range(1, sequence.ndim))]
    return reshape(rows, lengths)


def scan_pushforward(
    op: Scan, inputs: tuple[Variable, ...], tangents: tuple[Variable | None, ...]
) -> tuple[Variable | None, ...]:
    n_carries = op.n_carries
    given = op.split_inputs(inputs)
    initials, sequences, non_sequences = given.initials, given.sequences, given.non_sequences
    given_tangents = op.split_inputs(tangents)
    initial_tangents = given_tangents.initials
    sequence_tangents = given_tangents.sequences
    non_sequence_tangents = given_tangents.non_sequences
    if all(t is None for t in tangents[1:]):
        return (None,) * len(op.infer(*(v.type for v in inputs)))

    differentiable_carries = [k for k in range(n_carries) if is_inexact(initials[k].dtype)]
    tangent_sequences = [k for k, t in enumerate(sequence_tangents) if t is not None]
    tangent_non_sequences = [k for k, t in enumerate(non_sequence_tangents) if t is not None]

    carry_inputs = _fresh(initials, "carry")
    carry_tangent_inputs = [Input(initials[k].type, f"t_carry{k}") for k in differentiable_carries]
    row_inputs = [_rows(s, f"sequence{k}") for k, s in enumerate(sequences)]
    row_tangent_inputs = [_rows(sequences[k], f"t_sequence{k}") for k in tangent_sequences]
    non_sequence_inputs = _fresh(non_sequences, "non_sequence")
    non_sequence_tangent_inputs = [
        Input(non_sequences[k].type, f"t_non_sequence{k}") for k in tangent_non_sequences
    ]
    primal = dict(zip(op.inner_graph.inputs, (*carry_inputs, *row_inputs, *non_sequence_inputs)))
    step_outputs = rebuild(op.inner_graph.outputs, primal)
    seeds: dict[Variable, Variable] = {}
    seeds.update((carry_inputs[k], t) for k, t in zip(differentiable_carries, carry_tangent_inputs))
    seeds.update((row_inputs[k], t) for k, t in zip(tangent_sequences, row_tangent_inputs))
    seeds.update(
        (non_sequence_inputs[k], t)
        for k, t in zip(tangent_non_sequences, non_sequence_tangent_inputs)
    )
    carries_and_ys = step_outputs[: n_carries + op.n_ys]
    pushed = propagate_tangents(seeds, carries_and_ys)
    next_carries = list(step_outputs[:n_carries])
    next_tangents = [
        zeros_like(carry_tangent_inputs[n]) if pushed[k] is None else _given(pushed[k])
        for n, k in enumerate(differentiable_carries)
    ]
    ys = list(step_outputs[n_carries : n_carries + op.n_ys])
    differentiable_ys = [y for y, v in enumerate(ys) if is_inexact(v.dtype)]
    ys_tangents = [
        zeros_like(ys[y]) if pushed[n_carries + y] is None else _given(pushed[n_carries + y])
        for y in differentiable_ys
    ]
    stop = [step_outputs[-1]] if op.while_loop else []
    forward = closed_scan(
        [*carry_inputs, *carry_tangent_inputs],
        [*row_inputs, *row_tangent_inputs],
        [*non_sequence_inputs, *non_sequence_tangent_inputs],
        [*next_carries, *next_tangents, *ys, *ys_tangents, *stop],
        n_carries=n_carries + len(differentiable_carries),
        traced=(*op.traced, *(op.traced[k] for k in differentiable_carries)),
        reverse=op.reverse,
        while_loop=op.while_loop,
        length=op.length,
        windows=(
            (*op.windows, *(op.windows[k] for k in differentiable_carries)) if op.windows else ()
        ),
    )
    start_tangents = [
        zeros_like(initials[k]) if initial_tangents[k] is None else _given(initial_tangents[k])
        for k in differentiable_carries
    ]
    results = forward.apply_loop(LoopInputs(
        given.n_steps,
        (*initials, *start_tangents),
        (*sequences, *(_given(sequence_tangents[k]) for k in tangent_sequences)),
        (*non_sequences, *(_given(non_sequence_tangents[k]) for k in tangent_non_sequences)),
    ))
    finals: list[Variable | None] = [None] * n_carries
    traces: list[Variable | None] = [None] * n_carries
    for number, k in enumerate(differentiable_carries):
        finals[k] = results.finals[n_carries + number]
        traces[k] = results.traces[n_carries + number]
    ys_tangents_out: list[Variable | None] = [None] * op.n_ys
    for number, y in enumerate(differentiable_ys):
        ys_tangents_out[y] = results.ys[op.n_ys + number]
    # None (not zeros) for the outputs that no input given a tangent reaches.
    moved = frozenset(k for k, tangent in enumerate(tangents[1:]) if tangent is not None)
    depends = loop_dependencies(op)

    def moving(
        values: list[Variable | None], positions: Sequence[frozenset[int]]
    ) -> list[Variable | None]:
        return [None if moved.isdisjoint(p) else v for v, p in zip(values, positions)]

    return _outputs_like(
        op,
        moving(finals, depends.finals),
        moving(traces, [depends.trace(k) for k in range(n_carries)]),
        moving(ys_tangents_out, depends.ys),
    )


def _outputs_like(
    op: Scan,
    finals: Sequence[Variable | None],
    traces: Sequence[Variable | None],
    ys: Sequence[Variable | None],
) -> tuple[Variable | None, ...]:
    """Per-output values (None where there is none) laid out as `op`'s outputs: a trace
    slot only for the carries `op` traces, and no value for a while-loop's step count."""
    kept = (trace for trace, keep in zip(traces, op.traced) if keep)
    return (*finals, *kept, *ys, *((None,) if op.while_loop else ()))


LOOP_DELEGATES.pullback = scan_pullback
LOOP_DELEGATES.pushforward = scan_pushforward
