"""NumPy's statistics and value-dependent selections: `median`, `quantile`, `percentile`,
`cov`, `corrcoef`, `var`/`std` with `ddof`, `argmax`/`argmin` over several axes,
`searchsorted(sorter=)`, `nonzero`, `flatnonzero`, `where(cond)` and `unique`.

Values against NumPy through `evaluate` and compiled code, with static and unknown
lengths and lengths 0 and 1; derivatives against finite differences; the errors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import DTypeError, ShapeError, TensorType, Variable, evaluate
from numba_backend import function
from tests.ops.checks import check_pullback, check_pushforward

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(21)
CUBE = RNG.normal(size=(3, 4, 5))


def _both(inputs: Sequence[Variable], outputs: Sequence[Variable], values: Sequence[Array]) -> list[
        tuple[Array, Array]]:
    """(evaluated, compiled) for each output."""
    evaluated = evaluate(list(outputs), dict(zip(inputs, values)))
    compiled = function(list(inputs), list(outputs))(*values)
    return list(zip(evaluated, compiled))


def _check_equal(
    inputs: Sequence[Variable], outputs: Sequence[Variable], values: Sequence[Array],
    expected: Sequence[Array],
) -> None:
    """Evaluated and compiled results equal NumPy's exactly, in dtype and shape too."""
    for (evaluated, compiled), want in zip(_both(inputs, outputs, values), expected):
        want = np.asarray(want)
        for got in (evaluated, compiled):
            assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
            np.testing.assert_array_equal(got, want)


# --- median, quantile, percentile --------------------------------------------------------------
AXES: list[Any] = [None, 0, -1, (0, 2), (2, 0, 1)]


@pytest.mark.parametrize("static", [False, True])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES)
def test_order_statistics_match_numpy_bit_for_bit(axis: Any, keepdims: bool, static: bool) -> None:
    x = pt.tensor("x", shape=CUBE.shape if static else (None,) * 3)
    levels = np.array([[0.0, 0.1, 0.5], [0.75, 0.999, 1.0]])
    outputs = [
        pt.median(x, axis, keepdims), pt.quantile(x, 0.3, axis, keepdims=keepdims),
        pt.quantile(x, levels, axis, keepdims=keepdims),
        pt.percentile(x, [0, 25, 62.5, 100], axis, keepdims=keepdims),
    ]
    expected = [
        np.median(CUBE, axis, keepdims=keepdims), np.quantile(CUBE, 0.3, axis, keepdims=keepdims),
        np.quantile(CUBE, levels, axis, keepdims=keepdims),
        np.percentile(CUBE, [0, 25, 62.5, 100], axis, keepdims=keepdims),
    ]
    if static:
        assert all(None not in output.type.shape for output in outputs)
    _check_equal([x], outputs, [CUBE], expected)


@pytest.mark.parametrize("length", [1, 2, 5, 6])
def test_order_statistics_of_short_vectors_ties_and_nan(length: int) -> None:
    v = pt.vector("v")
    data = RNG.integers(0, 3, size=length).astype(float)  # ties
    with_nan = data.copy()
    with_nan[length // 2] = np.nan
    outputs = [pt.median(v), pt.quantile(v, [0.2, 0.5, 0.9]), pt.percentile(v, 40.0)]
    for values in (data, with_nan):
        expected = [np.median(values), np.quantile(values, [0.2, 0.5, 0.9]),
                    np.percentile(values, 40.0)]
        _check_equal([v], outputs, [values], expected)


def test_order_statistics_dtypes_follow_numpy() -> None:
    single = RNG.normal(size=7).astype(np.float32)
    whole = RNG.integers(-5, 5, size=(4, 3)).astype(np.int32)
    f, i = pt.vector("f", dtype="float32"), pt.matrix("i", dtype="int32")
    q = np.array([0.25, 0.5])
    outputs = [pt.median(f), pt.quantile(f, 0.3), pt.quantile(f, q), pt.median(i, 0),
               pt.percentile(i, 50, axis=1)]
    expected = [np.median(single), np.quantile(single, 0.3), np.quantile(single, q),
                np.median(whole, 0), np.percentile(whole, 50, axis=1)]
    _check_equal([f, i], outputs, [single, whole], expected)


def test_quantile_of_symbolic_levels() -> None:
    x, q = pt.matrix("x"), pt.vector("q")
    levels = np.array([0.0, 0.33, 0.5, 1.0])
    _check_equal([x, q], [pt.quantile(x, q, axis=1), pt.percentile(x, q * 100, axis=0)],
                 [CUBE[0], levels],
                 [np.quantile(CUBE[0], levels, axis=1), np.percentile(CUBE[0], levels * 100, 0)])
    # Unchecked levels outside [0, 1] (NumPy raises) give the end values.
    outside = np.array([-0.5, 1.5])
    _check_equal([x, q], [pt.quantile(x, q, axis=1)], [CUBE[0], outside],
                 [np.stack([CUBE[0].min(axis=1), CUBE[0].max(axis=1)])])


def test_order_statistics_differentiate_through_the_sort() -> None:
    distinct = [RNG.permutation(20).reshape(4, 5) + RNG.uniform(0.1, 0.9, size=(4, 5))]
    check_pullback(lambda x: pt.median(x, axis=1), distinct)  # odd: one middle element
    check_pullback(lambda x: pt.median(x, axis=0), distinct)  # even: two share it
    check_pullback(lambda x: pt.median(x, axis=(0, 1), keepdims=True), distinct)
    check_pullback(lambda x: pt.quantile(x, [0.1, 0.6, 0.95], axis=1), distinct)
    check_pushforward(lambda x: pt.percentile(x, 37.0, axis=0), distinct)
    # In the levels: the slope between the two neighbours.
    levels = [np.array([0.13, 0.41, 0.77])]
    check_pullback(lambda q: pt.quantile(pt.constant(distinct[0]), q, axis=1), levels)


def test_order_statistics_errors() -> None:
    x = pt.vector("x")
    with pytest.raises(ValueError, match=r"Quantiles must be in the range \[0, 1\]"):
        pt.quantile(x, [0.5, 1.5])
    with pytest.raises(ValueError, match=r"Percentiles must be in the range \[0, 100\]"):
        pt.percentile(x, -1)
    with pytest.raises(ValueError, match="only NumPy's default method 'linear'"):
        pt.quantile(x, 0.5, method="nearest")
    with pytest.raises(DTypeError, match="median: complex values have no order"):
        pt.median(pt.vector("c", dtype="complex128"))
    with pytest.raises(ShapeError, match="median: the reduced axes .* hold no elements"):
        pt.median(pt.tensor("e", shape=(3, 0)), axis=1)
    with pytest.raises(ShapeError, match="axis 2 is out of bounds"):
        pt.quantile(pt.matrix("m"), 0.5, axis=2)
    # An empty group of unknown length fails where it is read (NumPy's quantile too).
    with pytest.raises(IndexError, match="out of bounds .* result of Sort"):
        function([x], [pt.quantile(x, 0.5)])(np.zeros(0))


# --- cov, corrcoef, var and std with ddof ------------------------------------------------
OBSERVED = RNG.normal(size=(3, 7))
MORE = RNG.normal(size=(2, 7))


@pytest.mark.parametrize("static", [False, True])
def test_cov_and_corrcoef_match_numpy(static: bool) -> None:
    def declared(name: str, value: Array) -> Variable:
        return pt.tensor(name, shape=value.shape if static else (None,) * value.ndim)

    m, y, v = declared("m", OBSERVED), declared("y", MORE), declared("v", OBSERVED[0])
    columns = declared("columns", OBSERVED.T)
    outputs = [
        pt.cov(m), pt.cov(m, y), pt.cov(m, rowvar=False), pt.cov(columns, rowvar=False),
        pt.cov(m, bias=True), pt.cov(m, ddof=4), pt.cov(v), pt.cov(v, v[::-1]),
        pt.corrcoef(m), pt.corrcoef(m, y), pt.corrcoef(columns, rowvar=False), pt.corrcoef(v),
    ]
    expected = [
        np.cov(OBSERVED), np.cov(OBSERVED, MORE), np.cov(OBSERVED, rowvar=False),
        np.cov(OBSERVED.T, rowvar=False), np.cov(OBSERVED, bias=True),
        np.cov(OBSERVED, ddof=4), np.cov(OBSERVED[0]), np.cov(OBSERVED[0], OBSERVED[0][::-1]),
        np.corrcoef(OBSERVED), np.corrcoef(OBSERVED, MORE), np.corrcoef(OBSERVED.T, rowvar=False),
        np.corrcoef(OBSERVED[0]),
    ]
    values = [OBSERVED, MORE, OBSERVED[0], OBSERVED.T]
    for (evaluated, compiled), want in zip(_both([m, y, v, columns], outputs, values), expected):
        for got in (evaluated, compiled):
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("static", [False, True])
def test_cov_with_no_degrees_of_freedom_left_is_inf_or_nan_as_numpy(static: bool) -> None:
    m = pt.tensor("m", shape=OBSERVED.shape if static else (None, None))
    (got,) = function([m], [pt.cov(m, ddof=7)])(OBSERVED)
    with pytest.warns(RuntimeWarning):
        want = np.cov(OBSERVED, ddof=7)
    np.testing.assert_array_equal(got, want)


def test_cov_and_corrcoef_dtypes_are_float64_at_least() -> None:
    single = OBSERVED.astype(np.float32)
    counts = RNG.integers(0, 9, size=(2, 6))
    f, i = pt.matrix("f", dtype="float32"), pt.matrix("i", dtype="int64")
    for (evaluated, compiled), want in zip(
        _both([f, i], [pt.cov(f), pt.corrcoef(i)], [single, counts]),
        [np.cov(single), np.corrcoef(counts)],
    ):
        assert evaluated.dtype == compiled.dtype == want.dtype == np.float64
        np.testing.assert_allclose(compiled, want, rtol=1e-12)


def test_cov_and_corrcoef_gradients() -> None:
    data = [OBSERVED]
    check_pullback(lambda m: pt.cov(m), data)
    check_pullback(lambda m: pt.cov(m, rowvar=False, ddof=0), data)
    check_pushforward(lambda m: pt.cov(m, m * m), data)
    # Off the diagonal (the diagonal is 1 whatever the data).
    check_pullback(lambda m: pt.corrcoef(m)[[0, 0, 1], [1, 2, 2]], data)


def test_cov_errors() -> None:
    with pytest.raises(ShapeError, match="cov: expected a vector or a matrix"):
        pt.cov(pt.tensor3("t"))
    with pytest.raises(DTypeError, match="cov: complex inputs are not supported"):
        pt.cov(pt.vector("c", dtype="complex128"))


@pytest.mark.parametrize("ddof", [0, 1, 2.5])
def test_var_and_std_with_ddof(ddof: float) -> None:
    x, s = pt.matrix("x"), pt.tensor("s", shape=(3, 4))
    data = CUBE[:, :, 0]
    outputs = [pt.var(x, ddof=ddof), pt.std(x, axis=0, ddof=ddof),
               pt.std(s, axis=1, keepdims=True, ddof=ddof)]
    expected = [np.var(data, ddof=ddof), np.std(data, axis=0, ddof=ddof),
                np.std(data, axis=1, keepdims=True, ddof=ddof)]
    for (evaluated, compiled), want in zip(_both([x, s], outputs, [data, data]), expected):
        np.testing.assert_allclose(evaluated, want, rtol=1e-13)
        np.testing.assert_allclose(compiled, want, rtol=1e-13)
    check_pullback(lambda v: pt.std(v, axis=1, ddof=ddof), [data])


# --- argmax / argmin over several axes, searchsorted with a sorter -------------------------
def _merged_reference(reduce: Callable[..., Array], data: Array, axes: tuple[int, ...],
                      keepdims: bool) -> Array:
    """PyTensor's meaning: the axes (sorted) moved last and flattened into one."""
    axes = tuple(sorted(a % data.ndim for a in axes))
    kept = [a for a in range(data.ndim) if a not in axes]
    merged = np.transpose(data, kept + list(axes)).reshape([data.shape[a] for a in kept] + [-1])
    result = reduce(merged, axis=-1)
    return np.expand_dims(result, axes) if keepdims else result


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axes", [(0, 2), (2, 0), (1, -1), (0, 1, 2)])
def test_argmax_argmin_over_several_axes(axes: tuple[int, ...], keepdims: bool) -> None:
    data = RNG.integers(0, 4, size=(3, 4, 5)).astype(float)  # ties: the first one wins
    x, s = pt.tensor3("x"), pt.tensor("s", shape=data.shape)
    outputs = [pt.argmax(x, axes, keepdims), pt.argmin(s, axes, keepdims),
               x.argmax(axis=axes), s.argmin(axis=axes, keepdims=keepdims)]
    expected = [_merged_reference(np.argmax, data, axes, keepdims),
                _merged_reference(np.argmin, data, axes, keepdims),
                _merged_reference(np.argmax, data, axes, False),
                _merged_reference(np.argmin, data, axes, keepdims)]
    _check_equal([x, s], outputs, [data, data], expected)
    assert None not in outputs[1].type.shape


def test_argmax_over_several_axes_errors() -> None:
    with pytest.raises(ValueError, match="argmax: repeated axis"):
        pt.argmax(pt.tensor3("x"), (0, -3))
    with pytest.raises(ShapeError, match="argmin: axis 3 is out of bounds"):
        pt.argmin(pt.tensor3("x"), (0, 3))
    with pytest.raises(TypeError, match="argmax: axis must be an int or a sequence of ints"):
        pt.argmax(pt.tensor3("x"), 1.5)  # type: ignore[arg-type]


def test_searchsorted_with_a_sorter() -> None:
    a, v, order = pt.vector("a"), pt.matrix("v"), pt.vector("order", dtype="int64")
    unsorted = np.array([3.0, 1.0, 2.0, 5.0, 2.0])
    sorter = np.argsort(unsorted, kind="stable")
    queries = np.array([[0.0, 2.0], [2.5, 6.0]])
    outputs = [pt.searchsorted(a, v, sorter=order),
               pt.searchsorted(a, v, side="right", sorter=pt.argsort(a))]
    expected = [np.searchsorted(unsorted, queries, sorter=sorter),
                np.searchsorted(unsorted, queries, side="right", sorter=sorter)]
    _check_equal([a, v, order], outputs, [unsorted, queries, sorter], expected)
    with pytest.raises(TypeError, match="sorter must be an integer vector"):
        pt.searchsorted(a, v, sorter=a)


# --- nonzero, flatnonzero, where(cond), unique ----------------------------------------------
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 4), (2, 3, 4), (2, 0, 3)])
@pytest.mark.parametrize("static", [False, True])
def test_nonzero_flatnonzero_where_match_numpy(shape: tuple[int, ...], static: bool) -> None:
    data = RNG.integers(-1, 2, size=shape).astype(float)
    x = pt.tensor("x", shape=shape if static else (None,) * len(shape))
    indices = pt.nonzero(x)
    length = 0 if static and 0 in shape else None  # the count is known only when empty
    assert all(index.type == TensorType("int64", (length,)) for index in indices)
    outputs = [*indices, pt.flatnonzero(x), *pt.where(x), x[pt.nonzero(x)],
               *pt.nonzero(pt.gt(x, 0))]
    expected = [*np.nonzero(data), np.flatnonzero(data), *np.where(data), data[np.nonzero(data)],
                *np.nonzero(data > 0)]
    _check_equal([x], outputs, [data], expected)


def test_nonzero_of_integers_and_its_errors() -> None:
    data = np.array([[0, 3], [-2, 0]], dtype=np.int8)
    i = pt.matrix("i", dtype="int8")
    _check_equal([i], list(pt.nonzero(i)), [data], list(np.nonzero(data)))
    with pytest.raises(ShapeError, match="nonzero: cannot take the nonzero of a 0-d value"):
        pt.nonzero(pt.scalar("s"))
    with pytest.raises(TypeError, match="where: give both x and y, or neither"):
        pt.where(pt.vector("c"), 1.0, None)  # type: ignore[call-overload]


@pytest.mark.parametrize(
    "data",
    [
        np.array([3.0, 1.0, 2.0, 3.0, 1.0, 3.0]),
        np.array([[np.nan, 1.0, np.nan], [0.0, 1.0, -np.inf]]),
        np.array([2, 2, -1, 7, 2], dtype=np.int32),
        np.zeros(0),
        np.array([4.5]),
        np.array([True, False, True]),
    ],
    ids=["ties", "nan", "int32", "empty", "one", "bool"],
)
@pytest.mark.parametrize("static", [False, True])
def test_unique_matches_numpy(data: Array, static: bool) -> None:
    x = pt.tensor("x", shape=data.shape if static else (None,) * data.ndim, dtype=data.dtype.name)
    values, first, inverse, counts = pt.unique(x, True, True, True)
    length = 0 if static and data.size == 0 else None  # known only when empty
    assert values.type == TensorType(data.dtype.name, (length,))
    outputs = [pt.unique(x), values, first, inverse, counts,
               *pt.unique(x, return_counts=True), *pt.unique(x, return_inverse=True)]
    expected = [np.unique(data), *np.unique(data, True, True, True),
                *np.unique(data, return_counts=True), *np.unique(data, return_inverse=True)]
    _check_equal([x], outputs, [data], expected)


def test_unique_nans_apart_without_equal_nan() -> None:
    data = np.array([np.nan, 1.0, np.nan])
    x = pt.vector("x")
    _check_equal([x], [pt.unique(x, equal_nan=False)], [data], [np.unique(data, equal_nan=False)])


def test_unique_differentiates_to_the_elements_read() -> None:
    distinct = [RNG.permutation(6).reshape(2, 3) + RNG.uniform(0.1, 0.9, size=(2, 3))]
    check_pullback(lambda x: pt.unique(x), distinct)
    check_pushforward(lambda x: pt.unique(x) * 3, distinct)


def test_unique_errors() -> None:
    with pytest.raises(ValueError, match="only axis=None is supported"):
        pt.unique(pt.matrix("m"), axis=0)  # type: ignore[call-overload]
    with pytest.raises(DTypeError, match="complex values have no order"):
        pt.unique(pt.vector("c", dtype="complex128"))
