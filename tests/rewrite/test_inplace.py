"""The inplace pass: which buffers an op may overwrite, and that nothing can tell."""

from __future__ import annotations

import numpy as np

import ops as pt
from fgraph import Apply, Graph, Variable, check_graph, evaluate
from ops.creation import Alloc
from ops.elemwise import Elemwise
from ops.subtensor import IncSubtensor
from rewrite.inplace import inplace_pass


def destroying(graph: Graph) -> list[Apply]:
    return [node for node in graph.nodes if node.op.destroy_map]


def run(graph: Graph, *values: np.ndarray) -> list[np.ndarray]:
    return evaluate(graph.outputs, dict(zip(graph.inputs, values)))


def optimized(inputs: list[Variable], outputs: list[Variable]) -> Graph:
    graph = Graph(inputs, outputs)
    result = inplace_pass(graph)
    check_graph(result)
    assert not result.dedup_nodes
    return result


def test_a_graph_input_is_never_destroyed() -> None:
    x = pt.vector("x")
    assert destroying(optimized([x], [pt.exp(x)])) == []


def test_a_dead_intermediate_is_overwritten() -> None:
    x = pt.vector("x")
    graph = optimized([x], [pt.exp(x) + 1.0])
    (node,) = destroying(graph)
    assert isinstance(node.op, Elemwise) and node.op.destroy_map == ((0, 0),)
    assert "inplace" in str(node.op)
    value = np.array([0.5, -1.0])
    np.testing.assert_allclose(run(graph, value)[0], np.exp(value) + 1)


def test_a_value_read_later_is_kept() -> None:
    x = pt.vector("x")
    a = pt.exp(x)
    b = a + 1.0
    graph = optimized([x], [b * a])
    for node in destroying(graph):  # only the last reader of a buffer may destroy it
        for _, slot in node.op.destroy_map:
            later = graph.nodes[graph.nodes.index(node) + 1 :]
            assert all(node.inputs[slot] not in other.inputs for other in later)
    add = next(n for n in graph.nodes if str(n.op).startswith("Add"))
    assert not add.op.destroy_map  # `a` is still read by the product
    (product,) = [n for n in graph.nodes if str(n.op).startswith("Mul")]
    assert product.op.destroy_map == ((0, 0),)  # b is dead after the product reads it


def test_a_buffer_viewed_by_a_later_reader_is_kept() -> None:
    x = pt.matrix("x")
    a = pt.exp(x)
    transposed = a.T  # a view of a's buffer
    b = a + 1.0
    graph = optimized([x], [b, transposed * 2.0])
    add = next(n for n in graph.nodes if str(n.op).startswith("Add"))
    order = graph.nodes.index(add)
    view_read_later = any(
        "Transpose" in str(inp.owner.op)
        for n in graph.nodes[order + 1 :]
        for inp in n.inputs
        if inp.owner is not None
    )
    assert view_read_later  # the toposort runs the addition before the view is read
    assert not add.op.destroy_map


def test_a_graph_output_is_never_destroyed() -> None:
    x = pt.vector("x")
    a = pt.exp(x)
    graph = optimized([x], [a, a + 1.0])
    assert destroying(graph) == []
    value = np.array([0.1, 0.2])
    first, second = run(graph, value)
    np.testing.assert_allclose(first, np.exp(value))
    np.testing.assert_allclose(second, np.exp(value) + 1)


def test_shared_zeros_are_duplicated_for_two_destroyers() -> None:
    x, y = pt.scalar("x"), pt.scalar("y")
    zeros = pt.zeros(5)
    a = pt.set_subtensor(zeros[0], x)
    b = pt.set_subtensor(zeros[1], y)
    graph = optimized([x, y], [a + b])
    allocs = [node for node in graph.nodes if isinstance(node.op, Alloc)]
    updates = [node for node in graph.nodes if isinstance(node.op, IncSubtensor)]
    assert len(allocs) == 2 and len({node.position for node in allocs}) == 2
    assert all(isinstance(node.op, IncSubtensor) and node.op.destroy_map for node in updates)
    assert {node.inputs[0].owner for node in updates} == set(allocs)
    (result,) = run(graph, np.array(3.0), np.array(4.0))
    np.testing.assert_array_equal(result, [3.0, 4.0, 0.0, 0.0, 0.0])


def test_two_runs_on_equal_graphs_give_equal_graphs() -> None:
    def build() -> Graph:
        x = pt.vector("x")
        zeros = pt.zeros(3)
        return Graph([x], [pt.exp(x) * 2.0 + pt.inc_subtensor(zeros[1:], 1.0).sum()])

    first, second = inplace_pass(build()), inplace_pass(build())
    assert first == second and first.digest == second.digest
    assert inplace_pass(first) == first  # decisions are recomputed from scratch


def test_same_variable_twice_may_be_destroyed_by_an_elementwise_op() -> None:
    x = pt.vector("x")
    a = pt.exp(x)
    graph = optimized([x], [a * a])
    (node,) = destroying(graph)
    value = np.array([0.3, 0.7])
    np.testing.assert_allclose(run(graph, value)[0], np.exp(value) ** 2)
    assert node.op.destroy_map == ((0, 0),)
