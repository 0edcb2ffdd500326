"""Dropping graphs frees them: intern tables hold nodes weakly and nothing else keeps them.

Nodes hold no reference to their outputs (which are made on demand), so there are no
cycles and freeing is immediate; these tests would catch a strong reference anywhere
(a cache, a cycle through `Output`, a table keyed on live objects).
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
import weakref

import pytest

import fgraph.intern
from fgraph import Graph, dprint, intern_table_sizes
from tests.fgraph.builders import chain, vector


def build_and_drop(length: int, use: bool) -> None:
    """Build a chain and its graph, optionally use it as a user would (digest, printing),
    and drop it."""
    x = vector("x", length=2)
    graph = Graph([x], [chain(x, length)])
    if use:
        assert len(graph.digest) == 64
        dprint(graph, file=None, max_depth=8)


def test_dropped_graph_is_freed_at_once_without_the_cycle_collector() -> None:
    """No reference cycles: a graph with all its derived data dies with its last reference."""
    gc.collect()
    baseline_sizes = intern_table_sizes()
    gc.disable()
    try:
        x = vector("x")
        graph = Graph([x], [chain(x, 2_000)], dedup_nodes=False)
        assert hash(graph) and graph.digest and graph.clients and graph.node_set
        dprint(graph, file=None)
        graph_ref, node_ref = weakref.ref(graph), weakref.ref(graph.nodes[0])
        del graph, x
        assert graph_ref() is None and node_ref() is None
        assert intern_table_sizes() == baseline_sizes
    finally:
        gc.enable()


@pytest.mark.slow
def test_400_000_nodes_built_and_dropped_leave_nothing_behind() -> None:
    chunk, chunks = 50_000, 8
    build_and_drop(chunk, use=True)  # warm up: caches, and the tables' dicts at their working size
    gc.collect()
    baseline_sizes = intern_table_sizes()
    baseline_blocks = sys.getallocatedblocks()
    for _ in range(chunks):
        build_and_drop(chunk, use=False)
        assert intern_table_sizes() == baseline_sizes  # freed at once, without the gc
    gc.collect()
    assert intern_table_sizes() == baseline_sizes
    # Every live object is at least one allocated block; a per-node leak of even a single
    # object would leave about 400 000 of them.
    assert sys.getallocatedblocks() - baseline_blocks < 1_000


@pytest.mark.slow
def test_traced_memory_returns_to_baseline() -> None:
    """tracemalloc slows building about fivefold, so it watches 80 000 nodes: a per-node
    leak of even the smallest object (16 bytes) would retain 1.28 MB, over the threshold.

    The intern tables' own hash-table storage is excluded: a dict keeps its capacity after
    its entries are deleted, and may be reallocated (at the same size) while traced.
    """
    chunk, chunks = 20_000, 4
    build_and_drop(chunk, use=True)
    gc.collect()
    baseline_sizes = intern_table_sizes()
    tracemalloc.start()
    try:
        gc.collect()
        baseline = tracemalloc.take_snapshot()
        for _ in range(chunks):
            build_and_drop(chunk, use=True)
        gc.collect()
        _, peak = tracemalloc.get_traced_memory()
        final = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    assert intern_table_sizes() == baseline_sizes
    assert peak > 5_000_000  # the chains really were allocated while traced
    table_storage = [
        tracemalloc.Filter(False, weakref.__file__),
        tracemalloc.Filter(False, fgraph.intern.__file__),
    ]
    growth = final.filter_traces(table_storage).compare_to(
        baseline.filter_traces(table_storage), "lineno"
    )
    retained = sum(stat.size_diff for stat in growth)
    largest = "\n".join(str(stat) for stat in growth[:5])
    assert retained < 1_000_000, f"{retained} bytes retained; largest:\n{largest}"
