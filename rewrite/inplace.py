"""The inplace pass: the last pass, choosing which ops may overwrite an input's buffer.

An op may destroy an input only when nothing can notice: its buffer class (the input
and every value sharing memory with it, as `fgraph.aliasing` finds them) holds no graph
input, constant or graph output, the input is not (a view of) a read-only value such as
a broadcast, no node later in the execution order reads the class, and no other input
of the same node reads it through a different view. Execution order is the
graph's toposort, which the backend follows, so "later" is well defined.

Cheap buffer creators (`Alloc`, `AllocEmpty`) read by several would-be destroyers are
first duplicated, one copy per extra destroyer, at distinct node positions; the result
is therefore a position-aware graph (`dedup_nodes=False`), where those copies stay
distinct. Existing inplace flags are cleared first, so the pass decides from scratch
and two runs on equal graphs give equal graphs.
"""

from __future__ import annotations

from fgraph import Apply, Graph, Op, Variable
from fgraph.aliasing import Aliasing
from ops.creation import Alloc, AllocEmpty
from ops.elemwise import ElementwiseOp

DestroyMap = tuple[tuple[int, int], ...]


def inplace_pass(graph: Graph) -> Graph:
    """`graph` with every safe inplace decision made (a position-aware graph)."""
    plain = _without_inplace(graph)
    widened = _duplicate_buffer_creators(plain)
    decided = _decide(widened)
    return Graph(decided.inputs, decided.outputs, dedup_nodes=False)


def candidates(node: Apply) -> DestroyMap:
    """(output, input) pairs `node`'s op could compute in place, before any safety check:
    what the op declares (`Op.inplace_candidates`)."""
    return node.op.inplace_candidates(tuple(v.type for v in node.inputs), node.output_types)


def with_destroy_map(op: Op, pairs: DestroyMap) -> Op:
    """`op` marked to compute `pairs` in place (an empty map clears the marks)."""
    return op.with_destroy_map(pairs)


def _rebuild_with(graph: Graph, choose: dict[Apply, Op], dedup: bool) -> Graph:
    """`graph` with the ops of the nodes in `choose` replaced, structure and positions kept."""
    memo: dict[Variable, Variable] = {}
    for node in graph.nodes:
        inputs = tuple(memo.get(input_, input_) for input_ in node.inputs)
        op = choose.get(node, node.op)
        if op is node.op and inputs == node.inputs:
            continue
        for old, new in zip(node.outputs, Apply(op, inputs, node.position).outputs):
            memo[old] = new
    outputs = tuple(memo.get(output, output) for output in graph.outputs)
    return Graph(graph.inputs, outputs, dedup_nodes=dedup)


def _without_inplace(graph: Graph) -> Graph:
    stripped = {node: with_destroy_map(node.op, ()) for node in graph.nodes if node.op.destroy_map}
    return _rebuild_with(graph, stripped, dedup=True) if stripped else graph


def _duplicate_buffer_creators(graph: Graph) -> Graph:
    """Give each would-be destroyer of a shared Alloc/AllocEmpty its own copy (all but the
    last reader, which can destroy the original), at positions no other node uses."""
    clients = graph.clients
    replacements: dict[tuple[Apply, int], Variable] = {}
    next_position = 1
    for node in graph.nodes:
        if not isinstance(node.op, (Alloc, AllocEmpty)):
            continue
        readers = clients.get(node.out, ())
        destroyers = [
            (reader, slot)
            for reader, slot in readers
            if any(input_ == slot for _, input_ in candidates(reader))
        ]
        for reader, slot in destroyers[:-1] if len(readers) == len(destroyers) else destroyers:
            copy = Apply(node.op, node.inputs, next_position)
            next_position += 1
            replacements[(reader, slot)] = copy.out
    if not replacements:
        return graph
    memo: dict[Variable, Variable] = {}
    for node in graph.nodes:
        inputs = tuple(
            replacements.get((node, slot), memo.get(input_, input_))
            for slot, input_ in enumerate(node.inputs)
        )
        if inputs != node.inputs:
            for old, new in zip(node.outputs, Apply(node.op, inputs, node.position).outputs):
                memo[old] = new
    outputs = tuple(memo.get(output, output) for output in graph.outputs)
    return Graph(graph.inputs, outputs, dedup_nodes=False)


def _decide(graph: Graph) -> Graph:
    """Walk the execution order, tracking buffer classes (`Aliasing`) and their last
    readers."""
    memory = Aliasing.of(graph)
    protected = {memory.buffer(v) for v in graph.outputs}
    last_reader: dict[Variable, int] = {}
    for number, node in enumerate(graph.nodes):
        for input_ in node.inputs:
            last_reader[memory.buffer(input_)] = number
    chosen: dict[Apply, Op] = {}
    for number, node in enumerate(graph.nodes):
        safe: list[tuple[int, int]] = []
        for output, slot in candidates(node):
            target = node.inputs[slot]
            buffer = memory.buffer(target)
            if not memory.is_writable(target) or buffer in protected:
                continue
            if last_reader[buffer] != number:
                continue
            # Elementwise loops read every input element before writing it, so the very same
            # variable may appear twice; a different view of the buffer may not (nor, for
            # an indexed update, the same variable as the written value).
            elementwise = isinstance(node.op, ElementwiseOp)
            aliased_elsewhere = any(
                memory.buffer(other) == buffer and not (elementwise and other == target)
                for k, other in enumerate(node.inputs)
                if k != slot
            )
            if aliased_elsewhere or any(slot == taken for _, taken in safe):
                continue
            safe.append((output, slot))
        if safe:
            chosen[node] = with_destroy_map(node.op, tuple(safe))
    return _rebuild_with(graph, chosen, dedup=graph.dedup_nodes) if chosen else graph
