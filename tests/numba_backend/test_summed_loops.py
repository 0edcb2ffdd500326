"""A full Sum of an elementwise result nothing else reads is computed in the loop that
produces the elements: the summed array is never allocated."""

from __future__ import annotations

import numpy as np

import ops as pt
from fgraph import evaluate
from numba_backend import function


def test_sum_of_a_fused_expression_is_one_loop() -> None:
    x = pt.vector("x")
    expression = pt.exp(-x) * pt.sin(3 * x) + pt.log1p(x * x)
    compiled = function([x], expression.sum())
    entry = compiled.source.split("def fgraph_")[1]
    assert entry.count("for ") == 1 and "np.empty((n" not in entry
    values = np.linspace(0.1, 2.0, 101)
    np.testing.assert_allclose(compiled(values), evaluate([expression.sum()], {x: values})[0])


def test_a_summed_result_that_is_also_returned_is_kept() -> None:
    x = pt.matrix("x")
    expression = pt.exp(x) * 2.0
    compiled = function([x], [expression, expression.sum()])
    values = np.arange(6.0).reshape(2, 3) / 10
    elements, total = compiled(values)
    np.testing.assert_allclose(elements, np.exp(values) * 2)
    np.testing.assert_allclose(total, np.sum(np.exp(values) * 2))


def test_integer_elements_sum_in_the_sum_dtype() -> None:
    x = pt.vector("x", dtype="int8")
    total = (x * 3).sum()
    compiled = function([x], total)
    values = np.array([100, 100, 100], dtype="int8")
    (expected,) = evaluate([total], {x: values})
    result = compiled(values)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)
