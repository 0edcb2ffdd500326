"""`grad` and `jvp` differentiate a logarithm with a stable form (`ops.stable`) through
that form: the derivative is finite where the naive chain rule gives `inf * 0`, agrees
with finite differences elsewhere, and a target inside the pattern still gets its own
derivative."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, check_graph, evaluate
from ops.stable import stable_form
from tests.ops.checks import check_pullback, check_pushforward

NAIVE: dict[str, Callable[[Variable], Variable]] = {
    "log_sigmoid": lambda x: pt.log(pt.sigmoid(x)),
    "log_one_minus_sigmoid": lambda x: pt.log(1 - pt.sigmoid(x)),
    "log_one_plus_exp": lambda x: pt.log(1 + pt.exp(x)),
    "log1p_exp": lambda x: pt.log1p(pt.exp(x)),
    "log_exp": lambda x: pt.log(pt.exp(x)),
    "log_sum_exp_rows": lambda x: pt.log(pt.sum(pt.exp(x), axis=1)),
    "log_softmax_columns": lambda x: pt.log(pt.softmax(x, axis=0)),
    "log_softmax_by_hand": lambda x: pt.log(pt.exp(x) / pt.sum(pt.exp(x), axis=1, keepdims=True)),
}
NEGATIVE: dict[str, Callable[[Variable], Variable]] = {
    "log_one_minus_exp": lambda x: pt.log(1 - pt.exp(x)),
    "log_neg_expm1": lambda x: pt.log(-pt.expm1(x)),
    "log1p_neg_exp": lambda x: pt.log1p(-pt.exp(x)),
}
ORDINARY = np.array([[-1.5, 0.3, 2.0], [0.7, -0.2, 1.1]])


@pytest.mark.parametrize("name", sorted(NAIVE))
def test_stable_derivatives_match_finite_differences(name: str) -> None:
    check_pullback(NAIVE[name], [ORDINARY])
    check_pushforward(NAIVE[name], [ORDINARY])


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_log1mexp_derivatives_match_finite_differences(name: str) -> None:
    check_pullback(NEGATIVE[name], [-np.abs(ORDINARY)])
    check_pushforward(NEGATIVE[name], [-np.abs(ORDINARY)])


def test_every_naive_form_has_a_stable_form() -> None:
    x = pt.matrix("x")
    for name, build in {**NAIVE, **NEGATIVE}.items():
        owner = build(x).owner
        assert owner is not None and stable_form(owner) is not None, name


def derivatives(build: Callable[[Variable], Variable], at: np.ndarray) -> list[np.ndarray]:
    """The gradient (unoptimized) and the jvp along ones of `build` at `at`."""
    x = pt.vector("x")
    y = build(x)
    gradient = pt.grad(pt.sum(y), x)
    (tangent,) = pt.jvp([y], [x], [pt.ones_like(x)])
    check_graph(Graph([x], [gradient, tangent]))
    return evaluate([gradient, tangent], {x: at})


def test_log_sigmoid_derivatives_are_finite_at_extremes() -> None:
    at = np.array([-1000.0, 1000.0])
    for got in derivatives(lambda x: pt.log(pt.sigmoid(x)), at):
        np.testing.assert_array_equal(got, [1.0, 0.0])
    for got in derivatives(lambda x: pt.log(1 - pt.sigmoid(x)), at):
        np.testing.assert_array_equal(got, [-0.0, -1.0])


def test_log_one_plus_exp_and_log1mexp_derivatives_are_finite_at_extremes() -> None:
    for got in derivatives(lambda x: pt.log(1 + pt.exp(x)), np.array([1000.0, -1000.0])):
        np.testing.assert_array_equal(got, [1.0, 0.0])
    for got in derivatives(lambda x: pt.log(1 - pt.exp(x)), np.array([-1e-20, -1000.0])):
        np.testing.assert_allclose(got, [-1e20, -0.0], rtol=1e-15)


def test_second_derivative_of_log_sigmoid_is_finite_at_extremes() -> None:
    x = pt.vector("x", shape=(3,))
    hessian = pt.hessian(pt.sum(pt.log(pt.sigmoid(x))), x)
    (got,) = evaluate([hessian], {x: np.array([-1000.0, 0.0, 1000.0])})
    np.testing.assert_allclose(got, np.diag([0.0, -0.25, 0.0]), atol=1e-300)


def test_a_target_inside_the_pattern_gets_its_own_derivative() -> None:
    """d log(s) / ds for s = sigmoid(x) is 1 / s: the pattern is not skipped past s."""
    x = pt.vector("x")
    s = pt.sigmoid(x)
    gradient_s, gradient_x = pt.grad(pt.sum(pt.log(s)), [s, x])
    at = np.array([-2.0, 0.5])
    got_s, got_x = evaluate([gradient_s, gradient_x], {x: at})
    sigmoid = 1 / (1 + np.exp(-at))
    np.testing.assert_allclose(got_s, 1 / sigmoid)
    np.testing.assert_allclose(got_x, 1 - sigmoid)


def test_a_seed_inside_the_pattern_still_reaches_the_input() -> None:
    """A gradient given for s = sigmoid(x) (known_grads) is s's whole gradient: the
    stable form of log(s), which would skip over s, is not used."""
    x = pt.vector("x")
    s = pt.sigmoid(x)
    gradient = pt.grad(pt.sum(pt.log(s)), x, known_grads={s: pt.ones_like(s)})
    at = np.array([-2.0, 0.5])
    (got,) = evaluate([gradient], {x: at})
    sigmoid = 1 / (1 + np.exp(-at))
    np.testing.assert_allclose(got, sigmoid * (1 - sigmoid))


def test_the_derivative_is_built_from_the_stable_form() -> None:
    """The gradient of log(sigmoid(x)) never divides by sigmoid(x): it is sigmoid(-x)
    (through softplus), with no division left. (The cost itself stays: the seed `ones_like`
    reads its shape.)"""
    x = pt.vector("x")
    gradient = pt.grad(pt.sum(pt.log(pt.sigmoid(x))), x)
    names = {str(node.op) for node in Graph([x], [gradient]).nodes}
    assert "Sigmoid" in names and not names & {"TrueDiv", "Reciprocal"}, names


def test_log1mexp_derivative_at_zero_is_minus_infinity() -> None:
    """At x = 0 (either sign of zero) log(1 - exp(x)) falls to -inf, and so does its slope."""
    with np.errstate(divide="ignore"):
        for got in derivatives(pt.log1mexp, np.array([0.0, -0.0])):
            np.testing.assert_array_equal(got, [-np.inf, -np.inf])
