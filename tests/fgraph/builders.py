"""Graph builders shared by the core tests: typed inputs, validated graphs, long chains."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fgraph import Graph, Input, TensorType, Variable, check_graph
from tests.fgraph.toy_ops import Add, Scale

VECTOR = TensorType("float64", (None,))


def vector(name: str, dtype: str = "float64", length: int | None = None) -> Input:
    """A fresh rank-1 input."""
    return Input(TensorType(dtype, (length,)), name)


def checked_graph(
    inputs: Sequence[Variable], outputs: Sequence[Variable], dedup_nodes: bool = True
) -> Graph:
    """A graph that has passed `check_graph`: every test graph goes through the validator."""
    graph = Graph(inputs, outputs, dedup_nodes=dedup_nodes)
    check_graph(graph)
    return graph


def chain(start: Variable, length: int) -> Variable:
    """`length` nodes alternating `v * 0.5` and `v + start`; the value tends to `2 * start`
    without overflowing, so even a 200 000-node chain evaluates to something checkable."""
    halve = Scale(0.5)
    add = Add()
    value = start
    for step in range(length):
        value = add(value, start) if step % 2 else halve(value)
    return value


def smuggle(value: object) -> Any:
    """Pass a deliberately ill-typed value past mypy, to exercise run-time validation."""
    return value
