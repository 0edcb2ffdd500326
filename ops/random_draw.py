"""`RandomDraw`: one draw from a generator state, as an op with the state as an input
and the advanced state as an output, so that random numbers are values like any other.

A state is a uint64 vector of length 6 holding NumPy's PCG64 state
(`[state >> 64, state & mask, inc >> 64, inc & mask, has_uint32, uinteger]`): the
reference `perform` turns it into a `numpy.random.Generator`, draws with NumPy and reads
the new state back, so a graph gives NumPy's own numbers. The same state value always
gives the same numbers; nothing is updated in place.

The op draws only what NumPy's generator draws natively (`DISTRIBUTIONS`); the user
functions in `ops.random` build the rest from these (normal = loc + scale * standard
normal, as NumPy computes it, and so on), which also makes those differentiable in their
parameters. A draw's parameters arrive already broadcast to the output shape (or as
scalars), and the output shape comes from an int64 size vector input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypedDict

import attrs
import numpy as np

from fgraph import DTypeError, Op, ShapeError, TensorType, Variable
from fgraph.op import Array
from fgraph.types import Shape as StaticShape
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
class Distribution:
    """What NumPy draws natively: parameter names and the dtypes they are converted to,
    the sample dtype, how many trailing axes the first parameter adds to each sample
    (`dirichlet`'s categories), and NumPy's call."""

    parameters: tuple[str, ...]
    parameter_dtypes: tuple[str, ...]
    dtype: str
    draw: Callable[..., Array]
    event_rank: int = 0


DISTRIBUTIONS: dict[str, Distribution] = {
    "random": Distribution((), (), "float64", lambda g, size: g.random(size)),
    "standard_normal": Distribution((), (), "float64", lambda g, size: g.standard_normal(size)),
    "standard_exponential": Distribution(
        (), (), "float64", lambda g, size: g.standard_exponential(size)
    ),
    "standard_gamma": Distribution(
        ("shape",), ("float64",), "float64", lambda g, shape, size: g.standard_gamma(shape, size)
    ),
    "beta": Distribution(("a", "b"), ("float64", "float64"), "float64",
                         lambda g, a, b, size: g.beta(a, b, size)),
    "binomial": Distribution(("n", "p"), ("int64", "float64"), "int64",
                             lambda g, n, p, size: g.binomial(n, p, size)),
    "poisson": Distribution(("lam",), ("float64",), "int64", lambda g, lam, size: g.poisson(lam, size)),
    "integers": Distribution(("low", "high"), ("int64", "int64"), "int64",
                             lambda g, low, high, size: g.integers(low, high, size, dtype=np.int64)),
    "permutation": Distribution((), (), "int64", lambda g, size: g.permutation(size[0])),
    "dirichlet": Distribution(("alpha",), ("float64",), "float64",
                              lambda g, alpha, size: g.dirichlet(alpha, size), event_rank=1),
}


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
        for name, dtype, parameter in zip(spec.parameters, spec.parameter_dtypes, parameters):
            if parameter.dtype != dtype:
                raise DTypeError(f"{self}: parameter {name} must be {dtype}, got {parameter}")
            if spec.event_rank == 0 and parameter.ndim not in (0, len(self.shape)):
                raise ShapeError(
                    f"{self}: parameter {name} must be a scalar or of the draw's shape, got {parameter}"
                )
        event = tuple(parameters[0].shape[-spec.event_rank:]) if spec.event_rank else ()
        return (STATE_TYPE, TensorType(spec.dtype, (*self.shape, *event)))

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        state, size, *parameters = inputs
        lengths = check_runtime_shape(self, size, self.shape)
        generator = generator_of(state)
        sample = np.asarray(self.spec.draw(generator, *parameters, lengths), dtype=self.spec.dtype)
        return (state_to_array(generator.bit_generator.state), sample)

    def pullback(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        self._refuse_parameter_derivative(inputs, cotangents[1] is not None)
        return (None,) * len(inputs)

    def pushforward(
        self, inputs: tuple[Variable, ...], outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        self._refuse_parameter_derivative(inputs, any(t is not None for t in tangents[2:]))
        return (None, None)

    def _refuse_parameter_derivative(self, inputs: tuple[Variable, ...], flows: bool) -> None:
        """Samples of these draws are not smooth functions of their float parameters
        (no reparameterization): say so instead of returning a silent zero."""
        if flows and any(p.dtype.startswith("float") for p in inputs[2:]):
            raise NotImplementedError(
                f"random {self.distribution} draws are not differentiable in their parameters "
                f"({', '.join(self.spec.parameters)}); only normal, uniform and "
                "multivariate_normal draws (built from standard draws) are"
            )


def check_state(what: str, state: TensorType) -> None:
    """TypeError naming `what` unless `state` is the type of a generator state."""
    if state != STATE_TYPE:
        raise TypeError(
            f"{what}: expected a generator state ({STATE_TYPE}, from pt.random.state or a "
            f"draw), got {state}"
        )
