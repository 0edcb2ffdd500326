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
lengths of 1, as everywhere in fgraph). Samples are float64 or int64. `normal`, `uniform`,
`multivariate_normal`, and the scale of `gamma` and `exponential` are differentiable in
their parameters (the draw is a smooth function of them given the state); the others
raise when differentiated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import numpy as np

from fgraph import Input, ShapeError, Variable
from fgraph.operators import TensorLike
from ops.broadcast import broadcast_to
from ops.convert import as_tensor
from ops.dimshuffle import expand_dims
from ops.elemwise import add, cast, le, lt, minimum, mul, sub
from ops.linalg import cholesky
from ops.matmul import matmul, swap_last_axes
from ops.random_draw import DISTRIBUTIONS, STATE_TYPE, RandomDraw, check_state, state_to_array
from ops.reduction import cumsum
from ops.reduction import sum as reduce_sum
from ops.shape_vector import ShapeLike, as_shape_vector

Draw = tuple[Variable, Variable]
Size = Optional[ShapeLike]

__all__ = [
    "bernoulli", "beta", "binomial", "categorical", "choice", "dirichlet", "exponential",
    "gamma", "integers", "multivariate_normal", "normal", "permutation", "poisson", "seed",
    "standard_normal", "state", "uniform",
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


def _draw(name: str, rng: Variable, size: Size, *parameters: TensorLike, caller: str = "") -> Draw:
    """One `RandomDraw` with its parameters converted and broadcast to the draw's shape;
    errors name the user's function, `caller` (by default the draw's own name)."""
    spec = DISTRIBUTIONS[name]
    check_state(f"random.{caller or name}", rng.type)
    values = [
        cast(as_tensor(value, name=f"random.{name} {label}"), dtype)
        for value, label, dtype in zip(parameters, spec.parameters, spec.parameter_dtypes)
    ]
    target = as_shape_vector(_lengths_of(values) if size is None else size, f"random.{name} size")
    shaped = [v if v.ndim == 0 else broadcast_to(v, target.variable) for v in values]
    for label, original, value in zip(spec.parameters, values, shaped):
        if original.ndim > len(target.static):
            raise ShapeError(
                f"random.{name}: parameter {label} ({original.type}) has more axes than the "
                f"size {target.static}"
            )
    new_state, sample = RandomDraw(name, target.static).apply(rng, target.variable, *shaped)
    return new_state, sample


def uniform(rng: Variable, low: TensorLike = 0.0, high: TensorLike = 1.0, size: Size = None) -> Draw:
    """Uniform on [low, high): low + (high - low) * u, as NumPy computes it."""
    low_value, high_value = as_tensor(low, name="uniform low"), as_tensor(high, name="uniform high")
    shape = size if size is not None else _lengths_of([low_value, high_value])
    new_state, u = _draw("random", rng, shape, caller="uniform")
    return new_state, add(low_value, mul(sub(high_value, low_value), u))


def standard_normal(rng: Variable, size: Size = None) -> Draw:
    """Standard normal draws (NumPy's ziggurat)."""
    return _draw("standard_normal", rng, () if size is None else size)


def normal(rng: Variable, loc: TensorLike = 0.0, scale: TensorLike = 1.0, size: Size = None) -> Draw:
    """Normal draws: loc + scale * z, as NumPy computes them (differentiable in loc, scale)."""
    loc_value, scale_value = as_tensor(loc, name="normal loc"), as_tensor(scale, name="normal scale")
    shape = size if size is not None else _lengths_of([loc_value, scale_value])
    new_state, z = _draw("standard_normal", rng, shape, caller="normal")
    return new_state, add(loc_value, mul(scale_value, z))


def exponential(rng: Variable, scale: TensorLike = 1.0, size: Size = None) -> Draw:
    """Exponential draws of mean `scale`: scale * a standard exponential draw."""
    scale_value = as_tensor(scale, name="exponential scale")
    shape = size if size is not None else _lengths_of([scale_value])
    new_state, e = _draw("standard_exponential", rng, shape, caller="exponential")
    return new_state, mul(scale_value, e)


def gamma(rng: Variable, shape: TensorLike, scale: TensorLike = 1.0, size: Size = None) -> Draw:
    """Gamma draws of `shape` and `scale`: scale * a standard gamma draw (differentiable
    in scale, not in shape)."""
    shape_value, scale_value = as_tensor(shape, name="gamma shape"), as_tensor(scale, name="gamma scale")
    target = size if size is not None else _lengths_of([shape_value, scale_value])
    new_state, g = _draw("standard_gamma", rng, target, shape_value, caller="gamma")
    return new_state, mul(scale_value, g)


def beta(rng: Variable, a: TensorLike, b: TensorLike, size: Size = None) -> Draw:
    """Beta draws."""
    return _draw("beta", rng, size, a, b)


def binomial(rng: Variable, n: TensorLike, p: TensorLike, size: Size = None) -> Draw:
    """Binomial draws (int64)."""
    return _draw("binomial", rng, size, n, p)


def poisson(rng: Variable, lam: TensorLike = 1.0, size: Size = None) -> Draw:
    """Poisson draws (int64)."""
    return _draw("poisson", rng, size, lam)


def integers(rng: Variable, low: TensorLike, high: TensorLike | None = None, size: Size = None) -> Draw:
    """Integers in [low, high) (or [0, low) without `high`), int64, as
    `Generator.integers`."""
    if high is None:
        low, high = 0, low
    return _draw("integers", rng, size, low, high)


def bernoulli(rng: Variable, p: TensorLike, size: Size = None) -> Draw:
    """1 with probability p, else 0 (int64): u < p for a uniform u (NumPy's Generator has
    no Bernoulli; this is `random() < p`)."""
    probability = as_tensor(p, name="bernoulli p")
    shape = size if size is not None else _lengths_of([probability])
    new_state, u = _draw("random", rng, shape, caller="bernoulli")
    return new_state, cast(lt(u, probability), "int64")


def categorical(rng: Variable, p: TensorLike, size: Size = None) -> Draw:
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


def permutation(rng: Variable, x: TensorLike) -> Draw:
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
    rng: Variable, a: TensorLike, size: Size = None, replace: bool = True, p: TensorLike | None = None
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
    rng: Variable, mean: TensorLike, cov: TensorLike, size: Size = None
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


def dirichlet(rng: Variable, alpha: TensorLike, size: Size = None) -> Draw:
    """Dirichlet draws (the last axis holds the categories), as `Generator.dirichlet`."""
    concentration = cast(as_tensor(alpha, name="dirichlet alpha"), "float64")
    if concentration.ndim != 1:
        raise ShapeError(f"random.dirichlet: alpha must be a vector, got {concentration.type}")
    check_state("random.dirichlet", rng.type)
    target = as_shape_vector(() if size is None else size, "random.dirichlet size")
    new_state, sample = RandomDraw("dirichlet", target.static).apply(rng, target.variable, concentration)
    return new_state, sample

