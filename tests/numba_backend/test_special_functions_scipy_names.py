"""Accuracy of the compiled special functions added for issue 21 (`gamma`, `betainc`
and its derivatives, `gammaincinv`, `zeta`, `owens_t`, and `jv`, `kv`, `kve` of
`numba_backend.bessel_functions`) against SciPy over wide ranges, to the bounds their
docstrings state, and against mpmath (30-40 digits) where SciPy itself is off."""

from __future__ import annotations

from typing import Any

import mpmath
import numpy as np
import pytest
import scipy.special as sc

from numba_backend import special_functions as F
from tests.numba_backend.test_special_functions import _apply_one, _apply_two, relative_error

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(2121)


def _apply_three(function: Any, a: Array, b: Array, x: Array) -> Array:
    return np.array([function(p, q, y) for p, q, y in zip(a, b, x)])


def test_gamma() -> None:
    x = np.concatenate([np.linspace(-30, 180, 20001), [0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan,
                                                      171.6, 171.7, 172.0, 1e-300]])
    assert relative_error(_apply_one(F.gamma, x), sc.gamma(x)).max() <= 1e-14


def test_betainc() -> None:
    a, b = 10 ** RNG.uniform(-1, 3, (2, 20000))
    x = RNG.uniform(0, 1, 20000)
    got, want = _apply_three(F.betainc, a, b, x), sc.betainc(a, b, x)
    error = relative_error(got, want)
    error[want < 1e-250] = 0.0  # SciPy loses digits down there (up to 12%); mpmath below
    assert error.max() <= 1e-12
    # SciPy's 5.22e-295 is 12% off here; mpmath's value:
    assert F.betainc(846.474399720085, 16.133913055160534, 0.4155843630463034) == pytest.approx(
        5.919086782085693e-295, rel=1e-12)
    assert F.betainc(477.7039261892381, 29.348838388375928, 0.2162196354452789) == pytest.approx(
        4.1090985548568515e-275, rel=1e-12)
    edges = np.array([(0, 1, 0.5), (1, 0, 0.5), (0, 0, 0.5), (2, 3, 1.5), (-1, 1, 0.5), (2, 2, 0), (2, 2, 1),
                      (np.nan, 1, 0.5)], dtype=float).T
    np.testing.assert_array_equal(_apply_three(F.betainc, *edges), sc.betainc(*edges))


def test_betainc_derivatives_against_mpmath() -> None:
    cases = [(2.0, 3.0, 0.4), (0.5, 4.0, 0.8), (134.9, 102.2, 0.53), (0.2, 0.3, 0.01), (30.0, 5.0, 0.95)]
    mpmath.mp.dps = 40
    for a, b, x in cases:
        in_a = float(mpmath.diff(lambda t: mpmath.betainc(t, b, 0, x, regularized=True), a))
        in_b = float(mpmath.diff(lambda t: mpmath.betainc(a, t, 0, x, regularized=True), b))
        assert F.betainc_der_a(a, b, x) == pytest.approx(in_a, rel=1e-12), (a, b, x)
        assert F.betainc_der_b(a, b, x) == pytest.approx(in_b, rel=1e-12), (a, b, x)
    assert F.betainc_der_a(2.0, 3.0, 0.0) == 0.0 and F.betainc_der_b(2.0, 3.0, 1.0) == 0.0
    assert np.isnan(F.betainc_der_a(-1.0, 3.0, 0.5)) and np.isnan(F.betainc_der_b(1.0, 3.0, 1.5))


def test_gammaincinv() -> None:
    a = 10 ** RNG.uniform(-2, 3, 20000)
    p = RNG.uniform(0, 1, 20000)
    p[:3000] = 10 ** RNG.uniform(-300, 0, 3000)
    p[3000:6000] = 1 - 10 ** RNG.uniform(-16, 0, 3000)
    got, want = _apply_two(F.gammaincinv, a, p), sc.gammaincinv(a, p)
    error = relative_error(got, want)
    error[want < 1e-300] = 0.0
    assert error.max() <= 1e-12
    edges_a = np.array([0.0, 1.0, 1.0, -1.0, 2.0, np.nan])
    edges_p = np.array([0.5, 0.0, 1.0, 0.5, 1.5, 0.5])
    np.testing.assert_array_equal(_apply_two(F.gammaincinv, edges_a, edges_p), sc.gammaincinv(edges_a, edges_p))


def test_zeta() -> None:
    s = np.concatenate([np.linspace(-60, 60, 12001), [1.0, 0.0, -2.0, -1.0, np.inf, -np.inf, np.nan,
                                                       1 + 1e-10, 1 - 1e-10, 1e-300]])
    assert relative_error(_apply_one(F.zeta, s), sc.zeta(s)).max() <= 1e-13
    x = np.concatenate([RNG.uniform(1, 30, 3000), [1.0, 0.5, 2.0, 4.0, np.nan]])
    q = np.concatenate([10 ** RNG.uniform(-3, 3, 3000), [1.0, 1.0, -1.5, -2.0, 1.0]])
    assert relative_error(_apply_two(F.hurwitz_zeta_scipy, x, q), sc.zeta(x, q)).max() <= 1e-12


def test_owens_t() -> None:
    h = RNG.uniform(-10, 10, 20000)
    a = RNG.uniform(-5, 5, 20000)
    a[:3000] = 10 ** RNG.uniform(-5, 5, 3000)
    got, want = _apply_two(F.owens_t, h, a), sc.owens_t(h, a)
    assert np.abs(got - want).max() <= 2e-16
    error = relative_error(got, want)
    error[np.abs(want) < 1e-300] = 0.0
    assert error.max() <= 1e-11  # SciPy is off by 1.6e-12 at small a; mpmath below
    mpmath.mp.dps = 30
    for h_value, a_value in [(-5.539344397587769, 1.159427635778377e-05), (3.0, 10.0), (0.5, 0.99),
                             (8.0, 0.3), (1.0, 1e4)]:
        expected = mpmath.quad(
            lambda t: mpmath.exp(-mpmath.mpf(h_value) ** 2 * (1 + t * t) / 2) / (1 + t * t),
            [0, min(a_value, 1), a_value]) / (2 * mpmath.pi)
        assert F.owens_t(h_value, a_value) == pytest.approx(float(expected), rel=1e-13)
    edges_h = np.array([0.0, 0.0, 1.0, np.inf, np.nan, -2.0])
    edges_a = np.array([np.inf, 1.0, np.inf, 1.0, 1.0, -np.inf])
    np.testing.assert_allclose(_apply_two(F.owens_t, edges_h, edges_a), sc.owens_t(edges_h, edges_a), rtol=1e-15)


def _bessel_sample(count: int) -> tuple[Array, Array]:
    v = RNG.uniform(-20, 50, count)
    v[: count // 5] = np.round(v[: count // 5])
    return v, 10 ** RNG.uniform(-3, 4, count)


def test_jv_against_mpmath() -> None:
    """Error <= 1e-12 of max(|J|, the envelope min(1, sqrt(2 / (pi x))))."""
    v, x = _bessel_sample(600)
    mpmath.mp.dps = 30
    expected = np.array([float(mpmath.besselj(p, q)) for p, q in zip(v, x)])
    got = _apply_two(F.jv, v, x)
    envelope = np.maximum(np.minimum(1, np.sqrt(2 / (np.pi * x))), np.abs(expected))
    assert (np.abs(got - expected) / envelope).max() <= 1e-12


def test_jv_against_scipy_and_edges() -> None:
    v, x = _bessel_sample(20000)
    got, want = _apply_two(F.jv, v, x), sc.jv(v, x)
    envelope = np.maximum(np.minimum(1, np.sqrt(2 / (np.pi * x))), np.abs(want))
    assert (np.abs(got - want) / envelope).max() <= 2e-12
    edges_v = np.array([0.0, 1.0, -0.5, -1.5, -2.5, -1.0, 2.5, 3.0, -2.0, np.nan, 0.0])
    edges_x = np.array([0.0, 0.0, 0.0, 0.0, 0.0, -2.0, -2.0, np.inf, -3.0, 1.0, np.nan])
    np.testing.assert_allclose(_apply_two(F.jv, edges_v, edges_x), sc.jv(edges_v, edges_x), rtol=1e-14)


@pytest.mark.parametrize("function, reference", [(F.kv, sc.kv), (F.kve, sc.kve)], ids=["kv", "kve"])
def test_kv(function: Any, reference: Any) -> None:
    v, x = _bessel_sample(20000)
    got, want = _apply_two(function, v, x), reference(v, x)
    error = relative_error(got, want)
    error[np.abs(want) < 1e-290] = 0.0
    assert error.max() <= 1e-12
    edges_v = np.array([0.0, 1.0, -0.5, 0.5, 2.0, np.nan, 1.0])
    edges_x = np.array([0.0, 0.0, 1.0, -1.0, np.inf, 1.0, 800.0])
    np.testing.assert_allclose(_apply_two(function, edges_v, edges_x), reference(edges_v, edges_x), rtol=1e-13)
