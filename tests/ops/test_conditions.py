"""Conditions: `variable == value` is identity and gives a Python bool, so every op that
takes a tensor condition refuses a bool (pointing to `pt.eq` / `pt.neq`) instead of
silently selecting one branch; `pt.switch` is PyTensor's name for `pt.where`."""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
import pytest

import ops as pt
from fgraph import Variable, evaluate
from tests.ops.checks import run

CONDITION_OPS: dict[str, Callable[[Variable, bool], Variable]] = {
    "where": lambda a, cond: pt.where(cond, 1.0, a),
    "switch": lambda a, cond: pt.switch(cond, 1.0, a),
    "logical_and": lambda a, cond: pt.logical_and(cond, a > 1),
    "logical_or": lambda a, cond: pt.logical_or(a > 1, cond),
    "logical_xor": lambda a, cond: pt.logical_xor(cond, a > 1),
    "logical_not": lambda a, cond: pt.logical_not(cond),
    "&": lambda a, cond: cond & (a > 1),
    "|": lambda a, cond: (a > 1) | cond,
    "^": lambda a, cond: cond ^ (a > 1),
}


@pytest.mark.parametrize("name", sorted(CONDITION_OPS))
@pytest.mark.parametrize("comparison", ["==", "!="])
def test_a_bool_from_comparing_a_variable_is_refused(name: str, comparison: str) -> None:
    a = pt.vector("a")
    # operator.eq, not `a == 0`: mypy --strict already rejects the literal comparison
    cond = operator.eq(a, 0) if comparison == "==" else operator.ne(a, 0)
    assert isinstance(cond, bool)
    with pytest.raises(TypeError, match=r"tensor condition, got the Python bool.*pt\.eq"):
        CONDITION_OPS[name](a, cond)


def test_where_with_an_elementwise_comparison_matches_numpy() -> None:
    values = np.array([0.0, 2.0])
    expected = np.where(values == 0, 1.0, values)
    for select in (pt.where, pt.switch):
        got = run(lambda a: select(pt.eq(a, 0), 1.0, a), [values])
        np.testing.assert_array_equal(got, expected)
    got = run(lambda a: pt.switch(pt.neq(a, 0), a, -1.0), [values])
    np.testing.assert_array_equal(got, [-1.0, 2.0])


def test_a_constant_condition_is_written_as_a_constant() -> None:
    a = pt.vector("a")
    (got,) = evaluate([pt.where(pt.constant(False), 1.0, a)], {a: np.array([0.0, 2.0])})
    np.testing.assert_array_equal(got, [0.0, 2.0])


def test_integer_operands_of_bitwise_ops_are_still_accepted() -> None:
    got = run(lambda a: (a & 6) | 1, [np.array([3, 4], dtype="int64")])
    np.testing.assert_array_equal(got, [3, 5])


def test_truth_value_error_names_ops_that_exist() -> None:
    a = pt.vector("a")
    with pytest.raises(TypeError, match="no truth value") as error:
        bool(a > 0)
    for name in ("where", "switch", "eq", "neq"):
        assert f"pt.{name}" in str(error.value)
        assert hasattr(pt, name)
