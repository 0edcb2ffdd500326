"""What a context rule may ask about the graph being rewritten: who reads a variable and
whether it is a graph output.

`GraphContext` answers exactly for a fixed graph (unit-test a context rule with it). The
engine passes its own implementation, whose answers during a pass are described in
`rewrite.engine`.
"""

from __future__ import annotations

from typing import Protocol

import attrs

from fgraph import Apply, Graph, Variable

Clients = tuple[tuple[Apply, int], ...]


class RewriteContext(Protocol):
    """The graph-level facts a context rule may read."""

    def clients(self, variable: Variable) -> Clients:
        """The (node, input index) pairs that read `variable`."""
        ...

    def is_output(self, variable: Variable) -> bool:
        """Whether `variable` is an output of the graph (read by the caller)."""
        ...


@attrs.frozen
class GraphContext:
    """Exact context of a fixed graph, from its cached `clients`."""

    graph: Graph

    def clients(self, variable: Variable) -> Clients:
        return self.graph.clients.get(variable, ())

    def is_output(self, variable: Variable) -> bool:
        return variable in self.graph.outputs
