"""A full Sum of an elementwise result nothing else reads is computed in the loop that
produces the elements: the summed array is never allocated."""

from __future__ import annotations

import numpy as np
import pytest

import ops as pt
from fgraph import evaluate
from numba_backend import function


def test_sum_of_a_fused_expression_is_one_loop() -> None:
    x = pt.vector("x")
    expression = pt.exp(-x) * pt.sin(3 * x) + pt.log1p(x * x)
    compiled = function([x], expression.sum())
    entry = compiled.source.split("def fgraph_")[1]
    assert entry.count("for ") == 0 and entry.count("nest_") == 1  # one element nest
    assert compiled.source.count("for ") == 1 and "new_array((n" not in compiled.source
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


@pytest.mark.parametrize("parallel", [False, True])
def test_sums_over_trailing_axes_are_computed_in_the_producing_loop(parallel: bool) -> None:
    m, t = pt.matrix("m"), pt.tensor("t", shape=(None, None, None))
    row, k, n = pt.vector("row"), pt.matrix("k", dtype="int8"), pt.matrix("n")
    outputs = [
        (pt.exp(m) * 2).sum(axis=1),
        (pt.sin(t) * row).sum(axis=(1, 2)),
        (k * 3).sum(axis=1),  # int8 elements, int64 sums
        (pt.exp(n) + 1).sum(axis=0),  # a leading axis: a separate reduction
    ]
    compiled = function([m, t, row, k, n], outputs, parallel=parallel)
    entry = compiled.source.split("def fgraph_")[1]
    # One array per output, and only the leading-axis sum's input besides.
    assert entry.count("new_array((") == len(outputs) + 1
    rng = np.random.default_rng(3)
    values = [
        rng.normal(size=(300, 257)),  # above the parallel threshold
        rng.normal(size=(4, 3, 6)),
        rng.normal(size=6),
        rng.integers(-100, 100, size=(3, 50)).astype(np.int8),
        rng.normal(size=(5, 4)),
    ]
    wanted = evaluate(outputs, dict(zip([m, t, row, k, n], values)))
    for got, expected in zip(compiled(*values), wanted):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12)
