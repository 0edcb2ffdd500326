"""`intrinsics.reshaped`, the generated code's reshape: NumPy's C-order reshape, a view of
a C-contiguous array (sharing its memory, as `np.reshape` shares it) and a copy of any
other, one length possibly -1. The caller checks that the sizes agree."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import pytest

from numba_backend.intrinsics import reshaped


@numba.njit
def _to_matrix(x: Any, rows: int, columns: int) -> Any:
    return reshaped(x, (rows, columns))


@numba.njit
def _flat(x: Any) -> Any:
    return reshaped(x, (-1,))


@numba.njit
def _to_scalar(x: Any) -> Any:
    return reshaped(x, ())


@numba.njit
def _through_view(x: Any) -> Any:
    return reshaped(x[::2, ::-1], (-1, 2))


@pytest.mark.parametrize("rows, columns", [(3, 4), (-1, 4), (3, -1), (12, 1), (1, -1)])
def test_a_contiguous_array_is_viewed(rows: int, columns: int) -> None:
    x = np.arange(12.0)
    result = _to_matrix(x, rows, columns)
    np.testing.assert_array_equal(result, x.reshape(rows, columns))
    assert result.flags.c_contiguous
    result[0, 0] = -1.0  # a view writes through to its source, as NumPy's reshape
    assert x[0] == -1.0


@pytest.mark.parametrize("source", [
    np.arange(12.0).reshape(3, 4).T,  # Fortran order
    np.arange(24.0).reshape(4, 6)[::2, 1::2],  # strided
    np.arange(12.0).reshape(3, 4)[:, ::-1],  # negative stride
])
def test_other_arrays_are_copied_in_c_order(source: np.ndarray[Any, Any]) -> None:
    result = _flat(source)
    np.testing.assert_array_equal(result, source.reshape(-1))
    assert result.flags.c_contiguous
    before = source.copy()
    result[0] = -1.0  # a copy: the source is left alone
    np.testing.assert_array_equal(source, before)


def test_view_of_a_view_inside_compiled_code() -> None:
    x = np.arange(24.0).reshape(6, 4)
    np.testing.assert_array_equal(_through_view(x), x[::2, ::-1].reshape(-1, 2))


def test_empty_and_single_element_shapes() -> None:
    np.testing.assert_array_equal(_to_matrix(np.zeros(0), 0, 5), np.zeros((0, 5)))
    np.testing.assert_array_equal(_to_matrix(np.zeros(0), 3, 0), np.zeros((3, 0)))
    np.testing.assert_array_equal(_flat(np.zeros((0, 3)).T), np.zeros(0))
    single = _to_scalar(np.array([[7.0]]))
    assert single.shape == () and single[()] == 7.0


def test_integer_and_boolean_dtypes_keep_theirs() -> None:
    ints = np.arange(6, dtype=np.int32).reshape(2, 3).T
    assert _flat(ints).dtype == np.int32
    np.testing.assert_array_equal(_flat(ints), ints.reshape(-1))
    flags = np.array([[True, False], [False, True]])[:, ::-1]
    np.testing.assert_array_equal(_flat(flags), flags.reshape(-1))
