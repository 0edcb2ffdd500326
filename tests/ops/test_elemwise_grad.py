"""Derivatives of the elementwise functions: reverse and forward mode against finite
differences (same shapes and broadcast layouts), float32 graphs that stay float32,
the documented conventions at kinks and ties, and third derivatives against closed forms."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, check_graph, evaluate
from tests.ops.checks import check_pullback, check_pushforward
from tests.ops.elemwise_cases import DIFFERENTIABLE, Array, Case, sample


def same_shapes(case: Case) -> tuple[Callable[..., Variable], list[Array]]:
    return case.build, sample(case, ((2, 3),) * case.nin)


def crossed_broadcast(case: Case) -> tuple[Callable[..., Variable], list[Array]]:
    """Input 0 is a column (static length-1 axis 1), input 1 a row (rank padded), input 2
    a full matrix: every input is broadcast against the others."""
    shapes = ((2,), (3,), (2, 3))[: case.nin]

    def build(*variables: Variable) -> Variable:
        column = pt.expand_dims(variables[0], 1)
        return case.build(column, *variables[1:])

    return build, sample(case, shapes, seed=1)


LAYOUTS = {"same": same_shapes, "crossed": crossed_broadcast}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=lambda case: case.name)
def test_pullback_matches_finite_differences(case: Case, layout: str) -> None:
    build, values = LAYOUTS[layout](case)
    check_pullback(build, values, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=lambda case: case.name)
def test_pushforward_matches_finite_differences(case: Case, layout: str) -> None:
    build, values = LAYOUTS[layout](case)
    check_pushforward(build, values, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=lambda case: case.name)
def test_float32_gradients_stay_float32(case: Case) -> None:
    """No partial introduces a float64 constant: the whole gradient graph is float32."""
    values = [value.astype("float32") for value in sample(case, ((4,),) * case.nin)]
    variables = [pt.vector(f"x{number}", dtype="float32") for number in range(case.nin)]
    gradients = pt.grad(pt.sum(case.build(*variables)), variables)
    graph = Graph(variables, gradients)
    check_graph(graph)
    widened = [
        str(node.op) for node in graph.nodes if "float64" in {t.dtype for t in node.output_types}
    ]
    assert not widened, f"float64 nodes in a float32 gradient: {widened}"
    got = evaluate(gradients, dict(zip(variables, values)))
    wide = [pt.vector(f"w{number}") for number in range(case.nin)]
    expected = evaluate(pt.grad(pt.sum(case.build(*wide)), wide), dict(zip(wide, values)))
    for g, e in zip(got, expected):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, e, rtol=2e-4, atol=1e-5)


def gradients_at(build: Callable[..., Variable], *values: Array) -> list[Array]:
    """The gradient of sum(build(...)) with respect to each input, at `values`."""
    variables = [pt.tensor(f"x{n}", shape=v.shape) for n, v in enumerate(values)]
    gradients = pt.grad(pt.sum(build(*variables)), variables, disconnected_inputs="ignore")
    check_graph(Graph(variables, gradients))
    return evaluate(gradients, dict(zip(variables, values)))


def test_abs_has_zero_derivative_at_zero() -> None:
    (gradient,) = gradients_at(pt.abs, np.array([-2.0, 0.0, 3.0]))
    np.testing.assert_array_equal(gradient, [-1.0, 0.0, 1.0])


def test_pow_derivative_in_the_exponent_is_zero_at_a_zero_base() -> None:
    dx, dy = gradients_at(pt.pow, np.array([0.0, 0.0, 2.0]), np.array([2.0, 0.5, 3.0]))
    np.testing.assert_allclose(dx, [0.0, np.inf, 12.0])
    np.testing.assert_allclose(dy, [0.0, 0.0, 8.0 * np.log(2.0)])
    # Second derivatives stay finite at x == 0 (the safe logarithm has a zero slope there).
    def dy_of_pow(x: Variable, y: Variable) -> Variable:
        return pt.grad(pt.sum(x**y), y)

    _, dy_dy = gradients_at(dy_of_pow, np.zeros(2), np.array([2.0, 3.0]))
    np.testing.assert_array_equal(dy_dy, [0.0, 0.0])


def test_pow_with_integer_exponent_zero_has_zero_derivative_at_zero() -> None:
    x = pt.vector("x")
    n = pt.vector("n", dtype="int64")
    gradient = pt.grad(pt.sum(x**n), x)
    (got,) = evaluate([gradient], {x: np.array([0.0, 0.0, 2.0]), n: np.array([0, 1, 3])})
    np.testing.assert_array_equal(got, [0.0, 1.0, 12.0])


def test_maximum_and_minimum_split_ties_half_and_half() -> None:
    x, y = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 1.0])
    larger, smaller = [[0.0, 0.5, 1.0], [1.0, 0.5, 0.0]], [[1.0, 0.5, 0.0], [0.0, 0.5, 1.0]]
    np.testing.assert_array_equal(gradients_at(pt.maximum, x, y), larger)
    np.testing.assert_array_equal(gradients_at(pt.minimum, x, y), smaller)


def test_clip_gives_the_derivative_to_x_on_the_bounds() -> None:
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    dx, dlo, dhi = gradients_at(pt.clip, x, np.full(5, -1.0), np.full(5, 1.0))
    np.testing.assert_array_equal(dx, [0.0, 1.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(dlo, [1.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(dhi, [0.0, 0.0, 0.0, 0.0, 1.0])
    # Crossed bounds: the result is hi everywhere, and so is the derivative.
    dx, dlo, dhi = gradients_at(pt.clip, x, np.full(5, 1.0), np.full(5, -1.0))
    np.testing.assert_array_equal(dx + dlo, np.zeros(5))
    np.testing.assert_array_equal(dhi, np.ones(5))


def test_where_sends_the_derivative_to_the_chosen_branch() -> None:
    cond = pt.vector("c")  # a float condition (nonzero is true) has no derivative
    x, y = pt.vector("x"), pt.vector("y")
    cost = pt.sum(pt.where(cond, x * 3, y))
    gx, gy = pt.grad(cost, [x, y])
    with pytest.raises(pt.DisconnectedInputError):
        pt.grad(cost, cond)
    mask = np.array([0.5, 0.0, -1.0])
    got = evaluate([gx, gy], {cond: mask, x: np.ones(3), y: np.ones(3)})
    np.testing.assert_array_equal(got[0], [3.0, 0.0, 3.0])
    np.testing.assert_array_equal(got[1], [0.0, 1.0, 0.0])


@pytest.mark.parametrize(
    "build",
    [pt.floor, pt.ceil, pt.trunc, pt.round, pt.sign, lambda x: pt.lt(x, 0), pt.isnan, pt.isinf],
)
def test_piecewise_constant_and_discrete_functions_have_no_derivative(
    build: Callable[[Variable], Variable],
) -> None:
    x = pt.vector("x")
    with pytest.raises(pt.DisconnectedInputError):
        pt.grad(pt.sum(pt.cast(build(x), "float64")), x)


def test_cast_to_integer_cuts_the_derivative_and_float_casts_pass_it() -> None:
    x = pt.vector("x", dtype="float32")
    with pytest.raises(pt.DisconnectedInputError):
        pt.grad(pt.sum(pt.cast(pt.cast(x, "int64"), "float64")), x)
    gradient = pt.grad(pt.sum(pt.cast(x, "float64") * 2), x)
    assert gradient.dtype == "float32"
    (got,) = evaluate([gradient], {x: np.ones(2, "float32")})
    np.testing.assert_array_equal(got, [2.0, 2.0])


def test_jvp_through_a_static_broadcast_has_the_output_shape() -> None:
    x = pt.tensor("x", shape=(1, 3))
    y = pt.tensor("y", shape=(2, 1))
    direction = pt.constant(np.array([[1.0, 2.0, 3.0]]))
    tangents = pt.jvp([x * y, x + y, pt.exp(x) - y], [x], [direction])
    assert all(tangent.type.shape == (2, 3) for tangent in tangents)
    got = evaluate(tangents, {x: np.zeros((1, 3)), y: np.array([[2.0], [5.0]])})
    for result, expected in zip(got, ([[2.0, 4.0, 6.0], [5.0, 10.0, 15.0]], [[1.0, 2.0, 3.0]] * 2)):
        np.testing.assert_array_equal(result, expected)
    np.testing.assert_array_equal(got[2], got[1])


def nth_derivative(build: Callable[[Variable], Variable], order: int, values: Array) -> Array:
    """d^order/dx^order of an elementwise function, by repeated reverse mode."""
    x = pt.vector("x")
    derivative = build(x)
    for _ in range(order):
        derivative = pt.grad(pt.sum(derivative), x)
    check_graph(Graph([x], [derivative]))
    (got,) = evaluate([derivative], {x: values})
    return got


POINTS = np.array([-1.3, -0.4, 0.2, 0.9, 1.7])


def test_third_derivative_of_tanh() -> None:
    t = np.tanh(POINTS)
    expected = (1 - t**2) * (6 * t**2 - 2)
    np.testing.assert_allclose(nth_derivative(pt.tanh, 3, POINTS), expected, rtol=1e-12)


def test_second_and_third_derivatives_of_exp_sin_times_square() -> None:
    def f(x: Variable) -> Variable:
        return pt.exp(pt.sin(x)) * x**2

    x, s, c = POINTS, np.sin(POINTS), np.cos(POINTS)
    g = np.exp(s)
    g1 = c * g
    g2 = (c**2 - s) * g
    g3 = (c**3 - 3 * s * c - c) * g
    second = g2 * x**2 + 4 * x * g1 + 2 * g
    third = g3 * x**2 + 6 * x * g2 + 6 * g1
    np.testing.assert_allclose(nth_derivative(f, 2, POINTS), second, rtol=1e-12)
    np.testing.assert_allclose(nth_derivative(f, 3, POINTS), third, rtol=1e-12)


def test_forward_over_reverse_second_derivative_of_sigmoid() -> None:
    x = pt.vector("x")
    first = pt.grad(pt.sum(pt.sigmoid(x)), x)
    (second,) = pt.jvp([first], [x], [pt.ones_like(x)])
    (got,) = evaluate([second], {x: POINTS})
    s = 1 / (1 + np.exp(-POINTS))
    np.testing.assert_allclose(got, s * (1 - s) * (1 - 2 * s), rtol=1e-12)
