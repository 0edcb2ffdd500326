"""Which values may share memory: the one alias analysis every consumer asks.

The inplace rewrite (may this node overwrite that input?), `function` (may this output
be a caller's array, a constant or another output?), inlined `OpFromGraph`s (the same,
for an inner graph) and loops (how long does a buffer computed in a step stay readable
through the carries?) all answer from the same facts, so they cannot disagree.

The facts come from the ops: an output in an op's `view_map` may share memory with that
input, one in its `destroy_map` is written into that input's buffer, and one in its
`read_only_outputs` must never be written (a broadcast: several elements share one
location). Values connected through view and destroy pairs form one *buffer class*:
two values of a class may overlap, values of different classes never do. A class
holding a graph input, a parameter or a constant is *external*: the caller or the
graph owns that memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import attrs

from fgraph.graph import Graph
from fgraph.variable import Variable, display_name


@attrs.frozen(eq=False, repr=False)
class Aliasing:
    """The buffer classes of one graph's values (build it with `Aliasing.of`)."""

    graph: Graph
    classes: Mapping[Variable, Variable]
    """Every value of the graph -> the first value (in execution order) of its class."""
    external: frozenset[Variable]
    """The classes (by their first value) holding a graph input, parameter or constant."""
    read_only: frozenset[Variable]
    """Values that are, or view, an output an op declares read-only."""

    @classmethod
    def of(cls, graph: Graph) -> Aliasing:
        """The classes of `graph`'s values, in one walk over its execution order."""
        parent: dict[Variable, Variable] = {}

        def find(variable: Variable) -> Variable:
            first = parent.setdefault(variable, variable)
            while first != parent[first]:
                parent[first] = parent[parent[first]]  # halve the path as we go
                first = parent[first]
            return first

        order: dict[Variable, int] = {}

        def union(a: Variable, b: Variable) -> None:
            first_a, first_b = find(a), find(b)
            if first_a != first_b:  # the class keeps its earliest value as its name
                earlier, later = sorted((first_a, first_b), key=order.__getitem__)
                parent[later] = earlier

        read_only: set[Variable] = set()
        for variable in graph.inputs:
            order.setdefault(variable, len(order))
            find(variable)
        for node in graph.nodes:
            for input_ in node.inputs:
                order.setdefault(input_, len(order))
                find(input_)
            pairs = (*node.op.view_map, *node.op.destroy_map)
            for index, output in enumerate(node.outputs):
                order.setdefault(output, len(order))
                find(output)
                shared = [node.inputs[slot] for out, slot in pairs if out == index]
                for input_ in shared:
                    union(output, input_)
                if index in node.op.read_only_outputs or any(v in read_only for v in shared):
                    read_only.add(output)
        for result in graph.outputs:  # a graph output may be an input or a constant
            order.setdefault(result, len(order))
            find(result)
        classes = {variable: find(variable) for variable in order}
        external = frozenset(classes[v] for v in order if v.owner is None)
        return cls(graph, MappingProxyType(classes), external, frozenset(read_only))

    def buffer(self, variable: Variable) -> Variable:
        """The class of `variable`, named by its first value."""
        found = self.classes.get(variable)
        if found is None:
            raise ValueError(
                f"{display_name(variable)} ({variable.type}) is not a value of {self.graph}"
            )
        return found

    def may_share(self, a: Variable, b: Variable) -> bool:
        """Whether `a` and `b` may overlap in memory."""
        return self.buffer(a) == self.buffer(b)

    def is_external(self, variable: Variable) -> bool:
        """Whether `variable` may share memory with a graph input, parameter or constant."""
        return self.buffer(variable) in self.external

    def is_writable(self, variable: Variable) -> bool:
        """Whether a node may overwrite `variable`'s buffer at all: it is neither external
        nor (a view of) a read-only value. Whether anyone still reads it is the caller's
        question."""
        return not self.is_external(variable) and variable not in self.read_only

    def shared_outputs(self) -> tuple[bool, ...]:
        """Per graph output, whether it may share memory with a graph input, parameter or
        constant, or with an earlier output, or is read-only: what must be copied to hand
        out fresh, independent, writable arrays. Outputs of allocating nodes need no copy."""
        flags: list[bool] = []
        seen: set[Variable] = set()
        for output in self.graph.outputs:
            buffer = self.buffer(output)
            flags.append(buffer in self.external or buffer in seen or output in self.read_only)
            seen.add(buffer)
        return tuple(flags)

    def steps_alive(self, variable: Variable, n_carries: int) -> int | None:
        """For this graph as a loop body whose output k is fed back as input k (k <
        `n_carries`): for how many following steps the buffer of `variable`, computed in
        one step, may still be read through the carries. 0: it is dead when the step
        ends; None: forever (it enters a cycle of carries that view each other).

        A carry holding the buffer passes it on to every next carry viewing that carry;
        a chain longer than the number of carries must go round a cycle."""
        inputs, outputs = self.graph.inputs, self.graph.outputs
        if n_carries > min(len(inputs), len(outputs)):
            raise ValueError(
                f"a loop body with {n_carries} carries needs at least that many inputs and "
                f"outputs, got {len(inputs)} and {len(outputs)}"
            )
        holding = {k for k in range(n_carries) if self.may_share(outputs[k], variable)}
        steps = 0
        while holding:
            steps += 1
            if steps > n_carries:
                return None
            held = {self.buffer(inputs[k]) for k in holding}
            holding = {k for k in range(n_carries) if self.buffer(outputs[k]) in held}
        return steps
