"""Derivatives of reductions and scans: reverse and forward mode against central finite
differences, the documented conventions (zeros in products, ties in extrema), and the
ops without derivatives."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Op, Variable, check_graph, evaluate
from ops.reduction import AllTrue, AnyTrue, Argmax, Argmin, CumProd, CumSum, Max, Min, Prod, Sum
import rewrite
from tests.ops.checks import check_pullback, check_pushforward

Build = Callable[[Variable], Variable]

MATRIX = np.array([[0.3, -1.2, 2.0, 0.7], [1.5, 0.4, -0.8, -2.2], [-0.6, 1.1, 0.9, 1.8]])
CUBE = np.random.default_rng(1).normal(size=(2, 3, 4))
WITH_ZEROS = np.array([[0.0, 2.0, 3.0, -1.5], [1.0, 0.0, 0.0, 2.0], [1.5, -2.0, 0.5, 3.0]])

DIFFERENTIABLE: dict[str, Build] = {
    "sum": lambda x: pt.sum(x),
    "sum_axis": lambda x: pt.sum(x, 1, keepdims=True),
    "prod": lambda x: pt.prod(x, 0),
    "prod_all": lambda x: pt.prod(x),
    "max": lambda x: pt.max(x, 1),
    "max_all": lambda x: pt.max(x, keepdims=True),
    "min": lambda x: pt.min(x, 0),
    "min_two_axes": lambda x: pt.min(x, (0, 1)),
    "mean": lambda x: pt.mean(x, -1),
    "var": lambda x: pt.var(x, 0),
    "var_ddof": lambda x: pt.var(x, None, ddof=1),
    "std": lambda x: pt.std(x, 1, keepdims=True),
    "logsumexp": lambda x: pt.logsumexp(x, 1),
    "logsumexp_all": lambda x: pt.logsumexp(x),
    "cumsum": lambda x: pt.cumsum(x, 1),
    "cumsum_reverse": lambda x: CumSum(0, reverse=True)(x),
    "cumprod": lambda x: pt.cumprod(x, 0),
    "cumprod_reverse": lambda x: CumProd(1, reverse=True)(x),
    "softmax": lambda x: pt.softmax(x),
    "softmax_axis0": lambda x: pt.softmax(x, 0),
    "log_softmax": lambda x: pt.log_softmax(x),
}


@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
def test_pullback_matches_finite_differences(name: str) -> None:
    check_pullback(DIFFERENTIABLE[name], [MATRIX])


@pytest.mark.parametrize("name", list(DIFFERENTIABLE))
def test_pushforward_matches_finite_differences(name: str) -> None:
    check_pushforward(DIFFERENTIABLE[name], [MATRIX])


@pytest.mark.parametrize(
    "build",
    [
        lambda x: pt.sum(x, (0, 2)),
        lambda x: pt.prod(x, (0, 2), keepdims=True),
        lambda x: pt.max(x, (2, 0)),
        lambda x: pt.var(x, (1, 2)),
        lambda x: pt.log_softmax(x, (0, 1)),
    ],
)
def test_pullback_over_several_axes_of_a_cube(build: Build) -> None:
    check_pullback(build, [CUBE])


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_prod_derivative_is_the_product_of_the_others_with_zeros(axis: int | None) -> None:
    # Row 0 holds one zero, row 1 two, row 2 none; a product is multilinear, so central
    # differences are exact even at the zeros.
    check_pullback(lambda x: pt.prod(x, axis), [WITH_ZEROS])
    check_pushforward(lambda x: pt.prod(x, axis), [WITH_ZEROS])


def test_prod_derivative_values_at_zeros() -> None:
    x = pt.matrix("x")
    (gradient,) = evaluate([pt.grad(pt.sum(pt.prod(x, 1)), x)], {x: WITH_ZEROS})
    expected = np.array([[-9.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [-3.0, 2.25, -9.0, -1.5]])
    np.testing.assert_allclose(gradient, expected)


@pytest.mark.parametrize(("reduce", "value"), [(pt.max, 3.0), (pt.min, -1.0)])
def test_extremum_gradient_is_shared_evenly_among_ties(
    reduce: Callable[..., Variable], value: float
) -> None:
    x = pt.matrix("x")
    values = np.array([[value, 0.5, value, value], [0.5, value, 0.0, 1.0]])
    (gradient,) = evaluate([pt.grad(pt.sum(reduce(x, 1)), x)], {x: values})
    third = 1.0 / 3.0
    np.testing.assert_allclose(gradient, [[third, 0.0, third, third], [0.0, 1.0, 0.0, 0.0]])
    (tangent,) = pt.jvp([reduce(x, 1)], [x], [pt.constant(np.ones((2, 4)))])
    np.testing.assert_allclose(evaluate([tangent], {x: values})[0], [1.0, 1.0])


@pytest.mark.parametrize(
    "build",
    [
        lambda x: pt.grad(pt.prod(x), x),
        lambda x: pt.grad(pt.logsumexp(x), x),
        lambda x: pt.grad(pt.sum(pt.log_softmax(x, 0) * np.arange(12.0).reshape(3, 4)), x),
        lambda x: pt.grad(pt.std(x), x),
        lambda x: pt.grad(pt.sum(pt.cumprod(x, 1)), x),
    ],
)
def test_second_derivatives_match_finite_differences(build: Build) -> None:
    check_pullback(build, [MATRIX])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradients_keep_the_input_dtype(dtype: str) -> None:
    x = pt.matrix("x", dtype=dtype)
    costs = [pt.max(x), pt.prod(x), pt.logsumexp(x), pt.sum(pt.cumprod(x, 0)), pt.var(x)]
    for cost in costs:
        assert cost.dtype == dtype
        gradient = pt.grad(cost, x)
        assert gradient.dtype == dtype
        check_graph(Graph([x], [gradient]))


def test_softmax_gradient_is_finite_for_large_inputs() -> None:
    x = pt.vector("x")
    weights = np.array([1.0, -2.0, 0.5])
    cost = pt.sum(pt.log_softmax(x) * weights)
    (gradient,) = evaluate([pt.grad(cost, x)], {x: [1000.0, 1000.0, 0.0]})
    np.testing.assert_allclose(gradient, weights - np.sum(weights) * np.array([0.5, 0.5, 0.0]))


@pytest.mark.parametrize(
    "op", [Sum((0,)), Prod((0,)), Max((0,)), Min((0,)), CumSum(0), CumProd(0, reverse=True)]
)
def test_integer_inputs_get_no_derivative(op: Op) -> None:
    x = pt.vector("x", dtype="int32")
    y = op(x)
    cotangent = pt.ones_like(y)
    assert op.pullback((x,), (y,), (pt.cast(cotangent, "float64"),)) == (None,)
    assert op.pushforward((x,), (y,), (pt.cast(x, "float64"),)) == (None,)


@pytest.mark.parametrize("op", [AllTrue((0,)), AnyTrue((0,)), Argmax(0), Argmin(None)])
def test_logical_and_index_reductions_are_not_differentiable(op: Op) -> None:
    x = pt.vector("x")
    y = op(x)
    assert op.pullback((x,), (y,), (pt.ones_like(y),)) == (None,)
    assert op.pushforward((x,), (y,), (pt.ones_like(x),)) == (None,)


def test_index_used_as_a_value_is_a_constant_for_the_gradient() -> None:
    x = pt.vector("x")
    (gradient,) = evaluate([pt.grad(pt.sum(x * pt.argmax(x)), x)], {x: [0.1, 0.9, 0.5]})
    np.testing.assert_allclose(gradient, [1.0, 1.0, 1.0])


def test_missing_cotangents_give_no_derivative() -> None:
    x = pt.matrix("x")
    for op in (Sum((0,)), Prod((1,)), Max((0,)), CumSum(1), CumProd(0)):
        assert op.pullback((x,), (op(x),), (None,)) == (None,)
        assert op.pushforward((x,), (op(x),), (None,)) == (None,)


@pytest.mark.parametrize("build", [
    lambda x: pt.logsumexp(x, axis=1).sum(),
    lambda x: (pt.softmax(x, axis=1) * x).sum(),
    lambda x: pt.log_softmax(x, axis=0)[0].sum(),
    lambda x: pt.special.logsumexp(x, axis=1, b=2.0).sum(),
], ids=["logsumexp", "softmax", "log_softmax", "logsumexp_b"])
def test_the_stabilizing_shift_has_no_derivative(build: Build) -> None:
    """The maximum shifted out is under stop_gradient (as JAX's): the value does not
    depend on it, so the gradient has no mask of maximal elements (`Eq`) to cancel, and
    is still right, to second order, with ties and infinities in the input."""
    x = pt.matrix("x", shape=(3, 4))
    (gradient,) = pt.grad(build(x), [x])
    optimized = rewrite.optimize(Graph([x], [gradient]), "fast_run")
    assert not any("Eq" in str(node.op) for node in optimized.nodes), optimized.nodes
    check_pullback(build, [np.array([[1.0, 1.0, 0.5, -2.0], [3.0, -1.0, 3.0, 0.0],
                                     [0.2, 0.1, -0.3, 0.4]])])
    check_pullback(lambda x: pt.grad(build(x), [x])[0].sum(),
                   [np.random.default_rng(1).normal(size=(3, 4))])
