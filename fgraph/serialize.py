"""Flat, iterative pickling of graphs, nodes and variables.

The default pickle protocol recurses once per nested object, so pickling the output
of a 200 000-node chain would overflow the stack. Instead a graph is written as a flat
list of node records (op, input references, position) in topological order and
rebuilt in a loop; rebuilding goes through the constructors, so every node is
re-interned in the unpickling process.

`Apply` and `Output` pickle this way through Python's registry of reductions
(`copyreg.pickle`, at the end of this module): `fgraph.node` cannot import this module,
which builds nodes; `Graph.__reduce__` calls `flatten` itself.
"""

from __future__ import annotations

import copyreg
from collections.abc import Callable, Sequence
from typing import cast

import attrs

from fgraph.node import Apply, Output
from fgraph.op import Op
from fgraph.traverse import toposort
from fgraph.variable import Variable

# A reference to a variable: (ROOT, i) is `roots[i]`, (k, j) is output j of the k-th record.
Reference = tuple[int, int]
ROOT = -1


@attrs.frozen
class FlatGraph:
    """A picklable, recursion-free description of the graph computing `outputs`."""

    roots: tuple[Variable, ...]
    records: tuple[tuple[Op, tuple[Reference, ...], int], ...]
    outputs: tuple[Reference, ...]


def flatten(outputs: Sequence[Variable]) -> FlatGraph:
    """Describe the graph computing `outputs` as a flat record list."""
    references: dict[Variable, Reference] = {}
    roots: list[Variable] = []

    def reference(variable: Variable) -> Reference:
        found = references.get(variable)
        if found is None:  # a root variable (input, param or constant) seen the first time
            found = (ROOT, len(roots))
            roots.append(variable)
            references[variable] = found
        return found

    records = []
    for number, node in enumerate(toposort(outputs)):
        records.append((node.op, tuple(reference(input_) for input_ in node.inputs), node.position))
        for output in node.outputs:
            references[output] = (number, output.index)
    output_references = tuple(reference(output) for output in outputs)  # may add roots
    return FlatGraph(tuple(roots), tuple(records), output_references)


def unflatten(flat: FlatGraph) -> tuple[Variable, ...]:
    """Rebuild the output variables a `FlatGraph` describes (re-interning every node)."""
    nodes: list[Apply] = []

    def resolve(reference: Reference) -> Variable:
        record, index = reference
        return flat.roots[index] if record == ROOT else nodes[record].outputs[index]

    for op, inputs, position in flat.records:
        nodes.append(Apply(op, tuple(resolve(reference) for reference in inputs), position))
    return tuple(resolve(reference) for reference in flat.outputs)


def unflatten_variable(flat: FlatGraph) -> Variable:
    (variable,) = unflatten(flat)
    return variable


def unflatten_node(flat: FlatGraph) -> Apply:
    owner = unflatten(flat)[0].owner
    if owner is None:
        raise ValueError("a pickled node must be described by one of its outputs")
    return owner


def _reduce_node(node: Apply) -> tuple[Callable[[FlatGraph], Apply], tuple[FlatGraph]]:
    return (unflatten_node, (flatten(node.outputs),))


def _reduce_output(output: Output) -> tuple[Callable[[FlatGraph], Output], tuple[FlatGraph]]:
    # The one variable a pickled output's records describe is that output.
    rebuild_output = cast(Callable[[FlatGraph], Output], unflatten_variable)
    return (rebuild_output, (flatten((output,)),))


copyreg.pickle(Apply, _reduce_node)
copyreg.pickle(Output, _reduce_output)
