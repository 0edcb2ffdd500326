"""`TensorType`, static broadcasting, value filtering and dtype promotion against NumPy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fgraph import (
    ALL_DTYPES,
    DTypeError,
    ShapeError,
    TensorType,
    as_dtype,
    broadcast_shapes,
    format_shape,
    promote,
    type_of_value,
)
from fgraph.types import Shape
from tests.fgraph.builders import smuggle

CONCRETE_SHAPES: list[tuple[int, ...]] = [(), (1,), (3,), (0,), (2, 1), (1, 3), (2, 3), (4, 1, 3), (1, 1, 1)]


@pytest.mark.parametrize(
    ("left", "right"), list(itertools.product(CONCRETE_SHAPES, repeat=2))
)
def test_broadcast_of_known_shapes_matches_numpy(
    left: tuple[int, ...], right: tuple[int, ...]
) -> None:
    try:
        expected = np.broadcast_shapes(left, right)
    except ValueError:
        with pytest.raises(ShapeError):
            broadcast_shapes(left, right)
    else:
        assert broadcast_shapes(left, right) == expected


@pytest.mark.parametrize(
    ("shapes", "expected"),
    [
        (((None,), (3,)), (3,)),
        (((None,), (1,)), (None,)),
        (((None,), (None,)), (None,)),
        (((None,), ()), (None,)),
        (((2, None), (None, 1)), (2, None)),
        (((None, 1), (1, 4)), (None, 4)),
        (((None,), (0,)), (0,)),
        (((1, None), (5, 1), (3,)), (5, 3)),
        ((), ()),
    ],
)
def test_broadcast_with_unknown_lengths(shapes: tuple[Shape, ...], expected: Shape) -> None:
    assert broadcast_shapes(*shapes) == expected


def test_broadcast_error_names_both_shapes() -> None:
    with pytest.raises(ShapeError, match=r"shapes \(2, 3\), \(4,\) cannot be broadcast"):
        broadcast_shapes((2, 3), (4,))
    with pytest.raises(ValueError, match=r"\(\?, 2\), \(5, 3\)"):  # ShapeError is a ValueError
        broadcast_shapes((None, 2), (5, 3))


def test_tensor_type_properties() -> None:
    matrix = TensorType("float32", (1, None))
    assert matrix.ndim == 2
    assert matrix.broadcastable == (True, False)
    assert not matrix.is_fully_static
    assert TensorType("int8", (2, 3)).is_fully_static
    assert str(matrix) == "float32(1, ?)"
    assert format_shape((None,)) == "(?,)" and format_shape(()) == "()"
    assert matrix.accepts_shape((1, 7)) and not matrix.accepts_shape((2, 7))
    assert not matrix.accepts_shape((1,))
    assert TensorType("float32", (1, 4)).is_subtype_of(matrix)
    assert not matrix.is_subtype_of(TensorType("float32", (1, 4)))
    assert not TensorType("float64", (1, 4)).is_subtype_of(matrix)
    assert type_of_value(np.zeros((2, 0), dtype="int16")) == TensorType("int16", (2, 0))
    assert type_of_value(1.5) == TensorType("float64", ())


def test_tensor_type_rejects_bad_dtypes_and_shapes() -> None:
    with pytest.raises(DTypeError, match="not supported"):
        TensorType("object", ())
    with pytest.raises(DTypeError, match="not a dtype"):
        TensorType("floaty", ())
    with pytest.raises(ShapeError, match=">= 0"):
        TensorType("float64", (-1,))
    with pytest.raises(ShapeError, match="int or None"):
        TensorType("float64", smuggle((2.0,)))
    with pytest.raises(ShapeError, match="int or None"):
        TensorType("float64", smuggle((True,)))
    assert as_dtype(np.float32) == "float32" and as_dtype(np.dtype("i8")) == "int64"


def test_filter_applies_safe_casts() -> None:
    vector = TensorType("float64", (None,))
    result = vector.filter([1, 2, 3], "x")
    assert result.dtype == np.float64 and result.tolist() == [1.0, 2.0, 3.0]
    assert TensorType("float32", ()).filter(1.5, "s").dtype == np.float32  # weak Python float
    assert TensorType("int8", ()).filter(3, "s").dtype == np.int8  # weak Python int in range
    assert TensorType("int64", (2,)).filter(np.array([1, 2], dtype="uint8"), "v").dtype == np.int64
    assert TensorType("complex128", ()).filter(1j, "c").dtype == np.complex128
    assert TensorType("float64", ()).filter(True, "b").dtype == np.float64
    same = np.ones(3)
    assert vector.filter(same, "x") is same  # no copy when nothing changes


@pytest.mark.parametrize(
    ("dtype", "value", "message"),
    [
        ("float32", np.ones(2), r"wanted: expected dtype float32, got float64"),
        ("int64", np.ones(2), r"wanted: expected dtype int64, got float64"),
        ("int8", 300, r"wanted: expected dtype int8, got int64"),
        ("int32", 1.5, r"wanted: expected dtype int32, got float64"),
        ("bool", 1, r"wanted: expected dtype bool"),
        ("uint8", np.array([-1], dtype="int8"), r"wanted: expected dtype uint8, got int8"),
    ],
)
def test_filter_rejects_unsafe_casts_naming_the_variable(
    dtype: str, value: object, message: str
) -> None:
    shape: Shape = np.shape(smuggle(value))
    with pytest.raises(DTypeError, match=message):
        TensorType(dtype, shape).filter(value, "wanted")


def test_filter_rejects_strings_and_objects_naming_the_variable() -> None:
    """Before, NumPy's `data type 'str96' not understood` named neither the input nor
    what it expected."""
    with pytest.raises(DTypeError, match=r"x: expected float64\(\?,\) values, got str 'abc'"):
        TensorType("float64", (None,)).filter("abc", "x")
    with pytest.raises(DTypeError, match=r"y: expected int64\(\) values, got object"):
        TensorType("int64", ()).filter(object(), "y")


def test_filter_rejects_wrong_shapes_naming_the_variable() -> None:
    with pytest.raises(ShapeError, match=r"x: expected shape \(3,\), got \(4,\)"):
        TensorType("float64", (3,)).filter(np.ones(4), "x")
    with pytest.raises(ShapeError, match=r"m: expected shape \(\?, \?\), got \(4,\)"):
        TensorType("float64", (None, None)).filter(np.ones(4), "m")
    with pytest.raises(ShapeError, match=r"s: expected shape \(\), got \(1,\)"):
        TensorType("float64", ()).filter([1.0], "s")


@pytest.mark.parametrize("left", ALL_DTYPES)
def test_promotion_matches_numpy_arithmetic(left: str) -> None:
    for right in ALL_DTYPES:
        numpy_result = (np.ones(1, dtype=left) + np.ones(1, dtype=right)).dtype.name
        assert promote(left, right) == numpy_result, (left, right)
    assert promote(left) == left
    assert promote(left, left, "bool") == left
