"""Helpers for the shape and creation tests: evaluate over fully static inputs and check
that inferred static shapes agree with the arrays `perform` returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from fgraph import Graph, Input, TensorType, Variable, check_graph, evaluate

Array = np.ndarray[Any, np.dtype[Any]]


def static_inputs(values: Sequence[Array]) -> list[Input]:
    """Inputs whose static shapes are the values' shapes."""
    return [
        Input(TensorType(value.dtype.name, value.shape), f"in{number}")
        for number, value in enumerate(values)
    ]


def assert_type_matches(output: Variable, result: Array) -> None:
    """The result has the inferred dtype, rank, and every known static length."""
    assert result.dtype.name == output.dtype
    assert output.type.accepts_shape(result.shape), (output.type, result.shape)


def run_static(build: Callable[..., Variable], values: Sequence[Array]) -> tuple[Variable, Array]:
    """Build over fully static inputs, validate, evaluate; the output type must be fully
    static (static inputs determine every length here) and match the result."""
    variables = static_inputs(values)
    output = build(*variables)
    check_graph(Graph(variables, [output]))
    (result,) = evaluate([output], dict(zip(variables, values)))
    assert output.type.is_fully_static, output.type
    assert_type_matches(output, result)
    return output, result


def evaluate_checked(outputs: Sequence[Variable], inputs: Mapping[Variable, Any]) -> list[Array]:
    """Validate the graph, evaluate it, and check each result against its static type."""
    check_graph(Graph(list(inputs), list(outputs)))
    results = evaluate(outputs, inputs)
    for output, result in zip(outputs, results):
        assert_type_matches(output, result)
    return results
