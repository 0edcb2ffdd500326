"""Shape rules, one tiny graph each: the rule fires (the structure of the result), keeps
values and types against the reference evaluator, and declines where it must."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable
from ops.reduction import Prod, Sum
from ops.shape_vector import shape_i
from ops.subtensor import Subtensor
from rewrite import RuleSet
from rewrite.shapes import (
    SHAPES,
    fill_of_static_shape,
    length_of_shaping_op,
    length_read_off_shape,
    reduce_axes_of_length_one,
    shape_of_shaping_op,
    subtensor_of_filled,
)
from tests.rewrite.algebra_checks import check_rewrite, ops_of, random_value

SHAPE_OF = RuleSet("shape_of", (shape_of_shaping_op,))
LENGTH_OF = RuleSet("length_of", (length_of_shaping_op,))
READ_OFF = RuleSet("read_off", (length_read_off_shape,))
REDUCE = RuleSet("reduce", (reduce_axes_of_length_one,))
FILLED = RuleSet("filled", (subtensor_of_filled,))
FILL = RuleSet("fill", (fill_of_static_shape,))


# --- shapes read off the op that set them ------------------------------------------------------
def test_shape_of_alloc_is_its_shape_input() -> None:
    n = pt.scalar("n", dtype="int64")
    graph = Graph([n], [pt.shape(pt.alloc(1.0, n, 3))])
    result = check_rewrite(graph, SHAPE_OF, np.array(4))
    assert ops_of(result) == ["MakeVector"]


def test_shape_of_broadcast_to_is_its_shape_input() -> None:
    v = pt.vector("v")
    n = pt.scalar("n", dtype="int64")
    graph = Graph([v, n], [pt.shape(pt.broadcast_to(v, (n, v.shape[0])))])
    result = check_rewrite(graph, SHAPE_OF, random_value(v), np.array(2))
    assert ops_of(result) == ["Shape", "Subtensor", "MakeVector"]
    assert result.nodes[0].inputs == (v,)


def test_shape_of_reshape_to_lengths_is_its_shape_input() -> None:
    v = pt.vector("v")
    graph = Graph([v], [pt.shape(pt.reshape(v, (v.shape[0], 1)))])
    result = check_rewrite(graph, SHAPE_OF)
    assert ops_of(result) == ["Shape", "Subtensor", "MakeVector"]


def test_shape_of_reshape_with_minus_one_is_kept() -> None:
    v = pt.vector("v")
    n = pt.scalar("n", dtype="int64")
    graph = Graph([v, n], [pt.shape(pt.reshape(v, (n, -1)))])
    assert check_rewrite(graph, SHAPE_OF, np.arange(6.0), np.array(3)) is graph


def test_length_of_alloc_is_its_shape_entry() -> None:
    n = pt.scalar("n", dtype="int64")
    v = pt.vector("v")
    filled = pt.alloc(1.0, n, 3)
    graph = Graph([n, v], [shape_i(filled, 0), shape_i(pt.broadcast_to(v, (2, v.shape[0])), 1)])
    result = check_rewrite(graph, LENGTH_OF, np.array(4), random_value(v))
    assert result.outputs[0] == n
    assert ops_of(result) == ["Shape", "Subtensor"]


def test_length_of_reshape_with_minus_one_is_kept() -> None:
    v = pt.vector("v")
    n = pt.scalar("n", dtype="int64")
    graph = Graph([v, n], [shape_i(pt.reshape(v, (n, -1)), 1)])
    assert check_rewrite(graph, LENGTH_OF, np.arange(6.0), np.array(3)) is graph


def test_entry_of_a_shape_is_a_length() -> None:
    x = pt.tensor("x", shape=(None, 3))
    graph = Graph([x], [x.shape[0], x.shape[-1]])
    result = check_rewrite(graph, READ_OFF)
    assert ops_of(result) == ["ShapeI"]
    assert result.outputs[1] == pt.constant(np.int64(3))


# --- reductions over axes of length 1 ----------------------------------------------------------
@pytest.mark.parametrize(
    "reduce, axis, expected",
    [
        (pt.sum, 1, ["DropDims"]),
        (pt.prod, 1, ["DropDims"]),
        (pt.sum, (0, 1), ["DropDims", "Sum"]),
        (pt.max, (1, 2), ["DropDims", "Max"]),
        (pt.min, 1, ["DropDims"]),
    ],
)
def test_reduction_over_length_one_axes_drops_them(
    reduce: Callable[..., Variable], axis: int | tuple[int, ...], expected: list[str]
) -> None:
    x = pt.tensor("x", shape=(4, 1, 3))
    result = check_rewrite(Graph([x], [reduce(x, axis=axis)]), REDUCE)
    assert [name.split("{")[0] for name in _op_names(result)] == expected


def _op_names(graph: Graph) -> list[str]:
    return [str(node.op) for node in graph.nodes]


def test_sum_of_ints_over_length_one_axis_keeps_the_widened_dtype() -> None:
    i = pt.tensor("i", shape=(4, 1), dtype="int32")
    graph = Graph([i], [pt.sum(i, axis=1)])
    result = check_rewrite(graph, REDUCE, np.arange(4, dtype="int32").reshape(4, 1))
    assert _op_names(result) == ["DropDims{keep=(0,)}", "Cast{int64}"]


def test_reduction_over_no_axes_is_its_input() -> None:
    x = pt.matrix("x")
    graph = Graph([x], [Sum(())(x), Prod(())(x)])
    assert check_rewrite(graph, REDUCE).outputs == (x, x)


def test_reduction_over_longer_axes_is_kept() -> None:
    x = pt.tensor("x", shape=(4, None, 3))
    graph = Graph([x], [pt.sum(x, axis=1), pt.prod(x)])
    assert check_rewrite(graph, REDUCE) is graph


# --- filled arrays -----------------------------------------------------------------------------
def test_slice_of_filled_array_is_a_smaller_one() -> None:
    a = pt.scalar("a")
    graph = Graph([a], [pt.alloc(a, 5, 4)[1:3], pt.zeros((4, 3))[2]])
    result = check_rewrite(graph, FILLED)
    assert _op_names(result) == ["Alloc{shape=(2, 4)}", "Alloc{shape=(3,)}"]


def test_slice_of_filled_array_of_unknown_length_keeps_whole_axes() -> None:
    a = pt.scalar("a")
    n = pt.scalar("n", dtype="int64")
    graph = Graph([a, n], [pt.alloc(a, 5, n)[2], pt.alloc(a, n, 4)[:, 1:3]])
    result = check_rewrite(graph, FILLED, np.array(1.5), np.array(3))
    assert [str(node.op) for node in result.nodes if "Alloc" in str(node.op)] == [
        "Alloc{shape=(None,)}",
        "Alloc{shape=(None, 2)}",
    ]
    assert not any(isinstance(node.op, Subtensor) for node in result.nodes)


def test_slice_of_unknown_length_of_filled_array_is_kept() -> None:
    a = pt.scalar("a")
    n = pt.scalar("n", dtype="int64")
    graph = Graph([a, n], [pt.alloc(a, n)[1:]])
    assert check_rewrite(graph, FILLED, np.array(1.5), np.array(3)) is graph


def test_slice_of_array_filled_with_a_row_is_kept() -> None:
    row = pt.tensor("row", shape=(4,))
    graph = Graph([row], [pt.alloc(row, 5, 4)[1:3]])
    assert check_rewrite(graph, FILLED) is graph


def test_fill_of_a_static_shape_forgets_the_array() -> None:
    x = pt.tensor("x", shape=(2, 3))
    graph = Graph([x], [pt.second(x, 7.0)])
    result = check_rewrite(graph, FILL)
    assert ops_of(result) == ["DimShuffle", "Alloc"]  # the 7.0, padded to rank 2
    assert all(x not in node.inputs for node in result.nodes)


def test_fill_of_an_unknown_shape_is_kept() -> None:
    x = pt.matrix("x")
    graph = Graph([x], [pt.second(x, 7.0)])
    assert check_rewrite(graph, FILL) is graph


def test_rule_set_holds_every_shape_rule() -> None:
    assert SHAPES.names == (
        "shape_of_shaping_op",
        "length_of_shaping_op",
        "length_read_off_shape",
        "reduce_axes_of_length_one",
        "subtensor_of_filled",
        "fill_of_static_shape",
    )
