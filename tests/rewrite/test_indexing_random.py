"""The indexing rules on random basic indices: chains of updates, elementwise work and
reads, with static and unknown lengths, static and symbolic bounds, negative steps and
out-of-range bounds. Every rewritten graph must be valid and give the reference
evaluator's values. (Seeded, so a failure reproduces; it found the `x[0::-1]` ->
`x[::-1]` bug the canonical form once had.)"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, check_graph, evaluate
from fgraph.op import Array
from rewrite import RuleSet, rule_pass
from rewrite.pipelines import SIMPLIFY, SIMPLIFY_AND_LIFT

Index = tuple[Any, ...]  # a NumPy basic index: ints, slices, int scalar variables


def indexed_shape(shape: tuple[int, ...], index: Index) -> tuple[int, ...]:
    """The shape NumPy gives `array[index]` for an array of `shape` (raises as it does)."""
    return np.empty(shape)[index].shape


class RandomIndexing:
    """Builds one random graph: its inputs and their values grow as it goes."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.inputs: list[Variable] = []
        self.values: list[Array] = []

    def input(self, name: str, shape: tuple[int | None, ...], value: Array) -> Variable:
        variable = pt.tensor(name, shape=shape, dtype=value.dtype.name)
        self.inputs.append(variable)
        self.values.append(value)
        return variable

    def bound(self, length: int) -> int | None:
        edges = [None, 0, length, -1]  # where slicing rules have their corner cases
        return self.rng.choice([*edges, self.rng.randint(-length - 2, length + 2)])

    def index(self, shape: tuple[int, ...]) -> Index:
        items: list[object] = []
        for length in shape:
            draw = self.rng.random()
            if draw < 0.3:
                items.append(self.rng.randint(-length, length - 1))
            else:
                step = self.rng.choice([None, None, 1, 2, -1, -2])
                items.append(slice(self.bound(length), self.bound(length), step))
        return tuple(items)

    def symbolic(self, index: Index) -> Index:
        """`index` with some ints and bounds replaced by int64 scalar inputs."""

        def part(value: object) -> object:
            if not isinstance(value, int) or self.rng.random() < 0.6:
                return value
            return self.input(f"i{len(self.inputs)}", (), np.array(value))

        return tuple(
            slice(part(item.start), part(item.stop), item.step)
            if isinstance(item, slice)
            else part(item)
            for item in index
        )

    def update(self, target: Variable, shape: tuple[int, ...], index: Index) -> Variable:
        region = indexed_shape(shape, index)
        value = self.input("y", (None,) * len(region), np.asarray(np.random.rand(*region)))
        update: Callable[[Variable, Variable], Variable]
        update = pt.set_subtensor if self.rng.random() < 0.5 else pt.inc_subtensor
        return update(target[self.symbolic(index)], value)

    def graph(self) -> Graph | None:
        """A random graph, or None where the drawn indices are invalid."""
        shape = tuple(self.rng.randint(1, 5) for _ in range(self.rng.randint(1, 3)))
        static = self.rng.random() < 0.5
        x = self.input("x", shape if static else (None,) * len(shape), np.random.rand(*shape))
        try:
            value = x
            for _ in range(self.rng.randint(1, 3)):
                value = self.update(value, shape, self.index(shape))
            broadcast = tuple(1 if self.rng.random() < 0.5 else length for length in shape)
            b = self.input("b", tuple(1 if n == 1 else None for n in broadcast), np.ones(broadcast))
            read = self.index(shape)
            out = (pt.exp(value) * b)[self.symbolic(read)]
            if out.ndim and self.rng.random() < 0.5:
                out = out[self.symbolic(self.index(indexed_shape(shape, read)))]
            evaluate([out], dict(zip(self.inputs, self.values)))
        except (IndexError, ValueError):
            return None
        return Graph(self.inputs, [out])


@pytest.mark.parametrize("rules", [SIMPLIFY, SIMPLIFY_AND_LIFT], ids=lambda rules: rules.name)
def test_random_indexing_keeps_values(rules: RuleSet) -> None:
    rewrite = rule_pass(rules)
    checked = 0
    for seed in range(150):
        builder = RandomIndexing(seed)
        graph = builder.graph()
        if graph is None:
            continue
        result = rewrite(graph)
        check_graph(result)
        feed = dict(zip(builder.inputs, builder.values))
        (want,) = evaluate(graph.outputs, feed)
        (got,) = evaluate(result.outputs, feed)
        assert got.shape == want.shape, f"seed {seed}"
        np.testing.assert_allclose(got, want, err_msg=f"seed {seed}")
        checked += 1
    assert checked > 50
