"""`evaluate`: run any graph with each op's NumPy `perform`.

This is the oracle every rewrite and the numba backend are tested against, so it
checks what ops return (count, dtype, shape against the inferred types) and fails
loudly on a mismatch instead of passing a wrong value along.

A run-time error of an op (NumPy's own, or the op's check) is raised again, of the same
type and chained to it, with the node and its inputs' names and shapes before the
message. An op running an inner graph (a loop's body) reads its inputs' names through
`input_names` and names its params after them, so an error in a step names the user's
variables (`W`, `the row of X`), not the body's `p2`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np

from fgraph.errors import RUN_TIME_ERRORS, MissingInputError, is_located, reraise_in_context
from fgraph.graph import Graph
from fgraph.node import Apply
from fgraph.op import Array, inner_graphs_of
from fgraph.traverse import toposort
from fgraph.variable import Constant, Variable, display_name, error_name


class OpContractError(AssertionError):
    """An op's `perform` returned something its `infer` did not promise (an op bug)."""


def evaluate(
    outputs: Sequence[Variable] | Graph,
    inputs: Mapping[Variable, Any],
    *,
    names: Mapping[Variable, str] | None = None,
) -> list[Array]:
    """Values of `outputs` (variables, or a `Graph`'s outputs) given values for the root
    variables they depend on.

    Input values are converted to their variable's type (safe casts only) with errors
    naming the variable; the returned arrays are fresh (never aliases of the inputs).
    `names`: how run-time errors name root variables (an inner graph's params after the
    outer values feeding them); by default an input's own name.
    """
    outputs = outputs.outputs if isinstance(outputs, Graph) else tuple(outputs)
    values: dict[Variable, Array] = {}
    for variable, value in inputs.items():
        if variable.owner is not None:
            raise ValueError(f"evaluate takes values for inputs only, not for {variable!r}")
        values[variable] = variable.type.filter(value, display_name(variable))
    nodes = toposort(outputs)
    remaining_uses: dict[Variable, int] = {}
    for node in nodes:
        for input_ in node.inputs:
            remaining_uses[input_] = remaining_uses.get(input_, 0) + 1
    for output in outputs:
        remaining_uses[output] = remaining_uses.get(output, 0) + 1

    def value_of(variable: Variable, reader: object) -> Array:
        """`variable`'s value; `reader` (an op, or text) names what needed it in the
        error for a missing one, formatted only then (an op's text can be costly)."""
        found = values.get(variable)
        if found is not None:
            return found
        if isinstance(variable, Constant):
            return variable.data
        raise MissingInputError(f"no value given for {display_name(variable)}, needed by {reader}")

    named = names or {}
    for node in nodes:
        arguments = tuple(value_of(input_, node.op) for input_ in node.inputs)
        try:
            results = _perform(node, arguments, named)
        except RUN_TIME_ERRORS as error:
            if is_located(error):  # an inner graph's evaluation said where
                raise
            reraise_in_context(error, _node_context(node, arguments, named), f"{node.op}: ")
        _check_results(node.op, node.output_types, results)
        for output, result in zip(node.outputs, results):
            values[output] = np.asarray(result)
        for input_ in node.inputs:  # free intermediates as soon as their last reader ran
            remaining_uses[input_] -= 1
            if remaining_uses[input_] == 0 and input_.owner is not None:
                del values[input_]
    return [np.array(value_of(output, "the outputs"), copy=True) for output in outputs]


_running: ContextVar[tuple[tuple[Variable, ...], Mapping[Variable, str]]] = ContextVar(
    "_running", default=((), {})
)
"""The inputs of the node whose op is running an inner graph, and the names of the
evaluation running that node."""


def input_names() -> tuple[str, ...]:
    """Inside the `perform` of an op holding an inner graph, run by `evaluate`: how errors
    name the node's inputs (the user's names where the graph has them), so the op can
    name its inner graph's params after them. Empty outside `evaluate`."""
    inputs, names = _running.get()
    return tuple(error_name(variable, names) for variable in inputs)


def _perform(node: Apply, arguments: tuple[Array, ...], names: Mapping[Variable, str]) -> Any:
    node.op.check_values(tuple(input_.type for input_ in node.inputs), arguments)
    if not inner_graphs_of(node.op):
        return node.op.perform(*arguments)
    running = _running.set((node.inputs, names))
    try:
        return node.op.perform(*arguments)
    finally:
        _running.reset(running)


def _node_context(node: Apply, arguments: tuple[Array, ...], names: Mapping[Variable, str]) -> str:
    """`MatMul of W (64, 64) and h (32,)`: the op and its inputs' names and shapes."""
    described = [
        f"{error_name(variable, names)} {np.shape(value)}"
        for variable, value in zip(node.inputs, arguments)
    ]
    listed = ", ".join(described[:-1]) + " and " + described[-1] if len(described) > 1 else (
        "".join(described)
    )
    return f"{node.op} of {listed}" if listed else str(node.op)


def _check_results(op: object, output_types: Sequence[Any], results: Sequence[Any]) -> None:
    if len(results) != len(output_types):
        raise OpContractError(
            f"{op}.perform returned {len(results)} values for {len(output_types)} outputs"
        )
    for number, (result, expected) in enumerate(zip(results, output_types)):
        array = np.asarray(result)
        if array.dtype.name != expected.dtype or not expected.accepts_shape(array.shape):
            raise OpContractError(
                f"{op}.perform output {number}: inferred {expected}, got "
                f"{array.dtype.name}{array.shape}"
            )
