"""Elementwise fusion: each maximal connected group of `Elemwise` nodes with one output
shape becomes a single `Fused` node, which the backend runs as one loop with no
temporaries.

This is a whole-graph pass, not a node rule: which nodes belong together is a global
decision, and one forward sweep over `graph.nodes` makes it for the whole graph at once
(a rule growing groups node by node would revisit them quadratically often).

An elementwise node joins the group of an elementwise producer of the same output shape,
merging the groups of several producers when it reads them all. Contracting every group
to one node must leave the graph acyclic. Each group being convex is not enough: group
A may feed `sum` which feeds group B while another member of B feeds A. So the sweep
keeps, for every unit so far (a group, or a node in none), the exact set of groups that
reach it in the contracted graph, as a bitset (a Python int with one bit per group ever
created; a merged group owns the bits of its parts). A join or merge is refused when a
unit it would read from is reached by the group being formed. When a group's set grows
(a new member reads something new), the growth is pushed to the units already built
downstream of it, so the sets stay exact. Refusals only ever split groups, the sweep
follows the graph's toposort (deterministic), and fusing a fused graph finds nothing
new and returns the very same graph.

Groups of one node are left alone (a lone `Elemwise` is already one loop). Inside the
fused op, a constant holding a single value (0-d, or all of length 1, or given length-1
axes by a `DimShuffle`) becomes a 0-d constant of the inner graph, as long as one real
input remains to fix the shape; other outer values become positional params, one per
distinct variable. A member read outside the group or returned by the graph becomes an
output of the fused op. Nothing enters the inner graphs of existing ops: fusion is an
outer pass and never runs on the inner graph it builds (see `rewrite.inner`).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from fgraph import Apply, Constant, Graph, Param, TensorType, Variable
from ops.dimshuffle import DimShuffle
from ops.elemwise import Elemwise
from ops.fused import Fused

Unit = Apply | int
"""A node in no group, or a group (by its union-find root)."""


def fuse_elemwise(graph: Graph) -> Graph:
    """`graph` with every connected group of two or more same-shape `Elemwise` nodes
    replaced by one `Fused` node (the same graph when there is none)."""
    groups = _Sweep(graph).groups()
    if not groups:
        return graph
    graph_outputs = frozenset(graph.outputs)
    return _rebuild(graph, [_fuse(group, graph, graph_outputs) for group in groups])


class _Sweep:
    """The grouping sweep's state. Group ids are bit positions and union-find entries;
    per root group: `mask` (its bits), `reach` (bits of the groups reaching it, its own
    included), `members`, and `consumers` (nodes already swept that read a member)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.index = {node: number for number, node in enumerate(graph.nodes)}
        self.group_of: dict[Apply, int] = {}
        self.node_reach: dict[Apply, int] = {}  # for nodes in no group
        self.parent: list[int] = []
        self.mask: list[int] = []
        self.reach: list[int] = []
        self.members: list[list[Apply]] = []
        self.consumers: list[list[Apply]] = []

    def groups(self) -> list[list[Apply]]:
        """The groups of two or more nodes, each in toposort order, ordered by their
        first node."""
        for node in self.graph.nodes:
            producers = tuple(dict.fromkeys(v.owner for v in node.inputs if v.owner is not None))
            if isinstance(node.op, Elemwise):
                self._place(node, producers)
            else:
                reach = 0
                for producer in producers:
                    reach |= self._reach(self._unit(producer))
                self.node_reach[node] = reach
            unit = self._unit(node)
            for producer in producers:
                source = self._unit(producer)
                if isinstance(source, int) and source != unit:
                    self.consumers[source].append(node)
        found = [
            sorted(members, key=self.index.__getitem__)
            for members in self.members
            if len(members) > 1
        ]
        return sorted(found, key=lambda members: self.index[members[0]])

    def _find(self, group: int) -> int:
        root = group
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[group] != root:
            self.parent[group], group = root, self.parent[group]
        return root

    def _unit(self, node: Apply) -> Unit:
        group = self.group_of.get(node)
        return node if group is None else self._find(group)

    def _reach(self, unit: Unit) -> int:
        return self.reach[unit] if isinstance(unit, int) else self.node_reach[unit]

    def _place(self, node: Apply, producers: tuple[Apply, ...]) -> None:
        """Put `node` in the producers' groups it may join (merging them), else alone."""
        units = [self._unit(producer) for producer in producers]
        chosen = self._choose(node, producers, units)
        reach = 0
        for unit in units:
            if unit not in chosen:
                reach |= self._reach(unit)
        if not chosen:
            group = len(self.parent)
            self.parent.append(group)
            self.mask.append(1 << group)
            self.reach.append(reach | 1 << group)
            self.members.append([node])
            self.consumers.append([])
            self.group_of[node] = group
            return
        root = chosen[0]
        for other in chosen[1:]:
            self.parent[other] = root
            self.mask[root] |= self.mask[other]
            reach |= self.reach[other]
            self.members[root].extend(self.members[other])
            self.consumers[root].extend(self.consumers[other])
            self.members[other], self.consumers[other] = [], []
        self.members[root].append(node)
        self.group_of[node] = root
        if reach & ~self.reach[root]:  # always so when groups merge: each gains the other
            self.reach[root] |= reach
            self._push_reach(root)

    def _choose(self, node: Apply, producers: tuple[Apply, ...], units: list[Unit]) -> list[int]:
        """The producers' groups `node` joins, tried in input order: a group is taken if
        no unit read by the union (`node`'s other producers, the groups' outside inputs)
        is reached from it."""
        shape = node.output_types[0].shape
        chosen: list[int] = []
        chosen_mask = 0
        for producer, unit in zip(producers, units):
            if not isinstance(unit, int) or unit in chosen:
                continue
            if producer.output_types[0].shape != shape:
                continue
            mask = chosen_mask | self.mask[unit]
            # A group's reach, less its own bits, is what its members read from outside.
            outside = [self.reach[group] & ~self.mask[group] for group in (*chosen, unit)]
            outside += [self._reach(u) for u in units if u not in chosen and u != unit]
            if any(reach & mask for reach in outside):
                continue
            chosen.append(unit)
            chosen_mask = mask
        return chosen

    def _push_reach(self, root: int) -> None:
        """Carry a grown reach set to the units already swept downstream of `root`."""
        stack: list[Unit] = [root]
        while stack:
            unit = stack.pop()
            reach = self._reach(unit)
            if isinstance(unit, int):
                readers = self.consumers[unit]
            else:
                readers = [
                    client
                    for output in unit.outputs
                    for client, _ in self.graph.clients.get(output, ())
                    if client in self.group_of or client in self.node_reach
                ]
            for reader in readers:
                target = self._unit(reader)
                if target == unit:
                    continue
                grown = reach & ~self._reach(target)
                if not grown:
                    continue
                if isinstance(target, int):
                    self.reach[target] |= grown
                else:
                    self.node_reach[target] |= grown
                stack.append(target)


@attrs.frozen(eq=False)
class _Fusion:
    """One group as a fused op: what it reads (outer variables, in param order) and which
    members' outputs its outputs stand for."""

    members: frozenset[Apply]
    op: Fused
    outer_inputs: tuple[Variable, ...]
    exports: tuple[Variable, ...]


def _single_value(variable: Variable) -> Constant | None:
    """`variable` as a 0-d constant, if it is a constant holding one value (possibly
    given length-1 axes by a `DimShuffle`)."""
    owner = variable.owner
    if owner is not None and isinstance(owner.op, DimShuffle):
        (variable,) = owner.inputs
    if not isinstance(variable, Constant) or variable.data.size != 1:
        return None
    return variable if variable.ndim == 0 else Constant(variable.data.reshape(()))


def _fuse(group: Sequence[Apply], graph: Graph, graph_outputs: frozenset[Variable]) -> _Fusion:
    """The fused op of `group` (in toposort order) and how it connects to `graph`."""
    members = frozenset(group)
    outer = tuple(
        dict.fromkeys(v for node in group for v in node.inputs if v.owner not in members)
    )
    single = {v: value for v in outer if (value := _single_value(v)) is not None}
    if len(single) == len(outer):
        single = {}  # keep the constants outside: they alone fix the output shape
    outer_inputs = tuple(v for v in outer if v not in single)
    inner: dict[Variable, Variable] = {
        v: Param(number, TensorType(v.dtype, ())) for number, v in enumerate(outer_inputs)
    }
    inner.update(single)
    for node in group:
        inner[node.out] = node.op(*(inner[v] for v in node.inputs))
    exports = tuple(
        node.out
        for node in group
        if node.out in graph_outputs
        or any(client not in members for client, _ in graph.clients.get(node.out, ()))
    )
    params = tuple(inner[v] for v in outer_inputs)
    op = Fused(Graph(params, tuple(inner[v] for v in exports)))
    return _Fusion(members, op, outer_inputs, exports)


def _rebuild(graph: Graph, fusions: Sequence[_Fusion]) -> Graph:
    """The graph with each group replaced by its fused node. Walks units (a node outside
    every group, or a whole group) depth-first from the outputs with an explicit stack,
    building each after the units it reads (the sweep keeps the contracted graph acyclic)."""
    fusion_of = {node: fusion for fusion in fusions for node in fusion.members}
    memo: dict[Variable, Variable] = {}
    done: set[Apply | _Fusion] = set()

    def unit_of(variable: Variable) -> Apply | _Fusion | None:
        owner = variable.owner
        return None if owner is None else fusion_of.get(owner, owner)

    for output in graph.outputs:
        root = unit_of(output)
        if root is None or root in done:
            continue
        done.add(root)
        building = {root}  # units on the stack: reaching one again would be a cycle
        stack: list[tuple[Apply | _Fusion, int]] = [(root, 0)]
        while stack:
            unit, next_input = stack[-1]
            inputs = unit.inputs if isinstance(unit, Apply) else unit.outer_inputs
            while next_input < len(inputs):
                source = unit_of(inputs[next_input])
                next_input += 1
                if source in building:
                    raise AssertionError(f"fusion made a cycle through {source}")  # a bug
                if source is not None and source not in done:
                    done.add(source)
                    building.add(source)
                    stack[-1] = (unit, next_input)
                    stack.append((source, 0))
                    break
            else:
                stack.pop()
                building.discard(unit)
                _build(unit, memo)
    outputs = tuple(memo.get(output, output) for output in graph.outputs)
    return Graph(graph.inputs, outputs, graph.dedup_nodes)


def _build(unit: Apply | _Fusion, memo: dict[Variable, Variable]) -> None:
    """Create `unit` over the new variables of its inputs, recording its new outputs."""
    if isinstance(unit, Apply):
        new_inputs = tuple(memo.get(v, v) for v in unit.inputs)
        if new_inputs != unit.inputs:
            new_node = Apply(unit.op, new_inputs, unit.position)
            memo.update(zip(unit.outputs, new_node.outputs))
        return
    fused = Apply(unit.op, tuple(memo.get(v, v) for v in unit.outer_inputs))
    memo.update(zip(unit.exports, fused.outputs))
