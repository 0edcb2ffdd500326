"""Basic-indexing rules, one tiny graph each: the rule fires (the structure of the
result), keeps values against the reference evaluator, and declines where it must."""

from __future__ import annotations

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, evaluate
from ops.indexing import Slice
from ops.shape_vector import shape_i
from numba_backend import function
from ops.subtensor import Subtensor
from rewrite import RuleSet
from rewrite.pipelines import SIMPLIFY_AND_LIFT as LIFT
from rewrite.subtensor import (
    canonical_subtensor,
    merge_subtensors,
    subtensor_of_update,
)
from tests.rewrite.algebra_checks import check_rewrite, ops_of, random_value, rewritten

RNG = np.random.default_rng(3)
CANONICAL = RuleSet("canonical", (canonical_subtensor,))
MERGE = RuleSet("merge", (merge_subtensors,))
OF_UPDATE = RuleSet("of_update", (subtensor_of_update,))


def index_of(graph: Graph) -> tuple[object, ...]:
    """The idx_list of the graph's one Subtensor node."""
    (node,) = [node for node in graph.nodes if isinstance(node.op, Subtensor)]
    assert isinstance(node.op, Subtensor)
    return node.op.idx_list


# --- canonical form ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "index",
    [slice(None), slice(0, 10), slice(None, None, 1), slice(0, 99), slice(-10, None)],
    ids=["[:]", "[0:10]", "[::1]", "[0:99]", "[-10:]"],
)
def test_full_slices_vanish(index: slice) -> None:
    x = pt.tensor("x", shape=(10,))
    graph = Graph([x], [x[index]])
    assert check_rewrite(graph, CANONICAL).outputs == (x,)


def test_slice_up_to_own_length_vanishes_on_unknown_length() -> None:
    x = pt.matrix("x")
    graph = Graph([x], [x[: x.shape[0]], x[0 : shape_i(x, 0)], x[:, : x.shape[1]]])
    assert check_rewrite(graph, CANONICAL).outputs == (x, x, x)


def test_slice_up_to_another_length_is_kept() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    graph = Graph([x, y], [x[: y.shape[0]]])
    assert check_rewrite(graph, CANONICAL, np.arange(5.0), np.arange(3.0)) is graph


def test_cryptic_static_slices_get_explicit_non_negative_bounds() -> None:
    x = pt.tensor("x", shape=(10,))
    cases = {
        (3, -6, -1): (Slice(0, 0),),  # empty: stop is position 4, after the start
        (8, -8, -2): (Slice(8, 2, -2),),  # positions 8, 6, 4
        (-3, None, None): (Slice(7, None),),
        (None, None, -1): (Slice(None, None, -1),),
        (-1, 0, -3): (Slice(None, 0, -3),),  # positions 9, 6, 3
    }
    for parts, expected in cases.items():
        graph = Graph([x], [x[slice(*parts)]])
        assert index_of(check_rewrite(graph, CANONICAL)) == expected, parts


def test_negative_int_index_on_known_length() -> None:
    x = pt.tensor("x", shape=(4, None))
    graph = Graph([x], [x[-1, -2]])
    assert index_of(check_rewrite(graph, CANONICAL)) == (3, -2)


def test_out_of_bounds_constant_index_is_left_to_the_run() -> None:
    """x[x.shape[0] - 1] on an empty x: folding the constant into the op would not build
    (it checks static bounds); the rules leave the IndexError to the run."""
    x = pt.tensor("x", shape=(0, 3))
    graph = Graph([x], [x[x.shape[0] - 1]])
    rewritten_graph = rewritten(graph, LIFT)
    with pytest.raises(IndexError):
        evaluate(list(rewritten_graph.outputs), {rewritten_graph.inputs[0]: np.zeros((0, 3))})
    with pytest.raises(IndexError):
        function([x], graph.outputs[0])(np.zeros((0, 3)))


def test_unit_step_and_zero_start_dropped_on_unknown_length() -> None:
    x = pt.vector("x")
    n = pt.scalar("n", dtype="int64")
    graph = Graph([x, n], [x[0:n:1]])
    result = check_rewrite(graph, CANONICAL, np.arange(6.0), np.array(4))
    assert str(result.nodes[0].op) == "Subtensor{:?}"


def test_static_stop_past_a_known_length_vanishes_beside_a_symbolic_start() -> None:
    x = pt.tensor("x", shape=(10,))
    i = pt.scalar("i", dtype="int64")
    graph = Graph([x, i], [x[i:12], x[i:12:-1]])
    result = check_rewrite(graph, CANONICAL, random_value(x), np.array(3))
    assert [str(node.op) for node in result.nodes] == ["Subtensor{?:}", "Subtensor{?:12:-1}"]


def test_canonical_form_is_a_fixpoint() -> None:
    x = pt.tensor("x", shape=(10,))
    graph = Graph([x], [x[2::3], x[::-2], x[1:]])
    assert check_rewrite(graph, CANONICAL) is graph


# --- merging chains ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "first, second, expected",
    [
        (slice(2, 8), slice(1, 4), (Slice(3, 6),)),
        (slice(None, None, -1), slice(2, 7, 2), (Slice(7, 1, -2),)),
        (slice(8, 1, -2), 1, (6,)),
        (slice(1, None, 3), slice(None, None, -1), (Slice(7, None, -3),)),
        (slice(5, None), slice(9, None), (Slice(0, 0),)),
    ],
)
def test_static_slices_merge(first: slice, second: int | slice, expected: tuple[object]) -> None:
    x = pt.tensor("x", shape=(10,))
    graph = Graph([x], [x[first][second]])
    assert index_of(check_rewrite(graph, MERGE)) == expected


def test_forward_slices_merge_on_unknown_length() -> None:
    x = pt.matrix("x")
    graph = Graph([x], [x[2:][1:3], x[1:6][2:], x[:, 1:][:, 2]])
    result = check_rewrite(graph, MERGE, random_value(x))
    assert [str(node.op) for node in result.nodes] == [
        "Subtensor{3:5}",
        "Subtensor{3:6}",
        "Subtensor{:, 3}",
    ]


def test_int_after_a_slice_merges_only_where_bounds_errors_agree() -> None:
    x = pt.vector("x")
    graph = Graph([x], [x[1:3][1], x[2:][4]])
    result = check_rewrite(graph, MERGE, np.arange(7.0))
    assert [str(node.op) for node in result.nodes] == ["Subtensor{2}", "Subtensor{6}"]
    # x[1:3][2] is always out of bounds while x[3] may not be: kept.
    kept = Graph([x], [x[1:3][2]])
    assert rewritten(kept, MERGE) is kept


def test_merge_with_ints_and_new_axes() -> None:
    x = pt.tensor("x", shape=(5, 6, 7))
    y = x[1, None, 2:][0, ::2]  # x[1] then a new axis dropped again by [0]
    graph = Graph([x], [y, x[:, None][1:3, 0]])
    result = check_rewrite(graph, MERGE)
    assert [str(node.op) for node in result.nodes] == ["Subtensor{1, 2::2}", "Subtensor{1:3}"]


def test_symbolic_indices_pass_through_a_full_slice() -> None:
    x = pt.matrix("x")
    i = pt.scalar("i", dtype="int64")
    graph = Graph([x, i], [x[:, 1:][i]])
    result = check_rewrite(graph, MERGE, random_value(x), np.array(2))
    assert str(result.nodes[0].op) == "Subtensor{?, 1:}"


# --- reads of updates -------------------------------------------------------------------------
def test_read_of_what_set_wrote_is_the_value() -> None:
    x = pt.tensor("x", shape=(4, 3))
    y = pt.tensor("y", shape=(3,))
    graph = Graph([x, y], [pt.set_subtensor(x[1], y)[1]])
    assert check_rewrite(graph, OF_UPDATE).outputs == (y,)


def test_read_of_a_broadcast_set_value_is_broadcast() -> None:
    x = pt.tensor("x", shape=(4, 3))
    graph = Graph([x], [pt.set_subtensor(x[1:3], 5.0)[1:3]])
    result = check_rewrite(graph, OF_UPDATE)
    assert ops_of(result) == ["BroadcastTo"]
    assert result.outputs[0].type == graph.outputs[0].type


def test_read_of_an_increment_adds_the_value() -> None:
    x = pt.matrix("x")
    y = pt.vector("y")
    i = pt.scalar("i", dtype="int64")
    graph = Graph([x, y, i], [pt.inc_subtensor(x[i], y)[i]])
    result = check_rewrite(graph, OF_UPDATE, random_value(x), random_value(y), np.array(-2))
    assert ops_of(result) == ["Subtensor", "Add"]
    assert result.nodes[0].inputs[0] is x


@pytest.mark.parametrize(
    "written, read",
    [(1, 2), (slice(0, 2), slice(2, 4)), ((slice(None), 0), (slice(None), 1)), (-1, 0)],
)
def test_read_of_a_disjoint_region_skips_the_update(written: object, read: object) -> None:
    x = pt.tensor("x", shape=(4, 3))
    updated = pt.set_subtensor(x[written], 7.0)
    graph = Graph([x], [updated[read]])
    result = check_rewrite(graph, OF_UPDATE)
    assert ops_of(result) == ["Subtensor"]
    assert result.nodes[0].inputs[0] is x


def test_read_inside_a_set_region_reads_the_value() -> None:
    x, y, z = pt.matrix("x"), pt.matrix("y"), pt.matrix("z")
    graph = Graph([x, y, z], [pt.set_subtensor(x[1:], y)[3], pt.set_subtensor(x[2:6], z)[3:5]])
    values = (RNG.normal(size=(8, 3)), RNG.normal(size=(7, 3)), RNG.normal(size=(4, 3)))
    result = check_rewrite(graph, OF_UPDATE, *values)
    assert [str(node.op) for node in result.nodes] == ["Subtensor{2}", "Subtensor{1:3}"]
    assert [node.inputs[0] for node in result.nodes] == [y, z]


def test_read_inside_an_incremented_region_adds_the_broadcast_value() -> None:
    x = pt.tensor("x", shape=(6, 3))
    row = pt.tensor("row", shape=(1, 3))
    graph = Graph([x, row], [pt.inc_subtensor(x[1:], row)[2, 1:]])
    result = check_rewrite(graph, OF_UPDATE)
    assert [str(node.op) for node in result.nodes] == [
        "Subtensor{2, 1:}",
        "Subtensor{0, 1:}",
        "Add",
    ]
    assert result.nodes[0].inputs[0] is x and result.nodes[1].inputs[0] is row


def test_read_of_an_overlapping_region_keeps_the_update() -> None:
    x = pt.matrix("x")
    outputs = [
        pt.set_subtensor(x[0:2], 7.0)[1:3],
        pt.set_subtensor(x[0], 1.0)[-1],
        pt.set_subtensor(x[1:4], 2.0)[0:],
    ]
    graph = Graph([x], outputs)
    assert check_rewrite(graph, OF_UPDATE) is graph


# --- lifting through elementwise ops --------------------------------------------------------
def test_index_moves_before_elementwise_work() -> None:
    x = pt.tensor("x", shape=(4, 3))
    b = pt.tensor("b", shape=(1, 3))
    graph = Graph([x, b], [pt.exp(x + b)[2]])
    result = check_rewrite(graph, LIFT)
    assert ops_of(result) == ["Subtensor", "Subtensor", "Add", "Exp"]
    assert result.outputs[0].type == graph.outputs[0].type


def test_index_is_not_moved_when_the_full_result_is_used() -> None:
    x = pt.tensor("x", shape=(4, 3))
    full = pt.exp(x)
    graph = Graph([x], [full[2], full.sum()])
    assert check_rewrite(graph, LIFT) is graph


def test_lifting_reads_the_value_a_loop_step_wrote() -> None:
    x = pt.tensor("x", shape=(3,))
    buffer = pt.set_subtensor(pt.zeros((4, 3))[1], x)
    graph = Graph([x], [(buffer * 2.0)[1]])
    result = check_rewrite(graph, LIFT)
    assert ops_of(result) == ["Mul"]
    assert x in result.nodes[0].inputs
