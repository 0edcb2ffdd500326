"""Every elementwise function against NumPy: values, result dtype (including NumPy's
refusals), broadcasting over static length-1 axes and different ranks, and the static
shapes `infer` promises."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import ops as pt
from fgraph import DTypeError, Graph, Input, TensorType, Variable, check_graph, evaluate
from tests.ops.elemwise_cases import CASES, Array, Case

DTYPES = ("float64", "float32", "int64", "bool")
SHAPES: dict[int, tuple[tuple[tuple[int, ...], ...], ...]] = {
    1: (((),), ((0,),), ((2, 3),), ((1, 4),)),
    2: (
        ((2, 3), (2, 3)),
        ((2, 3), (3,)),
        ((2, 1), (1, 3)),
        ((4, 1, 3), (2, 1)),
        ((0, 3), (1, 3)),
        ((), (3,)),
    ),
    3: (((2, 3), (2, 3), (2, 3)), ((2, 1), (3,), ()), ((4, 1, 3), (2, 1), (1,))),
}
RTOL = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}


def values_of(dtype: str, shapes: tuple[tuple[int, ...], ...], seed: int) -> list[Array]:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return [rng.integers(0, 2, size=shape).astype(bool) for shape in shapes]
    if dtype.startswith("int"):
        return [rng.integers(-3, 4, size=shape).astype(dtype) for shape in shapes]
    return [rng.uniform(-3, 3, size=shape).astype(dtype) for shape in shapes]


def inputs_for(values: list[Array], static: bool) -> list[Input]:
    """Inputs with the values' exact shapes, or with only their length-1 axes known."""
    return [
        Input(
            TensorType(
                value.dtype.name,
                value.shape if static else tuple(1 if n == 1 else None for n in value.shape),
            ),
            f"in{number}",
        )
        for number, value in enumerate(values)
    ]


def build_and_run(case: Case, values: list[Array], static: bool) -> tuple[Variable, Array]:
    variables = inputs_for(values, static)
    output = case.build(*variables)
    check_graph(Graph(variables, [output]))
    (result,) = evaluate([output], dict(zip(variables, values)))
    return output, result


def assert_matches(result: Array, expected: Array) -> None:
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    assert result.shape == expected.shape
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(result, expected, rtol=RTOL[expected.dtype.name], atol=0)
    else:
        np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_values_and_dtype_match_numpy(case: Case, dtype: str) -> None:
    for number, shapes in enumerate(SHAPES[case.nin]):
        values = values_of(dtype, shapes, seed=number)
        try:
            with np.errstate(all="ignore"):
                expected = np.asarray(case.reference(*values))
        except TypeError:  # NumPy has no loop for this dtype: neither do we
            with pytest.raises(DTypeError, match=dtype):
                case.build(*inputs_for(values, static=True))
            return
        except ValueError:  # e.g. integers to negative integer powers: raised when run
            with pytest.raises(ValueError):
                build_and_run(case, values, static=True)
            continue
        for static in (True, False):
            output, result = build_and_run(case, values, static)
            assert_matches(result, expected)
            assert output.type.accepts_shape(result.shape), (output.type, result.shape)
            if static:
                assert output.type.shape == expected.shape


def test_integer_power_by_negative_integer_fails_like_numpy() -> None:
    with pytest.raises(ValueError, match="negative integer powers"):
        build_and_run(
            CASES[[case.name for case in CASES].index("pow")],
            [np.array([2, 3]), np.array([1, -1])],
            static=True,
        )


def test_ints_give_numpy_float_dtypes_in_unary_float_functions() -> None:
    for dtype, float_dtype in (("int8", "float16"), ("int16", "float32"), ("int32", "float64")):
        x = pt.vector("x", dtype=dtype)
        for function in (pt.exp, pt.sigmoid, pt.softplus, pt.erf, pt.erfc, pt.sqrt):
            assert function(x).dtype == float_dtype
    assert pt.erf(pt.vector("x", dtype="float32")).dtype == "float32"


def test_round_is_half_to_even() -> None:
    x = pt.vector("x")
    values = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.7])
    got = evaluate([pt.round(x), pt.round(x * 100, -1)], {x: values})
    np.testing.assert_array_equal(got[0], [0.0, 2.0, 2.0, -0.0, -2.0, 4.0])
    np.testing.assert_array_equal(got[1], np.round(values * 100, -1))
    owner = pt.round(x).owner
    assert owner is not None and str(owner.op) == "Round{0}"


def test_sigmoid_and_softplus_are_stable_at_extremes() -> None:
    x = pt.vector("x")
    values = np.array([-1000.0, -40.0, -1.0, 0.0, 1.0, 40.0, 1000.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sigmoid, softplus = evaluate([pt.sigmoid(x), pt.softplus(x)], {x: values})
    expected_sigmoid = [1 / (1 + math.exp(-v)) if v > -700 else 0.0 for v in values]
    np.testing.assert_allclose(sigmoid, expected_sigmoid, rtol=1e-15)
    expected_softplus = [math.log1p(math.exp(-abs(v))) + max(v, 0.0) for v in values]
    np.testing.assert_allclose(softplus, expected_softplus, rtol=1e-15)
    assert softplus[1] > 0 and sigmoid[1] > 0  # tiny values kept, not flushed to 0


def test_erf_known_values() -> None:
    x = pt.vector("x")
    values = np.array([0.0, 0.5, 1.0, 2.0, -1.0, 6.0])
    erf, erfc = evaluate([pt.erf(x), pt.erfc(x)], {x: values})
    expected = [0.0, 0.5204998778130465, 0.8427007929497149, 0.9953222650189527,
                -0.8427007929497149, 1.0]
    np.testing.assert_allclose(erf, expected, rtol=1e-15)
    np.testing.assert_allclose(erfc[:5], 1 - np.array(expected[:5]), rtol=0, atol=1e-16)
    np.testing.assert_allclose(erfc[5], 2.1519736712498913e-17, rtol=1e-14)  # not 1 - erf


def test_logical_functions_accept_any_dtype() -> None:
    x = pt.vector("x")
    n = pt.vector("n", dtype="int32")
    outputs = [pt.logical_and(x, n), pt.logical_or(x, n), pt.logical_xor(x, n), pt.logical_not(n)]
    assert all(output.dtype == "bool" for output in outputs)
    xs, ns = np.array([0.0, 0.0, 2.5, -1.0]), np.array([0, 3, 0, -2], dtype="int32")
    got = evaluate(outputs, {x: xs, n: ns})
    for result, expected in zip(
        got,
        (np.logical_and(xs, ns), np.logical_or(xs, ns), np.logical_xor(xs, ns), np.logical_not(ns)),
    ):
        np.testing.assert_array_equal(result, expected)


def test_isnan_isinf_isfinite() -> None:
    x = pt.vector("x")
    values = np.array([0.0, np.nan, np.inf, -np.inf, 1.0])
    got = evaluate([pt.isnan(x), pt.isinf(x), pt.isfinite(x)], {x: values})
    np.testing.assert_array_equal(got[0], [False, True, False, False, False])
    np.testing.assert_array_equal(got[1], [False, False, True, True, False])
    np.testing.assert_array_equal(got[2], [True, False, False, False, True])


def test_where_dtype_ignores_the_condition_dtype() -> None:
    cond = pt.vector("c")  # float64 condition: nonzero is true
    x = pt.vector("x", dtype="float32")
    out = pt.where(cond, x, 0)
    assert out.dtype == "float32"
    (got,) = evaluate([out], {cond: np.array([0.0, 2.0, np.nan]), x: np.ones(3, "float32")})
    np.testing.assert_array_equal(got, np.where([0.0, 2.0, np.nan], np.ones(3, "float32"), 0))


def test_clip_with_one_bound_and_with_crossed_bounds() -> None:
    x = pt.vector("x")
    values = np.array([-3.0, 0.0, 3.0])
    clipped = [pt.clip(x, None, 1.0), pt.clip(x, -1.0, None), pt.clip(x, 2.0, 1.0)]
    got = evaluate(clipped, {x: values})
    np.testing.assert_array_equal(got[0], np.clip(values, None, 1.0))
    np.testing.assert_array_equal(got[1], np.clip(values, -1.0, None))
    np.testing.assert_array_equal(got[2], np.clip(values, 2.0, 1.0))
    with pytest.raises(ValueError, match="at least one"):
        pt.clip(x, None, None)


def test_clip_keeps_integer_dtype_with_weak_bounds() -> None:
    n = pt.vector("n", dtype="int16")
    out = pt.clip(n, 0, 10)
    assert out.dtype == "int16"
    (got,) = evaluate([out], {n: np.array([-5, 5, 50], dtype="int16")})
    np.testing.assert_array_equal(got, [0, 5, 10])
