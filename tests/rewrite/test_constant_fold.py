"""Constant folding: nodes over constants become constants, within a size bound."""

from __future__ import annotations

import numpy as np

import ops as pt
from fgraph import Constant, Graph, Variable
from rewrite.constant_fold import CONSTANT_FOLD, MAX_FOLDED_ELEMENTS, fold_constants
from tests.rewrite.algebra_checks import RNG, assert_same_values, rewritten


def folded(graph: Graph) -> Graph:
    return rewritten(graph, CONSTANT_FOLD)


def test_a_constant_expression_becomes_one_constant() -> None:
    x = pt.vector("x")
    graph = Graph([x], [x * pt.exp(pt.constant(np.array([1.0, 2.0, 3.0]))) + 2])
    result = folded(graph)
    kinds = [type(node.op).__name__ for node in result.nodes]
    assert kinds == ["Elemwise", "Elemwise"]  # the Mul and the Add remain
    mul = result.nodes[0]
    assert isinstance(mul.inputs[1], Constant)
    np.testing.assert_allclose(mul.inputs[1].data, np.exp([1.0, 2.0, 3.0]))
    assert_same_values(graph, result, RNG.normal(size=3))


def test_folding_keeps_dtypes() -> None:
    value = pt.constant(np.array([1, 2, 3], dtype="int16"))
    y = pt.cast(value, "float32") * np.float32(0.5)
    result = folded(Graph([], [y]))
    (output,) = result.outputs
    assert isinstance(output, Constant)
    assert output.type == y.type
    np.testing.assert_array_equal(output.data, np.array([0.5, 1.0, 1.5], dtype="float32"))


def test_multi_output_and_shape_nodes_fold() -> None:
    y = pt.shape(pt.constant(np.zeros((2, 5))))
    result = folded(Graph([], [y]))
    assert isinstance(result.outputs[0], Constant)
    np.testing.assert_array_equal(result.outputs[0].data, [2, 5])


def test_small_creation_ops_fold() -> None:
    y = pt.zeros((3, 4), dtype="float32")
    result = folded(Graph([], [y]))
    (output,) = result.outputs
    assert isinstance(output, Constant) and output.type == y.type
    assert not output.data.any()


def test_big_creation_ops_do_not_fold() -> None:
    big = pt.zeros((1000, 1000))
    wide = pt.alloc(pt.constant(1.5), MAX_FOLDED_ELEMENTS + 1)
    graph = Graph([], [big, wide])
    assert folded(graph) is graph
    assert big.owner is not None and fold_constants(big.owner) is None


def test_results_larger_than_the_bound_are_not_folded_even_from_big_constants() -> None:
    data = pt.constant(np.ones(MAX_FOLDED_ELEMENTS + 5))
    graph = Graph([], [pt.exp(data)])
    assert folded(graph) is graph


def test_a_node_with_a_variable_input_is_left_alone() -> None:
    x = pt.vector("x")
    graph = Graph([x], [x + 1])
    result = folded(graph)
    assert [type(node.op).__name__ for node in result.nodes] == ["Elemwise"]
    assert isinstance(result.nodes[0].inputs[1], Constant)  # the padded 1 was folded


def test_a_failing_computation_is_left_for_run_time() -> None:
    # The target's length is unknown when the op is built and wrong when it runs.
    target = pt.constant(np.array([7], dtype="int64"))
    failing = pt.Reshape((None,))(pt.constant(np.arange(3.0)), target)
    failing_graph = Graph([], [failing])
    assert folded(failing_graph) is failing_graph


def test_folding_is_idempotent() -> None:
    x = pt.vector("x")
    y: Variable = x * pt.sum(pt.constant(np.arange(4.0)))
    once = folded(Graph([x], [y]))
    assert folded(once) is once
