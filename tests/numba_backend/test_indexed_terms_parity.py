"""Sums of indexed scalar terms and their gradients compiled (`rewrite.indexed_terms`):
values against NumPy and finite differences, repeated and negative indices, the errors
of out-of-range ones, and generated code that does not grow with the number of terms."""

from __future__ import annotations

import numpy as np
import pytest

import ops as pt
from fgraph import Variable
from numba_backend import function
from tests.ops.checks import numeric_gradient

RNG = np.random.default_rng(19)


def model(n: int, offsets: tuple[int, int] = (0, 1)) -> tuple[Variable, Variable, Variable]:
    """`exp(x[i]) * w[i + a] + log1p(x[i] ** 2) * w[i + b]` summed over i < n."""
    x, w = pt.vector("x"), pt.vector("w")
    a, b = offsets
    terms = [pt.exp(x[i]) * w[i + a] + pt.log1p(x[i] ** 2) * w[i + b] for i in range(n)]
    cost = terms[0]
    for term in terms[1:]:
        cost = cost + term
    return x, w, cost


def numpy_cost(x: np.ndarray, w: np.ndarray, n: int, offsets: tuple[int, int] = (0, 1)) -> float:
    a, b = offsets
    i = np.arange(n)
    return float(np.sum(np.exp(x[i]) * w[i + a] + np.log1p(x[i] ** 2) * w[i + b]))


@pytest.mark.parametrize("offsets", [(0, 1), (0, -1), (2, 0)], ids=str)
def test_values_and_gradients_match_numpy_and_finite_differences(
    offsets: tuple[int, int],
) -> None:
    """(0, -1) reads w[-1] for i = 0 (a negative index); (2, 0) reads w[i] in two terms
    (repeated positions accumulate in the gradient)."""
    n = 12
    x, w, cost = model(n, offsets)
    compiled = function([x, w], [cost, *pt.grad(cost, [x, w])])
    xs, ws = RNG.normal(size=n), RNG.normal(size=n + 2)
    value, grad_x, grad_w = compiled(xs, ws)
    np.testing.assert_allclose(value, numpy_cost(xs, ws, n, offsets), rtol=1e-12)
    expected = numeric_gradient(
        lambda a, b: np.asarray(numpy_cost(a, b, n, offsets)), [xs, ws], np.ones(())
    )
    np.testing.assert_allclose(grad_x, expected[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad_w, expected[1], rtol=1e-6, atol=1e-8)


def test_out_of_range_indices_raise_index_error() -> None:
    x, w, cost = model(10)
    compiled = function([x, w], [cost, *pt.grad(cost, [x, w])])
    with pytest.raises(IndexError):
        compiled(RNG.normal(size=6), RNG.normal(size=11))
    with pytest.raises(IndexError):
        compiled(RNG.normal(size=10), RNG.normal(size=10))


def test_generated_code_does_not_grow_with_the_number_of_terms() -> None:
    sources = []
    # Both from 16 terms on: a shorter vector of terms calls libm's functions one element
    # at a time (`body.runs_one_at_a_time`), which imports nothing from vecmath.
    for n in (20, 60):
        x, w, cost = model(n)
        sources.append(function([x, w], [cost, *pt.grad(cost, [x, w])]).source)
    assert len(sources[0].splitlines()) == len(sources[1].splitlines()) < 250
