"""`evaluate`: run any graph with each op's NumPy `perform`.

This is the oracle every rewrite and the numba backend are tested against, so it
checks what ops return (count, dtype, shape against the inferred types) and fails
loudly on a mismatch instead of passing a wrong value along.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from fgraph.errors import MissingInputError
from fgraph.op import Array
from fgraph.traverse import toposort
from fgraph.variable import Constant, Variable, display_name

if TYPE_CHECKING:
    from fgraph.graph import Graph


class OpContractError(AssertionError):
    """An op's `perform` returned something its `infer` did not promise (an op bug)."""


def evaluate(outputs: Sequence[Variable] | Graph, inputs: Mapping[Variable, Any]) -> list[Array]:
    """Values of `outputs` (variables, or a `Graph`'s outputs) given values for the root
    variables they depend on.

    Input values are converted to their variable's type (safe casts only) with errors
    naming the variable; the returned arrays are fresh (never aliases of the inputs).
    """
    from fgraph.graph import Graph

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

    def value_of(variable: Variable, reader: str) -> Array:
        found = values.get(variable)
        if found is not None:
            return found
        if isinstance(variable, Constant):
            return variable.data
        raise MissingInputError(f"no value given for {display_name(variable)}, needed by {reader}")

    for node in nodes:
        arguments = tuple(value_of(input_, str(node.op)) for input_ in node.inputs)
        node.op.check_values(tuple(input_.type for input_ in node.inputs), arguments)
        results = node.op.perform(*arguments)
        _check_results(node.op, node.output_types, results)
        for output, result in zip(node.outputs, results):
            values[output] = np.asarray(result)
        for input_ in node.inputs:  # free intermediates as soon as their last reader ran
            remaining_uses[input_] -= 1
            if remaining_uses[input_] == 0 and input_.owner is not None:
                del values[input_]
    return [np.array(value_of(output, "the outputs"), copy=True) for output in outputs]


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
