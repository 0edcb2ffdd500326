"""Property tests of the named pipelines on random graphs (`tests.graph_strategies`).

For every pipeline in `rewrite.PIPELINES`: the optimized graph is valid, has the same
inputs and output types, computes the same values as the original under the reference
evaluator (up to reassociated float rounding), and optimizing it again changes nothing.
These tests exist to catch bugs in rule sets as they are added: when one fails,
hypothesis prints the minimal graph and its input values, and the message names the
first pass that changes the values and the rules it fired (from a `rewrite.Trace`).
Bugs it found are pinned by explicit tests at the end.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import ops as pt
from fgraph import Apply, Graph, Variable, check_graph, dprint, evaluate
from ops.elemwise import Elemwise
from ops.scalar_ops import Exp
from rewrite import (
    PIPELINES,
    Pipeline,
    RulePass,
    RuleSet,
    Trace,
    optimize,
    pass_name,
    rewrite_graph,
    rule,
    rule_pass,
)
from tests.graph_strategies import GeneratedGraph, assert_outputs_close, graphs, scaled_examples

FUZZED_PIPELINES = ("fast_run", "fast_compile", "none")


def check_pipeline(example: GeneratedGraph, pipeline: Pipeline) -> None:
    """Assert the properties above for `example` under `pipeline`."""
    graph = example.graph
    check_graph(graph)
    optimized = optimize(graph, pipeline)
    check_graph(optimized)
    assert optimized.inputs == graph.inputs
    assert [v.type for v in optimized.outputs] == [v.type for v in graph.outputs]
    expected = evaluate(graph.outputs, example.feed)
    actual = evaluate(optimized.outputs, dict(zip(optimized.inputs, example.values)))
    try:
        assert_outputs_close(actual, expected, example)
    except AssertionError as error:
        raise AssertionError(f"{error}\n{_first_wrong_pass(example, pipeline)}") from None
    again = optimize(optimized, pipeline)
    assert again == optimized, f"not idempotent:\n{_printed(optimized)}\nthen\n{_printed(again)}"


def _printed(graph: Graph) -> str:
    return dprint(graph, file=None)


def _first_wrong_pass(example: GeneratedGraph, pipeline: Pipeline) -> str:
    """Which pass of `pipeline` first changes `example`'s values, and the rules it fired:
    where to look when the values property fails."""
    expected = evaluate(example.graph.outputs, example.feed)
    graph = example.graph
    for pass_ in pipeline.passes:
        before, graph = graph, pass_(graph)
        try:
            actual = evaluate(graph.outputs, dict(zip(graph.inputs, example.values)))
            assert_outputs_close(actual, expected, example)
        except AssertionError:
            fired = ""
            if isinstance(pass_, RulePass):
                trace = Trace()
                rewrite_graph(before, pass_.rules, trace=trace)
                fired = f", firing {', '.join(dict.fromkeys(trace.rule_names))}"
            return f"first wrong pass: {pass_name(pass_)}{fired}; its input:\n{_printed(before)}"
    return "no single pass changes the values"


@rule(Elemwise)
def exp_to_sin(node: Apply) -> tuple[Variable, ...] | None:
    """A wrong rule, to check that the property catches it and names it."""
    match node:
        case Apply(op=Elemwise(scalar_op=Exp()), inputs=(x,)):
            return (pt.sin(x),)
    return None


def test_a_wrong_rule_is_caught_and_named() -> None:
    """The property and its diagnosis work: a wrong rule fails it, by name."""
    x = pt.tensor("x", shape=(3,))
    graph = Graph([x], [pt.exp(x) + 1.0])
    example = GeneratedGraph(graph, (np.array([0.5, -1.0, 2.0]),), (10.0,))
    wrong = Pipeline("wrong", (rule_pass(RuleSet("wrong", (exp_to_sin,))),))
    with pytest.raises(AssertionError, match="first wrong pass: wrong, firing exp_to_sin"):
        check_pipeline(example, wrong)


def test_every_pipeline_is_fuzzed() -> None:
    """A new named pipeline needs a fuzz test below."""
    assert set(PIPELINES) == set(FUZZED_PIPELINES)


@settings(max_examples=scaled_examples(2.0))
@given(graphs(max_steps=8))
def test_fast_run(example: GeneratedGraph) -> None:
    check_pipeline(example, PIPELINES["fast_run"])


@settings(max_examples=scaled_examples(1.0))
@given(graphs(max_steps=8))
def test_fast_compile(example: GeneratedGraph) -> None:
    check_pipeline(example, PIPELINES["fast_compile"])


@settings(max_examples=scaled_examples(1.0))
@given(graphs(max_steps=8))
def test_none(example: GeneratedGraph) -> None:
    check_pipeline(example, PIPELINES["none"])


def test_fast_run_idempotent_when_stabilize_frees_a_lift() -> None:
    """The minimal graph the fuzz test found (long profile)."""
    x = pt.tensor("x", shape=(2,))
    sigmoid = pt.sigmoid(x)
    graph = Graph([x], [pt.log(1.0 - sigmoid), sigmoid[0]])
    example = GeneratedGraph(graph, (np.array([0.25, -1.5]),), (50.0, 1.0))
    check_pipeline(example, PIPELINES["fast_run"])
