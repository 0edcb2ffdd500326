"""Stabilization rules: each fires on its naive formula, agrees with it on ordinary
inputs, and gives the finite, accurate value where the naive formula overflows,
underflows or cancels."""

from __future__ import annotations

import numpy as np

import ops as pt
from fgraph import Graph, Variable, evaluate
from fgraph.op import Array
from rewrite.stabilize import STABILIZE
from tests.rewrite.algebra_checks import check_rewrite, ops_of, random_value


def stabilized(x: Variable, y: Variable) -> Graph:
    """The graph x -> y stabilized (checked against the naive one on random inputs)."""
    return check_rewrite(Graph([x], [y]), STABILIZE)


def values(graph: Graph, x: Array) -> Array:
    (result,) = evaluate(graph.outputs, {graph.inputs[0]: x})
    return result


def test_log_one_plus_x() -> None:
    x = pt.vector("x")
    for y in (pt.log(1 + x), pt.log(x + 1)):
        graph = stabilized(x, y)
        assert ops_of(graph) == ["Log1p"]
        tiny = np.array([1e-20, -3e-18, 0.5])
        assert values(Graph([x], [y]), tiny)[0] == 0.0  # naive: 1 + 1e-20 rounds to 1
        np.testing.assert_allclose(values(graph, tiny), np.log1p(tiny), rtol=1e-15)


def test_log_one_plus_x_computes_in_the_sum_dtype() -> None:
    x = pt.vector("x", dtype="float32")
    y = pt.log(x + pt.constant(np.ones(1)))  # float64 one: the sum is float64
    graph = stabilized(x, y)
    assert ops_of(graph) == ["Cast{float64}", "Log1p"]


def test_log_one_plus_integer_is_kept() -> None:
    x = pt.vector("x", dtype="int64")
    graph = Graph([x], [pt.log(1 + x)])
    assert check_rewrite(graph, STABILIZE, np.array([0, 3, 9])) is graph


def test_exp_minus_one() -> None:
    x = pt.vector("x")
    graph = stabilized(x, pt.exp(x) - 1)
    assert ops_of(graph) == ["Expm1"]
    tiny = np.array([1e-20, -1e-17])
    np.testing.assert_allclose(values(graph, tiny), tiny, rtol=1e-15)


def test_log_of_exp() -> None:
    x = pt.vector("x")
    naive = Graph([x], [pt.log(pt.exp(x))])
    graph = stabilized(x, naive.outputs[0])
    assert graph.outputs == (x,)
    big = np.array([1000.0, -1000.0])
    assert np.isinf(values(naive, big)).all()
    np.testing.assert_array_equal(values(graph, big), big)


def test_log_of_exp_of_integers_is_a_cast() -> None:
    x = pt.vector("x", dtype="int32")
    value = np.array([1, -2, 3], dtype="int32")
    graph = check_rewrite(Graph([x], [pt.log(pt.exp(x))]), STABILIZE, value)
    assert ops_of(graph) == ["Cast{float64}"]


def test_log_of_sigmoid() -> None:
    x = pt.vector("x", dtype="float32")
    naive = Graph([x], [pt.log(pt.sigmoid(x))])
    graph = stabilized(x, naive.outputs[0])
    assert "Sigmoid" not in ops_of(graph) and "Log" not in ops_of(graph)
    far = np.array([-800.0, 800.0, 0.0], dtype="float32")
    assert np.isneginf(values(naive, far)[0])
    result = values(graph, far)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, [-800.0, 0.0, -np.log(2)], rtol=1e-6)


def test_log_of_one_minus_sigmoid() -> None:
    x = pt.vector("x")
    naive = Graph([x], [pt.log(1 - pt.sigmoid(x))])
    graph = stabilized(x, naive.outputs[0])
    assert "Sigmoid" not in ops_of(graph)
    far = np.array([40.0, 800.0, -800.0])
    assert np.isneginf(values(naive, far)[:2]).all()
    np.testing.assert_allclose(values(graph, far), [-40.0, -800.0, 0.0], rtol=1e-12)


def test_log_sum_exp() -> None:
    x = pt.matrix("x")
    naive = Graph([x], [pt.log(pt.sum(pt.exp(x), axis=1))])
    graph = stabilized(x, naive.outputs[0])
    assert "Max" in ops_of(graph)
    big = np.array([[1000.0, 1000.0], [-1000.0, -np.inf], [np.inf, 0.0], [-np.inf, -np.inf]])
    naive_values = values(naive, big)
    assert np.isinf(naive_values[0]) and np.isneginf(naive_values[1])
    expected = [1000.0 + np.log(2.0), -1000.0, np.inf, -np.inf]
    np.testing.assert_allclose(values(graph, big), expected, rtol=1e-12)


def test_log_sum_exp_is_not_shifted_twice() -> None:
    x = pt.matrix("x")
    graph = Graph([x], [pt.logsumexp(x, axis=0), pt.log_softmax(x, axis=1)])
    assert check_rewrite(graph, STABILIZE) is graph


def test_log_of_softmax() -> None:
    x = pt.matrix("x")
    naive = Graph([x], [pt.log(pt.softmax(x, axis=1))])
    graph = stabilized(x, naive.outputs[0])
    assert "TrueDiv" not in ops_of(graph)
    far = np.array([[0.0, -1000.0], [5.0, 1.0]])
    assert np.isneginf(values(naive, far)[0, 1])
    expected = far - np.log(np.exp(far - far.max(1, keepdims=True)).sum(1, keepdims=True))
    expected -= far.max(1, keepdims=True)
    np.testing.assert_allclose(values(graph, far), expected, rtol=1e-12)


def test_log_of_an_unshifted_softmax_gets_a_stable_normalizer() -> None:
    x = pt.vector("x")
    exps = pt.exp(x)
    naive = Graph([x], [pt.log(exps / pt.sum(exps, keepdims=True))])
    graph = stabilized(x, naive.outputs[0])
    assert "Max" in ops_of(graph) and "TrueDiv" not in ops_of(graph)
    far = np.array([1000.0, 0.0])
    assert np.isnan(values(naive, far)).any()
    np.testing.assert_allclose(values(graph, far), [0.0, -1000.0], atol=1e-12)


def test_log_one_plus_exp_becomes_softplus() -> None:
    x = pt.vector("x")
    for y in (pt.log1p(pt.exp(x)), pt.log(1 + pt.exp(x)), pt.log(pt.exp(x) + 1)):
        naive = Graph([x], [y])
        graph = stabilized(x, y)
        assert ops_of(graph) == ["Softplus"]
        far = np.array([1000.0, -1000.0, 0.0])
        assert np.isinf(values(naive, far)[0])
        np.testing.assert_allclose(values(graph, far), [1000.0, 0.0, np.log(2.0)], rtol=1e-15)


def test_log_one_minus_exp_becomes_log1mexp() -> None:
    x = pt.vector("x")
    naive_forms = (pt.log(1 - pt.exp(x)), pt.log(-pt.expm1(x)), pt.log1p(-pt.exp(x)))
    at = np.array([-1e-20, -0.5, -50.0, -1000.0])
    expected = [np.log(1e-20), np.log(-np.expm1(-0.5)), -np.exp(-50.0), 0.0]
    for y in naive_forms:
        graph = check_rewrite(Graph([x], [y]), STABILIZE, -np.abs(random_value(x)))
        assert ops_of(graph) == ["Log1mexp"]
        np.testing.assert_allclose(values(graph, at), expected, rtol=1e-14)
    with np.errstate(divide="ignore"):
        naive = [values(Graph([x], [y]), at) for y in naive_forms]
    assert np.isneginf(naive[0][0]) and naive[1][2] == 0.0 and naive[2][0] == -np.inf


def test_log_one_minus_exp_of_integers_is_kept() -> None:
    x = pt.vector("x", dtype="int64")
    graph = Graph([x], [pt.log(1 - pt.exp(x))])
    assert check_rewrite(graph, STABILIZE, np.array([-1, -3, -9])) is graph


def test_log_of_softmax_written_with_a_broadcast_sum() -> None:
    """`exp(x) / sum(exp(x))` divides by the sum padded to rank 1: still a softmax."""
    x = pt.vector("x")
    naive = Graph([x], [pt.log(pt.exp(x) / pt.sum(pt.exp(x)))])
    graph = stabilized(x, naive.outputs[0])
    assert "TrueDiv" not in ops_of(graph) and "Max" in ops_of(graph)
    np.testing.assert_allclose(values(graph, np.array([1000.0, 0.0])), [0.0, -1000.0])
