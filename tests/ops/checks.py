"""Shared numerical checks for op tests: values against NumPy, derivatives against
central finite differences, all through the reference evaluator."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import ops as pt
from fgraph import Graph, Input, TensorType, Variable, check_graph, evaluate

Array = np.ndarray[Any, np.dtype[Any]]


def inputs_like(values: Sequence[Array]) -> list[Input]:
    """Inputs whose static shapes are unknown, one per value (dtype from the value)."""
    return [
        Input(TensorType(value.dtype.name, (None,) * value.ndim), f"in{number}")
        for number, value in enumerate(values)
    ]


def run(build: Callable[..., Variable], values: Sequence[Array]) -> Array:
    """Build `build(*inputs)` over fresh inputs, validate the graph, evaluate it."""
    variables = inputs_like(values)
    output = build(*variables)
    check_graph(Graph(variables, [output]))
    (result,) = evaluate([output], dict(zip(variables, values)))
    return result


def numeric_gradient(
    function: Callable[..., Array], values: Sequence[Array], cotangent: Array, eps: float = 1e-6
) -> list[Array]:
    """Central differences of <cotangent, function(values)> with respect to each value."""
    gradients = []
    for number, value in enumerate(values):
        gradient = np.zeros_like(value, dtype="float64")
        for index in np.ndindex(value.shape):
            shifted = [v.copy() for v in values]
            shifted[number][index] = value[index] + eps
            upper = np.sum(cotangent * function(*shifted))
            shifted[number][index] = value[index] - eps
            lower = np.sum(cotangent * function(*shifted))
            gradient[index] = (upper - lower) / (2 * eps)
        gradients.append(gradient)
    return gradients


def check_pullback(
    build: Callable[..., Variable],
    values: Sequence[Array],
    *,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
) -> None:
    """The graph gradient of <c, build(values)> for a random c matches finite differences."""
    values = [np.asarray(value, dtype="float64") for value in values]
    variables = inputs_like(values)
    output = build(*variables)
    cotangent = np.random.default_rng(seed).normal(size=np.shape(run(build, values)))
    cost = (output * pt.constant(cotangent)).sum()
    gradients = pt.grad(cost, variables)
    check_graph(Graph(variables, gradients))
    got = evaluate(gradients, dict(zip(variables, values)))

    def forward(*arrays: Array) -> Array:
        return run(build, arrays)

    expected = numeric_gradient(forward, values, cotangent)
    for number, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=f"gradient of input {number}")


def check_pushforward(
    build: Callable[..., Variable],
    values: Sequence[Array],
    *,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
) -> None:
    """jvp along random tangents matches the directional finite difference."""
    values = [np.asarray(value, dtype="float64") for value in values]
    rng = np.random.default_rng(seed)
    directions = [rng.normal(size=value.shape) for value in values]
    variables = inputs_like(values)
    output = build(*variables)
    (tangent,) = pt.jvp([output], variables, [pt.constant(d) for d in directions])
    check_graph(Graph(variables, [tangent]))
    (got,) = evaluate([tangent], dict(zip(variables, values)))
    eps = 1e-6
    upper = run(build, [v + eps * d for v, d in zip(values, directions)])
    lower = run(build, [v - eps * d for v, d in zip(values, directions)])
    np.testing.assert_allclose(got, (upper - lower) / (2 * eps), rtol=rtol, atol=atol)
