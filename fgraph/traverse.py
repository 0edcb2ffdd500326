"""Iterative, deterministic graph traversals.

Every walk uses an explicit stack (a 200 000-node chain must not touch Python's
recursion limit) and visits inputs left to right, so the same graph gives the same
order in every process, whatever the hash seed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from fgraph.node import Apply
from fgraph.variable import Variable


def toposort(outputs: Iterable[Variable]) -> tuple[Apply, ...]:
    """Nodes computing `outputs`, each after its inputs' nodes (depth-first post-order)."""
    order: list[Apply] = []
    visited: set[Apply] = set()
    for output in outputs:
        root = output.owner
        if root is None or root in visited:
            continue
        visited.add(root)
        stack: list[tuple[Apply, int]] = [(root, 0)]
        while stack:
            node, next_input = stack[-1]
            inputs = node.inputs
            while next_input < len(inputs):
                owner = inputs[next_input].owner
                next_input += 1
                if owner is not None and owner not in visited:
                    visited.add(owner)
                    stack[-1] = (node, next_input)
                    stack.append((owner, 0))
                    break
            else:
                stack.pop()
                order.append(node)
    return tuple(order)


def root_variables(outputs: Iterable[Variable]) -> tuple[Variable, ...]:
    """Inputs, params and constants the outputs depend on, in first-use order."""
    outputs = tuple(outputs)
    seen: set[Variable] = set()
    roots: list[Variable] = []
    candidates = [input_ for node in toposort(outputs) for input_ in node.inputs]
    for variable in (*candidates, *outputs):
        if variable.owner is None and variable not in seen:
            seen.add(variable)
            roots.append(variable)
    return tuple(roots)


def rebuild(
    outputs: Iterable[Variable],
    replacements: Mapping[Variable, Variable],
    position: Callable[[int, Apply], int] | None = None,
) -> tuple[Variable, ...]:
    """`outputs` with `replacements` substituted, re-creating only the nodes that change.

    `position(toposort_index, node)` gives each rebuilt node's position (default: keep
    it). Unchanged nodes come back as the same objects, so rebuilding with an empty
    mapping is the identity.
    """
    outputs = tuple(outputs)
    memo: dict[Variable, Variable] = dict(replacements)
    for number, node in enumerate(toposort(outputs)):
        if replacements and all(output in replacements for output in node.outputs):
            continue  # replaced as a whole: what it reads no longer matters
        new_inputs = tuple(memo.get(input_, input_) for input_ in node.inputs)
        new_position = node.position if position is None else position(number, node)
        if new_inputs == node.inputs and new_position == node.position:
            continue
        new_node = Apply(node.op, new_inputs, new_position)
        for old, new in zip(node.outputs, new_node.outputs):
            memo.setdefault(old, new)  # a replacement given for one output stays
    return tuple(memo.get(output, output) for output in outputs)
