"""`with_input_shapes`: a graph rebuilt for concrete input lengths, as if its inputs had
been declared with those static shapes (what `function(..., specialize_shapes=True)`
compiles for each new set of argument shapes).

Rebuilding the outer nodes over inputs of static types is not enough: a loop's step
function is a closed inner graph whose params were typed when the loop was built, so
its body would still compute with unknown lengths (and a gradient loop's too). Each
loop's params are refined from the outer values that feed them (a sequence's rows, a
non-sequence, a carry's initial value), and its body rebuilt over them, recursively. A
carry keeps a static length only where the step computes that very length from it:
starting from the initial value's lengths, an axis the rebuilt step leaves unknown or
changes is reset to the param's declared one and the body rebuilt again, until no axis
changes (each round only forgets lengths, so this ends). `OpFromGraph` params take the
lengths of its inputs. Every other node is re-created as it is: ops infer their output
types from their inputs' types.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fgraph import Apply, Graph, Input, Op, Param, TensorType, Variable, format_shape
from fgraph.errors import ShapeError
from ops.from_graph import OpFromGraph
from ops.scan_op import Scan
from rewrite.inner import evolve_inner_graph


def with_input_shapes(graph: Graph, shapes: Sequence[tuple[int, ...]]) -> Graph:
    """`graph` over new inputs of the same names and dtypes and the static `shapes` (one
    per input), every node re-typed from them (module docstring)."""
    if len(shapes) != len(graph.inputs):
        raise ValueError(f"{len(shapes)} shapes for {len(graph.inputs)} inputs")
    inputs = []
    for variable, shape in zip(graph.inputs, shapes):
        if not variable.type.accepts_shape(shape):
            raise ShapeError(f"{variable}: expected shape {format_shape(variable.type.shape)}, "
                             f"got {format_shape(shape)}")
        name = variable.name if isinstance(variable, Input) else None
        inputs.append(Input(TensorType(variable.dtype, shape), name))
    return _retyped(graph, [v.type for v in inputs], lambda k, type_: inputs[k])


def _retyped(
    graph: Graph, types: Sequence[TensorType], make_input: Callable[[int, TensorType], Variable]
) -> Graph:
    """`graph` over `make_input(k, types[k])` for its k-th input, every node re-typed; the
    same graph when no type changes."""
    if all(t == v.type for t, v in zip(types, graph.inputs)):
        return graph
    new_inputs = [make_input(k, t) for k, t in enumerate(types)]
    memo: dict[Variable, Variable] = dict(zip(graph.inputs, new_inputs))
    for node in graph.nodes:
        inputs = tuple(memo.get(v, v) for v in node.inputs)
        if inputs == node.inputs:
            continue
        new_node = Apply(_retyped_op(node.op, [v.type for v in inputs]), inputs, node.position)
        memo.update(zip(node.outputs, new_node.outputs))
    return Graph(new_inputs, [memo.get(v, v) for v in graph.outputs], graph.dedup_nodes)


def _retyped_op(op: Op, input_types: Sequence[TensorType]) -> Op:
    """`op` with its inner graph's params refined from `input_types`, for the ops whose
    params are fed by their inputs (loops, `OpFromGraph`); other ops as they are."""
    if isinstance(op, Scan):
        return _retyped_loop(op, input_types)
    if isinstance(op, OpFromGraph):
        params = op.inner_graph.inputs
        return _with_params(op, [_meet(p.type, t) for p, t in zip(params, input_types)])
    return op


def _retyped_loop(op: Scan, input_types: Sequence[TensorType]) -> Op:
    outer = op.split_inputs(input_types)
    declared = op.params
    fed = [
        *(_meet(p.type, t) for p, t in zip(declared.carries, outer.initials)),
        *(_meet(p.type, TensorType(t.dtype, t.shape[1:]))
          for p, t in zip(declared.rows, outer.sequences)),
        *(_meet(p.type, t) for p, t in zip(declared.non_sequences, outer.non_sequences)),
    ]
    while True:
        inner = _retyped(op.inner_graph, fed, Param)
        kept = [
            TensorType(param.dtype, tuple(
                length if length == computed else declared_length
                for length, computed, declared_length
                in zip(param.shape, result.type.shape, declared.carries[k].type.shape)
            ))
            for k, (param, result) in enumerate(zip(fed, inner.outputs[: op.n_carries]))
        ]
        if kept == fed[: op.n_carries]:
            return op if inner is op.inner_graph else evolve_inner_graph(op, inner)
        fed[: op.n_carries] = kept


def _with_params(op: Op, types: Sequence[TensorType]) -> Op:
    inner = getattr(op, "inner_graph")
    retyped = _retyped(inner, types, Param)
    return op if retyped is inner else evolve_inner_graph(op, retyped)


def _meet(declared: TensorType, fed: TensorType) -> TensorType:
    """`declared` with the static lengths `fed` knows where it has none."""
    return TensorType(declared.dtype, tuple(
        want if want is not None else got for want, got in zip(declared.shape, fed.shape)
    ))
