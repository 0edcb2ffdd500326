"""`Elemwise`: a scalar op mapped over arrays with NumPy broadcasting, and the user-level
elementwise functions (`add`, `exp`, `where`, ...).

`Elemwise` nodes always see inputs of equal rank: the functions here left-pad ranks
with `DimShuffle` first, as NumPy's alignment rule does implicitly. Broadcasting then
happens only along axes whose static length is 1, as in PyTensor, because gradients
and compiled loops are fixed when the graph is built: an axis of unknown length must
not turn out to be 1 at run time while others are longer (give it static length 1).

Python numbers are weak operands (NEP 50): `x_float32 * 2` stays float32. This module
defines `abs`, `pow` and `round` like NumPy does, shadowing the builtins.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import attrs
import numpy as np
import numpy.typing as npt

from fgraph import Constant, Op, ShapeError, TensorType, Variable, as_dtype, broadcast_shapes
from fgraph.dtypes import is_complex, is_inexact
from fgraph.op import Array, Vectorized
from fgraph.operators import TensorLike
from ops.convert import as_condition, as_tensor, as_tensors_weak
from ops.dimshuffle import DimShuffle, left_pad_rank
from ops.undefined_gradient import undefined_message
from ops.scalar_ops import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NEQ,
    Abs,
    Add,
    ArcCos,
    ArcCosh,
    ArcSin,
    ArcSinh,
    ArcTan,
    ArcTan2,
    ArcTanh,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    Cast,
    Ceil,
    Clip,
    Complex,
    Cos,
    Cosh,
    Erf,
    Erfc,
    Exp,
    Exp2,
    Expm1,
    Floor,
    Imag,
    IntDiv,
    Invert,
    IsFinite,
    IsInf,
    IsNan,
    Log,
    Log1mexp,
    Log1p,
    Log2,
    Log10,
    LogicalAnd,
    LogicalNot,
    LogicalOr,
    LogicalXor,
    Maximum,
    Minimum,
    Mod,
    Mul,
    Neg,
    Pow,
    Real,
    Reciprocal,
    Round,
    ScalarOp,
    Second,
    Sigmoid,
    Sign,
    Sin,
    Sinh,
    Softplus,
    Sqrt,
    Square,
    Sub,
    Switch,
    Tan,
    Tanh,
    TrueDiv,
    Trunc,
)


def as_destroy_map(pairs: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    """Sorted (output, input) pairs of non-negative ints, each output and input once."""
    normalized = tuple(sorted((int(output), int(input_)) for output, input_ in pairs))
    outputs = [output for output, _ in normalized]
    inputs = [input_ for _, input_ in normalized]
    if len(set(outputs)) != len(outputs) or len(set(inputs)) != len(inputs):
        raise ValueError(f"destroy_map {pairs} repeats an output or an input")
    if any(index < 0 for pair in normalized for index in pair):
        raise ValueError(f"destroy_map {pairs} has a negative index")
    return normalized


def same_type_candidates(
    input_types: tuple[TensorType, ...], output_types: tuple[TensorType, ...]
) -> tuple[tuple[int, int], ...]:
    """Each output paired with the first unpaired input of exactly its type (so nothing
    broadcasts along it): the buffers an elementwise loop can write over as it reads."""
    pairs: list[tuple[int, int]] = []
    taken: set[int] = set()
    for output, output_type in enumerate(output_types):
        for number, input_type in enumerate(input_types):
            if number not in taken and input_type == output_type:
                pairs.append((output, number))
                taken.add(number)
                break
    return tuple(pairs)


class ElementwiseOp(Op):
    """What `Elemwise` and `Fused` share: a loop that reads each input element before it
    writes the same output element, so an output may overwrite an input of exactly its
    type (the inplace rewrite decides which, in `destroy_map`)."""

    __slots__ = ()
    destroy_map: tuple[tuple[int, int], ...]

    def vectorize(
        self, inputs: tuple[Variable, ...], batched: tuple[bool, ...], batch_ndim: int
    ) -> Vectorized | None:
        """Elementwise over batch axes: unbatched operands get leading axes of length 1."""
        padded = [v if flag else left_pad_rank(v, v.ndim + batch_ndim) for v, flag in zip(inputs, batched)]
        outputs = self.apply(*padded)
        return outputs, (True,) * len(outputs)

    def inplace_candidates(
        self, input_types: tuple[TensorType, ...], output_types: tuple[TensorType, ...]
    ) -> tuple[tuple[int, int], ...]:
        return same_type_candidates(input_types, output_types)

    def with_destroy_map(self, destroy_map: tuple[tuple[int, int], ...]) -> Op:
        evolve: Any = attrs.evolve
        updated = evolve(self, destroy_map=destroy_map)
        assert isinstance(updated, Op)
        return updated


def inplace_suffix(destroy_map: tuple[tuple[int, int], ...]) -> str:
    """How printouts mark an op that overwrites inputs: `{inplace=0}`."""
    if not destroy_map:
        return ""
    return "{inplace=" + ",".join(f"{input_}" for _, input_ in destroy_map) + "}"


# Kernel: numba_backend.elemwise._elemwise
@attrs.frozen(cache_hash=True)
class Elemwise(ElementwiseOp):
    """`scalar_op` applied elementwise to equal-rank inputs with static broadcasting.

    Derivatives come from the scalar op's `partials`: the pullback multiplies the output
    cotangent by each partial and sums it over the axes that input was broadcast along;
    the pushforward sums tangent * partial over the inputs. Discrete (integer or bool)
    outputs and inputs carry no derivative.
    """

    scalar_op: ScalarOp
    destroy_map: tuple[tuple[int, int], ...] = attrs.field(default=(), converter=as_destroy_map)
    """Set by the inplace rewrite: ((0, k),) writes the output into input k's buffer."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        if len(input_types) != self.scalar_op.nin:
            raise TypeError(f"{self}: expected {self.scalar_op.nin} inputs, got {len(input_types)}")
        ranks = {t.ndim for t in input_types}
        if len(ranks) > 1:
            listed = ", ".join(str(t) for t in input_types)
            raise ShapeError(f"{self}: inputs need equal ranks (pad with DimShuffle), got {listed}")
        try:
            shape = broadcast_shapes(*(t.shape for t in input_types))
        except ShapeError as error:
            raise ShapeError(f"{self}: {error}") from error
        dtype = self.scalar_op.output_dtype(*(t.dtype for t in input_types))
        return (TensorType(dtype, shape),)

    def check_values(self, input_types: tuple[TensorType, ...], inputs: tuple[Array, ...]) -> None:
        check_static_broadcast(self, input_types, inputs, range(inputs[0].ndim if inputs else 0))

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        with np.errstate(all="ignore"):
            result = self.scalar_op.impl(*inputs)
        dtype = self.scalar_op.output_dtype(*(x.dtype.name for x in inputs))
        return (np.asarray(result, dtype=dtype),)

    def pullback(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        cotangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (cotangent,) = cotangents
        (output,) = outputs
        if cotangent is None or not is_inexact(output.dtype):
            return (None,) * len(inputs)
        partials = self.scalar_op.partials(inputs, output)
        gradients: list[Variable | None] = []
        for x, partial in zip(inputs, partials):
            if partial is None or not is_inexact(x.dtype):
                gradients.append(None)
                continue
            if undefined_message(partial) is not None:
                gradients.append(partial)  # `grad` raises if x is on a path to a target
                continue
            passed = cotangent if _is_one(partial) else mul(cotangent, partial)
            gradients.append(fit_to(x, passed))
        return tuple(gradients)

    def pushforward(
        self,
        inputs: tuple[Variable, ...],
        outputs: tuple[Variable, ...],
        tangents: tuple[Variable | None, ...],
    ) -> tuple[Variable | None, ...]:
        (output,) = outputs
        active = [
            (number, tangent)
            for number, (x, tangent) in enumerate(zip(inputs, tangents))
            if tangent is not None and is_inexact(x.dtype)
        ]
        if not active or not is_inexact(output.dtype):
            return (None,)
        partials = self.scalar_op.partials(inputs, output)
        total: Variable | None = None
        for number, tangent in active:
            partial = partials[number]
            if partial is None:
                continue
            message = undefined_message(partial)
            if message is not None:
                raise NotImplementedError(message)
            term = mul(tangent, partial)
            total = term if total is None else add(total, term)
        return (None if total is None else fit_to(output, total),)

    def __str__(self) -> str:
        return str(self.scalar_op) + inplace_suffix(self.destroy_map)


def _is_one(partial: Variable) -> bool:
    """Whether a partial is the scalar constant 1 (of an addition, say), by which the
    cotangent passes unchanged: no `* 1` node per addition, so the pullbacks of a sum of
    n terms all receive the one cotangent of the sum, not a chain of n products by one."""
    return isinstance(partial, Constant) and partial.ndim == 0 and bool(partial.data == 1)


def check_static_broadcast(
    op: Op, input_types: Sequence[TensorType], inputs: Sequence[Array], axes: range
) -> None:
    """Refuse run-time broadcasting along `axes` of an input whose static length there is
    not 1: its gradient (and the compiled loop) was fixed for a full-length axis."""
    for axis in axes:
        full = max((x.shape[axis] for x in inputs), default=1)
        for number, (input_type, x) in enumerate(zip(input_types, inputs)):
            if x.shape[axis] == 1 and full != 1 and input_type.shape[axis] != 1:
                raise ShapeError(
                    f"{op}: input {number} ({input_type}) has length 1 along axis {axis} at run "
                    f"time where others have {full}; broadcasting needs a static length of 1 "
                    "(declare it in the input's shape or use specify_shape)"
                )


def fit_to(target: Variable, value: Variable) -> Variable:
    """Give a derivative `value` the static shape and dtype of `target`: sum it over the
    axes `target` was broadcast along, broadcast it along those only `target` spans."""
    axes = tuple(
        axis
        for axis, (want, got) in enumerate(zip(target.type.shape, value.type.shape))
        if want == 1 and got != 1
    )
    if axes:
        from ops.reduction import Sum

        kept = Sum(axes)(value)
        order = iter(range(kept.ndim))
        restored = tuple(None if axis in axes else next(order) for axis in range(value.ndim))
        value = DimShuffle(restored)(kept)
    if any(want != 1 and got == 1 for want, got in zip(target.type.shape, value.type.shape)):
        value = second(target, value)
    if value.dtype != target.dtype:
        value = cast(value, target.dtype)
    return value


def elemwise(scalar_op: ScalarOp, *operands: TensorLike) -> Variable:
    """Apply `scalar_op` with NumPy broadcasting (ranks left-padded) and weak scalars."""
    return _apply(scalar_op, as_tensors_weak(operands))


def _apply(scalar_op: ScalarOp, variables: Sequence[Variable]) -> Variable:
    rank = max(v.ndim for v in variables)
    return Elemwise(scalar_op)(*(left_pad_rank(v, rank) for v in variables))


# --- arithmetic ---------------------------------------------------------------------------
def add(x: TensorLike, y: TensorLike) -> Variable:
    """`x + y` with NumPy broadcasting and dtype promotion."""
    return elemwise(Add(), x, y)


def sub(x: TensorLike, y: TensorLike) -> Variable:
    """`x - y`."""
    return elemwise(Sub(), x, y)


def mul(x: TensorLike, y: TensorLike) -> Variable:
    """`x * y`."""
    return elemwise(Mul(), x, y)


def true_div(x: TensorLike, y: TensorLike) -> Variable:
    """`x / y`: float results even for integers, as `numpy.true_divide`."""
    return elemwise(TrueDiv(), x, y)


def int_div(x: TensorLike, y: TensorLike) -> Variable:
    """Floor division `x // y`, as `numpy.floor_divide` (zero derivative)."""
    return elemwise(IntDiv(), x, y)


def mod(x: TensorLike, y: TensorLike) -> Variable:
    """`x % y` with the sign of `y`, as `numpy.mod`."""
    return elemwise(Mod(), x, y)


def pow(x: TensorLike, y: TensorLike) -> Variable:
    """`x ** y`, as `numpy.power`; d/dy is taken as 0 where x == 0."""
    return elemwise(Pow(), x, y)


def neg(x: TensorLike) -> Variable:
    """`-x`."""
    return elemwise(Neg(), x)


def abs(x: TensorLike) -> Variable:
    """`|x|` (of a complex x, its real modulus, as `numpy.abs`); its derivative at 0 is 0."""
    return elemwise(Abs(), x)


def sign(x: TensorLike) -> Variable:
    """-1, 0 or 1 by the sign of `x` (nan for nan), as `numpy.sign`."""
    return elemwise(Sign(), x)


def reciprocal(x: TensorLike) -> Variable:
    """`1 / x` in `x`'s dtype, as `numpy.reciprocal` (integer division for integers)."""
    return elemwise(Reciprocal(), x)


def square(x: TensorLike) -> Variable:
    """`x * x`."""
    return elemwise(Square(), x)


def sqrt(x: TensorLike) -> Variable:
    """Square root (nan for negative `x`)."""
    return elemwise(Sqrt(), x)


def maximum(x: TensorLike, y: TensorLike) -> Variable:
    """The larger of `x` and `y` (nan if either is), as `numpy.maximum`. The derivative
    goes to the larger input and is split half and half at ties."""
    return elemwise(Maximum(), x, y)


def minimum(x: TensorLike, y: TensorLike) -> Variable:
    """The smaller of `x` and `y`, as `numpy.minimum` (ties split the derivative)."""
    return elemwise(Minimum(), x, y)


def clip(x: TensorLike, lo: TensorLike | None, hi: TensorLike | None) -> Variable:
    """`x` limited to [lo, hi], as `numpy.clip`; a bound of None is no limit.

    The derivative goes to `x` where lo <= x <= hi (bounds included), else to the bound
    that clipped it. With one bound this is `maximum` / `minimum`, ties included.
    """
    if lo is None:
        if hi is None:
            raise ValueError("clip: give at least one of lo and hi")
        return minimum(x, hi)
    if hi is None:
        return maximum(x, lo)
    return elemwise(Clip(), x, lo, hi)


@overload
def where(cond: TensorLike) -> tuple[Variable, ...]: ...


@overload
def where(cond: TensorLike, x: TensorLike, y: TensorLike) -> Variable: ...


def where(
    cond: TensorLike, x: TensorLike | None = None, y: TensorLike | None = None
) -> Variable | tuple[Variable, ...]:
    """`x` where `cond` is true (nonzero), `y` elsewhere, as `numpy.where`. The result
    dtype comes from x and y alone, so `cond` never promotes it. A Python bool `cond` is
    refused: it is what `x == y` gives (identity), never an elementwise comparison.
    With `cond` alone, `nonzero(cond)`, as NumPy."""
    if x is None and y is None:
        from ops.selection import nonzero  # selections build on elementwise ops

        return nonzero(cond)
    if x is None or y is None:
        raise TypeError("where: give both x and y, or neither (then it is nonzero(cond))")
    condition = as_tensor(as_condition(cond, "where: cond"), name="cond")
    return _apply(Switch(), (condition, *as_tensors_weak((x, y))))


def switch(cond: TensorLike, ift: TensorLike, iff: TensorLike) -> Variable:
    """PyTensor's name for `where`: `ift` where `cond` is true, `iff` elsewhere."""
    return where(cond, ift, iff)


def second(x: TensorLike, y: TensorLike) -> Variable:
    """`y` broadcast against `x` (values of y, shape of both)."""
    return elemwise(Second(), x, y)


def cast(x: TensorLike, dtype: npt.DTypeLike) -> Variable:
    """`x.astype(dtype)`; a no-op when the dtype already matches. Casting to an integer
    or bool dtype cuts the derivative."""
    (variable,) = as_tensors_weak((x,))
    target = as_dtype(dtype)
    return variable if variable.dtype == target else elemwise(Cast(target), variable)


def ones_like(x: Variable) -> Variable:
    """Ones of `x`'s shape and dtype."""
    return second(x, np.ones((), dtype=x.dtype))


def zeros_like(x: Variable) -> Variable:
    """Zeros of `x`'s shape and dtype."""
    return second(x, np.zeros((), dtype=x.dtype))


# --- comparisons, logical and bitwise functions ----------------------------------------------
def lt(x: TensorLike, y: TensorLike) -> Variable:
    """Elementwise `x < y` (bool)."""
    return elemwise(LT(), x, y)


def le(x: TensorLike, y: TensorLike) -> Variable:
    """Elementwise `x <= y` (bool)."""
    return elemwise(LE(), x, y)


def gt(x: TensorLike, y: TensorLike) -> Variable:
    """Elementwise `x > y` (bool)."""
    return elemwise(GT(), x, y)


def ge(x: TensorLike, y: TensorLike) -> Variable:
    """Elementwise `x >= y` (bool)."""
    return elemwise(GE(), x, y)


def eq(x: TensorLike, y: TensorLike) -> Variable:
    """Elementwise `==` (the operator stays identity, since nodes are interned)."""
    return elemwise(EQ(), x, y)


def neq(x: TensorLike, y: TensorLike) -> Variable:
    """Elementwise `!=` (bool)."""
    return elemwise(NEQ(), x, y)


def logical_and(x: TensorLike, y: TensorLike) -> Variable:
    """Truth of `x and y` for any dtypes (nonzero is true), as a bool tensor."""
    return elemwise(LogicalAnd(), as_condition(x, "logical_and"), as_condition(y, "logical_and"))


def logical_or(x: TensorLike, y: TensorLike) -> Variable:
    """Truth of `x or y` for any dtypes, as a bool tensor."""
    return elemwise(LogicalOr(), as_condition(x, "logical_or"), as_condition(y, "logical_or"))


def logical_xor(x: TensorLike, y: TensorLike) -> Variable:
    """Whether exactly one of `x` and `y` is true (nonzero), as a bool tensor."""
    return elemwise(LogicalXor(), as_condition(x, "logical_xor"), as_condition(y, "logical_xor"))


def logical_not(x: TensorLike) -> Variable:
    """Whether `x` is false (zero), as a bool tensor."""
    return elemwise(LogicalNot(), as_condition(x, "logical_not"))


def isnan(x: TensorLike) -> Variable:
    """Where `x` is nan (always false for integers)."""
    return elemwise(IsNan(), x)


def isinf(x: TensorLike) -> Variable:
    """Where `x` is +inf or -inf (always false for integers)."""
    return elemwise(IsInf(), x)


def isfinite(x: TensorLike) -> Variable:
    """Where `x` is neither nan nor infinite (always true for integers)."""
    return elemwise(IsFinite(), x)


def bitwise_and(x: TensorLike, y: TensorLike) -> Variable:
    """`x & y`: bitwise on integers, logical on booleans."""
    return elemwise(BitwiseAnd(), as_condition(x, "bitwise_and"), as_condition(y, "bitwise_and"))


def bitwise_or(x: TensorLike, y: TensorLike) -> Variable:
    """`x | y`: bitwise on integers, logical on booleans."""
    return elemwise(BitwiseOr(), as_condition(x, "bitwise_or"), as_condition(y, "bitwise_or"))


def bitwise_xor(x: TensorLike, y: TensorLike) -> Variable:
    """`x ^ y`: bitwise on integers, logical on booleans."""
    return elemwise(BitwiseXor(), as_condition(x, "bitwise_xor"), as_condition(y, "bitwise_xor"))


def invert(x: TensorLike) -> Variable:
    """`~x`: bitwise not on integers, logical not on booleans."""
    return elemwise(Invert(), x)


# --- rounding --------------------------------------------------------------------------------
def floor(x: TensorLike) -> Variable:
    """The largest integer <= x (integers stay integers, as in NumPy 2)."""
    return elemwise(Floor(), x)


def ceil(x: TensorLike) -> Variable:
    """The smallest integer >= x."""
    return elemwise(Ceil(), x)


def trunc(x: TensorLike) -> Variable:
    """The integer part of x, rounding toward zero (`trunc(-1.5) == -1`), as
    `numpy.trunc`; integers stay integers."""
    return elemwise(Trunc(), x)


def round(x: TensorLike, decimals: int = 0) -> Variable:
    """Round to `decimals` places with halves to even (`round(2.5) == 2`), as `numpy.round`."""
    return elemwise(Round(decimals), x)


# --- exponentials, logarithms and special functions -------------------------------------------
def exp(x: TensorLike) -> Variable:
    """e ** x."""
    return elemwise(Exp(), x)


def exp2(x: TensorLike) -> Variable:
    """2 ** x."""
    return elemwise(Exp2(), x)


def expm1(x: TensorLike) -> Variable:
    """exp(x) - 1, accurate for small x."""
    return elemwise(Expm1(), x)


def log(x: TensorLike) -> Variable:
    """Natural logarithm."""
    return elemwise(Log(), x)


def log2(x: TensorLike) -> Variable:
    """Base-2 logarithm."""
    return elemwise(Log2(), x)


def log10(x: TensorLike) -> Variable:
    """Base-10 logarithm."""
    return elemwise(Log10(), x)


def log1p(x: TensorLike) -> Variable:
    """log(1 + x), accurate for small x."""
    return elemwise(Log1p(), x)


def log1mexp(x: TensorLike) -> Variable:
    """log(1 - exp(x)) for x <= 0, accurate both near 0 and for very negative x."""
    return elemwise(Log1mexp(), x)


def sigmoid(x: TensorLike) -> Variable:
    """The logistic function 1 / (1 + exp(-x)), computed without overflow."""
    return elemwise(Sigmoid(), x)


def softplus(x: TensorLike) -> Variable:
    """log(1 + exp(x)), computed without overflow; its derivative is `sigmoid`."""
    return elemwise(Softplus(), x)


def erf(x: TensorLike) -> Variable:
    """The error function 2/sqrt(pi) * integral of exp(-t**2) from 0 to x."""
    return elemwise(Erf(), x)


def erfc(x: TensorLike) -> Variable:
    """The complementary error function 1 - erf(x), accurate for large x."""
    return elemwise(Erfc(), x)


# --- trigonometric and hyperbolic functions ----------------------------------------------------
def sin(x: TensorLike) -> Variable:
    """Sine (radians)."""
    return elemwise(Sin(), x)


def cos(x: TensorLike) -> Variable:
    """Cosine (radians)."""
    return elemwise(Cos(), x)


def tan(x: TensorLike) -> Variable:
    """Tangent (radians)."""
    return elemwise(Tan(), x)


def arcsin(x: TensorLike) -> Variable:
    """Inverse sine, in [-pi/2, pi/2] (nan outside [-1, 1])."""
    return elemwise(ArcSin(), x)


def arccos(x: TensorLike) -> Variable:
    """Inverse cosine, in [0, pi] (nan outside [-1, 1])."""
    return elemwise(ArcCos(), x)


def arctan(x: TensorLike) -> Variable:
    """Inverse tangent, in (-pi/2, pi/2)."""
    return elemwise(ArcTan(), x)


def arctan2(y: TensorLike, x: TensorLike) -> Variable:
    """The angle of the point (x, y) in (-pi, pi], as `numpy.arctan2(y, x)`."""
    return elemwise(ArcTan2(), y, x)


def sinh(x: TensorLike) -> Variable:
    """Hyperbolic sine."""
    return elemwise(Sinh(), x)


def cosh(x: TensorLike) -> Variable:
    """Hyperbolic cosine."""
    return elemwise(Cosh(), x)


def tanh(x: TensorLike) -> Variable:
    """Hyperbolic tangent."""
    return elemwise(Tanh(), x)


def arcsinh(x: TensorLike) -> Variable:
    """Inverse hyperbolic sine."""
    return elemwise(ArcSinh(), x)


def arccosh(x: TensorLike) -> Variable:
    """Inverse hyperbolic cosine (nan below 1)."""
    return elemwise(ArcCosh(), x)


def arctanh(x: TensorLike) -> Variable:
    """Inverse hyperbolic tangent (nan outside [-1, 1])."""
    return elemwise(ArcTanh(), x)


# --- complex numbers ----------------------------------------------------------------------------
def real(x: TensorLike) -> Variable:
    """The real part, as `numpy.real`: a real `x` itself."""
    (variable,) = as_tensors_weak((x,))
    return elemwise(Real(), variable) if is_complex(variable.dtype) else variable


def imag(x: TensorLike) -> Variable:
    """The imaginary part, as `numpy.imag`: zeros of a real `x`'s dtype."""
    (variable,) = as_tensors_weak((x,))
    if is_complex(variable.dtype):
        return elemwise(Imag(), variable)
    return second(variable, np.zeros((), dtype=variable.dtype))


def complex(real: TensorLike, imag: TensorLike) -> Variable:
    """`real + 1j * imag` from real parts, exactly (PyTensor's `complex`); complex64 for
    float32 parts, complex128 for float64 ones."""
    return elemwise(Complex(), real, imag)


def conj(x: TensorLike) -> Variable:
    """The complex conjugate, as `numpy.conj` (a real `x` itself; bools give int8 as in
    NumPy). Built as complex(real(x), -imag(x)), so it is exact and differentiates as
    JAX does (the pullback conjugates the cotangent)."""
    (variable,) = as_tensors_weak((x,))
    if variable.dtype == "bool":
        return cast(variable, "int8")
    if not is_complex(variable.dtype):
        return variable
    return complex(real(variable), neg(imag(variable)))


def angle(x: TensorLike, deg: bool = False) -> Variable:
    """The argument of `x` in (-pi, pi], as `numpy.angle`: arctan2(imag(x), real(x)); in
    degrees with `deg`."""
    (variable,) = as_tensors_weak((x,))
    if is_complex(variable.dtype):
        radians = arctan2(imag(variable), real(variable))
    else:
        radians = arctan2(0, variable)
    return radians * (180 / np.pi) if deg else radians
