"""The rewrite driver: rules fire, reach a fixpoint, keep what they do not touch, and fail
loudly (naming the rules) when they misbehave."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

import numpy as np
import pytest

from fgraph import Apply, Constant, Graph, Input, TensorType, Variable, check_graph, evaluate
from rewrite import (
    InvalidReplacementError,
    RewriteCycleError,
    RewriteError,
    RewriteLimitError,
    RewriteWarning,
    Rule,
    RuleFailed,
    RuleSet,
    Trace,
    rewrite_graph,
)
from tests.fgraph.toy_ops import Add, Exp, Scale, SplitSign, Sub
from tests.rewrite.toy_rules import (
    CANONICALIZE,
    Refine,
    add_to_double,
    assert_same_values,
    boom,
    double_to_add,
    exp_of_split_is_positive,
    forget_shape,
    grow_exp,
    merge_scales,
    not_a_variable,
    refine_exp,
    rewritten,
    scale_by_one,
    swap_add,
    wrap_in_scale,
    wrong_count,
    wrong_dtype,
    wrong_rank,
)


def vector(name: str, length: int | None = 3) -> Input:
    return Input(TensorType("float64", (length,)), name)


VALUES = np.array([0.5, -1.0, 2.0])


def test_rule_fires_and_values_are_preserved() -> None:
    x = vector("x")
    graph = Graph([x], [Exp()(Scale(1.0)(x))])
    result = rewritten(graph, RuleSet("one", (scale_by_one,)))
    assert [type(node.op) for node in result.nodes] == [Exp]
    assert result.nodes[0].inputs == (x,)
    assert_same_values(graph, result, VALUES)


def test_a_rule_output_enables_another_rule_in_the_same_pass() -> None:
    x = vector("x")
    # merge_scales builds Scale(1.0)(x), which scale_by_one then removes.
    graph = Graph([x], [Exp()(Scale(2.0)(Scale(0.5)(x)))])
    trace = Trace()
    result = rewritten(graph, CANONICALIZE, trace=trace)
    assert [type(node.op) for node in result.nodes] == [Exp]
    assert trace.rule_names == ("merge_scales", "scale_by_one")
    assert_same_values(graph, result, VALUES)


def test_fixpoint_cascades_through_a_stack_of_rewrites() -> None:
    x = vector("x")
    value: Variable = x
    for factor in (2.0, 0.5, 4.0, 0.25, 1.0):
        value = Scale(factor)(value)
    graph = Graph([x], [Exp()(value)])
    result = rewritten(graph, CANONICALIZE)
    assert [type(node.op) for node in result.nodes] == [Exp]
    assert_same_values(graph, result, VALUES)


def test_untouched_graph_is_returned_as_is() -> None:
    x, y = vector("x"), vector("y")
    graph = Graph([x, y], [Exp()(Add()(x, y)), Scale(3.0)(x)])
    assert rewritten(graph, CANONICALIZE) is graph
    assert rewritten(graph, RuleSet("empty")) is graph


def test_untouched_parts_keep_their_node_objects() -> None:
    x, y = vector("x"), vector("y")
    kept = Exp()(Add()(x, y))
    graph = Graph([x, y], [Sub()(kept, Scale(1.0)(y)), kept])
    result = rewritten(graph, CANONICALIZE)
    assert result is not graph
    kept_nodes = {node for node in graph.nodes if node.op in (Exp(), Add())}
    assert kept_nodes <= set(result.nodes)
    assert result.outputs[1] is kept
    (sub,) = [node for node in result.nodes if isinstance(node.op, Sub)]
    assert sub.inputs == (kept, y)
    assert_same_values(graph, result, VALUES, VALUES + 1)


def test_rewriting_an_optimized_graph_is_a_no_op_that_calls_no_rule() -> None:
    calls: list[str] = []

    def counting_scale_by_one(node: Apply) -> Sequence[Variable] | None:
        calls.append(str(node.op))
        return scale_by_one(node)

    rules = RuleSet("counting", (counting_scale_by_one, merge_scales))
    x = vector("x")
    value: Variable = x
    for number in range(50):
        value = Exp()(Scale(1.0)(value)) if number % 2 else Add()(value, x)
    graph = Graph([x], [value])
    optimized = rewritten(graph, rules)
    assert len(optimized.nodes) == 50
    calls.clear()
    again = rewritten(optimized, rules)
    assert again is optimized
    assert calls == []  # every node is known to be a fixpoint: no rule ran at all
    # An equal graph built independently reuses the same (interned) nodes: also free.
    rebuilt = Graph(optimized.inputs, optimized.outputs)
    assert rewritten(rebuilt, rules) is rebuilt
    assert calls == []


def test_rewriting_merges_branches_that_become_equal() -> None:
    x = vector("x")
    left = Exp()(Scale(1.0)(x))
    right = Exp()(x)
    graph = Graph([x], [Add()(left, right)])
    result = rewritten(graph, CANONICALIZE)
    (add,) = [node for node in result.nodes if isinstance(node.op, Add)]
    assert add.inputs[0] == add.inputs[1]  # interning made the two exps one node
    assert add.inputs[0].owner is add.inputs[1].owner
    assert len(result.nodes) == 2


def test_graph_outputs_that_are_inputs_or_constants_pass_through() -> None:
    x = vector("x")
    one = Constant(np.ones(3))
    graph = Graph([x], [x, one, Scale(1.0)(x)])
    result = rewritten(graph, CANONICALIZE)
    assert result.outputs == (x, one, x)
    assert result.nodes == ()


def test_multi_output_rule_may_keep_some_outputs() -> None:
    x = vector("x")
    node = SplitSign().make_node(Exp()(x))
    graph = Graph([x], [Add()(node.outputs[0], node.outputs[1])])
    result = rewritten(graph, RuleSet("split", (exp_of_split_is_positive,)))
    (add,) = [n for n in result.nodes if isinstance(n.op, Add)]
    assert add.inputs[0] == node.outputs[0]  # the kept output: same node
    assert isinstance(add.inputs[1], Constant)
    assert_same_values(graph, result, VALUES)
    assert rewritten(result, RuleSet("split", (exp_of_split_is_positive,))) is result


def test_rules_only_run_on_their_op_classes() -> None:
    seen: list[object] = []

    def spy(node: Apply) -> Sequence[Variable] | None:
        seen.append(node.op)
        return None

    x = vector("x")
    graph = Graph([x], [Exp()(Add()(x, Scale(2.0)(x)))])
    rewritten(graph, RuleSet("spy", (Rule(spy, ops=(Exp,)),)))
    assert seen == [Exp()]


def test_position_aware_graphs_stay_position_aware() -> None:
    x = vector("x")
    first, second = (Apply(Scale(1.0), (x,), position) for position in (1, 2))
    graph = Graph([x], [Exp()(first.out), Exp()(second.out)], dedup_nodes=False)
    assert len(graph.nodes) == 4
    result = rewritten(graph, CANONICALIZE)
    assert not result.dedup_nodes
    assert [type(node.op) for node in result.nodes] == [Exp, Exp]
    assert result.outputs[0] is not result.outputs[1]
    assert_same_values(graph, result, VALUES)


# -- cycles and runaway rules ----------------------------------------------------------


def test_a_rule_that_undoes_itself_is_a_cycle() -> None:
    x, y = vector("x"), vector("y")
    graph = Graph([x, y], [Add()(x, y)])
    with pytest.raises(RewriteCycleError, match="swap_add -> swap_add") as caught:
        rewrite_graph(graph, RuleSet("swap", (swap_add,)))
    assert caught.value.rules == ("swap_add", "swap_add")


def test_two_rules_undoing_each_other_are_named() -> None:
    x = vector("x")
    graph = Graph([x], [Exp()(Scale(2.0)(x))])
    with pytest.raises(RewriteCycleError) as caught:
        rewrite_graph(graph, RuleSet("ping-pong", (double_to_add, add_to_double)))
    assert caught.value.rules == ("double_to_add", "add_to_double")
    assert "double_to_add -> add_to_double" in str(caught.value)


def test_a_replacement_containing_its_node_is_a_cycle() -> None:
    x = vector("x")
    graph = Graph([x], [Exp()(x)])
    with pytest.raises(RewriteCycleError, match="wrap_in_scale"):
        rewrite_graph(graph, RuleSet("wrap", (wrap_in_scale,)))


def test_a_growing_rewrite_hits_the_iteration_guard() -> None:
    x = vector("x")
    graph = Graph([x], [Exp()(x)])
    with pytest.raises(RewriteLimitError, match=r"grow_exp x21") as caught:
        rewrite_graph(graph, RuleSet("grow", (grow_exp,)), max_iterations=20)
    assert caught.value.rules == ("grow_exp",)


# -- failing rules -----------------------------------------------------------------------


def test_a_raising_rule_propagates_in_strict_mode() -> None:
    x = vector("x")
    graph = Graph([x], [Exp()(Scale(1.0)(x))])
    with pytest.raises(RewriteError, match="rule boom raised ValueError on Exp") as caught:
        rewrite_graph(graph, RuleSet("bad", (scale_by_one, boom)))
    assert isinstance(caught.value.__cause__, ValueError)
    assert caught.value.rules == ("boom",)
    assert caught.value.node is not None and isinstance(caught.value.node.op, Exp)


def test_a_raising_rule_is_skipped_and_recorded_in_non_strict_mode() -> None:
    x = vector("x")
    graph = Graph([x], [Exp()(Scale(1.0)(x))])
    trace = Trace()
    result = rewritten(graph, RuleSet("bad", (boom, scale_by_one)), strict=False, trace=trace)
    assert [type(node.op) for node in result.nodes] == [Exp]  # the other rule still ran
    (failure,) = trace.failed
    assert isinstance(failure, RuleFailed)
    assert failure.rule == "boom" and failure.op == Exp()
    assert isinstance(failure.error, ValueError)
    assert trace.rule_names == ("scale_by_one",)


def test_non_strict_without_a_trace_warns() -> None:
    x = vector("x")
    graph = Graph([x], [Exp()(x)])
    with pytest.warns(RewriteWarning, match="boom"):
        assert rewritten(graph, RuleSet("bad", (boom,)), strict=False) is graph


@pytest.mark.parametrize(
    ("bad_rule", "message"),
    [
        (wrong_dtype, "float32"),
        (wrong_rank, "rank"),
        (wrong_count, "2 variables for 1 outputs"),
        (not_a_variable, "not a Variable"),
        (forget_shape, "dropped"),
    ],
)
def test_an_incompatible_replacement_raises_naming_the_rule(bad_rule: Rule, message: str) -> None:
    x = vector("x")
    graph = Graph([x], [Exp()(x)])
    rules = RuleSet("bad", (bad_rule,))
    with pytest.raises(InvalidReplacementError, match=message) as caught:
        rewrite_graph(graph, rules)
    assert caught.value.rules == (rules.rules[0].name,)
    assert rules.rules[0].name in str(caught.value)
    trace = Trace()
    assert rewritten(graph, rules, strict=False, trace=trace) is graph
    assert [failure.rule for failure in trace.failed] == [rules.rules[0].name]


def test_a_more_precise_replacement_is_accepted() -> None:
    x = vector("x", None)
    graph = Graph([x], [Exp()(x)])
    result = rewritten(graph, RuleSet("refine", (refine_exp,)))
    assert result.outputs[0].type.shape == (3,)
    assert any(isinstance(node.op, Refine) for node in result.nodes)


# -- trace -----------------------------------------------------------------------------------


def test_trace_records_each_application() -> None:
    x = vector("x")
    scaled = Scale(1.0)(x)
    graph = Graph([x], [Exp()(scaled)])
    trace = Trace()
    rewritten(graph, CANONICALIZE, trace=trace)
    (entry,) = trace.fired
    assert entry.rule == "scale_by_one"
    assert entry.op == Scale(1.0)
    assert entry.replaced == (scaled,)
    assert entry.replacement == (x,)
    assert len(trace) == 1 and list(trace) == [entry]


# -- scale ------------------------------------------------------------------------------------


def test_a_50_000_node_chain_rewrites_without_recursion() -> None:
    """50 times as deep as Python's recursion limit: a recursive walk would fail."""
    assert sys.getrecursionlimit() * 50 <= 50_000
    x = Input(TensorType("float64", ()), "x")
    value: Variable = x
    for _ in range(25_000):
        value = Scale(1.0)(Add()(value, x))
    graph = Graph([x], [value])
    assert len(graph.nodes) == 50_000
    start = time.perf_counter()
    result = rewrite_graph(graph, CANONICALIZE)
    first = time.perf_counter() - start
    start = time.perf_counter()
    again = rewrite_graph(result, CANONICALIZE)
    second = time.perf_counter() - start
    print(f"\n50 000-node chain: first pass {first:.3f} s, second pass {second * 1e3:.2f} ms")
    assert again is result
    assert len(result.nodes) == 25_000
    assert all(isinstance(node.op, Add) for node in result.nodes)
    check_graph(result)
    (value_after,) = evaluate(result.outputs, {x: 2.0})
    assert value_after == pytest.approx(2.0 * 25_001)
