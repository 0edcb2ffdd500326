"""`intrinsics.broadcast_view`, the generated code's `np.broadcast_to`: NumPy's values,
size and errors, as a view of the source (no copy) that stretches with stride 0."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import pytest

from numba_backend.intrinsics import broadcast_view


@numba.njit
def _to(x: Any, rows: int, columns: int) -> Any:
    view = broadcast_view(x, (rows, columns))
    return view.copy(), view.size, view.strides


@numba.njit
def _sum_through(x: Any, rows: int, columns: int) -> Any:
    view = broadcast_view(x, (rows, columns))
    total = 0.0
    for i in range(rows):
        for j in range(columns):
            total += view[i, j] * (i + 1)
    return total


@pytest.mark.parametrize("source, shape", [
    (np.arange(3.0), (2, 3)),  # a new leading axis
    (np.arange(2.0).reshape(2, 1), (2, 4)),  # a length-1 axis stretched
    (np.arange(6.0).reshape(2, 3), (2, 3)),  # nothing to stretch
    (np.arange(6.0).reshape(2, 3)[:, ::-1], (2, 3)),  # a strided source keeps its strides
    (np.ones((1, 1)), (0, 5)),  # stretched to nothing
])
def test_values_size_and_strides_are_numpys(source: np.ndarray[Any, Any],
                                            shape: tuple[int, int]) -> None:
    values, size, strides = _to(source, *shape)
    expected = np.broadcast_to(source, shape)
    np.testing.assert_array_equal(values, expected)
    assert size == expected.size
    if expected.size:
        assert strides == expected.strides
    assert _sum_through(source, *shape) == pytest.approx(
        float((expected * np.arange(1, shape[0] + 1)[:, None]).sum()))


@pytest.mark.parametrize("source, shape", [
    (np.arange(3.0), (2, 4)),  # 3 does not stretch to 4
    (np.arange(6.0).reshape(2, 3), (3, 3)),
    (np.arange(3.0), (-1, 3)),  # a negative length
])
def test_a_shape_it_does_not_fit_raises_as_numpy(source: np.ndarray[Any, Any],
                                                  shape: tuple[int, int]) -> None:
    with pytest.raises(ValueError):
        np.broadcast_to(source, shape)
    with pytest.raises(ValueError, match="could not be broadcast"):
        _to(source, *shape)
