"""`library_function`: how the backend's own numba helpers (special functions, LAPACK
calls, random streams) are compiled."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba

_Function = TypeVar("_Function", bound=Callable[..., Any])


def library_function(function: _Function) -> _Function:
    """`numba.njit` with the options every helper shares: cached on disk (compiled once
    per machine and signature, then linked into each generated module), no GIL, NumPy's
    error model (division by zero gives inf, not an exception). Typed as the function it
    compiles, so that calls between helpers keep their types for mypy."""
    compiled = numba.njit(cache=True, nogil=True, error_model="numpy")(function)
    return cast(_Function, compiled)
