"""`shape`, `reshape`, `flatten`, `specify_shape` and `broadcast_to`: values against
NumPy, static shapes against results, symbolic shapes, derivatives and clear errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import DTypeError, Graph, ShapeError, check_graph, evaluate
from ops.reshape_ops import Reshape
from ops.shape_vector import Shape, ShapeI, as_shape_vector, shape_i
from tests.ops.checks import check_pullback, check_pushforward, run
from tests.ops.shape_checks import evaluate_checked, run_static

Array = np.ndarray[Any, np.dtype[Any]]
DTYPES = ["float64", "float32", "int32", "bool"]


def sample(shape: tuple[int, ...], dtype: str = "float64", seed: int = 0) -> Array:
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


# --- shape ------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (2, 0, 4)])
def test_shape_matches_numpy(shape: tuple[int, ...]) -> None:
    result = run(pt.shape, [sample(shape)])
    assert result.dtype == np.int64
    np.testing.assert_array_equal(result, np.array(shape, dtype="int64"))
    output, static_result = run_static(lambda x: x.shape, [sample(shape)])
    assert output.type.shape == (len(shape),)
    np.testing.assert_array_equal(static_result, shape)


def test_shape_method_and_shape_i() -> None:
    x = pt.tensor("x", shape=(None, 3))
    node = x.shape.owner
    assert node is not None and isinstance(node.op, Shape) and node.inputs == (x,)
    assert shape_i(x, 1) is pt.constant(3, "int64")
    first = shape_i(x, -2)
    assert first.owner is not None and first.owner.op == ShapeI(0)
    (length,) = evaluate_checked([first], {x: np.zeros((5, 3))})
    assert length == 5 and length.dtype == np.int64
    with pytest.raises(ValueError, match="out of bounds"):
        shape_i(x, 2)


# --- reshape ----------------------------------------------------------------------------
RESHAPES = [
    ((2, 3), (6,)),
    ((2, 3), (3, 2)),
    ((2, 3), (-1,)),
    ((2, 3), (3, -1)),
    ((2, 3, 4), (-1, 4)),
    ((2, 3, 4), (4, 1, -1)),
    ((6,), (1, 2, 1, 3)),
    ((), (1, 1)),
    ((1, 1), ()),
    ((0, 3), (3, 0)),
    ((0, 3), (-1, 3)),
    ((0,), (0, 5)),
]


@pytest.mark.parametrize("shape, target", RESHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_matches_numpy(
    shape: tuple[int, ...], target: tuple[int, ...], dtype: str
) -> None:
    value = sample(shape, dtype)
    expected = np.reshape(value, target)
    np.testing.assert_array_equal(run(lambda x: pt.reshape(x, target), [value]), expected)
    output, result = run_static(lambda x: pt.reshape(x, target), [value])
    assert output.type.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


def test_reshape_method_spellings() -> None:
    value = np.arange(6.0)
    for build in (
        lambda x: x.reshape(2, 3),
        lambda x: x.reshape((2, 3)),
        lambda x: x.reshape([2, -1]),
        lambda x: x.reshape(np.array([2, 3])),
    ):
        np.testing.assert_array_equal(run(build, [value]), value.reshape(2, 3))


def test_reshape_to_another_variables_shape() -> None:
    x = pt.vector("x")
    template = pt.matrix("template")
    y = pt.reshape(x, template.shape)
    assert y.type.shape == (None, None)
    (result,) = evaluate_checked([y], {x: np.arange(6.0), template: np.zeros((3, 2))})
    np.testing.assert_array_equal(result, np.arange(6.0).reshape(3, 2))
    # A template of static shape makes the result static, with no shape computation left.
    static = pt.tensor("static", shape=(2, 3))
    z = pt.reshape(x, static.shape)
    assert z.type.shape == (2, 3)
    assert z.owner is not None and z.owner.inputs[1].owner is None
    # Partially static: the known length is kept.
    partial = pt.tensor("partial", shape=(None, 3))
    assert pt.reshape(x, partial.shape).type.shape == (None, 3)


def test_reshape_with_symbolic_entries() -> None:
    x = pt.vector("x")
    rows = pt.scalar("rows", dtype="int64")
    narrow = pt.scalar("narrow", dtype="int32")
    y = pt.reshape(x, (rows, -1))
    z = x.reshape(narrow, 2, 1)
    assert y.type.shape == (None, None) and z.type.shape == (None, 2, 1)
    results = evaluate_checked(
        [y, z], {x: np.arange(8.0), rows: np.int64(4), narrow: np.int32(4)}
    )
    np.testing.assert_array_equal(results[0], np.arange(8.0).reshape(4, 2))
    np.testing.assert_array_equal(results[1], np.arange(8.0).reshape(4, 2, 1))
    # Lengths read off static types stay static even among symbolic entries.
    t = pt.tensor("t", shape=(4, None))
    assert pt.reshape(x, (shape_i(t, 0), rows)).type.shape == (4, None)


def test_reshape_infers_one_unknown_entry_from_a_static_size() -> None:
    x = pt.tensor("x", shape=(4, 6))
    rows = pt.scalar("rows", dtype="int64")
    assert pt.reshape(x, (rows, 8)).type.shape == (3, 8)
    assert pt.reshape(x, (rows, 2, -1)).type.shape == (None, 2, None)


def test_reshape_of_matching_static_shape_is_the_input() -> None:
    x = pt.tensor("x", shape=(2, 3))
    assert pt.reshape(x, (2, 3)) is x
    assert pt.reshape(x, (-1, 3)) is not x


def test_reshape_errors_name_both_shapes() -> None:
    x = pt.tensor("x", shape=(2, 3))
    with pytest.raises(ShapeError, match=r"float64\(2, 3\).*\(4, 5\)"):
        pt.reshape(x, (4, 5))
    with pytest.raises(ShapeError, match=r"float64\(2, 3\).*\(4, -1\)"):
        pt.reshape(x, (4, -1))
    with pytest.raises(ShapeError, match="at most one entry may be -1"):
        pt.reshape(x, (-1, -1))
    with pytest.raises(ShapeError, match="non-negative or -1"):
        pt.reshape(x, (-2, -3))
    with pytest.raises(TypeError, match="ints or integer"):
        pt.reshape(x, (2.0, 3))
    with pytest.raises(DTypeError, match="integers"):
        pt.reshape(x, pt.vector("v", shape=(2,)))
    with pytest.raises(ShapeError, match="static length"):
        pt.reshape(x, pt.vector("v", dtype="int64"))
    with pytest.raises(ShapeError, match="scalar"):
        pt.reshape(x, (pt.vector("v", dtype="int64", shape=(1,)), 3))


def test_reshape_run_time_error_names_both_shapes() -> None:
    x = pt.matrix("x")
    y = pt.reshape(x, (5, -1))
    check_graph(Graph([x], [y]))
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(5, -1\)"):
        evaluate([y], {x: np.zeros((2, 3))})
    n = pt.scalar("n", dtype="int64")
    with pytest.raises(ShapeError, match=r"\(2, 3\).*\(-4,\)"):
        evaluate([pt.reshape(x, (n,))], {x: np.zeros((2, 3)), n: -4})


@pytest.mark.parametrize("shape, target", [((2, 3), (3, 2)), ((2, 3), (-1,)), ((4,), (2, 1, 2))])
def test_reshape_derivatives(shape: tuple[int, ...], target: tuple[int, ...]) -> None:
    values = [sample(shape)]
    check_pullback(lambda x: pt.reshape(x, target) * pt.reshape(x, target), values)
    check_pushforward(lambda x: pt.reshape(x, target) ** 2, values)


def test_reshape_derivative_with_a_symbolic_target() -> None:
    template = pt.matrix("template")
    x = pt.vector("x")
    y = pt.reshape(x, template.shape)
    cost = (y * pt.constant(np.arange(6.0).reshape(2, 3))).sum()
    (gradient,) = evaluate_checked(
        [pt.grad(cost, x)], {x: np.ones(6), template: np.zeros((2, 3))}
    )
    np.testing.assert_array_equal(gradient, np.arange(6.0))


def test_reshape_pullback_keeps_static_shapes() -> None:
    x = pt.tensor("x", shape=(2, 3))
    gradient = pt.grad((pt.reshape(x, (3, 2)) ** 2).sum(), x)
    assert gradient.type.shape == (2, 3)


# --- flatten ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "shape, ndim",
    [((), 1), ((3,), 1), ((2, 3), 1), ((2, 3, 4), 1), ((2, 3, 4), 2), ((2, 3, 4), 3),
     ((2, 0, 4), 2), ((0, 3), 1)],
)
def test_flatten_matches_numpy(shape: tuple[int, ...], ndim: int) -> None:
    value = sample(shape)
    expected = value.reshape(*value.shape[: ndim - 1], -1)
    np.testing.assert_array_equal(run(lambda x: pt.flatten(x, ndim), [value]), expected)
    output, result = run_static(lambda x: pt.flatten(x, ndim), [value])
    assert output.type.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


def test_flatten_method_and_errors() -> None:
    value = sample((2, 3))
    np.testing.assert_array_equal(run(lambda x: x.flatten(), [value]), value.flatten())
    with pytest.raises(ValueError, match="ndim"):
        pt.flatten(pt.matrix("x"), 3)
    with pytest.raises(ValueError, match="ndim"):
        pt.flatten(pt.matrix("x"), 0)


def test_flatten_derivatives() -> None:
    values = [sample((2, 3, 2))]
    check_pullback(lambda x: pt.flatten(x) ** 2, values)
    check_pullback(lambda x: pt.flatten(x, 2) ** 2, values)
    check_pushforward(lambda x: pt.flatten(x, 2) * 3.0, values)


# --- specify_shape ----------------------------------------------------------------------
def test_specify_shape_refines_and_checks() -> None:
    x = pt.matrix("x")
    y = pt.specify_shape(x, (2, None))
    assert y.type.shape == (2, None)
    (result,) = evaluate_checked([y], {x: np.ones((2, 5))})
    np.testing.assert_array_equal(result, np.ones((2, 5)))
    with pytest.raises(ShapeError, match=r"expected shape \(2, \?\), got \(3, 5\)"):
        evaluate([y], {x: np.ones((3, 5))})


def test_specify_shape_with_symbolic_lengths() -> None:
    x = pt.matrix("x")
    n = pt.scalar("n", dtype="int64")
    y = pt.specify_shape(x, (n, 4))
    assert y.type.shape == (None, 4)
    evaluate_checked([y], {x: np.ones((3, 4)), n: np.int64(3)})
    with pytest.raises(ShapeError, match=r"expected shape \(2, 4\), got \(3, 4\)"):
        evaluate([y], {x: np.ones((3, 4)), n: np.int64(2)})


def test_specify_shape_without_new_information_is_the_input() -> None:
    x = pt.tensor("x", shape=(2, None))
    assert pt.specify_shape(x, (2, None)) is x
    assert pt.specify_shape(x, (None, None)) is x
    assert pt.specify_shape(x, (2, 3)) is not x


def test_specify_shape_errors() -> None:
    x = pt.tensor("x", shape=(2, None))
    with pytest.raises(ShapeError, match=r"expected shape \(3, \?\), got float64\(2, \?\)"):
        pt.specify_shape(x, (3, None))
    with pytest.raises(ShapeError, match="rank 2"):
        pt.specify_shape(x, (2,))


def test_specify_shape_derivatives() -> None:
    values = [sample((2, 3))]
    check_pullback(lambda x: pt.specify_shape(x, (2, 3)) ** 2, values)
    check_pushforward(lambda x: pt.specify_shape(x, (None, 3)) ** 2, values)


# --- broadcast_to -----------------------------------------------------------------------
BROADCASTS = [
    ((), (3,)),
    ((), ()),
    ((3,), (2, 3)),
    ((1,), (4,)),
    ((2, 1), (2, 5)),
    ((1, 3), (4, 2, 3)),
    ((3,), (0, 3)),
    ((1,), (0,)),
    ((2, 3), (2, 3)),
]


@pytest.mark.parametrize("shape, target", BROADCASTS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_broadcast_to_matches_numpy(
    shape: tuple[int, ...], target: tuple[int, ...], dtype: str
) -> None:
    value = sample(shape, dtype)
    expected = np.broadcast_to(value, target)
    output, result = run_static(lambda x: pt.broadcast_to(x, target), [value])
    assert output.type.shape == target
    np.testing.assert_array_equal(result, expected)


def test_broadcast_to_a_symbolic_shape() -> None:
    x = pt.tensor("x", shape=(1, None))
    template = pt.tensor("template", shape=(None, None, 3))
    y = pt.broadcast_to(x, template.shape)
    assert y.type.shape == (None, None, 3)
    (result,) = evaluate_checked(
        [y], {x: np.arange(3.0).reshape(1, 3), template: np.zeros((2, 4, 3))}
    )
    np.testing.assert_array_equal(result, np.broadcast_to(np.arange(3.0), (2, 4, 3)))
    # An axis of known length > 1 fixes the output's length even for an unknown target.
    n = pt.scalar("n", dtype="int64")
    assert pt.broadcast_to(pt.tensor("z", shape=(3,)), (n, n)).type.shape == (None, 3)


def test_broadcast_to_errors_name_both_shapes() -> None:
    with pytest.raises(ShapeError, match=r"float64\(3,\).*\(4,\)"):
        pt.broadcast_to(pt.tensor("x", shape=(3,)), (4,))
    with pytest.raises(ShapeError, match=r"float64\(2, 3\).*\(3,\)"):
        pt.broadcast_to(pt.tensor("x", shape=(2, 3)), (3,))
    with pytest.raises(ShapeError, match="non-negative"):
        pt.broadcast_to(pt.scalar("x"), (-1,))
    x = pt.vector("x")
    with pytest.raises(ShapeError, match=r"\(3,\).*\(2, 4\)"):
        evaluate([pt.broadcast_to(x, (2, 4))], {x: np.ones(3)})


@pytest.mark.parametrize(
    "shape, static, target",
    [((), (), (2, 3)), ((3,), (None,), (4, 3)), ((1, 3), (1, None), (2, 4, 3)),
     ((2, 1), (None, 1), (2, 5))],
)
def test_broadcast_to_derivatives(
    shape: tuple[int, ...], static: tuple[int | None, ...], target: tuple[int, ...]
) -> None:
    def build(x: pt.Variable) -> pt.Variable:
        return pt.broadcast_to(pt.specify_shape(x, static), target) ** 2

    check_pullback(build, [sample(shape)])
    check_pushforward(build, [sample(shape)])


def test_broadcast_to_pullback_type() -> None:
    x = pt.tensor("x", shape=(1, 3))
    gradient = pt.grad((pt.broadcast_to(x, (5, 4, 3)) ** 2).sum(), x)
    assert gradient.type.shape == (1, 3)


# --- the shape-like conversion ----------------------------------------------------------
def test_shape_vector_conversion() -> None:
    n = pt.scalar("n", dtype="int64")
    small = pt.scalar("small", dtype="uint8")
    assert as_shape_vector(5, "t").static == (5,)
    assert as_shape_vector(np.array([2, 3]), "t").static == (2, 3)
    assert as_shape_vector((), "t").static == ()
    mixed = as_shape_vector([2, n, small], "t")
    assert mixed.static == (2, None, None)
    assert mixed.variable.type == pt.vector(dtype="int64", shape=(3,)).type
    (value,) = evaluate([mixed.variable], {n: 7, small: 9})
    np.testing.assert_array_equal(value, [2, 7, 9])
    constant = as_shape_vector([2, np.int32(3), pt.constant(np.int8(4))], "t")
    assert constant.static == (2, 3, 4)
    assert constant.variable.owner is None and constant.variable.dtype == "int64"
    narrow = as_shape_vector(pt.constant(np.array([1, 2], dtype="int32")), "t")
    assert narrow.static == (1, 2) and narrow.variable.dtype == "int64"
    with pytest.raises(ShapeError, match="non-negative"):
        as_shape_vector((2, -1), "t")
    with pytest.raises(TypeError, match="ints or integer"):
        as_shape_vector((True,), "t")
    with pytest.raises(DTypeError, match="integers"):
        as_shape_vector((pt.scalar("f"),), "t")
    with pytest.raises(ShapeError, match="vector"):
        as_shape_vector(pt.matrix("m", dtype="int64"), "t")


def test_reshape_op_str() -> None:
    x = pt.matrix("x")
    y = pt.reshape(x, (pt.scalar("n", dtype="int64"), -1))
    assert y.owner is not None and isinstance(y.owner.op, Reshape)
    assert str(y.owner.op) == "Reshape{target=(None, -1)}"
