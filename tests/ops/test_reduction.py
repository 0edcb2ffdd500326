"""Reductions, index reductions and scans: values and dtypes against NumPy, static shapes
against actual ones, and clear errors for bad axes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Input, Op, ShapeError, Variable, check_graph, evaluate, type_of_value
from ops.reduction import (
    Argmax,
    CumProd,
    CumSum,
    Max,
    Prod,
    Sum,
)
from tests.ops.checks import Array, run

Build = Callable[..., Variable]


def run_static_and_dynamic(build: Build, values: list[Array]) -> Array:
    """Evaluate `build` over inputs of unknown and of fully static shapes: both give the
    same array, and the static build infers exactly the result's shape."""
    dynamic = run(build, values)
    inputs = [Input(type_of_value(value), f"static{n}") for n, value in enumerate(values)]
    output = build(*inputs)
    check_graph(Graph(inputs, [output]))
    (static,) = evaluate([output], dict(zip(inputs, values)))
    assert output.type.shape == static.shape
    np.testing.assert_array_equal(static, dynamic)
    return dynamic


def sample(shape: tuple[int, ...], dtype: str, seed: int = 0) -> Array:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.6
    if dtype.startswith("int"):
        return rng.integers(-4, 5, size=shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def assert_matches(got: Array, expected: Any, dtype: str) -> None:
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape
    rtol = 1e-5 if dtype in ("float32", "float16") else 1e-12
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


SHAPES_AND_AXES = [
    ((), None),
    ((5,), None),
    ((5,), 0),
    ((5,), -1),
    ((3, 4), None),
    ((3, 4), 0),
    ((3, 4), 1),
    ((3, 4), (0, 1)),
    ((3, 4), ()),
    ((2, 3, 4), (0, 2)),
    ((2, 3, 4), (-1, 0)),
    ((2, 1, 4), 1),
]
DTYPES = ["float64", "float32", "int32", "bool"]

REDUCTIONS: dict[str, tuple[Callable[..., Variable], Callable[..., Any]]] = {
    "sum": (pt.sum, np.sum),
    "prod": (pt.prod, np.prod),
    "max": (pt.max, np.max),
    "min": (pt.min, np.min),
    "all": (pt.all, np.all),
    "any": (pt.any, np.any),
    "mean": (pt.mean, np.mean),
    "var": (pt.var, np.var),
    "std": (pt.std, np.std),
}


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "axis"), SHAPES_AND_AXES)
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduction_matches_numpy(
    name: str, shape: tuple[int, ...], axis: Any, dtype: str, keepdims: bool
) -> None:
    function, reference = REDUCTIONS[name]
    x = sample(shape, dtype)
    got = run_static_and_dynamic(lambda v: function(v, axis, keepdims), [x])
    assert_matches(got, reference(x, axis=axis, keepdims=keepdims), dtype)


@pytest.mark.parametrize("name", ["sum", "prod", "all", "any", "mean", "var"])
@pytest.mark.parametrize(("shape", "axis"), [((0,), None), ((0, 3), 0), ((0, 3), 1), ((3, 0), 1)])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_reduction_over_empty_axes_matches_numpy(
    name: str, shape: tuple[int, ...], axis: Any
) -> None:
    function, reference = REDUCTIONS[name]
    x = np.zeros(shape)
    got = run_static_and_dynamic(lambda v: function(v, axis), [x])
    assert_matches(got, reference(x, axis=axis), "float64")


@pytest.mark.parametrize("function", [pt.max, pt.min])
def test_extremum_of_empty_axis_is_an_error(function: Callable[..., Variable]) -> None:
    x = np.zeros((0, 3))
    with pytest.raises(ValueError, match=r"axis 0 of the input \(0, 3\) is empty"):
        run(lambda v: function(v, 0), [x])
    with pytest.raises(ShapeError, match=r"axis 0 of input float64\(0, 3\) is empty"):
        function(pt.tensor("x", shape=(0, 3)), 0)
    # Reducing the non-empty axis of an empty array is fine, as in NumPy.
    assert run_static_and_dynamic(lambda v: function(v, 1), [x]).shape == (0,)


@pytest.mark.parametrize("function", [pt.argmax, pt.argmin])
def test_arg_extremum_of_empty_axis_is_an_error(function: Callable[..., Variable]) -> None:
    with pytest.raises(ValueError, match=r"axis 1 of the input \(3, 0\) is empty"):
        run(lambda v: function(v, 1), [np.zeros((3, 0))])
    with pytest.raises(ValueError, match="is empty"):
        run(lambda v: function(v), [np.zeros((0,))])
    assert run_static_and_dynamic(lambda v: function(v, 0), [np.zeros((3, 0))]).shape == (0,)


def test_max_propagates_nan_like_numpy() -> None:
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(run(lambda v: pt.max(v, 1), [x]), np.max(x, axis=1))
    np.testing.assert_array_equal(run(lambda v: pt.min(v, 1), [x]), np.min(x, axis=1))


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
@pytest.mark.parametrize(
    ("shape", "axis"),
    [
        ((), None),
        ((5,), None),
        ((5,), 0),
        ((3, 4), None),
        ((3, 4), 0),
        ((3, 4), -1),
        ((2, 3, 4), 1),
    ],
)
@pytest.mark.parametrize(
    ("function", "reference"), [(pt.argmax, np.argmax), (pt.argmin, np.argmin)]
)
def test_arg_extremum_matches_numpy(
    function: Callable[..., Variable],
    reference: Callable[..., Any],
    shape: tuple[int, ...],
    axis: int | None,
    dtype: str,
    keepdims: bool,
) -> None:
    x = sample(shape, dtype)  # small integers and bools: many ties, first one wins
    got = run_static_and_dynamic(lambda v: function(v, axis, keepdims), [x])
    expected = np.asarray(reference(x, axis=axis, keepdims=keepdims)).astype("int64")
    assert got.dtype == np.dtype("int64")
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
@pytest.mark.parametrize(
    ("shape", "axis"),
    [((5,), 0), ((5,), -1), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1), ((0, 3), 0)],
)
@pytest.mark.parametrize(
    ("function", "reference"), [(pt.cumsum, np.cumsum), (pt.cumprod, np.cumprod)]
)
def test_cumulative_matches_numpy(
    function: Callable[..., Variable],
    reference: Callable[..., Any],
    shape: tuple[int, ...],
    axis: int,
    dtype: str,
) -> None:
    x = sample(shape, dtype)
    got = run_static_and_dynamic(lambda v: function(v, axis), [x])
    assert_matches(got, reference(x, axis=axis), dtype)


@pytest.mark.parametrize("shape", [(), (5,), (3, 4)])
@pytest.mark.parametrize(
    ("function", "reference"), [(pt.cumsum, np.cumsum), (pt.cumprod, np.cumprod)]
)
def test_cumulative_without_axis_flattens(
    function: Callable[..., Variable], reference: Callable[..., Any], shape: tuple[int, ...]
) -> None:
    x = sample(shape, "float64")
    got = run_static_and_dynamic(lambda v: function(v), [x])
    assert_matches(got, reference(x), "float64")


@pytest.mark.parametrize(("op_class", "forward"), [(CumSum, np.cumsum), (CumProd, np.cumprod)])
@pytest.mark.parametrize("axis", [0, 1])
def test_reversed_scan_is_the_flipped_scan(
    op_class: type[CumSum | CumProd], forward: Callable[..., Array], axis: int
) -> None:
    x = sample((3, 4), "float64")
    got = run_static_and_dynamic(lambda v: op_class(axis, reverse=True)(v), [x])
    np.testing.assert_allclose(got, np.flip(forward(np.flip(x, axis), axis=axis), axis))
    assert op_class(axis, reverse=True) != op_class(axis)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize(("shape", "axis"), [((5,), None), ((3, 4), 1), ((2, 3, 4), (0, 2))])
def test_logsumexp_matches_numpy(shape: tuple[int, ...], axis: Any, keepdims: bool) -> None:
    x = sample(shape, "float64")
    got = run_static_and_dynamic(lambda v: pt.logsumexp(v, axis, keepdims), [x])
    expected = np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))
    assert_matches(got, expected, "float64")


def test_logsumexp_is_stable_and_handles_infinities() -> None:
    big = np.array([1000.0, 1000.0, -1000.0])
    np.testing.assert_allclose(run(pt.logsumexp, [big]), 1000.0 + np.log(2.0))
    np.testing.assert_allclose(run(pt.logsumexp, [big - 2000.0]), -1000.0 + np.log(2.0))
    rows = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [-np.inf, 2.0]])
    got = run(lambda v: pt.logsumexp(v, 1), [rows])
    np.testing.assert_array_equal(got, [-np.inf, np.inf, 2.0])


def test_logsumexp_of_integers_is_float64() -> None:
    x = np.array([1, 2, 3], dtype="int32")
    got = run(pt.logsumexp, [x])
    assert got.dtype == np.dtype("float64")
    np.testing.assert_allclose(got, np.log(np.sum(np.exp([1.0, 2.0, 3.0]))))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    ("shape", "axis"), [((5,), -1), ((3, 4), -1), ((3, 4), 0), ((2, 3, 4), (1, 2))]
)
def test_softmax_and_log_softmax_match_numpy(shape: tuple[int, ...], axis: Any, dtype: str) -> None:
    x = sample(shape, dtype)
    exponentials = np.exp(x - np.max(x, axis=axis, keepdims=True))
    expected = exponentials / np.sum(exponentials, axis=axis, keepdims=True)
    assert_matches(run_static_and_dynamic(lambda v: pt.softmax(v, axis), [x]), expected, dtype)
    got_log = run_static_and_dynamic(lambda v: pt.log_softmax(v, axis), [x])
    assert_matches(got_log, np.log(expected), dtype)


def test_softmax_and_log_softmax_do_not_overflow() -> None:
    x = np.array([1000.0, 1000.0, 0.0])
    np.testing.assert_allclose(run(pt.softmax, [x]), [0.5, 0.5, 0.0])
    half = -np.log(2.0)
    np.testing.assert_allclose(run(pt.log_softmax, [x]), [half, half, -1000.0 + half])
    np.testing.assert_allclose(run(pt.softmax, [-x]), [0.0, 0.0, 1.0])


@pytest.mark.parametrize("ddof", [0, 1, 2.5, 5])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_var_and_std_ddof_match_numpy(ddof: float) -> None:
    x = sample((3, 4), "float64")
    for axis in (None, 0, 1):
        got = run_static_and_dynamic(lambda v: pt.var(v, axis, ddof=ddof), [x])
        assert_matches(got, np.var(x, axis=axis, ddof=ddof), "float64")
        got = run_static_and_dynamic(lambda v: pt.std(v, axis, True, ddof=ddof), [x])
        assert_matches(got, np.std(x, axis=axis, keepdims=True, ddof=ddof), "float64")


def test_complex_var_and_std_are_rejected() -> None:
    with pytest.raises(TypeError, match="var: complex"):
        pt.var(pt.vector("z", dtype="complex128"))
    with pytest.raises(TypeError, match="std: complex"):
        pt.std(pt.vector("z", dtype="complex64"))


def test_methods_forward_to_the_reductions() -> None:
    x = sample((3, 4), "float64")
    np.testing.assert_allclose(run(lambda v: v.sum(axis=0), [x]), x.sum(axis=0))
    np.testing.assert_allclose(run(lambda v: v.max(1, True), [x]), x.max(1, keepdims=True))
    np.testing.assert_allclose(run(lambda v: v.mean(), [x]), x.mean())
    np.testing.assert_array_equal(run(lambda v: v.argmax(axis=1), [x]), x.argmax(axis=1))


def test_static_shapes_propagate_through_reductions() -> None:
    x = pt.tensor("x", shape=(None, 3, 1))
    assert pt.sum(x, 0).type.shape == (3, 1)
    assert pt.max(x, (0, 2), keepdims=True).type.shape == (1, 3, 1)
    assert pt.argmax(x, 1).type.shape == (None, 1)
    assert pt.argmax(x, keepdims=True).type.shape == (1, 1, 1)
    assert pt.cumsum(x, 0).type.shape == (None, 3, 1)
    assert pt.softmax(x, 1).type.shape == (None, 3, 1)
    assert pt.mean(x, 1).type.shape == (None, 1)


def test_mean_of_unknown_length_counts_at_run_time() -> None:
    x = pt.vector("x", dtype="float32")
    y = pt.mean(x)
    assert y.dtype == "float32"
    for n in (1, 4, 7):
        values = np.arange(n, dtype="float32")
        (got,) = evaluate([y], {x: values})
        np.testing.assert_allclose(got, values.mean())


# --- ops ------------------------------------------------------------------------------
def test_reduction_ops_normalize_and_validate_their_fields() -> None:
    assert Sum((2, 0)) == Sum([0, 2]) == Sum(axes=(np.int64(0), 2))
    different: list[Op] = [Sum((0,)), Prod((0,))]
    assert different[0] != different[1]
    assert hash(Max((0,))) == hash(Max((0,)))
    assert Sum((0,)).axes == (0,)
    with pytest.raises(ValueError, match=r"Sum: axes \(-1,\) must be distinct and non-negative"):
        Sum((-1,))
    with pytest.raises(ValueError, match=r"Max: axes \(1, 1\)"):
        Max((1, 1))
    not_an_axis: Any = 1.5
    with pytest.raises(TypeError):
        Sum((not_an_axis,))
    with pytest.raises(ValueError, match="Argmax: axis -1 must be non-negative"):
        Argmax(-1)
    with pytest.raises(ValueError, match="CumSum: axis -2"):
        CumSum(-2)


@pytest.mark.parametrize(
    "op", [Sum((2,)), Prod((0, 2)), Max((5,)), Argmax(2), CumSum(2), CumProd(3)]
)
def test_ops_reject_axes_beyond_the_input_rank(op: Op) -> None:
    x = pt.matrix("x")
    with pytest.raises(ShapeError, match=r"axis \d is out of bounds for input float64\(\?, \?\)"):
        op(x)
    with pytest.raises(ShapeError, match=type(op).__name__):
        op(x)


@pytest.mark.parametrize(
    "name", ["sum", "prod", "max", "min", "all", "any", "mean", "var", "std", "logsumexp"]
)
def test_functions_name_themselves_and_the_bad_axis(name: str) -> None:
    function = getattr(pt, name)
    x = pt.matrix("x")
    with pytest.raises(ShapeError, match=rf"^{name}: axis 2 is out of bounds for an input of rank"):
        function(x, 2)
    with pytest.raises(ShapeError, match=rf"^{name}: axis -3 is out of bounds"):
        function(x, (0, -3))
    with pytest.raises(ValueError, match=rf"^{name}: repeated axis in \(1, -1\)"):
        function(x, (1, -1))
    with pytest.raises(TypeError, match=rf"^{name}: axis must be an int"):
        function(x, 1.0)


@pytest.mark.parametrize(
    "name", ["argmax", "argmin", "cumsum", "cumprod", "softmax", "log_softmax"]
)
def test_single_axis_functions_reject_bad_axes(name: str) -> None:
    function = getattr(pt, name)
    x = pt.matrix("x")
    with pytest.raises(ShapeError, match=rf"^{name}: axis 2 is out of bounds"):
        function(x, 2)
    if name in ("cumsum", "cumprod"):  # argmax, argmin take several (PyTensor's meaning)
        with pytest.raises(TypeError, match=rf"^{name}: axis must be an int or None"):
            function(x, (0, 1))


def test_reduction_of_a_scalar_over_no_axes_still_takes_numpy_dtypes() -> None:
    x = pt.scalar("x", dtype="int8")
    assert pt.sum(x).dtype == "int64"
    assert pt.prod(x).dtype == "int64"
    assert pt.max(x).dtype == "int8"
    assert pt.all(x).dtype == "bool"
    assert pt.mean(x).dtype == "float64"
    assert pt.cumsum(pt.vector("v", dtype="uint32")).dtype == "uint64"
