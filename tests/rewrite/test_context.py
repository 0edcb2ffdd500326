"""Context rules: reading the clients of the graph being rewritten."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from fgraph import Apply, Graph, Input, TensorType, Variable
from rewrite import (
    ContextualRule,
    GraphContext,
    RewriteContext,
    RewriteLimitError,
    RuleSet,
    Trace,
)
from tests.fgraph.toy_ops import Add, Exp, Scale
from tests.rewrite.toy_rules import (
    CANONICALIZE,
    FOLD,
    ScaledExp,
    assert_same_values,
    fold_scale_into_exp,
    rewritten,
    scale_by_zero,
)

VALUES = np.array([0.5, -1.0, 2.0])


def vector(name: str) -> Input:
    return Input(TensorType("float64", (3,)), name)


def ops_of(graph: Graph) -> list[type]:
    return [type(node.op) for node in graph.nodes]


def test_folds_when_the_intermediate_has_one_client() -> None:
    x = vector("x")
    graph = Graph([x], [Exp()(Scale(3.0)(x))])
    result = rewritten(graph, FOLD)
    assert ops_of(result) == [ScaledExp]
    assert_same_values(graph, result, VALUES)


def test_does_not_fold_a_shared_intermediate() -> None:
    x = vector("x")
    scaled = Scale(3.0)(x)
    graph = Graph([x], [Add()(Exp()(scaled), scaled)])
    assert rewritten(graph, FOLD) is graph


def test_does_not_fold_an_intermediate_the_caller_reads() -> None:
    x = vector("x")
    scaled = Scale(3.0)(x)
    graph = Graph([x], [Exp()(scaled), scaled])
    assert rewritten(graph, FOLD) is graph


def test_context_rule_unit_tested_with_an_exact_graph_context() -> None:
    x = vector("x")
    node = Exp().make_node(Scale(3.0)(x))
    alone = Graph([x], [node.out])
    shared = Graph([x], [node.out, node.inputs[0]])
    assert fold_scale_into_exp(node, GraphContext(alone)) is not None
    assert fold_scale_into_exp(node, GraphContext(shared)) is None
    assert GraphContext(shared).is_output(node.inputs[0])
    assert GraphContext(alone).clients(node.inputs[0]) == ((node, 0),)


def test_sweeps_repeat_until_clients_are_exact() -> None:
    x = vector("x")
    scaled = Scale(3.0)(x)
    # `scaled` has two readers until scale_by_zero removes the second (in the same sweep,
    # after the exp was visited): the fold can only happen in the next sweep.
    graph = Graph([x], [Exp()(scaled), Scale(0.0)(scaled)])
    rules = RuleSet("fold+zero", (*FOLD.rules, scale_by_zero))
    trace = Trace()
    result = rewritten(graph, rules, trace=trace)
    assert trace.rule_names == ("scale_by_zero", "fold_scale_into_exp")
    assert ops_of(result) == [ScaledExp]
    assert_same_values(graph, result, VALUES)
    with pytest.raises(RewriteLimitError, match=r"after 1 sweeps .*scale_by_zero x1"):
        rewritten(graph, rules, max_sweeps=1)


def record_client_ops(node: Apply, context: RewriteContext) -> Sequence[Variable] | None:
    """Spy: records the op names of the clients of an exp's input."""
    names = sorted(type(client.op).__name__ for client, _ in context.clients(node.inputs[0]))
    SEEN.append(tuple(names))
    return None


SEEN: list[tuple[str, ...]] = []


def test_a_variable_that_replaced_another_reports_both_readers() -> None:
    SEEN.clear()
    x, y = vector("x"), vector("y")
    # Scale(1.0)(x) is rewritten to x: x then has the readers of both (the exp and the
    # add), and the removed scale no longer counts.
    graph = Graph([x, y], [Exp()(Scale(1.0)(x)), Add()(x, y)])
    rules = CANONICALIZE + RuleSet("spy", (ContextualRule(record_client_ops, ops=(Exp,)),))
    result = rewritten(graph, rules)
    assert ops_of(result) == [Exp, Add]
    assert SEEN[0] == ("Add", "Exp")


def spread_exp(node: Apply) -> Sequence[Variable] | None:
    """exp(x) -> exp(3 * (x / 3)) for an input x: a replacement with an intermediate."""
    match node:
        case Apply(op=Exp(), inputs=(x,)) if x.owner is None:
            return (Exp()(Scale(3.0)(Scale(1 / 3)(x))),)
    return None


def test_variables_built_in_the_pass_report_their_new_readers() -> None:
    x = vector("x")
    graph = Graph([x], [Exp()(x)])
    # The fold sees Scale(3.0)(...) built by spread_exp in this very sweep: its one reader
    # is the new exp, so it folds (were it reported as unread, a rule dropping unread
    # values would be wrong).
    trace = Trace()
    result = rewritten(graph, RuleSet("spread", (spread_exp, *FOLD.rules)), trace=trace)
    assert trace.rule_names == ("spread_exp", "fold_scale_into_exp")
    assert ops_of(result) == [Scale, ScaledExp]
    assert_same_values(graph, result, VALUES)


def record_reader_ops(node: Apply, context: RewriteContext) -> Sequence[Variable] | None:
    """Spy: records the op names of the readers of an exp's output."""
    names = sorted(type(client.op).__name__ for client, _ in context.clients(node.out))
    SEEN.append(tuple(names))
    return None


def test_a_replacement_reports_the_readers_of_what_it_replaces_while_rewritten() -> None:
    SEEN.clear()
    x, y = vector("x"), vector("y")
    # spread_exp replaces exp(x); the new exp, rewritten in the same firing, is read by
    # the add that read the old one (a context rule dropping unread outputs of a node a
    # rule just built relies on it).
    graph = Graph([x, y], [Add()(Exp()(x), y)])
    rules = RuleSet("spread+spy", (spread_exp, ContextualRule(record_reader_ops, ops=(Exp,))))
    rewritten(graph, rules)
    assert SEEN[0] == ("Add",)  # the first visit, in the firing (later sweeps are exact)
