"""`DimShuffle` and the functions spelled with it (`transpose`, `expand_dims`, `squeeze`):
values against NumPy, static shapes, readable names, derivatives and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Input, ShapeError, TensorType, Variable, evaluate
from ops.dimshuffle import DimShuffle
from tests.ops.checks import check_pullback, check_pushforward, run
from tests.ops.shape_checks import evaluate_checked, run_static

Array = np.ndarray[Any, np.dtype[Any]]


def sample(shape: tuple[int, ...], dtype: str = "float64", seed: int = 0) -> Array:
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


def reference_dimshuffle(value: Array, order: tuple[int | None, ...]) -> Array:
    """NumPy spelled out: drop the unnamed axes, permute, insert the new ones."""
    kept = [axis for axis in order if axis is not None]
    dropped = tuple(axis for axis in range(value.ndim) if axis not in kept)
    squeezed = np.squeeze(value, axis=dropped)
    remaining = sorted(kept)
    moved = np.transpose(squeezed, [remaining.index(axis) for axis in kept])
    new = tuple(i for i, axis in enumerate(order) if axis is None)
    return np.expand_dims(moved, new)


ORDERS = [
    ((2, 3), (1, 0)),
    ((2, 3), (None, 0, None, 1)),
    ((2, 1, 3), (2, 0)),
    ((2, 1, 3), (2, None, 0)),
    ((1, 1), ()),
    ((1, 3), (1,)),
    ((), (None, None)),
    ((0, 2), (1, None, 0)),
    ((2, 3, 4), (1, 2, 0)),
]


@pytest.mark.parametrize("shape, order", ORDERS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
def test_dimshuffle_matches_numpy(
    shape: tuple[int, ...], order: tuple[int | None, ...], dtype: str
) -> None:
    value = sample(shape, dtype)
    output, result = run_static(lambda x: DimShuffle(order)(x), [value])
    expected = reference_dimshuffle(value, order)
    assert output.type.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("shape, order", ORDERS)
def test_dimshuffle_derivatives(shape: tuple[int, ...], order: tuple[int | None, ...]) -> None:
    static = tuple(1 if length == 1 else None for length in shape)

    def build(x: Variable) -> Variable:
        return DimShuffle(order)(pt.specify_shape(x, static)) ** 2

    check_pullback(build, [sample(shape)])
    check_pushforward(build, [sample(shape)])


@pytest.mark.parametrize(
    "order, name",
    [
        ((1, 0), "Transpose{axes=(1, 0)}"),
        ((0, 2, 1), "Transpose{axes=(0, 2, 1)}"),
        ((None, 0), "ExpandDims{axis=0}"),
        ((0, None, 1, None), "ExpandDims{axes=(1, 3)}"),
        ((0, 2), "DropDims{keep=(0, 2)}"),
        ((0,), "DropDims{keep=(0,)}"),
        ((1, None, 0), "DimShuffle{order=(1,x,0)}"),
        ((None, 1), "DimShuffle{order=(x,1)}"),
    ],
)
def test_dimshuffle_names_what_it_does(order: tuple[int | None, ...], name: str) -> None:
    assert str(DimShuffle(order)) == name


def test_dimshuffle_errors() -> None:
    with pytest.raises(ValueError, match="distinct non-negative"):
        DimShuffle((0, 0))
    with pytest.raises(ValueError, match="distinct non-negative"):
        DimShuffle((-1,))
    with pytest.raises(ShapeError, match=r"axis 2.*float64\(2, 3\)"):
        DimShuffle((2, 0))(pt.tensor("x", shape=(2, 3)))
    with pytest.raises(ShapeError, match=r"dropped axis 1.*float64\(2, 3\)"):
        DimShuffle((0,))(pt.tensor("x", shape=(2, 3)))
    with pytest.raises(ShapeError, match="dropped axis 1"):
        DimShuffle((0,))(pt.tensor("x", shape=(2, None)))
    with pytest.raises(TypeError, match="expected 1 input"):
        DimShuffle((0,)).infer()


@pytest.mark.parametrize(
    "shape, axes", [((2, 3), None), ((2, 3, 4), (2, 0, 1)), ((2, 3, 4), (-1, 0, -2)), ((3,), None)]
)
def test_transpose_matches_numpy(shape: tuple[int, ...], axes: tuple[int, ...] | None) -> None:
    value = sample(shape)
    expected = np.transpose(value, axes)
    output, result = run_static(lambda x: pt.transpose(x, axes), [value])
    assert output.type.shape == expected.shape
    np.testing.assert_array_equal(result, expected)
    check_pullback(lambda x: pt.transpose(x, axes) ** 2, [value])
    check_pushforward(lambda x: pt.transpose(x, axes) * 2.0, [value])


def test_transpose_methods_and_errors() -> None:
    value = sample((2, 3, 4))
    np.testing.assert_array_equal(run(lambda x: x.T, [value]), value.T)
    swapped = run(lambda x: x.transpose(1, 0, 2), [value])
    np.testing.assert_array_equal(swapped, value.transpose(1, 0, 2))
    x = pt.tensor("x", shape=(2, 3))
    assert pt.transpose(x, (0, 1)) is x
    with pytest.raises(ValueError, match="not a permutation"):
        pt.transpose(x, (0, 0))
    with pytest.raises(ValueError, match="out of bounds"):
        pt.transpose(x, (0, 2))
    np.testing.assert_array_equal(evaluate([pt.transpose([[1, 2]])], {})[0], [[1], [2]])


@pytest.mark.parametrize(
    "shape, axis", [((), 0), ((3,), 0), ((3,), 1), ((3,), -1), ((2, 3), (0, 3)), ((2, 3), (-1, 1))]
)
def test_expand_dims_matches_numpy(shape: tuple[int, ...], axis: int | tuple[int, ...]) -> None:
    value = sample(shape)
    expected = np.expand_dims(value, axis)
    np.testing.assert_array_equal(run(lambda x: pt.expand_dims(x, axis), [value]), expected)
    output, result = run_static(lambda x: pt.expand_dims(x, axis), [value])
    assert output.type.shape == expected.shape
    check_pullback(lambda x: pt.expand_dims(x, axis) ** 2, [value])
    check_pushforward(lambda x: pt.expand_dims(x, axis) ** 2, [value])


def test_expand_dims_errors() -> None:
    x = pt.vector("x")
    with pytest.raises(ValueError, match="repeated"):
        pt.expand_dims(x, (0, -3))
    with pytest.raises(ValueError, match="out of bounds"):
        pt.expand_dims(x, 2)


@pytest.mark.parametrize(
    "shape, axis",
    [((1,), None), ((1, 3, 1), None), ((1, 3, 1), 2), ((1, 3, 1), (0, -1)), ((3,), None)],
)
def test_squeeze_matches_numpy(shape: tuple[int, ...], axis: int | tuple[int, ...] | None) -> None:
    value = sample(shape)
    expected = np.squeeze(value, axis)
    output, result = run_static(lambda x: pt.squeeze(x, axis), [value])
    assert output.type.shape == expected.shape
    np.testing.assert_array_equal(result, expected)
    static = tuple(1 if length == 1 else None for length in shape)

    def build(x: Variable) -> Variable:
        return pt.squeeze(pt.specify_shape(x, static), axis) ** 2

    check_pullback(build, [value])
    check_pushforward(build, [value])


def test_squeeze_needs_static_length_one() -> None:
    x = pt.tensor("x", shape=(None, 1))
    assert pt.squeeze(x).type.shape == (None,)
    with pytest.raises(ShapeError, match=r"axis 0 of float64\(\?, 1\)"):
        pt.squeeze(x, 0)
    with pytest.raises(ValueError, match="out of bounds"):
        pt.squeeze(x, 2)


def test_dimshuffle_pullback_refines_a_cotangent_of_unknown_shape() -> None:
    x = pt.vector("x")
    y = pt.expand_dims(x, 0)
    cotangent = Input(TensorType("float64", (None, None)), "cotangent")
    (gradient,) = pt.vjp([y], [x], [cotangent])
    (result,) = evaluate_checked([gradient], {x: np.ones(3), cotangent: np.arange(3.0)[None]})
    np.testing.assert_array_equal(result, np.arange(3.0))
    with pytest.raises(ShapeError, match=r"expected shape \(1, \?\), got \(2, 3\)"):
        evaluate([gradient], {x: np.ones(3), cotangent: np.ones((2, 3))})
