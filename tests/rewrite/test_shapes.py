"""Shape rules, one tiny graph each: the rule fires (the structure of the result), keeps
values and types against the reference evaluator, and declines where it must."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, evaluate
from ops.reduction import Prod, Sum
from ops.shape_vector import shape_i
from ops.subtensor import Subtensor
from rewrite import RuleSet
from rewrite.shapes import (
    SHAPES,
    fill_of_static_shape,
    length_of_input,
    length_of_shaping_op,
    length_read_off_shape,
    reduce_axes_of_length_one,
    shape_of_shaping_op,
    subtensor_of_filled,
)
from tests.rewrite.algebra_checks import check_rewrite, ops_of, random_value, rewritten

SHAPE_OF = RuleSet("shape_of", (shape_of_shaping_op,))
LENGTH_OF = RuleSet("length_of", (length_of_shaping_op,))
OF_INPUT = RuleSet("of_input", (length_of_input,))
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


# --- lengths read off the inputs that have them ------------------------------------------------
def test_lengths_of_elementwise_results_are_their_unbroadcast_inputs() -> None:
    x, row = pt.tensor("x", shape=(None, None)), pt.tensor("row", shape=(1, None))
    result_value = pt.exp(row + x) * 2.0
    graph = Graph([x, row], [shape_i(result_value, 0), shape_i(result_value, 1)])
    result = check_rewrite(graph, OF_INPUT)
    assert result.outputs == (shape_i(x, 0), shape_i(row, 1))  # row is broadcast along 0


def test_lengths_of_transposes_and_reductions_are_their_inputs() -> None:
    x = pt.tensor("x", shape=(None, None, None))
    moved = pt.transpose(x, (2, 0, 1))
    reduced = pt.sum(moved, axis=1)
    graph = Graph([x], [shape_i(moved, 0), shape_i(reduced, 1), shape_i(x[:, None], 2)])
    result = check_rewrite(graph, OF_INPUT)
    assert result.outputs == (shape_i(x, 2), shape_i(x, 1), shape_i(x, 1))


def test_lengths_of_products_solves_and_factors_are_their_operands() -> None:
    a, b = pt.tensor("a", shape=(None, None)), pt.tensor("b", shape=(None, None))
    stack = pt.tensor("stack", shape=(None, 1, None, None))
    other = pt.tensor("other", shape=(1, None, None, None))
    factor = pt.linalg.cholesky(a @ a.T)
    solved = pt.linalg.solve_triangular(factor, b, lower=True)
    batched = stack @ other
    lengths = [shape_i(factor, 1), shape_i(solved, 1), shape_i(solved.T, 1)]
    graph = Graph([a, b, stack, other], [*lengths, *(shape_i(batched, k) for k in range(4))])
    values = (np.eye(4) + 0.1, *(random_value(v) for v in (b, stack, other)))
    result = check_rewrite(graph, OF_INPUT, *values)
    assert result.outputs == (
        shape_i(a, 0),  # the factor's columns are a @ a.T's, which are a.T's, a's rows
        shape_i(b, 1),
        shape_i(b, 0),  # a solution's rows are its right-hand side's
        shape_i(stack, 0),
        shape_i(other, 1),
        shape_i(stack, 2),
        shape_i(other, 3),
    )


def test_lengths_of_whole_axes_of_an_index_are_the_indexed_arrays() -> None:
    x = pt.tensor("x", shape=(None, None, None))
    updated = pt.set_subtensor(x[0], 0.0)
    sliced = x[:, 1:]
    graph = Graph([x], [shape_i(x[0, :, None], 0), shape_i(x[1], 1), shape_i(updated, 2),
                        shape_i(sliced, 1)])
    result = check_rewrite(graph, OF_INPUT)
    assert result.outputs == (shape_i(x, 1), shape_i(x, 2), shape_i(x, 2), shape_i(sliced, 1))


def test_lengths_of_filled_reshaped_and_counted_arrays_are_the_lengths_they_take() -> None:
    x, y = pt.matrix("x"), pt.vector("y")
    filled = pt.broadcast_to(0.5, x.shape)
    reshaped = pt.reshape(y, (x.shape[1], x.shape[0]))
    graph = Graph([x, y], [shape_i(filled, 1), shape_i(reshaped, 0), shape_i(pt.arange(y.shape[0]), 0)])
    result = check_rewrite(rewritten(graph, READ_OFF), OF_INPUT, random_value(x), np.arange(16.0))
    assert result.outputs == (shape_i(x, 1), shape_i(x, 1), shape_i(y, 0))


def test_length_of_a_new_or_sliced_axis_is_kept() -> None:
    x = pt.vector("x")
    graph = Graph([x], [shape_i(x[1:], 0), shape_i(pt.linalg.det(pt.outer(x, x)[None]), 0),
                        shape_i(pt.arange(1, x.shape[0]), 0), shape_i(pt.arange(0, x.shape[0], 2), 0)])
    graph = rewritten(graph, READ_OFF)
    assert check_rewrite(graph, OF_INPUT, np.arange(3.0)) is graph


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


def test_index_of_filled_array_not_known_in_bounds_is_kept() -> None:
    """Found by the loop fuzzer: `alloc(v, n)[-1]` (a repeated per-step output's last row
    after zero steps) became `v`, a value where indexing raises IndexError."""
    a = pt.scalar("a")
    n = pt.scalar("n", dtype="int64")
    graph = Graph([a, n], [pt.alloc(a, n)[-1], pt.alloc(a, n, 3)[1], pt.alloc(a, 3, n)[:, 0]])
    assert check_rewrite(graph, FILLED, np.array(1.5), np.array(2)) is graph
    with pytest.raises(IndexError):
        evaluate([graph.outputs[0]], {a: np.array(1.5), n: np.array(0)})


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
        "length_of_input",
        "length_read_off_shape",
        "reduce_axes_of_length_one",
        "subtensor_of_filled",
        "fill_of_static_shape",
    )
