"""Compiled random draws against the reference evaluator (which draws with NumPy):
the same state gives the same numbers bit for bit, for every distribution and through
a loop carrying the state; the caller's state array is never written."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

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
