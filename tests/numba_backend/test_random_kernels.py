"""Compiled random draws against the reference evaluator (which draws with NumPy):
the same state gives the same numbers bit for bit, for every distribution and through
a loop carrying the state; the caller's state array is never written."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ops as pt
from fgraph import Variable, evaluate
from numba_backend import function


Draw = Callable[[Variable], tuple[Variable, Variable]]


def _every_distribution(s: Variable) -> list[Variable]:
    draws: list[Variable] = []
    builders: list[Draw] = [
        lambda s: pt.random.uniform(s, -1.0, 3.0, size=(50,)),
        lambda s: pt.random.normal(s, np.arange(3.0), 2.0, size=(40, 3)),
        lambda s: pt.random.standard_normal(s, size=(30,)),
        lambda s: pt.random.exponential(s, 2.0, size=(30,)),
        lambda s: pt.random.gamma(s, np.array([0.3, 1.0, 4.0]), 2.0, size=(20, 3)),
        lambda s: pt.random.beta(s, np.array([0.5, 2.0]), np.array([0.7, 3.0]), size=(20, 2)),
        lambda s: pt.random.binomial(s, np.array([5, 1000]), np.array([0.3, 0.8]), size=(20, 2)),
        lambda s: pt.random.poisson(s, np.array([0.5, 40.0]), size=(20, 2)),
        lambda s: pt.random.integers(s, -3, 10, size=(20,)),
        lambda s: pt.random.bernoulli(s, 0.3, size=(20,)),
        lambda s: pt.random.categorical(s, np.array([0.2, 0.3, 0.5]), size=(20,)),
        lambda s: pt.random.permutation(s, 12),
        lambda s: pt.random.choice(s, np.array([3.0, 5.0, 7.0]), size=(6,)),
        lambda s: pt.random.choice(s, 10, size=(4,), replace=False),
        lambda s: pt.random.multivariate_normal(s, np.zeros(2), np.array([[2.0, 0.5], [0.5, 1.0]]), size=(5,)),
        lambda s: pt.random.dirichlet(s, np.array([0.5, 1.0, 4.0]), size=(4,)),
        lambda s: pt.random.dirichlet(s, np.array([0.05, 0.02]), size=(3,)),
        lambda s: pt.random.lognormal(s, np.array([0.0, 1.0]), 0.5, size=(40, 2)),
        lambda s: pt.random.laplace(s, 1.0, 2.0, size=(50,)),
        lambda s: pt.random.logistic(s, np.arange(3.0), 2.0, size=(20, 3)),
        lambda s: pt.random.gumbel(s, 1.0, np.array([0.5, 2.0]), size=(20, 2)),
        lambda s: pt.random.cauchy(s, size=(50,)),
        lambda s: pt.random.student_t(s, np.array([0.5, 3.0, 30.0]), 1.0, 2.0, size=(20, 3)),
        lambda s: pt.random.chisquare(s, 3.0, size=(20,)),
        lambda s: pt.random.weibull(s, np.array([0.0, 0.5, 2.0]), size=(20, 3)),
        lambda s: pt.random.pareto(s, 2.0, size=(20,)),
        lambda s: pt.random.wald(s, 1.0, 2.0, size=(20,)),
        lambda s: pt.random.vonmises(s, 0.5, np.array([0.0, 1e-6, 1.0, 4.0, 1e7]), size=(20, 5)),
        lambda s: pt.random.geometric(s, np.array([0.01, 0.5, 1.0]), size=(20, 3)),
        lambda s: pt.random.negative_binomial(s, np.array([0.5, 10.0]), 0.3, size=(20, 2)),
        lambda s: pt.random.hypergeometric(s, 20, 30, np.array([5, 25]), size=(20, 2)),
        lambda s: pt.random.multinomial(s, np.array([5, 100]), np.array([0.2, 0.3, 0.5]), size=(6, 2)),
        lambda s: pt.random.multinomial(s, 7, np.array([0.6, 0.4])),
    ]
    for build in builders:
        s, sample = build(s)
        draws.append(sample)
    return [s, *draws]


def test_every_distribution_gives_the_evaluators_numbers() -> None:
    state = pt.random.state("s")
    outputs = _every_distribution(state)
    compiled = function([state], outputs)
    value = pt.random.seed(7)
    before = value.copy()
    got = compiled(value)
    np.testing.assert_array_equal(value, before)  # the state value is not written
    expected = evaluate(outputs, {state: value})
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)
    again = compiled(value)
    following = compiled(got[0])
    np.testing.assert_array_equal(again[1], got[1])
    assert not np.array_equal(following[1], got[1])


def test_a_loop_threads_the_state_as_in_evaluate() -> None:
    state = pt.random.state("s")

    def step(s: Variable) -> tuple[Variable, Variable]:
        s, u = pt.random.uniform(s, size=(3,))
        s, g = pt.random.gamma(s, 2.5, 1.0, size=(3,))
        return s, u + g

    states, draws = pt.scan(step, outputs_info=[state, None], n_steps=50)
    compiled = function([state], [states[-1], draws])
    got = compiled(pt.random.seed(3))
    expected = evaluate([states[-1], draws], {state: pt.random.seed(3)})
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


def test_a_million_normal_draws_match_numpy() -> None:
    state = pt.random.state("s")
    _, x = pt.random.normal(state, 0.0, 1.0, size=(1_000_000,))
    compiled = function([state], [x, pt.exp(x / 2)])
    draws, transformed = compiled(pt.random.seed(0))
    expected = np.random.default_rng(0).normal(0.0, 1.0, 1_000_000)
    np.testing.assert_array_equal(draws, expected)
    # vecmath's exp is within 1 ulp of NumPy's, not bit for bit:
    np.testing.assert_allclose(transformed, np.exp(expected / 2), rtol=4e-16)


def test_reparameterized_gradients_compile() -> None:
    """d/d(loc, scale) of sum(normal draws) is (n, sum(z)): the same z as the draw."""
    state, loc, scale = pt.random.state("s"), pt.scalar("loc"), pt.scalar("scale")
    _, x = pt.random.normal(state, loc, scale, size=(1000,))
    compiled = function([state, loc, scale], pt.grad(pt.sum(x), [loc, scale]))
    d_loc, d_scale = compiled(pt.random.seed(4), 1.0, 3.0)
    assert d_loc == 1000.0
    np.testing.assert_allclose(d_scale, np.random.default_rng(4).standard_normal(1000).sum(), rtol=1e-12)


def test_bad_parameters_raise_the_evaluators_errors() -> None:
    """NumPy's checks, declared once per distribution, in compiled code too: for scalar
    parameters before drawing, for per-sample ones at the element that fails."""
    state, scale, p, pvals = pt.random.state("s"), pt.vector("scale"), pt.scalar("p"), pt.vector("pvals")
    _, x = pt.random.laplace(state, 0.0, scale)
    _, k = pt.random.geometric(state, p, size=(3,))
    _, counts = pt.random.multinomial(state, 4, pvals)
    compiled_x, compiled_k = function([state, scale], x), function([state, p], k)
    np.testing.assert_array_equal(compiled_x(pt.random.seed(1), np.ones(3)),
                                  np.random.default_rng(1).laplace(0.0, np.ones(3)))
    with pytest.raises(ValueError, match="random.laplace: scale < 0"):
        compiled_x(pt.random.seed(1), np.array([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="random.geometric: p <= 0, p > 1 or p contains NaNs"):
        compiled_k(pt.random.seed(1), np.nan)
    compiled_counts = function([state, pvals], counts)
    with pytest.raises(ValueError, match=r"random.multinomial: sum\(pvals\[:-1\]\) > 1.0"):
        compiled_counts(pt.random.seed(1), np.array([0.9, 0.2, 0.0]))
    with pytest.raises(ValueError, match="random.multinomial: pvals must have at least 1 dimension"):
        compiled_counts(pt.random.seed(1), np.zeros(0))


def test_unknown_lengths_and_a_seed_value_as_state() -> None:
    """Per-sample parameters of unknown length, broadcast against each other; a state
    value given in place of a state variable is a constant of the compiled function."""
    loc, n = pt.vector("loc"), pt.tensor("n", dtype="int64", shape=(None, 1))
    s, x = pt.random.logistic(pt.random.seed(6), loc, 2.0)
    _, counts = pt.random.multinomial(s, n, np.array([0.25, 0.75]))
    compiled = function([loc, n], [x, counts])
    loc_value, n_value = np.linspace(0.0, 1.0, 4), np.array([[3], [40]])
    got_x, got_counts = compiled(loc_value, n_value)
    generator = np.random.default_rng(6)
    np.testing.assert_array_equal(got_x, generator.logistic(loc_value, 2.0))
    np.testing.assert_array_equal(got_counts, generator.multinomial(n_value, [0.25, 0.75]))
    empty_x, empty_counts = compiled(np.zeros(0), np.zeros((0, 1), np.int64))
    assert empty_x.shape == (0,) and empty_counts.shape == (0, 1, 2)


def test_location_scale_gradients_compile() -> None:
    """d/d(mean, sigma) of sum(lognormal draws) is (sum(x), sum(x * z)) with the draw's z;
    d/dscale of sum(laplace draws) is the sum of the standard draws."""
    state, mean, sigma = pt.random.state("s"), pt.scalar("mean"), pt.scalar("sigma")
    _, x = pt.random.lognormal(state, mean, sigma, size=(1000,))
    _, y = pt.random.laplace(state, mean, sigma, size=(1000,))
    outputs = [*pt.grad(pt.sum(x), [mean, sigma]), *pt.grad(pt.sum(y), [mean, sigma])]
    compiled = function([state, mean, sigma], outputs)
    got = compiled(pt.random.seed(4), 0.5, 0.3)
    z = np.random.default_rng(4).standard_normal(1000)
    draws = np.exp(0.5 + 0.3 * z)
    standard = np.random.default_rng(4).laplace(0.0, 1.0, 1000)
    np.testing.assert_allclose(got[0], draws.sum(), rtol=1e-12)
    np.testing.assert_allclose(got[1], (draws * z).sum(), rtol=1e-12)
    assert got[2] == 1000.0
    np.testing.assert_allclose(got[3], standard.sum(), rtol=1e-12)
    expected = evaluate(outputs, {state: pt.random.seed(4), mean: np.array(0.5), sigma: np.array(0.3)})
    np.testing.assert_allclose(got, expected, rtol=1e-12)
