"""Loop rewrites: lean loops by construction, one small pure transformation at a time.

`scan_pass` is a `Graph -> Graph` pass. Each transformation below looks at one `Scan`
node (or one reader of it) with the graph's exact clients and returns replacements for
some of the graph's variables, or None; the pass applies the first that fires, rebuilds
the graph and starts over, until none fires. Graphs hold few loops, and a graph without
one costs a single walk over its nodes.

- `static_length`: a constant step count becomes the op's static length.
- `final_instead_of_last_row`: in a loop of static length n, the trace row the last step
  wrote (`trace[n]`, `trace[0]` for a reversed loop) is the carry's final value and the
  initial value's row is the initial value.
- `remove_unused`: outputs nobody reads, carries whose final value and trace are unread
  and that no kept value depends on (groups feeding only each other included), traces
  nobody reads (the carry keeps two slots, not n), and sequences and non-sequences the
  kept body no longer reads.
- `merge_duplicates`: per-step outputs computed as one variable are one output, and
  inputs given the same outer variable are read through one param.
- `inline_constants`: constant non-sequences, and sequences of identical constant rows,
  become constants of the body (so the body's own rewrites can fold them).
- `push_out_invariants`: body work that reads only non-sequences and constants runs
  once, before the loop, and enters it as a non-sequence.
- `vectorize_map`: a loop with no carries whose per-step outputs all lift to whole
  sequences (elementwise ops, shuffles, products) is that computation: the loop
  disappears.
- `shorten_to_read_prefix`: a forward loop whose traces are only read in a prefix of
  static length runs only the steps that write it.
- `accumulate_outside`: carries that only sum a per-step term are summed after the loop
  (a sum of outer products is one matrix product).
- `push_out_sequence_work`: body work reading sequences but no carry runs once over the
  whole sequences (elementwise ops, shuffles, matrix products become batched products).
- `keep_last_rows`: a carry's trace read only in its last k rows (k <= WINDOW_MAX) keeps a
  window of k slots, not n + 1 rows.
- `unroll`: a loop of at most `UNROLL_MAX_STEPS` constant steps whose body has at most
  `UNROLL_MAX_NODES` nodes in all copies becomes straight-line code, which the rest of the
  pipeline simplifies and fuses (the seed's second derivative becomes one expression).
- `merge_traced_variants`: loops with equal inputs whose ops differ only in which carries
  they trace (the pullback asks for the traced twin of the loop it differentiates)
  become one loop tracing the union.
- `merge_independent_loops`: loops over the same step count, direction and static length,
  neither reading the other, become one loop.

Bodies are rewritten by `rewrite.inner.InnerGraphPass` like any inner graph; the pipeline
runs this pass again afterwards, since bodies only get simpler.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs
import numpy as np

from fgraph import Apply, Constant, Graph, Param, Variable, toposort
from fgraph.traverse import rebuild
from ops.dimshuffle import DimShuffle, expand_dims, transpose
from ops.elemwise import Elemwise
from ops.matmul import MatMul, matmul
from ops.reduction import sum as reduce_sum
from ops.scalar import Add
from ops.join import stack
from ops.scan_op import Scan
from ops.shape_vector import static_value
from ops.indexing import Slice
from ops.subtensor import Subtensor

UNROLL_MAX_STEPS = 8
"""Loops of more constant steps stay loops: unrolling pays when the copies simplify
together (a short recurrence and its derivatives fold into one fused expression), not for
long loops, whose straight-line code would only cost compile time."""
WINDOW_MAX = 8
"""Largest trace window `keep_last_rows` makes (reads further back keep the whole trace)."""
UNROLL_MAX_NODES = 256
"""Largest unrolled body (steps x body nodes): numba's compile time grows steeply with the
size of a function."""
MAX_ROUNDS = 1000

Replacements = dict[Variable, Variable]
Transform = Callable[[Apply, Graph], Replacements | None]


def scan_pass(graph: Graph) -> Graph:
    """`graph` with the loop rewrites applied until none fires."""
    for _ in range(MAX_ROUNDS):
        changed = _one_rewrite(graph)
        if changed is None:
            return graph
        graph = changed
    raise RuntimeError(f"scan_pass: still rewriting after {MAX_ROUNDS} rounds")


def _one_rewrite(graph: Graph) -> Graph | None:
    loops = [node for node in graph.nodes if isinstance(node.op, Scan)]
    if not loops:
        return None
    for node in graph.nodes:
        if isinstance(node.op, Scan):
            transforms = NODE_TRANSFORMS
        elif isinstance(node.op, Subtensor):
            transforms = READER_TRANSFORMS
        else:
            continue
        for transform in transforms:
            found = transform(node, graph)
            if found:
                return _replaced(graph, found)
    for graph_transform in GRAPH_TRANSFORMS:
        found = graph_transform(loops, graph)
        if found:
            return _replaced(graph, found)
    return None


def _replaced(graph: Graph, replacements: Mapping[Variable, Variable]) -> Graph:
    for old, new in replacements.items():
        if not new.type.is_subtype_of(old.type):
            raise TypeError(f"scan_pass: replacing {old.type} by {new.type}")
    return Graph(graph.inputs, rebuild(graph.outputs, replacements), graph.dedup_nodes)


# -- the pieces of a loop node ---------------------------------------------------------------
@attrs.frozen
class _Parts:
    """A Scan node's outer inputs by kind."""

    op: Scan
    n_steps: Variable
    initials: tuple[Variable, ...]
    sequences: tuple[Variable, ...]
    non_sequences: tuple[Variable, ...]


def _parts(node: Apply) -> _Parts:
    op = node.op
    if not isinstance(op, Scan):
        raise TypeError(f"not a loop: {node}")
    c, s = op.n_carries, op.n_sequences
    inputs = node.inputs
    return _Parts(op, inputs[0], inputs[1 : 1 + c], inputs[1 + c : 1 + c + s], inputs[1 + c + s :])


def _is_read(variable: Variable, graph: Graph) -> bool:
    return bool(graph.clients.get(variable)) or variable in graph.outputs


def _rebuilt_body(
    op: Scan, new_params: Sequence[Variable | None], outputs: Sequence[Variable]
) -> Graph:
    """A body over fresh positional params: `new_params[i]` is what old param i becomes
    (a param of the new body, or a constant), and `outputs` are old-body variables."""
    mapping = {
        old: new for old, new in zip(op.inner_graph.inputs, new_params) if new is not None
    }
    kept = [p for p in new_params if isinstance(p, Param)]
    return Graph(kept, rebuild(outputs, mapping))


def _params(types: Sequence[Variable]) -> list[Param]:
    return [Param(k, v.type) for k, v in enumerate(types)]


def _depends(outputs: Sequence[Variable], params: Sequence[Variable]) -> list[set[int]]:
    """For each output, the indices of the params it reads."""
    index = {p: k for k, p in enumerate(params)}
    reads: dict[Variable, frozenset[int]] = {p: frozenset([k]) for p, k in index.items()}
    for node in toposort(outputs):
        found = frozenset().union(*(reads.get(v, frozenset()) for v in node.inputs))
        for output in node.outputs:
            reads[output] = found
    return [set(reads.get(o, frozenset())) for o in outputs]


def _new_loop(
    parts: _Parts,
    body: Graph,
    n_carries: int,
    n_sequences: int,
    traced: tuple[bool, ...],
    outer: Sequence[Variable],
    kept_carries: Sequence[int] | None = None,
) -> tuple[Scan, tuple[Variable, ...]]:
    """The loop with a new body and outer inputs; `kept_carries` says which old carries
    the new ones are (all, in order, by default), to keep their trace windows."""
    old = parts.op
    windows = old.windows
    if windows and kept_carries is not None:
        windows = tuple(old.window(k) for k in kept_carries)
    if windows:
        windows = tuple(w if keep else 0 for w, keep in zip(windows, traced))
    op = attrs.evolve(old, inner_graph=body, n_carries=n_carries, n_sequences=n_sequences,
                      traced=traced, windows=windows)
    return op, op.apply(parts.n_steps, *outer)


# -- node transforms ------------------------------------------------------------------------
def static_length(node: Apply, graph: Graph) -> Replacements | None:
    """A constant step count gives the loop (and its traces) a static length."""
    op = node.op
    if not isinstance(op, Scan) or op.while_loop or op.length is not None:
        return None
    steps = static_value(node.inputs[0])
    if steps is None or steps < 0:
        return None
    new = attrs.evolve(op, length=steps).apply(*node.inputs)
    return dict(zip(node.outputs, new))


def final_instead_of_last_row(node: Apply, graph: Graph) -> Replacements | None:
    """The row a loop wrote last into a carry's trace is the carry's final value, and the
    initial value's row is the initial value (for a loop of static length)."""
    match node:
        case Apply(op=Subtensor(idx_list=(int(row),)), inputs=(Variable(owner=Apply() as loop),)):
            op = loop.op
            if not isinstance(op, Scan) or op.length is None:
                return None
            output = node.inputs[0].index
            traced = op.traced_carries
            first_trace = op.n_carries
            if not first_trace <= output < first_trace + len(traced):
                return None
            carry = traced[output - first_trace]
            rows = op.length + 1 if not op.window(carry) else min(op.length + 1, op.window(carry))
            if not -rows <= row < rows:
                return None
            last, initial = (0, rows - 1) if op.reverse else (rows - 1, 0)
            if rows != op.length + 1:
                initial = -1  # a window may not hold the initial value
            if row % rows == last:
                return {node.out: loop.outputs[carry]}
            if row % rows == initial:
                return {node.out: loop.inputs[1 + carry]}
    return None


def remove_unused(node: Apply, graph: Graph) -> Replacements | None:
    """Drop what nobody reads: see the module docstring."""
    parts = _parts(node)
    op = parts.op
    nc, ny = op.n_carries, op.n_ys
    inner = op.inner_graph
    final_read = [_is_read(node.outputs[k], graph) for k in range(nc)]
    trace_read = {k: _is_read(node.outputs[op.output_index("trace", k)], graph)
                  for k in op.traced_carries}
    ys_read = [_is_read(node.outputs[op.output_index("ys", y)], graph) for y in range(ny)]
    reads = _depends(inner.outputs, inner.inputs)
    needed = {k for k in range(nc) if final_read[k] or trace_read.get(k, False)}
    roots = [reads[nc + y] for y in range(ny) if ys_read[y]]
    if op.while_loop:
        roots.append(reads[-1])
    for found in roots:
        needed |= {p for p in found if p < nc}
    pending = list(needed)
    while pending:
        k = pending.pop()
        for p in reads[k]:
            if p < nc and p not in needed:
                needed.add(p)
                pending.append(p)
    kept_carries = sorted(needed)
    kept_ys = [y for y in range(ny) if ys_read[y]]
    kept_outputs = [k for k in kept_carries] + [nc + y for y in kept_ys]
    if op.while_loop:
        kept_outputs.append(len(inner.outputs) - 1)
    used_params = set().union(*(reads[o] for o in kept_outputs)) | set(kept_carries)
    first_sequence = nc
    first_non_sequence = nc + op.n_sequences
    kept_sequences = [s for s in range(op.n_sequences) if first_sequence + s in used_params]
    kept_non_sequences = [
        j for j in range(op.n_non_sequences) if first_non_sequence + j in used_params
    ]
    traced = tuple(op.traced[k] and trace_read[k] for k in kept_carries)
    unchanged = (
        len(kept_carries) == nc
        and len(kept_ys) == ny
        and len(kept_sequences) == op.n_sequences
        and len(kept_non_sequences) == op.n_non_sequences
        and traced == op.traced
    )
    if unchanged:
        return None
    old_params = (
        [k for k in kept_carries]
        + [first_sequence + s for s in kept_sequences]
        + [first_non_sequence + j for j in kept_non_sequences]
    )
    params = _params([inner.inputs[p] for p in old_params])
    new_params: list[Variable | None] = [None] * len(inner.inputs)
    for new, old in zip(params, old_params):
        new_params[old] = new
    body = _rebuilt_body(op, new_params, [inner.outputs[o] for o in kept_outputs])
    new_op, outputs = _new_loop(
        parts,
        body,
        len(kept_carries),
        len(kept_sequences),
        traced,
        [
            *(parts.initials[k] for k in kept_carries),
            *(parts.sequences[s] for s in kept_sequences),
            *(parts.non_sequences[j] for j in kept_non_sequences),
        ],
        kept_carries,
    )
    replacements: Replacements = {}
    for number, k in enumerate(kept_carries):
        replacements[node.outputs[k]] = outputs[number]
        if traced[number]:
            replacements[node.outputs[op.output_index("trace", k)]] = outputs[
                new_op.output_index("trace", number)
            ]
    for number, y in enumerate(kept_ys):
        replacements[node.outputs[op.output_index("ys", y)]] = outputs[
            new_op.output_index("ys", number)
        ]
    if op.while_loop:
        replacements[node.outputs[op.output_index("executed", 0)]] = outputs[
            new_op.output_index("executed", 0)
        ]
    return replacements


def _uniform_row(sequence: Variable) -> Constant | None:
    """The row of a constant sequence whose rows are all equal."""
    if not isinstance(sequence, Constant) or sequence.ndim == 0 or sequence.data.shape[0] == 0:
        return None
    rows = sequence.data
    if not all(np.array_equal(rows[0], row, equal_nan=rows.dtype.kind in "fc") for row in rows):
        return None
    return Constant(np.array(rows[0], copy=True))


def merge_duplicates(node: Apply, graph: Graph) -> Replacements | None:
    """Per-step outputs the body computes as the same variable are one output; sequences
    or non-sequences given the same outer variable are read through one param (the
    others are then unused, and `remove_unused` drops them)."""
    parts = _parts(node)
    op = parts.op
    inner = op.inner_graph
    nc, ns = op.n_carries, op.n_sequences
    ys = inner.outputs[nc : nc + op.n_ys]
    for later in range(op.n_ys):
        earlier = next(y for y in range(later + 1) if ys[y] == ys[later])
        output = node.outputs[op.output_index("ys", later)]
        if earlier != later and _is_read(output, graph):
            return {output: node.outputs[op.output_index("ys", earlier)]}
    outer = (*parts.sequences, *parts.non_sequences)
    params = inner.inputs[nc:]
    first_use: dict[tuple[bool, Variable], Variable] = {}
    same: dict[Variable, Variable] = {}
    for position, (value, param) in enumerate(zip(outer, params)):
        group = position < ns
        key = (group, value)
        if key in first_use:
            same[param] = first_use[key]
        else:
            first_use[key] = param
    read = {v for n in inner.nodes for v in n.inputs} | set(inner.outputs)
    same = {param: kept for param, kept in same.items() if param in read}
    if not same:
        return None
    body = Graph(inner.inputs, rebuild(inner.outputs, same))
    _, outputs = _new_loop(parts, body, nc, ns, op.traced, node.inputs[1:])
    return dict(zip(node.outputs, outputs))


def inline_constants(node: Apply, graph: Graph) -> Replacements | None:
    """Constant non-sequences, and constant sequences of equal rows, become constants of
    the body."""
    parts = _parts(node)
    op = parts.op
    nc, ns = op.n_carries, op.n_sequences
    constant_rows = {s: _uniform_row(parts.sequences[s]) for s in range(ns)}
    inlined_sequences = [s for s in range(ns) if constant_rows[s] is not None]
    inlined_non_sequences = [
        j for j, v in enumerate(parts.non_sequences) if isinstance(v, Constant)
    ]
    if not inlined_sequences and not inlined_non_sequences:
        return None
    inner = op.inner_graph
    new_params: list[Variable | None] = [None] * len(inner.inputs)
    kept_inputs: list[int] = []
    for position, param in enumerate(inner.inputs):
        if nc <= position < nc + ns and position - nc in inlined_sequences:
            new_params[position] = constant_rows[position - nc]
        elif position >= nc + ns and position - nc - ns in inlined_non_sequences:
            new_params[position] = parts.non_sequences[position - nc - ns]
        else:
            kept_inputs.append(position)
    for number, position in enumerate(kept_inputs):
        new_params[position] = Param(number, inner.inputs[position].type)
    body = _rebuilt_body(op, new_params, inner.outputs)
    _, outputs = _new_loop(
        parts,
        body,
        nc,
        ns - len(inlined_sequences),
        op.traced,
        [
            *parts.initials,
            *(parts.sequences[s] for s in range(ns) if s not in inlined_sequences),
            *(v for j, v in enumerate(parts.non_sequences) if j not in inlined_non_sequences),
        ],
    )
    return dict(zip(node.outputs, outputs))


def push_out_invariants(node: Apply, graph: Graph) -> Replacements | None:
    """Body work that reads only non-sequences and constants is computed once before the
    loop; the values the rest of the body reads from it become new non-sequences."""
    parts = _parts(node)
    op = parts.op
    inner = op.inner_graph
    first_non_sequence = op.n_carries + op.n_sequences
    varying: set[Variable] = set(inner.inputs[:first_non_sequence])
    outer_dependent: set[Variable] = set(inner.inputs[first_non_sequence:])
    nodes = inner.nodes
    for inner_node in nodes:
        if any(v in varying for v in inner_node.inputs):
            varying.update(inner_node.outputs)
        elif any(v in outer_dependent for v in inner_node.inputs):
            outer_dependent.update(inner_node.outputs)
    boundary: list[Variable] = []
    seen: set[Variable] = set()

    def hoist(variable: Variable) -> None:
        # Work on constants alone stays: the body's own constant folding removes it.
        if variable.owner is not None and variable in outer_dependent and variable not in seen:
            seen.add(variable)
            boundary.append(variable)

    for inner_node in nodes:
        if any(o in varying for o in inner_node.outputs):
            for v in inner_node.inputs:
                hoist(v)
    for output in inner.outputs:
        hoist(output)
    if not boundary:
        return None
    outer_of = dict(zip(inner.inputs[first_non_sequence:], parts.non_sequences))
    hoisted = rebuild(boundary, outer_of)
    count = len(inner.inputs)
    new_params = _params(list(inner.inputs) + boundary)
    mapping: dict[Variable, Variable] = dict(zip(inner.inputs, new_params))
    mapping.update(zip(boundary, new_params[count:]))
    body = Graph(new_params, rebuild(inner.outputs, mapping))
    _, outputs = _new_loop(
        parts,
        body,
        op.n_carries,
        op.n_sequences,
        op.traced,
        [*parts.initials, *parts.sequences, *parts.non_sequences, *hoisted],
    )
    return dict(zip(node.outputs, outputs))


def _lift(node: Apply, operands: Sequence[Variable], lifted: Sequence[bool]) -> Variable | None:
    """`node`'s output computed for every step at once, given its operands over whole
    sequences (`lifted[i]`: operand i has the extra leading axis) or as they are (a
    value every step shares), or None for an op that does not lift."""
    op = node.op
    if len(node.outputs) != 1:
        return None
    if isinstance(op, Elemwise):
        return op(*(v if up else expand_dims(v, 0) for v, up in zip(operands, lifted)))
    if isinstance(op, DimShuffle) and lifted[0]:
        order = (0, *(None if axis is None else axis + 1 for axis in op.order))
        return DimShuffle(order)(operands[0])
    if isinstance(op, MatMul):
        return op(*(v if up else expand_dims(v, 0) for v, up in zip(operands, lifted)))
    return None


def push_out_sequence_work(node: Apply, graph: Graph) -> Replacements | None:
    """Body work that reads sequences (and values every step shares) but no carry runs
    once over the whole sequences, before the loop, as elementwise ops, shuffles and
    batched matrix products; the loop reads its rows as new sequences."""
    parts = _parts(node)
    op = parts.op
    inner = op.inner_graph
    nc, ns = op.n_carries, op.n_sequences
    if ns == 0 or _all_scalars(inner):
        return None
    whole, carried = _over_whole_sequences(parts)
    params = set(inner.inputs)
    readers = [v for n in inner.nodes if any(o in carried for o in n.outputs) for v in n.inputs]
    boundary = list(dict.fromkeys(
        v for v in (*readers, *inner.outputs)
        if v in whole and v not in params and not _view_of_row(v, params)
    ))
    if not boundary:
        return None
    count = len(inner.inputs)
    new_params = _params(
        [*inner.inputs[: nc + ns], *(_rows_of(whole[v]) for v in boundary),
         *inner.inputs[nc + ns :]]
    )
    mapping: dict[Variable, Variable] = {}
    for k, param in enumerate(inner.inputs):
        mapping[param] = new_params[k if k < nc + ns else k + len(boundary)]
    mapping.update(zip(boundary, new_params[nc + ns : nc + ns + len(boundary)]))
    body = Graph(new_params, rebuild(inner.outputs, mapping))
    assert len(body.inputs) == count + len(boundary)
    _, outputs = _new_loop(
        parts,
        body,
        nc,
        ns + len(boundary),
        op.traced,
        [*parts.initials, *parts.sequences, *(whole[v] for v in boundary), *parts.non_sequences],
    )
    return dict(zip(node.outputs, outputs))


@attrs.frozen
class _Accumulator:
    """A carry that only adds a per-step term to itself: `acc' = acc + term`. The term
    is an outer product of two vectors (kept as its two factors) or any other value."""

    carry: int
    term: Variable
    factors: tuple[Variable, Variable] | None


def _accumulator(op: Scan, k: int) -> _Accumulator | None:
    inner = op.inner_graph
    param, update = inner.inputs[k], inner.outputs[k]
    readers = inner.clients.get(param, ())
    match update.owner:
        case Apply(op=Elemwise(scalar_op=Add()), inputs=(first, second)) if len(readers) == 1:
            if readers[0][0] is not update.owner or param in inner.outputs[: k] + inner.outputs[k + 1 :]:
                return None
            term = second if first is param else first if second is param else None
            if term is None or term.type.shape != param.type.shape:
                return None
            match term.owner:
                case Apply(op=MatMul(), inputs=(left, right)):
                    column, row = _shuffled_vector(left, (0, None)), _shuffled_vector(right, (None, 0))
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


def accumulate_outside(node: Apply, graph: Graph) -> Replacements | None:
    """Carries that only sum a per-step term become per-step outputs summed after the
    loop; a sum of outer products `column_t @ row_t` (how every gradient of a matrix
    product accumulates) becomes one matrix product of the stacked factors. Only where
    the traces' row shapes are known (an empty trace's unknown lengths are 0, which would
    not add to the initial value)."""
    parts = _parts(node)
    op = parts.op
    if op.while_loop:
        return None
    inner = op.inner_graph
    nc, ns = op.n_carries, op.n_sequences
    found = [a for k in range(nc) if not op.traced[k] and (a := _accumulator(op, k)) is not None]
    sequence_of = dict(zip(inner.inputs[nc : nc + ns], parts.sequences))

    def traced_value(value: Variable) -> bool:
        return value in sequence_of or value.type.is_fully_static or (op.length or 0) >= 1

    found = [
        a for a in found
        if all(traced_value(v) for v in (a.factors or (a.term,)))
    ]
    if not found:
        return None
    removed = {a.carry for a in found}
    kept = [k for k in range(nc) if k not in removed]
    new_ys: list[Variable] = []
    for accumulator in found:
        for value in accumulator.factors or (accumulator.term,):
            if value not in sequence_of and value not in new_ys:
                new_ys.append(value)
    old_ys = list(inner.outputs[nc : nc + op.n_ys])
    body_outputs = [*(inner.outputs[k] for k in kept), *old_ys, *new_ys]
    new_params = _params([*(inner.inputs[k] for k in kept), *inner.inputs[nc:]])
    mapping = dict(zip([*(inner.inputs[k] for k in kept), *inner.inputs[nc:]], new_params))
    body = Graph(new_params, rebuild(body_outputs, mapping))
    new_op, outputs = _new_loop(
        parts,
        body,
        len(kept),
        ns,
        tuple(op.traced[k] for k in kept),
        [*(parts.initials[k] for k in kept), *parts.sequences, *parts.non_sequences],
        kept,
    )
    steps = parts.n_steps

    def stacked(value: Variable) -> Variable:
        if value in sequence_of:
            sequence = sequence_of[value]
            covered = op.length is not None and sequence.type.shape[0] == op.length
            return sequence if covered else sequence[:steps]
        return outputs[new_op.output_index("ys", op.n_ys + new_ys.index(value))]

    replacements: Replacements = {}
    for number, k in enumerate(kept):
        replacements[node.outputs[k]] = outputs[number]
        if op.traced[k]:
            replacements[node.outputs[op.output_index("trace", k)]] = outputs[
                new_op.output_index("trace", number)
            ]
    for y in range(op.n_ys):
        replacements[node.outputs[op.output_index("ys", y)]] = outputs[new_op.output_index("ys", y)]
    for accumulator in found:
        initial = parts.initials[accumulator.carry]
        if accumulator.factors is None:
            total = reduce_sum(stacked(accumulator.term), axis=0)
        else:  # sum over t of outer(column_t, row_t): one product of the stacked vectors
            column, row = (stacked(v) for v in accumulator.factors)
            total = matmul(transpose(column), row)
        replacements[node.outputs[accumulator.carry]] = initial + total
    return {old: new for old, new in replacements.items() if _is_read(old, graph)}


def _all_scalars(body: Graph) -> bool:
    """A body of 0-d values only runs as plain scalar code: its elementwise work costs the
    same inside the loop as outside, where it would cost a pass over memory more."""
    values = [*body.inputs, *(o for node in body.nodes for o in node.outputs)]
    return all(value.ndim == 0 for value in values)


def _view_of_row(variable: Variable, params: set[Variable]) -> bool:
    """A shuffle of a row the loop reads anyway: nothing to gain from a new sequence."""
    node = variable.owner
    return node is not None and isinstance(node.op, DimShuffle) and node.inputs[0] in params


def _shared(variable: Variable, inner: Graph, parts: _Parts) -> Variable:
    """The outer value of a body value every step shares: a non-sequence or a constant."""
    if isinstance(variable, Param):
        first = parts.op.n_carries + parts.op.n_sequences
        return parts.non_sequences[inner.inputs.index(variable) - first]
    return variable


def _rows_of(variable: Variable) -> Variable:
    """A stand-in typed like one row of `variable` (for the new param's type)."""
    from fgraph import Input, TensorType

    return Input(TensorType(variable.dtype, variable.type.shape[1:]))


def vectorize_map(node: Apply, graph: Graph) -> Replacements | None:
    """A loop with no carries whose every per-step output lifts to whole sequences (see
    `push_out_sequence_work`) is that computation, done once: the loop disappears."""
    parts = _parts(node)
    op = parts.op
    if op.n_carries or op.while_loop or op.n_sequences == 0:
        return None
    if not all(t.is_fully_static for t in op.ys_types):  # an empty trace's row shape
        return None
    whole, _ = _over_whole_sequences(parts)
    ys = op.inner_graph.outputs[: op.n_ys]
    if not all(y in whole for y in ys):
        return None
    return {node.outputs[op.output_index("ys", k)]: whole[y] for k, y in enumerate(ys)}


def _over_whole_sequences(parts: _Parts) -> tuple[dict[Variable, Variable], set[Variable]]:
    """Body values computed for every step at once: the sequence params as the (first
    n_steps rows of the) sequences, and, in body order, every value that reads them and
    no carry and whose op lifts (`_lift`). Also the body values that read a carry."""
    op = parts.op
    inner = op.inner_graph
    nc, ns = op.n_carries, op.n_sequences
    whole: dict[Variable, Variable] = {}
    for param, sequence in zip(inner.inputs[nc : nc + ns], parts.sequences):
        covered = op.length is not None and sequence.type.shape[0] == op.length
        whole[param] = sequence if covered else sequence[: parts.n_steps]
    carried: set[Variable] = set(inner.inputs[:nc])
    for inner_node in inner.nodes:
        reads = inner_node.inputs
        if any(v in carried for v in reads):
            carried.update(inner_node.outputs)
            continue
        if not any(v in whole for v in reads) or any(
            v.owner is not None and v not in whole for v in reads
        ):
            continue
        operands = [whole[v] if v in whole else _shared(v, inner, parts) for v in reads]
        lifted = _lift(inner_node, operands, [v in whole for v in reads])
        if lifted is not None:
            whole[inner_node.outputs[0]] = lifted
    return whole, carried


def shorten_to_read_prefix(node: Apply, graph: Graph) -> Replacements | None:
    """A forward loop of static length whose outputs are only read as rows of a prefix of
    its traces (`trace[2]`, `trace[:5]`) runs only the steps that write that prefix."""
    op = _scan_op(node)
    if op.reverse or op.while_loop or op.length is None or any(op.windows):
        return None
    needed = 0
    for number, output in enumerate(node.outputs):
        if output in graph.outputs:
            return None
        readers = graph.clients.get(output, ())
        if readers and number < op.n_carries:
            return None  # a final value needs every step
        # A carry's trace has the initial value as its row 0: r rows need r - 1 steps.
        boundary_row = 1 if number >= op.n_carries and number < op.n_carries + len(
            op.traced_carries
        ) else 0
        for reader, _ in readers:
            rows = _prefix_read(reader)
            if rows is None:
                return None
            needed = max(needed, rows - boundary_row)
    if needed >= op.length:
        return None
    steps = Constant(np.array(needed, dtype="int64"))
    shorter = attrs.evolve(op, length=needed).apply(steps, *node.inputs[1:])
    # The readers are re-created over the shorter traces: they read the same rows, so
    # they keep their types (the traces themselves do not).
    replacements: Replacements = {}
    for output, new in zip(node.outputs, shorter):
        for reader, _ in graph.clients.get(output, ()):
            replacements[reader.out] = reader.op(new)
    return replacements


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


def keep_last_rows(node: Apply, graph: Graph) -> Replacements | None:
    """A carry's trace read only in rows near its end (`trace[-2]`, `trace[n - 1]`) keeps
    just those last rows: a window of k slots instead of n + 1 rows (forward for-loops,
    k <= WINDOW_MAX). The readers read the same rows of the window."""
    op = _scan_op(node)
    if op.reverse or op.while_loop:
        return None
    windows = [op.window(k) for k in range(op.n_carries)]
    planned: dict[int, int] = {}
    for k in op.traced_carries:
        output = node.outputs[op.output_index("trace", k)]
        readers = graph.clients.get(output, ())
        if windows[k] or not readers or output in graph.outputs:
            continue
        rows = None if op.length is None else op.length + 1
        need = 0
        for reader, _ in _row_readers(readers, graph):
            row = _single_row(reader)
            if row is None or (rows is None and row >= 0) or (
                rows is not None and not -rows <= row < rows
            ):
                break
            need = max(need, -row if rows is None else rows - row % rows)
        else:
            if 0 < need <= WINDOW_MAX and (rows is None or need < rows):
                planned[k] = need
    if not planned:
        return None
    for k, need in planned.items():
        windows[k] = need
    new_op = attrs.evolve(op, windows=tuple(windows))
    outputs = new_op.apply(*node.inputs)
    replacements: Replacements = {}
    for old, new in zip(node.outputs, outputs):
        if not _is_read(old, graph):
            continue
        carry = op.traced_carries[old.index - op.n_carries] if (
            op.n_carries <= old.index < op.n_carries + len(op.traced_carries)
        ) else None
        if carry not in planned:
            replacements[old] = new
            continue
        assert carry is not None
        for reader, _ in _row_readers(graph.clients.get(old, ()), graph):
            row = _single_row(reader)
            assert row is not None
            if op.length is not None:  # the same row, counted from the window's start
                row = row % (op.length + 1) - (op.length + 1 - planned[carry])
            replacements[reader.out] = Subtensor((row,))(new)
    return replacements


def _row_readers(
    readers: Sequence[tuple[Apply, int]], graph: Graph
) -> list[tuple[Apply, int]]:
    """The readers of a trace, looking through `trace[1:]` (the rows `scan` returns) to
    what reads it, when only negative single rows do: `trace[1:][-j]` is `trace[-j]`."""
    found: list[tuple[Apply, int]] = []
    for reader, slot in readers:
        view = reader.op if isinstance(reader.op, Subtensor) else None
        if view is not None and view.idx_list == (Slice(1, None),) and len(reader.inputs) == 1:
            inner = graph.clients.get(reader.out, ())
            rows = [_single_row(r) for r, _ in inner]
            if inner and reader.out not in graph.outputs and all(
                row is not None and row < 0 for row in rows
            ):
                found.extend(inner)
                continue
        found.append((reader, slot))
    return found


def _single_row(reader: Apply) -> int | None:
    """The row a reader of a trace takes, when it is `trace[i]` with a static int."""
    if isinstance(reader.op, Subtensor) and len(reader.inputs) == 1:
        match reader.op.idx_list:
            case (int(row),):
                return row
    return None


def unroll(node: Apply, graph: Graph) -> Replacements | None:
    """A short loop of constant length as straight-line code (see UNROLL_MAX_*)."""
    parts = _parts(node)
    op = parts.op
    steps = op.length
    if op.while_loop or steps is None or not 1 <= steps <= UNROLL_MAX_STEPS:
        return None
    if steps * max(1, _size(op.inner_graph)) > UNROLL_MAX_NODES:
        return None
    inner = op.inner_graph
    nc = op.n_carries
    carries = list(parts.initials)
    written: dict[int, list[Variable]] = {}
    order = range(steps - 1, -1, -1) if op.reverse else range(steps)
    for step in order:
        rows = [sequence[step] for sequence in parts.sequences]
        values = rebuild(inner.outputs, dict(zip(inner.inputs, (*carries, *rows,
                                                                 *parts.non_sequences))))
        carries = list(values[:nc])
        written[step] = list(values)
    by_step = [written[step] for step in range(steps)]
    replacements: Replacements = {}
    for k in range(nc):
        replacements[node.outputs[k]] = carries[k]
    for k in op.traced_carries:
        rows = [v[k] for v in by_step]
        boundaries = [*rows, parts.initials[k]] if op.reverse else [parts.initials[k], *rows]
        window = op.window(k)
        replacements[node.outputs[op.output_index("trace", k)]] = stack(
            boundaries[-window:] if window else boundaries
        )
    for y in range(op.n_ys):
        replacements[node.outputs[op.output_index("ys", y)]] = stack(
            [v[nc + y] for v in by_step]
        )
    return {old: new for old, new in replacements.items() if _is_read(old, graph)}


def _size(graph: Graph) -> int:
    """Nodes of a body, counting those of nested bodies."""
    total = 0
    pending = [graph]
    while pending:
        current = pending.pop()
        total += len(current.nodes)
        pending.extend(
            n.op.inner_graph for n in current.nodes if isinstance(n.op, Scan)
        )
    return total


# -- graph transforms -----------------------------------------------------------------------
def merge_traced_variants(loops: Sequence[Apply], graph: Graph) -> Replacements | None:
    """Loops with the same inputs whose ops differ only in `traced` become one."""
    groups: dict[tuple[Scan, tuple[Variable, ...]], list[Apply]] = {}
    for node in loops:
        op = node.op
        if not isinstance(op, Scan):
            continue
        key = (attrs.evolve(op, traced=(False,) * op.n_carries, windows=()), node.inputs)
        groups.setdefault(key, []).append(node)
    for (untraced, inputs), members in groups.items():
        if len(members) < 2:
            continue
        traced = tuple(
            any(_scan_op(m).traced[k] for m in members) for k in range(untraced.n_carries)
        )
        merged_op = attrs.evolve(untraced, traced=traced)
        merged = merged_op.apply(*inputs)
        replacements: Replacements = {}
        for member in members:
            op = _scan_op(member)
            for k in range(op.n_carries):
                replacements[member.outputs[k]] = merged[k]
            for k in op.traced_carries:
                trace = merged[merged_op.output_index("trace", k)]
                window = op.window(k)  # a window is the last rows of the whole trace
                replacements[member.outputs[op.output_index("trace", k)]] = (
                    trace[-window:] if window else trace
                )
            for y in range(op.n_ys):
                replacements[member.outputs[op.output_index("ys", y)]] = merged[
                    merged_op.output_index("ys", y)
                ]
        return replacements
    return None


def merge_independent_loops(loops: Sequence[Apply], graph: Graph) -> Replacements | None:
    """Two for-loops over the same step count, direction, static length and gradient
    truncation, neither reading what the other computes, become one loop running both
    bodies (one pass over the steps, one set of sequence reads)."""
    for number, first in enumerate(loops):
        for second in loops[number + 1 :]:
            a, b = _scan_op(first), _scan_op(second)
            same_schedule = (
                first.inputs[0] == second.inputs[0]
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
    a, b = _scan_op(first), _scan_op(second)
    pa, pb = _parts(first), _parts(second)
    ia, ib = a.inner_graph, b.inner_graph
    groups = (
        (ia.inputs[: a.n_carries], ib.inputs[: b.n_carries]),
        (ia.inputs[a.n_carries : a.n_carries + a.n_sequences],
         ib.inputs[b.n_carries : b.n_carries + b.n_sequences]),
        (ia.inputs[a.n_carries + a.n_sequences :], ib.inputs[b.n_carries + b.n_sequences :]),
    )
    # Params are interned on (index, type): both bodies' Param(0) may be one object, so
    # each body's params are mapped by position, never looked up by identity.
    ordered: list[Variable] = []
    targets_a: list[int] = []
    targets_b: list[int] = []
    for from_a, from_b in groups:
        targets_a += range(len(ordered), len(ordered) + len(from_a))
        targets_b += range(len(ordered) + len(from_a), len(ordered) + len(from_a) + len(from_b))
        ordered += [*from_a, *from_b]
    params = _params(ordered)
    outputs_a = rebuild(ia.outputs, {v: params[k] for v, k in zip(ia.inputs, targets_a)})
    outputs_b = rebuild(ib.outputs, {v: params[k] for v, k in zip(ib.inputs, targets_b)})
    body = Graph(params, [
        *outputs_a[: a.n_carries], *outputs_b[: b.n_carries],
        *outputs_a[a.n_carries :], *outputs_b[b.n_carries :],
    ])
    windows: tuple[int, ...] = ()
    if a.windows or b.windows:
        windows = tuple(a.window(k) for k in range(a.n_carries)) + tuple(
            b.window(k) for k in range(b.n_carries)
        )
    op = attrs.evolve(a, inner_graph=body, n_carries=a.n_carries + b.n_carries, windows=windows,
                      n_sequences=a.n_sequences + b.n_sequences, traced=a.traced + b.traced)
    merged = op.apply(
        pa.n_steps, *pa.initials, *pb.initials, *pa.sequences, *pb.sequences,
        *pa.non_sequences, *pb.non_sequences,
    )
    replacements: Replacements = {}
    for node, old_op, carry_offset, ys_offset in (
        (first, a, 0, 0), (second, b, a.n_carries, a.n_ys)
    ):
        for k in range(old_op.n_carries):
            replacements[node.outputs[k]] = merged[carry_offset + k]
        for k in old_op.traced_carries:
            replacements[node.outputs[old_op.output_index("trace", k)]] = merged[
                op.output_index("trace", carry_offset + k)
            ]
        for y in range(old_op.n_ys):
            replacements[node.outputs[old_op.output_index("ys", y)]] = merged[
                op.output_index("ys", ys_offset + y)
            ]
    return replacements


def _scan_op(node: Apply) -> Scan:
    op = node.op
    if not isinstance(op, Scan):
        raise TypeError(f"not a loop: {node}")
    return op


NODE_TRANSFORMS: tuple[Transform, ...] = (
    static_length,
    remove_unused,
    merge_duplicates,
    inline_constants,
    push_out_invariants,
    vectorize_map,
    accumulate_outside,
    push_out_sequence_work,
    shorten_to_read_prefix,
    keep_last_rows,
    unroll,
)
READER_TRANSFORMS: tuple[Transform, ...] = (final_instead_of_last_row,)
GRAPH_TRANSFORMS: tuple[Callable[[Sequence[Apply], Graph], Replacements | None], ...] = (
    merge_traced_variants,
    merge_independent_loops,
)
