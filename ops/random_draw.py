"""`RandomDraw`: one draw from a generator state, as an op with the state as an input
and the advanced state as an output, so that random numbers are values like any other.

A state is a uint64 vector of length 6 holding NumPy's PCG64 state
(`[state >> 64, state & mask, inc >> 64, inc & mask, has_uint32, uinteger]`): the
reference `perform` turns it into a `numpy.random.Generator`, draws with NumPy and reads
the new state back, so a graph gives NumPy's own numbers. The same state value always
gives the same numbers; nothing is updated in place.

The op draws only what NumPy's generator draws natively (`DISTRIBUTIONS`, each entry
all fgraph knows of a distribution: parameters, NumPy's call, compiled draw, checks,
derivatives); the user functions in `ops.random` build the rest from these (normal =
loc + scale * standard normal, as NumPy computes it, and so on), which also makes those
differentiable in their parameters. A draw's parameters arrive already broadcast to the
output shape (or as scalars; a rank-1 parameter whole), and the output shape comes from
an int64 size vector input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypedDict

import attrs
import numpy as np

from fgraph import DTypeError, Op, ShapeError, TensorType, Variable
from fgraph.op import Array
from fgraph.types import Shape as StaticShape
from ops.convert import as_tensor
from ops.elementwise_functions import add, mul
from ops.reduction import sum as reduce_sum
from ops.shape_vector import as_static_shape, check_runtime_shape, check_shape_input

STATE_TYPE = TensorType("uint64", (6,))
"""The type of a generator state: NumPy's PCG64 state in six uint64 words."""

_MASK = (1 << 64) - 1


class PCG64Counter(TypedDict):
    """The 128-bit LCG state and increment inside `PCG64.state`."""

    state: int
    inc: int


class PCG64State(TypedDict):
    """`PCG64.state`, spelled out so that `array_to_state` can be assigned to it."""

    bit_generator: str
    state: PCG64Counter
    has_uint32: int
    uinteger: int


def state_to_array(bit_generator_state: Mapping[str, Any]) -> Array:
    """A PCG64 `bit_generator.state` dict as a state value (the layout of `STATE_TYPE`)."""
    inner = bit_generator_state["state"]
    words = [inner["state"] >> 64, inner["state"] & _MASK, inner["inc"] >> 64, inner["inc"] & _MASK,
             bit_generator_state["has_uint32"], bit_generator_state["uinteger"]]
    return np.array(words, dtype=np.uint64)


def array_to_state(state: Array) -> PCG64State:
    """The inverse of `state_to_array`: the dict `PCG64.state` takes and gives, with
    Python ints, so it compares equal to a generator's own `bit_generator.state`."""
    words = [int(word) for word in state]
    return {
        "bit_generator": "PCG64",
        "state": {"state": (words[0] << 64) | words[1], "inc": (words[2] << 64) | words[3]},
        "has_uint32": words[4],
        "uinteger": words[5],
    }


def generator_of(state: Array) -> np.random.Generator:
    """A NumPy generator in the state `state` holds (a fresh object: `state` is kept)."""
    bit_generator = np.random.PCG64()
    bit_generator.state = array_to_state(state)
    return np.random.Generator(bit_generator)


@attrs.frozen
class Check:
    """A condition every value of a draw's parameters must meet, as NumPy checks it, and
    NumPy's message when it does not. `condition` is a Python expression with the
    parameters' names in braces, true where they are valid: `perform` evaluates it on the
    whole parameter arrays (NumPy as `np`), the compiled kernel on each element's
    numbers, so it uses only what both read the same (comparisons, `&`, `|`, NumPy's
    ufuncs)."""

    condition: str
    message: str

    def holds(self, values: Mapping[str, Array]) -> bool:
        """Whether the condition holds for every element of `values` (by name)."""
        return bool(np.all(eval(self.condition.format(**{k: k for k in values}), {"np": np}, dict(values))))


def non_negative(name: str) -> Check:
    """NumPy's `CONS_NON_NEGATIVE`: no negative value (-0.0 included); NaN passes."""
    return Check(f"np.logical_not(np.signbit({{{name}}})) | np.isnan({{{name}}})", f"{name} < 0")


def positive(name: str) -> Check:
    """NumPy's `CONS_POSITIVE`: no value at or below 0; NaN passes."""
    return Check(f"np.logical_not({{{name}}} <= 0)", f"{name} <= 0")


def probability(name: str) -> Check:
    """NumPy's `CONS_BOUNDED_GT_0_1`: 0 < value <= 1, NaN fails."""
    return Check(f"({{{name}}} > 0) & ({{{name}}} <= 1)", f"{name} <= 0, {name} > 1 or {name} contains NaNs")


_POISSON_LAM_MAX = 9.223372006484771e18
"""NumPy's largest Poisson mean (`POISSON_LAM_MAX`)."""
_HYPERGEOMETRIC_MAX = 10**9
"""NumPy's bound on `hypergeometric`'s ngood and nbad (`HYPERGEOM_MAX`)."""


@attrs.frozen
class Parameter:
    """One parameter of a native draw: its name, the dtype it is converted to, and its
    rank in each sample (0: one number per sample, broadcast to the draw's shape; 1: one
    vector for every sample, which gives the samples their trailing axis, as
    `dirichlet`'s alpha)."""

    name: str
    dtype: str = "float64"
    rank: int = 0


Partials = Callable[["RandomDraw", tuple[Variable, ...], Variable], tuple[Variable, ...]]
"""The derivative of a draw's sample in each parameter, elementwise, from the node's
inputs and sample (see `RandomDraw.pullback`)."""


@attrs.frozen
class Distribution:
    """Everything fgraph needs to know of one distribution NumPy draws natively, in one
    place: its parameters, the sample dtype, NumPy's call (the reference `perform`),
    the name of the compiled draw in the numba backend's runtime
    (`numba_backend.random_streams`, `random_distributions`), how that draw fills the
    sample, the checks NumPy makes of the parameters, and, for reparameterizable
    draws, the sample's derivatives in its parameters.

    `layout`: "element" draws one element per call, `kernel(s, *parameters)`; "rows"
    fills one sample along the trailing axis per call, `kernel(s, *parameters, row)`
    (with the rank-1 parameters whole); "whole" fills the sample in one call,
    `kernel(s, sample)`."""

    parameters: tuple[Parameter, ...]
    dtype: str
    draw: Callable[..., Array]
    kernel: str
    layout: str = "element"
    checks: tuple[Check, ...] = ()
    partials: Partials | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(parameter.name for parameter in self.parameters)

    @property
    def event_parameter(self) -> int | None:
        """The position of the parameter giving the samples their trailing axis."""
        return next((k for k, parameter in enumerate(self.parameters) if parameter.rank == 1), None)


def _standard_redraw(name: str, *standard: float) -> Callable[[RandomDraw, tuple[Variable, ...]], Variable]:
    """The standard draw of `name` (parameters `standard`, e.g. loc 0 and scale 1) from
    the same state and size as a node's inputs: the noise the node's sample was made of,
    the same numbers, since a draw is a function of its state."""

    def redraw(op: RandomDraw, inputs: tuple[Variable, ...]) -> Variable:
        values = [as_tensor(np.float64(value)) for value in standard]
        return RandomDraw(name, op.shape).apply(inputs[0], inputs[1], *values)[1]

    return redraw


def _location_scale(name: str) -> Partials:
    """loc + scale * noise: 1 in loc, the standard draw (loc 0, scale 1) in scale."""
    noise = _standard_redraw(name, 0.0, 1.0)

    def partials(op: RandomDraw, inputs: tuple[Variable, ...], sample: Variable) -> tuple[Variable, ...]:
        return (as_tensor(np.float64(1.0)), noise(op, inputs))

    return partials


def _lognormal_partials(op: RandomDraw, inputs: tuple[Variable, ...], sample: Variable) -> tuple[Variable, ...]:
    """exp(mean + sigma * z): the sample in mean, the sample times z in sigma."""
    z = _standard_redraw("standard_normal")(op, inputs)
    return (sample, mul(sample, z))


def _location_scale_distribution(name: str, draw: Callable[..., Array]) -> Distribution:
    """`laplace`, `logistic`, `gumbel`: NumPy computes loc + scale * noise in one rounding
    each, with loc any number and scale non-negative."""
    return Distribution((Parameter("loc"), Parameter("scale")), "float64", draw, name,
                        checks=(non_negative("scale"),), partials=_location_scale(name))


DISTRIBUTIONS: dict[str, Distribution] = {
    "random": Distribution((), "float64", lambda g, size: g.random(size), "next_double"),
    "standard_normal": Distribution(
        (), "float64", lambda g, size: g.standard_normal(size), "standard_normal"
    ),
    "standard_exponential": Distribution(
        (), "float64", lambda g, size: g.standard_exponential(size), "standard_exponential"
    ),
    "standard_gamma": Distribution(
        (Parameter("shape"),), "float64", lambda g, shape, size: g.standard_gamma(shape, size),
        "standard_gamma",
    ),
    "beta": Distribution((Parameter("a"), Parameter("b")), "float64",
                         lambda g, a, b, size: g.beta(a, b, size), "beta"),
    "binomial": Distribution((Parameter("n", "int64"), Parameter("p")), "int64",
                             lambda g, n, p, size: g.binomial(n, p, size), "binomial"),
    "poisson": Distribution((Parameter("lam"),), "int64", lambda g, lam, size: g.poisson(lam, size),
                            "poisson"),
    "integers": Distribution(
        (Parameter("low", "int64"), Parameter("high", "int64")), "int64",
        lambda g, low, high, size: g.integers(low, high, size, dtype=np.int64), "integers",
    ),
    "permutation": Distribution((), "int64", lambda g, size: g.permutation(size[0]),
                                "permutation_into", layout="whole"),
    "dirichlet": Distribution((Parameter("alpha", rank=1),), "float64",
                              lambda g, alpha, size: g.dirichlet(alpha, size), "dirichlet_into",
                              layout="rows"),
    "lognormal": Distribution(
        (Parameter("mean"), Parameter("sigma")), "float64",
        lambda g, mean, sigma, size: g.lognormal(mean, sigma, size), "lognormal",
        checks=(non_negative("sigma"),), partials=_lognormal_partials,
    ),
    "laplace": _location_scale_distribution(
        "laplace", lambda g, loc, scale, size: g.laplace(loc, scale, size)),
    "logistic": _location_scale_distribution(
        "logistic", lambda g, loc, scale, size: g.logistic(loc, scale, size)),
    "gumbel": _location_scale_distribution(
        "gumbel", lambda g, loc, scale, size: g.gumbel(loc, scale, size)),
    "student_t": Distribution((Parameter("df"),), "float64",
                              lambda g, df, size: g.standard_t(df, size), "student_t",
                              checks=(positive("df"),)),
    "cauchy": Distribution((), "float64", lambda g, size: g.standard_cauchy(size), "cauchy"),
    "chisquare": Distribution((Parameter("df"),), "float64",
                              lambda g, df, size: g.chisquare(df, size), "chisquare",
                              checks=(positive("df"),)),
    "weibull": Distribution((Parameter("a"),), "float64", lambda g, a, size: g.weibull(a, size),
                            "weibull", checks=(non_negative("a"),)),
    "pareto": Distribution((Parameter("a"),), "float64", lambda g, a, size: g.pareto(a, size),
                           "pareto", checks=(positive("a"),)),
    "wald": Distribution((Parameter("mean"), Parameter("scale")), "float64",
                         lambda g, mean, scale, size: g.wald(mean, scale, size), "wald",
                         checks=(positive("mean"), positive("scale"))),
    "vonmises": Distribution((Parameter("mu"), Parameter("kappa")), "float64",
                             lambda g, mu, kappa, size: g.vonmises(mu, kappa, size), "vonmises",
                             checks=(non_negative("kappa"),)),
    "geometric": Distribution((Parameter("p"),), "int64", lambda g, p, size: g.geometric(p, size),
                              "geometric", checks=(probability("p"),)),
    "negative_binomial": Distribution(
        (Parameter("n"), Parameter("p")), "int64",
        lambda g, n, p, size: g.negative_binomial(n, p, size), "negative_binomial",
        checks=(
            Check("np.logical_not(np.isnan({n}))", "n must not be NaN"),
            positive("n"),
            probability("p"),
            Check(f"(1 - {{p}}) / {{p}} * ({{n}} + 10 * np.sqrt({{n}})) <= {_POISSON_LAM_MAX!r}",
                  "n too large or p too small, see Generator.negative_binomial Notes"),
        ),
    ),
    "hypergeometric": Distribution(
        (Parameter("ngood", "int64"), Parameter("nbad", "int64"), Parameter("nsample", "int64")),
        "int64", lambda g, good, bad, sample, size: g.hypergeometric(good, bad, sample, size),
        "hypergeometric",
        checks=(
            Check("{ngood} >= 0", "ngood < 0"),
            Check("{nbad} >= 0", "nbad < 0"),
            Check("{nsample} >= 0", "nsample < 0"),
            Check(f"({{ngood}} < {_HYPERGEOMETRIC_MAX}) & ({{nbad}} < {_HYPERGEOMETRIC_MAX})",
                  f"both ngood and nbad must be less than {_HYPERGEOMETRIC_MAX}"),
            Check("{ngood} + {nbad} >= {nsample}", "ngood + nbad < nsample"),
        ),
    ),
    "multinomial": Distribution(
        (Parameter("n", "int64"), Parameter("pvals", rank=1)), "int64",
        lambda g, n, pvals, size: g.multinomial(n, pvals, size), "multinomial_into",
        layout="rows",
        checks=(
            Check("{pvals}.shape[0] > 0", "pvals must have at least 1 dimension and the last "
                  "dimension of pvals must be greater than 0."),
            Check("np.all(({pvals} >= 0) & ({pvals} <= 1))",
                  "pvals < 0, pvals > 1 or pvals contains NaNs"),
            Check("np.sum({pvals}[:-1]) <= 1.0 + 1e-12", "sum(pvals[:-1]) > 1.0"),
            Check("{n} >= 0", "n < 0"),
        ),
    ),
}


# Kernel: numba_backend.random_draw._random_draw
@attrs.frozen(cache_hash=True)
class RandomDraw(Op):
    """(new state, sample) of `distribution` from (state, size, *parameters)."""

    distribution: str
    shape: StaticShape = attrs.field(converter=as_static_shape)

    def __attrs_post_init__(self) -> None:
        if self.distribution not in DISTRIBUTIONS:
            raise ValueError(f"RandomDraw: unknown distribution {self.distribution!r}")

    @property
    def spec(self) -> Distribution:
        return DISTRIBUTIONS[self.distribution]

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        spec = self.spec
        if len(input_types) != 2 + len(spec.parameters):
            raise TypeError(
                f"{self}: expected a state, a size and {len(spec.parameters)} parameters, "
                f"got {len(input_types)} inputs"
            )
        state, size, *parameters = input_types
        check_state(str(self), state)
        check_shape_input(self, size, len(self.shape))
        for declared, parameter in zip(spec.parameters, parameters):
            if parameter.dtype != declared.dtype:
                raise DTypeError(f"{self}: parameter {declared.name} must be {declared.dtype}, got {parameter}")
            allowed = (1,) if declared.rank == 1 else (0, len(self.shape))
            if parameter.ndim not in allowed:
                what = "a vector" if declared.rank == 1 else "a scalar or of the draw's shape"
                raise ShapeError(f"{self}: parameter {declared.name} must be {what}, got {parameter}")
        event = spec.event_parameter
        trailing = () if event is None else tuple(parameters[event].shape)
        return (STATE_TYPE, TensorType(spec.dtype, (*self.shape, *trailing)))

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        state, size, *parameters = inputs
        lengths = check_runtime_shape(self, size, self.shape)
        values = dict(zip(self.spec.names, parameters))
        for check in self.spec.checks:
            if not check.holds(values):
                raise ValueError(f"random.{self.distribution}: {check.message}")
        generator = generator_of(state)
        sample = np.asarray(self.spec.draw(generator, *parameters, lengths), dtype=self.spec.dtype)
        return (state_to_array(generator.bit_generator.state), sample)

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        cotangent = cotangents[1]
        if cotangent is None:
            return (None,) * len(inputs)
        gradients: list[Variable | None] = [None, None]
        for parameter, partial in zip(inputs[2:], self._partials(inputs, outputs[1])):
            if not parameter.dtype.startswith("float"):
                gradients.append(None)
                continue
            term = mul(cotangent, partial)
            gradients.append(reduce_sum(term) if parameter.ndim == 0 else term)
        return tuple(gradients)

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        flowing = [(k, t) for k, t in enumerate(tangents[2:]) if t is not None]
        if not flowing:
            return (None, None)
        partials = self._partials(inputs, outputs[1])
        terms = [mul(partials[k], tangent) for k, tangent in flowing]
        total = terms[0]
        for term in terms[1:]:
            total = add(total, term)
        return (None, total)

    def _partials(self, inputs: tuple[Variable, ...], sample: Variable) -> tuple[Variable, ...]:
        """The sample's derivative in each parameter; for draws without a
        reparameterization (not smooth functions of their float parameters), an error
        instead of a silent zero."""
        partials = self.spec.partials
        if partials is None:
            if any(p.dtype.startswith("float") for p in inputs[2:]):
                raise NotImplementedError(
                    f"random {self.distribution} draws are not differentiable in their parameters "
                    f"({', '.join(self.spec.names)}); only normal, uniform, multivariate_normal, "
                    "lognormal, laplace, logistic, gumbel, cauchy and student_t (in loc and scale) "
                    "and the scale of gamma and exponential are"
                )
            return tuple(as_tensor(np.float64(0.0)) for _ in inputs[2:])
        return partials(self, inputs, sample)


def check_state(what: str, state: TensorType) -> None:
    """TypeError naming `what` unless `state` is the type of a generator state."""
    if state != STATE_TYPE:
        raise TypeError(
            f"{what}: expected a generator state ({STATE_TYPE}, from pt.random.state or a "
            f"draw), got {state}"
        )
