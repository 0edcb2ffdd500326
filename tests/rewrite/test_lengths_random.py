"""Lengths read off inputs (`rewrite.lengths`, `rewrite.shapes.length_of_input`) on
random chains of the ops they pass through: elementwise work with broadcasting,
transposes, new axes, reductions, matrix products, triangular solves, Cholesky factors,
basic indexing, updates, running sums and sorts, allocations, reshapes and aranges to
lengths, over inputs of unknown lengths. Every
length of every intermediate is an output. The rewritten graph must be valid, give the
reference evaluator's values, and read every length off a variable that has it of its
own (no `ShapeI` left whose input has a source). Seeded, so a failure reproduces."""

from __future__ import annotations

import random

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, check_graph, evaluate
from fgraph.op import Array
from ops.shape_vector import ShapeI, shape_i
from rewrite import RuleSet, rule_pass
from rewrite.lengths import length_source
from rewrite.pipelines import SIMPLIFY
from rewrite.shapes import length_of_input


class RandomChain:
    """One random chain: its inputs and their values grow as it goes."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.inputs: list[Variable] = []
        self.values: list[Array] = []

    def input(self, value: Array, broadcast: bool = False) -> Variable:
        """An input of `value`'s rank, of unknown lengths (static 1 where `value` has
        length 1 and `broadcast`)."""
        shape = tuple(1 if broadcast and n == 1 else None for n in value.shape)
        variable = pt.tensor(f"x{len(self.inputs)}", shape=shape)
        self.inputs.append(variable)
        self.values.append(value)
        return variable

    def length(self) -> int:
        return self.rng.randint(2, 4)

    def array(self, shape: tuple[int, ...], low: float, high: float) -> Array:
        return np.array([self.rng.uniform(low, high) for _ in range(int(np.prod(shape)))]).reshape(shape)

    def step(self, term: Variable, shape: tuple[int, ...]) -> tuple[Variable, tuple[int, ...]]:
        """One op applied to `term` (of run-time `shape`): the result and its shape."""
        rank = len(shape)
        choices = ["elementwise", "unary", "expand", "update", "cumsum", "sort", "filled", "count"]
        if min(shape[:2]) >= 2:
            choices.append("index")
        if rank >= 2:
            choices += ["transpose", "reduce", "matmul", "solve", "cholesky"]
        choice = self.rng.choice(choices)
        if choice == "elementwise":
            partner = tuple(1 if self.rng.random() < 0.4 else n for n in shape)
            return term * self.input(self.array(partner, 0.5, 1.5), broadcast=True), shape
        if choice == "unary":
            return pt.exp(pt.tanh(term)), shape
        if choice == "filled":  # an array allocated to term's shape, or term reshaped to it
            entries = [term.shape[axis] for axis in range(rank)]
            target = term.shape if self.rng.random() < 0.5 else entries
            if self.rng.random() < 0.5:
                return term + pt.broadcast_to(0.25, target), shape
            return pt.reshape(pt.flatten(term), target), shape
        if choice == "count":  # arange(n) along the last axis
            counted = pt.arange(term.shape[rank - 1]).astype("float64")
            return term * counted, shape
        if choice == "expand":
            axis = self.rng.randint(0, rank)
            return pt.expand_dims(term, axis), (*shape[:axis], 1, *shape[axis:])
        if choice == "update":
            return pt.set_subtensor(term[0], 0.5), shape
        if choice == "cumsum":
            return pt.cumsum(term, axis=rank - 1), shape
        if choice == "sort":
            return pt.sort(term), shape
        if choice == "index":
            if rank >= 2 and self.rng.random() < 0.5:
                return term[1], shape[1:]
            if rank >= 2:
                return term[:, 1:], (shape[0], shape[1] - 1, *shape[2:])
            return term[1:], (shape[0] - 1,)
        if choice == "transpose":
            order = list(range(rank))
            self.rng.shuffle(order)
            return pt.transpose(term, order), tuple(shape[k] for k in order)
        if choice == "reduce":
            axis = self.rng.randrange(rank)
            return pt.sum(term, axis=axis), shape[:axis] + shape[axis + 1 :]
        if choice == "matmul":
            columns = self.length()
            operand = self.array((*shape[:-2], shape[-1], columns), -1.0, 1.0)
            return term @ self.input(operand), (*shape[:-1], columns)
        rows = shape[-2]
        if choice == "solve":
            triangle = np.tril(self.array((rows, rows), -0.5, 0.5))
            factor = self.input(triangle + 3.0 * np.eye(rows))
            padded = pt.expand_dims(factor, tuple(range(rank - 2))) if rank > 2 else factor
            return pt.linalg.solve_triangular(padded, term, lower=True), shape
        gram = term @ pt.swapaxes(term, -1, -2)
        ridge = self.input(rows * 10.0 * np.eye(rows))
        return pt.linalg.cholesky(gram + ridge), (*shape[:-1], rows)

    def graph(self) -> Graph:
        shape = tuple(self.length() for _ in range(self.rng.randint(1, 3)))
        term = self.input(self.array(shape, -1.0, 1.0))
        lengths: list[Variable] = []
        for _ in range(self.rng.randint(1, 6)):
            term, shape = self.step(term, shape)
            lengths += [shape_i(term, axis) for axis in range(term.ndim)]
        return Graph(self.inputs, [pt.sum(term), *lengths])


def _unresolved(graph: Graph) -> list[str]:
    """The lengths still read off a variable that has a source."""
    return [
        str(node)
        for node in graph.nodes
        if isinstance(node.op, ShapeI) and length_source(node.inputs[0], node.op.axis) is not None
    ]


@pytest.mark.parametrize(
    "rules",
    [RuleSet("of_input", (length_of_input,)), SIMPLIFY],
    ids=lambda rules: rules.name,
)
def test_random_chains_read_lengths_off_inputs(rules: RuleSet) -> None:
    rewrite = rule_pass(rules)
    read_off = 0
    for seed in range(120):
        chain = RandomChain(seed)
        graph = chain.graph()
        result = rewrite(graph)
        check_graph(result)
        feed = dict(zip(chain.inputs, chain.values))
        want = evaluate(graph.outputs, feed)
        got = evaluate(result.outputs, feed)
        for number, (have, expected) in enumerate(zip(got, want)):
            assert have.dtype == expected.dtype, f"seed {seed}, output {number}"
            np.testing.assert_allclose(have, expected, rtol=1e-9, err_msg=f"seed {seed}")
        assert _unresolved(result) == [], f"seed {seed}"
        read_off += _unresolved(graph) != []
    assert read_off > 100  # most chains had lengths to read off
