"""Checks for the tests that pin PyTensor's scan behaviours (issue 18): a graph's values
through the reference evaluator on the unoptimized graph and through compiled code
(`function`, `fast_run`), both against what a NumPy loop computes; gradients of a scalar
cost through both, against central finite differences of the unoptimized cost."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fgraph import Graph, Variable, check_graph, evaluate
from numba_backend import function
from tests.ops.checks import numeric_gradient

Array = np.ndarray[Any, np.dtype[Any]]


def _compare(label: str, got: Array, want: Array, rtol: float, atol: float) -> None:
    assert got.shape == want.shape, f"{label}: shape {got.shape}, expected {want.shape}"
    assert got.dtype == want.dtype, f"{label}: dtype {got.dtype}, expected {want.dtype}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=label)


def assert_values(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    arguments: Sequence[Any],
    expected: Sequence[Any],
    *,
    rtol: float = 1e-10,
    atol: float = 1e-12,
) -> None:
    """`evaluate` of the unoptimized graph and the compiled function both give
    `expected` (shapes and dtypes included: give expected values of the right dtype)."""
    check_graph(Graph(list(inputs), list(outputs)))
    wanted = [np.asarray(value) for value in expected]
    reference = evaluate(list(outputs), dict(zip(inputs, arguments)))
    compiled = function(list(inputs), list(outputs))(*arguments)
    for number, want in enumerate(wanted):
        _compare(f"evaluate, output {number}", np.asarray(reference[number]), want, rtol, atol)
        _compare(f"function, output {number}", np.asarray(compiled[number]), want, rtol, atol)


def assert_gradients(
    inputs: Sequence[Variable],
    cost: Variable,
    gradients: Sequence[Variable],
    arguments: Sequence[Any],
    *,
    wrt: Sequence[int] | None = None,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-7,
) -> None:
    """`gradients` (of the scalar `cost`, with respect to the inputs numbered `wrt`,
    all inputs by default), through `evaluate` and the compiled function, match central
    differences of `evaluate(cost)` (the unoptimized graph)."""
    positions = list(range(len(inputs))) if wrt is None else list(wrt)
    arrays = [np.asarray(value) for value in arguments]

    def cost_at(*varied: Array) -> Array:
        values = list(arrays)
        for position, value in zip(positions, varied):
            values[position] = value.astype(arrays[position].dtype)
        return np.asarray(evaluate([cost], dict(zip(inputs, values)))[0], dtype="float64")

    numeric = numeric_gradient(
        cost_at, [arrays[p].astype("float64") for p in positions], np.asarray(1.0), eps
    )
    check_graph(Graph(list(inputs), list(gradients)))
    reference = evaluate(list(gradients), dict(zip(inputs, arrays)))
    compiled = function(list(inputs), list(gradients))(*arrays)
    for number, (position, want) in enumerate(zip(positions, numeric)):
        for label, got in (("evaluate", reference[number]), ("function", compiled[number])):
            got = np.asarray(got)
            assert got.shape == arrays[position].shape, (
                f"{label}, gradient {number}: shape {got.shape}, expected {arrays[position].shape}"
            )
            np.testing.assert_allclose(
                got, want, rtol=rtol, atol=atol, err_msg=f"{label}, gradient {number}"
            )
