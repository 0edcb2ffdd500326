"""Where a result's length comes from: the input of its node (and that input's axis)
whose length it is by construction, and, following those, the variable that first had
it (`length_root`).

An elementwise result has the lengths of the inputs it does not broadcast, a transpose
its input's permuted, a matrix product its operands' rows and columns, a solve its
right-hand side's, a factor or an inverse its matrix's; an array allocated, broadcast
or reshaped to a shape has the lengths that shape is read off, and `arange(n)` has
length n where n is a length. A for-loop's per-step outputs have its step count's rows
and a carry's final value and trace its initial value's lengths (the loop checks both
every step), `trace[1:]` and `trace[:-1]` of a whole trace (n + 1 rows) the step
count's, and `x[:k]` x's rows where k is x's length: a gradient's reads of a forward
loop's traces, sliced to the steps, are then known to match the other per-step values,
and their checks go (the 2-d Kalman filter's gradient compared five pairs of lengths,
each a raise costing numba 40 ms to compile). The shape rules read lengths
off these inputs (`rewrite.shapes.length_of_input`), and the rules that ask whether a
length is some variable's (`rewrite.index_items.is_length_of`, the loop rules' step
counts) compare roots, so they recognize a length however far it was read off.

Each source is exact wherever the result is computed: an op whose inputs must agree in
a length checks that at run time (as the shape rules that read `s` off `reshape(x, s)`
do, a length read off an input no longer waits for that check).
"""

from __future__ import annotations

from collections.abc import Sequence

from fgraph import Apply, Variable
from ops.broadcast import BroadcastTo
from ops.creation import Alloc, ARange
from ops.dimshuffle import DimShuffle
from ops.elemwise import ElementwiseOp
from ops.factorizations import Cholesky
from ops.indexing import FULL_SLICE, IndexUpdate, NewAxis, Slice, Symbolic
from ops.matmul_op import MatMul
from ops.matrix_op import MatrixOp
from ops.reduction import Cumulative, Reduction
from ops.reshape_ops import Reshape, SpecifyShape
from ops.scan_op import Scan
from ops.shape_vector import MakeVector, Shape, ShapeI, static_value
from ops.solves import CholeskySolve, Inv, Solve, SolveTriangular
from ops.sort_ops import Sort
from ops.subtensor import Subtensor

SAME_CORE_AS_INPUT: dict[type[MatrixOp], int] = {
    Cholesky: 0, Inv: 0, Solve: 1, SolveTriangular: 1, CholeskySolve: 1
}
"""Linear-algebra ops whose one output has the core shape of an input (by position): a
factor or an inverse that of its matrix, a solution that of its right-hand side."""


def length_source(x: Variable, axis: int) -> tuple[Variable, int] | None:
    """An input of `x`'s node and its axis whose length is `x`'s length along `axis`,
    or None where no input has it. A broadcast axis is read off the first input whose
    static length there is not 1 (the op checks that the others agree)."""
    node = x.owner
    if node is None:
        return None
    match node.op:
        case ElementwiseOp():
            return _broadcast_source(node.inputs, axis)
        case DimShuffle(order=order):
            kept = order[axis]
            return None if kept is None else (node.inputs[0], kept)
        case Reduction(axes=axes):
            kept_axes = [k for k in range(node.inputs[0].ndim) if k not in axes]
            return node.inputs[0], kept_axes[axis]
        case Cumulative() | Sort() | SpecifyShape() | IndexUpdate():
            return node.inputs[0], axis
        case Subtensor(idx_list=entries):
            return (_whole_axis_source(node.inputs[0], entries, axis)
                    or (_sliced_source(node, entries) if axis == 0 else None))
        case Scan(while_loop=False):
            return _loop_source(node, node.outputs.index(x), axis)
        case MatMul():
            return _core_source(node.inputs, (0, 1), axis, x.ndim)
        case Alloc() | BroadcastTo() | Reshape():
            return _entry_source(node.inputs[1], axis)
        case ARange():
            start, stop, step = node.inputs
            if static_value(start) == 0 and static_value(step) == 1:
                return _read_length(stop)
        case MatrixOp() if type(node.op) in SAME_CORE_AS_INPUT:
            source = SAME_CORE_AS_INPUT[type(node.op)]
            return _core_source(node.inputs, (source, source), axis, x.ndim)
    return None


Length = tuple[Variable, int]
"""A variable and one of its axes."""


def length_root(x: Variable, axis: int, memo: dict[Length, Length] | None = None) -> Length:
    """The variable and axis `x`'s length along `axis` is read off, following
    `length_source` as far as it goes (`(x, axis)` itself when it has no source). A
    caller asking for many lengths of one graph passes a `memo`, which keeps the walks
    linear in the graph."""
    memo = {} if memo is None else memo
    walked: list[Length] = []
    found: Length = (x, axis)
    while found not in memo and (source := length_source(*found)) is not None:
        walked.append(found)
        found = source
    root = memo.get(found, found)
    for length in (*walked, found):
        memo[length] = root
    return root


def _broadcast_source(inputs: Sequence[Variable], axis: int) -> tuple[Variable, int] | None:
    for candidate in inputs:
        if candidate.type.shape[axis] != 1:
            return candidate, axis
    return None  # every input has length 1 there: so has the result, statically


def _core_source(
    inputs: Sequence[Variable], sources: tuple[int, int], axis: int, rank: int
) -> tuple[Variable, int] | None:
    """Where a stacked matrix op's result of `rank` gets the length of `axis`: a batch
    axis from the inputs broadcast together (their batch axes come first, as many as
    the result's), a row from input `sources[0]`'s rows, a column from input
    `sources[1]`'s columns."""
    if axis < rank - 2:
        return _broadcast_source(inputs, axis)
    source = inputs[sources[axis - rank + 2]]
    return source, source.ndim - rank + axis


def _entry_source(vector: Variable, k: int) -> tuple[Variable, int] | None:
    """The variable and axis whose length entry k of a shape vector reads."""
    match vector.owner:
        case Apply(op=Shape(), inputs=(source,)):
            return source, k
        case Apply(op=MakeVector(), inputs=entries):
            return _read_length(entries[k])
    return None


def count_root(count: Variable, memo: dict[Length, Length] | None = None) -> Length | None:
    """The root of the length the scalar `count` is (a `ShapeI`, read off as far as it
    goes: `length_root`), or None when it is no length."""
    read = _read_length(count)
    return None if read is None else length_root(*read, memo)


def _read_length(length: Variable) -> tuple[Variable, int] | None:
    """The variable and axis a scalar is the length of (`ShapeI`), if it is one."""
    match length.owner:
        case Apply(op=ShapeI(axis=axis), inputs=(source,)):
            return source, axis
    return None


def _loop_source(node: Apply, output: int, axis: int) -> tuple[Variable, int] | None:
    """A for-loop's outputs: a per-step output's rows are its step count, a final carry
    has its initial value's lengths and a carry's trace has them after its rows (a
    carry keeps its shape: the loop checks it every step)."""
    assert isinstance(node.op, Scan)
    inputs = node.op.split_inputs(node.inputs)
    outputs = node.op.split_outputs(range(len(node.outputs)))
    if output in outputs.ys:
        return _read_length(inputs.n_steps) if axis == 0 else None
    if output in outputs.finals:
        return inputs.initials[output], axis
    carry = outputs.traces.index(output)
    return (inputs.initials[carry], axis - 1) if axis > 0 else None


def _sliced_source(node: Apply, entries: Sequence[object]) -> tuple[Variable, int] | None:
    """The rows of `x[:k]` where k is x's length (read off a variable of equal length),
    and of `trace[:-1]` or `trace[1:]` of a for-loop's whole carry trace (n + 1 rows):
    the loop's step count."""
    source = node.inputs[0]
    match entries[0] if entries else None:
        case Slice(start=None, stop=Symbolic(), step=None):
            return (source, 0) if count_root(node.inputs[1]) == length_root(source, 0) else None
        case Slice(start=None, stop=-1, step=None) | Slice(start=1, stop=None, step=None):
            match source.owner:
                case Apply(op=Scan(while_loop=False) as loop) as scan:
                    traces = loop.split_outputs(range(len(scan.outputs))).traces
                    position = scan.outputs.index(source)
                    if position in traces and loop.window(traces.index(position)) == 0:
                        return _read_length(loop.split_inputs(scan.inputs).n_steps)
    return None


def _whole_axis_source(
    source: Variable, entries: Sequence[object], axis: int
) -> tuple[Variable, int] | None:
    """The axis of `source` that a basic index keeps whole as its result's `axis` (axes
    after the index's entries are kept whole); None for a sliced or new axis."""
    source_axis = 0
    result_axis = 0
    for entry in entries:
        if isinstance(entry, NewAxis):
            if result_axis == axis:
                return None
            result_axis += 1
            continue
        if isinstance(entry, Slice):
            if result_axis == axis:
                return (source, source_axis) if entry == FULL_SLICE else None
            result_axis += 1
        source_axis += 1
    return source, source_axis + axis - result_axis
