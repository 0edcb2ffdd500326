"""Reads of ragged traces: a loop whose examples may run different numbers of steps
(a batched `n_steps`, or a while-loop stopping on batched values) has, vectorized, a
different trace length per example, so only its final values may be read.

`without_ragged_reads`, which `vectorize_graph` runs before vectorizing, reads the last
row of a carry's trace (`trace[-1]`, `scan(...)[-1]` of a loop running at least one
step) as the carry's final value, and refuses at build time any other read of such a
loop's traces or per-step outputs; `steps_vary` says whether a loop, given which of its
inputs are batched, is such a loop (`ops.loop_vectorize` then masks its steps).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fgraph import Variable, rebuild, toposort
from fgraph.node import Apply
from ops.indexing import Slice
from ops.loop_connection import loop_dependencies, reads_shape_only
from ops.scan_op import Scan
from ops.shape_vector import static_value
from ops.subtensor import Subtensor


def without_ragged_reads(
    outputs: Sequence[Variable], replace: Mapping[Variable, Variable]
) -> list[Variable]:
    """`outputs`, to be vectorized over the inputs `replace` maps, with every last row of
    a carry's trace (`trace[-1]`, or `scan(...)[-1]` of a loop that runs at least one
    step) replaced by the carry's final value, for the loops whose examples may run
    different numbers of steps; raises ValueError if such a loop's traces or per-step
    outputs are read otherwise, as they would be ragged."""
    nodes = toposort(outputs)
    batched: set[Variable] = set(replace)
    for node in nodes:
        batched.update(_batched_outputs(node, batched))
    ragged = {node for node in nodes if _steps_vary(node, batched)}
    if not ragged:
        return list(outputs)
    finals: dict[Variable, Variable] = {}
    for node in nodes:
        for read in node.outputs:
            final = _last_row_of(read, ragged)
            if final is not None:
                finals[read] = final
    kept = rebuild(outputs, finals)
    kept_nodes = toposort(kept)
    last_rows = _last_rows_after_initial(kept_nodes, kept, ragged, batched)
    for node in kept_nodes:
        if node in last_rows:
            continue
        for input_ in node.inputs:
            _check_not_ragged(input_, ragged, f"{node.op} reads it")
    for output in kept:
        _check_not_ragged(output, ragged, "it is an output")
    return list(kept)


def _batched_outputs(node: Apply, batched: set[Variable]) -> tuple[Variable, ...]:
    """The outputs of `node` that differ per example, given its `batched` inputs: of a
    loop whose examples run the same steps, those that depend on a batched input (an
    unbatched trace another loop reads as a sequence does not make that loop ragged)."""
    if reads_shape_only(node) or not any(input_ in batched for input_ in node.inputs):
        return ()
    if _rows_steps_wrote(node, batched) is False:
        return ()
    if not isinstance(node.op, Scan) or _steps_vary(node, batched):
        return node.outputs
    op = node.op
    flags = op.split_inputs(tuple(v in batched for v in node.inputs))
    after_n_steps = (*flags.initials, *flags.sequences, *flags.non_sequences)
    depends = loop_dependencies(op, differentiable=False)
    outputs = op.split_outputs(node.outputs)
    positions = [
        *zip(outputs.finals, depends.finals),
        *((trace, depends.trace(k)) for k, trace in enumerate(outputs.traces) if trace is not None),
        *zip(outputs.ys, depends.ys),
    ]
    return tuple(out for out, reads in positions if any(after_n_steps[p] for p in reads))


def _rows_steps_wrote(node: Apply, batched: set[Variable]) -> bool | None:
    """For `trace[1:]` (`scan(...)`) of a carry of a loop whose examples run the same
    steps: whether the rows the steps wrote differ per example (a batched initial value
    alone does not make them); None for any other node."""
    match node:
        case Apply(op=Subtensor(idx_list=(Slice(start=1, stop=None, step=None),)),
                   inputs=(Variable(owner=Apply(op=Scan() as op) as loop) as trace,)):
            traces = op.split_outputs(loop.outputs).traces
            if trace not in traces or _steps_vary(loop, batched):
                return None
            flags = op.split_inputs(tuple(v in batched for v in loop.inputs))
            after_n_steps = (*flags.initials, *flags.sequences, *flags.non_sequences)
            rows = loop_dependencies(op, differentiable=False).step_rows[traces.index(trace)]
            return any(after_n_steps[p] for p in rows)
    return None


def _steps_vary(node: Apply, batched: set[Variable]) -> bool:
    return isinstance(node.op, Scan) and steps_vary(node.op, tuple(v in batched for v in node.inputs))


def steps_vary(op: Scan, batched: tuple[bool, ...]) -> bool:
    """Whether the loop, given inputs with these batched flags, may run a different
    number of steps for each example: its step count is batched, or it is a while-loop
    whose stop condition depends on batched values. Its vectorized traces and per-step
    outputs are then padded, and only its final values may be read."""
    flags = op.split_inputs(batched)
    if flags.n_steps:
        return True
    after_n_steps = (*flags.initials, *flags.sequences, *flags.non_sequences)
    stop = loop_dependencies(op, differentiable=False).stop
    return any(after_n_steps[position] for position in stop)


def _last_row_of(variable: Variable, ragged: set[Apply]) -> Variable | None:
    """The final value of the carry whose trace's last row `variable` reads, in a forward
    loop of `ragged`: `trace[-1]`, or `trace[1:][-1]` (`scan(...)[-1]`) when the loop
    runs one step or more (after zero steps that read fails)."""
    match variable.owner:
        case Apply(op=Subtensor(idx_list=(-1,)), inputs=(rows,)):
            trace: Variable = rows
        case _:
            return None
    after_initial = False
    match trace.owner:
        case Apply(op=Subtensor(idx_list=(Slice(start=1, stop=None, step=None),)), inputs=(whole,)):
            trace, after_initial = whole, True
    loop = trace.owner
    if loop is None or loop not in ragged or not isinstance(loop.op, Scan) or loop.op.reverse:
        return None
    outputs = loop.op.split_outputs(loop.outputs)
    if trace not in outputs.traces:
        return None
    if after_initial:
        steps = static_value(loop.op.split_inputs(loop.inputs).n_steps)
        if steps is None or steps < 1:
            return None
    return outputs.finals[outputs.traces.index(trace)]


def _last_rows_after_initial(
    nodes: Sequence[Apply], outputs: Sequence[Variable], ragged: set[Apply], batched: set[Variable]
) -> set[Apply]:
    """The `trace[1:]` nodes only ever read at `[-1]` (`scan(...)[-1]`), on a forward
    while-loop of `ragged` whose n_steps is the same for every example. Those reads may
    stay: the vectorized loop runs until the last example stops, and the trace rows of
    an example stopped earlier repeat its final value, so the last row is each example's
    final value; and every example runs a step unless n_steps is 0, when the read raises
    IndexError for all of them, as it does for one."""
    readers: dict[Variable, list[Apply]] = {}
    for node in nodes:
        for input_ in node.inputs:
            readers.setdefault(input_, []).append(node)
    found: set[Apply] = set()
    for node in nodes:
        match node:
            case Apply(op=Subtensor(idx_list=(Slice(start=1, stop=None, step=None),)),
                       inputs=(Variable(owner=Apply(op=Scan() as op) as loop) as trace,)):
                if (
                    loop in ragged
                    and not op.reverse
                    and op.split_inputs(loop.inputs).n_steps not in batched
                    and trace in op.split_outputs(loop.outputs).traces
                    and node.out not in outputs
                    and all(_reads_last_row(reader) for reader in readers.get(node.out, []))
                ):
                    found.add(node)
    return found


def _reads_last_row(node: Apply) -> bool:
    return isinstance(node.op, Subtensor) and node.op.idx_list == (-1,)


def _check_not_ragged(variable: Variable, ragged: set[Apply], why: str) -> None:
    loop = variable.owner
    if loop is None or loop not in ragged or not isinstance(loop.op, Scan):
        return
    outputs = loop.op.split_outputs(loop.outputs)
    if variable in outputs.traces:
        what = f"the trace of carry {outputs.traces.index(variable)}"
        instead = ("read the loop's final values instead (pt.reduce, or scan(...)[-1] with a "
                   "constant n_steps >= 1)")
    elif variable in outputs.ys:
        what = f"per-step output {outputs.ys.index(variable)}"
        instead = ("a per-step output has no final value per example (its last row, also "
                   "pt.reduce's, is from the last example's last step): make it a carry "
                   "(give it an initial value) and read its final value")
    else:
        return
    raise ValueError(
        f"vectorize: {what} of {loop.op} is read ({why}), but that loop runs a different "
        "number of steps for each example (a batched n_steps, or a while-loop stopping on "
        f"batched values), so it has a different length per example; {instead}. A "
        "gradient through the loop reads its traces too: take the gradient of the vmap "
        "rather than the vmap of the gradient"
    )
