"""Checks for the tests that pin PyTensor's scan behaviours (issue 18): a graph's values
through the reference evaluator on the unoptimized graph and through compiled code
(`function`, `fast_run`), both against what a NumPy loop computes; gradients of a scalar
cost and forward-mode tangents through both, against central finite differences of the
unoptimized graph."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fgraph import Graph, Variable, check_graph, evaluate
from numba_backend import function
from ops import constant, jvp
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
    assert_values_at(inputs, outputs, [(arguments, expected)], rtol=rtol, atol=atol)


def assert_values_at(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    cases: Sequence[tuple[Sequence[Any], Sequence[Any]]],
    *,
    rtol: float = 1e-10,
    atol: float = 1e-12,
) -> None:
    """`assert_values` for several (arguments, expected) cases of one graph, compiled
    once."""
    check_graph(Graph(list(inputs), list(outputs)))
    compiled_function = function(list(inputs), list(outputs))
    for case, (arguments, expected) in enumerate(cases):
        reference = evaluate(list(outputs), dict(zip(inputs, arguments)))
        compiled = compiled_function(*arguments)
        for number, value in enumerate(expected):
            want = np.asarray(value)
            where = f"case {case}, output {number}"
            _compare(f"evaluate, {where}", np.asarray(reference[number]), want, rtol, atol)
            _compare(f"function, {where}", np.asarray(compiled[number]), want, rtol, atol)


def numeric_gradients(
    inputs: Sequence[Variable],
    cost: Variable,
    arguments: Sequence[Any],
    wrt: Sequence[int],
    eps: float = 1e-6,
) -> list[Array]:
    """Central differences of `evaluate(cost)` (the unoptimized graph) with respect to
    the inputs numbered `wrt`, each varied in float64 and cast to its own dtype."""
    arrays = [np.asarray(value) for value in arguments]

    def cost_at(*varied: Array) -> Array:
        values = list(arrays)
        for position, value in zip(wrt, varied):
            values[position] = value.astype(arrays[position].dtype)
        return np.asarray(evaluate([cost], dict(zip(inputs, values)))[0], dtype="float64")

    return numeric_gradient(cost_at, [arrays[p].astype("float64") for p in wrt], np.asarray(1.0), eps)


def assert_gradients(
    inputs: Sequence[Variable],
    cost: Variable,
    gradients: Sequence[Variable],
    arguments: Sequence[Any],
    *,
    wrt: Sequence[int] | None = None,
    outputs: Sequence[Variable] = (),
    expected: Sequence[Any] = (),
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-7,
) -> None:
    """`gradients` (of the scalar `cost`, with respect to the inputs numbered `wrt`,
    all inputs by default), through `evaluate` and the compiled function, match central
    differences of `evaluate(cost)` (the unoptimized graph); a gradient has its input's
    shape and dtype. `outputs` are compiled in the same function and compared with
    `expected` as `assert_values` does (one compilation per check: numba's compile time
    dominates these tests)."""
    positions = list(range(len(inputs))) if wrt is None else list(wrt)
    arrays = [np.asarray(value) for value in arguments]
    numeric = numeric_gradients(inputs, cost, arrays, positions, eps)
    everything = [*gradients, *outputs]
    check_graph(Graph(list(inputs), everything))
    reference = evaluate(everything, dict(zip(inputs, arrays)))
    compiled = function(list(inputs), everything)(*arrays)
    for number, (position, want) in enumerate(zip(positions, numeric)):
        for label, got in (("evaluate", reference[number]), ("function", compiled[number])):
            got = np.asarray(got)
            assert got.shape == arrays[position].shape, (
                f"{label}, gradient {number}: shape {got.shape}, expected {arrays[position].shape}"
            )
            assert got.dtype == arrays[position].dtype, (
                f"{label}, gradient {number}: dtype {got.dtype}, expected {arrays[position].dtype}"
            )
            np.testing.assert_allclose(
                got, want, rtol=rtol, atol=atol, err_msg=f"{label}, gradient {number}"
            )
    for number, value in enumerate(expected):
        want = np.asarray(value)
        at = len(gradients) + number
        _compare(f"evaluate, output {number}", np.asarray(reference[at]), want, 1e-10, 1e-12)
        _compare(f"function, output {number}", np.asarray(compiled[at]), want, 1e-10, 1e-12)


def assert_tangents(
    inputs: Sequence[Variable],
    output: Variable,
    position: int,
    direction: Array,
    arguments: Sequence[Any],
    *,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-7,
) -> None:
    """The forward-mode derivative (`pt.jvp`) of `output` along `direction` for input
    number `position`, through `evaluate` and the compiled function, matches the central
    difference of `evaluate(output)` (the unoptimized graph) along that direction."""
    arrays = [np.asarray(value) for value in arguments]
    (tangent,) = jvp([output], [inputs[position]], [constant(direction)])

    def output_at(shift: float) -> Array:
        values = list(arrays)
        values[position] = arrays[position] + shift * direction
        return np.asarray(evaluate([output], dict(zip(inputs, values)))[0])

    numeric = (output_at(eps) - output_at(-eps)) / (2 * eps)
    check_graph(Graph(list(inputs), [tangent]))
    reference = evaluate([tangent], dict(zip(inputs, arrays)))[0]
    compiled = function(list(inputs), [tangent])(*arrays)[0]
    for label, got in (("evaluate", reference), ("function", compiled)):
        np.testing.assert_allclose(np.asarray(got), numeric, rtol=rtol, atol=atol, err_msg=label)
