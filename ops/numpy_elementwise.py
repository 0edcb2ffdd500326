"""NumPy's and PyTensor's elementwise functions built from existing elementwise ops:
`deg2rad`, `rad2deg`, `nan_to_num`, `ceil_intdiv`.

Being `Elemwise` compositions they fuse into one loop with their neighbours, compile
with the scalar expressions of their parts and differentiate through them. Each keeps
the dtype NumPy's function gives, and NumPy's rounding where it is observable.
"""

from __future__ import annotations

import numpy as np

from fgraph import DTypeError, Variable
from fgraph.dtypes import is_inexact
from fgraph.operators import TensorLike
from ops.convert import as_tensor, as_tensors_weak, constant
from ops.elementwise_functions import add, cast, eq, int_div, isnan, mod, mul, neq, where


def _unary_float_dtype(variable: Variable, name: str) -> str:
    """The dtype NumPy's real unary float functions give: floats keep theirs, bool and
    int8 give float16, int16 float32, wider integers float64; complex has no loop."""
    if np.dtype(variable.dtype).kind == "c":
        raise DTypeError(f"{name}: not defined for {variable.dtype} (NumPy has no complex loop)")
    return np.result_type(np.dtype(variable.dtype), np.float16).name


def _scaled(x: TensorLike, numerator: float, denominator: float, name: str) -> Variable:
    """x * (numerator / denominator) with the factor rounded in the result's dtype as
    NumPy's loops round it (float16 computes in float32, as NumPy's half loops do)."""
    variable = as_tensor(x, name=name)
    dtype = _unary_float_dtype(variable, name)
    working = "float32" if dtype == "float16" else dtype
    factor = np.asarray(numerator, dtype=working) / np.asarray(denominator, dtype=working)
    scaled = mul(cast(variable, working), constant(factor))
    return cast(scaled, dtype)


def deg2rad(x: TensorLike) -> Variable:
    """Degrees to radians, x * (pi / 180), as `numpy.deg2rad` (integers give NumPy's
    float dtype: float16 for int8 and bool)."""
    return _scaled(x, np.pi, 180.0, "deg2rad")


def rad2deg(x: TensorLike) -> Variable:
    """Radians to degrees, x * (180 / pi), as `numpy.rad2deg`."""
    return _scaled(x, 180.0, np.pi, "rad2deg")


def nan_to_num(
    x: TensorLike, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Variable:
    """`x` with NaN replaced by `nan` and infinities by `posinf` / `neginf`, as
    `numpy.nan_to_num`: by default 0, the largest finite value of `x`'s dtype and the
    most negative one. The replacements are converted to `x`'s dtype; integers and
    booleans come back unchanged. The derivative passes where `x` is finite and is 0
    at the replaced elements. Complex input is not supported."""
    variable = as_tensor(x, name="nan_to_num")
    if np.dtype(variable.dtype).kind == "c":
        raise DTypeError(f"nan_to_num: complex input ({variable.dtype}) is not supported")
    if not is_inexact(variable.dtype):
        return variable
    info = np.finfo(variable.dtype)
    largest = info.max if posinf is None else posinf
    smallest = info.min if neginf is None else neginf
    with np.errstate(over="ignore"):  # a replacement beyond the dtype's range is +-inf
        value_of_nan, value_of_posinf, value_of_neginf = (
            constant(np.asarray(value).astype(variable.dtype))
            for value in (nan, largest, smallest)
        )
    finite_or_nan = where(eq(variable, np.inf), value_of_posinf, variable)
    finite_or_nan = where(eq(variable, -np.inf), value_of_neginf, finite_or_nan)
    return where(isnan(variable), value_of_nan, finite_or_nan)


def ceil_intdiv(a: TensorLike, b: TensorLike) -> Variable:
    """ceil(a / b) computed exactly with integer division, as PyTensor's `ceil_intdiv`:
    `a // b` plus one where the division leaves a remainder (division by zero gives 0,
    as integer `//` does). The dtype is that of `a // b`; the derivative is zero."""
    x, y = as_tensors_weak([a, b], "ceil_intdiv")
    quotient = int_div(x, y)
    return add(quotient, cast(neq(mod(x, y), 0), quotient.dtype))
