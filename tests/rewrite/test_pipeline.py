"""Rule sets, passes, pipelines and `optimize`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from fgraph import Apply, Graph, Input, TensorType, Variable, check_graph
from rewrite import (
    FAST_RUN,
    PIPELINES,
    ContextualRule,
    GraphContext,
    Pipeline,
    RewriteContext,
    Rule,
    RuleSet,
    context_rule,
    optimize,
    pass_name,
    rule,
    rule_pass,
)
from tests.fgraph.toy_ops import Add, Exp, Scale
from tests.rewrite.toy_rules import (
    CANONICALIZE,
    ScaledExp,
    assert_same_values,
    boom,
    fold_scale_into_exp,
    merge_scales,
    scale_by_one,
)

VALUES = np.array([0.5, -1.0, 2.0])


def vector(name: str) -> Input:
    return Input(TensorType("float64", (3,)), name)


# -- rule sets ---------------------------------------------------------------------------------


def test_plain_functions_become_named_rules() -> None:
    (entry,) = RuleSet("one", (scale_by_one,)).rules
    assert entry == Rule(scale_by_one)
    assert entry.name == "scale_by_one" and entry.ops == ()


def test_rule_sets_combine_in_order_without_repeats() -> None:
    first = RuleSet("a", (scale_by_one, merge_scales))
    second = RuleSet("b", (merge_scales, boom))
    combined = first + second
    assert combined.name == "a+b"
    assert combined.names == ("scale_by_one", "merge_scales", "boom")
    assert RuleSet.union("all", first, second) == RuleSet("all", combined.rules)
    assert RuleSet("a", (scale_by_one, scale_by_one)).names == ("scale_by_one",)


def test_rules_for_dispatches_on_op_classes() -> None:
    rules = RuleSet("r", (scale_by_one, Rule(merge_scales, ops=(Scale,)), Rule(boom, ops=(Exp,))))
    assert [entry.name for entry in rules.rules_for(Scale)] == ["scale_by_one", "merge_scales"]
    assert [entry.name for entry in rules.rules_for(Exp)] == ["scale_by_one", "boom"]


@rule(Scale)
def decorated_scale_by_one(node: Apply) -> Sequence[Variable] | None:
    return scale_by_one(node)


@context_rule(Exp)
def decorated_fold(node: Apply, context: RewriteContext) -> Sequence[Variable] | None:
    return fold_scale_into_exp(node, context)


def test_decorators_make_callable_rules() -> None:
    assert isinstance(decorated_scale_by_one, Rule)
    assert decorated_scale_by_one.ops == (Scale,)
    assert decorated_scale_by_one.name == "decorated_scale_by_one"
    assert isinstance(decorated_fold, ContextualRule)
    x = vector("x")
    node = Scale(1.0).make_node(x)
    assert decorated_scale_by_one(node) == (x,)
    exp = Exp().make_node(node.out)
    assert decorated_fold(exp, GraphContext(Graph([x], [exp.out]))) is not None
    rules = RuleSet("both", (decorated_scale_by_one, decorated_fold))
    assert rules.uses_context
    assert not CANONICALIZE.uses_context


def test_misused_rule_helpers_raise_clearly() -> None:
    # What untyped code might do (mypy rejects both).
    unwrapped_context_rule: Any = fold_scale_into_exp
    with pytest.raises(TypeError, match="wrap it in ContextualRule"):
        RuleSet("bad", (unwrapped_context_rule,))
    rule_without_parentheses: Any = scale_by_one
    with pytest.raises(TypeError, match="Op subclasses"):
        rule(rule_without_parentheses)


# -- passes and pipelines ----------------------------------------------------------------------


def test_a_pipeline_runs_its_passes_in_order() -> None:
    order: list[str] = []

    def note(graph: Graph) -> Graph:
        order.append("note")
        return graph

    x = vector("x")
    graph = Graph([x], [Exp()(Scale(2.0)(Scale(0.5)(x)))])
    pipeline = Pipeline("mine", (rule_pass(CANONICALIZE), note))
    result = optimize(graph, pipeline)
    check_graph(result)
    assert order == ["note"]
    assert [type(node.op) for node in result.nodes] == [Exp]
    assert_same_values(graph, result, VALUES)
    assert str(pipeline) == "mine: [canonicalize, note]"
    assert pass_name(rule_pass(CANONICALIZE)) == "canonicalize"
    nested = Pipeline("outer", (pipeline,)).then(note)
    assert optimize(graph, nested) == result
    assert (pipeline + nested).name == "mine+outer"


def test_named_pipelines() -> None:
    assert set(PIPELINES) == {"fast_run", "fast_compile", "none"}
    assert PIPELINES["fast_run"] is FAST_RUN
    x = vector("x")
    graph = Graph([x], [Add()(Exp()(x), x)])
    assert optimize(graph, "none") is graph
    result = optimize(graph)  # fast_run
    check_graph(result)
    assert_same_values(graph, result, VALUES)
    with pytest.raises(ValueError, match="unknown pipeline 'fastest'; known: fast_compile"):
        optimize(graph, "fastest")


def test_a_non_strict_rule_pass() -> None:
    x = vector("x")
    graph = Graph([x], [Exp()(Scale(1.0)(x))])
    with pytest.warns(UserWarning, match="boom"):
        result = rule_pass(RuleSet("bad", (boom, scale_by_one)), strict=False)(graph)
    check_graph(result)
    assert [type(node.op) for node in result.nodes] == [Exp]


def test_a_pipeline_with_context_rules() -> None:
    x = vector("x")
    graph = Graph([x], [Exp()(Scale(3.0)(Scale(1.0)(x)))])
    both = CANONICALIZE + RuleSet("fold", (ContextualRule(fold_scale_into_exp, ops=(Exp,)),))
    result = optimize(graph, Pipeline("p", (rule_pass(both),)))
    check_graph(result)
    assert [type(node.op) for node in result.nodes] == [ScaledExp]
    assert_same_values(graph, result, VALUES)
