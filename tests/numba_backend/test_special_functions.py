"""Accuracy of `numba_backend.special_functions` against SciPy over each function's
domain, to the bounds their docstrings state: dense grids of small, moderate and large
arguments plus the edges (0, -0, poles, infinities, nan). Where SciPy itself is off
(betaln of a small and a huge argument, ive near negative integer orders), reference
values computed with mpmath at 40 digits are used instead."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import pytest
import scipy.special as sc

from numba_backend import special_functions as F

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(2024)


def relative_error(got: Array, want: Array, absolute_floor: float = 1e-300) -> Array:
    """|got - want| / max(|want|, floor), 0 where both are the same inf or both nan."""
    with np.errstate(invalid="ignore"):
        error = np.abs(got - want) / np.maximum(np.abs(want), absolute_floor)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    return np.where(same, 0.0, error)


# Not cached on disk: numba keys a cached function taking a function by that function's
# dispatcher object, so no later process finds the entry (each run added one, the index
# grew to 0.5 MB), and rewriting an index whose key names a dispatcher since collected
# fails ("underlying object has vanished").
@numba.njit
def _apply_one(function: Callable[[float], float], x: Array) -> Array:
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = function(x[i])
    return out


@numba.njit
def _apply_two(function: Callable[[float, float], float], a: Array, x: Array) -> Array:
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = function(a[i], x[i])
    return out


EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.0, -10.0, 1.0, 2.0, 1e-300, 1e300])
WIDE = np.concatenate([np.linspace(-30, 30, 6001), np.geomspace(1e-300, 1e300, 601),
                       -np.geomspace(1e-10, 1e10, 201) - 0.5, EDGES])


@pytest.mark.parametrize(
    "function, reference, domain, bound, floor",
    [
        (F.gammaln, sc.gammaln, WIDE, 1e-13, 1.0),  # absolute near the zeros 1, 2, -2.457...
        (F.digamma, sc.digamma, WIDE, 1e-13, 1.0),  # absolute near the root 1.4616...
        (F.erfcx, sc.erfcx, WIDE, 1e-13, 1e-300),
        (F.i0, sc.i0, np.concatenate([WIDE, np.linspace(-720, 720, 2001)]), 1e-14, 1e-300),
        (F.i1, sc.i1, np.concatenate([WIDE, np.linspace(-720, 720, 2001)]), 1e-13, 1e-300),
        (F.erfinv, sc.erfinv, np.concatenate([np.linspace(-1, 1, 20001), [1 - 1e-16, -1e-20, 1.5],
                                              EDGES]), 1e-13, 1e-300),
        (F.erfcinv, sc.erfcinv, np.concatenate([np.linspace(0, 2, 20001), np.geomspace(1e-300, 1, 601),
                                                EDGES]), 1e-13, 1e-300),
    ],
    ids=["gammaln", "digamma", "erfcx", "i0", "i1", "erfinv", "erfcinv"],
)
def test_one_argument_functions(
    function: Callable[[float], float], reference: Callable[[Array], Array], domain: Array,
    bound: float, floor: float,
) -> None:
    got = _apply_one(function, domain)
    want = reference(domain)
    error = relative_error(got, want, floor)
    worst = int(np.argmax(error))
    assert error[worst] <= bound, (domain[worst], got[worst], want[worst])


def _pairs(low: float, high: float, count: int, scale: float) -> tuple[Array, Array]:
    a = RNG.uniform(low, high, count)
    return a, a * RNG.uniform(0, scale, count)


def test_incomplete_gamma() -> None:
    parts = [_pairs(0, 5, 4000, 3), _pairs(0, 100, 4000, 3), _pairs(0, 1000, 1000, 2)]
    a = np.concatenate([p[0] for p in parts] + [np.array([0.0, 0.0, 1.0, 2.0, -1.0, 1.0, 3.0, np.nan])])
    x = np.concatenate([p[1] for p in parts] + [np.array([0.0, 1.0, 0.0, np.inf, 1.0, -1.0, np.nan, 1.0])])
    for function, reference in [(F.gammainc, sc.gammainc), (F.gammaincc, sc.gammaincc)]:
        got, want = _apply_two(function, a, x), reference(a, x)
        error = relative_error(got, want)
        error[np.abs(want) < 1e-300] = 0.0
        worst = int(np.argmax(error))
        assert error[worst] <= 5e-12, (a[worst], x[worst], got[worst], want[worst])


def test_derivative_of_incomplete_gamma_in_a() -> None:
    # mpmath.diff of the regularized lower incomplete gamma, 40 digits.
    cases = [((0.5, 0.3), -0.77057035137535191706), ((2.0, 1.5), -0.31348863782507932431),
             ((10.0, 8.0), -0.11260572310818614123), ((30.0, 35.0), -0.046407022028344249122),
             ((3.0, 0.01), -9.6968742676774849057e-7)]
    for (a, x), expected in cases:
        assert F.gammainc_der_a(a, x) == pytest.approx(expected, rel=1e-8)
    assert np.isnan(F.gammainc_der_a(-1.0, 1.0)) and F.gammainc_der_a(2.0, 0.0) == 0.0


def test_betaln() -> None:
    a = np.concatenate([RNG.uniform(0, 30, 8000), [-0.5, 0.5, 1.0]])
    b = np.concatenate([RNG.uniform(0, 30, 8000), [2.0, 0.5, 1.0]])
    got, want = _apply_two(F.betaln, a, b), sc.betaln(a, b)
    assert relative_error(got, want, 1.0).max() <= 1e-13
    # SciPy loses up to 1e-9 where one argument is small and the other large; there the
    # reference is mpmath's log(beta(a, b)):
    for (x, y), expected in [((0.09491884674956137, 688711.903738658), 1.0310782934491702081),
                             ((0.3370305596384016, 794.2207487300741), -1.2764248383661134),
                             ((510.1810496521496, 0.25595994529024785), -0.3325355221790447),
                             ((3.5, 1e12), -95.507600303407219504),
                             ((1e8, 2e8), -190954258.57711312928),
                             ((0.5, 1e15), -16.697023254530642418)]:
        assert F.betaln(x, y) == pytest.approx(expected, rel=1e-13)
        assert F.betaln(y, x) == pytest.approx(expected, rel=1e-13)


def test_polygamma() -> None:
    n = RNG.integers(0, 6, 6000).astype(np.float64)
    x = np.concatenate([RNG.uniform(-10, 30, 5000), RNG.uniform(0.01, 2, 1000)])
    got, want = _apply_two(F.polygamma, n, x), sc.polygamma(n.astype(np.int64), x)
    error = relative_error(got, want, 1.0)  # absolute near digamma's root
    assert error.max() <= 1e-12
    assert F.polygamma(1.0, 0.0) == np.inf and F.polygamma(1.0, -1.0) == np.inf
    assert np.isnan(F.polygamma(-1.0, 1.0)) and np.isnan(F.polygamma(1.5, 1.0))


def test_ive() -> None:
    v = RNG.uniform(-20, 50, 20000)
    v[:4000] = np.round(v[:4000])
    x = 10 ** RNG.uniform(-3, 3, 20000)
    got, want = _apply_two(F.ive, v, x), sc.ive(v, x)
    error = relative_error(got, want)
    error[np.abs(want) < 1e-290] = 0.0
    near_negative_integer = (v < 0) & (np.abs(v - np.round(v)) < 1e-3) & (v != np.round(v))
    assert error[~near_negative_integer].max() <= 1e-11
    # Near negative integer orders SciPy's reflection loses digits; mpmath's values:
    for (order, argument), expected in [((-17.999891184226104, 0.8250058065461485), -1.4036406519721079082e17),
                                        ((-2.5, 10.0), 0.092094337399573330315),
                                        ((49.7, 999.0), 0.0036653337523076015877)]:
        assert F.ive(order, argument) == pytest.approx(expected, rel=1e-12)
    edges_v = np.array([0.0, 1.0, -2.0, 2.0, 2.5, -1.5, 0.0, np.nan, 1.0])
    edges_x = np.array([0.0, 0.0, 0.0, -3.0, -3.0, 0.0, np.inf, 1.0, np.nan])
    np.testing.assert_array_equal(_apply_two(F.ive, edges_v, edges_x), sc.ive(edges_v, edges_x))


def test_log1mexp_is_accurate() -> None:
    """The existing log1mexp op's compiled form against a float128-free reference:
    log(-expm1(x)) is accurate near 0 and log1p(-exp(x)) far from it."""
    import ops as pt
    from numba_backend import function

    x = pt.vector("x")
    compiled = function([x], pt.log1mexp(x))
    values = -np.concatenate([np.geomspace(1e-300, 1e3, 4001), [0.0, np.inf]])
    with np.errstate(divide="ignore"):
        expected = np.where(values > -np.log(2), np.log(-np.expm1(values)),
                            np.log1p(-np.exp(values)))
    assert relative_error(compiled(values), expected).max() <= 4e-16
