"""`dprint`: a graph as an indented tree, in PyTensor's style.

    Add [id A] float64(?,)
     ├─ Exp [id B] float64(?,)
     │  └─ x [id C] float64(?,)
     └─ Exp [id B] ···

Every node and root variable gets an id the first time it is printed; a node printed
again shows its id and `···` instead of its subtree. Inner graphs (composites, loops,
op_from_graph) are printed below the main tree. The walk is iterative, and subtrees
deeper than `max_depth` are cut with `…`, so huge chains print in bounded width.
"""

from __future__ import annotations

import string
import sys
from collections.abc import Iterable
from typing import TextIO

import numpy as np

from fgraph.graph import Graph
from fgraph.node import Apply
from fgraph.op import inner_graphs_of
from fgraph.variable import Constant, Input, Param, Variable


def dprint(
    target: Graph | Variable | Iterable[Variable],
    *,
    print_type: bool = True,
    max_depth: int = 64,
    file: TextIO | None = sys.stdout,
) -> str:
    """Print (to `file`, unless None) and return the tree of `target`'s outputs."""
    outputs = _outputs_of(target)
    printer = _Printer(print_type, max_depth)
    lines: list[str] = []
    for output in outputs:
        printer.tree(output, lines)
    shown_inner: list[Graph] = []
    while printer.pending_inner:
        label, inner = printer.pending_inner.pop(0)
        if inner in shown_inner:
            continue
        shown_inner.append(inner)
        if len(shown_inner) == 1:
            lines.append("")
            lines.append("Inner graphs:")
        lines.append("")
        lines.append(label)
        for output in inner.outputs:
            printer.tree(output, lines, indent=" ")
    text = "\n".join(lines)
    if file is not None:
        print(text, file=file)
    return text


def _outputs_of(target: Graph | Variable | Iterable[Variable]) -> tuple[Variable, ...]:
    if isinstance(target, Graph):
        return target.outputs
    if isinstance(target, Variable):
        return (target,)
    return tuple(target)


def _id_name(number: int) -> str:
    """A, B, ..., Z, AA, AB, ... (bijective base 26, like spreadsheet columns)."""
    name = ""
    number += 1
    while number:
        number, remainder = divmod(number - 1, 26)
        name = string.ascii_uppercase[remainder] + name
    return name


class _Printer:
    """Holds the ids assigned so far, so shared nodes print once across all trees."""

    def __init__(self, print_type: bool, max_depth: int) -> None:
        self.print_type = print_type
        self.max_depth = max_depth
        self.ids: dict[object, str] = {}
        self.expanded: set[Apply] = set()
        self.pending_inner: list[tuple[str, Graph]] = []

    def ident(self, key: object) -> tuple[str, bool]:
        """The id for a node or root variable, and whether it was assigned just now."""
        found = self.ids.get(key)
        if found is not None:
            return found, False
        found = self.ids[key] = _id_name(len(self.ids))
        return found, True

    def tree(self, root: Variable, lines: list[str], indent: str = "") -> None:
        # Stack entries: (variable, prefix for its line, prefix for its children, depth).
        stack: list[tuple[Variable, str, str, int]] = [(root, indent, indent + " ", 0)]
        while stack:
            variable, line_prefix, child_prefix, depth = stack.pop()
            node = variable.owner
            if node is None:
                identity, _ = self.ident(variable)
                lines.append(f"{line_prefix}{self.root_label(variable)} [id {identity}]{self.type_of(variable)}")
                continue
            identity, _ = self.ident(node)
            label = f"{node.op}" + (f".{variable.index}" if len(node.output_types) > 1 else "")
            if node in self.expanded:
                lines.append(f"{line_prefix}{label} [id {identity}] ···")
                continue
            if depth >= self.max_depth:
                lines.append(f"{line_prefix}{label} [id {identity}] … (max_depth={self.max_depth})")
                continue
            self.expanded.add(node)
            lines.append(f"{line_prefix}{label} [id {identity}]{self.type_of(variable)}")
            for inner in inner_graphs_of(node.op):
                self.pending_inner.append((f"{node.op} [id {identity}]", inner))
            children = node.inputs
            for number in reversed(range(len(children))):
                last = number == len(children) - 1
                stack.append(
                    (
                        children[number],
                        child_prefix + ("└─ " if last else "├─ "),
                        child_prefix + ("   " if last else "│  "),
                        depth + 1,
                    )
                )

    def type_of(self, variable: Variable) -> str:
        return f" {variable.type}" if self.print_type else ""

    @staticmethod
    def root_label(variable: Variable) -> str:
        if isinstance(variable, Input):
            return variable.name or "<unnamed>"
        if isinstance(variable, Param):
            return f"p{variable.index}"
        if isinstance(variable, Constant):
            if variable.data.size <= 6:
                return f"{np.array2string(variable.data, separator=', ')}"
            return "Constant"
        return repr(variable)
