"""`pt.random`: random numbers with explicit state, NumPy's `Generator` API as pure
functions.

    s = pt.random.state("s")                              # a graph input holding a state
    s2, x = pt.random.normal(s, 1.0, 2.0, size=(1000,))   # (new state, draws)
    s3, g = pt.random.gamma(s2, 3.0, 2.0, size=(1000,))
    f = function([s], [s3, x, g])
    new_state, x_value, g_value = f(pt.random.seed(42))

Every draw takes a state and returns `(new_state, sample)`; there is no global seed and no
hidden update, so the same graph with the same state value gives the same numbers, in
`evaluate` and in compiled code, and a loop threads the state as an ordinary carry. A
state value is NumPy's PCG64 state (`seed(n)` is `numpy.random.default_rng(n)`'s), and
the numbers are NumPy's: `normal(seed(42), 1.0, 2.0, size=3)` gives
`default_rng(42).normal(1.0, 2.0, size=3)` (`categorical`, `bernoulli` and `choice`
without replacement, which NumPy's Generator lacks or computes otherwise, are built from
uniform draws and documented where they are).

Parameters broadcast against each other and against `size`, as NumPy's do (along static
lengths of 1, as everywhere in fgraph), and are checked as NumPy checks them. Samples are
float64 or int64. `normal`, `uniform`, `multivariate_normal`, `lognormal`, the loc and
scale of `laplace`, `logistic`, `gumbel`, `cauchy` and `student_t`, and the scale of
`gamma` and `exponential` are differentiable (the draw is a smooth function of them
given the state); the others raise when differentiated. A state value may stand in for
a state variable (as a constant).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional, Union

import numpy as np

from fgraph import Input, ShapeError, Variable
from fgraph.operators import TensorLike
from ops.broadcast import broadcast_to
from ops.convert import as_tensor, constant
from ops.dimshuffle import expand_dims
from ops.elementwise_functions import add, cast, le, lt, minimum, mul, sub
from ops.linalg import cholesky
from ops.matmul_op import matmul, swap_last_axes
from ops.random_draw import DISTRIBUTIONS, STATE_TYPE, RandomDraw, check_state, state_to_array
from ops.reduction import cumsum
from ops.reduction import sum as reduce_sum
from ops.shape_vector import ShapeLike, as_shape_vector

Draw = tuple[Variable, Variable]
Size = Optional[ShapeLike]
StateLike = Union[Variable, np.ndarray]
"""A state variable, or a state value (`seed(n)`, a returned state) used as a constant."""

__all__ = [
    "bernoulli", "beta", "binomial", "categorical", "cauchy", "chisquare", "choice",
    "dirichlet", "exponential", "gamma", "geometric", "gumbel", "hypergeometric", "integers",
    "laplace", "logistic", "lognormal", "multinomial", "multivariate_normal", "negative_binomial",
    "normal", "pareto", "permutation", "poisson", "seed", "standard_normal", "state", "student_t",
    "uniform", "vonmises", "wald", "weibull",
]


def state(name: str = "state") -> Input:
    """A graph input holding a generator state (its value: `seed(n)` or a draw's state)."""
    return Input(STATE_TYPE, name)


def seed(n: int | Sequence[int]) -> np.ndarray:
    """The state value `numpy.random.default_rng(n)` starts from."""
    return state_to_array(dict(np.random.PCG64(n).state))


def _lengths_of(parameters: list[Variable]) -> list[Variable | int]:
    """The broadcast shape of `parameters` (along static lengths of 1, fgraph's rule)."""
    rank = max((p.ndim for p in parameters), default=0)
    padded = [p if p.ndim == rank else expand_dims(p, tuple(range(rank - p.ndim))) for p in parameters]
    lengths: list[Variable | int] = []
    for axis in range(rank):
        full = [p for p in padded if p.type.shape[axis] != 1]
        lengths.append(full[0].shape[axis] if full else 1)
    return lengths


def _state_variable(rng: StateLike, what: str) -> Variable:
    """`rng` as a state variable: a variable of the state type, or a state value (a
    `seed(n)` or a state a compiled function returned) as a constant; anything else is
    a TypeError naming `what`."""
    if isinstance(rng, Variable):
        check_state(what, rng.type)
        return rng
    value = np.asarray(rng)
    if value.dtype != np.uint64 or value.shape != STATE_TYPE.shape:
        raise TypeError(
            f"{what}: expected a generator state ({STATE_TYPE}, from pt.random.state, a draw "
            f"or pt.random.seed), got {type(rng).__name__} of dtype {value.dtype} and shape {value.shape}"
        )
    return constant(value)


def _draw(name: str, rng: StateLike, size: Size, *parameters: TensorLike, caller: str = "") -> Draw:
    """One `RandomDraw` with its parameters converted and broadcast to the draw's shape
    (those of rank 1, a vector for every sample, whole); errors name the user's
    function, `caller` (by default the draw's own name)."""
    spec = DISTRIBUTIONS[name]
    what = f"random.{caller or name}"
    state_variable = _state_variable(rng, what)
    values = [
        cast(as_tensor(value, name=f"{what} {declared.name}"), declared.dtype)
        for value, declared in zip(parameters, spec.parameters)
    ]
    for declared, value in zip(spec.parameters, values):
        if declared.rank == 1 and value.ndim != 1:
            raise ShapeError(f"{what}: {declared.name} must be a vector, got {value.type}")
    per_sample = [v for v, declared in zip(values, spec.parameters) if declared.rank == 0]
    target = as_shape_vector(_lengths_of(per_sample) if size is None else size, f"{what} size")
    shaped = [
        v if v.ndim == 0 or declared.rank == 1 else broadcast_to(v, target.variable)
        for v, declared in zip(values, spec.parameters)
    ]
    for declared, original in zip(spec.parameters, values):
        if declared.rank == 0 and original.ndim > len(target.static):
            raise ShapeError(
                f"{what}: parameter {declared.name} ({original.type}) has more axes than the "
                f"size {target.static}"
            )
    new_state, sample = RandomDraw(name, target.static).apply(state_variable, target.variable, *shaped)
    return new_state, sample


def uniform(rng: StateLike, low: TensorLike = 0.0, high: TensorLike = 1.0, size: Size = None) -> Draw:
    """Uniform on [low, high): low + (high - low) * u, as NumPy computes it."""
    low_value, high_value = as_tensor(low, name="uniform low"), as_tensor(high, name="uniform high")
    shape = size if size is not None else _lengths_of([low_value, high_value])
    new_state, u = _draw("random", rng, shape, caller="uniform")
    return new_state, add(low_value, mul(sub(high_value, low_value), u))


def standard_normal(rng: StateLike, size: Size = None) -> Draw:
    """Standard normal draws (NumPy's ziggurat)."""
    return _draw("standard_normal", rng, () if size is None else size)


def normal(rng: StateLike, loc: TensorLike = 0.0, scale: TensorLike = 1.0, size: Size = None) -> Draw:
    """Normal draws: loc + scale * z, as NumPy computes them (differentiable in loc, scale)."""
    loc_value, scale_value = as_tensor(loc, name="normal loc"), as_tensor(scale, name="normal scale")
    shape = size if size is not None else _lengths_of([loc_value, scale_value])
    new_state, z = _draw("standard_normal", rng, shape, caller="normal")
    return new_state, add(loc_value, mul(scale_value, z))


def exponential(rng: StateLike, scale: TensorLike = 1.0, size: Size = None) -> Draw:
    """Exponential draws of mean `scale`: scale * a standard exponential draw."""
    scale_value = as_tensor(scale, name="exponential scale")
    shape = size if size is not None else _lengths_of([scale_value])
    new_state, e = _draw("standard_exponential", rng, shape, caller="exponential")
    return new_state, mul(scale_value, e)


def gamma(rng: StateLike, shape: TensorLike, scale: TensorLike = 1.0, size: Size = None) -> Draw:
    """Gamma draws of `shape` and `scale`: scale * a standard gamma draw (differentiable
    in scale, not in shape)."""
    shape_value, scale_value = as_tensor(shape, name="gamma shape"), as_tensor(scale, name="gamma scale")
    target = size if size is not None else _lengths_of([shape_value, scale_value])
    new_state, g = _draw("standard_gamma", rng, target, shape_value, caller="gamma")
    return new_state, mul(scale_value, g)


def beta(rng: StateLike, a: TensorLike, b: TensorLike, size: Size = None) -> Draw:
    """Beta draws."""
    return _draw("beta", rng, size, a, b)


def binomial(rng: StateLike, n: TensorLike, p: TensorLike, size: Size = None) -> Draw:
    """Binomial draws (int64)."""
    return _draw("binomial", rng, size, n, p)


def poisson(rng: StateLike, lam: TensorLike = 1.0, size: Size = None) -> Draw:
    """Poisson draws (int64)."""
    return _draw("poisson", rng, size, lam)


def integers(rng: StateLike, low: TensorLike, high: TensorLike | None = None, size: Size = None) -> Draw:
    """Integers in [low, high) (or [0, low) without `high`), int64, as
    `Generator.integers`."""
    if high is None:
        low, high = 0, low
    return _draw("integers", rng, size, low, high)


def bernoulli(rng: StateLike, p: TensorLike, size: Size = None) -> Draw:
    """1 with probability p, else 0 (int64): u < p for a uniform u (NumPy's Generator has
    no Bernoulli; this is `random() < p`)."""
    probability = as_tensor(p, name="bernoulli p")
    shape = size if size is not None else _lengths_of([probability])
    new_state, u = _draw("random", rng, shape, caller="bernoulli")
    return new_state, cast(lt(u, probability), "int64")


def categorical(rng: StateLike, p: TensorLike, size: Size = None) -> Draw:
    """Category indices drawn with probabilities `p` along its last axis (normalized),
    int64: the number of cumulative probabilities at or below u * total for a uniform u
    (one uniform per draw, inverse-CDF sampling; NumPy's Generator has no categorical)."""
    probabilities = as_tensor(p, name="categorical p")
    if probabilities.ndim == 0:
        raise ShapeError(f"random.categorical: p needs a category axis, got {probabilities.type}")
    batch = _lengths_of([probabilities])[:-1]
    new_state, u = _draw("random", rng, size if size is not None else batch, caller="categorical")
    cumulative = cumsum(probabilities, axis=-1)
    total = cumulative[..., -1:]
    threshold = expand_dims(u, -1) * total
    count = reduce_sum(cast(le(cumulative, threshold), "int64"), axis=-1)
    last = cast(probabilities.shape[-1] - 1, "int64")
    return new_state, minimum(count, last)


def permutation(rng: StateLike, x: TensorLike) -> Draw:
    """A random permutation of range(x) for an integer scalar, else of `x` along its first
    axis, as `Generator.permutation`."""
    value = as_tensor(x, name="permutation x")
    if value.ndim == 0:
        if value.dtype.startswith(("float", "complex", "bool")):
            raise TypeError(f"random.permutation: expected an integer or an array, got {value.type}")
        return _draw("permutation", rng, [value])
    new_state, order = _draw("permutation", rng, [value.shape[0]])
    return new_state, value[order]


def choice(
    rng: StateLike, a: TensorLike, size: Size = None, replace: bool = True, p: TensorLike | None = None
) -> Draw:
    """Elements of `a` (or of range(a) for an integer scalar), as `Generator.choice`
    along the first axis. With replacement and no `p` the indices are NumPy's
    (`integers(0, len(a))`); with `p` they come from `categorical`; without replacement,
    from a permutation's first entries (NumPy draws these differently: the samples have
    the same distribution, not the same values)."""
    population = as_tensor(a, name="choice a")
    scalar = population.ndim == 0
    count = population if scalar else population.shape[0]
    shape = () if size is None else size
    if not replace:
        if p is not None:
            raise NotImplementedError("random.choice: p with replace=False is not supported")
        new_state, order = _draw("permutation", rng, [count], caller="choice")
        target = as_shape_vector(shape, "random.choice size")
        static = tuple(length for length in target.static if length is not None)
        if len(static) != len(target.static):
            raise ShapeError("random.choice: replace=False needs a static size")
        indices = order[: int(np.prod(static, dtype=np.int64))].reshape(static)
    elif p is None:
        new_state, indices = _draw("integers", rng, shape, 0, count, caller="choice")
    else:
        probabilities = as_tensor(p, name="choice p")
        new_state, u = _draw("random", rng, shape, caller="choice")
        cumulative = cumsum(probabilities, axis=-1)
        threshold = mul(u, cumulative[-1])
        spread = expand_dims(cumulative, tuple(range(u.ndim)))
        below = cast(le(spread, expand_dims(threshold, -1)), "int64")
        indices = minimum(reduce_sum(below, axis=-1), cast(count - 1, "int64"))
    return new_state, indices if scalar else population[indices]


def multivariate_normal(
    rng: StateLike, mean: TensorLike, cov: TensorLike, size: Size = None
) -> Draw:
    """Multivariate normal draws: mean + z @ L^T with L = cholesky(cov), as NumPy's
    `method="cholesky"` (differentiable in mean and cov)."""
    mean_value = as_tensor(mean, name="multivariate_normal mean")
    factor = cholesky(cov)
    if mean_value.ndim != 1:
        raise ShapeError(f"random.multivariate_normal: mean must be a vector, got {mean_value.type}")
    if size is None:
        batch: tuple[ShapeLike, ...] = ()
    else:
        batch = tuple(size) if isinstance(size, Sequence) else (size,)
    lengths = [*batch, mean_value.shape[0]]
    new_state, z = _draw("standard_normal", rng, lengths, caller="multivariate_normal")
    return new_state, add(mean_value, matmul(z, swap_last_axes(factor)))


def dirichlet(rng: StateLike, alpha: TensorLike, size: Size = None) -> Draw:
    """Dirichlet draws (the last axis holds the categories), as `Generator.dirichlet`."""
    return _draw("dirichlet", rng, () if size is None else size, alpha)


def _located(loc: TensorLike, scale: TensorLike, noise: Variable) -> Variable:
    """loc + scale * noise, differentiable in loc and scale; the noise itself for the
    defaults 0 and 1 (so the draw is NumPy's standard draw, bit for bit)."""
    if _is_number(loc, 0) and _is_number(scale, 1):
        return noise
    return add(loc, mul(scale, noise))


def _is_number(value: TensorLike, number: float) -> bool:
    return isinstance(value, (int, float)) and value == number


def lognormal(rng: StateLike, mean: TensorLike = 0.0, sigma: TensorLike = 1.0, size: Size = None) -> Draw:
    """Log-normal draws, exp(mean + sigma * z), as `Generator.lognormal` (differentiable in
    mean and sigma)."""
    return _draw("lognormal", rng, size, mean, sigma)


def laplace(rng: StateLike, loc: TensorLike = 0.0, scale: TensorLike = 1.0, size: Size = None) -> Draw:
    """Laplace (double exponential) draws, as `Generator.laplace` (differentiable in loc
    and scale)."""
    return _draw("laplace", rng, size, loc, scale)


def logistic(rng: StateLike, loc: TensorLike = 0.0, scale: TensorLike = 1.0, size: Size = None) -> Draw:
    """Logistic draws, as `Generator.logistic` (differentiable in loc and scale)."""
    return _draw("logistic", rng, size, loc, scale)


def gumbel(rng: StateLike, loc: TensorLike = 0.0, scale: TensorLike = 1.0, size: Size = None) -> Draw:
    """Gumbel (maximum) draws, as `Generator.gumbel` (differentiable in loc and scale)."""
    return _draw("gumbel", rng, size, loc, scale)


def cauchy(rng: StateLike, loc: TensorLike = 0.0, scale: TensorLike = 1.0, size: Size = None) -> Draw:
    """Cauchy draws: loc + scale * `Generator.standard_cauchy` (a ratio of two standard
    normals; NumPy's Generator has no loc and scale; with the defaults the numbers are
    NumPy's). Differentiable in loc and scale."""
    loc_value, scale_value = as_tensor(loc, name="cauchy loc"), as_tensor(scale, name="cauchy scale")
    shape = size if size is not None else _lengths_of([loc_value, scale_value])
    new_state, noise = _draw("cauchy", rng, shape)
    return new_state, _located(loc, scale, noise)


def student_t(
    rng: StateLike, df: TensorLike, loc: TensorLike = 0.0, scale: TensorLike = 1.0, size: Size = None
) -> Draw:
    """Student's t draws of `df` degrees of freedom: loc + scale * `Generator.standard_t(df)`
    (NumPy's Generator has no loc and scale; with the defaults the numbers are NumPy's).
    Differentiable in loc and scale, not in df."""
    df_value = as_tensor(df, name="student_t df")
    loc_value, scale_value = as_tensor(loc, name="student_t loc"), as_tensor(scale, name="student_t scale")
    shape = size if size is not None else _lengths_of([df_value, loc_value, scale_value])
    new_state, noise = _draw("student_t", rng, shape, df_value)
    return new_state, _located(loc, scale, noise)


def chisquare(rng: StateLike, df: TensorLike, size: Size = None) -> Draw:
    """Chi-square draws of `df` degrees of freedom, as `Generator.chisquare`."""
    return _draw("chisquare", rng, size, df)


def weibull(rng: StateLike, a: TensorLike, size: Size = None) -> Draw:
    """Weibull draws of shape `a` (scale 1), as `Generator.weibull`."""
    return _draw("weibull", rng, size, a)


def pareto(rng: StateLike, a: TensorLike, size: Size = None) -> Draw:
    """Pareto II (Lomax) draws of shape `a`, as `Generator.pareto` (add 1 and multiply by
    the mode for the classical Pareto)."""
    return _draw("pareto", rng, size, a)


def wald(rng: StateLike, mean: TensorLike, scale: TensorLike, size: Size = None) -> Draw:
    """Wald (inverse Gaussian) draws, as `Generator.wald`."""
    return _draw("wald", rng, size, mean, scale)


def vonmises(rng: StateLike, mu: TensorLike, kappa: TensorLike, size: Size = None) -> Draw:
    """Von Mises draws on [-pi, pi] of mode `mu` and concentration `kappa`, as
    `Generator.vonmises`."""
    return _draw("vonmises", rng, size, mu, kappa)


def geometric(rng: StateLike, p: TensorLike, size: Size = None) -> Draw:
    """Geometric draws (the number of trials up to the first success, from 1; int64), as
    `Generator.geometric`."""
    return _draw("geometric", rng, size, p)


def negative_binomial(rng: StateLike, n: TensorLike, p: TensorLike, size: Size = None) -> Draw:
    """Negative binomial draws (failures before the n-th success, n > 0 real; int64), as
    `Generator.negative_binomial`: a Poisson draw of a gamma-distributed mean."""
    return _draw("negative_binomial", rng, size, n, p)


def hypergeometric(
    rng: StateLike, ngood: TensorLike, nbad: TensorLike, nsample: TensorLike, size: Size = None
) -> Draw:
    """Hypergeometric draws (good items among `nsample` drawn without replacement; int64),
    as `Generator.hypergeometric`."""
    return _draw("hypergeometric", rng, size, ngood, nbad, nsample)


def multinomial(rng: StateLike, n: TensorLike, pvals: TensorLike, size: Size = None) -> Draw:
    """Multinomial counts of `n` trials over the categories of the vector `pvals` (the
    last axis of the sample; int64), as `Generator.multinomial`; `n` broadcasts against
    `size`."""
    return _draw("multinomial", rng, size, n, pvals)
