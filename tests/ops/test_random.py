"""`pt.random` in the reference evaluator: NumPy's own numbers for NumPy's
distributions, reproducibility (same state, same values; new state, new values),
distribution checks for what NumPy's Generator lacks, derivatives of reparameterized
draws against finite differences, refusal for the others, and state through a loop."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.stats

import ops as pt
from fgraph import TensorType, Variable, evaluate
from ops.random_draw import STATE_TYPE
from tests.ops.checks import check_pullback

Array = np.ndarray[Any, np.dtype[Any]]
Build = Callable[[Variable], tuple[Variable, Variable]]
Reference = Callable[[np.random.Generator], Any]

SAME_AS_NUMPY: list[tuple[str, Build, Reference]] = [
    ("uniform", lambda s: pt.random.uniform(s, -1.0, 3.0, size=(4, 3)), lambda g: g.uniform(-1.0, 3.0, size=(4, 3))),
    ("normal", lambda s: pt.random.normal(s, 1.0, 2.0, size=(1000,)), lambda g: g.normal(1.0, 2.0, size=1000)),
    ("normal broadcast", lambda s: pt.random.normal(s, np.arange(3.0), np.ones((2, 1))),
     lambda g: g.normal(np.arange(3.0), np.ones((2, 1)))),
    ("standard_normal", lambda s: pt.random.standard_normal(s, size=7), lambda g: g.standard_normal(7)),
    ("exponential", lambda s: pt.random.exponential(s, 2.0, size=50), lambda g: g.exponential(2.0, size=50)),
    ("gamma", lambda s: pt.random.gamma(s, 3.0, 2.0, size=(1000,)), lambda g: g.gamma(3.0, 2.0, size=1000)),
    ("gamma small shape", lambda s: pt.random.gamma(s, [0.3, 1.0, 5.0], size=(4, 3)),
     lambda g: g.gamma([0.3, 1.0, 5.0], size=(4, 3))),
    ("beta", lambda s: pt.random.beta(s, [0.5, 2.0], [0.7, 3.0], size=(5, 2)),
     lambda g: g.beta([0.5, 2.0], [0.7, 3.0], size=(5, 2))),
    ("binomial", lambda s: pt.random.binomial(s, [5, 100], [0.3, 0.8], size=(6, 2)),
     lambda g: g.binomial([5, 100], [0.3, 0.8], size=(6, 2))),
    ("poisson", lambda s: pt.random.poisson(s, [0.5, 30.0], size=(5, 2)), lambda g: g.poisson([0.5, 30.0], size=(5, 2))),
    ("integers", lambda s: pt.random.integers(s, -3, 10, size=20), lambda g: g.integers(-3, 10, size=20)),
    ("integers high only", lambda s: pt.random.integers(s, 6, size=(2, 2)), lambda g: g.integers(6, size=(2, 2))),
    ("permutation", lambda s: pt.random.permutation(s, 10), lambda g: g.permutation(10)),
    ("permutation array", lambda s: pt.random.permutation(s, np.arange(12.0).reshape(4, 3)),
     lambda g: g.permutation(np.arange(12.0).reshape(4, 3))),
    ("choice", lambda s: pt.random.choice(s, np.array([3.0, 5.0, 7.0]), size=(4,)),
     lambda g: g.choice(np.array([3.0, 5.0, 7.0]), size=4)),
    ("multivariate_normal", lambda s: pt.random.multivariate_normal(
        s, np.array([1.0, -1.0]), np.array([[2.0, 0.3], [0.3, 1.0]]), size=(5,)),
     lambda g: g.multivariate_normal([1.0, -1.0], [[2.0, 0.3], [0.3, 1.0]], size=5, method="cholesky")),
    ("dirichlet", lambda s: pt.random.dirichlet(s, [0.5, 1.0, 4.0], size=(3,)),
     lambda g: g.dirichlet([0.5, 1.0, 4.0], size=3)),
]


@pytest.mark.parametrize("build, reference", [c[1:] for c in SAME_AS_NUMPY], ids=[c[0] for c in SAME_AS_NUMPY])
def test_draws_are_numpys_numbers(build: Build, reference: Reference) -> None:
    state = pt.random.state("s")
    new_state, sample = build(state)
    got_state, got = evaluate([new_state, sample], {state: pt.random.seed(42)})
    generator = np.random.default_rng(42)
    expected = reference(generator)
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    assert got.dtype == np.asarray(expected).dtype or got.dtype in (np.int64, np.float64)
    np.testing.assert_array_equal(got_state, pt.random.seed(0) * 0 + _state_of(generator))


def _state_of(generator: np.random.Generator) -> Array:
    from ops.random_draw import state_to_array

    return state_to_array(dict(generator.bit_generator.state))


def test_same_state_same_numbers_new_state_new_numbers() -> None:
    state = pt.random.state("s")
    new_state, x = pt.random.normal(state, size=(5,))
    first_state, first = evaluate([new_state, x], {state: pt.random.seed(1)})
    _, again = evaluate([new_state, x], {state: pt.random.seed(1)})
    _, following = evaluate([new_state, x], {state: first_state})
    np.testing.assert_array_equal(first, again)
    assert not np.any(first == following)
    _, other_seed = evaluate([new_state, x], {state: pt.random.seed(2)})
    assert not np.any(first == other_seed)


def test_chained_draws_follow_numpys_stream() -> None:
    state = pt.random.state("s")
    s2, x = pt.random.normal(state, 1.0, 2.0, size=(3,))
    s3, g = pt.random.gamma(s2, 3.0, 2.0, size=(3,))
    _, x_value, g_value = evaluate([s3, x, g], {state: pt.random.seed(42)})
    generator = np.random.default_rng(42)
    np.testing.assert_array_equal(x_value, generator.normal(1.0, 2.0, size=3))
    np.testing.assert_array_equal(g_value, generator.gamma(3.0, 2.0, size=3))


def test_state_is_a_loop_carry() -> None:
    state = pt.random.state("s")

    def step(s: Variable) -> tuple[Variable, Variable]:
        return pt.random.normal(s, 0.0, 1.0, size=(2,))

    states, draws = pt.scan(step, outputs_info=[state, None], n_steps=5)
    final, values = evaluate([states[-1], draws], {state: pt.random.seed(9)})
    generator = np.random.default_rng(9)
    np.testing.assert_array_equal(values, np.stack([generator.normal(size=2) for _ in range(5)]))
    np.testing.assert_array_equal(final, _state_of(generator))


def _ks(sample: Array, cdf: Callable[[Array], Array]) -> float:
    return float(scipy.stats.kstest(sample, cdf).pvalue)


def test_distributions_numpy_lacks() -> None:
    state = pt.random.state("s")
    p = np.array([0.1, 0.2, 0.3, 0.4])
    _, categories = pt.random.categorical(state, p, size=(100_000,))
    _, flips = pt.random.bernoulli(state, 0.3, size=(100_000,))
    _, unique = pt.random.choice(state, 10, size=(10,), replace=False)
    _, weighted = pt.random.choice(state, 4, size=(100_000,), p=p)
    values = evaluate([categories, flips, unique, weighted], {state: pt.random.seed(3)})
    counts = np.bincount(values[0], minlength=4) / 100_000
    np.testing.assert_allclose(counts, p, atol=0.006)
    assert abs(values[1].mean() - 0.3) < 0.006 and set(np.unique(values[1])) == {0, 1}
    assert sorted(values[2]) == list(range(10))
    np.testing.assert_allclose(np.bincount(values[3], minlength=4) / 100_000, p, atol=0.006)


@pytest.mark.parametrize(
    "build, cdf",
    [
        (lambda s: pt.random.normal(s, 1.0, 2.0, size=(100_000,)), scipy.stats.norm(1.0, 2.0).cdf),
        (lambda s: pt.random.gamma(s, 0.4, 1.5, size=(100_000,)), scipy.stats.gamma(0.4, scale=1.5).cdf),
        (lambda s: pt.random.beta(s, 0.5, 0.7, size=(100_000,)), scipy.stats.beta(0.5, 0.7).cdf),
    ],
)
def test_distribution_shapes(build: Build, cdf: Callable[[Array], Array]) -> None:
    state = pt.random.state("s")
    (sample,) = evaluate([build(state)[1]], {state: pt.random.seed(11)})
    assert _ks(sample, cdf) > 1e-3


def test_reparameterized_draws_differentiate() -> None:
    seed = pt.random.seed(5)

    def normal(loc: Variable, scale: Variable) -> Variable:
        return pt.random.normal(pt.constant(seed), loc, scale, size=(4,))[1]

    check_pullback(normal, [np.array(0.5), np.array(2.0)])

    def uniform(low: Variable, high: Variable) -> Variable:
        return pt.random.uniform(pt.constant(seed), low, high, size=(3,))[1]

    check_pullback(uniform, [np.array(-1.0), np.array(2.0)])

    def mvn(mean: Variable, cov: Variable) -> Variable:
        return pt.random.multivariate_normal(pt.constant(seed), mean, cov, size=(2,))[1]

    check_pullback(mvn, [np.array([0.0, 1.0]), np.array([[2.0, 0.5], [0.5, 1.0]])])


def test_other_draws_refuse_derivatives() -> None:
    state = pt.random.state("s")
    shape = pt.scalar("shape")
    _, g = pt.random.gamma(state, shape, 2.0, size=(3,))
    with pytest.raises(NotImplementedError, match="standard_gamma draws are not differentiable"):
        pt.grad(pt.sum(g), shape)
    scale = pt.scalar("scale")
    _, scaled = pt.random.gamma(state, 3.0, scale, size=(3,))
    assert pt.grad(pt.sum(scaled), scale) is not None


def test_a_state_must_be_a_state() -> None:
    with pytest.raises(TypeError, match=r"random.normal: expected a generator state.*float64"):
        pt.random.normal(pt.vector("x"), size=(3,))
    assert pt.random.state("s").type == STATE_TYPE == TensorType("uint64", (6,))
