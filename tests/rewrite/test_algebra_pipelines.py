"""The algebraic rule sets inside the named pipelines: optimizing keeps values, applies
the rules, and optimizing the result again gives an equal graph."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, check_graph, evaluate
from rewrite import optimize
from tests.rewrite.algebra_checks import assert_same_values, random_value


def logistic_loss() -> Graph:
    w, x = pt.vector("w"), pt.matrix("x")
    logits = pt.dot(x, w) * 1.0 + 0.0
    loss = -pt.mean(pt.log(pt.sigmoid(logits)) + pt.log(1 - pt.sigmoid(-logits)))
    return Graph([w, x], [loss, pt.grad(loss, w)])


def log_softmax_of_scaled_input() -> Graph:
    x = pt.matrix("x")
    scaled = x / 2.0
    return Graph([x], [pt.log(pt.softmax(scaled, axis=1)), pt.logsumexp(scaled, axis=0)])


def polynomial_with_constants() -> Graph:
    x = pt.tensor("x", shape=(3,))
    coefficients = pt.exp(pt.constant(np.array([0.0, 1.0, 2.0])))
    y = coefficients * x**2 + x**3 - pt.log(1 + x**2) + (pt.exp(x) - 1) ** 1
    return Graph([x], [y])


def shapes_and_casts() -> Graph:
    x = pt.tensor("x", shape=(2, 3))
    flat = pt.reshape(pt.reshape(x, (3, 2)), (6,))
    y = pt.cast(pt.cast(flat, "float64"), "float32") + pt.sum(pt.shape(x))
    return Graph([x], [pt.transpose(pt.transpose(x)) ** 0.5, y])


GRAPHS: dict[str, Callable[[], Graph]] = {
    "logistic_loss": logistic_loss,
    "log_softmax": log_softmax_of_scaled_input,
    "polynomial": polynomial_with_constants,
    "shapes_and_casts": shapes_and_casts,
}


def positive_values(graph: Graph) -> list[np.ndarray]:
    return [np.abs(random_value(variable)) + 0.1 for variable in graph.inputs]


@pytest.mark.parametrize("pipeline", ["fast_run", "fast_compile"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_optimizing_keeps_values_and_is_idempotent(name: str, pipeline: str) -> None:
    graph = GRAPHS[name]()
    check_graph(graph)
    optimized = optimize(graph, pipeline)
    check_graph(optimized)
    assert [v.type for v in optimized.outputs] == [v.type for v in graph.outputs]
    assert_same_values(graph, optimized, *positive_values(graph))
    assert optimize(optimized, pipeline) == optimized


def op_names(graph: Graph) -> set[str]:
    """What every node computes, inside fused kernels too (scalar ops by name)."""
    names: set[str] = set()
    stack = [graph]
    while stack:
        current = stack.pop()
        for node in current.nodes:
            names.add(str(getattr(node.op, "scalar_op", type(node.op).__name__)))
            inner = getattr(node.op, "inner_graph", None)
            if isinstance(inner, Graph):
                stack.append(inner)
    return names


def test_fast_run_applies_the_algebraic_rules() -> None:
    names = op_names(optimize(logistic_loss(), "fast_run"))
    assert "Softplus" in names
    names = op_names(optimize(polynomial_with_constants(), "fast_run"))
    assert {"Log1p", "Expm1", "Square"} <= names and "Pow" not in names


def test_fast_run_log_softmax_is_finite_where_the_naive_one_is_not() -> None:
    graph = log_softmax_of_scaled_input()
    optimized = optimize(graph, "fast_run")
    assert "TrueDiv" not in op_names(optimized)
    far = np.array([[0.0, -3000.0], [4.0, 1.0]])
    (naive, _) = evaluate(graph.outputs, {graph.inputs[0]: far})
    (stable, _) = evaluate(optimized.outputs, {optimized.inputs[0]: far})
    assert np.isneginf(naive[0, 1])
    np.testing.assert_allclose(stable[0], [0.0, -1500.0], atol=1e-9)
    np.testing.assert_allclose(stable[1], naive[1], rtol=1e-12)
