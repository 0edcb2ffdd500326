"""`numba_backend.random_streams` and `random_distributions` against NumPy's
`Generator(PCG64)`: from the same state, every function gives NumPy's numbers bit for
bit and leaves NumPy's final state (`has_uint32` buffer included), over parameters that
reach every branch of each algorithm. The compiled drivers loop over many draws and are
compiled once each."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import pytest

from numba_backend import random_distributions as distributions
from numba_backend import random_streams as streams
from numba_backend.random_streams import array_to_state, state_to_array

Array = np.ndarray[Any, np.dtype[Any]]
Draw = Callable[[np.random.Generator], Any]
DRAWS = 20_000
"""Enough for every seed to reach the ziggurats' tails (index 0) several times."""
SEEDS = (0, 42, 987654321)


def assert_same_stream(seed: int, compiled: Callable[[Array], Any], reference: Draw) -> None:
    """`compiled` on a state array and `reference` on a NumPy generator, both from
    `PCG64(seed)`, give equal numbers and leave equal states."""
    generator = np.random.Generator(np.random.PCG64(seed))
    state = state_to_array(generator.bit_generator.state)
    np.testing.assert_array_equal(compiled(state), reference(generator))
    assert array_to_state(state) == generator.bit_generator.state


def test_state_conversion_round_trips() -> None:
    generator = np.random.Generator(np.random.PCG64(7))
    generator.integers(0, 2**32, 3, dtype=np.uint32)  # leaves a buffered half
    state = generator.bit_generator.state
    array = state_to_array(state)
    assert array.dtype == np.uint64 and array.shape == (6,) and array[4] == 1
    assert array_to_state(array) == state


@numba.njit(cache=True)
def _bits(s: Array, n: int, which: int, span: np.uint64) -> Array:
    out = np.empty(n, np.uint64)
    for i in range(n):
        if which == 0:
            out[i] = streams.next_uint64(s)
        elif which == 1:
            out[i] = streams.next_uint32(s)
        elif which == 2:
            out[i] = streams.bounded_uint64(s, span)
        else:  # 32-bit and 64-bit draws alternating: the buffered half outlives a 64-bit draw
            out[i] = streams.next_uint32(s) if i % 3 != 1 else streams.next_uint64(s)
    return out


def _alternating_bits(generator: np.random.Generator, n: int) -> list[int]:
    return [int(generator.bit_generator.random_raw()) if i % 3 == 1
            else int(generator.integers(0, 2**32, dtype=np.uint32)) for i in range(n)]


BITS: list[tuple[str, int, int, int, Draw]] = [
    ("uint64", 0, 0, DRAWS, lambda g: g.bit_generator.random_raw(DRAWS)),
    ("uint32 odd count", 1, 0, DRAWS + 1,
     lambda g: g.integers(0, 2**32, DRAWS + 1, dtype=np.uint32)),
    ("uint32 and uint64", 3, 0, 301, lambda g: _alternating_bits(g, 301)),
]


def _bounded_reference(span: int) -> Draw:
    """NumPy's bounded uint64 draws in [0, span]: `random_bounded_uint64` with offset 0."""
    return lambda g: g.integers(0, span, DRAWS, np.uint64, endpoint=True)


SPANS = [0, 1, 6, 2**32 - 2, 2**32 - 1, 2**32, 2**32 + 1, 2**63, 2**64 - 2, 2**64 - 1]
BITS += [(f"bounded span {span}", 2, span, DRAWS, _bounded_reference(span)) for span in SPANS]


@pytest.mark.parametrize("which, span, count, reference", [c[1:] for c in BITS],
                         ids=[c[0] for c in BITS])
@pytest.mark.parametrize("seed", SEEDS)
def test_bits_are_numpys(which: int, span: int, count: int, reference: Draw, seed: int) -> None:
    assert_same_stream(seed, lambda s: _bits(s, count, which, np.uint64(span)), reference)


@numba.njit(cache=True)
def _floats(s: Array, n: int, which: int, first: float, second: float) -> Array:
    out = np.empty(n)
    for i in range(n):
        if which == 0:
            out[i] = streams.next_double(s)
        elif which == 1:
            out[i] = streams.standard_normal(s)
        elif which == 2:
            out[i] = streams.standard_exponential(s)
        elif which == 3:
            out[i] = streams.standard_gamma(s, first)
        elif which == 4:
            out[i] = streams.beta(s, first, second)
        elif which == 5:
            out[i] = streams.normal(s, first, second)
        elif which == 6:
            out[i] = streams.uniform(s, first, second)
        elif which == 7:
            out[i] = streams.exponential(s, first)
        else:
            out[i] = streams.gamma(s, first, second)
    return out


FLOATS: list[tuple[str, int, float, float, Draw]] = [
    ("random", 0, 0, 0, lambda g: g.random(DRAWS)),
    ("standard_normal", 1, 0, 0, lambda g: g.standard_normal(DRAWS)),
    ("standard_exponential", 2, 0, 0, lambda g: g.standard_exponential(DRAWS)),
    ("standard_gamma 0", 3, 0.0, 0, lambda g: g.standard_gamma(0.0, DRAWS)),
    ("standard_gamma below 1", 3, 0.3, 0, lambda g: g.standard_gamma(0.3, DRAWS)),
    ("standard_gamma 1", 3, 1.0, 0, lambda g: g.standard_gamma(1.0, DRAWS)),
    ("standard_gamma above 1", 3, 5.0, 0, lambda g: g.standard_gamma(5.0, DRAWS)),
    ("beta Johnk", 4, 0.5, 0.7, lambda g: g.beta(0.5, 0.7, DRAWS)),
    ("beta Johnk underflow", 4, 1e-3, 2e-3, lambda g: g.beta(1e-3, 2e-3, DRAWS)),
    ("beta tiny shapes", 4, 1e-104, 2e-104, lambda g: g.beta(1e-104, 2e-104, DRAWS)),
    ("beta gammas", 4, 2.0, 3.0, lambda g: g.beta(2.0, 3.0, DRAWS)),
    ("beta one shape above 1", 4, 0.5, 3.0, lambda g: g.beta(0.5, 3.0, DRAWS)),
    ("normal", 5, 1.5, 2.0, lambda g: g.normal(1.5, 2.0, DRAWS)),
    ("uniform", 6, -2.0, 3.0, lambda g: g.uniform(-2.0, 3.0, DRAWS)),
    ("exponential", 7, 2.5, 0, lambda g: g.exponential(2.5, DRAWS)),
    ("gamma below 1", 8, 0.3, 2.0, lambda g: g.gamma(0.3, 2.0, DRAWS)),
    ("gamma above 1", 8, 4.0, 0.5, lambda g: g.gamma(4.0, 0.5, DRAWS)),
]


@pytest.mark.parametrize("which, first, second, reference", [c[1:] for c in FLOATS],
                         ids=[c[0] for c in FLOATS])
@pytest.mark.parametrize("seed", SEEDS)
def test_float_draws_are_numpys(which: int, first: float, second: float, reference: Draw,
                                seed: int) -> None:
    assert_same_stream(seed, lambda s: _floats(s, DRAWS, which, first, second), reference)


@numba.njit(cache=True)
def _integers(s: Array, n: int, which: int, p: float, low: int, high: int) -> Array:
    out = np.empty(n, np.int64)
    for i in range(n):
        if which == 0:
            out[i] = streams.poisson(s, p)
        elif which == 1:
            out[i] = streams.binomial(s, low, p)
        else:
            out[i] = streams.integers(s, low, high)
    return out


def _integers_reference(low: int, high: int) -> Draw:
    return lambda g: g.integers(low, high, DRAWS, dtype=np.int64)


INTEGERS: list[tuple[str, int, float, int, int, Draw]] = [
    ("poisson 0", 0, 0.0, 0, 0, lambda g: g.poisson(0.0, DRAWS)),
    ("poisson multiplication", 0, 3.5, 0, 0, lambda g: g.poisson(3.5, DRAWS)),
    ("poisson multiplication near 10", 0, 9.99, 0, 0, lambda g: g.poisson(9.99, DRAWS)),
    ("poisson PTRS at 10", 0, 10.0, 0, 0, lambda g: g.poisson(10.0, DRAWS)),
    ("poisson PTRS", 0, 45.0, 0, 0, lambda g: g.poisson(45.0, DRAWS)),
    ("poisson PTRS large", 0, 1e5, 0, 0, lambda g: g.poisson(1e5, DRAWS)),
    ("binomial n 0", 1, 0.3, 0, 0, lambda g: g.binomial(0, 0.3, DRAWS)),
    ("binomial p 0", 1, 0.0, 20, 0, lambda g: g.binomial(20, 0.0, DRAWS)),
    ("binomial p 1", 1, 1.0, 20, 0, lambda g: g.binomial(20, 1.0, DRAWS)),
    ("binomial inversion", 1, 0.2, 20, 0, lambda g: g.binomial(20, 0.2, DRAWS)),
    ("binomial inversion np 30", 1, 0.5, 60, 0, lambda g: g.binomial(60, 0.5, DRAWS)),
    ("binomial BTPE", 1, 0.3, 1000, 0, lambda g: g.binomial(1000, 0.3, DRAWS)),
    ("binomial BTPE squeeze", 1, 0.4, 100000, 0, lambda g: g.binomial(100000, 0.4, DRAWS)),
    ("binomial BTPE p > 1/2", 1, 0.8, 500, 0, lambda g: g.binomial(500, 0.8, DRAWS)),
    ("binomial inversion p > 1/2", 1, 0.97, 20, 0, lambda g: g.binomial(20, 0.97, DRAWS)),
    ("integers range 1", 2, 0, 5, 6, _integers_reference(5, 6)),
    ("integers range 2", 2, 0, -1, 1, _integers_reference(-1, 1)),
    ("integers range 13", 2, 0, -3, 10, _integers_reference(-3, 10)),
    ("integers range 2^32", 2, 0, 0, 2**32, _integers_reference(0, 2**32)),
    ("integers range 2^32 + 1", 2, 0, 7, 2**32 + 8, _integers_reference(7, 2**32 + 8)),
    ("integers range 2^63", 2, 0, -(2**62), 2**62, _integers_reference(-(2**62), 2**62)),
    ("integers range 2^64 - 1", 2, 0, -(2**63), 2**63 - 1,
     _integers_reference(-(2**63), 2**63 - 1)),
]


@pytest.mark.parametrize("which, p, low, high, reference", [c[1:] for c in INTEGERS],
                         ids=[c[0] for c in INTEGERS])
@pytest.mark.parametrize("seed", SEEDS)
def test_integer_draws_are_numpys(which: int, p: float, low: int, high: int, reference: Draw,
                                  seed: int) -> None:
    assert_same_stream(seed, lambda s: _integers(s, DRAWS, which, p, low, high), reference)


@numba.njit(cache=True)
def _permutation(s: Array, n: int) -> Array:
    out = np.empty(n, np.int64)
    streams.permutation_into(s, out)
    return out


@pytest.mark.parametrize("n", [0, 1, 2, 1000])
@pytest.mark.parametrize("seed", SEEDS)
def test_permutations_are_numpys(n: int, seed: int) -> None:
    assert_same_stream(seed, lambda s: _permutation(s, n), lambda g: g.permutation(n))


@numba.njit(cache=True)
def _dirichlet(s: Array, alpha: Array, n: int) -> Array:
    out = np.empty((n, alpha.size))
    for i in range(n):
        streams.dirichlet_into(s, alpha, out[i])
    return out


DIRICHLET_ALPHAS = {
    "gammas": [0.5, 1.0, 4.0],
    "one category": [2.0],
    "stick-breaking": [0.05, 0.02, 0.08],
    "stick-breaking with trailing zeros": [0.05, 0.0, 0.0],
    "all zero": [0.0, 0.0],
}


@pytest.mark.parametrize("alpha", DIRICHLET_ALPHAS.values(), ids=DIRICHLET_ALPHAS.keys())
@pytest.mark.parametrize("seed", SEEDS)
def test_dirichlet_is_numpys(alpha: list[float], seed: int) -> None:
    alpha_array = np.array(alpha)
    assert_same_stream(seed, lambda s: _dirichlet(s, alpha_array, 300),
                       lambda g: g.dirichlet(alpha_array, 300))


@numba.njit(cache=True)
def _more_floats(s: Array, n: int, which: int, first: float, second: float) -> Array:
    out = np.empty(n)
    for i in range(n):
        if which == 0:
            out[i] = distributions.lognormal(s, first, second)
        elif which == 1:
            out[i] = distributions.laplace(s, first, second)
        elif which == 2:
            out[i] = distributions.logistic(s, first, second)
        elif which == 3:
            out[i] = distributions.gumbel(s, first, second)
        elif which == 4:
            out[i] = distributions.cauchy(s)
        elif which == 5:
            out[i] = distributions.student_t(s, first)
        elif which == 6:
            out[i] = distributions.chisquare(s, first)
        elif which == 7:
            out[i] = distributions.weibull(s, first)
        elif which == 8:
            out[i] = distributions.pareto(s, first)
        elif which == 9:
            out[i] = distributions.wald(s, first, second)
        else:
            out[i] = distributions.vonmises(s, first, second)
    return out


MORE_FLOATS: list[tuple[str, int, float, float, Draw]] = [
    ("lognormal", 0, 0.5, 1.5, lambda g: g.lognormal(0.5, 1.5, DRAWS)),
    ("laplace", 1, -1.0, 2.0, lambda g: g.laplace(-1.0, 2.0, DRAWS)),
    ("logistic", 2, 3.0, 0.5, lambda g: g.logistic(3.0, 0.5, DRAWS)),
    ("gumbel", 3, 1.0, 2.0, lambda g: g.gumbel(1.0, 2.0, DRAWS)),
    ("standard_cauchy", 4, 0, 0, lambda g: g.standard_cauchy(DRAWS)),
    ("standard_t small df", 5, 0.7, 0, lambda g: g.standard_t(0.7, DRAWS)),
    ("standard_t", 5, 5.0, 0, lambda g: g.standard_t(5.0, DRAWS)),
    ("chisquare below 2", 6, 1.0, 0, lambda g: g.chisquare(1.0, DRAWS)),
    ("chisquare", 6, 7.5, 0, lambda g: g.chisquare(7.5, DRAWS)),
    ("weibull 0", 7, 0.0, 0, lambda g: g.weibull(0.0, DRAWS)),
    ("weibull", 7, 1.7, 0, lambda g: g.weibull(1.7, DRAWS)),
    ("pareto", 8, 3.0, 0, lambda g: g.pareto(3.0, DRAWS)),
    ("wald", 9, 1.5, 0.8, lambda g: g.wald(1.5, 0.8, DRAWS)),
    ("vonmises uniform", 10, 0.3, 1e-9, lambda g: g.vonmises(0.3, 1e-9, DRAWS)),
    ("vonmises taylor", 10, 0.3, 1e-6, lambda g: g.vonmises(0.3, 1e-6, DRAWS)),
    ("vonmises", 10, -2.5, 3.0, lambda g: g.vonmises(-2.5, 3.0, DRAWS)),
    ("vonmises near pi", 10, 3.0, 40.0, lambda g: g.vonmises(3.0, 40.0, DRAWS)),
    ("vonmises wrapped normal", 10, 3.14, 1e7, lambda g: g.vonmises(3.14, 1e7, DRAWS)),
    ("vonmises nan", 10, 0.0, np.nan, lambda g: g.vonmises(0.0, np.nan, DRAWS)),
]


@pytest.mark.parametrize("which, first, second, reference", [c[1:] for c in MORE_FLOATS],
                         ids=[c[0] for c in MORE_FLOATS])
@pytest.mark.parametrize("seed", SEEDS)
def test_more_float_draws_are_numpys(which: int, first: float, second: float, reference: Draw,
                                     seed: int) -> None:
    assert_same_stream(seed, lambda s: _more_floats(s, DRAWS, which, first, second), reference)


@numba.njit(cache=True)
def _more_integers(s: Array, n: int, which: int, p: float, good: int, bad: int, sample: int) -> Array:
    out = np.empty(n, np.int64)
    for i in range(n):
        if which == 0:
            out[i] = distributions.geometric(s, p)
        elif which == 1:
            out[i] = distributions.negative_binomial(s, float(good) + 0.5, p)
        else:
            out[i] = distributions.hypergeometric(s, good, bad, sample)
    return out


MORE_INTEGERS: list[tuple[str, int, float, int, int, int, Draw]] = [
    ("geometric search", 0, 0.5, 0, 0, 0, lambda g: g.geometric(0.5, DRAWS)),
    ("geometric 1", 0, 1.0, 0, 0, 0, lambda g: g.geometric(1.0, DRAWS)),
    ("geometric inversion", 0, 0.01, 0, 0, 0, lambda g: g.geometric(0.01, DRAWS)),
    ("geometric saturating", 0, 1e-300, 0, 0, 0, lambda g: g.geometric(1e-300, DRAWS)),
    ("negative_binomial", 1, 0.3, 3, 0, 0, lambda g: g.negative_binomial(3.5, 0.3, DRAWS)),
    ("negative_binomial large mean", 1, 0.01, 40, 0, 0,
     lambda g: g.negative_binomial(40.5, 0.01, DRAWS)),
    ("hypergeometric item by item", 2, 0, 20, 30, 5, lambda g: g.hypergeometric(20, 30, 5, DRAWS)),
    ("hypergeometric complement", 2, 0, 20, 30, 45, lambda g: g.hypergeometric(20, 30, 45, DRAWS)),
    ("hypergeometric no good", 2, 0, 0, 30, 12, lambda g: g.hypergeometric(0, 30, 12, DRAWS)),
    ("hypergeometric HRUA", 2, 0, 200, 300, 100, lambda g: g.hypergeometric(200, 300, 100, DRAWS)),
    ("hypergeometric HRUA more good", 2, 0, 3000, 1000, 2500,
     lambda g: g.hypergeometric(3000, 1000, 2500, DRAWS)),
    ("hypergeometric HRUA large", 2, 0, 10**8, 10**8, 10**7,
     lambda g: g.hypergeometric(10**8, 10**8, 10**7, DRAWS)),
]


@pytest.mark.parametrize("which, p, good, bad, sample, reference", [c[1:] for c in MORE_INTEGERS],
                         ids=[c[0] for c in MORE_INTEGERS])
@pytest.mark.parametrize("seed", SEEDS)
def test_more_integer_draws_are_numpys(which: int, p: float, good: int, bad: int, sample: int,
                                       reference: Draw, seed: int) -> None:
    assert_same_stream(seed, lambda s: _more_integers(s, DRAWS, which, p, good, bad, sample), reference)


@numba.njit(cache=True)
def _multinomial(s: Array, n: int, pvals: Array, count: int) -> Array:
    out = np.empty((count, pvals.size), np.int64)
    for i in range(count):
        distributions.multinomial_into(s, n, pvals, out[i])
    return out


MULTINOMIAL_CASES = {
    "three categories": (20, [0.2, 0.3, 0.5]),
    "large n": (100000, [0.1, 0.6, 0.3]),
    "trials run out": (3, [0.9, 0.05, 0.03, 0.02]),
    "one category": (7, [1.0]),
    "no trials": (0, [0.5, 0.5]),
    "sum below 1": (50, [0.2, 0.2]),
}


@pytest.mark.parametrize("n, pvals", MULTINOMIAL_CASES.values(), ids=MULTINOMIAL_CASES.keys())
@pytest.mark.parametrize("seed", SEEDS)
def test_multinomial_is_numpys(n: int, pvals: list[float], seed: int) -> None:
    p = np.array(pvals)
    assert_same_stream(seed, lambda s: _multinomial(s, n, p, 300), lambda g: g.multinomial(n, p, 300))
