"""Update rules (`set_subtensor` / `inc_subtensor`), one tiny graph each: the rule fires
(the structure of the result), keeps values against the reference evaluator, and
declines where it must."""

from __future__ import annotations

import numpy as np

import ops as pt
from fgraph import Graph, evaluate
from ops.indexing import SYMBOLIC, Slice
from ops.subtensor import IncSubtensor
from rewrite import RuleSet, optimize
from rewrite.pipelines import SIMPLIFY
from rewrite.inc_subtensor import (
    INC_SUBTENSOR,
    canonical_update_index,
    inc_by_zero,
    is_zeros,
    merge_updates_of_one_region,
    update_of_everything,
    update_past_disjoint_update,
    value_without_leading_new_axes,
)
from tests.rewrite.algebra_checks import check_rewrite, ops_of, random_value

CANONICAL = RuleSet("canonical", (canonical_update_index,))
EVERYTHING = RuleSet("everything", (update_of_everything,))
BY_ZERO = RuleSet("by_zero", (inc_by_zero,))
MERGE = RuleSet("merge", (merge_updates_of_one_region,))
NEW_AXES = RuleSet("new_axes", (value_without_leading_new_axes,))


def test_update_index_takes_the_canonical_form() -> None:
    x = pt.tensor("x", shape=(4, None))
    y = pt.vector("y")
    graph = Graph([x, y], [pt.set_subtensor(x[-1, 0:], y)])
    result = check_rewrite(graph, CANONICAL, random_value(x), random_value(y))
    (node,) = result.nodes
    assert node.op == IncSubtensor((3,), set_instead_of_inc=True)


def test_write_and_read_of_one_element_meet_in_canonical_form() -> None:
    x = pt.tensor("x", shape=(4, 3))
    y = pt.tensor("y", shape=(3,))
    graph = Graph([x, y], [pt.set_subtensor(x[-1], y)[3]])
    assert check_rewrite(graph, SIMPLIFY).outputs == (y,)


def test_update_index_that_would_refine_the_region_is_kept() -> None:
    x = pt.tensor("x", shape=(4,))
    y = pt.vector("y")
    stop = pt.constant(np.array(2))  # a constant input: folding it makes the region (2,)
    update = IncSubtensor((Slice(None, SYMBOLIC),))(x, y, stop)
    graph = Graph([x, y], [update])
    assert check_rewrite(graph, CANONICAL, random_value(x), random_value(y)[:2]) is graph


def test_zeros_by_construction() -> None:
    x = pt.matrix("x")
    assert is_zeros(pt.zeros((2, 3))) and is_zeros(pt.zeros_like(x))
    assert is_zeros(pt.constant(np.zeros(3))) and is_zeros(pt.broadcast_to(0.0, x.shape))
    assert not is_zeros(pt.ones((2, 3))) and not is_zeros(x)


# --- updates of the whole array --------------------------------------------------------------
def test_increment_of_zeros_everywhere_is_the_value() -> None:
    y = pt.tensor("y", shape=(4, 3))
    graph = Graph([y], [pt.inc_subtensor(pt.zeros((4, 3))[:], y)])
    assert check_rewrite(graph, EVERYTHING).outputs == (y,)


def test_increment_of_allocated_zeros_up_to_their_length() -> None:
    y = pt.vector("y")
    n = pt.scalar("n", dtype="int64")
    graph = Graph([y, n], [pt.inc_subtensor(pt.zeros(n)[:n], y)])
    result = check_rewrite(graph, EVERYTHING, np.arange(5.0), np.array(5))
    assert result.outputs == (y,)


def test_increment_of_zeros_like_everywhere_is_the_value() -> None:
    x, y = pt.matrix("x"), pt.matrix("y")
    zeros = pt.zeros_like(x)
    graph = Graph([x, y], [pt.inc_subtensor(zeros[: x.shape[0], :], y)])
    result = check_rewrite(graph, EVERYTHING, random_value(x), random_value(y))
    assert result.outputs == (y,)


def test_set_everywhere_broadcasts_the_value() -> None:
    x = pt.tensor("x", shape=(4, 3))
    y = pt.tensor("y", shape=(3,))
    graph = Graph([x, y], [pt.set_subtensor(x[:, 0:3], y)])
    result = check_rewrite(graph, EVERYTHING)
    assert ops_of(result) == ["BroadcastTo"]
    assert result.nodes[0].inputs[0] is y
    assert result.outputs[0].type == x.type


def test_increment_everywhere_is_an_addition() -> None:
    x = pt.tensor("x", shape=(4, 3))
    y = pt.tensor("y", shape=(1, 3))
    graph = Graph([x, y], [pt.inc_subtensor(x[0:4], y)])
    result = check_rewrite(graph, EVERYTHING)
    assert ops_of(result) == ["Add"]
    assert result.nodes[0].inputs == (x, y)


def test_update_of_part_of_the_array_is_kept() -> None:
    x = pt.tensor("x", shape=(4, 3))
    y = pt.vector("y")
    n = pt.scalar("n", dtype="int64")
    outputs = [
        pt.inc_subtensor(x[1:], 1.0),
        pt.set_subtensor(x[0], 2.0),
        pt.inc_subtensor(x[:n], y),
    ]
    graph = Graph([x, y, n], outputs)
    values = (random_value(x), random_value(y)[:3], np.array(3))
    assert check_rewrite(graph, EVERYTHING, *values) is graph


# --- adding zero -----------------------------------------------------------------------------
def test_increment_by_zero_is_the_array() -> None:
    x = pt.matrix("x")
    graph = Graph([x], [pt.inc_subtensor(x[1:, 0], 0.0)])
    assert check_rewrite(graph, BY_ZERO).outputs == (x,)


def test_set_to_zero_is_kept() -> None:
    x = pt.matrix("x")
    graph = Graph([x], [pt.set_subtensor(x[1:, 0], 0.0)])
    assert check_rewrite(graph, BY_ZERO) is graph


# --- two updates of one region ---------------------------------------------------------------
def test_second_set_overwrites_the_first_update() -> None:
    x = pt.tensor("x", shape=(4, 3))
    a, b = pt.tensor("a", shape=(3,)), pt.tensor("b", shape=(3,))
    for first in (pt.set_subtensor, pt.inc_subtensor):
        graph = Graph([x, a, b], [pt.set_subtensor(first(x[2], a)[2], b)])
        result = check_rewrite(graph, MERGE)
        (node,) = result.nodes
        assert node.op == IncSubtensor((2,), set_instead_of_inc=True)
        assert node.inputs == (x, b)


def test_two_increments_of_one_region_add_their_values() -> None:
    x = pt.matrix("x")
    a, b = pt.vector("a"), pt.vector("b")
    i = pt.scalar("i", dtype="int64")
    graph = Graph([x, a, b, i], [pt.inc_subtensor(pt.inc_subtensor(x[i], a)[i], b)])
    values = (random_value(x), random_value(a), random_value(b), np.array(1))
    result = check_rewrite(graph, MERGE, *values)
    assert ops_of(result) == ["Add", "IncSubtensor"]
    assert result.nodes[1].inputs[0] is x


def test_increment_after_set_sets_the_sum() -> None:
    x = pt.tensor("x", shape=(4, 3))
    a, b = pt.tensor("a", shape=(2, 3)), pt.tensor("b", shape=(3,))
    graph = Graph([x, a, b], [pt.inc_subtensor(pt.set_subtensor(x[1:3], a)[1:3], b)])
    result = check_rewrite(graph, MERGE)
    assert ops_of(result) == ["DimShuffle", "Add", "IncSubtensor"]
    assert result.nodes[-1].op == IncSubtensor((Slice(1, 3),), set_instead_of_inc=True)


def test_updates_of_different_regions_are_kept() -> None:
    x = pt.tensor("x", shape=(4, 3))
    graph = Graph([x], [pt.set_subtensor(pt.set_subtensor(x[1], 1.0)[2], 2.0)])
    assert check_rewrite(graph, MERGE) is graph


# --- values broadcast anyway -------------------------------------------------------------------
def test_leading_new_axes_of_a_value_are_dropped() -> None:
    x = pt.tensor("x", shape=(4, 3))
    y = pt.tensor("y", shape=(3,))
    graph = Graph([x, y], [pt.set_subtensor(x[1:3], pt.expand_dims(y, (0,)))])
    result = check_rewrite(graph, NEW_AXES)
    (node,) = result.nodes
    assert node.inputs == (x, y)


def test_inner_new_axes_of_a_value_are_kept() -> None:
    x = pt.tensor("x", shape=(4, 1, 3))
    y = pt.tensor("y", shape=(4, 3))
    graph = Graph([x, y], [pt.inc_subtensor(x[:, :], pt.expand_dims(y, 1))])
    assert check_rewrite(graph, NEW_AXES) is graph


def test_rule_set_holds_every_update_rule() -> None:
    assert INC_SUBTENSOR.names == (
        "canonical_update_index",
        "update_of_everything",
        "inc_by_zero",
        "inc_into_zeros",
        "merge_updates_of_one_region",
        "value_without_leading_new_axes",
        "update_past_disjoint_update",
    )


def test_inc_into_zeros_is_a_write() -> None:
    x, y = pt.vector("x"), pt.vector("y", shape=(2,))
    graph = Graph([x, y], [pt.inc_subtensor(pt.zeros_like(x)[1:3], y)])
    rewritten = optimize(graph, "fast_compile")
    (update,) = [n.op for n in rewritten.nodes if isinstance(n.op, IncSubtensor)]
    assert update.set_instead_of_inc
    (got,) = evaluate(rewritten.outputs, {x: np.zeros(5), y: np.array([1.0, -2.0])})
    np.testing.assert_array_equal(got, [0, 1, -2, 0, 0])


# --- updates of disjoint regions --------------------------------------------------------------
PAST = RuleSet("past", (update_past_disjoint_update, merge_updates_of_one_region))


def test_update_moves_past_a_disjoint_one_to_merge() -> None:
    x = pt.tensor("x", shape=(5, 3))
    a, b, c = (pt.tensor(name, shape=(3,)) for name in "abc")
    step = pt.inc_subtensor(pt.set_subtensor(pt.inc_subtensor(x[1], a)[3], b)[1], c)
    graph = Graph([x, a, b, c], [step])
    result = check_rewrite(graph, PAST)
    assert [str(node.op) for node in result.nodes] == [
        "Add",
        "IncSubtensor{1}",
        "SetSubtensor{3}",
    ]
    assert result.nodes[1].inputs[0] is x


def test_update_stays_behind_an_overlapping_one() -> None:
    x = pt.tensor("x", shape=(5, 3))
    a, b, c = pt.tensor("a", shape=(3,)), pt.tensor("b", shape=(2, 3)), pt.tensor("c", shape=(3,))
    step = pt.inc_subtensor(pt.set_subtensor(pt.inc_subtensor(x[1], a)[0:2], b)[1], c)
    graph = Graph([x, a, b, c], [step])
    assert check_rewrite(graph, PAST) is graph


def test_update_without_a_partner_stays() -> None:
    x = pt.tensor("x", shape=(5, 3))
    a, b, c = (pt.tensor(name, shape=(3,)) for name in "abc")
    step = pt.inc_subtensor(pt.set_subtensor(pt.inc_subtensor(x[2], a)[3], b)[1], c)
    graph = Graph([x, a, b, c], [step])
    assert check_rewrite(graph, PAST) is graph
