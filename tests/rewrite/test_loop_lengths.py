"""Lengths of a for-loop's outputs read off its inputs (`rewrite.lengths`): a per-step
output's rows are the step count, a final carry has its initial value's lengths and a
trace has them after its rows, `trace[1:]` and `trace[:-1]` have the step count's rows
and `x[:k]` has x's rows where k is x's length. Random loops over sequences of unknown
length with 0, 1 or more steps, carries of one or two axes, per-step outputs, reversed
loops, windows and while-loops (whose traces hold the executed steps only: none of
this applies). The rewritten graph must give the reference evaluator's values, and
read every claimed length off a variable that has it."""

from __future__ import annotations

import random

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, check_graph, evaluate
from fgraph.op import Array
from ops.scan_op import Scan
from ops.shape_vector import ShapeI, shape_i
from rewrite import rule_pass
from rewrite.lengths import length_source
from rewrite.pipelines import SIMPLIFY


def _loop(seed: int) -> tuple[list[Variable], list[Array], list[Variable]]:
    """A random loop and every length of its outputs and of their slices."""
    rng = random.Random(seed)
    steps = rng.choice([0, 1, 3])
    width = rng.randint(1, 3)
    xs = pt.tensor("xs", shape=(None, None))
    start = pt.tensor("start", shape=(None,) * rng.randint(1, 2))
    start_value = np.full((width,) * start.ndim, 0.5)
    values = [np.arange(steps * width, dtype="float64").reshape(steps, width), start_value]

    def step(row: Variable, carry: Variable) -> tuple[Variable, Variable]:
        grown = carry * 0.5 + (row if carry.ndim == 1 else row[:, None])
        return grown, pt.sum(grown) + row

    carries, ys = pt.scan(step, sequences=[xs], outputs_info=[start, None],
                          go_backwards=rng.random() < 0.3)
    lengths = [xs.shape[0]]
    assert carries.owner is not None
    trace = carries.owner.inputs[0]  # pt.scan returns trace[1:]
    scan = trace.owner
    assert scan is not None and isinstance(scan.op, Scan)
    for value in (*scan.outputs, carries, ys, trace[:-1], trace[1:][: xs.shape[0]],
                  ys[: xs.shape[0]]):
        lengths += [shape_i(value, axis) for axis in range(value.ndim)]
    return [xs, start], values, [pt.sum(carries), *lengths]


def _unresolved(graph: Graph) -> list[str]:
    return [str(node) for node in graph.nodes
            if isinstance(node.op, ShapeI) and length_source(node.inputs[0], node.op.axis)]


@pytest.mark.parametrize("seed", range(24))
def test_loop_lengths_read_off_inputs(seed: int) -> None:
    inputs, values, outputs = _loop(seed)
    graph = Graph(inputs, outputs)
    result = rule_pass(SIMPLIFY)(graph)
    check_graph(result)
    feed = dict(zip(inputs, values))
    for have, want in zip(evaluate(result.outputs, feed), evaluate(graph.outputs, feed)):
        np.testing.assert_array_equal(have, want)
    assert _unresolved(result) == []
    loops = [node for node in result.nodes if isinstance(node.op, Scan)]
    read = {(node.inputs[0], node.op.axis) for node in result.nodes if isinstance(node.op, ShapeI)}
    assert all(node.outputs[0] not in {source for source, _ in read} for node in loops)


def test_while_loop_traces_keep_their_rows() -> None:
    """A while-loop's traces hold only the executed steps: no rule reads their rows off
    the step count."""
    x = pt.tensor("x", shape=())
    limit = pt.tensor("limit", shape=(None,))
    trace = pt.scan(lambda value: (value * 2.0, pt.until(value > 10.0)),
                    outputs_info=[x], n_steps=limit.shape[0])
    graph = Graph([x, limit], [shape_i(trace, 0), shape_i(trace[:-1], 0)])
    result = rule_pass(SIMPLIFY)(graph)
    feed: dict[Variable, Array] = {x: np.array(1.0), limit: np.zeros(20)}
    assert [int(n) for n in evaluate(graph.outputs, feed)] == [5, 4]  # 2, 4, 8, 16, 32
    assert [int(n) for n in evaluate(result.outputs, feed)] == [5, 4]
