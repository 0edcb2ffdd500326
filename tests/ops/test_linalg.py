"""Linear algebra: `matmul` / `@`, `dot` and `outer` against NumPy, one `MatMul` op
underneath, static shapes, errors naming both shapes, and derivatives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import (
    Graph,
    Input,
    ShapeError,
    TensorType,
    Variable,
    check_graph,
    evaluate,
    root_variables,
)
from fgraph.op import Array
from ops.dimshuffle import DimShuffle
from tests.ops.checks import check_pullback, check_pushforward, run

Shape = tuple[int, ...]
Product = Callable[[Any, Any], Variable]

MATMUL_SHAPES: list[tuple[Shape, Shape]] = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((3,), (5, 3, 4)),
    ((5, 2, 3), (3,)),
    ((5, 2, 3), (5, 3, 4)),
    ((6, 5, 2, 3), (5, 3, 4)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 3)),
    ((0,), (0,)),
]
DOT_SHAPES: list[tuple[Shape, Shape]] = [
    ((), ()),
    ((), (2, 3)),
    ((2, 3), ()),
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)),
    ((3,), (5, 3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((6, 2, 3), (5, 3, 4)),
    ((7, 6, 2, 3), (5, 3, 4)),
    ((2, 0), (0, 3)),
]


def values(shape: Shape, dtype: str, seed: int) -> Array:
    rng = np.random.default_rng(seed)
    if dtype.startswith("int"):
        return rng.integers(-4, 5, size=shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def static_input(value: Array, name: str) -> Input:
    return Input(TensorType(value.dtype.name, value.shape), name)


def check_against_numpy(
    function: Product, reference: Callable[[Array, Array], Any], a: Array, b: Array
) -> None:
    """Unknown and fully static input shapes; values, dtype and inferred shape."""
    expected = np.asarray(reference(a, b))
    got = run(function, [a, b])
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    x, y = static_input(a, "x"), static_input(b, "y")
    product = function(x, y)
    check_graph(Graph([x, y], [product]))
    assert product.type == TensorType(expected.dtype.name, expected.shape)
    (evaluated,) = evaluate([product], {x: a, y: b})
    np.testing.assert_allclose(evaluated, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
@pytest.mark.parametrize(("x_shape", "y_shape"), MATMUL_SHAPES)
def test_matmul_matches_numpy(x_shape: Shape, y_shape: Shape, dtype: str) -> None:
    a, b = values(x_shape, dtype, 0), values(y_shape, dtype, 1)
    check_against_numpy(pt.matmul, np.matmul, a, b)
    check_against_numpy(lambda x, y: x @ y, np.matmul, a, b)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize(("x_shape", "y_shape"), DOT_SHAPES)
def test_dot_matches_numpy(x_shape: Shape, y_shape: Shape, dtype: str) -> None:
    a, b = values(x_shape, dtype, 0), values(y_shape, dtype, 1)
    check_against_numpy(pt.dot, np.dot, a, b)


@pytest.mark.parametrize(
    ("x_dtype", "y_dtype"),
    [("float32", "float64"), ("int32", "float32"), ("int8", "int16"), ("bool", "bool")],
)
def test_matmul_promotes_dtypes_like_numpy(x_dtype: str, y_dtype: str) -> None:
    a, b = values((2, 3), "int64", 0).astype(x_dtype), values((3, 2), "int64", 1).astype(y_dtype)
    check_against_numpy(pt.matmul, np.matmul, a, b)
    check_against_numpy(pt.dot, np.dot, a, b)


@pytest.mark.parametrize(("x_shape", "y_shape"), [((3,), (4,)), ((0,), (2,)), ((), (3,))])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_outer_matches_numpy(x_shape: Shape, y_shape: Shape, dtype: str) -> None:
    a, b = values(x_shape, dtype, 0), values(y_shape, dtype, 1)
    check_against_numpy(pt.outer, np.outer, a, b)


def test_outer_flattens_matrices() -> None:
    a, b = values((2, 3), "float64", 0), values((4,), "float64", 1)
    check_against_numpy(pt.outer, np.outer, a, b)


def test_matmul_operator_with_arrays_on_either_side() -> None:
    x = pt.matrix("x", shape=(2, 3))
    a, b = values((2, 3), "float64", 0), values((3, 4), "float64", 1)
    (right,) = evaluate([x @ b], {x: a})
    (left,) = evaluate([b.T @ x.T], {x: a})
    np.testing.assert_allclose(right, a @ b)
    np.testing.assert_allclose(left, b.T @ a.T)


def test_one_core_op() -> None:
    """Every product is one MatMul node over equal-rank inputs, with DimShuffles around."""
    x, y = pt.tensor("x", shape=(None, 2, 3)), pt.vector("y", shape=(3,))
    for product in (pt.matmul(x, y), pt.dot(x, y), pt.dot(x, pt.tensor("z", shape=(4, 3, 5)))):
        ops = [node.op for node in Graph(_inputs_of(product), [product]).nodes]
        assert sum(isinstance(op, pt.MatMul) for op in ops) == 1
        assert all(isinstance(op, (pt.MatMul, DimShuffle)) for op in ops)
    assert pt.MatMul() == pt.MatMul() and hash(pt.MatMul()) == hash(pt.MatMul())
    assert str(pt.MatMul()) == "MatMul"


def _inputs_of(variable: Variable) -> list[Variable]:
    return [root for root in root_variables([variable]) if isinstance(root, Input)]


def test_static_batch_broadcasting() -> None:
    """Batch axes broadcast along static length 1; unknown lengths stay unknown."""
    x = pt.tensor("x", shape=(1, 5, 2, 3))
    y = pt.tensor("y", shape=(4, 1, 3, 7))
    assert pt.matmul(x, y).type.shape == (4, 5, 2, 7)
    z = pt.tensor("z", shape=(None, 3, 7))
    assert pt.matmul(x, z).type.shape == (1, 5, 2, 7)
    assert pt.matmul(pt.tensor("w", shape=(6, None, 3)), pt.matrix("m")).type.shape == (
        6,
        None,
        None,
    )


@pytest.mark.parametrize(
    ("function", "x_shape", "y_shape"),
    [
        (pt.matmul, (2, 3), (4, 5)),
        (pt.matmul, (3,), (4,)),
        (pt.matmul, (2, 3), (4,)),
        (pt.matmul, (3,), (4, 2)),
        (pt.matmul, (7, 2, 3), (4, 5)),
        (pt.dot, (2, 3), (4, 5)),
        (pt.dot, (6, 2, 3), (7, 4, 5)),
        (pt.dot, (3,), (4,)),
    ],
)
def test_contracted_length_mismatch_names_both_shapes(
    function: Product, x_shape: Shape, y_shape: Shape
) -> None:
    x, y = pt.tensor("x", shape=x_shape), pt.tensor("y", shape=y_shape)
    with pytest.raises(ShapeError) as error:
        function(x, y)
    message = str(error.value)
    assert str(x_shape) in message and str(y_shape) in message


def test_matmul_op_errors_name_the_op_and_types() -> None:
    with pytest.raises(ShapeError, match=r"MatMul.*\(2, 3\).*\(4, 5\)"):
        pt.MatMul()(pt.matrix("x", shape=(2, 3)), pt.matrix("y", shape=(4, 5)))
    with pytest.raises(ShapeError, match="equal ranks"):
        pt.MatMul()(pt.matrix("x"), pt.tensor("y", shape=(None, None, None)))
    with pytest.raises(ShapeError, match="equal ranks"):
        pt.MatMul()(pt.vector("x"), pt.vector("y"))
    with pytest.raises(ShapeError, match="batch axes"):
        pt.MatMul()(pt.tensor("x", shape=(2, 3, 3)), pt.tensor("y", shape=(4, 3, 3)))
    with pytest.raises(ShapeError, match=r"rank >= 1.*\(\).*\(3,\)"):
        pt.matmul(pt.scalar("s"), pt.vector("v", shape=(3,)))


def test_runtime_contracted_mismatch_raises() -> None:
    x, y = pt.matrix("x"), pt.matrix("y")
    with pytest.raises(ValueError):
        evaluate([x @ y], {x: np.ones((2, 3)), y: np.ones((4, 5))})


GRADIENT_SHAPES: list[tuple[Shape, Shape]] = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((3,), (2, 3, 4)),
    ((2, 2, 3), (2, 3, 4)),
    ((0, 3), (3, 2)),
]


@pytest.mark.parametrize(("x_shape", "y_shape"), GRADIENT_SHAPES)
def test_matmul_derivatives(x_shape: Shape, y_shape: Shape) -> None:
    arrays = [values(x_shape, "float64", 0), values(y_shape, "float64", 1)]
    check_pullback(pt.matmul, arrays)
    check_pushforward(pt.matmul, arrays)


@pytest.mark.parametrize(
    ("x_shape", "y_shape"),
    [((), (2, 3)), ((2, 3), (3, 4)), ((3, 2, 3), (2, 3, 4)), ((3,), (2, 3, 4))],
)
def test_dot_derivatives(x_shape: Shape, y_shape: Shape) -> None:
    arrays = [values(x_shape, "float64", 0), values(y_shape, "float64", 1)]
    check_pullback(pt.dot, arrays)
    check_pushforward(pt.dot, arrays)


def test_outer_derivatives() -> None:
    arrays = [values((3,), "float64", 0), values((4,), "float64", 1)]
    check_pullback(pt.outer, arrays)
    check_pushforward(pt.outer, arrays)


def test_derivatives_through_broadcast_batch_axes() -> None:
    """A static-1 batch axis broadcasts forward and is summed over in the gradient."""

    def batched(x: Variable, y: Variable) -> Variable:
        return pt.matmul(DimShuffle((None, 0, 1))(x), y)  # (1, 2, 3) @ (4, 3, 5)

    def both_broadcast(x: Variable, y: Variable) -> Variable:
        return pt.matmul(DimShuffle((0, None, 1, 2))(x), DimShuffle((None, 0, 1, 2))(y))

    check_pullback(batched, [values((2, 3), "float64", 0), values((4, 3, 5), "float64", 1)])
    check_pushforward(batched, [values((2, 3), "float64", 0), values((4, 3, 5), "float64", 1)])
    arrays = [values((2, 4, 3), "float64", 0), values((3, 3, 5), "float64", 1)]
    check_pullback(both_broadcast, arrays)
    check_pushforward(both_broadcast, arrays)


def test_gradients_with_an_integer_operand() -> None:
    """The integer operand has no gradient; the float one matches the closed form."""
    x = pt.matrix("x", shape=(2, 3))
    m = pt.matrix("m", dtype="int64", shape=(3, 4))
    product = x @ m
    node = product.owner
    assert node is not None
    cotangent = pt.matrix("c", shape=(2, 4))
    assert node.op.pullback(node.inputs, node.outputs, (cotangent,))[1] is None
    x_value, m_value = values((2, 3), "float64", 0), values((3, 4), "int64", 1)
    (gradient,) = evaluate([pt.grad(product.sum(), x)], {x: x_value, m: m_value})
    np.testing.assert_allclose(gradient, np.ones((2, 4)) @ m_value.T)
    with pytest.raises(TypeError):
        pt.grad(product.sum(), m)


def test_float32_gradients_stay_float32() -> None:
    x = pt.matrix("x", dtype="float32", shape=(2, 3))
    y = pt.matrix("y", dtype="float64", shape=(3, 4))
    gx, gy = pt.grad((x @ y).sum(), [x, y])
    assert (gx.dtype, gy.dtype) == ("float32", "float64")
    a, b = values((2, 3), "float32", 0), values((3, 4), "float64", 1)
    got_x, got_y = evaluate([gx, gy], {x: a, y: b})
    np.testing.assert_allclose(got_x, np.ones((2, 4)) @ b.T, rtol=1e-6)
    np.testing.assert_allclose(got_y, a.T.astype("float64") @ np.ones((2, 4)), rtol=1e-6)


def test_second_derivative_of_a_quadratic_form() -> None:
    """d/dx of the gradient of x^T A x along a direction v is (A + A^T) v."""
    x = pt.vector("x", shape=(3,))
    a_value, x_value = values((3, 3), "float64", 0), values((3,), "float64", 1)
    direction = values((3,), "float64", 2)
    quadratic = pt.dot(x, pt.dot(pt.constant(a_value), x))
    gradient = pt.grad(quadratic, x)
    curvature = pt.grad(pt.dot(gradient, pt.constant(direction)), x)
    got_gradient, got_curvature = evaluate([gradient, curvature], {x: x_value})
    np.testing.assert_allclose(got_gradient, (a_value + a_value.T) @ x_value)
    np.testing.assert_allclose(got_curvature, (a_value + a_value.T) @ direction)
