"""Interning under threads: concurrent builders of the same expression get the same objects."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import numpy as np
import pytest

from fgraph import Apply, Constant, Graph, Input, Param, TensorType, Variable
from tests.fgraph.builders import checked_graph, vector
from tests.fgraph.toy_ops import Composite, Scale, SplitSign, add, exp

THREADS = 4


@pytest.fixture
def frequent_switches() -> Iterator[None]:
    """Switch threads as often as CPython allows, so the builders really interleave."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def build(x: Input, y: Input, steps: int) -> list[object]:
    """Everything interned that a builder can create: nodes, params, constants, inner graphs."""
    made: list[object] = []
    value: Variable = x
    for step in range(steps):
        param = Param(step % 7, TensorType("float64", (None,)))
        constant = Constant(np.array([step * 0.25]))
        inner = Graph([param], [exp(param)])
        positive, negative = SplitSign().apply(add(value, constant))
        value = add(Composite(inner)(positive), Scale(float(step))(add(negative, y)))
        made.extend([param, constant, positive.owner, value.owner])
    return made


def test_threads_building_the_same_expressions_get_identical_objects(
    frequent_switches: None,
) -> None:
    x, y = vector("x"), vector("y")
    barrier = threading.Barrier(THREADS)
    results: list[list[object]] = [[] for _ in range(THREADS)]
    errors: list[BaseException] = []

    def worker(number: int) -> None:
        try:
            barrier.wait()
            results[number] = build(x, y, 300)
        except BaseException as error:  # reported below, not lost in the thread
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(number,)) for number in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    reference = results[0]
    assert len(reference) == 4 * 300
    for other in results[1:]:
        assert len(other) == len(reference)
        assert all(a is b for a, b in zip(reference, other))
    final = reference[-1]
    assert isinstance(final, Apply)
    checked_graph([x, y], [final.out])


def test_threads_racing_on_one_new_node_get_one_object(frequent_switches: None) -> None:
    for round_number in range(50):
        x = vector("x")
        barrier = threading.Barrier(THREADS)
        found: list[Apply] = []

        def worker() -> None:
            barrier.wait()
            output = Scale(float(round_number))(exp(x))
            assert output.owner is not None
            found.append(output.owner)

        threads = [threading.Thread(target=worker) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(found) == THREADS
        assert all(node is found[0] for node in found)
