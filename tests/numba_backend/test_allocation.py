"""`intrinsics.new_array` and `array_of` build their arrays as IR (`allocated`): the
arrays must be what numba's `np.empty` makes (shape, C strides, 32-byte aligned data
owned by a meminfo, writable), with its errors for negative and oversized shapes.
Strides are numba's, which for an empty array differ from NumPy's (NumPy 2 gives an
empty array zero strides)."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import pytest

from numba_backend.intrinsics import array_of, new_array


@numba.njit
def _matrix_of(rows: int, columns: int) -> Any:
    return new_array((rows, columns), np.float64)


@numba.njit
def _numba_empty(rows: int, columns: int) -> Any:
    return np.empty((rows, columns))


@numba.njit
def _narrow(length: np.int32) -> Any:
    return new_array((length, np.int16(3), 2), np.int32)


@numba.njit
def _unsigned(rows: np.uint64, columns: np.uint8) -> Any:
    return new_array((rows, columns), np.float64)


@numba.njit
def _vector(length: int) -> Any:
    return new_array(length, np.complex64)


@numba.njit
def _scalar() -> Any:
    return new_array((), np.float32)


@numba.njit
def _numbers(a: int, b: float) -> Any:
    return array_of((a, b, True), np.float64)


def _check_like_numpy(got: Any, wanted: Any) -> None:
    assert got.shape == wanted.shape and got.dtype == wanted.dtype
    assert got.strides == wanted.strides
    assert got.flags.c_contiguous and got.flags.writeable and got.flags.owndata is False
    assert got.ctypes.data % 32 == 0  # numba's preferred alignment
    got[...] = 7
    assert (got == 7).all()


@pytest.mark.parametrize(("rows", "columns"), [(3, 5), (0, 4), (4, 0), (1, 1)])
def test_new_array_is_np_empty(rows: int, columns: int) -> None:
    _check_like_numpy(_matrix_of(rows, columns), _numba_empty(rows, columns))


def test_new_array_of_narrow_lengths_vectors_and_0d() -> None:
    _check_like_numpy(_narrow(np.int32(4)), np.empty((4, 3, 2), np.int32))
    _check_like_numpy(_vector(6), np.empty(6, np.complex64))
    _check_like_numpy(_scalar(), np.empty((), np.float32))


def test_new_array_of_unsigned_lengths() -> None:
    _check_like_numpy(_unsigned(np.uint64(3), np.uint8(200)), _numba_empty(3, 200))
    with pytest.raises(ValueError, match="Cannot safely convert value to intp"):
        _unsigned(np.uint64(2**63), np.uint8(1))


def test_new_array_errors_are_numpys() -> None:
    with pytest.raises(ValueError, match="negative dimensions not allowed"):
        _matrix_of(3, -1)
    with pytest.raises(ValueError, match="negative dimensions not allowed"):
        _vector(-2)
    with pytest.raises(ValueError, match="array is too big"):
        _matrix_of(2**40, 2**40)
    with pytest.raises(ValueError, match="array is too big"):
        _matrix_of(2**31, 2**29)  # the element count fits, the bytes do not


def test_array_of_holds_the_values_cast() -> None:
    got = _numbers(3, 2.5)
    np.testing.assert_array_equal(got, [3.0, 2.5, 1.0])
    _check_like_numpy(got, np.empty(3))
