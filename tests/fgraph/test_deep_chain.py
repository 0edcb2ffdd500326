"""A 50 000-node chain, 50 times as deep as Python's recursion limit (1 000): every
traversal is iterative, so nothing hits the limit."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

from fgraph import Graph, check_graph, dprint, evaluate, toposort
from tests.fgraph.builders import chain, vector

LENGTH = 50_000


@pytest.mark.slow
def test_fifty_thousand_node_chain() -> None:
    assert sys.getrecursionlimit() < LENGTH
    x = vector("x", length=3)
    out = chain(x, LENGTH)

    nodes = toposort([out])
    assert len(nodes) == LENGTH
    assert nodes[0].inputs == (x,) and nodes[-1] is out.owner

    graph = Graph([x], [out])
    assert graph.nodes == nodes
    assert len(graph.digest) == 64

    text = dprint(graph, file=None)
    assert "… (max_depth=64)" in text
    assert len(text.splitlines()) < 200

    check_graph(graph)

    (value,) = evaluate([out], {x: np.array([1.0, -2.0, 0.5])})
    np.testing.assert_allclose(value, [2.0, -4.0, 1.0])

    loaded = pickle.loads(pickle.dumps(graph))
    assert isinstance(loaded, Graph)
    assert len(loaded.nodes) == LENGTH
    # Equal digests mean equal structure; `loaded == graph` would too, at the price of
    # building both canonical forms (another 100 000 nodes).
    assert loaded.digest == graph.digest
    assert loaded.inputs[0] is not x and loaded.nodes[0].inputs == loaded.inputs
