"""Dtypes as canonical NumPy names, and NumPy's promotion rules over them.

A dtype is held as a plain string ("float64", "int32", "bool") so that types are
cheap to hash, print and serialize, and equal dtypes are equal strings.
"""

from __future__ import annotations

import functools
from typing import Final

import numpy as np
import numpy.typing as npt

from fgraph.errors import DTypeError

BOOL_DTYPES: Final = ("bool",)
INT_DTYPES: Final = ("int8", "int16", "int32", "int64")
UINT_DTYPES: Final = ("uint8", "uint16", "uint32", "uint64")
FLOAT_DTYPES: Final = ("float16", "float32", "float64")
COMPLEX_DTYPES: Final = ("complex64", "complex128")
ALL_DTYPES: Final = BOOL_DTYPES + INT_DTYPES + UINT_DTYPES + FLOAT_DTYPES + COMPLEX_DTYPES




_DTYPE_NAMES: Final = frozenset(ALL_DTYPES)


def as_dtype(dtype: npt.DTypeLike) -> str:
    """Return the canonical name of `dtype`, raising DTypeError for unsupported ones."""
    if isinstance(dtype, str) and dtype in _DTYPE_NAMES:
        return dtype
    try:
        name = np.dtype(dtype).name
    except TypeError as error:
        raise DTypeError(f"{dtype!r} is not a dtype; expected one of {ALL_DTYPES}") from error
    if name not in ALL_DTYPES:
        raise DTypeError(f"dtype {name!r} is not supported; expected one of {ALL_DTYPES}")
    return name


@functools.lru_cache(maxsize=4096)
def promote(*dtypes: str) -> str:
    """The dtype NumPy gives an elementwise operation on arrays of these dtypes."""
    return np.result_type(*(np.dtype(d) for d in dtypes)).name


def is_bool(dtype: str) -> bool:
    return dtype in BOOL_DTYPES


def is_integer(dtype: str) -> bool:
    """True for signed and unsigned integers (not bool)."""
    return dtype in INT_DTYPES or dtype in UINT_DTYPES


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_DTYPES


def is_complex(dtype: str) -> bool:
    return dtype in COMPLEX_DTYPES


def is_inexact(dtype: str) -> bool:
    """Floats and complexes: the dtypes that carry gradients."""
    return is_float(dtype) or is_complex(dtype)


def can_cast_safely(from_dtype: str, to_dtype: str) -> bool:
    """Whether every value of `from_dtype` is representable in `to_dtype` (NumPy 'safe')."""
    return bool(np.can_cast(np.dtype(from_dtype), np.dtype(to_dtype), casting="safe"))
