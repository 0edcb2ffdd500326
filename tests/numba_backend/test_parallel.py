"""`function(..., parallel=True)`: large element loops run with `numba.prange`, small ones
stay serial, and the values are those of the reference evaluator either way."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Variable, evaluate
from numba_backend import CompiledFunction, function
from numba_backend.loops import CHUNKS, PARALLEL_MIN_SIZE

Array = np.ndarray[Any, np.dtype[Any]]
LARGE = PARALLEL_MIN_SIZE + 7  # not a multiple of the chunk count


@pytest.fixture(scope="module")
def compiled() -> tuple[CompiledFunction[Any], list[Variable]]:
    x, m, k = pt.vector("x"), pt.matrix("m"), pt.vector("k", dtype="int32")
    row = pt.vector("row")
    outputs = [
        (pt.exp(-x) * pt.sin(3 * x) + pt.log1p(x * x)).sum(),  # summed element loop
        pt.exp(m) * row[None, :] - 1,  # 2-d loop, broadcast row
        (k * 3).sum(),  # integer sum: no reassociation
        (m * 2).sum(axis=1),  # a reduction (serial) of an element loop
    ]
    return function([x, m, k, row], outputs, parallel=True), outputs


def _inputs(size: int, columns: int) -> tuple[Array, ...]:
    rng = np.random.default_rng(size)
    return (
        rng.uniform(0.0, 3.0, size),
        rng.normal(size=(size // columns, columns)),
        rng.integers(-1000, 1000, size).astype(np.int32),
        rng.normal(size=columns),
    )


@pytest.mark.parametrize("size", [0, 1, 100, LARGE, 3 * CHUNKS * 1000 + 5])
def test_parallel_matches_the_reference(
    compiled: tuple[CompiledFunction[Any], list[Variable]], size: int
) -> None:
    function_, outputs = compiled
    values = _inputs(size, 31)
    got = function_(*values)
    wanted = evaluate(outputs, dict(zip(function_.inputs, values)))
    for result, expected in zip(got, wanted):
        assert result.dtype == expected.dtype
        np.testing.assert_allclose(result, expected, rtol=1e-11, atol=1e-11)


def test_parallel_loops_are_guarded_by_size(
    compiled: tuple[CompiledFunction[Any], list[Variable]],
) -> None:
    source = compiled[0].source
    # Two summed loops (float and integer) and two 2-d loops (`exp(m) * row - 1`, and
    # `m * 2` before its row sums, which are a reduction and stay serial).
    assert source.count("numba.prange(") == 4
    assert source.count(f">= {PARALLEL_MIN_SIZE}:") == 4
    assert "parallel={'prange': True" in source


def test_inplace_outputs_in_parallel() -> None:
    x = pt.vector("x")
    doubled = pt.exp(x) * 2
    compiled = function([x], [doubled + 1, doubled.sum()], parallel=True)
    values = np.linspace(-1.0, 1.0, LARGE)
    kept = values.copy()
    elements, total = compiled(values)
    np.testing.assert_allclose(elements, np.exp(kept) * 2 + 1)
    np.testing.assert_allclose(total, np.sum(np.exp(kept) * 2))
    np.testing.assert_array_equal(values, kept)


def test_serial_and_parallel_are_compiled_and_cached_apart() -> None:
    x = pt.vector("x")
    serial = function([x], pt.exp(x) + 1)
    parallel = function([x], pt.exp(x) + 1, parallel=True)
    assert "prange" not in serial.source and "prange" in parallel.source
    assert serial.graph == parallel.graph
    restored = pickle.loads(pickle.dumps(parallel))
    assert restored.parallel and restored.source == parallel.source
    values = np.linspace(0.0, 1.0, LARGE)
    np.testing.assert_allclose(restored(values), np.exp(values) + 1)


def test_slices_of_elementwise_results_compile_in_parallel() -> None:
    """A one-entry slice was written `x[1:,]`, whose tuple index numba's parfor lowering
    could not cast: these three graphs did not compile with parallel=True."""
    x = pt.vector("x")
    value = np.arange(7.0)
    outputs = [pt.cos(x)[1:], (x * 2)[1:].sum(), pt.set_subtensor((x * 2)[5:], 0.0)]
    got = function([x], outputs, parallel=True)(value)
    for g, e in zip(got, evaluate(outputs, {x: value})):
        np.testing.assert_allclose(g, e)


@pytest.mark.parametrize("length", [1, 2, 3, 4, 6])
def test_negative_slices_past_the_start_in_parallel(length: int) -> None:
    """numba's parallel array analysis sized `x[-5:]` of 3 elements as 2 (and `x[1:][-3:]`
    of 3 as 1), data included: found by the loop fuzzer through a loop's per-step output.
    Only the outlined prange loops are compiled with numba's parallel options now."""
    x = pt.vector("x")
    outputs = [x[-5:], x[-5:].sum(), x[1:][-3:], pt.exp(x)[-3:]]
    value = np.arange(1.0, length + 1.0)
    for parallel in (False, True):
        got = function([x], outputs, parallel=parallel)(value)
        for g, e in zip(got, evaluate(outputs, {x: value})):
            np.testing.assert_allclose(g, e, rtol=1e-15)


@pytest.mark.parametrize("steps", [1, 2, 3, 4])
def test_a_loops_per_step_rows_sliced_from_the_end_in_parallel(steps: int) -> None:
    """Where the fuzzer met the slice above: a loop's per-step rows sliced `[-3:]` and
    summed, in a function with an element loop, for lengths on both sides of 3."""
    n, first = pt.scalar("n", dtype="int64"), pt.vector("first")
    rows = pt.scan(lambda previous: previous * 2, outputs_info=[first], n_steps=n)
    outputs = [rows[-3:].sum(axis=0), pt.tanh(first)]
    value = np.array([0.5, 1.0])
    wanted = sum(value * 2.0**k for k in range(max(1, steps - 2), steps + 1))
    for parallel in (False, True):
        got = function([n, first], outputs, parallel=parallel)(np.int64(steps), value)
        np.testing.assert_allclose(got[0], wanted)
