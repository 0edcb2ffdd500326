"""Static typing of elementwise graphs: weak Python scalars, static-shape broadcasting and
its errors, dtype errors, and the names ops print with."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ops as pt
from fgraph import DTypeError, ShapeError, TensorType, Variable, evaluate
from ops.elemwise import Elemwise
from ops.scalar_ops import Add, Cast, Exp, Round


@pytest.mark.parametrize(
    ("dtype", "scalar"),
    [
        ("float32", 2),
        ("float32", 2.5),
        ("float16", 3),
        ("int32", 1),
        ("int8", 2.5),
        ("uint8", 3),
        ("bool", 1),
        ("bool", 1.5),
        ("bool", True),
        ("int64", True),
    ],
)
def test_python_scalars_are_weak_like_numpy(dtype: str, scalar: bool | int | float) -> None:
    x = pt.vector("x", dtype=dtype)
    value = np.ones(2, dtype=dtype)
    pairs = (
        (x * scalar, value * scalar),
        (scalar + x, scalar + value),
        (pt.maximum(x, scalar), np.maximum(value, scalar)),
        (pt.where(x, scalar, x), np.where(value, scalar, value)),
    )
    for output, expected in pairs:
        assert output.dtype == expected.dtype.name, (dtype, scalar)
        (got,) = evaluate([output], {x: value})
        np.testing.assert_array_equal(got, expected)


def test_float32_stays_float32_through_a_chain_with_constants() -> None:
    x = pt.matrix("x", dtype="float32")
    y = pt.exp(-(x**2) / 2) * 0.5 + pt.sigmoid(x * 3) - pt.clip(x, -1.0, 1.0)
    assert y.dtype == "float32"


def test_arrays_and_numpy_scalars_are_strong() -> None:
    x = pt.vector("x", dtype="float32")
    assert (x * np.float64(2)).dtype == "float64"
    assert (x + np.ones(2)).dtype == "float64"


@pytest.mark.parametrize(
    ("x_shape", "y_shape", "out_shape"),
    [
        ((2, 3), (3,), (2, 3)),
        ((2, 1), (1, 3), (2, 3)),
        ((None, 1), (1, 3), (None, 3)),
        ((None, 3), (4, 1, 1), (4, None, 3)),
        ((None,), (1,), (None,)),
        ((None,), (None,), (None,)),
        ((None,), (5,), (5,)),
        ((0, 1), (1, 3), (0, 3)),
        ((), (2, 2), (2, 2)),
    ],
)
def test_static_shapes_broadcast_like_numpy(
    x_shape: tuple[int | None, ...],
    y_shape: tuple[int | None, ...],
    out_shape: tuple[int | None, ...],
) -> None:
    x = pt.tensor("x", shape=x_shape)
    y = pt.tensor("y", shape=y_shape)
    for output in (x + y, pt.arctan2(x, y), pt.where(pt.gt(x, 0), x, y), pt.clip(x, y, 1.0)):
        assert output.type.shape == out_shape


@pytest.mark.parametrize(
    ("x_shape", "y_shape", "x_shown", "y_shown"),
    [
        ((3,), (4,), "(3,)", "(4,)"),
        ((2, 3), (3, 2), "(2, 3)", "(3, 2)"),
        ((2, 3, 4), (5, 4), "(2, 3, 4)", "(1, 5, 4)"),  # after rank padding
    ],
)
def test_incompatible_static_shapes_name_both_shapes(
    x_shape: tuple[int, ...], y_shape: tuple[int, ...], x_shown: str, y_shown: str
) -> None:
    x = pt.tensor("x", shape=x_shape)
    y = pt.tensor("y", shape=y_shape)
    with pytest.raises(ShapeError) as raised:
        pt.add(x, y)
    message = str(raised.value)
    assert message.startswith("Add: ")
    assert x_shown in message and y_shown in message


def test_incompatible_shapes_in_a_three_input_op() -> None:
    x = pt.tensor("x", shape=(3,))
    with pytest.raises(ShapeError, match=r"\(3,\).*\(4,\)"):
        pt.clip(x, pt.tensor("lo", shape=(4,)), 1.0)


def test_elemwise_checks_arity_and_ranks() -> None:
    x = pt.vector("x")
    with pytest.raises(TypeError, match="expected 2 inputs, got 1"):
        Elemwise(Add())(x)
    with pytest.raises(ShapeError, match="equal ranks"):
        Elemwise(Add())(x, pt.matrix("m"))


@pytest.mark.parametrize(
    ("build", "dtype", "op_name"),
    [
        (pt.neg, "bool", "Neg"),
        (lambda x: pt.bitwise_and(x, x), "float64", "BitwiseAnd"),
        (pt.invert, "float32", "Invert"),
        (lambda x: pt.sub(x, x), "bool", "Sub"),
    ],
)
def test_dtypes_numpy_rejects_raise_a_dtype_error_naming_the_op(
    build: Callable[[Variable], Variable], dtype: str, op_name: str
) -> None:
    x = pt.vector("x", dtype=dtype)
    with pytest.raises(DTypeError, match=rf"{op_name} is not defined for dtypes \({dtype}"):
        build(x)


def test_cast_normalizes_its_dtype_and_skips_identity_casts() -> None:
    x = pt.vector("x", dtype="float32")
    assert pt.cast(x, "float32") is x
    assert pt.cast(x, np.float64).dtype == "float64"
    assert Cast(np.dtype("int32")) == Cast("int32")
    with pytest.raises(DTypeError):
        pt.cast(x, "object")


def test_ops_print_readable_names() -> None:
    assert str(Elemwise(Exp())) == "Exp"
    assert str(Elemwise(Cast("float32"))) == "Cast{float32}"
    assert str(Round(2)) == "Round{2}"
    x = pt.vector("x")
    owner = pt.softplus(x).owner
    assert owner is not None and str(owner.op) == "Softplus"


def test_scalar_ops_are_frozen_values() -> None:
    assert Elemwise(Exp()) == Elemwise(Exp())
    assert hash(Elemwise(Cast("int8"))) == hash(Elemwise(Cast("int8")))
    assert Round(1) != Round(2)
    assert Round(np.int64(2)) == Round(2)


def test_size_zero_inputs() -> None:
    x = pt.tensor("x", shape=(0, 3))
    y = pt.vector("y")
    output = pt.where(pt.gt(x, y), pt.sigmoid(x), pt.erf(y))
    assert output.type == TensorType("float64", (0, 3))
    (got,) = evaluate([output], {x: np.zeros((0, 3)), y: np.zeros(3)})
    assert got.shape == (0, 3)


def test_functions_accept_array_likes() -> None:
    out = pt.maximum([1.0, 5.0], np.array([3.0, 2.0]))
    (got,) = evaluate([out], {})
    np.testing.assert_array_equal(got, [3.0, 5.0])
