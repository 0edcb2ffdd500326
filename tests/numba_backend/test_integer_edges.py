"""Integer edge values compiled as NumPy computes them: `INT_MIN % -1` and
`INT_MIN // -1` (which x86 division traps, killing the interpreter with SIGFPE), and
integer powers with a negative exponent (refused, as NumPy refuses them)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Variable, evaluate
from numba_backend import function


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8"])
def test_division_and_remainder_by_minus_one_at_int_min(dtype: str) -> None:
    smallest = np.iinfo(dtype).min
    vector, scalar = pt.vector("v", dtype=dtype), pt.scalar("s", dtype=dtype)
    minus_one = pt.constant(np.array(-1, dtype=dtype))
    outputs = [
        pt.mod(vector, -1), pt.int_div(vector, -1), pt.mod(scalar, minus_one),
        pt.int_div(scalar, minus_one), pt.mod(vector, scalar), pt.int_div(vector, scalar),
    ]
    values: dict[Variable, Any] = {
        vector: np.array([smallest, -7, 7, 0], dtype=dtype), scalar: np.array(-1, dtype)
    }
    got = function([vector, scalar], outputs)(*values.values())
    with np.errstate(over="ignore"):
        expected = evaluate(outputs, values)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)
    assert got[0][0] == 0 and got[1][0] == smallest  # NumPy's answers


def test_integer_powers_refuse_negative_exponents_everywhere() -> None:
    base = pt.vector("base", dtype="int64")
    exponent = pt.vector("exponent", dtype="int64")
    power = base**exponent
    values: dict[Variable, Any] = {base: np.array([2, 3]), exponent: np.array([1, -1])}
    with pytest.raises(ValueError, match="negative integer powers"):
        evaluate([power], values)
    with pytest.raises(ValueError, match="negative integer powers"):
        function([base, exponent], power)(*values.values())
    np.testing.assert_array_equal(
        function([base, exponent], power)(np.array([2, 3]), np.array([3, 0])), [8, 1]
    )
