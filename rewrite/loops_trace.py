"""How many steps a loop runs and how many rows of its traces it keeps.

`pt.scan` returns whole traces, but readers often want one row (`ys[-1]`), a prefix
(`ys[:5]`) or the last few rows; a trace of n + 1 rows costs n + 1 rows of memory, and
steps nobody reads cost their work.

Two rules (node rules of `LOOP_RULES`):

- `static_length`: a constant step count becomes the op's static length (which gives
  the traces a static length).
- `final_instead_of_last_row`: in a loop of static length, reading the row a loop wrote
  last into a carry's trace is reading the carry's final value, and the initial value's
  row is the initial value.

Two transformations that rewrite the readers of a loop's traces, not the loop's own
outputs (a shorter trace has another type than the one it replaces), so they are not
node rules but functions `(loop node, graph) -> replacements` that `trim_traces` applies
with the graph's exact readers:

- `shorten_to_read_prefix`: a forward loop whose traces are only read in a prefix of
  static length runs only the steps that write it.
- `keep_last_rows`: a carry's trace read only in its last k rows (k <= WINDOW_MAX) keeps
  a window of k slots (a ring buffer), not n + 1 rows.

Each keeps the errors of the reads it rewrites: a row out of range still raises, and a
shorter loop still checks the sequences' lengths for the steps it no longer runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
import numpy as np

from fgraph import Apply, Constant, Graph, Variable
from ops.indexing import Slice
from ops.loop_layout import LoopInputs
from ops.scan_op import Scan
from ops.shape_vector import static_value
from ops.subtensor import Subtensor
from rewrite.errors import RewriteLimitError
from rewrite.loops_common import (
    Replacements,
    applied,
    covers_steps,
    loop_checks_hold,
    loop_op,
    replaced,
    rows_for_steps,
    static_steps,
)
from rewrite.rules import rule

WINDOW_MAX = 8
"""Largest trace window `keep_last_rows` makes (reads further back keep the whole trace)."""
MAX_ROUNDS = 1000

TraceTransform = Callable[[Apply, Graph], Replacements | None]


@rule(Scan)
def static_length(node: Apply) -> Sequence[Variable] | None:
    """A constant step count gives the loop (and its traces) a static length."""
    op = loop_op(node)
    if op.while_loop or op.length is not None:
        return None
    steps = static_value(op.split_inputs(node.inputs).n_steps)
    if steps is None or steps < 0:
        return None
    return attrs.evolve(op, length=steps).apply(*node.inputs)


@rule(Subtensor)
def final_instead_of_last_row(node: Apply) -> Sequence[Variable] | None:
    """The row a loop of static length wrote last into a carry's trace is the carry's
    final value, and the initial value's row is the initial value (when the loop's step
    checks cannot fail: the loop is then no longer run for it)."""
    match node:
        case Apply(op=Subtensor(idx_list=(int(row),)), inputs=(Variable(owner=Apply() as loop) as trace,)):
            if not isinstance(loop.op, Scan) or loop.op.length is None:
                return None
            op = loop.op
            outputs = op.split_outputs(loop.outputs)
            if trace not in outputs.traces:
                return None
            carry = outputs.traces.index(trace)
            rows = op.trace_rows(carry)
            assert rows is not None
            if not -rows <= row < rows:
                return None
            last, initial = (0, rows - 1) if op.reverse else (rows - 1, 0)
            if row % rows == last:
                return (outputs.finals[carry],)
            whole = not op.window(carry)  # a window may not hold the initial value
            if whole and row % rows == initial and loop_checks_hold(loop.inputs, op):
                return (op.split_inputs(loop.inputs).initials[carry],)
    return None


# -- transformations of a trace's readers ------------------------------------------------------
def trim_traces(graph: Graph, transforms: Sequence[TraceTransform] | None = None) -> Graph:
    """`graph` with `transforms` (by default `shorten_to_read_prefix` and
    `keep_last_rows`) applied to its loops until none applies (one loop at a time: each
    reads the graph's exact readers)."""
    for _ in range(MAX_ROUNDS):
        changed = _apply_first(graph, TRACE_TRANSFORMS if transforms is None else transforms)
        if changed is None:
            return graph
        graph = changed
    raise RewriteLimitError(f"trim_traces: still rewriting after {MAX_ROUNDS} rounds",
                            ("trim_traces",))


def _apply_first(graph: Graph, transforms: Sequence[TraceTransform]) -> Graph | None:
    for node in graph.nodes:
        if not isinstance(node.op, Scan):
            continue
        for transform in transforms:
            name = transform.__name__
            found = applied(name, node, lambda: transform(node, graph))
            if found:
                return replaced(graph, found, name, node)
    return None


def _readers(variable: Variable, graph: Graph) -> tuple[tuple[Apply, int], ...]:
    return graph.clients.get(variable, ())


def shorten_to_read_prefix(node: Apply, graph: Graph) -> Replacements | None:
    """A forward for-loop of static length whose outputs are only read as rows of a
    prefix of its traces (`trace[2]`, `trace[:5]`) runs only the steps that write that
    prefix. Its sequences keep being checked for all the steps of the original loop."""
    op = loop_op(node)
    if op.reverse or op.while_loop or op.length is None or any(op.windows):
        return None
    given = op.split_inputs(node.inputs)
    if static_steps(given.n_steps) != op.length:
        return None  # the loop checks a symbolic n_steps against its length
    outputs = op.split_outputs(node.outputs)
    if any(_readers(v, graph) or v in graph.outputs for v in outputs.finals):
        return None  # a final value needs every step
    needed = 0
    boundary_traces = {v for v in outputs.traces if v is not None}
    for output in (*boundary_traces, *outputs.ys):
        if output in graph.outputs:
            return None
        # A carry's trace has the initial value as its row 0: r rows need r - 1 steps.
        offset = 1 if output in boundary_traces else 0
        for reader, _ in _readers(output, graph):
            rows = _prefix_read(reader)
            if rows is None:
                return None
            needed = max(needed, rows - offset)
    if needed >= op.length:
        return None
    sequences: list[Variable] = []
    for sequence in given.sequences:
        # The shorter loop checks only the rows it reads: the others are checked here.
        checked = sequence if covers_steps(sequence, given.n_steps) else rows_for_steps(
            sequence, given.n_steps, op.length
        )
        if checked is None:
            return None
        sequences.append(checked)
    steps: Variable = Constant(np.array(needed, dtype="int64"))
    inputs = LoopInputs(steps, given.initials, tuple(sequences), given.non_sequences)
    shorter = attrs.evolve(op, length=needed).apply(*inputs.joined())
    # The readers are re-created over the shorter traces: they read the same rows, so
    # they keep their types (the traces themselves do not).
    found: Replacements = {}
    for output, new in zip(node.outputs, shorter):
        for reader, _ in _readers(output, graph):
            found[reader.out] = reader.op(new)
    return found


def _prefix_read(reader: Apply) -> int | None:
    """How many leading rows a read of a trace needs: an index or a forward slice with
    static non-negative bounds on the first axis; None for any other read."""
    if not isinstance(reader.op, Subtensor) or len(reader.inputs) != 1 or not reader.op.idx_list:
        return None
    first = reader.op.idx_list[0]
    if isinstance(first, int):
        return first + 1 if first >= 0 else None
    if isinstance(first, Slice):
        start, stop, step = first.start, first.stop, first.step
        forward = (start is None or (isinstance(start, int) and start >= 0)) and (
            step is None or (isinstance(step, int) and step > 0)
        )
        if forward and isinstance(stop, int) and stop >= 0:
            return stop
    return None


@attrs.frozen
class _RowRead:
    """A read of one row of a carry's trace: `reader` reads row `row` of the trace, or,
    when `after_initial`, row `row` of `trace[1:]` (the rows `pt.scan` returns)."""

    reader: Apply
    row: int
    after_initial: bool


def keep_last_rows(node: Apply, graph: Graph) -> Replacements | None:
    """A carry's trace read only in rows near its end (`trace[-2]`, `trace[n - 1]`,
    `trace[1:][-1]`) keeps just those last rows: a window of k slots instead of n + 1
    rows (forward for-loops, k <= WINDOW_MAX). The readers read the same rows of the
    window, and fail where they failed: `trace[1:][-j]` needs j + 1 slots, so that
    after fewer than j steps it still reads past the start."""
    op = loop_op(node)
    if op.reverse or op.while_loop:
        return None
    outputs = op.split_outputs(node.outputs)
    planned: dict[int, tuple[int, list[_RowRead]]] = {}
    for k, trace in enumerate(outputs.traces):
        if trace is None or op.window(k) or trace in graph.outputs:
            continue
        reads = _row_reads(trace, graph)
        if not reads:
            continue
        needs = [_slots_needed(read, op.trace_rows(k)) for read in reads]
        if any(need is None for need in needs):
            continue
        window = max(need for need in needs if need is not None)
        rows = op.trace_rows(k)
        if 0 < window <= WINDOW_MAX and (rows is None or window < rows):
            planned[k] = (window, reads)
    if not planned:
        return None
    windows = tuple(planned[k][0] if k in planned else op.window(k) for k in range(op.n_carries))
    new_op = attrs.evolve(op, windows=windows)
    new_outputs = new_op.apply(*node.inputs)
    new = new_op.split_outputs(new_outputs)
    found: Replacements = dict(zip(node.outputs, new_outputs))
    for k, (window, reads) in planned.items():
        trace, windowed = outputs.traces[k], new.traces[k]
        assert trace is not None and windowed is not None
        del found[trace]  # of another type: its readers are replaced instead
        for read in reads:
            found[read.reader.out] = _read_window(read, windowed, window, op.trace_rows(k))
    return found


def _row_reads(trace: Variable, graph: Graph) -> list[_RowRead] | None:
    """The reads of a trace, if all read one static row, directly or through
    `trace[1:]` (which nothing else may read); None otherwise."""
    found: list[_RowRead] = []
    for reader, _ in _readers(trace, graph):
        row = _single_row(reader)
        if row is not None:
            found.append(_RowRead(reader, row, False))
            continue
        if not _is_after_initial(reader) or reader.out in graph.outputs:
            return None
        for inner, _ in _readers(reader.out, graph):
            row = _single_row(inner)
            if row is None:
                return None
            found.append(_RowRead(inner, row, True))
    return found


def _is_after_initial(reader: Apply) -> bool:
    return (
        isinstance(reader.op, Subtensor)
        and reader.op.idx_list == (Slice(1, None),)
        and len(reader.inputs) == 1
    )


def _single_row(reader: Apply) -> int | None:
    """The row a reader of a trace takes, when it is `trace[i]` with a static int."""
    if isinstance(reader.op, Subtensor) and len(reader.inputs) == 1:
        match reader.op.idx_list:
            case (int(row),):
                return row
    return None


def _slots_needed(read: _RowRead, rows: int | None) -> int | None:
    """How many last rows of the trace a read needs to give the same row, or the same
    error (None: it needs them all). `rows`: the trace's static row count, if known."""
    if rows is None:  # only rows counted from the end can be found in a window
        if read.row >= 0:
            return None
        return -read.row + 1 if read.after_initial else -read.row
    if read.after_initial:
        if not -(rows - 1) <= read.row < rows - 1:
            return None  # out of range: left to fail as it does
        return rows - (read.row % (rows - 1) + 1)
    if not -rows <= read.row < rows:
        return None
    return rows - read.row % rows


def _read_window(read: _RowRead, windowed: Variable, window: int, rows: int | None) -> Variable:
    """The reader's row, read from the window of the last `window` rows."""
    if rows is None:  # counted from the end: the same index, on the window
        source = windowed[1:] if read.after_initial else windowed
        return Subtensor((read.row,))(source)
    position = read.row % (rows - 1) + 1 if read.after_initial else read.row % rows
    return Subtensor((position - (rows - window),))(windowed)


TRACE_TRANSFORMS: tuple[TraceTransform, ...] = (shorten_to_read_prefix, keep_last_rows)
"""The transformations `trim_traces` applies, in order."""
