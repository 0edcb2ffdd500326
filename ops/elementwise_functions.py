"""The user-level elementwise functions (`add`, `exp`, `where`, ...): each applies an
`Elemwise` of its scalar op (`ops.scalar_ops`) after NumPy's alignment of ranks.

Python numbers are weak operands (NEP 50): `x_float32 * 2` stays float32. This module
defines `abs`, `pow`, `round` and `complex` like NumPy does, shadowing the builtins.

The scalar ops' derivatives are elementwise graphs built with these functions, so
`ops.scalar_ops` imports this module (as a whole: `import ops.elementwise_functions`),
which imports the scalar ops by name: the one import cycle of the elementwise family.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from fgraph import Variable, as_dtype
from fgraph.dtypes import is_complex
from fgraph.operators import TensorLike
from ops.convert import as_condition, as_tensor, as_tensors_weak
from ops.elemwise import map_scalar_op
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


def elemwise(scalar_op: ScalarOp, *operands: TensorLike) -> Variable:
    """Apply `scalar_op` with NumPy broadcasting (ranks left-padded) and weak scalars."""
    return map_scalar_op(scalar_op, as_tensors_weak(operands))


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


def where(cond: TensorLike, x: TensorLike, y: TensorLike) -> Variable:
    """`x` where `cond` is true (nonzero), `y` elsewhere, as `numpy.where`. The result
    dtype comes from x and y alone, so `cond` never promotes it. A Python bool `cond` is
    refused: it is what `x == y` gives (identity), never an elementwise comparison.
    `pt.where` (`ops.selection.where`) also takes `cond` alone, as NumPy: a selection."""
    condition = as_tensor(as_condition(cond, "where: cond"), name="cond")
    return map_scalar_op(Switch(), (condition, *as_tensors_weak((x, y))))


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
