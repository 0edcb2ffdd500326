"""Inlining `OpFromGraph{inline}`: the node becomes its inner graph over the node's
inputs, values are kept, nested inline ops expand too, other ops stay opaque."""

from __future__ import annotations

import numpy as np

import ops as pt
from fgraph import Graph, Variable, check_graph, evaluate
from ops.from_graph import OpFromGraph
from rewrite import FAST_COMPILE, FAST_RUN, optimize, rule_pass
from rewrite.inline import INLINE

X_VALUE = np.array([0.5, -1.2, 2.0])
Y_VALUE = np.array([1.5, 0.3, -0.7])


def inlined(graph: Graph) -> Graph:
    result = rule_pass(INLINE)(graph)
    check_graph(result)
    return result


def op_types(graph: Graph) -> list[str]:
    return [type(node.op).__name__ for node in graph.nodes]


def assert_same_values(before: Graph, after: Graph) -> None:
    values: dict[Variable, np.ndarray] = dict(zip(before.inputs, (X_VALUE, Y_VALUE)))
    for want, got in zip(evaluate(before.outputs, values), evaluate(after.outputs, values)):
        np.testing.assert_allclose(got, want, rtol=1e-14)


def exp_times(inline: bool) -> OpFromGraph:
    a, b = pt.vector("a"), pt.vector("b")
    return pt.op_from_graph([a, b], [pt.exp(a) * b, a - b], inline=inline)


def test_an_inline_op_becomes_its_inner_graph() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    product, difference = exp_times(inline=True).apply(x, y)
    graph = Graph([x, y], [product + difference])
    result = inlined(graph)
    assert result == Graph([x, y], [pt.exp(x) * y + (x - y)])
    assert_same_values(graph, result)


def test_ops_without_the_flag_stay_opaque() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    graph = Graph([x, y], [exp_times(inline=False).apply(x, y)[0]])
    assert inlined(graph) is graph


def test_nested_inline_ops_expand_too() -> None:
    a, b = pt.vector("a"), pt.vector("b")
    outer = pt.op_from_graph([a, b], [exp_times(inline=True).apply(b, a)[1] * 2.0], inline=True)
    x, y = pt.vector("x"), pt.vector("y")
    graph = Graph([x, y], [outer(x, y)])
    result = inlined(graph)
    assert "OpFromGraph" not in op_types(result)
    assert result == Graph([x, y], [(y - x) * 2.0])
    assert_same_values(graph, result)


def test_an_inner_graph_returning_its_input_inlines_to_that_input() -> None:
    a = pt.vector("a")
    identity = pt.op_from_graph([a], [a], inline=True)
    x, y = pt.vector("x"), pt.vector("y")
    graph = Graph([x, y], [identity(x) + y])
    assert inlined(graph) == Graph([x, y], [x + y])


def test_both_optimizing_pipelines_inline_first() -> None:
    for pipeline in (FAST_RUN, FAST_COMPILE):
        assert pipeline.passes[0] == rule_pass(INLINE)
    x, y = pt.vector("x"), pt.vector("y")
    graph = Graph([x, y], [exp_times(inline=True).apply(x, y)[0]])
    for name in ("fast_run", "fast_compile"):
        result = optimize(graph, name)
        check_graph(result)
        assert "OpFromGraph" not in op_types(result)
        assert_same_values(graph, result)
