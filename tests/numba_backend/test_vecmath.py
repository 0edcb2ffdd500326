"""Accuracy and special values of `numba_backend.vecmath` against NumPy.

Errors are measured in ulps of the reference (|got - ref| / spacing(ref)). float64 is
compared with NumPy's float64 ufuncs (themselves within about 1 ulp). float32 is compared
with NumPy's float64 result rounded to float32: NumPy's own float32 ufuncs are up to
about 3 ulp off (its SIMD float32 log and expm1), which would hide our error.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import numpy.typing as npt
import pytest

from numba_backend import vecmath

NAMES = ["exp", "expm1", "log", "log1p", "sin", "cos"]
DTYPES: list[type[np.floating[Any]]] = [np.float64, np.float32]
MAX_ULP = 2.0
SIZE = 20_000

Array = npt.NDArray[np.floating[Any]]
_loops: dict[tuple[str, str], numba.Dispatcher] = {}


def suffix(dtype: type[np.floating[Any]]) -> str:
    return "f64" if dtype is np.float64 else "f32"


def apply(name: str, a: Array) -> Array:
    """vecmath's `name` over `a`, in a numba loop (the way generated code calls it)."""
    key = (name, suffix(a.dtype.type))
    if key not in _loops:
        f = getattr(vecmath, f"{name}_{key[1]}")

        def loop(x: Array, out: Array) -> None:
            for i in range(x.size):
                out[i] = f(x[i])

        _loops[key] = numba.njit(error_model="numpy")(loop)
    out = np.empty_like(a)
    _loops[key](a, out)
    return out


def reference(name: str, a: Array) -> Array:
    with np.errstate(all="ignore"):
        result: Array = getattr(np, name)(a.astype(np.float64)).astype(a.dtype)
    return result


def samples(name: str, dtype: type[np.floating[Any]]) -> Array:
    """Uniform and log-uniform magnitudes of both signs over the whole range, plus the
    regions where each function is delicate."""
    rng = np.random.default_rng(sum(map(ord, name)))
    info = np.finfo(dtype)
    biggest, tiny = float(info.max), float(info.smallest_subnormal)
    exp_max = float(np.log(biggest))
    exp_min = float(np.log(tiny)) - 1.0
    sign = rng.choice([-1.0, 1.0], SIZE)
    parts = [
        rng.uniform(-0.5, 0.5, SIZE) * 2 * (exp_max + 1 if "exp" in name else biggest),
        sign * np.exp(rng.uniform(np.log(tiny), np.log(biggest), SIZE)),
        rng.uniform(-3.0, 3.0, SIZE),
        sign * np.exp(rng.uniform(-40.0, 0.0, SIZE)),
    ]
    if "exp" in name:
        parts += [
            rng.uniform(exp_min, exp_min + 30.0, SIZE),  # underflow, subnormal results
            rng.uniform(exp_max - 5.0, exp_max + 0.1, SIZE),  # overflow threshold
            rng.uniform(-60.0, 60.0, SIZE),
        ]
    if "log" in name:
        parts += [
            1.0 + rng.uniform(-1e-3, 1e-3, SIZE),
            -1.0 + np.exp(rng.uniform(-40.0, 0.0, SIZE)),  # near -1 for log1p
            np.exp(rng.uniform(np.log(tiny), np.log(float(info.tiny)), SIZE)),  # subnormals
        ]
    if name in ("sin", "cos"):
        k = np.round(np.exp(rng.uniform(0.0, np.log(1e15), SIZE))) * sign
        near = k * (np.pi / 2)
        parts += [
            near,
            np.nextafter(near, 0.0),
            near + rng.uniform(-1e-6, 1e-6, SIZE),
            rng.uniform(-1e9, 1e9, SIZE),
            sign * np.exp(rng.uniform(np.log(1e9), np.log(biggest), SIZE)),
        ]
    with np.errstate(over="ignore"):
        return np.concatenate(parts).astype(dtype)


def ulp_errors(got: Array, ref: Array) -> npt.NDArray[np.float64]:
    spacing = np.spacing(np.abs(ref)).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref.astype(np.float64)) / spacing


@pytest.mark.parametrize("dtype", DTYPES, ids=suffix)
@pytest.mark.parametrize("name", NAMES)
def test_accuracy(name: str, dtype: type[np.floating[Any]]) -> None:
    a = samples(name, dtype)
    got, ref = apply(name, a), reference(name, a)
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(got[~finite], ref[~finite])
    errors = ulp_errors(got[finite], ref[finite])
    worst = int(np.argmax(errors))
    assert errors[worst] <= MAX_ULP, f"{name}({a[finite][worst]!r}) = {got[finite][worst]!r}, numpy {ref[finite][worst]!r}"


SPECIAL = [
    np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0,
    1e-300, -1e-300, 5e-324, -5e-324, 2.2250738585072014e-308, -2.2250738585072014e-308,
    1.7976931348623157e308, -1.7976931348623157e308,
    709.782712893384, 709.7827128933841, 710.0, -708.4, -740.0, -745.1332191019411,
    -745.1332191019412, -746.0, -1000.0,
    88.72283, 88.72284, -87.3, -103.9, -104.0, -38.0, -40.0, -50.0,
    np.pi, np.pi / 2, -np.pi / 2, 1e14, -1e14, 2.0**45, 1e22, 1e300,
    np.nextafter(-1.0, 0.0), np.nextafter(-1.0, -2.0), np.nextafter(1.0, 0.0),
]  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES, ids=suffix)
@pytest.mark.parametrize("name", NAMES)
def test_special_values(name: str, dtype: type[np.floating[Any]]) -> None:
    """nan, infinities, zeros (with sign), overflow, underflow and domain errors are
    exactly NumPy's; other special inputs are within MAX_ULP."""
    with np.errstate(over="ignore"):
        a = np.array(SPECIAL, dtype=dtype)
    got = apply(name, a)
    with np.errstate(all="ignore"):
        ref: Array = getattr(np, name)(a)
    exact = ~np.isfinite(ref) | (ref == 0)
    np.testing.assert_array_equal(got[exact], ref[exact])
    signed = exact & ~np.isnan(ref)  # the sign of a nan carries no meaning
    np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(ref[signed]))
    assert np.all(ulp_errors(got[~exact], reference(name, a)[~exact]) <= MAX_ULP)


@pytest.mark.parametrize("dtype", DTYPES, ids=suffix)
def test_subnormal_exp(dtype: type[np.floating[Any]]) -> None:
    """exp and expm1 round into the subnormals (and not to zero) like NumPy."""
    a = np.array([-740.0, -745.0] if dtype is np.float64 else [-100.0, -103.0], dtype=dtype)
    got = apply("exp", a)
    assert np.all((got > 0) & (got < np.finfo(dtype).tiny))
    np.testing.assert_array_equal(got, reference("exp", a))


def test_signed_zeros() -> None:
    for name, expected in [("sin", -0.0), ("expm1", -0.0), ("log1p", -0.0), ("exp", 1.0), ("cos", 1.0), ("log", -np.inf)]:
        for dtype in DTYPES:
            got = apply(name, np.array([-0.0], dtype=dtype))[0]
            assert got == expected and np.signbit(got) == np.signbit(expected), (name, dtype)


# Doubles closest to multiples of pi/2 (from continued fractions of pi/2; the last is
# the closest of all doubles, |x mod pi/2| ~ 2^-61), where a reduction with too few
# bits of pi loses the result. The values are correctly rounded (mpmath, 3000 bits):
# NumPy's cos(214112296674652.0) is 179 ulp off.
HARD_TRIG = [2685575996367.0, 8958937768937.0, 214112296674652.0, 6381956970095103 * 2.0**797]
HARD_SIN = [-1.0, -2.2019812105637777e-14, 1.0, 1.0]
HARD_COS = [1.687321071925301e-13, 1.0, 2.593568520785501e-16, -4.687165924254628e-19]


def test_trig_hard_cases() -> None:
    a = np.array(HARD_TRIG + [-x for x in HARD_TRIG])
    sin = np.array(HARD_SIN + [-y for y in HARD_SIN])
    cos = np.array(HARD_COS + HARD_COS)
    assert np.all(ulp_errors(apply("sin", a), sin) <= 1.0)
    assert np.all(ulp_errors(apply("cos", a), cos) <= 1.0)


@pytest.mark.parametrize("dtype", DTYPES, ids=suffix)
@pytest.mark.parametrize("name", NAMES)
def test_loop_vectorizes(name: str, dtype: type[np.floating[Any]]) -> None:
    """The element loop over each function is vectorized by LLVM."""
    apply(name, np.ones(4, dtype=dtype))
    loop = _loops[(name, suffix(dtype))]
    assert any("vector.body" in ir for ir in loop.inspect_llvm().values())


@pytest.mark.parametrize("dtype", DTYPES, ids=suffix)
@pytest.mark.parametrize("name", NAMES)
def test_scalar_code_matches_the_loop(name: str, dtype: type[np.floating[Any]]) -> None:
    """Outside a vectorized loop (scalar code, where sin and cos branch between their two
    reductions instead of computing both), results are bitwise those of the loop."""
    with np.errstate(over="ignore"):
        a = np.concatenate([np.array(SPECIAL + HARD_TRIG, dtype=dtype), samples(name, dtype)[::400]])
    f = getattr(vecmath, f"{name}_{suffix(dtype)}")
    scalar = numba.njit(error_model="numpy")(lambda x: f(x))
    got = np.array([scalar(x) for x in a], dtype=dtype)
    np.testing.assert_array_equal(got, apply(name, a))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(apply(name, a)))


def test_not_callable_from_python() -> None:
    """The functions are intrinsics, for jitted code only: a clear error from Python."""
    with pytest.raises(NotImplementedError):
        vecmath.exp_f64(1.0)


@pytest.mark.parametrize(("shape", "static", "vectorized"), [
    ((3, 3), (3, 3), False),          # short static innermost axis: one element at a time
    ((40, 1), (None, 1), True),       # a loop of one step is none: the outer one vectorizes
    ((40, 3, 1), (None, 3, 1), False),
    ((), (), False),                  # one element
    ((5, 15), (None, 15), False),
    ((5, 16), (None, 16), True),      # long enough for LLVM's vectorizer
    ((4, 7), (None, None), True),     # unknown: the function's level assumes long
])
def test_elementwise_code_calls_libm_where_its_loop_runs_one_element_at_a_time(
        shape: tuple[int, ...], static: tuple[int | None, ...], vectorized: bool) -> None:
    """An elementwise node whose loop cannot vectorize (one element, or an innermost
    axis of static length below 16) calls libm's functions, others vecmath's; both give
    NumPy's values (to 2 ulp)."""
    import ops as pt
    from numba_backend import function

    x = pt.tensor("x", dtype="float64", shape=static)
    compiled = function([x], [pt.exp(x) + pt.log(x)])
    assert ("exp_f64(" in compiled.source) == vectorized
    assert ("np.exp(" in compiled.source) == (not vectorized)
    value = np.random.default_rng(2).uniform(0.5, 3.0, size=shape)
    (got,) = compiled(value)
    np.testing.assert_allclose(got, np.exp(value) + np.log(value), rtol=1e-15)
