"""The autodiff API: `grad` (lists, known_grads, disconnected inputs, errors), `vjp`,
`jvp`, `jacobian`, `hessian` and repeated differentiation, against closed forms and
finite differences."""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, check_graph, evaluate
from fgraph.op import Array
from tests.ops.checks import check_pushforward

X_VALUE = np.array([0.5, -1.2, 2.0])
Y_VALUE = np.array([1.5, 0.3, -0.7])


def values_of(outputs: list[Variable], inputs: dict[Variable, Array]) -> list[Array]:
    check_graph(Graph(list(inputs), outputs))
    return evaluate(outputs, inputs)


def test_grad_of_one_variable_and_of_a_list() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    cost = (pt.exp(x) * y).sum()
    single = pt.grad(cost, x)
    assert isinstance(single, Variable)
    both = pt.grad(cost, [x, y])
    assert len(both) == 2
    got = values_of([single, *both], {x: X_VALUE, y: Y_VALUE})
    np.testing.assert_allclose(got[0], np.exp(X_VALUE) * Y_VALUE)
    np.testing.assert_allclose(got[1], np.exp(X_VALUE) * Y_VALUE)
    np.testing.assert_allclose(got[2], np.exp(X_VALUE))
    assert pt.grad(cost, []) == []


def test_grad_of_a_variable_and_an_intermediate_it_computes() -> None:
    """Asking for an intermediate and its input together gives both (not 'disconnected')."""
    x = pt.vector("x")
    hidden = pt.exp(x)
    cost = (hidden * hidden).sum()
    by_x, by_hidden = pt.grad(cost, [x, hidden])
    got_x, got_hidden = values_of([by_x, by_hidden], {x: X_VALUE})
    np.testing.assert_allclose(got_hidden, 2 * np.exp(X_VALUE))
    np.testing.assert_allclose(got_x, 2 * np.exp(2 * X_VALUE))


def test_grad_of_the_cost_itself_and_of_a_shared_subexpression() -> None:
    x = pt.scalar("x")
    cost = x * x
    assert values_of([pt.grad(cost, cost)], {x: np.array(3.0)})[0] == 1.0
    shared = pt.exp(x)
    total = shared * shared + shared
    (got,) = values_of([pt.grad(total, x)], {x: np.array(0.5)})
    np.testing.assert_allclose(got, 2 * np.exp(1.0) + np.exp(0.5))


def test_known_grads_without_a_cost() -> None:
    x = pt.vector("x")
    hidden = pt.exp(x)
    cotangent = pt.constant(Y_VALUE)
    (got,) = values_of([pt.grad(None, x, known_grads={hidden: cotangent})], {x: X_VALUE})
    np.testing.assert_allclose(got, Y_VALUE * np.exp(X_VALUE))


def test_known_grads_replace_what_the_cost_sends() -> None:
    """As PyTensor: a known gradient is the variable's whole gradient (the cost's
    contribution through it is not added), and one given for the cost replaces the 1."""
    x = pt.vector("x")
    hidden = pt.exp(x)
    cost = (hidden * 2).sum() + x.sum()
    gradient = pt.grad(cost, x, known_grads={hidden: pt.constant(Y_VALUE)})
    (got,) = values_of([gradient], {x: X_VALUE})
    np.testing.assert_allclose(got, Y_VALUE * np.exp(X_VALUE) + 1)
    scalar = pt.scalar("s")
    square = scalar * scalar
    scaled = pt.grad(square, scalar, known_grads={square: pt.constant(np.float64(2.0))})
    assert values_of([scaled], {scalar: np.array(3.0)})[0] == 12.0  # 2 * 2s


def test_known_grads_checks_shapes_and_casts_dtypes() -> None:
    x = pt.vector("x", shape=(3,))
    hidden = pt.exp(x)
    with pytest.raises(TypeError, match="known_grads"):
        pt.grad(None, x, known_grads={hidden: pt.constant(np.ones(4))})
    with pytest.raises(TypeError, match="dtype int64"):
        pt.grad(None, x, known_grads={pt.cast(x, "int64"): pt.constant(np.ones(3, "int64"))})
    single = pt.grad(None, x, known_grads={hidden: pt.constant(np.ones(3, "float32"))})
    assert single.dtype == "float64"


def test_disconnected_inputs_raise_naming_the_variable() -> None:
    x, unused = pt.vector("x"), pt.vector("unused_input")
    cost = pt.exp(x).sum()
    with pytest.raises(pt.DisconnectedInputError, match="unused_input"):
        pt.grad(cost, [x, unused])
    assert issubclass(pt.DisconnectedInputError, ValueError)
    by_x, zeros = pt.grad(cost, [x, unused], disconnected_inputs="ignore")
    got_x, got_zeros = values_of([by_x, zeros], {x: X_VALUE, unused: Y_VALUE[:2]})
    np.testing.assert_allclose(got_x, np.exp(X_VALUE))
    np.testing.assert_array_equal(got_zeros, np.zeros(2))


def test_gradients_stop_at_integer_variables() -> None:
    x = pt.vector("x")
    through_int = pt.cast(pt.cast(x, "int64"), "float64")
    with pytest.raises(pt.DisconnectedInputError):
        pt.grad(through_int.sum(), x)
    gradient = pt.grad((through_int * x).sum(), x)
    (got,) = values_of([gradient], {x: X_VALUE})
    np.testing.assert_allclose(got, X_VALUE.astype("int64"))


def test_argument_errors() -> None:
    x = pt.vector("x")
    count = pt.scalar("count", dtype="int64")
    with pytest.raises(TypeError, match="count has dtype int64"):
        pt.grad((x * count).sum(), count)
    with pytest.raises(TypeError, match="scalar"):
        pt.grad(pt.exp(x), x)
    with pytest.raises(TypeError, match="float"):
        pt.grad(count * 2, x)
    with pytest.raises(ValueError, match="cost or known_grads"):
        pt.grad(None, x)
    with pytest.raises(TypeError, match="variables"):
        pt.grad(x.sum(), cast(list[Variable], [np.ones(3)]))


def test_grad_dtypes_follow_wrt() -> None:
    x32 = pt.vector("x32", dtype="float32")
    y64 = pt.vector("y64")
    g32, g64 = pt.grad((x32 * y64).sum(), [x32, y64])
    assert (g32.dtype, g64.dtype) == ("float32", "float64")


def test_vjp() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    first, second = pt.exp(x) * y, x * 3
    cotangents = [pt.constant(Y_VALUE), pt.constant(X_VALUE)]
    unused = pt.vector("unused")
    gx, gy, gu = pt.vjp([first, second], [x, y, unused], cotangents)
    got = values_of([gx, gy, gu], {x: X_VALUE, y: Y_VALUE, unused: np.ones(2)})
    np.testing.assert_allclose(got[0], Y_VALUE * np.exp(X_VALUE) * Y_VALUE + 3 * X_VALUE)
    np.testing.assert_allclose(got[1], Y_VALUE * np.exp(X_VALUE))
    np.testing.assert_array_equal(got[2], np.zeros(2))
    with pytest.raises(ValueError, match="2 outputs but 1 cotangents"):
        pt.vjp([first, second], [x], cotangents[:1])


def test_vjp_sums_cotangents_of_a_repeated_output() -> None:
    x = pt.vector("x")
    output = pt.exp(x)
    ones = pt.constant(np.ones(3))
    (got,) = values_of(pt.vjp([output, output], [x], [ones, ones]), {x: X_VALUE})
    np.testing.assert_allclose(got, 2 * np.exp(X_VALUE))


def test_jvp_matches_finite_differences() -> None:
    check_pushforward(lambda x, y: pt.exp(x * y) / (y * y + 1), [X_VALUE, Y_VALUE])
    check_pushforward(lambda x: (x**3 * pt.exp(x)).sum() * x, [X_VALUE])


def test_jvp_zero_for_independent_outputs_and_errors() -> None:
    x, other = pt.vector("x"), pt.vector("other")
    dependent, independent = pt.exp(x), other * 2
    tangents = pt.jvp([dependent, independent, x], [x], [pt.constant(Y_VALUE)])
    got = values_of(tangents, {x: X_VALUE, other: np.ones(2)})
    np.testing.assert_allclose(got[0], np.exp(X_VALUE) * Y_VALUE)
    np.testing.assert_array_equal(got[1], np.zeros(2))
    np.testing.assert_allclose(got[2], Y_VALUE)
    with pytest.raises(ValueError, match="1 inputs but 2 tangents"):
        pt.jvp([dependent], [x], [pt.constant(Y_VALUE)] * 2)
    with pytest.raises(TypeError, match="dtype int64"):
        pt.jvp([dependent], [pt.vector("n", dtype="int64")], [pt.constant(np.ones(3, "int64"))])
    with pytest.raises(TypeError, match="jvp tangent"):
        pt.jvp([dependent], [pt.vector("s", shape=(3,))], [pt.constant(np.ones(4))])


def test_jacobian_against_closed_forms() -> None:
    x = pt.vector("x", shape=(3,))
    matrix = np.arange(6.0).reshape(2, 3)
    linear = pt.matmul(pt.constant(matrix), x)
    (got,) = values_of([pt.jacobian(linear, x)], {x: X_VALUE})
    np.testing.assert_allclose(got, matrix)
    elementwise = pt.jacobian(pt.exp(x) * x, x)
    assert elementwise.type.shape == (3, 3)
    (got,) = values_of([elementwise], {x: X_VALUE})
    np.testing.assert_allclose(got, np.diag((1 + X_VALUE) * np.exp(X_VALUE)))
    (got,) = values_of([pt.jacobian((x * x).sum(), x)], {x: X_VALUE})
    np.testing.assert_allclose(got, 2 * X_VALUE)


def test_jacobian_with_respect_to_a_matrix_and_of_empty_and_unknown_vectors() -> None:
    x = pt.vector("x", shape=(2,))
    w = pt.matrix("w", shape=(2, 3))
    jac = pt.jacobian(pt.matmul(x, w), w)  # d (x @ w)[j] / d w[i, k] = x[i] * (j == k)
    assert jac.type.shape == (3, 2, 3)
    w_value = np.ones((2, 3))
    (got,) = values_of([jac], {x: X_VALUE[:2], w: w_value})
    expected = np.einsum("i,jk->jik", X_VALUE[:2], np.eye(3))
    np.testing.assert_allclose(got, expected)
    empty = pt.jacobian(pt.exp(pt.vector("e", shape=(0,))), w)
    assert empty.type.shape == (0, 2, 3)
    assert values_of([empty], {w: w_value})[0].shape == (0, 2, 3)
    v = pt.vector("v")  # unknown length: one step of a loop per entry
    unrelated = pt.jacobian(pt.exp(v), w)
    assert unrelated.type.shape == (None, 2, 3)
    (got,) = values_of([unrelated], {v: np.ones(4), w: w_value})
    np.testing.assert_array_equal(got, np.zeros((4, 2, 3)))


def test_jacobian_and_hessian_of_unknown_lengths_are_loops() -> None:
    x = pt.vector("x")
    jac = pt.jacobian(pt.sin(x) * x.sum(), x)
    hess = pt.hessian((pt.sin(x) * x).sum(), x)
    assert any(isinstance(node.op, pt.Scan) for node in Graph([x], [jac, hess]).nodes)
    got_jac, got_hess = values_of([jac, hess], {x: X_VALUE})
    np.testing.assert_allclose(
        got_jac, np.diag(np.cos(X_VALUE)) * X_VALUE.sum() + np.sin(X_VALUE)[:, None]
    )
    np.testing.assert_allclose(got_hess, np.diag(2 * np.cos(X_VALUE) - X_VALUE * np.sin(X_VALUE)))
    (empty,) = values_of([jac], {x: np.zeros(0)})
    assert empty.shape == (0, 0)


def test_hessian_against_closed_forms() -> None:
    x = pt.vector("x", shape=(3,))
    matrix = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, -1.0], [0.0, -1.0, 4.0]])
    quadratic = pt.dot(x, pt.dot(pt.constant(matrix), x)) / 2
    (got,) = values_of([pt.hessian(quadratic, x)], {x: X_VALUE})
    np.testing.assert_allclose(got, matrix)
    smooth = pt.hessian((pt.exp(x) * x).sum() + x[0] * x[1], x)
    (got,) = values_of([smooth], {x: X_VALUE})
    expected = np.diag((2 + X_VALUE) * np.exp(X_VALUE))
    expected[0, 1] = expected[1, 0] = 1.0
    np.testing.assert_allclose(got, expected)
    (linear,) = values_of([pt.hessian((x * 2).sum(), x)], {x: X_VALUE})
    np.testing.assert_array_equal(linear, np.zeros((3, 3)))


def test_third_derivative_of_a_composite_expression() -> None:
    """d^k/dx^k sum(x^3 e^x): (3x^2 + x^3) e^x, (6x + 6x^2 + x^3) e^x,
    (6 + 18x + 9x^2 + x^3) e^x."""
    x = pt.vector("x")
    first = pt.grad((x**3 * pt.exp(x)).sum(), x)
    second = pt.grad(first.sum(), x)
    third = pt.grad(second.sum(), x)
    got = values_of([first, second, third], {x: X_VALUE})
    v, e = X_VALUE, np.exp(X_VALUE)
    np.testing.assert_allclose(got[0], (3 * v**2 + v**3) * e)
    np.testing.assert_allclose(got[1], (6 * v + 6 * v**2 + v**3) * e)
    np.testing.assert_allclose(got[2], (6 + 18 * v + 9 * v**2 + v**3) * e)


def test_mixed_third_derivative_of_a_quotient() -> None:
    """f(x, y) = x^2 / y: d/dy d/dx d/dx f = -2 / y^2."""
    x, y = pt.scalar("x"), pt.scalar("y")
    by_x = pt.grad(x * x / y, x)
    by_xx = pt.grad(by_x, x)
    by_xxy = pt.grad(by_xx, y)
    got = values_of([by_x, by_xx, by_xxy], {x: np.array(1.5), y: np.array(0.5)})
    np.testing.assert_allclose(got, [2 * 1.5 / 0.5, 2 / 0.5, -2 / 0.25])


def test_forward_over_reverse() -> None:
    """jvp of a gradient is a Hessian-vector product: for sum(x^3 e^x) it is f''(x) * v."""
    x = pt.vector("x")
    gradient = pt.grad((x**3 * pt.exp(x)).sum(), x)
    (product,) = pt.jvp([gradient], [x], [pt.constant(Y_VALUE)])
    (got,) = values_of([product], {x: X_VALUE})
    v, e = X_VALUE, np.exp(X_VALUE)
    np.testing.assert_allclose(got, (6 * v + 6 * v**2 + v**3) * e * Y_VALUE)


def test_jvp_and_vjp_are_adjoint_with_an_intermediate_wrt() -> None:
    """<vjp(c), t> = <c, jvp(t)>, also when wrt holds an intermediate and its input."""
    x = pt.vector("x", shape=(3,))
    hidden = pt.exp(x)
    output = hidden * x
    rng = np.random.default_rng(0)
    tangent_x, tangent_h, cotangent = (pt.constant(rng.normal(size=3)) for _ in range(3))
    (forward,) = pt.jvp([output], [x, hidden], [tangent_x, tangent_h])
    back_x, back_h = pt.vjp([output], [x, hidden], [cotangent])
    left = (back_x * tangent_x).sum() + (back_h * tangent_h).sum()
    right = (cotangent * forward).sum()
    got_left, got_right = values_of([left, right], {x: X_VALUE})
    np.testing.assert_allclose(got_left, got_right)
