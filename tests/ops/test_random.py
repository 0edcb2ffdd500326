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
from tests.ops.checks import check_pullback, check_pushforward

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
    ("lognormal", lambda s: pt.random.lognormal(s, [0.0, 1.0], 0.5, size=(4, 2)),
     lambda g: g.lognormal([0.0, 1.0], 0.5, size=(4, 2))),
    ("lognormal defaults", lambda s: pt.random.lognormal(s), lambda g: g.lognormal()),
    ("laplace", lambda s: pt.random.laplace(s, np.arange(3.0), np.ones((2, 1))),
     lambda g: g.laplace(np.arange(3.0), np.ones((2, 1)))),
    ("logistic", lambda s: pt.random.logistic(s, 1.0, [0.5, 2.0], size=(3, 2)),
     lambda g: g.logistic(1.0, [0.5, 2.0], size=(3, 2))),
    ("gumbel", lambda s: pt.random.gumbel(s, -1.0, 3.0, size=7), lambda g: g.gumbel(-1.0, 3.0, size=7)),
    ("cauchy", lambda s: pt.random.cauchy(s, size=(5,)), lambda g: g.standard_cauchy(5)),
    ("cauchy loc scale", lambda s: pt.random.cauchy(s, 1.0, 2.0, size=(5,)),
     lambda g: 1.0 + 2.0 * g.standard_cauchy(5)),
    ("student_t", lambda s: pt.random.student_t(s, [1.0, 4.0, 30.0], size=(2, 3)),
     lambda g: g.standard_t([1.0, 4.0, 30.0], size=(2, 3))),
    ("student_t loc scale", lambda s: pt.random.student_t(s, 3.0, np.zeros(4), 2.0),
     lambda g: 2.0 * g.standard_t(3.0, size=4)),
    ("chisquare", lambda s: pt.random.chisquare(s, [0.5, 3.0], size=(3, 2)),
     lambda g: g.chisquare([0.5, 3.0], size=(3, 2))),
    ("weibull", lambda s: pt.random.weibull(s, [0.0, 1.5], size=(3, 2)), lambda g: g.weibull([0.0, 1.5], size=(3, 2))),
    ("pareto", lambda s: pt.random.pareto(s, 3.0, size=6), lambda g: g.pareto(3.0, size=6)),
    ("wald", lambda s: pt.random.wald(s, [1.0, 2.0], 0.5), lambda g: g.wald([1.0, 2.0], 0.5)),
    ("vonmises", lambda s: pt.random.vonmises(s, 0.5, [1e-9, 2.0, 1e7], size=(4, 3)),
     lambda g: g.vonmises(0.5, [1e-9, 2.0, 1e7], size=(4, 3))),
    ("geometric", lambda s: pt.random.geometric(s, [0.05, 0.5], size=(3, 2)),
     lambda g: g.geometric([0.05, 0.5], size=(3, 2))),
    ("negative_binomial", lambda s: pt.random.negative_binomial(s, [2.5, 10.0], 0.3, size=(3, 2)),
     lambda g: g.negative_binomial([2.5, 10.0], 0.3, size=(3, 2))),
    ("hypergeometric", lambda s: pt.random.hypergeometric(s, 20, 30, [5, 25], size=(3, 2)),
     lambda g: g.hypergeometric(20, 30, [5, 25], size=(3, 2))),
    ("multinomial", lambda s: pt.random.multinomial(s, 20, [0.2, 0.3, 0.5], size=(4,)),
     lambda g: g.multinomial(20, [0.2, 0.3, 0.5], size=4)),
    ("multinomial batch n", lambda s: pt.random.multinomial(s, [5, 100], [0.2, 0.8]),
     lambda g: g.multinomial([5, 100], [0.2, 0.8])),
    ("multinomial no size", lambda s: pt.random.multinomial(s, 9, [0.5, 0.5]), lambda g: g.multinomial(9, [0.5, 0.5])),
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
    with pytest.raises(TypeError, match=r"random.laplace: expected a generator state.*int64.*\(3,\)"):
        pt.random.laplace(np.arange(3), size=(3,))
    with pytest.raises(TypeError, match=r"random.dirichlet: expected a generator state.*float"):
        pt.random.dirichlet(42.0, [1.0, 2.0])  # type: ignore[arg-type]
    assert pt.random.state("s").type == STATE_TYPE == TensorType("uint64", (6,))


@pytest.mark.parametrize("draw", [pt.random.normal, pt.random.gumbel, pt.random.cauchy])
def test_a_state_value_is_a_constant_state(draw: Callable[..., tuple[Variable, Variable]]) -> None:
    """`pt.random.normal(pt.random.seed(42), ...)`: the value is the draw's state."""
    from_value = draw(pt.random.seed(42), 1.0, 2.0, size=(4,))
    state = pt.random.state("s")
    from_input = draw(state, 1.0, 2.0, size=(4,))
    got = evaluate(list(from_value), {})
    expected = evaluate(list(from_input), {state: pt.random.seed(42)})
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)


BAD_PARAMETERS: list[tuple[str, Callable[[Variable], tuple[Variable, Variable]], str]] = [
    ("lognormal sigma", lambda s: pt.random.lognormal(s, 0.0, -1.0), "random.lognormal: sigma < 0"),
    ("laplace scale", lambda s: pt.random.laplace(s, 0.0, [1.0, -0.0]), "random.laplace: scale < 0"),
    ("logistic scale", lambda s: pt.random.logistic(s, 0.0, -2.0), "random.logistic: scale < 0"),
    ("gumbel scale", lambda s: pt.random.gumbel(s, 0.0, -2.0), "random.gumbel: scale < 0"),
    ("student_t df", lambda s: pt.random.student_t(s, [3.0, 0.0]), "random.student_t: df <= 0"),
    ("chisquare df", lambda s: pt.random.chisquare(s, -1.0), "random.chisquare: df <= 0"),
    ("weibull a", lambda s: pt.random.weibull(s, -1.0), "random.weibull: a < 0"),
    ("pareto a", lambda s: pt.random.pareto(s, 0.0), "random.pareto: a <= 0"),
    ("wald mean", lambda s: pt.random.wald(s, 0.0, 1.0), "random.wald: mean <= 0"),
    ("wald scale", lambda s: pt.random.wald(s, 1.0, -1.0), "random.wald: scale <= 0"),
    ("vonmises kappa", lambda s: pt.random.vonmises(s, 0.0, -1.0), "random.vonmises: kappa < 0"),
    ("geometric p 0", lambda s: pt.random.geometric(s, 0.0), "random.geometric: p <= 0, p > 1 or p contains NaNs"),
    ("geometric p nan", lambda s: pt.random.geometric(s, [0.5, np.nan]), "random.geometric: p <= 0, p > 1"),
    ("negative_binomial n", lambda s: pt.random.negative_binomial(s, 0.0, 0.5), "random.negative_binomial: n <= 0"),
    ("negative_binomial n nan", lambda s: pt.random.negative_binomial(s, np.nan, 0.5),
     "random.negative_binomial: n must not be NaN"),
    ("negative_binomial p", lambda s: pt.random.negative_binomial(s, 2.0, 1.5), "random.negative_binomial: p <= 0"),
    ("negative_binomial mean", lambda s: pt.random.negative_binomial(s, 1e10, 1e-12),
     "random.negative_binomial: n too large or p too small"),
    ("hypergeometric ngood", lambda s: pt.random.hypergeometric(s, -1, 5, 2), "random.hypergeometric: ngood < 0"),
    ("hypergeometric nsample", lambda s: pt.random.hypergeometric(s, 3, 5, [2, 9]),
     "random.hypergeometric: ngood \\+ nbad < nsample"),
    ("hypergeometric large", lambda s: pt.random.hypergeometric(s, 10**9, 5, 2),
     "random.hypergeometric: both ngood and nbad must be less than 1000000000"),
    ("multinomial n", lambda s: pt.random.multinomial(s, [3, -1], [0.5, 0.5]), "random.multinomial: n < 0"),
    ("multinomial pvals", lambda s: pt.random.multinomial(s, 3, [1.5, -0.5]),
     "random.multinomial: pvals < 0, pvals > 1"),
    ("multinomial sum", lambda s: pt.random.multinomial(s, 3, [0.7, 0.7, 0.0]),
     "random.multinomial: sum\\(pvals\\[:-1\\]\\) > 1.0"),
    ("multinomial empty", lambda s: pt.random.multinomial(s, 3, np.zeros(0)),
     "random.multinomial: pvals must have at least 1 dimension"),
]


@pytest.mark.parametrize("build, message", [c[1:] for c in BAD_PARAMETERS], ids=[c[0] for c in BAD_PARAMETERS])
def test_bad_parameters_raise_numpys_errors(build: Build, message: str) -> None:
    """The checks NumPy makes, with its message after the function's name."""
    state = pt.random.state("s")
    _, sample = build(state)
    with pytest.raises(ValueError, match=message):
        evaluate([sample], {state: pt.random.seed(0)})


LOCATION_SCALE = [pt.random.lognormal, pt.random.laplace, pt.random.logistic, pt.random.gumbel,
                  pt.random.cauchy]


@pytest.mark.parametrize("draw", LOCATION_SCALE, ids=lambda d: d.__name__)
def test_location_scale_draws_differentiate(draw: Callable[..., tuple[Variable, Variable]]) -> None:
    """Given the state, each sample is a smooth function of loc and scale (lognormal's
    mean and sigma): the derivatives match finite differences, with scalar and with
    per-sample parameters."""
    seed = pt.random.seed(8)

    def sample(loc: Variable, scale: Variable) -> Variable:
        return draw(seed, loc, scale, size=(5,))[1]

    check_pullback(sample, [np.array(0.3), np.array(0.7)])
    check_pullback(sample, [np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 1.5, 5)])
    check_pushforward(sample, [np.array(0.3), np.array(0.7)])


def test_student_t_differentiates_in_loc_and_scale_not_df() -> None:
    seed = pt.random.seed(8)

    def sample(loc: Variable, scale: Variable) -> Variable:
        return pt.random.student_t(seed, 4.0, loc, scale, size=(5,))[1]

    check_pullback(sample, [np.array(0.3), np.array(0.7)])
    df = pt.scalar("df")
    with pytest.raises(NotImplementedError, match="student_t draws are not differentiable"):
        pt.grad(pt.sum(pt.random.student_t(seed, df, size=(3,))[1]), df)


@pytest.mark.parametrize("build", [
    lambda x: pt.random.wald(pt.random.seed(1), x, 1.0, size=(3,))[1],
    lambda x: pt.random.vonmises(pt.random.seed(1), 0.0, x, size=(3,))[1],
    lambda x: pt.random.chisquare(pt.random.seed(1), x, size=(3,))[1],
], ids=["wald", "vonmises", "chisquare"])
def test_other_new_draws_refuse_derivatives(build: Callable[[Variable], Variable]) -> None:
    x = pt.scalar("x")
    with pytest.raises(NotImplementedError, match="draws are not differentiable in their parameters"):
        pt.grad(pt.sum(build(x)), x)


@pytest.mark.parametrize(
    "build, cdf",
    [
        (lambda s: pt.random.laplace(s, 1.0, 2.0, size=(50_000,)), scipy.stats.laplace(1.0, 2.0).cdf),
        (lambda s: pt.random.cauchy(s, 1.0, 2.0, size=(50_000,)), scipy.stats.cauchy(1.0, 2.0).cdf),
        (lambda s: pt.random.student_t(s, 3.0, 1.0, 2.0, size=(50_000,)), scipy.stats.t(3.0, 1.0, 2.0).cdf),
    ],
    ids=["laplace", "cauchy", "student_t"],
)
def test_location_and_scale_mean_scipys_parameters(build: Build, cdf: Callable[[Array], Array]) -> None:
    state = pt.random.state("s")
    (sample,) = evaluate([build(state)[1]], {state: pt.random.seed(11)})
    assert _ks(sample, cdf) > 1e-3


def test_unknown_lengths_broadcast_as_numpy() -> None:
    state, loc, n = pt.random.state("s"), pt.vector("loc"), pt.tensor("n", dtype="int64", shape=(None, 1))
    _, x = pt.random.gumbel(state, loc, 2.0)
    _, counts = pt.random.multinomial(state, n, [0.25, 0.75])
    loc_value, n_value = np.linspace(0.0, 1.0, 4), np.array([[3], [40]])
    got_x, got_counts = evaluate([x, counts], {state: pt.random.seed(5), loc: loc_value, n: n_value})
    np.testing.assert_array_equal(got_x, np.random.default_rng(5).gumbel(loc_value, 2.0))
    np.testing.assert_array_equal(got_counts, np.random.default_rng(5).multinomial(n_value, [0.25, 0.75]))
    assert counts.type.shape == (None, 1, 2)


def test_empty_and_single_draws() -> None:
    state = pt.random.state("s")
    cases: list[tuple[Callable[[Variable, int], tuple[Variable, Variable]], Callable[[np.random.Generator, int], Any]]]
    cases = [
        (lambda s, k: pt.random.vonmises(s, 0.0, 2.0, size=(k,)), lambda g, k: g.vonmises(0.0, 2.0, k)),
        (lambda s, k: pt.random.multinomial(s, 5, [0.5, 0.5], size=(k,)), lambda g, k: g.multinomial(5, [0.5, 0.5], k)),
        (lambda s, k: pt.random.hypergeometric(s, 5, 5, 3, size=(k,)), lambda g, k: g.hypergeometric(5, 5, 3, k)),
    ]
    for build, reference in cases:
        for k in (0, 1):
            new_state, sample = build(state, k)
            got_state, got = evaluate([new_state, sample], {state: pt.random.seed(2)})
            generator = np.random.default_rng(2)
            np.testing.assert_array_equal(got, reference(generator, k))
            np.testing.assert_array_equal(got_state, _state_of(generator))
