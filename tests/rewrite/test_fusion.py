"""Elementwise fusion: same-shape elementwise groups become one `Fused` node, values are
preserved, contracting the groups never makes a cycle, and the pass is deterministic and
idempotent."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

import ops as pt
from fgraph import Apply, Constant, Graph, Input, Param, Variable, check_graph, evaluate
from ops.dimshuffle import DimShuffle
from ops.elemwise import Elemwise, ElementwiseOp
from ops.fused import Fused
from ops.reduction import Sum
from rewrite import FAST_RUN, InnerGraphPass, optimize
from rewrite.fusion import fuse_elemwise
from rewrite.pipeline import Fixpoint

RNG = np.random.default_rng(0)


def fused(graph: Graph) -> Graph:
    result = fuse_elemwise(graph)
    check_graph(result)
    return result


def fused_nodes(graph: Graph) -> list[Apply]:
    return [node for node in graph.nodes if isinstance(node.op, Fused)]


def inner_ops(node: Apply) -> list[str]:
    assert isinstance(node.op, Fused)
    return [str(inner.op) for inner in node.op.inner_graph.nodes]


def random_value(variable: Input) -> np.ndarray:
    shape = tuple(4 if length is None else length for length in variable.type.shape)
    return RNG.uniform(0.5, 2.0, size=shape).astype(variable.dtype)


def assert_same_values(before: Graph, after: Graph) -> None:
    inputs = [variable for variable in before.inputs if isinstance(variable, Input)]
    values: dict[Variable, np.ndarray] = {x: random_value(x) for x in inputs}
    for want, got in zip(evaluate(before.outputs, values), evaluate(after.outputs, values)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_chain_becomes_one_fused_node() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    graph = Graph([x, y], [pt.exp(x) * y + x])
    result = fused(graph)
    (node,) = result.nodes
    assert inner_ops(node) == ["Exp", "Mul", "Add"]
    assert node.inputs == (x, y)
    assert result.outputs[0].type == graph.outputs[0].type
    assert_same_values(graph, result)


def test_groups_of_two_producers_merge() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    graph = Graph([x, y], [pt.sin(x) + pt.cos(y)])
    (node,) = fused(graph).nodes
    assert sorted(inner_ops(node)) == ["Add", "Cos", "Sin"]


def test_a_lone_elementwise_node_is_left_alone() -> None:
    x = pt.vector("x")
    graph = Graph([x], [pt.exp(x).sum()])
    assert fuse_elemwise(graph) is graph


def test_values_read_outside_the_group_become_outputs() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    shared = pt.exp(x) * y
    graph = Graph([x, y], [shared + 1.0, shared.sum(), pt.log(shared)])
    result = fused(graph)
    (node,) = fused_nodes(result)
    assert len(node.outputs) == 3  # the shared product (read by the sum) and two outputs
    (total,) = [n for n in result.nodes if isinstance(n.op, Sum)]
    assert total.inputs == (node.outputs[0],)
    assert_same_values(graph, result)


def test_a_graph_output_inside_a_group_is_an_output_of_the_fused_node() -> None:
    x = pt.vector("x")
    middle = pt.exp(x) + 1.0
    graph = Graph([x], [middle, pt.sin(middle) * 2.0])
    result = fused(graph)
    (node,) = result.nodes
    assert result.outputs == node.outputs
    assert_same_values(graph, result)


def test_groups_stay_convex_around_a_reduction() -> None:
    """exp(x) and the add that reads sum(exp(x)) cannot share a loop."""
    x = pt.vector("x")
    e = pt.exp(x)
    graph = Graph([x], [(e + e.sum()) * e])
    result = fused(graph)
    assert not any(isinstance(node.op, Fused) and "Exp" in inner_ops(node) and
                   "Add" in inner_ops(node) for node in result.nodes)
    (node,) = fused_nodes(result)
    assert inner_ops(node) == ["Add", "Mul"]
    assert_same_values(graph, result)


def test_merging_two_groups_stays_convex() -> None:
    """a = exp(x) and b = a + sum(a) are separate groups; c = a * b cannot merge them."""
    x = pt.vector("x")
    a = pt.exp(x) * 2.0
    b = (a + a.sum()) - x
    graph = Graph([x], [a * b])
    result = fused(graph)
    groups = [inner_ops(node) for node in fused_nodes(result)]
    assert groups == [["Exp", "Mul"], ["Add", "Sub", "Mul"]]
    assert_same_values(graph, result)


def test_different_shapes_make_different_groups() -> None:
    row = pt.tensor("row", shape=(1, None))
    m = pt.matrix("m")
    small = pt.exp(row) + 1.0
    graph = Graph([row, m], [pt.sin(small + m) * m])
    result = fused(graph)
    groups = sorted(inner_ops(node) for node in fused_nodes(result))
    assert groups == [["Add", "Sin", "Mul"], ["Exp", "Add"]]
    assert_same_values(graph, result)


def test_broadcast_inputs_are_read_by_the_fused_node() -> None:
    row = pt.tensor("row", shape=(1, 3))
    m = pt.tensor("m", shape=(None, 3))
    graph = Graph([row, m], [pt.exp(row * m) - row])
    result = fused(graph)
    (node,) = result.nodes
    assert node.inputs == (row, m)
    assert result.outputs[0].type == graph.outputs[0].type
    assert_same_values(graph, result)


def test_single_value_constants_are_inlined_and_others_are_inputs() -> None:
    x = pt.vector("x", shape=(3,))
    table = Constant(np.array([1.0, 2.0, 3.0]))
    one = Constant(np.array([1.5]))
    graph = Graph([x], [pt.exp(x * 0.5) + one + table])
    (node,) = fused(graph).nodes
    assert node.inputs == (x, table)
    assert isinstance(node.op, Fused)
    inner_constants = [
        v for inner in node.op.inner_graph.nodes for v in inner.inputs if isinstance(v, Constant)
    ]
    assert [(c.ndim, float(c.data)) for c in inner_constants] == [(0, 0.5), (0, 1.5)]
    assert not any(isinstance(n.op, DimShuffle) for n in fused(graph).nodes)
    assert_same_values(graph, fused(graph))


def test_constants_alone_keep_fixing_the_shape() -> None:
    """A group reading only single-value constants keeps them as inputs (else its output
    would lose its rank)."""
    a = Constant(np.array([[2.0]]))
    graph = Graph([], [pt.exp(pt.sin(a))])
    (node,) = fused(graph).nodes
    assert node.inputs == (a,)
    assert fused(graph).outputs[0].type == graph.outputs[0].type
    assert_same_values(graph, fused(graph))


def test_scalar_graphs_fuse() -> None:
    s = pt.scalar("s")
    graph = Graph([s], [pt.exp(s) * 2.0 + s])
    (node,) = fused(graph).nodes
    assert node.inputs == (s,)
    assert_same_values(graph, fused(graph))


def test_inner_graphs_are_over_rank_zero_params() -> None:
    x, y = pt.matrix("x"), pt.matrix("y")
    (node,) = fused(Graph([x, y], [pt.tanh(x) / y])).nodes
    assert isinstance(node.op, Fused)
    inner = node.op.inner_graph
    assert inner.inputs == (Param(0, pt.scalar("p").type), Param(1, pt.scalar("q").type))
    assert all(isinstance(n.op, Elemwise) and n.out.ndim == 0 for n in inner.nodes)


def test_fusing_again_changes_nothing() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    e = pt.exp(x)
    graph = Graph([x, y], [(e + e.sum()) * e + y, pt.sin(y)])
    once = fused(graph)
    assert fuse_elemwise(once) is once


def test_fused_inner_graphs_are_never_fused_again() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    graph = Graph([x, y], [pt.exp(x) * y + x])
    once = optimize(graph, "fast_run")
    twice = optimize(once, "fast_run")
    check_graph(twice)
    (node,) = fused_nodes(twice)
    assert isinstance(node.op, Fused)
    assert not any(isinstance(inner.op, Fused) for inner in node.op.inner_graph.nodes)
    assert twice == once
    assert_same_values(graph, twice)


def test_reoptimizing_leaves_fused_inner_graphs_alone() -> None:
    """The inner graph was built from simplified nodes: no pass runs over it again."""
    xs = [pt.vector(f"x{k}") for k in range(3)]
    once = optimize(Graph(xs, [chain(xs, 20).sum()]), "fast_run")
    calls: list[Graph] = []

    def record(graph: Graph) -> Graph:
        calls.append(graph)
        return graph

    passes = list(FAST_RUN.passes)
    for found in FAST_RUN.passes:
        if isinstance(found, Fixpoint):
            passes.extend(found.pipeline.passes)
    inner_pass = [p for p in passes if isinstance(p, InnerGraphPass)]
    assert [p.skip for p in inner_pass] == [(Fused,)]
    assert InnerGraphPass(record, skip=(Fused,))(once) is once
    assert calls == []


def test_fusion_is_deterministic() -> None:
    def build() -> Graph:
        xs = [pt.vector(f"x{k}") for k in range(3)]
        terms = [pt.exp(xs[0]) * xs[1], pt.sin(xs[1]) - xs[2], pt.cos(xs[2])]
        total = terms[0] + terms[1] * terms[2]
        return Graph(xs, [total, (total + total.sum()) * terms[0]])

    first, second = fused(build()), fused(build())
    assert first == second
    assert first.digest == second.digest


def chain(xs: Sequence[Variable], steps: int) -> Variable:
    """The benchmark's elementwise recurrence over `xs`."""
    acc = xs[0]
    for i in range(steps):
        acc = acc * 0.999 + pt.sin(xs[i % len(xs)])
        acc = acc - pt.sin(xs[i % len(xs)]) * (i / 5000)
    return acc


def test_a_long_chain_is_one_node_and_fast() -> None:
    xs = [pt.vector(f"x{k}") for k in range(10)]
    graph = Graph(xs, [chain(xs, 150).sum()])
    start = time.perf_counter()
    result = fused(graph)
    elapsed = time.perf_counter() - start
    assert [type(node.op) for node in result.nodes] == [Fused, Sum]
    assert result.nodes[0].inputs == tuple(xs)
    assert elapsed < 2.0
    assert_same_values(graph, result)
    start = time.perf_counter()
    assert fuse_elemwise(result) is result
    assert time.perf_counter() - start < 0.05


def random_graph(seed: int) -> Graph:
    """A random mix of elementwise ops, sums broadcast back and reads of earlier values:
    many chances for a group to be tempted into a cycle."""
    rng = np.random.default_rng(seed)
    xs = [pt.vector(f"x{k}") for k in range(3)]
    values: list[Variable] = list(xs)
    for _ in range(40):
        a, b = (values[int(rng.integers(len(values)))] for _ in range(2))
        kind = int(rng.integers(5))
        if kind == 0:
            values.append(pt.sin(a) * b)
        elif kind == 1:
            values.append(a + b.sum())
        elif kind == 2:
            values.append(pt.exp(a * 0.1) - b)
        elif kind == 3:
            values.append(a * a.max())
        else:
            values.append(pt.cos(b) + 2.0)
    return Graph(xs, values[-3:] + [values[len(values) // 2]])


def other_ops(graph: Graph) -> list[str]:
    """The ops neither elementwise nor fused, except those reading a constant."""
    return sorted(
        str(node.op)
        for node in graph.nodes
        if not isinstance(node.op, ElementwiseOp) and not isinstance(node.inputs[0], Constant)
    )


def test_random_graphs_keep_their_values_and_reductions() -> None:
    for seed in range(12):
        graph = random_graph(seed)
        result = fused(graph)
        assert_same_values(graph, result)
        # Each reduction and broadcast survives exactly once (none rebuilt twice); only
        # the new axes given to constants go, inlined into the fused ops.
        assert other_ops(result) == other_ops(graph)
        # ... and each elementwise node lands in one place: one fused op, or left alone.
        kept = [n for n in result.nodes if isinstance(n.op, Elemwise)]
        inner = [name for n in fused_nodes(result) for name in inner_ops(n)]
        assert len(kept) + len(inner) == sum(isinstance(n.op, Elemwise) for n in graph.nodes)
        assert fuse_elemwise(result) is result


def test_reductions_between_steps_split_a_chain_into_one_group_per_step() -> None:
    x = pt.vector("x")
    value: Variable = x
    for _ in range(100):
        value = pt.exp(value - value.max()) * 0.5 + x
    graph = Graph([x], [value])
    start = time.perf_counter()
    result = fused(graph)
    assert time.perf_counter() - start < 2.0
    groups = [inner_ops(node) for node in fused_nodes(result)]
    assert groups == [["Sub", "Exp", "Mul", "Add"]] * 100
    assert_same_values(graph, result)
