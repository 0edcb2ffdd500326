"""Scalar ops: the functions `Elemwise` maps over arrays and fused kernels inline.

A scalar op says three things: its NumPy implementation (`impl`, vectorized), its
output dtype (by default whatever NumPy's implementation gives for the input dtypes,
so promotion matches NumPy exactly), and its `partials`: the derivative of the output
with respect to each input as graph expressions, or None where it is zero or undefined.
Reverse and forward mode both derive from `partials` (see `Elemwise`), so each
derivative is written once. Partials keep the dtype of their operands (Python numbers
in them are weak), so a float32 graph differentiates to a float32 graph.

Partials are built with the user-level functions (`ops.elementwise_functions`, imported
whole as `ew`), which apply these ops: the elementwise family's one import cycle.

Kernel: the `Elemwise` kernel (`numba_backend/elemwise.py`) inlines each scalar op's
numba expression, registered in `numba_backend/scalar_ops.py` (`scalar_expression`).
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable
from typing import Any, ClassVar

import attrs
import numpy as np

import ops.elementwise_functions as ew  # partials are elementwise graphs: a cycle, read at call time
from fgraph import Constant, DTypeError, Variable, as_dtype
from fgraph.dtypes import is_complex, is_inexact
from fgraph.op import Array

Partials = tuple[Variable | None, ...]


class ScalarOp:
    """Base of scalar ops. Subclasses are `@attrs.frozen`, set `nin`, and either set
    `ufunc` to a NumPy ufunc or override `impl` (a plain Python function stored as `ufunc`
    would bind as a method)."""

    __slots__ = ()
    nin: ClassVar[int]
    ufunc: ClassVar[Callable[..., Any]]

    def impl(self, *inputs: Array) -> Array:
        return np.asarray(self.ufunc(*inputs))

    def output_dtype(self, *dtypes: str) -> str:
        return _numpy_output_dtype(self, dtypes)

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        """d output / d input_i, elementwise; None where the derivative is zero."""
        raise NotImplementedError(f"{type(self).__name__} is not differentiable")

    def __str__(self) -> str:
        """`Exp`, or `Cast{float32}` for ops with parameters (the form `dprint` shows)."""
        name = type(self).__name__
        fields: tuple[attrs.Attribute[object], ...] = getattr(type(self), "__attrs_attrs__", ())
        params = ", ".join(str(getattr(self, field.name)) for field in fields)
        return f"{name}{{{params}}}" if params else name


@functools.lru_cache(maxsize=8192)
def _numpy_output_dtype(op: ScalarOp, dtypes: tuple[str, ...]) -> str:
    """Apply the NumPy implementation to tiny arrays: exact NumPy dtype semantics."""
    with np.errstate(all="ignore"):
        try:
            return op.impl(*(np.zeros(1, dtype=dtype) for dtype in dtypes)).dtype.name
        except TypeError as error:  # NumPy has no loop for these dtypes
            listed = ", ".join(dtypes)
            raise DTypeError(f"{op} is not defined for dtypes ({listed}): {error}") from error


def _constant(like: Variable, value: complex) -> Variable:
    """`value` as a rank-0 constant of `like`'s dtype (a partial that does not vary)."""
    return Constant(np.asarray(value, dtype=like.dtype))


def _indicator(condition: Variable, like: Variable) -> Variable:
    """1 where `condition` holds, else 0, in `like`'s dtype."""
    return ew.cast(condition, like.dtype)


def _float_dtype(dtype: str) -> str:
    """The dtype NumPy's unary float functions (`exp`, `sin`) give for `dtype`:
    floats keep theirs, int8/bool give float16, int16 float32, wider ints float64."""
    return np.result_type(np.dtype(dtype), np.float16).name


def _as_float(x: Array) -> Array:
    return x.astype(_float_dtype(x.dtype.name), copy=False)


def _vectorized(function: Callable[[float], float], x: Array) -> Array:
    """A Python float function over `x`, returned in `_float_dtype` like a NumPy ufunc."""
    values: Array = np.vectorize(function, otypes=[np.float64])(x)
    return values.astype(_float_dtype(x.dtype.name))


class _NonDifferentiable(ScalarOp):
    """Ops whose derivative is zero wherever it exists: discrete results (comparisons,
    logical and bitwise ops) and piecewise-constant ones (floor, sign, floor division)."""

    __slots__ = ()

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (None,) * len(inputs)


class _RealFunction(ScalarOp):
    """Functions defined here for real values only (their stable forms compare and take
    absolute values; SciPy's versions refuse complex input too)."""

    __slots__ = ()

    def output_dtype(self, *dtypes: str) -> str:
        if any(is_complex(dtype) for dtype in dtypes):
            listed = ", ".join(dtypes)
            raise DTypeError(f"{self} is not defined for complex values, got ({listed})")
        return _numpy_output_dtype(self, dtypes)


# --- arithmetic ------------------------------------------------------------------------
@attrs.frozen
class Add(ScalarOp):
    nin = 2
    ufunc = np.add

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (_constant(output, 1), _constant(output, 1))


@attrs.frozen
class Sub(ScalarOp):
    nin = 2
    ufunc = np.subtract

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (_constant(output, 1), _constant(output, -1))


@attrs.frozen
class Mul(ScalarOp):
    nin = 2
    ufunc = np.multiply

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x, y = inputs
        return (y, x)


@attrs.frozen
class TrueDiv(ScalarOp):
    nin = 2
    ufunc = np.true_divide

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x, y = inputs
        return (1 / y, -output / y)


@attrs.frozen
class IntDiv(_NonDifferentiable):
    """Floor division, as `numpy.floor_divide` (piecewise constant: zero derivative)."""

    nin = 2
    ufunc = np.floor_divide


@attrs.frozen
class Mod(ScalarOp):
    """Remainder with the sign of the divisor, as `numpy.mod`: x - y * floor(x / y)."""

    nin = 2
    ufunc = np.mod

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x, y = inputs
        return (_constant(output, 1), -ew.int_div(x, y))


@attrs.frozen
class Pow(ScalarOp):
    """`x ** y`, as `numpy.power`.

    At x == 0 the derivative in y is taken as 0 (the limit along x**y for y > 0, as JAX
    and PyTensor do) instead of 0 * log(0) = nan, with log's argument made safe so that
    higher derivatives stay finite too; at x < 0 it is nan (x**y is not real for nearby
    y). For integer y, d/dx x**0 is 0 (not 0 * 0**-1).
    """

    nin = 2
    ufunc = np.power

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x, y = inputs
        if not is_inexact(y.dtype):
            exponent = ew.where(ew.eq(y, 0), 1, y - 1)
            return (y * x**exponent, None)
        safe_x = ew.where(ew.eq(x, 0), 1, x)
        return (y * x ** (y - 1), output * ew.log(safe_x))


@attrs.frozen
class Neg(ScalarOp):
    nin = 1
    ufunc = np.negative

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (_constant(output, -1),)


@attrs.frozen
class Abs(ScalarOp):
    """`numpy.abs`; its derivative at 0 is taken as 0 (sign(0), as PyTensor and JAX). Of
    a complex z it is the real |z|, with partial conj(z) / |z| (see "Complex numbers")."""

    nin = 1
    ufunc = np.abs

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        (x,) = inputs
        if not is_complex(x.dtype):
            return (ew.sign(x),)
        safe_output = ew.where(ew.eq(output, 0), 1, output)
        return (ew.where(ew.eq(output, 0), 0, ew.conj(x) / safe_output),)


@attrs.frozen
class Sign(_NonDifferentiable):
    nin = 1
    ufunc = np.sign


@attrs.frozen
class Reciprocal(ScalarOp):
    """`numpy.reciprocal` (on integers this is integer division, as in NumPy)."""

    nin = 1
    ufunc = np.reciprocal

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (-ew.square(output),)


@attrs.frozen
class Square(ScalarOp):
    nin = 1
    ufunc = np.square

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (2 * inputs[0],)


@attrs.frozen
class Sqrt(ScalarOp):
    nin = 1
    ufunc = np.sqrt

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (0.5 / output,)


@attrs.frozen
class Maximum(ScalarOp):
    """`numpy.maximum` (NaN-propagating). The derivative goes to the larger input; at a
    tie it is split half and half (as JAX does), so swapping the arguments changes
    nothing and the two partials still sum to 1."""

    nin = 2
    ufunc = np.maximum

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x, y = inputs
        return _split_at_ties(ew.gt(x, y), ew.lt(x, y), ew.eq(x, y), output)


@attrs.frozen
class Minimum(ScalarOp):
    """`numpy.minimum`; derivative to the smaller input, split half and half at ties."""

    nin = 2
    ufunc = np.minimum

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x, y = inputs
        return _split_at_ties(ew.lt(x, y), ew.gt(x, y), ew.eq(x, y), output)


def _split_at_ties(
    x_wins: Variable, y_wins: Variable, tie: Variable, output: Variable
) -> Partials:
    half_at_tie = _indicator(tie, output) * 0.5
    return (_indicator(x_wins, output) + half_at_tie, _indicator(y_wins, output) + half_at_tie)


@attrs.frozen
class Clip(ScalarOp):
    """`numpy.clip(x, lo, hi)`, which is minimum(maximum(x, lo), hi).

    The derivative goes to x where lo <= x <= hi (bounds included, as PyTensor), to lo
    where x < lo and to hi where x > hi; if lo > hi the result is hi everywhere, and so
    is the derivative.
    """

    nin = 3

    def impl(self, *inputs: Array) -> Array:
        x, lo, hi = inputs
        return np.asarray(np.clip(x, lo, hi))

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x, lo, hi = inputs
        to_x = ew.logical_and(ew.ge(x, lo), ew.le(x, hi))
        to_lo = ew.logical_and(ew.lt(x, lo), ew.le(lo, hi))
        to_hi = ew.logical_or(ew.gt(x, hi), ew.gt(lo, hi))
        return (_indicator(to_x, output), _indicator(to_lo, output), _indicator(to_hi, output))


@attrs.frozen
class Switch(ScalarOp):
    """`numpy.where(cond, x, y)`: x where `cond` is true (nonzero), y elsewhere."""

    nin = 3

    def impl(self, *inputs: Array) -> Array:
        cond, x, y = inputs
        return np.asarray(np.where(cond, x, y))

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        cond, _, _ = inputs
        chosen = cond if cond.dtype == "bool" else ew.neq(cond, 0)
        return (None, _indicator(chosen, output), _indicator(ew.logical_not(chosen), output))


@attrs.frozen
class Second(ScalarOp):
    """`second(x, y)`: y broadcast to the broadcast shape of both (PyTensor's `fill`)."""

    nin = 2

    @staticmethod
    def ufunc(x: Array, y: Array) -> Array:
        return np.broadcast_to(y, np.broadcast_shapes(x.shape, y.shape)).copy()

    def output_dtype(self, *dtypes: str) -> str:
        return dtypes[1]

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (None, _constant(output, 1))


@attrs.frozen
class Cast(ScalarOp):
    """Conversion to `dtype` (NumPy `astype`, unsafe casting allowed; a complex value
    cast to a real dtype keeps its real part, without NumPy's ComplexWarning, since
    derivatives of real inputs do this on purpose). Casting to an integer or bool dtype
    has no derivative (`Elemwise` gives none for discrete outputs)."""

    dtype: str = attrs.field(converter=as_dtype)
    nin = 1

    def impl(self, *inputs: Array) -> Array:
        (x,) = inputs
        if is_complex(x.dtype.name) and not is_complex(self.dtype) and self.dtype != "bool":
            x = np.real(x)  # (to bool, a complex value is true where either part is nonzero)
        return x.astype(self.dtype)

    def output_dtype(self, *dtypes: str) -> str:
        return self.dtype

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (_constant(output, 1),)


# --- comparisons, logical and bitwise ops ------------------------------------------------
@attrs.frozen
class LT(_NonDifferentiable):
    nin = 2
    ufunc = np.less


@attrs.frozen
class LE(_NonDifferentiable):
    nin = 2
    ufunc = np.less_equal


@attrs.frozen
class GT(_NonDifferentiable):
    nin = 2
    ufunc = np.greater


@attrs.frozen
class GE(_NonDifferentiable):
    nin = 2
    ufunc = np.greater_equal


@attrs.frozen
class EQ(_NonDifferentiable):
    nin = 2
    ufunc = np.equal


@attrs.frozen
class NEQ(_NonDifferentiable):
    nin = 2
    ufunc = np.not_equal


@attrs.frozen
class LogicalAnd(_NonDifferentiable):
    """Truth values of any dtype (nonzero is true) combined into a bool result."""

    nin = 2
    ufunc = np.logical_and


@attrs.frozen
class LogicalOr(_NonDifferentiable):
    nin = 2
    ufunc = np.logical_or


@attrs.frozen
class LogicalXor(_NonDifferentiable):
    nin = 2
    ufunc = np.logical_xor


@attrs.frozen
class LogicalNot(_NonDifferentiable):
    nin = 1
    ufunc = np.logical_not


@attrs.frozen
class IsNan(_NonDifferentiable):
    nin = 1
    ufunc = np.isnan


@attrs.frozen
class IsInf(_NonDifferentiable):
    nin = 1
    ufunc = np.isinf


@attrs.frozen
class IsFinite(_NonDifferentiable):
    nin = 1
    ufunc = np.isfinite


@attrs.frozen
class BitwiseAnd(_NonDifferentiable):
    """`&`: logical and on booleans, bitwise on integers."""

    nin = 2
    ufunc = np.bitwise_and


@attrs.frozen
class BitwiseOr(_NonDifferentiable):
    nin = 2
    ufunc = np.bitwise_or


@attrs.frozen
class BitwiseXor(_NonDifferentiable):
    nin = 2
    ufunc = np.bitwise_xor


@attrs.frozen
class Invert(_NonDifferentiable):
    """`~`: logical not on booleans, bitwise not on integers."""

    nin = 1
    ufunc = np.invert


# --- rounding ------------------------------------------------------------------------------
@attrs.frozen
class Floor(_NonDifferentiable):
    nin = 1
    ufunc = np.floor


@attrs.frozen
class Ceil(_NonDifferentiable):
    nin = 1
    ufunc = np.ceil


@attrs.frozen
class Trunc(_NonDifferentiable):
    """Rounding toward zero, as `numpy.trunc` (integers keep their dtype)."""

    nin = 1
    ufunc = np.trunc


@attrs.frozen
class Round(_NonDifferentiable):
    """`numpy.round`: halves go to the nearest even value (`decimals` may be negative)."""

    decimals: int = attrs.field(default=0, converter=operator.index)
    nin = 1

    def impl(self, *inputs: Array) -> Array:
        return np.asarray(np.round(inputs[0], self.decimals))


# --- exponentials and logarithms ------------------------------------------------------------
@attrs.frozen
class Exp(ScalarOp):
    nin = 1
    ufunc = np.exp

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (output,)


@attrs.frozen
class Exp2(ScalarOp):
    nin = 1
    ufunc = np.exp2

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (output * math.log(2),)


@attrs.frozen
class Expm1(ScalarOp):
    nin = 1
    ufunc = np.expm1

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (output + 1,)


@attrs.frozen
class Log(ScalarOp):
    nin = 1
    ufunc = np.log

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (1 / inputs[0],)


@attrs.frozen
class Log2(ScalarOp):
    nin = 1
    ufunc = np.log2

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (1 / (inputs[0] * math.log(2)),)


@attrs.frozen
class Log10(ScalarOp):
    nin = 1
    ufunc = np.log10

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (1 / (inputs[0] * math.log(10)),)


@attrs.frozen
class Log1p(ScalarOp):
    nin = 1
    ufunc = np.log1p

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (1 / (inputs[0] + 1),)


@attrs.frozen
class Sigmoid(_RealFunction):
    """The logistic function 1 / (1 + exp(-x)), computed from exp(-|x|) so that it
    neither overflows nor loses the tiny values of large negative x."""

    nin = 1

    def impl(self, *inputs: Array) -> Array:
        x = _as_float(inputs[0])
        decay = np.exp(-np.abs(x))  # in (0, 1]
        return np.asarray(np.where(x >= 0, 1 / (1 + decay), decay / (1 + decay)))

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (output * (1 - output),)


@attrs.frozen
class Softplus(_RealFunction):
    """log(1 + exp(x)), computed as log1p(exp(-|x|)) + max(x, 0): no overflow for large
    x, full precision for very negative x."""

    nin = 1

    def impl(self, *inputs: Array) -> Array:
        x = _as_float(inputs[0])
        return np.asarray(np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0))

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (ew.sigmoid(inputs[0]),)


@attrs.frozen
class Log1mexp(_RealFunction):
    """log(1 - exp(x)) for x <= 0 (nan above): log(-expm1(x)) for x > -log(2), where
    1 - exp(x) cancels, and log1p(-exp(x)) below, where -expm1(x) rounds to 1 (Maechler's
    split). Its derivative -exp(x) / (1 - exp(x)) is written -1 / |expm1(-x)|: finite
    at both ends, and -inf (not +inf) at x = 0, where expm1 returns a signed zero."""

    nin = 1

    def impl(self, *inputs: Array) -> Array:
        x = _as_float(inputs[0])
        with np.errstate(divide="ignore", invalid="ignore"):  # the branch not taken
            near_zero = np.log(-np.expm1(x))
            far = np.log1p(-np.exp(x))
        return np.asarray(np.where(x > -np.log(2), near_zero, far))

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (-1 / ew.abs(ew.expm1(-inputs[0])),)


@attrs.frozen
class Erf(_RealFunction):
    """The error function (NumPy has none: `math.erf` elementwise, in the input's float
    dtype as NumPy's unary functions give it)."""

    nin = 1

    def impl(self, *inputs: Array) -> Array:
        return _vectorized(math.erf, inputs[0])

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x = inputs[0]
        return ((2 / math.sqrt(math.pi)) * ew.exp(-ew.square(x)),)


@attrs.frozen
class Erfc(_RealFunction):
    """1 - erf(x), accurate where erf(x) is close to 1 (`math.erfc` elementwise)."""

    nin = 1

    def impl(self, *inputs: Array) -> Array:
        return _vectorized(math.erfc, inputs[0])

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x = inputs[0]
        return ((-2 / math.sqrt(math.pi)) * ew.exp(-ew.square(x)),)


# --- trigonometric and hyperbolic functions -------------------------------------------------
@attrs.frozen
class Sin(ScalarOp):
    nin = 1
    ufunc = np.sin

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (ew.cos(inputs[0]),)


@attrs.frozen
class Cos(ScalarOp):
    nin = 1
    ufunc = np.cos

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (-ew.sin(inputs[0]),)


@attrs.frozen
class Tan(ScalarOp):
    nin = 1
    ufunc = np.tan

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (1 + ew.square(output),)


@attrs.frozen
class ArcSin(ScalarOp):
    nin = 1
    ufunc = np.arcsin

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (1 / ew.sqrt(1 - ew.square(inputs[0])),)


@attrs.frozen
class ArcCos(ScalarOp):
    nin = 1
    ufunc = np.arccos

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (-1 / ew.sqrt(1 - ew.square(inputs[0])),)


@attrs.frozen
class ArcTan(ScalarOp):
    nin = 1
    ufunc = np.arctan

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (1 / (1 + ew.square(inputs[0])),)


@attrs.frozen
class ArcTan2(ScalarOp):
    """`numpy.arctan2(y, x)`: the angle of the point (x, y); note the argument order."""

    nin = 2
    ufunc = np.arctan2

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        y, x = inputs
        radius_squared = ew.square(x) + ew.square(y)
        return (x / radius_squared, -y / radius_squared)


@attrs.frozen
class Sinh(ScalarOp):
    nin = 1
    ufunc = np.sinh

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (ew.cosh(inputs[0]),)


@attrs.frozen
class Cosh(ScalarOp):
    nin = 1
    ufunc = np.cosh

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (ew.sinh(inputs[0]),)


@attrs.frozen
class Tanh(ScalarOp):
    nin = 1
    ufunc = np.tanh

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (1 - ew.square(output),)


@attrs.frozen
class ArcSinh(ScalarOp):
    nin = 1
    ufunc = np.arcsinh

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (1 / ew.sqrt(ew.square(inputs[0]) + 1),)


@attrs.frozen
class ArcCosh(ScalarOp):
    nin = 1
    ufunc = np.arccosh

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x = inputs[0]
        return (1 / ew.sqrt((x - 1) * (x + 1)),)


@attrs.frozen
class ArcTanh(ScalarOp):
    nin = 1
    ufunc = np.arctanh

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (1 / (1 - ew.square(inputs[0])),)


# --- complex numbers ----------------------------------------------------------------------
# Derivatives of complex values follow JAX: the pullback multiplies a cotangent by each
# partial without conjugating it, so for a real-valued f of a complex z, grad(f, z) is
# df/dx - i df/dy (PyTensor's convention is its conjugate, df/dx + i df/dy). Ops whose
# output is real (`Abs`, `Real`, `Imag`) give the partial P with d out = Re(P dz); the
# pullback's cast of a complex cotangent to a real input keeps the real part, as JAX's.
@attrs.frozen
class Real(ScalarOp):
    """The real part of a complex value, as `numpy.real` (of a real dtype's width)."""

    nin = 1

    def impl(self, *inputs: Array) -> Array:
        return np.real(inputs[0]).copy()

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (_constant(inputs[0], 1),)


@attrs.frozen
class Imag(ScalarOp):
    """The imaginary part of a complex value, as `numpy.imag`: d Im(z) = Re(-i dz)."""

    nin = 1

    def impl(self, *inputs: Array) -> Array:
        return np.imag(inputs[0]).copy()

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (_constant(inputs[0], -1j),)


@attrs.frozen
class Complex(ScalarOp):
    """`real + i imag` from two real values, exactly (infinities and signed zeros kept,
    which `real + 1j * imag` loses), in NumPy's promotion of both with complex64
    (complex64 for float32 parts, complex128 for float64 ones)."""

    nin = 2

    def impl(self, *inputs: Array) -> Array:
        real, imag = np.broadcast_arrays(*inputs)
        result = np.empty(real.shape, dtype=self.output_dtype(real.dtype.name, imag.dtype.name))
        result.real = real
        result.imag = imag
        return result

    def output_dtype(self, *dtypes: str) -> str:
        if any(is_complex(dtype) for dtype in dtypes):
            raise DTypeError(f"Complex: real and imaginary parts must be real, got {dtypes}")
        return np.result_type(*dtypes, np.complex64).name

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (_constant(output, 1), _constant(output, 1j))
