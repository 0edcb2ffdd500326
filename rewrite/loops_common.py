"""What the loop rewrites share: building a loop's new body and op, reading who uses its
outputs, applying a whole-graph transformation (its errors name it, as the rewrite
engine's name a rule), and keeping the run-time checks of a loop when work leaves it.

A loop checks when it runs that `n_steps >= 0`, that it equals the static length, and
that no sequence is shorter than `n_steps` (`ops.scan_op.check_steps`). A rewrite that
stops a loop from reading a sequence, or replaces the loop by work outside it, must not
drop those checks: a rewrite never turns an error into a value. `rows_for_steps` gives
the first `n_steps` rows of a sequence with its check kept (or proven unnecessary), and
`covers_steps` says when a sequence is long enough by construction (the step count is
its own length, or the length of a trace of a loop over the same steps).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence

import attrs

from fgraph import Apply, Graph, Param, TensorType, Variable
from fgraph.traverse import rebuild
from ops.creation import Alloc
from ops.dimshuffle import DimShuffle
from ops.elemwise import Elemwise
from ops.matmul_op import MatMul
from ops.indexing import Slice
from ops.reduction import Reduction
from ops.reshape_ops import SpecifyShape, specify_shape
from ops.scalar_ops import Maximum, Minimum
from ops.scan_op import Scan
from ops.shape_vector import MakeVector, Shape, ShapeI, shape_i, static_value
from ops.subtensor import Subtensor
from rewrite.context import RewriteContext
from rewrite.errors import InvalidReplacementError, RewriteError, describe_node
from rewrite.index_items import SliceItem, static_int, unpack
from rewrite.lengths import length_root


def loop_op(node: Apply) -> Scan:
    op = node.op
    if not isinstance(op, Scan):
        raise TypeError(f"not a loop: {node}")
    return op


def is_read(variable: Variable, context: RewriteContext) -> bool:
    return bool(context.clients(variable)) or context.is_output(variable)


def fresh_params(values: Sequence[Variable]) -> tuple[Param, ...]:
    """Positional params typed like `values`, for a new body."""
    return tuple(Param(k, v.type) for k, v in enumerate(values))


def body_over(
    params: Sequence[Param], outputs: Sequence[Variable], mapping: Mapping[Variable, Variable]
) -> Graph:
    """A body over `params` computing `outputs` (variables of an old body) with the old
    params (or values) replaced as `mapping` says. Params of an old body are interned on
    (index, type), so every old param the outputs read must be in `mapping`."""
    return Graph(params, rebuild(outputs, mapping))


def param_reads(body: Graph) -> tuple[frozenset[int], ...]:
    """For each output of `body`, the positions of the params it depends on (computed
    once per body: several rules ask, in every sweep)."""
    found = _PARAM_READS.get(body)
    if found is None:
        reads: dict[Variable, frozenset[int]] = {
            p: frozenset([k]) for k, p in enumerate(body.inputs)
        }
        for node in body.nodes:
            union = frozenset().union(*(reads.get(v, frozenset()) for v in node.inputs))
            for output in node.outputs:
                reads[output] = union
        found = _PARAM_READS[body] = tuple(reads.get(o, frozenset()) for o in body.outputs)
    return found


_PARAM_READS: weakref.WeakKeyDictionary[Graph, tuple[frozenset[int], ...]] = (
    weakref.WeakKeyDictionary()
)


def evolved(
    op: Scan,
    body: Graph,
    n_carries: int,
    n_sequences: int,
    traced: tuple[bool, ...],
    kept_carries: Sequence[int],
) -> Scan:
    """`op` with a new body and layout; `kept_carries[i]` is the old carry that new carry
    i is, so that it keeps its trace window (dropped where it is no longer traced)."""
    windows: tuple[int, ...] = ()
    if op.windows:
        windows = tuple(op.window(k) if keep else 0 for k, keep in zip(kept_carries, traced))
    return attrs.evolve(op, inner_graph=body, n_carries=n_carries, n_sequences=n_sequences,
                        traced=traced, windows=windows)


Replacements = dict[Variable, Variable]
"""What a whole-graph loop transformation returns: variables of the graph and what
stands for them."""


def applied(
    name: str, node: Apply, transform: Callable[[], Replacements | None]
) -> Replacements | None:
    """`transform()`, a whole-graph transformation at `node`; an error it raises is
    reported naming it and the node, as the rewrite engine reports a rule's."""
    try:
        return transform()
    except Exception as error:
        raise RewriteError(
            f"{name} raised {type(error).__name__} on {describe_node(node)}: {error}",
            (name,), node,
        ) from error


def replaced(graph: Graph, found: Replacements, name: str, node: Apply) -> Graph:
    """`graph` with `found` applied; a replacement of another type is a bug of `name`."""
    for old, new in found.items():
        if not new.type.is_subtype_of(old.type):
            raise InvalidReplacementError(
                f"{name} returned an invalid replacement for {describe_node(node)}: "
                f"{old.type} replaced by {new.type}", (name,), node,
            )
    return Graph(graph.inputs, rebuild(graph.outputs, found), graph.dedup_nodes)


def replaced_outputs(node: Apply, found: Mapping[Variable, Variable]) -> tuple[Variable, ...]:
    """What a rule returns: each output of `node` replaced as `found` says, or kept."""
    return tuple(found.get(output, output) for output in node.outputs)


# -- the step-count checks -------------------------------------------------------------------
def steps_non_negative(steps: Variable) -> bool:
    """Whether `steps` cannot be negative: a constant >= 0, a length, or the minimum or
    maximum of such."""
    value = static_steps(steps)
    if value is not None:
        return value >= 0
    match steps.owner:
        case Apply(op=ShapeI()):
            return True
        case Apply(op=Subtensor(idx_list=(int(),)), inputs=(Variable(owner=Apply(op=Shape())),)):
            return True
        case Apply(op=Elemwise(scalar_op=Minimum()), inputs=inputs):
            return all(steps_non_negative(v) for v in inputs)
        case Apply(op=Elemwise(scalar_op=Maximum()), inputs=inputs):
            return any(steps_non_negative(v) for v in inputs)
    return False


def _length_of(steps: Variable) -> set[tuple[Variable, int]]:
    """The lengths `steps` is at most, read off its graph, each as the variable and axis
    it is read off (`length_root`): `x.shape[k]` (or `ShapeI(k)(x)`) and either side of
    a minimum of such."""
    found: set[tuple[Variable, int]] = set()
    pending = [steps]
    while pending:
        value = pending.pop()
        match value.owner:
            case Apply(op=ShapeI(axis=axis), inputs=(x,)):
                found.add(length_root(x, axis))
            case Apply(op=Subtensor(idx_list=(0,)), inputs=(Variable(owner=Apply(op=Shape(), inputs=(x,))),)):
                found.add(length_root(x, 0))
            case Apply(op=Elemwise(scalar_op=Minimum()), inputs=inputs):
                pending.extend(inputs)
    return found


def _extra_rows(value: Variable, steps: Variable) -> int | None:
    """k such that `value` has at least `steps + k` rows by construction, or None: the
    rows of a view, shuffle, elementwise result, batched product or reduction (over other
    axes) of a value known to have them, of the trace of a for-loop over `steps`, or of a
    value whose length `steps` is read from, or of an allocation of `steps` rows."""
    shift = 0
    outer: int | None = None  # the shift outside a `[:steps]`: the rows are then min(., steps)
    limits = _length_of(steps)
    given = static_steps(steps)
    while True:
        base: int | None = None
        node = value.owner
        # A length `specify_shape` asserts holds only where its check runs: the check a
        # rewrite put there to stand for a loop's is no reason to drop it.
        asserted = node is not None and isinstance(node.op, SpecifyShape)
        if value.ndim and length_root(value, 0) in limits:
            base = 0
        elif given is not None and value.type.shape[0] is not None and not asserted:
            base = value.type.shape[0] - given
        elif node is not None and isinstance(node.op, Scan):
            base = _trace_extra_rows(node, value, steps)
            if base is None:
                return None
        elif _allocated_rows(value) == steps:
            base = 0
        if base is not None:
            return base + shift if outer is None else min(base + shift, 0) + outer
        match node:
            case Apply(op=Subtensor(idx_list=(Slice(), *_)) as op, inputs=(x, *bounds)):
                first = unpack(op.idx_list, bounds)[0]
                assert isinstance(first, SliceItem)
                moved = _slice_shift(first, steps)
                if moved is None:
                    return None
                removed, cut = moved
                if cut and outer is None:
                    outer, shift = shift, 0
                elif cut and shift:
                    return None
                shift += removed
                value = x
            case Apply(op=DimShuffle(order=(0, *_)), inputs=(x,)):
                value = x
            case Apply(op=SpecifyShape(), inputs=(x, _)):
                value = x
            case Apply(op=Reduction(axes=axes), inputs=(x,)) if 0 not in axes:
                value = x
            case Apply(op=Elemwise() | MatMul(), inputs=inputs) if value.ndim >= (
                3 if isinstance(node.op, MatMul) else 1
            ):
                # Unknown lengths never stretch (along a product's batch axes neither): an
                # operand of the same rank whose first axis is not a static 1 has the
                # result's length.
                same = [v for v in inputs if v.ndim == value.ndim and v.type.shape[0] != 1]
                if not same:
                    return None
                value = same[0]
            case _:
                return None


def _allocated_rows(value: Variable) -> Variable | None:
    """The first length an `Alloc` is given, where `value` is one."""
    match value.owner:
        case Apply(op=Alloc(), inputs=(_, Variable(owner=Apply(op=MakeVector(), inputs=(rows, *_))))):
            return rows
    return None


def _trace_extra_rows(node: Apply, value: Variable, steps: Variable) -> int | None:
    """Rows beyond `steps` of a trace of a for-loop over `steps`: 0 for a per-step
    output's, 1 for a whole carry trace (its initial value's row)."""
    op = loop_op(node)
    if op.while_loop or op.split_inputs(node.inputs).n_steps != steps:
        return None
    outputs = op.split_outputs(node.outputs)
    if value in outputs.ys:
        return 0
    for carry, trace in enumerate(outputs.traces):
        if trace == value:
            return None if op.window(carry) else 1
    return None


def _slice_shift(first: SliceItem, steps: Variable) -> tuple[int, bool] | None:
    """How a first-axis slice changes a length: the rows it removes (a negative shift)
    and whether it cuts at `steps`; None for slices this reasoning does not cover."""
    start, stop, step = (static_int(part) for part in first.parts)
    if step is not None and step != 1:
        return None
    shift = 0
    if isinstance(start, int) and start >= 0:
        shift -= start
    elif start is not None:
        return None
    if isinstance(stop, int) and stop < 0:
        return shift + stop, False
    if stop is None:
        return shift, False
    if isinstance(stop, Variable) and stop == steps and shift == 0:
        return 0, True
    return None


def covers_steps(sequence: Variable, steps: Variable) -> bool:
    """Whether `sequence` has at least `steps` rows by construction (so the loop's check
    of its length cannot fail)."""
    extra = _extra_rows(sequence, steps)
    return extra is not None and extra >= 0


def static_steps(steps: Variable) -> int | None:
    """The value of a step count known when the graph is built: a constant, a static
    length (`x.shape[0]` of an `x` of static length), or the minimum of such."""
    value = static_value(steps)
    if value is not None:
        return value
    match steps.owner:
        case Apply(op=Subtensor(idx_list=(int(axis),)), inputs=(Variable(owner=Apply(op=Shape(), inputs=(x,))),)):
            return x.type.shape[axis] if -x.ndim <= axis < x.ndim else None
        case Apply(op=Elemwise(scalar_op=Minimum()), inputs=inputs):
            values = [static_steps(v) for v in inputs]
            return None if None in values else min(v for v in values if v is not None)
    return None


def rows_for_steps(sequence: Variable, steps: Variable, length: int | None) -> Variable | None:
    """The first `steps` rows of `sequence`, as a loop over `steps` (of static `length`,
    if not None) reads them, failing when the loop would: `sequence` itself when it has
    exactly that many rows, a slice when it has at least that many by construction, a
    slice checked by `specify_shape` when the step count is static; None when the
    checks cannot be kept."""
    if length is not None:
        if static_steps(steps) != length:
            return None  # the loop checks a symbolic step count against its length
        rows = sequence.type.shape[0]
        if rows == length:
            return sequence
        if rows is not None and rows < length:
            return None  # the loop always fails: left as it is
        return specify_shape(sequence[:length], [length, *([None] * (sequence.ndim - 1))])
    if covers_steps(sequence, steps) and steps_non_negative(steps):
        return sequence[:steps]
    return None


def sequences_cover(sequences: Sequence[Variable], steps: Variable, length: int | None) -> bool:
    """Whether a loop over `steps` (of static `length`, if not None) cannot fail its
    check of the sequences' lengths: each has enough rows by construction."""
    if length is not None and static_steps(steps) != length:
        return False
    return all(covers_steps(s, steps) for s in sequences)


def loop_checks_hold(inputs: Sequence[Variable], op: Scan) -> bool:
    """Whether none of a loop's run-time step checks can fail: dropping the loop then
    drops no error."""
    given = op.split_inputs(inputs)
    steps = given.n_steps
    return steps_non_negative(steps) and sequences_cover(given.sequences, steps, op.length)


def carried_value(value: Variable, carry: TensorType, initial: Variable) -> Variable:
    """A step's new value of a carry, checked to keep the carry's shape (the loop raises
    when a step changes it) and typed as the carry (static lengths the step's own type
    may not know)."""
    if value.ndim == 0 or (value.type.is_fully_static and value.type.shape == carry.shape):
        return value
    lengths: list[int | Variable] = [
        static if static is not None else shape_i(initial, axis)
        for axis, static in enumerate(carry.shape)
    ]
    return specify_shape(value, lengths)

