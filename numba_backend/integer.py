"""Integer powers with NumPy's refusal of negative exponents.

A plain loop would silently give 0 for `2 ** -1` on integers, where NumPy (and so
`evaluate`) raises; the generated code calls `int_power` for integer dtypes only. (The
other integer differences, `INT_MIN // -1` and `INT_MIN % -1`, which x86 division turns
into SIGFPE, are guarded by the expressions in `numba_backend.scalar_ops`.)
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def int_power(x: int, y: int) -> int:
    """`x ** y`, refusing negative exponents as NumPy does."""
    if y < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")
    result: int = np.power(x, y)
    return result
