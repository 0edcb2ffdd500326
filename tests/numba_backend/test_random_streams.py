"""`numba_backend.random_streams` against NumPy's Generator(PCG64): from the same state,
every function gives NumPy's numbers bit for bit and leaves NumPy's final state, over
parameters that reach every branch of each algorithm."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import pytest

from numba_backend import random_streams as streams
from ops.random_draw import state_array

Array = np.ndarray[Any, np.dtype[Any]]
DRAWS = 5000


def state_of(generator: np.random.Generator) -> Array:
    return state_array(dict(generator.bit_generator.state))


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
        else:
            out[i] = streams.beta(s, first, second)
    return out


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


FLOATS: list[tuple[str, int, float, float, Callable[[np.random.Generator], Array]]] = [
    ("random", 0, 0, 0, lambda g: g.random(DRAWS)),
    ("standard_normal", 1, 0, 0, lambda g: g.standard_normal(DRAWS)),
    ("standard_exponential", 2, 0, 0, lambda g: g.standard_exponential(DRAWS)),
    ("gamma below 1", 3, 0.3, 0, lambda g: g.standard_gamma(0.3, DRAWS)),
    ("gamma 1", 3, 1.0, 0, lambda g: g.standard_gamma(1.0, DRAWS)),
    ("gamma above 1", 3, 5.0, 0, lambda g: g.standard_gamma(5.0, DRAWS)),
    ("beta Johnk", 4, 0.5, 0.7, lambda g: g.beta(0.5, 0.7, DRAWS)),
    ("beta gammas", 4, 2.0, 3.0, lambda g: g.beta(2.0, 3.0, DRAWS)),
]


@pytest.mark.parametrize("which, first, second, reference", [c[1:] for c in FLOATS], ids=[c[0] for c in FLOATS])
@pytest.mark.parametrize("seed", [0, 42])
def test_float_draws_are_numpys(which: int, first: float, second: float,
                                reference: Callable[[np.random.Generator], Array], seed: int) -> None:
    generator = np.random.default_rng(seed)
    state = state_of(generator)
    np.testing.assert_array_equal(_floats(state, DRAWS, which, first, second), reference(generator))
    np.testing.assert_array_equal(state, state_of(generator))


INTEGERS: list[tuple[str, int, float, int, int, Callable[[np.random.Generator], Array]]] = [
    ("poisson multiplication", 0, 3.5, 0, 0, lambda g: g.poisson(3.5, DRAWS)),
    ("poisson PTRS", 0, 45.0, 0, 0, lambda g: g.poisson(45.0, DRAWS)),
    ("binomial inversion", 1, 0.2, 20, 0, lambda g: g.binomial(20, 0.2, DRAWS)),
    ("binomial BTPE", 1, 0.3, 1000, 0, lambda g: g.binomial(1000, 0.3, DRAWS)),
    ("binomial BTPE p > 1/2", 1, 0.8, 500, 0, lambda g: g.binomial(500, 0.8, DRAWS)),
    ("binomial inversion p > 1/2", 1, 0.97, 20, 0, lambda g: g.binomial(20, 0.97, DRAWS)),
    ("integers small span", 2, 0, -3, 10, lambda g: g.integers(-3, 10, DRAWS)),
    ("integers one value", 2, 0, 5, 6, lambda g: g.integers(5, 6, DRAWS)),
    ("integers 2^32", 2, 0, 0, 2**32, lambda g: g.integers(0, 2**32, DRAWS)),
    ("integers 2^32 + 1", 2, 0, 0, 2**32 + 1, lambda g: g.integers(0, 2**32 + 1, DRAWS)),
    ("integers 2^63", 2, 0, -(2**62), 2**62, lambda g: g.integers(-(2**62), 2**62, DRAWS)),
    ("integers full", 2, 0, -(2**63), 2**63 - 1, lambda g: g.integers(-(2**63), 2**63 - 1, DRAWS)),
]


@pytest.mark.parametrize("which, p, low, high, reference", [c[1:] for c in INTEGERS], ids=[c[0] for c in INTEGERS])
@pytest.mark.parametrize("seed", [0, 42])
def test_integer_draws_are_numpys(which: int, p: float, low: int, high: int,
                                  reference: Callable[[np.random.Generator], Array], seed: int) -> None:
    generator = np.random.default_rng(seed)
    state = state_of(generator)
    np.testing.assert_array_equal(_integers(state, DRAWS, which, p, low, high), reference(generator))
    np.testing.assert_array_equal(state, state_of(generator))


@numba.njit(cache=True)
def _permutation(s: Array, n: int) -> Array:
    out = np.empty(n, np.int64)
    streams.permutation_into(s, out)
    return out


@numba.njit(cache=True)
def _dirichlet(s: Array, alpha: Array, n: int) -> Array:
    out = np.empty((n, alpha.size))
    for i in range(n):
        streams.dirichlet_into(s, alpha, out[i])
    return out


@pytest.mark.parametrize("seed", [0, 3])
def test_permutations_and_dirichlet_are_numpys(seed: int) -> None:
    generator = np.random.default_rng(seed)
    state = state_of(generator)
    np.testing.assert_array_equal(_permutation(state, 1000), generator.permutation(1000))
    for alpha in (np.array([0.5, 1.0, 4.0]), np.array([0.05, 0.02, 0.08])):  # both branches
        np.testing.assert_array_equal(_dirichlet(state, alpha, 300), generator.dirichlet(alpha, 300))
    np.testing.assert_array_equal(state, state_of(generator))
