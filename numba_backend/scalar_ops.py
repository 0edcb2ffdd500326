"""Scalar ops as numba expressions over scalar operands (inlined into element loops).

An expression must give NumPy's value for the op's output dtype `out_dtype`: element
loops store it into an array of that dtype, and fused bodies wrap it in `np.<dtype>(...)`.
Numba's own scalar typing differs from NumPy's (it widens small integers, and its
`np.maximum(int64, float32)` is float32), so ops that compute in their operands' common
dtype first cast every operand to the output dtype, which for them is that common
dtype: the element computation then runs in exactly the dtype NumPy's loop uses.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
from collections.abc import Iterator

from fgraph.dtypes import is_complex, is_integer, promote
from numba_backend.registry import MissingKernelError, dtype_expression
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


@functools.singledispatch
def scalar_expression(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
    """A numba expression computing `op` on scalar operands `args`, whose value is NumPy's
    once converted to `out_dtype` (the op's output dtype for the operands' dtypes)."""
    raise MissingKernelError(f"no numba scalar expression for {type(op).__name__}")


class Operand(str):
    """An operand's source text that also knows its dtype, so that conversions already
    true of it are not written (every extra call slows numba's compiler down)."""

    dtype: str

    def __new__(cls, text: str, dtype: str) -> Operand:
        operand = super().__new__(cls, text)
        operand.dtype = dtype
        return operand


def _converted(args: tuple[str, ...], dtype: str) -> tuple[str, ...]:
    """Each operand converted to `dtype`, unless it is known to have it already."""
    return tuple(
        arg if getattr(arg, "dtype", None) == dtype else f"{dtype_expression(dtype)}({arg})"
        for arg in args
    )


def _register_template(cls: type[ScalarOp], template: str, in_common_dtype: bool) -> None:
    """Register `template` (operands as `{0}`, `{1}`, ...) for `cls`; with
    `in_common_dtype`, operands are first converted to the output dtype."""

    def expression(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
        operands = _converted(args, out_dtype) if in_common_dtype else args
        return template.format(*operands)

    scalar_expression.register(cls)(expression)


_IN_COMMON_DTYPE: tuple[tuple[type[ScalarOp], str], ...] = (
    # Arithmetic: on bools, + and * give 2 and 1 where NumPy gives True, equal once stored.
    (Add, "({0} + {1})"),
    (Sub, "({0} - {1})"),
    (Mul, "({0} * {1})"),
    (Neg, "(-{0})"),
    (Reciprocal, "np.reciprocal({0})"),
    (Square, "np.square({0})"),
    (Sqrt, "np.sqrt({0})"),
    (Maximum, "np.maximum({0}, {1})"),  # NaN-propagating, as NumPy's
    (Minimum, "np.minimum({0}, {1})"),
    (Clip, "np.minimum(np.maximum({0}, {1}), {2})"),  # NumPy's definition of clip
    (BitwiseAnd, "({0} & {1})"),
    (BitwiseOr, "({0} | {1})"),
    (BitwiseXor, "({0} ^ {1})"),
    (Invert, "np.invert({0})"),  # logical not on bools
    (Floor, "np.floor({0})"),
    (Ceil, "np.ceil({0})"),
    (Trunc, "np.trunc({0})"),
    (Exp2, "np.exp2({0})"),
    (Log2, "np.log2({0})"),
    (Log10, "np.log10({0})"),
    (Tan, "np.tan({0})"),
    (ArcSin, "np.arcsin({0})"),
    (ArcCos, "np.arccos({0})"),
    (ArcTan, "np.arctan({0})"),
    (ArcTan2, "np.arctan2({0}, {1})"),
    (Sinh, "np.sinh({0})"),
    (Cosh, "np.cosh({0})"),
    (Tanh, "np.tanh({0})"),
    (ArcSinh, "np.arcsinh({0})"),
    (ArcCosh, "np.arccosh({0})"),
    (ArcTanh, "np.arctanh({0})"),
)
_AS_GIVEN: tuple[tuple[type[ScalarOp], str], ...] = (
    # Bool results from operands of any dtypes (numba compares mixed dtypes exactly).
    (EQ, "({0} == {1})"),
    (NEQ, "({0} != {1})"),
    (LogicalAnd, "(({0} != 0) & ({1} != 0))"),  # NaN is true, as in NumPy
    (LogicalOr, "(({0} != 0) | ({1} != 0))"),
    (LogicalXor, "(({0} != 0) != ({1} != 0))"),
    (LogicalNot, "({0} == 0)"),
    (IsNan, "np.isnan({0})"),  # numba's isnan/isinf/isfinite accept integers and bools
    (IsInf, "np.isinf({0})"),
    (IsFinite, "np.isfinite({0})"),
    (Second, "{1}"),
    (Real, "{0}.real"),  # of complex operands only (`real` of a real value is itself)
    (Imag, "{0}.imag"),
)
for _op_class, _template in _IN_COMMON_DTYPE:
    _register_template(_op_class, _template, in_common_dtype=True)
for _op_class, _template in _AS_GIVEN:
    _register_template(_op_class, _template, in_common_dtype=False)


@scalar_expression.register(IntDiv)
def _int_div(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
    """`//` (by zero: 0, as in NumPy). For integers, `INT_MIN // -1` is `-INT_MIN`, which
    wraps to INT_MIN as NumPy's does, instead of the division that traps (SIGFPE)."""
    x, y = _converted(args, out_dtype)
    if not is_integer(out_dtype):
        return f"({x} // {y})"
    return f"((-{x}) if {y} == -1 else ({x} // {y}))"


_ORDERINGS: dict[type[ScalarOp], tuple[str, str]] = {
    LT: ("<", "lt"), LE: ("<=", "le"), GT: (">", "gt"), GE: (">=", "ge")
}
"""Per ordering, its operator and the suffix of its `complex_numbers` function."""


def _ordering(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
    """Operands of any real dtypes compare exactly as given (numba compares mixed dtypes
    exactly); complex ones in NumPy's lexicographic order (`complex_lt`, ...), in their
    common dtype."""
    operator, suffix = _ORDERINGS[type(op)]
    if not any(is_complex(getattr(arg, "dtype", "")) for arg in args):
        return f"({args[0]} {operator} {args[1]})"
    x, y = _converted(args, promote(*(getattr(arg, "dtype", "complex128") for arg in args)))
    return f"complex_{suffix}({x}, {y})"


for _op_class in _ORDERINGS:
    scalar_expression.register(_op_class)(_ordering)


@scalar_expression.register(Abs)
def _abs(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
    """`np.abs`: in the output dtype for real operands, on the operand itself for a
    complex one (whose modulus is real: converting it to its real output dtype first
    would drop the imaginary part)."""
    (x,) = args
    if is_complex(getattr(x, "dtype", "")):
        return f"np.abs({x})"
    return f"np.abs({_converted(args, out_dtype)[0]})"


@scalar_expression.register(Sign)
def _sign(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
    """`np.sign`; of complex values NumPy's x / |x| (`complex_sign`)."""
    (x,) = _converted(args, out_dtype)
    return f"complex_sign({x})" if is_complex(out_dtype) else f"np.sign({x})"


@scalar_expression.register(Complex)
def _complex(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
    """`complex(real, imag)` with both parts in the output's float dtype (numba's
    `complex` gives complex128; the store or the fused body's cast narrows it)."""
    part_dtype = "float32" if out_dtype == "complex64" else "float64"
    real, imag = _converted(args, part_dtype)
    return f"complex({real}, {imag})"


@scalar_expression.register(TrueDiv)
def _true_div(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
    """`/` in the output dtype; complex quotients by NumPy's algorithm (numba's raises
    ZeroDivisionError for a zero divisor)."""
    x, y = _converted(args, out_dtype)
    return f"complex_divide({x}, {y})" if is_complex(out_dtype) else f"({x} / {y})"


@scalar_expression.register(Mod)
def _mod(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
    """NumPy's `mod`; for integers a divisor of -1 gives 0 without dividing (INT_MIN % -1
    traps with SIGFPE)."""
    x, y = _converted(args, out_dtype)
    if not is_integer(out_dtype):
        return f"np.mod({x}, {y})"
    return f"(({x} - {x}) if {y} == -1 else np.mod({x}, {y}))"


@scalar_expression.register(Pow)
def _pow(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
    """`np.power`; integer powers refuse negative exponents, as NumPy does; complex ones
    follow NumPy's special cases (`complex_power`)."""
    x, y = _converted(args, out_dtype)
    if is_complex(out_dtype):
        return f"complex_power({x}, {y})"
    return f"int_power({x}, {y})" if is_integer(out_dtype) else f"np.power({x}, {y})"


VECTORIZED = {Exp: "exp", Expm1: "expm1", Log: "log", Log1p: "log1p", Sin: "sin", Cos: "cos"}
"""Ops with a vectorizable `vecmath` version for float32 and float64 (NumPy's otherwise:
complex operands)."""
_VECMATH_SUFFIX = {"float64": "f64", "float32": "f32"}


SEQUENTIAL: contextvars.ContextVar[bool] = contextvars.ContextVar("sequential", default=False)
"""Set while generating code that runs one element at a time (a loop body of scalars,
where each step needs the last): there libm's functions, which branch on the argument,
beat vecmath's branch-free ones, whose only advantage is to vectorize."""


@contextlib.contextmanager
def sequential_code() -> Iterator[None]:
    """Generate libm calls instead of vecmath ones inside this block (see SEQUENTIAL)."""
    token = SEQUENTIAL.set(True)
    try:
        yield
    finally:
        SEQUENTIAL.reset(token)


def _vecmath(function: str, x: str, dtype: str) -> str:
    """`function` of `x` (already of `dtype`): vecmath's for float32/float64, whose
    loops vectorize, else (complex operands, sequential code) NumPy's."""
    suffix = _VECMATH_SUFFIX.get(dtype)
    if suffix is None or SEQUENTIAL.get():
        return f"np.{function}({x})"
    return f"{function}_{suffix}({x})"


def _elementary(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
    (x,) = _converted(args, out_dtype)
    return _vecmath(VECTORIZED[type(op)], x, out_dtype)


for _op_class in VECTORIZED:
    scalar_expression.register(_op_class)(_elementary)


@scalar_expression.register
def _cast(op: Cast, args: tuple[str, ...], out_dtype: str) -> str:
    """To bool by comparison with zero (NaN is true); otherwise NumPy's C-style conversion
    (truncation toward zero, wrap-around for integers)."""
    if op.dtype == "bool":
        return f"({args[0]} != 0)"
    return _converted(args, op.dtype)[0]


@scalar_expression.register
def _switch(op: Switch, args: tuple[str, ...], out_dtype: str) -> str:
    """Both branches converted to the output dtype so numba types the choice as NumPy's
    `where` does; a condition is true when nonzero (NaN included)."""
    condition, x, y = args
    x, y = _converted((x, y), out_dtype)
    return f"({x} if {condition} != 0 else {y})"


@scalar_expression.register
def _round(op: Round, args: tuple[str, ...], out_dtype: str) -> str:
    """NumPy's algorithm: `rint(x * 10**d) / 10**d` (with 10**-d the other way round for
    negative `d`) in the input's float dtype, in float64 for integers (which only change
    for negative `d`, and go back to their dtype)."""
    (x,) = args
    integer = out_dtype != "bool" and not out_dtype.startswith(("float", "complex"))
    if op.decimals == 0 or (integer and op.decimals > 0):
        return x if integer else f"np.rint({x})"
    compute = "float64" if integer else out_dtype
    (value,) = _converted((x,), compute)
    (factor,) = _converted((repr(10.0 ** abs(op.decimals)),), compute)
    if op.decimals > 0:
        return f"(np.rint({value} * {factor}) / {factor})"
    return f"(np.rint({value} / {factor}) * {factor})"


@scalar_expression.register
def _sigmoid(op: Sigmoid, args: tuple[str, ...], out_dtype: str) -> str:
    """The op's stable form: with d = exp(-|x|), 1 / (1 + d) for x >= 0, else d / (1 + d)."""
    (x,) = _converted(args, out_dtype)
    (one,) = _converted(("1",), out_dtype)
    decay = _vecmath("exp", f"(-np.abs({x}))", out_dtype)
    return f"(({one} if {x} >= 0 else {decay}) / ({one} + {decay}))"


@scalar_expression.register
def _softplus(op: Softplus, args: tuple[str, ...], out_dtype: str) -> str:
    """The op's stable form: log1p(exp(-|x|)) + max(x, 0)."""
    (x,) = _converted(args, out_dtype)
    (zero,) = _converted(("0",), out_dtype)
    decay = _vecmath("exp", f"(-np.abs({x}))", out_dtype)
    return f"({_vecmath('log1p', decay, out_dtype)} + np.maximum({x}, {zero}))"


@scalar_expression.register
def _log1mexp(op: Log1mexp, args: tuple[str, ...], out_dtype: str) -> str:
    """The op's split: log(-expm1(x)) above -log(2), log1p(-exp(x)) below."""
    (x,) = _converted(args, out_dtype)
    (split,) = _converted((repr(-math.log(2.0)),), out_dtype)
    near_zero = _vecmath("log", f"(-{_vecmath('expm1', x, out_dtype)})", out_dtype)
    far = _vecmath("log1p", f"(-{_vecmath('exp', x, out_dtype)})", out_dtype)
    return f"({near_zero} if {x} > {split} else {far})"


@scalar_expression.register
def _erf(op: Erf, args: tuple[str, ...], out_dtype: str) -> str:
    """In float64, as the op's `math.erf` reference (stored in the output dtype)."""
    return f"math.erf({_converted(args, 'float64')[0]})"


@scalar_expression.register
def _erfc(op: Erfc, args: tuple[str, ...], out_dtype: str) -> str:
    """In float64, as the op's `math.erfc` reference (stored in the output dtype)."""
    return f"math.erfc({_converted(args, 'float64')[0]})"
