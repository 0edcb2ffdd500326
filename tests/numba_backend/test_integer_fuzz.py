"""Random integer expressions over edge values (INT_MIN, INT_MAX, -1, 0, 1), inputs of
unknown length, compiled serial and parallel: the same numbers as the reference
evaluator, and never a crash of the interpreter (x86 division traps on INT_MIN // -1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ops as pt
from fgraph import Variable, evaluate
from numba_backend import function
from numba_backend.loops import PARALLEL_MIN_SIZE

BINARY: tuple[Callable[[Variable, Variable], Variable], ...] = (
    pt.add, pt.sub, pt.mul, pt.int_div, pt.mod, pt.maximum, pt.minimum,
)
UNARY: tuple[Callable[[Variable], Variable], ...] = (pt.neg, pt.abs, lambda a: a // -1,
                                                      lambda a: a % -1)


def edge_values(dtype: str, size: int) -> Any:
    info = np.iinfo(dtype)
    edges = np.array([info.min, info.max, -1, 0, 1, info.min + 1, 7, -7], dtype=dtype)
    return np.resize(edges, size)


@settings(max_examples=12)
@given(
    dtype=st.sampled_from(["int8", "int16", "int32", "int64"]),
    other=st.sampled_from(["int8", "int16", "int32", "int64"]),
    plan=st.lists(st.tuples(st.integers(0, len(BINARY) - 1), st.integers(0, len(UNARY) - 1),
                            st.booleans()), min_size=1, max_size=4),
    parallel=st.booleans(),
    shift=st.integers(0, 7),
)
def test_integer_edges_compile_to_the_reference(
    dtype: str, other: str, plan: list[tuple[int, int, bool]], parallel: bool, shift: int
) -> None:
    a, b = pt.vector("a", dtype=dtype), pt.vector("b", dtype=other)  # mixed: promoted
    value: Variable = a
    for binary, unary, swap in plan:
        value = BINARY[binary](b, value) if swap else BINARY[binary](value, b)
        value = UNARY[unary](value)
    size = PARALLEL_MIN_SIZE + 3 if parallel else 40
    values = [edge_values(dtype, size), np.roll(edge_values(other, size), shift)]
    with np.errstate(all="ignore"):
        (expected,) = evaluate([value], dict(zip([a, b], values)))
    got = function([a, b], value, parallel=parallel)(*values)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
