"""Rewriting inner graphs: each op's inner graph is mapped and the op rebuilt."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from fgraph import Apply, Constant, Graph, Input, Op, Param, TensorType, Variable, check_graph
from rewrite import (
    InnerGraphPass,
    InvalidReplacementError,
    Pipeline,
    RuleSet,
    map_inner_graphs,
    rule_pass,
)
from tests.fgraph.toy_ops import Add, Composite, Exp, Scale
from tests.rewrite.toy_rules import CANONICALIZE, assert_same_values

VALUES = np.array([0.5, -1.0, 2.0])
VECTOR = TensorType("float64", (3,))


def vector(name: str) -> Input:
    return Input(VECTOR, name)


def inner() -> Graph:
    """exp(1 * p0): an inner graph with something for CANONICALIZE to remove."""
    p0 = Param(0, VECTOR)
    return Graph([p0], [Exp()(Scale(1.0)(p0))])


def composites(graph: Graph) -> list[Composite]:
    return [node.op for node in graph.nodes if isinstance(node.op, Composite)]


def test_inner_graphs_are_rewritten_and_the_ops_rebuilt() -> None:
    x = vector("x")
    graph = Graph([x], [Add()(Composite(inner())(x), x)])
    result = map_inner_graphs(graph, rule_pass(CANONICALIZE))
    check_graph(result)
    (op,) = composites(result)
    assert [type(node.op) for node in op.inner_graph.nodes] == [Exp]
    assert_same_values(graph, result, VALUES)


def test_unchanged_inner_graphs_give_back_the_same_graph() -> None:
    x = vector("x")
    p0 = Param(0, VECTOR)
    graph = Graph([x], [Composite(Graph([p0], [Exp()(p0)]))(x)])
    assert map_inner_graphs(graph, rule_pass(CANONICALIZE)) is graph


def test_equal_inner_graphs_are_rewritten_once() -> None:
    calls: list[Graph] = []

    def canonicalize(graph: Graph) -> Graph:
        calls.append(graph)
        return rule_pass(CANONICALIZE)(graph)

    x, y = vector("x"), vector("y")
    graph = Graph([x, y], [Add()(Composite(inner())(x), Composite(inner())(y))])
    result = map_inner_graphs(graph, canonicalize)
    check_graph(result)
    assert len(calls) == 1
    assert len(set(composites(result))) == 1
    assert_same_values(graph, result, VALUES, VALUES + 1)


def test_inner_graph_pass_rewrites_nested_inner_graphs_innermost_first() -> None:
    x = vector("x")
    p0 = Param(0, VECTOR)
    middle = Graph([p0], [Scale(1.0)(Composite(inner())(p0))])
    graph = Graph([x], [Composite(middle)(x)])
    result = InnerGraphPass(rule_pass(CANONICALIZE))(graph)
    check_graph(result)
    (outer_op,) = composites(result)
    (inner_op,) = composites(outer_op.inner_graph)
    assert [type(node.op) for node in outer_op.inner_graph.nodes] == [Composite]
    assert [type(node.op) for node in inner_op.inner_graph.nodes] == [Exp]
    assert_same_values(graph, result, VALUES)


def test_an_inner_rewrite_that_changes_the_output_type_raises() -> None:
    def to_float32(graph: Graph) -> Graph:
        return Graph(graph.inputs, [Constant(np.zeros(3, dtype="float32"))])

    x = vector("x")
    graph = Graph([x], [Composite(inner())(x)])
    with pytest.raises(InvalidReplacementError, match="to_float32"):
        map_inner_graphs(graph, to_float32)


def test_a_custom_rebuild_op() -> None:
    rebuilt: list[Op] = []

    def rebuild(op: Op, inner_graph: Graph) -> Op:
        rebuilt.append(op)
        return Composite(inner_graph)

    x = vector("x")
    graph = Graph([x], [Composite(inner())(x)])
    result = map_inner_graphs(graph, rule_pass(CANONICALIZE), rebuild)
    check_graph(result)
    assert rebuilt == [Composite(inner())]


# -- folding into an inner-graph op ---------------------------------------------------------


def fold_exp_of_scale(node: Apply) -> Sequence[Variable] | None:
    """exp(a * x) -> Composite(exp(a * p0))(x): folds a pattern into an inner-graph op."""
    match node:
        case Apply(op=Exp(), inputs=(Variable(owner=Apply(op=Scale(factor=factor), inputs=(x,))),)):
            p0 = Param(0, x.type)
            return (Composite(Graph([p0], [Exp()(Scale(factor)(p0))]))(x),)
    return None


FOLDING = RuleSet("folding", (fold_exp_of_scale,))


def test_a_folding_rule_does_not_fire_inside_what_it_folded() -> None:
    x = vector("x")
    graph = Graph([x], [Add()(Exp()(Scale(1.0)(x)), Exp()(Scale(2.0)(x)))])
    # The outer graph is folded; inner graphs get the simplifying rules only.
    pipeline = Pipeline("p", (rule_pass(FOLDING), InnerGraphPass(rule_pass(CANONICALIZE))))
    result = pipeline(graph)
    check_graph(result)
    ops = composites(result)
    assert len(ops) == 2
    for op in ops:
        assert composites(op.inner_graph) == []  # folded once, not again inside
    assert sorted(len(op.inner_graph.nodes) for op in ops) == [1, 2]  # 1 * p0 simplified
    assert_same_values(graph, result, VALUES)
    assert pipeline(result) is result


def test_folding_rules_in_the_inner_pipeline_would_nest_one_level_per_run() -> None:
    # Why INNER_GRAPHS must not hold folding rule sets: each run folds the inner graph's
    # copy of the pattern again, one level deeper (never an infinite loop in one run,
    # since the driver does not enter inner graphs by itself).
    x = vector("x")
    graph = Graph([x], [Exp()(Scale(2.0)(x))])
    bad = Pipeline("bad", (rule_pass(FOLDING), InnerGraphPass(rule_pass(FOLDING))))
    once = bad(graph)
    check_graph(once)
    (outer_op,) = composites(once)
    assert len(composites(outer_op.inner_graph)) == 1
    assert_same_values(graph, once, VALUES)


def test_inner_graphs_of_skipped_op_classes_are_left_alone() -> None:
    x = vector("x")
    graph = Graph([x], [Composite(inner())(x)])
    assert InnerGraphPass(rule_pass(CANONICALIZE), skip=(Composite,))(graph) is graph
    result = InnerGraphPass(rule_pass(CANONICALIZE))(graph)
    (op,) = composites(result)
    assert len(op.inner_graph.nodes) == 1
