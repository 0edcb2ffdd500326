"""Formulas users write by hand that overflow, underflow or cancel, at the inputs where
they do: the value and the gradient must be the finite, accurate ones, both from the
optimized graph through the reference evaluator and from compiled code (the rewrites in
`rewrite.stabilize` fix the value, `grad` differentiating through `ops.stable` fixes
the derivative)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, check_graph, evaluate
from numba_backend import function
from rewrite import optimize

Array = np.ndarray[Any, np.dtype[Any]]


def log_sigmoid(x: Array) -> Array:
    result: Array = -np.logaddexp(0.0, -x)
    return result


def sigmoid(x: Array) -> Array:
    return np.exp(log_sigmoid(x))


def log1mexp(x: Array) -> Array:
    with np.errstate(divide="ignore"):  # the branch not taken
        return np.where(x > -np.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log1mexp_gradient(x: Array, w: Array) -> Array:
    with np.errstate(over="ignore"):  # expm1(1000) = inf: the derivative is -0
        result: Array = -w / np.expm1(-x)
    return result


def log_softmax(x: Array) -> Array:
    shifted = x - x.max()
    result: Array = shifted - np.log(np.exp(shifted).sum())
    return result


def logsumexp(x: Array) -> Array:
    return np.asarray(x.max() + np.log(np.exp(x - x.max()).sum()))


@attrs.frozen
class Case:
    """`build(x)` at `at`, whose value is `value(at)` and whose gradient of the
    weighted sum `sum(build(x) * weights)` is `gradient(at, weights)`."""

    build: Callable[[Variable], Variable]
    at: Array
    value: Callable[[Array], Array]
    gradient: Callable[[Array, Array], Array]


SOFTPLUS_AT = np.array([-1000.0, -40.0, -0.5, 0.0, 3.0, 40.0, 1000.0])
SIGMOID_AT = np.array([-1000.0, -40.0, -0.5, 0.0, 3.0, 40.0, 1000.0])
NEGATIVE_AT = np.array([-1000.0, -50.0, -0.7, -0.5, -1e-10, -1e-20])
SOFTMAX_AT = np.array([1000.0, 0.0, -1000.0, 999.0])

CASES: dict[str, Case] = {
    "log1p(exp(x))": Case(
        lambda x: pt.log1p(pt.exp(x)),
        SOFTPLUS_AT,
        lambda x: np.logaddexp(0.0, x),
        lambda x, w: w * sigmoid(x),
    ),
    "log(1 + exp(x))": Case(
        lambda x: pt.log(1 + pt.exp(x)),
        SOFTPLUS_AT,
        lambda x: np.logaddexp(0.0, x),
        lambda x, w: w * sigmoid(x),
    ),
    "log(sigmoid(x))": Case(
        lambda x: pt.log(pt.sigmoid(x)),
        SIGMOID_AT,
        log_sigmoid,
        lambda x, w: w * sigmoid(-x),
    ),
    "log(1 - sigmoid(x))": Case(
        lambda x: pt.log(1 - pt.sigmoid(x)),
        SIGMOID_AT,
        lambda x: log_sigmoid(-x),
        lambda x, w: -w * sigmoid(x),
    ),
    "log(1 - exp(x))": Case(
        lambda x: pt.log(1 - pt.exp(x)),
        NEGATIVE_AT,
        log1mexp,
        log1mexp_gradient,
    ),
    "log(-expm1(x))": Case(
        lambda x: pt.log(-pt.expm1(x)),
        NEGATIVE_AT,
        log1mexp,
        log1mexp_gradient,
    ),
    "log1p(-exp(x))": Case(
        lambda x: pt.log1p(-pt.exp(x)),
        NEGATIVE_AT,
        log1mexp,
        log1mexp_gradient,
    ),
    "log(softmax(x))": Case(
        lambda x: pt.log(pt.softmax(x)),
        SOFTMAX_AT,
        log_softmax,
        lambda x, w: w - np.exp(log_softmax(x)) * w.sum(),
    ),
    "log(exp(x) / sum(exp(x)))": Case(
        lambda x: pt.log(pt.exp(x) / pt.sum(pt.exp(x))),
        SOFTMAX_AT,
        log_softmax,
        lambda x, w: w - np.exp(log_softmax(x)) * w.sum(),
    ),
    "log(sum(exp(x)))": Case(
        lambda x: pt.log(pt.sum(pt.exp(x))),
        SOFTMAX_AT,
        logsumexp,
        lambda x, w: w * np.exp(log_softmax(x)),
    ),
}


def weights_like(at: Array, value: Array) -> Array:
    """Weights for the cost, distinct per element so a wrong index shows."""
    return np.linspace(0.5, 2.0, value.size).reshape(value.shape)


def graph_of(case: Case) -> tuple[Graph, Array, Array]:
    """The graph x -> (value, gradient of the weighted sum), its input, the weights."""
    x = pt.vector("x")
    y = case.build(x)
    weights = weights_like(case.at, case.value(case.at))
    gradient = pt.grad(pt.sum(y * pt.constant(weights)), x)
    graph = Graph([x], [y, gradient])
    check_graph(graph)
    return graph, case.at, weights


def expected(case: Case, weights: Array) -> tuple[Array, Array]:
    return case.value(case.at), case.gradient(case.at, weights)


def assert_accurate(got: Array, want: Array, what: str) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300, err_msg=what)


@pytest.mark.parametrize("name", list(CASES))
def test_optimized_graph_is_accurate_at_extremes(name: str) -> None:
    graph, at, weights = graph_of(CASES[name])
    optimized = optimize(graph, "fast_run")
    value, gradient = evaluate(optimized.outputs, {optimized.inputs[0]: at})
    want_value, want_gradient = expected(CASES[name], weights)
    assert_accurate(value, want_value, f"{name}: value")
    assert_accurate(gradient, want_gradient, f"{name}: gradient")


@pytest.fixture(scope="module")
def compiled_results() -> dict[str, list[Array]]:
    """Every case compiled into one function (one cold compile for the module)."""
    graphs = {name: graph_of(case) for name, case in CASES.items()}
    inputs = [graph.inputs[0] for graph, _, _ in graphs.values()]
    outputs = [output for graph, _, _ in graphs.values() for output in graph.outputs]
    results = function(inputs, outputs)(*(at for _, at, _ in graphs.values()))
    return {name: results[2 * number : 2 * number + 2] for number, name in enumerate(graphs)}


@pytest.mark.parametrize("name", list(CASES))
def test_compiled_code_is_accurate_at_extremes(
    name: str, compiled_results: dict[str, list[Array]]
) -> None:
    _, _, weights = graph_of(CASES[name])
    value, gradient = compiled_results[name]
    want_value, want_gradient = expected(CASES[name], weights)
    assert_accurate(value, want_value, f"{name}: value")
    assert_accurate(gradient, want_gradient, f"{name}: gradient")


@pytest.mark.parametrize("name", list(CASES))
def test_the_gradient_is_finite_without_rewriting(name: str) -> None:
    """`grad` alone (no optimization) builds a derivative that is finite at the extremes."""
    graph, at, weights = graph_of(CASES[name])
    (gradient,) = evaluate(graph.outputs[1:], {graph.inputs[0]: at})
    assert_accurate(gradient, expected(CASES[name], weights)[1], f"{name}: gradient")
