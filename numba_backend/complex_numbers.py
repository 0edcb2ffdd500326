"""Complex division, powers, signs and comparisons as NumPy computes them.

numba's complex `/` is CPython's, which raises ZeroDivisionError for a zero divisor
(even under `error_model='numpy'`), where NumPy gives inf or nan; numba's complex power
is exp(b log a), where NumPy gives 0 ** b = 0 for Re(b) > 0 and multiplies out small
integer powers (exact, as NumPy's); numba's sign of an infinite value is nan; numba
has no order of complex values, which NumPy orders lexicographically. Generated code
calls these functions for complex operands.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, error_model="numpy")
def complex_divide(x: complex, y: complex) -> complex:
    """x / y by Smith's method, as NumPy's complex divide loop (a zero divisor divides
    each part by 0.0: inf or nan parts)."""
    x_real, x_imag, y_real, y_imag = x.real, x.imag, y.real, y.imag
    if abs(y_real) >= abs(y_imag):
        if y_real == 0 and y_imag == 0:
            return complex(x_real / abs(y_real), x_imag / abs(y_real))
        ratio = y_imag / y_real
        scale = 1.0 / (y_real + y_imag * ratio)
        return complex((x_real + x_imag * ratio) * scale, (x_imag - x_real * ratio) * scale)
    ratio = y_real / y_imag
    scale = 1.0 / (y_imag + y_real * ratio)
    return complex((x_real * ratio + x_imag) * scale, (x_imag * ratio - x_real) * scale)


@numba.njit(cache=True, error_model="numpy")
def _multiply(x: complex, y: complex) -> complex:
    """The schoolbook product, as NumPy's `cmul` (numba's `*` recomputes infinities)."""
    return complex(x.real * y.real - x.imag * y.imag, x.real * y.imag + x.imag * y.real)


@numba.njit(cache=True, error_model="numpy")
def complex_power(x: complex, y: complex) -> complex:
    """x ** y as NumPy's `npy_cpow`: 1 for y == 0; for x == 0, 0 if Re(y) > 0 else nan;
    integer y in (-100, 100) by repeated squaring; otherwise exp(y log x)."""
    if y.real == 0 and y.imag == 0:
        return complex(1.0, 0.0)
    if x.real == 0 and x.imag == 0:
        return complex(0.0, 0.0) if y.real > 0 else complex(np.nan, np.nan)
    if y.imag == 0 and -100 < y.real < 100 and int(y.real) == y.real:
        n = abs(int(y.real))
        if n == 1:
            result = complex(x.real, x.imag)
        elif n == 2:
            result = _multiply(x, x)
        elif n == 3:
            result = _multiply(x, _multiply(x, x))
        else:
            result = complex(1.0, 0.0)
            power = complex(x.real, x.imag)
            mask = 1
            while True:
                if n & mask:
                    result = _multiply(result, power)
                mask <<= 1
                if n < mask:
                    break
                power = _multiply(power, power)
        return complex_divide(complex(1.0, 0.0), result) if y.real < 0 else result
    return complex(np.power(x, y))


@numba.njit(cache=True, error_model="numpy")
def complex_sign(x: complex) -> complex:
    """x / |x| as NumPy's `sign`: 0 at 0, nan for nan, and for an infinite modulus the
    unit along the one infinite part (nan if both are)."""
    modulus = np.hypot(x.real, x.imag)
    if np.isnan(modulus):
        return complex(np.nan, np.nan)
    if np.isinf(modulus):
        if np.isinf(x.real):
            if np.isinf(x.imag):
                return complex(np.nan, np.nan)
            return complex(1.0 if x.real > 0 else -1.0, 0.0)
        return complex(0.0, 1.0 if x.imag > 0 else -1.0)
    if modulus == 0:
        return complex(0.0, 0.0)
    return complex(x.real / modulus, x.imag / modulus)


# NumPy's lexicographic order of complex values (CLT, CLE, CGT, CGE in its loops): by real
# part where neither imaginary part is NaN, else by imaginary part at equal real parts.
@numba.njit(cache=True)
def complex_lt(x: complex, y: complex) -> bool:
    """x < y in NumPy's order of complex values."""
    by_real = x.real < y.real and not np.isnan(x.imag) and not np.isnan(y.imag)
    return by_real or (x.real == y.real and x.imag < y.imag)


@numba.njit(cache=True)
def complex_le(x: complex, y: complex) -> bool:
    """x <= y in NumPy's order of complex values."""
    by_real = x.real < y.real and not np.isnan(x.imag) and not np.isnan(y.imag)
    return by_real or (x.real == y.real and x.imag <= y.imag)


@numba.njit(cache=True)
def complex_gt(x: complex, y: complex) -> bool:
    """x > y in NumPy's order of complex values."""
    by_real = x.real > y.real and not np.isnan(x.imag) and not np.isnan(y.imag)
    return by_real or (x.real == y.real and x.imag > y.imag)


@numba.njit(cache=True)
def complex_ge(x: complex, y: complex) -> bool:
    """x >= y in NumPy's order of complex values."""
    by_real = x.real > y.real and not np.isnan(x.imag) and not np.isnan(y.imag)
    return by_real or (x.real == y.real and x.imag >= y.imag)
