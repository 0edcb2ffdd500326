"""`Graph`: a frozen pair of input and output variables, with derived data computed once.

Two graphs built independently with the same structure are equal and hash equal,
whatever their inputs are called: equality compares the *canonical form*, the outputs
rebuilt over positional `Param`s. Because nodes are interned, equal canonical forms
are the very same objects, so the comparison is O(number of outputs) once built, and
inner graphs (already over params) get it for free.

`Graph(inputs, outputs, dedup_nodes=False)` is position-aware: every node is re-created
with its toposort index as `position`, so structurally identical nodes (two `zeros(5)`
buffers destroyed by two inplace updates) stay distinct objects, while two identical
graphs still line up and compare equal.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import ClassVar
from types import MappingProxyType

import attrs

from fgraph.errors import MissingInputError, ShapeError
from fgraph.frozen import Frozen
from fgraph.node import Apply
from fgraph.serialize import FlatGraph, flatten, unflatten
from fgraph.traverse import rebuild, toposort
from fgraph.variable import Constant, Input, Param, Variable, display_name

Clients = Mapping[Variable, tuple[tuple[Apply, int], ...]]


@attrs.frozen(init=False, eq=False, repr=False, weakref_slot=True)
class Graph(Frozen):
    """Inputs, outputs and the deterministic toposort of the nodes between them."""

    keyed_by_equality: ClassVar[bool] = True  # canonical-form equality is exact

    inputs: tuple[Variable, ...]
    outputs: tuple[Variable, ...]
    dedup_nodes: bool
    nodes: tuple[Apply, ...]

    def __init__(
        self, inputs: Iterable[Variable], outputs: Iterable[Variable], dedup_nodes: bool = True
    ) -> None:
        inputs = tuple(inputs)
        outputs = tuple(outputs)
        _check_inputs(inputs)
        for number, output in enumerate(outputs):
            if not isinstance(output, Variable):
                raise TypeError(f"graph output {number} must be a Variable, got {output!r}")
        nodes = toposort(outputs)
        _check_closed(inputs, outputs, nodes)
        if not dedup_nodes:
            outputs = rebuild(outputs, {}, position=lambda number, node: number)
            nodes = toposort(outputs)
        elif any(node.position for node in nodes):
            outputs = rebuild(outputs, {}, position=lambda number, node: 0)
            nodes = toposort(outputs)
        self.__attrs_init__(inputs, outputs, dedup_nodes, nodes)

    @functools.cached_property
    def clients(self) -> Clients:
        """For each variable, the (node, input index) pairs that read it, in toposort order."""
        uses: dict[Variable, list[tuple[Apply, int]]] = {}
        for node in self.nodes:
            for number, input_ in enumerate(node.inputs):
                uses.setdefault(input_, []).append((node, number))
        return MappingProxyType({variable: tuple(found) for variable, found in uses.items()})

    @functools.cached_property
    def node_set(self) -> frozenset[Apply]:
        return frozenset(self.nodes)

    @functools.cached_property
    def digest(self) -> str:
        """sha256 hex of the canonical serialization: equal across processes and seeds."""
        from fgraph.digest import graph_digest

        return graph_digest(self)

    @functools.cached_property
    def structure_digest(self) -> str:
        """Like `digest`, but constants count by dtype and shape only: graphs differing just
        in constant values share it, and so share compiled code (constants are arguments)."""
        from fgraph.digest import graph_digest

        return graph_digest(self, constant_values=False)

    @functools.cached_property
    def canonical_outputs(self) -> tuple[Variable, ...]:
        """The outputs rebuilt over `Param(i, type)` in place of the i-th input."""
        params = {
            variable: Param(number, variable.type) for number, variable in enumerate(self.inputs)
        }
        if all(params[variable] is variable for variable in self.inputs):
            return self.outputs
        return rebuild(self.outputs, params)

    @functools.cached_property
    def _structure_hash(self) -> int:
        return hash((self.dedup_nodes, self.canonical_outputs, tuple(v.type for v in self.inputs)))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Graph):
            return NotImplemented
        return (
            self._structure_hash == other._structure_hash
            and self.dedup_nodes == other.dedup_nodes
            and tuple(v.type for v in self.inputs) == tuple(v.type for v in other.inputs)
            and self.canonical_outputs == other.canonical_outputs
        )

    def __hash__(self) -> int:
        return self._structure_hash

    def replace(self, replacements: Mapping[Variable, Variable]) -> Graph:
        """A new graph with each key variable replaced by its value (the old one is untouched).

        A replacement must have the replaced variable's dtype and rank and no conflicting
        static length; the new graph keeps these inputs.
        """
        for old, new in replacements.items():
            _check_replacement(old, new)
        return Graph(self.inputs, rebuild(self.outputs, replacements), self.dedup_nodes)

    def __repr__(self) -> str:
        names = ", ".join(display_name(variable) for variable in self.inputs)
        return f"Graph(inputs=[{names}], outputs={len(self.outputs)}, nodes={len(self.nodes)})"

    def __reduce__(self) -> tuple[object, ...]:
        return (_unpickle_graph, (self.inputs, flatten(self.outputs), self.dedup_nodes))


def _unpickle_graph(inputs: tuple[Variable, ...], flat: FlatGraph, dedup_nodes: bool) -> Graph:
    return Graph(inputs, unflatten(flat), dedup_nodes)


def _check_inputs(inputs: tuple[Variable, ...]) -> None:
    seen: set[Variable] = set()
    for number, variable in enumerate(inputs):
        if not isinstance(variable, (Input, Param)):
            raise TypeError(
                f"graph input {number} must be an Input or Param, got {variable!r}"
                + (" (constants are not inputs)" if isinstance(variable, Constant) else "")
            )
        if variable in seen:
            raise ValueError(f"graph input {number} ({display_name(variable)}) is repeated")
        seen.add(variable)


def _check_closed(
    inputs: tuple[Variable, ...], outputs: tuple[Variable, ...], nodes: tuple[Apply, ...]
) -> None:
    """Every root variable the outputs depend on is an input or a constant."""
    declared = set(inputs)
    for node in nodes:
        for input_ in node.inputs:
            if input_.owner is None and input_ not in declared and not isinstance(input_, Constant):
                raise MissingInputError(
                    f"{display_name(input_)} ({input_.type}) is used by {node.op} but is not "
                    "one of the graph's inputs"
                )
    for number, output in enumerate(outputs):
        if output.owner is None and output not in declared and not isinstance(output, Constant):
            raise MissingInputError(
                f"graph output {number} is {display_name(output)}, which is not an input"
            )


def _check_replacement(old: Variable, new: Variable) -> None:
    if not isinstance(new, Variable):
        raise TypeError(f"replacement for {display_name(old)} must be a Variable, got {new!r}")
    if old.type.dtype != new.type.dtype or old.type.ndim != new.type.ndim:
        raise TypeError(
            f"cannot replace {display_name(old)}: expected {old.type}, got {new.type}"
        )
    for want, got in zip(old.type.shape, new.type.shape):
        if want is not None and got is not None and want != got:
            raise ShapeError(
                f"cannot replace {display_name(old)}: expected shape {old.type.shape}, "
                f"got {new.type.shape}"
            )


