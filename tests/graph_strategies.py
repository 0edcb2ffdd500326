"""Hypothesis strategies for random, valid, typed graphs with concrete input values.

Property tests (rewrites preserve values; the numba backend matches the evaluator) need
graphs that are valid by construction and numerically tame, so that a mismatch means a
bug rather than an ill-conditioned example. Every generated term therefore carries an
`Interval` enclosing all its values: domain-restricted ops (log, sqrt, division) only
read terms bounded away from trouble (others are first mapped through `x * x + 1` or
`exp(tanh(x))`), and a step whose result could exceed `MAGNITUDE_CAP` is dropped, which
keeps reassociated float math within tight tolerances.

Shapes are all static, so broadcasting happens only along static-1 axes, as `Elemwise`
requires. Discontinuous ops (comparisons in `where`, `floor`, `sign`) only read *exact*
terms, whose values do not depend on rounding, so a rewrite that legitimately reorders
float math cannot flip them.

Steps come in kinds (`STEP_GROUPS`), picked evenly; besides single ops there are motifs,
small patterns that rewrite rules look for, embedded in random surroundings. Use
`graphs(...)` in `@given` (it draws a `GeneratedGraph`: the graph, input values and a
bound per output), `assert_outputs_close` to compare results, and `scaled_examples` for
a test's share of the hypothesis profile; `OP_NAMES` lists the steps a test may restrict
the vocabulary to.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Literal

import attrs
import numpy as np
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from hypothesis.vendor.pretty import RepresentationPrinter

import ops as pt
from fgraph import Graph, TensorType, Variable, dprint, toposort
from fgraph.op import Array

MAGNITUDE_CAP = 1e3
"""No generated value exceeds this in absolute value (by interval arithmetic)."""

INPUT_BOUND = 2.0
"""Inputs and array constants are drawn from [-INPUT_BOUND, INPUT_BOUND]."""

POSITIVE_FLOOR = 0.1
"""Domain-restricted ops read only terms >= this (log, sqrt, reciprocal, denominators)."""

SCALARS = (0.0, 1.0, -1.0, 2.0, 0.5, -3.0)
"""Python-scalar operands: 0, 1 and -1 trigger the algebraic simplifications."""

EXPONENTS = (0.0, 1.0, 2.0, 3.0, -1.0, 0.5, -0.5, 1.5)

MAX_RANK = 4
MAX_LENGTH = 4


@attrs.frozen
class Interval:
    """A closed range holding every value of a term."""

    lo: float
    hi: float

    @staticmethod
    def hull(*points: float) -> Interval:
        return Interval(min(points), max(points))

    @property
    def magnitude(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    def straddles_zero(self) -> bool:
        return self.lo < 0.0 < self.hi


@attrs.frozen(eq=False)
class Term:
    """A generated variable with an enclosure of its values. `exact` terms are inputs,
    constants and rounding-free functions of them (moves, neg, abs, max, where)."""

    variable: Variable
    interval: Interval
    exact: bool

    @property
    def shape(self) -> tuple[int, ...]:
        return static_shape(self.variable.type)


Operand = Term | float
"""A term, or a Python float used as a weak scalar operand."""


def static_shape(tensor_type: TensorType) -> tuple[int, ...]:
    """The shape of a generated variable (every length is static by construction)."""
    lengths = tuple(length for length in tensor_type.shape if length is not None)
    assert len(lengths) == tensor_type.ndim, f"generated type {tensor_type} is not static"
    return lengths


def _interval_of(operand: Operand) -> Interval:
    return operand.interval if isinstance(operand, Term) else Interval(operand, operand)


def _value_of(operand: Operand) -> Variable | float:
    return operand.variable if isinstance(operand, Term) else operand


def _is_exact(operand: Operand) -> bool:
    return operand.exact if isinstance(operand, Term) else True


# --- unary ops -------------------------------------------------------------------------
@attrs.frozen
class Unary:
    """An elementwise unary op, the image of an interval under it, and what its operand
    must satisfy: "any", "positive" (>= POSITIVE_FLOOR), "small" (|x| <= 3) or "exact"."""

    apply: Callable[[Variable], Variable]
    image: Callable[[Interval], Interval]
    needs: Literal["any", "positive", "small", "exact"]
    keeps_exact: bool = False


def _increasing(function: Callable[[float], float]) -> Callable[[Interval], Interval]:
    return lambda interval: Interval(function(interval.lo), function(interval.hi))


def _abs_image(interval: Interval) -> Interval:
    low = 0.0 if interval.straddles_zero() else min(abs(interval.lo), abs(interval.hi))
    return Interval(low, interval.magnitude)


def _square_image(interval: Interval) -> Interval:
    bounds = _abs_image(interval)
    return Interval(bounds.lo**2, bounds.hi**2)


def _cosh_image(interval: Interval) -> Interval:
    bounds = _abs_image(interval)
    return Interval(math.cosh(bounds.lo), math.cosh(bounds.hi))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _softplus(x: float) -> float:
    return math.log1p(math.exp(x))


def _unit(interval: Interval) -> Interval:
    return Interval(-1.0, 1.0)


UNARY: Mapping[str, Unary] = MappingProxyType(
    {
        "neg": Unary(pt.neg, lambda i: Interval(-i.hi, -i.lo), "any", keeps_exact=True),
        "abs": Unary(pt.abs, _abs_image, "any", keeps_exact=True),
        "square": Unary(pt.square, _square_image, "any"),
        "exp": Unary(pt.exp, _increasing(math.exp), "small"),
        "expm1": Unary(pt.expm1, _increasing(math.expm1), "small"),
        "sinh": Unary(pt.sinh, _increasing(math.sinh), "small"),
        "cosh": Unary(pt.cosh, _cosh_image, "small"),
        "log": Unary(pt.log, _increasing(math.log), "positive"),
        "log1p": Unary(pt.log1p, _increasing(math.log1p), "positive"),
        "sqrt": Unary(pt.sqrt, _increasing(math.sqrt), "positive"),
        "reciprocal": Unary(pt.reciprocal, lambda i: Interval(1 / i.hi, 1 / i.lo), "positive"),
        "tanh": Unary(pt.tanh, _increasing(math.tanh), "any"),
        "sigmoid": Unary(pt.sigmoid, _increasing(_sigmoid), "small"),
        "softplus": Unary(pt.softplus, _increasing(_softplus), "small"),
        "arctan": Unary(pt.arctan, _increasing(math.atan), "any"),
        "erf": Unary(pt.erf, _increasing(math.erf), "any"),
        "sin": Unary(pt.sin, _unit, "any"),
        "cos": Unary(pt.cos, _unit, "any"),
        "floor": Unary(pt.floor, _increasing(math.floor), "exact", keeps_exact=True),
        "sign": Unary(pt.sign, _unit, "exact", keeps_exact=True),
    }
)

BINARY_NAMES = (
    "add", "sub", "mul", "true_div", "maximum", "minimum", "pow", "where", "clip", "fill", "cast"
)
REDUCTION_NAMES = ("sum", "max", "mean", "softmax", "log_softmax", "logsumexp")
STRUCTURE_NAMES = (
    "transpose", "expand_dims", "squeeze", "reshape", "flatten", "slice", "take", "matmul",
    "set_subtensor", "inc_subtensor",
)
MOTIF_NAMES = (
    "log_sigmoid", "log_one_minus_sigmoid", "log_sum_exp", "log_of_softmax", "exp_minus_one",
    "double_cast", "slice_of_slice", "slice_of_elemwise", "slice_of_update", "update_twice",
    "broadcast_like", "alloc_like", "reshape_like",
)
"""Compound steps: small patterns that rewrite rules look for (and random steps rarely
build), embedded in random surroundings."""

STEP_GROUPS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "unary": tuple(UNARY),
        "binary": BINARY_NAMES,
        "reduction": REDUCTION_NAMES,
        "structure": STRUCTURE_NAMES,
        "motif": MOTIF_NAMES,
    }
)
"""Steps by kind: a step first picks a kind, so the many unary ops do not crowd out the
rest."""

OP_NAMES: frozenset[str] = frozenset(name for names in STEP_GROUPS.values() for name in names)
"""Every step `graphs` can take; pass a subset as `vocabulary` to restrict it."""


# --- the generated example -------------------------------------------------------------
@attrs.frozen(eq=False, repr=False)
class GeneratedGraph:
    """A graph, a value for each of its inputs, and a magnitude bound for each output."""

    graph: Graph
    values: tuple[Array, ...]
    bounds: tuple[float, ...]

    @property
    def feed(self) -> dict[Variable, Array]:
        """Input values keyed by input, as `fgraph.evaluate` takes them."""
        return dict(zip(self.graph.inputs, self.values))

    def __repr__(self) -> str:
        """The printed graph and the input values: what a failing example shows."""
        lines = [dprint(self.graph, file=None).rstrip()]
        for variable, value in zip(self.graph.inputs, self.values):
            lines.append(f"{variable!r} = np.{np.array_repr(value, precision=17)}")
        return "\n".join(lines)

    def _repr_pretty_(self, printer: RepresentationPrinter, cycle: bool) -> None:
        """Hypothesis reports examples through this: show `__repr__`, not the attrs tree."""
        printer.text(repr(self))


def tolerances(output: Variable, bound: float) -> tuple[float, float]:
    """(rtol, atol) for comparing reassociated float math of values up to `bound`: those
    of float32 if any value `output` is computed from is float32 (a float64 result of a
    float32 computation carries float32 rounding), else of float64."""
    scale = max(1.0, bound)
    values = [output, *(variable for node in toposort([output]) for variable in node.inputs)]
    if any(variable.dtype == "float32" for variable in values):
        return 1e-4, 1e-5 * scale
    return 1e-6, 1e-8 * scale


def assert_outputs_close(
    actual: Sequence[Array], expected: Sequence[Array], example: GeneratedGraph
) -> None:
    """Each actual output has the expected dtype and shape and is close to the expected."""
    assert len(actual) == len(expected)
    checks = zip(actual, expected, example.graph.outputs, example.bounds)
    for number, (got, want, output, bound) in enumerate(checks):
        assert got.dtype == want.dtype, f"output {number}: dtype {got.dtype} != {want.dtype}"
        assert got.shape == want.shape, f"output {number}: shape {got.shape} != {want.shape}"
        rtol, atol = tolerances(output, bound)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"output {number}")


def scaled_examples(share: float, ci_share: float | None = None) -> int:
    """`share` of the active profile's `max_examples` (at least 1): property tests of
    different cost take different shares of one budget, which `--hypothesis-profile`
    scales as a whole. `ci_share`, for the most expensive tests: their share under the
    default "ci" profile instead, so CI runs fewer of their examples while "long" (and
    any other profile) still takes `share`."""
    active = settings.default
    base = 100 if active is None else active.max_examples
    if ci_share is not None and active is settings.get_profile("ci"):
        share = ci_share
    return max(1, round(base * share))


# --- the generator ---------------------------------------------------------------------
class _Builder:
    """Mutable state of one draw: the pool of terms built so far and the inputs."""

    def __init__(self, draw: st.DrawFn, dtypes: tuple[str, ...]) -> None:
        self.draw = draw
        self.dtypes = dtypes
        self.inputs: list[Variable] = []
        self.values: list[Array] = []
        self.pool: list[Term] = []

    # Sources ----------------------------------------------------------------------------
    def fresh_input(self, shape: tuple[int, ...]) -> Term:
        dtype = self.draw(st.sampled_from(self.dtypes))
        variable = pt.tensor(f"x{len(self.inputs)}", shape=shape, dtype=dtype)
        self.inputs.append(variable)
        self.values.append(self.draw(_arrays(dtype, shape)))
        term = Term(variable, Interval(-INPUT_BOUND, INPUT_BOUND), exact=True)
        self.pool.append(term)
        return term

    def fresh_constant(self, shape: tuple[int, ...], dtype: str) -> Term:
        value = self.draw(_arrays(dtype, shape))
        interval = Interval.hull(*value.ravel().tolist()) if value.size else Interval(0, 0)
        return Term(pt.constant(value), interval, exact=True)

    def random_shape(self) -> tuple[int, ...]:
        rank = self.draw(st.integers(0, 3))
        return tuple(self.draw(st.integers(1, MAX_LENGTH)) for _ in range(rank))

    def pick(self, accept: Callable[[Term], bool] = lambda term: True) -> Term | None:
        """A pool term satisfying `accept`; the newest first, so shrinking gives chains."""
        candidates = [term for term in reversed(self.pool) if accept(term)]
        return self.draw(st.sampled_from(candidates)) if candidates else None

    def partner(self, term: Term, expand: bool = True) -> Operand:
        """A second operand broadcasting against `term` (unless `expand`, without making
        the result larger): itself, a pool term, a fresh input or constant, or a Python
        scalar."""
        kind = self.draw(st.sampled_from(("self", "pool", "fresh", "constant", "scalar")))
        if kind == "self":
            return term
        if kind == "scalar":
            return self.draw(st.sampled_from(SCALARS))
        if kind == "pool":
            found = self.pick(lambda other: _broadcastable(term.shape, other.shape, expand))
            if found is not None:
                return found
        shape = self.compatible_shape(term.shape, expand)
        if kind == "constant":
            return self.fresh_constant(shape, term.variable.dtype)
        return self.fresh_input(shape)

    def compatible_shape(self, shape: tuple[int, ...], expand: bool = True) -> tuple[int, ...]:
        """A shape broadcasting against `shape`: trailing axes, some of them length 1, and
        (if `expand`) any length where `shape` has 1."""
        rank = self.draw(st.integers(0, len(shape)))
        lengths = []
        for length in shape[len(shape) - rank :]:
            if length == 1 and expand:
                lengths.append(self.draw(st.integers(1, MAX_LENGTH)))
            else:
                lengths.append(self.draw(st.sampled_from((length, 1))))
        return tuple(lengths)

    # Domain adaptation -------------------------------------------------------------------
    def positive(self, term: Term) -> Term:
        """`term` if it is >= POSITIVE_FLOOR, else `term * term + 1` or `exp(tanh(term))`."""
        if term.interval.lo >= POSITIVE_FLOOR:
            return term
        if term.interval.magnitude <= 30:
            return _binary_term(pt.add, _squared(term), 1.0, _add_image)
        return self.unary("exp", self.unary("tanh", term))

    def small(self, term: Term) -> Term:
        return term if term.interval.magnitude <= 3 else self.unary("tanh", term)

    def unary(self, name: str, term: Term) -> Term:
        op = UNARY[name]
        if op.needs == "positive":
            term = self.positive(term)
        elif op.needs == "small":
            term = self.small(term)
        return Term(op.apply(term.variable), op.image(term.interval), op.keeps_exact and term.exact)

    # Steps ------------------------------------------------------------------------------
    def step(self, name: str) -> Term | None:
        """Apply op `name` to pool terms; None when no term fits or the result is too big."""
        if name in UNARY:
            need_exact = UNARY[name].needs == "exact"
            operand = self.pick(lambda term: term.exact or not need_exact)
            return None if operand is None else self.unary(name, operand)
        newest = self.pick()
        assert newest is not None, "the pool starts with an input"
        if name in BINARY_NAMES:
            return self.binary(name, newest)
        if name in REDUCTION_NAMES:
            return self.reduce(name, newest)
        if name in MOTIF_NAMES:
            return self.motif(name, newest)
        ranked = self.pick(lambda term: 1 <= term.variable.ndim < MAX_RANK)
        if ranked is None:
            return None
        return self.structure(name, ranked)

    def binary(self, name: str, term: Term) -> Term | None:
        if name == "where":
            return self.where(term)
        if name == "clip":
            bounds = st.lists(st.sampled_from(SCALARS), min_size=2, max_size=2)
            low, high = sorted(self.draw(bounds))
            lo, hi = term.interval.lo, term.interval.hi
            image = Interval(min(max(lo, low), high), max(min(hi, high), low))
            return Term(pt.clip(term.variable, low, high), image, term.exact)
        if name == "pow":
            return self.power(term)
        if name == "cast":
            return _cast(term)
        if name == "fill":
            value = self.partner(term)
            filled = pt.second(term.variable, _value_of(value))
            return Term(filled, _interval_of(value), _is_exact(value))
        other = self.partner(term)
        left, right = (other, term) if self.draw(st.booleans()) else (term, other)
        if name == "true_div":
            if isinstance(right, Term):
                same = left is right
                right = self.positive(right)
                left = right if same else left
            elif abs(right) < POSITIVE_FLOOR:
                right = 2.0
            lo, hi = _interval_of(right).lo, _interval_of(right).hi
            inverse = Interval.hull(1 / lo, 1 / hi)
            return _binary_term(pt.true_div, left, right, lambda a, b: _mul_image(a, inverse))
        if name == "add":
            return _binary_term(pt.add, left, right, _add_image)
        if name == "sub":
            return _binary_term(pt.sub, left, right, _sub_image)
        if name == "mul":
            if left is right:
                return _squared(term)
            return _binary_term(pt.mul, left, right, _mul_image)
        exact = _is_exact(left) and _is_exact(right)
        if name == "maximum":
            return _binary_term(pt.maximum, left, right, _maximum_image, exact)
        return _binary_term(pt.minimum, left, right, _minimum_image, exact)

    def power(self, base: Term) -> Term:
        exponent = self.draw(st.sampled_from(EXPONENTS))
        if not (exponent.is_integer() and exponent >= 0):
            base = self.positive(base)
        elif exponent > 2:
            base = self.small(base)
        corners = [base.interval.lo**exponent, base.interval.hi**exponent]
        if base.interval.straddles_zero():
            corners.append(0.0)
        return Term(pt.pow(base.variable, exponent), Interval.hull(*corners), False)

    def where(self, term: Term) -> Term:
        other = self.partner(term)
        shape = term.shape if isinstance(other, float) else _broadcast(term.shape, other.shape)
        source = self.pick(lambda found: found.exact and _broadcastable(shape, found.shape, False))
        if source is None:
            source = self.fresh_input(self.compatible_shape(shape, expand=False))
        condition = pt.gt(source.variable, self.draw(st.sampled_from(SCALARS)))
        image = Interval.hull(*_corners(term.interval), *_corners(_interval_of(other)))
        variable = pt.where(condition, term.variable, _value_of(other))
        return Term(variable, image, term.exact and _is_exact(other))

    def motif(self, name: str, term: Term) -> Term | None:
        """Compound step `name` (see `MOTIF_NAMES`) on `term`. Operands of naive formulas
        that a stabilizing rewrite may replace stay small, where the naive form is
        accurate."""
        small = self.small(term)
        if name == "log_sigmoid":
            return _log(self.unary("sigmoid", small))
        if name == "log_one_minus_sigmoid":
            return _log(_binary_term(pt.sub, 1.0, self.unary("sigmoid", small), _sub_image))
        if name == "log_sum_exp":
            return _log(self.reduce("sum", self.unary("exp", small)))
        if name == "log_of_softmax":
            return _log(self.reduce("softmax", small))
        if name == "exp_minus_one":
            return _binary_term(pt.sub, self.unary("exp", small), 1.0, _sub_image)
        if name == "double_cast":
            return _cast(_cast(term))
        if name in ("broadcast_like", "alloc_like", "reshape_like"):
            return self.shaped_like(name, term)
        if term.variable.ndim == 0 or term.variable.ndim == MAX_RANK:
            return None
        if name == "slice_of_slice":
            inner = self.sliced(term)
            return self.sliced(inner) if inner.variable.ndim else None
        if name == "slice_of_elemwise":
            combined = self.binary(self.draw(st.sampled_from(("add", "mul", "maximum"))), term)
            return None if combined is None else self.sliced(combined)
        updated = self.update(self.draw(st.sampled_from(("set_subtensor", "inc_subtensor"))), term)
        if name == "slice_of_update":
            return self.sliced(updated)
        return self.update(self.draw(st.sampled_from(("set_subtensor", "inc_subtensor"))), updated)

    def shaped_like(self, name: str, term: Term) -> Term:
        """A result whose shape is given as `shape(...)` of a variable (shape rules)."""
        if name == "reshape_like":
            target = pt.reshape(term.variable, self.reshaped(term.shape))
            return Term(pt.reshape(term.variable, pt.shape(target)), term.interval, term.exact)
        value = self.partner(term, expand=False)
        if name == "alloc_like":
            filled = pt.alloc(_value_of(value), pt.shape(term.variable))
            return Term(filled, _interval_of(value), _is_exact(value))
        stretched = pt.broadcast_to(_value_of(value), pt.shape(term.variable))
        return Term(stretched, _interval_of(value), _is_exact(value))

    def reduce(self, name: str, term: Term) -> Term:
        ndim = term.variable.ndim
        axes: tuple[int, ...] | None = None
        if ndim and self.draw(st.booleans()):
            axes = tuple(self.draw(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)))
        keepdims = self.draw(st.booleans())
        if name in ("softmax", "log_softmax", "logsumexp"):
            return self.normalize(name, term, axes, keepdims)
        if name == "max":
            return Term(pt.max(term.variable, axes, keepdims), term.interval, term.exact)
        if name == "mean":
            return Term(pt.mean(term.variable, axes, keepdims), term.interval, False)
        count = _reduced_count(term.shape, axes)
        image = Interval(count * term.interval.lo, count * term.interval.hi)
        return Term(pt.sum(term.variable, axes, keepdims), image, False)

    def normalize(
        self, name: str, term: Term, axes: tuple[int, ...] | None, keepdims: bool
    ) -> Term:
        """softmax, log_softmax or logsumexp of `term` over `axes` (non-empty unless the
        rank is 0)."""
        if axes == () and term.variable.ndim:
            axes = None
        count = _reduced_count(term.shape, axes)
        spread = term.interval.hi - term.interval.lo + math.log(count)
        if name == "softmax":
            image = Interval(math.exp(term.interval.lo - term.interval.hi) / count, 1.0)
            return Term(pt.softmax(term.variable, axes), image, False)
        if name == "log_softmax":
            return Term(pt.log_softmax(term.variable, axes), Interval(-spread, 0.0), False)
        image = Interval(term.interval.lo, term.interval.hi + math.log(count))
        return Term(pt.logsumexp(term.variable, axes, keepdims), image, False)

    def structure(self, name: str, term: Term) -> Term | None:
        """A shape or indexing step on `term` (1 <= rank < MAX_RANK); values keep their
        interval and exactness, except for `matmul`."""
        variable, shape = term.variable, term.shape
        moved: Variable
        if name == "transpose":
            moved = pt.transpose(variable, self.draw(st.permutations(range(len(shape)))))
        elif name == "squeeze":
            ones = [axis for axis, length in enumerate(shape) if length == 1]
            if not ones:
                return None
            moved = pt.squeeze(variable, self.draw(st.lists(st.sampled_from(ones), unique=True)))
        elif name == "expand_dims":
            moved = pt.expand_dims(variable, self.draw(st.integers(-len(shape) - 1, len(shape))))
        elif name == "reshape":
            moved = pt.reshape(variable, self.reshaped(shape))
        elif name == "flatten":
            moved = pt.flatten(variable, self.draw(st.integers(1, len(shape))))
        elif name == "slice":
            return self.sliced(term)
        elif name == "take":
            axis = self.draw(st.integers(0, len(shape) - 1))
            length = shape[axis]
            indices = self.draw(st.lists(st.integers(-length, length - 1), min_size=1, max_size=4))
            moved = variable[(slice(None),) * axis + (np.array(indices),)]
        elif name == "matmul":
            return self.matmul(term)
        else:
            return self.update(name, term)
        return Term(moved, term.interval, term.exact)

    def sliced(self, term: Term) -> Term:
        """Basic indexing of `term` (rank >= 1) on its leading axes."""
        count = self.draw(st.integers(1, term.variable.ndim))
        index = tuple(self.slice_entry(length) for length in term.shape[:count])
        return Term(term.variable[index], term.interval, term.exact)

    def update(self, name: str, term: Term) -> Term:
        """`set_subtensor` or `inc_subtensor` of a basic or integer-array index of `term`;
        integer arrays hold distinct indices (repeats make `set` order-dependent)."""
        variable, shape = term.variable, term.shape
        index: tuple[slice | int | Array, ...]
        if self.draw(st.booleans()):
            count = self.draw(st.integers(1, len(shape)))
            index = tuple(self.slice_entry(length) for length in shape[:count])
        else:
            axis = self.draw(st.integers(0, len(shape) - 1))
            length = shape[axis]
            whole = st.integers(0, length - 1)
            positions = st.lists(whole, min_size=1, max_size=length, unique=True)
            offsets = st.sampled_from((0, -length))  # the same position, counted from the end
            indices = [position + self.draw(offsets) for position in self.draw(positions)]
            index = (slice(None),) * axis + (np.array(indices),)
        region = Term(variable[index], term.interval, term.exact)
        value = self.partner(region, expand=False)
        if isinstance(value, Term) and value.variable.dtype != variable.dtype:
            value = Term(pt.cast(value.variable, variable.dtype), value.interval, value.exact)
        if name == "set_subtensor":
            image = Interval.hull(*_corners(term.interval), *_corners(_interval_of(value)))
            updated = pt.set_subtensor(region.variable, _value_of(value))
            return Term(updated, image, term.exact and _is_exact(value))
        image = _add_image(term.interval, _interval_of(value))
        image = Interval.hull(*_corners(image), *_corners(term.interval))
        return Term(pt.inc_subtensor(region.variable, _value_of(value)), image, False)

    def reshaped(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """A random shape of the same size, sometimes with one length given as -1."""
        factors = _prime_factors(math.prod(shape))
        rank = self.draw(st.integers(1 if factors else 0, 3))
        lengths = [1] * rank
        for factor in factors:
            lengths[self.draw(st.integers(0, rank - 1))] *= factor
        if rank and self.draw(st.booleans()):
            lengths[self.draw(st.integers(0, rank - 1))] = -1
        return tuple(lengths)

    def slice_entry(self, length: int) -> slice | int:
        """An in-bounds integer or a non-empty slice (any step sign, bounds may overhang)."""
        kind = self.draw(st.sampled_from(("full", "int", "slice")))
        if kind == "full":
            return slice(None)
        if kind == "int":
            return self.draw(st.integers(-length, length - 1))
        bound = st.none() | st.integers(-length - 1, length + 1)
        step = self.draw(st.sampled_from((1, 2, -1, -2)))
        entry = slice(self.draw(bound), self.draw(bound), step)
        return entry if len(range(*entry.indices(length))) else slice(None, None, step)

    def matmul(self, term: Term) -> Term | None:
        shape = term.shape
        depth = shape[-1]
        if self.draw(st.booleans()) and len(shape) <= 2:
            wanted: tuple[int, ...] = (depth,)
        else:
            wanted = (*shape[:-2], depth, self.draw(st.integers(1, MAX_LENGTH)))
        found = self.pick(lambda other: other.shape == wanted)
        other = self.fresh_input(wanted) if found is None else found
        products = _mul_image(term.interval, other.interval)
        image = Interval(depth * products.lo, depth * products.hi)
        return Term(pt.matmul(term.variable, other.variable), image, False)


def _binary_term(
    apply: Callable[[Variable | float, Variable | float], Variable],
    left: Operand,
    right: Operand,
    image: Callable[[Interval, Interval], Interval],
    exact: bool = False,
) -> Term:
    variable = apply(_value_of(left), _value_of(right))
    return Term(variable, image(_interval_of(left), _interval_of(right)), exact)


def _log(term: Term) -> Term:
    """`log(term)` of a term known to be positive (however small: log is well-conditioned
    in relative terms), keeping the pattern a stabilizing rule looks for."""
    assert term.interval.lo > 0, f"log of {term.interval}"
    image = Interval(math.log(term.interval.lo), math.log(term.interval.hi))
    return Term(pt.log(term.variable), image, False)


def _cast(term: Term) -> Term:
    """`term` cast to the other float dtype (float32 <-> float64)."""
    dtype = "float32" if term.variable.dtype == "float64" else "float64"
    return Term(pt.cast(term.variable, dtype), term.interval, term.exact)


def _reduced_count(shape: tuple[int, ...], axes: tuple[int, ...] | None) -> int:
    """How many elements a reduction over `axes` (None: all) combines into one."""
    return math.prod(shape[axis] for axis in (range(len(shape)) if axes is None else axes))


def _squared(term: Term) -> Term:
    """`term * term`, whose image is never negative (unlike a product of two intervals)."""
    return Term(pt.mul(term.variable, term.variable), _square_image(term.interval), False)


def _corners(interval: Interval) -> tuple[float, float]:
    return (interval.lo, interval.hi)


def _add_image(a: Interval, b: Interval) -> Interval:
    return Interval(a.lo + b.lo, a.hi + b.hi)


def _sub_image(a: Interval, b: Interval) -> Interval:
    return Interval(a.lo - b.hi, a.hi - b.lo)


def _mul_image(a: Interval, b: Interval) -> Interval:
    return Interval.hull(*(x * y for x in _corners(a) for y in _corners(b)))


def _maximum_image(a: Interval, b: Interval) -> Interval:
    return Interval(max(a.lo, b.lo), max(a.hi, b.hi))


def _minimum_image(a: Interval, b: Interval) -> Interval:
    return Interval(min(a.lo, b.lo), min(a.hi, b.hi))


def _broadcastable(shape: tuple[int, ...], other: tuple[int, ...], expand: bool = True) -> bool:
    """Whether `other` broadcasts against `shape` with static-1 rules (after left-padding
    ranks); unless `expand`, without making the result larger than `shape`."""
    if len(other) > (MAX_RANK if expand else len(shape)):
        return False
    pairs = zip(reversed(shape), reversed(other))
    return all(a == b or b == 1 or (a == 1 and expand) for a, b in pairs)


def _broadcast(shape: tuple[int, ...], other: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of an elementwise result of operands of broadcastable shapes."""
    rank = max(len(shape), len(other))
    padded = [(1,) * (rank - len(s)) + s for s in (shape, other)]
    return tuple(max(a, b) for a, b in zip(*padded))


def _prime_factors(number: int) -> list[int]:
    factors = []
    divisor = 2
    while number > 1:
        while number % divisor == 0:
            factors.append(divisor)
            number //= divisor
        divisor += 1
    return factors


def _arrays(dtype: str, shape: tuple[int, ...]) -> st.SearchStrategy[Array]:
    width: Literal[32, 64] = 32 if dtype == "float32" else 64
    elements = st.floats(-INPUT_BOUND, INPUT_BOUND, width=width, allow_subnormal=False)
    return hnp.arrays(np.dtype(dtype), shape, elements=elements)


@st.composite
def graphs(
    draw: st.DrawFn,
    vocabulary: frozenset[str] = OP_NAMES,
    max_steps: int = 6,
    dtypes: tuple[str, ...] = ("float64", "float64", "float32"),
) -> GeneratedGraph:
    """A random valid graph over fresh inputs with static shapes, built by up to
    `max_steps` steps drawn from `vocabulary`, with values for its inputs. Its outputs
    are the computed terms no other term reads, so every step shows in the graph."""
    builder = _Builder(draw, dtypes)
    builder.fresh_input(builder.random_shape())
    kinds = [sorted(vocabulary.intersection(names)) for names in STEP_GROUPS.values()]
    step = st.one_of(*(st.sampled_from(names) for names in kinds if names))
    steps = st.lists(step, min_size=2, max_size=max_steps)
    computed: list[Term] = []
    for name in draw(steps):
        term = builder.step(name)
        if term is not None and term.interval.magnitude <= MAGNITUDE_CAP:
            builder.pool.append(term)
            computed.append(term)
    everything = Graph(builder.inputs, [term.variable for term in computed])
    sinks = [term for term in computed if term.variable not in everything.clients]
    chosen = list({term.variable: term for term in sinks}.values()) or builder.pool[:1]
    graph = Graph(builder.inputs, [term.variable for term in chosen])
    bounds = tuple(term.interval.magnitude for term in chosen)
    return GeneratedGraph(graph, tuple(builder.values), bounds)
