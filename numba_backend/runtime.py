"""Helpers that generated modules import: decisions numba makes when it types a call,
which the generated source cannot make because it does not know array layouts."""

from __future__ import annotations

from typing import Any

import numpy as np
from numba.extending import overload


def blas_operand(array: Any) -> Any:
    """`array` itself when BLAS can read it (C or Fortran order: a transposed matrix is
    Fortran order), else a C-contiguous copy. Only meaningful inside compiled code."""
    return np.ascontiguousarray(array)


# numba matches the typing function's parameters against the implementation's, so both
# are lambdas (annotations would count as a difference).
overload(blas_operand)(
    lambda array: (
        (lambda array: array)
        if getattr(array, "layout", "A") in ("C", "F")
        else (lambda array: np.ascontiguousarray(array))
    )
)
