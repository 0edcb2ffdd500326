"""sort, argsort (stable) and searchsorted: values against NumPy along every axis,
gradients through sort, compiled parity, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import DTypeError, ShapeError, Variable, evaluate
from numba_backend import function
from tests.ops.checks import check_pullback, check_pushforward

RNG = np.random.default_rng(3)
TIES = np.array([[3.0, 1.0, 2.0, 1.0], [0.0, -1.0, 5.0, 5.0], [2.0, 2.0, 2.0, 2.0]])


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_values_match_numpy_and_compiled_code(axis: int | None) -> None:
    x = pt.matrix("x")
    v, q = pt.vector("v"), pt.matrix("q")
    outputs = [pt.sort(x, axis), pt.argsort(x, axis), pt.searchsorted(v, q),
               pt.searchsorted(v, q, side="right")]
    values: dict[Variable, Any] = {
        x: TIES, v: np.array([1.0, 2.0, 2.0, 4.0]), q: np.array([[2.0, 0.0], [5.0, 4.0]])
    }
    expected = [
        np.sort(TIES, axis), np.argsort(TIES, axis, kind="stable"),
        np.searchsorted(values[v], values[q]), np.searchsorted(values[v], values[q], "right"),
    ]
    for got, want in zip(evaluate(outputs, values), expected):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(function([x, v, q], outputs)(*values.values()), expected):
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype or got.dtype == np.int64


def test_sort_differentiates_through_the_order() -> None:
    distinct = [RNG.permutation(12).reshape(3, 4).astype(float) + RNG.normal(size=(3, 4)) * 0.1]
    check_pullback(lambda x: pt.sort(x, axis=0) * 2, distinct)
    check_pullback(lambda x: pt.sort(x), distinct)
    check_pushforward(lambda x: pt.sort(x, axis=None), distinct)


def test_errors() -> None:
    with pytest.raises(ShapeError, match="cannot sort a scalar"):
        pt.sort(pt.scalar("s"))
    with pytest.raises(DTypeError, match="complex values have no order"):
        pt.argsort(pt.vector("c", dtype="complex128"))
    with pytest.raises(ShapeError, match="must be a vector"):
        pt.searchsorted(pt.matrix("m"), pt.vector("v"))
    with pytest.raises(ValueError, match="side must be 'left' or 'right'"):
        side: Any = "middle"  # what an untyped caller could pass
        pt.searchsorted(pt.vector("a"), pt.vector("v"), side=side)
