"""The shape and indexing rules on what they are for: second derivatives of loops.

A loop unrolled by hand writes its state into a buffer one step at a time with
`set_subtensor`; its gradient scatters cotangents into zeros with `inc_subtensor`, and
the gradient of that gradient differentiates those updates again. After the pipeline
nothing of that bookkeeping should be left when every length is static, and values must
not change. Repeated sub-expressions cost nothing: nodes are interned.
"""

from __future__ import annotations

import numpy as np

import ops as pt
from fgraph import Graph, Variable, check_graph, evaluate
from ops.advanced_subtensor import AdvancedIncSubtensor
from ops.subtensor import IncSubtensor, Subtensor
from rewrite import optimize, rule_pass
from rewrite.inc_subtensor import is_zeros
from rewrite.pipelines import SIMPLIFY_AND_LIFT

RNG = np.random.default_rng(7)
STEPS = 4


def unrolled_loop(x: Variable, steps: int = STEPS) -> Variable:
    """state[0] = x; state[t] = sin(state[t - 1]) * x, written into a buffer."""
    buffer = pt.set_subtensor(pt.zeros((steps, 3))[0], x)
    for step in range(1, steps):
        buffer = pt.set_subtensor(buffer[step], pt.sin(buffer[step - 1]) * x)
    return buffer


def second_derivative(x: Variable) -> Variable:
    loss = (unrolled_loop(x) ** 2).sum()
    return pt.grad(pt.grad(loss, x).sum(), x)


def updates_of_zeros(graph: Graph) -> list[str]:
    """The updates whose array is zeros by construction (what reverse mode scatters into)."""
    return [
        str(node.op)
        for node in graph.nodes
        if isinstance(node.op, (IncSubtensor, AdvancedIncSubtensor)) and is_zeros(node.inputs[0])
    ]


def assert_same_values(before: Graph, after: Graph) -> None:
    for _ in range(3):
        value = RNG.normal(size=3)
        (want,) = evaluate(before.outputs, {before.inputs[0]: value})
        (got,) = evaluate(after.outputs, {after.inputs[0]: value})
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_second_derivative_of_an_unrolled_loop_keeps_no_index_bookkeeping() -> None:
    x = pt.tensor("x", shape=(3,))
    graph = Graph([x], [second_derivative(x)])
    check_graph(graph)
    assert updates_of_zeros(graph)  # the pattern the rules are there to remove

    simplified = rule_pass(SIMPLIFY_AND_LIFT)(graph)
    check_graph(simplified)
    assert updates_of_zeros(simplified) == []
    indexing = (Subtensor, IncSubtensor)
    assert [str(node.op) for node in simplified.nodes if isinstance(node.op, indexing)] == []
    assert len(simplified.nodes) < len(graph.nodes) // 2
    assert_same_values(graph, simplified)

    optimized = optimize(graph, "fast_run")
    check_graph(optimized)
    assert updates_of_zeros(optimized) == []
    assert [type(node.op).__name__ for node in optimized.nodes] == ["Fused"]
    assert_same_values(graph, optimized)


def test_fast_compile_removes_updates_of_zeros_too() -> None:
    x = pt.tensor("x", shape=(3,))
    graph = Graph([x], [second_derivative(x)])
    optimized = optimize(graph, "fast_compile")
    check_graph(optimized)
    assert len(updates_of_zeros(optimized)) < len(updates_of_zeros(graph))
    assert_same_values(graph, optimized)


def test_second_derivative_with_unknown_lengths_keeps_its_values() -> None:
    x = pt.vector("x")
    buffer = pt.set_subtensor(pt.zeros((STEPS, x.shape[0]))[0], x)
    for step in range(1, STEPS):
        buffer = pt.inc_subtensor(buffer[step], pt.sin(buffer[step - 1]) * x)
    loss = (buffer[1:] ** 2).sum()
    graph = Graph([x], [pt.grad(pt.grad(loss, x).sum(), x)])
    optimized = optimize(graph, "fast_run")
    check_graph(optimized)
    assert [node for node in optimized.nodes if isinstance(node.op, IncSubtensor)] == []
    # One fused loop, plus the zeros of x's length that it reads.
    assert len(optimized.nodes) <= 5 < 100 < len(graph.nodes)
    assert_same_values(graph, optimized)


# --- interning ---------------------------------------------------------------------------------
def test_equal_subgraphs_built_separately_in_a_gradient_are_one_node() -> None:
    x = pt.tensor("x", shape=(3,))
    first, second = second_derivative(x), second_derivative(x)
    assert first.owner is second.owner  # the second build met the first's nodes
    alone = Graph([x], [first])
    assert len(Graph([x], [first, second]).nodes) == len(alone.nodes)


def test_rewrites_that_meet_on_one_expression_share_its_node() -> None:
    x = pt.tensor("x", shape=(10,))
    # Two different chains of slices that both pick x[3]; each feeds its own exp.
    graph = Graph([x], [pt.exp(x[2:][1]) + pt.exp(x[1:][2])])
    assert len([node for node in graph.nodes if isinstance(node.op, Subtensor)]) == 4
    simplified = rule_pass(SIMPLIFY_AND_LIFT)(graph)
    check_graph(simplified)
    subtensors = [node for node in simplified.nodes if isinstance(node.op, Subtensor)]
    exps = [node for node in simplified.nodes if str(node.op) == "Exp"]
    assert [str(node.op) for node in subtensors] == ["Subtensor{3}"]
    assert len(exps) == 1
    (add,) = [node for node in simplified.nodes if str(node.op) == "Add"]
    assert add.inputs[0].owner is add.inputs[1].owner
    value = RNG.normal(size=10)
    assert evaluate(simplified.outputs, {x: value})[0] == 2 * np.exp(value[3])
