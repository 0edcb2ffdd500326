"""Canonicalization rules, one tiny graph each: the rule fires, keeps values and types,
and declines where firing would change a type."""

from __future__ import annotations

import numpy as np

import ops as pt
from fgraph import Constant, Graph, evaluate
from ops.elemwise import Elemwise
from ops.scalar_ops import Cast
from ops.shape_vector import ShapeI
from rewrite import optimize
from rewrite.canonicalize import CANONICALIZE
from tests.rewrite.algebra_checks import check_rewrite, ops_of, random_value, rewritten


def test_mul_by_one_on_either_side() -> None:
    x = pt.vector("x")
    result = check_rewrite(Graph([x], [x * 1, 1.0 * x]), CANONICALIZE)
    assert result.outputs == (x, x)


def test_mul_by_one_casts_where_the_dtype_grows() -> None:
    x = pt.vector("x", dtype="int32")
    graph = Graph([x], [x * pt.constant(np.ones(1))])
    result = check_rewrite(graph, CANONICALIZE, np.array([1, -2, 3], dtype="int32"))
    assert ops_of(result) == ["Cast{float64}"]


def test_mul_by_one_that_broadcasts_is_kept() -> None:
    x = pt.tensor("x", shape=(1,))
    graph = Graph([x], [x * pt.constant(np.ones(3))])
    assert check_rewrite(graph, CANONICALIZE) is graph


def test_mul_by_minus_one_is_a_negation() -> None:
    x = pt.vector("x")
    result = check_rewrite(Graph([x], [x * -1, -1.0 * x]), CANONICALIZE)
    assert ops_of(result) == ["Neg"]
    flags = pt.vector("flags", dtype="bool")
    as_int = check_rewrite(Graph([flags], [flags * -1]), CANONICALIZE, np.array([True, False]))
    assert ops_of(as_int) == ["Cast{int64}", "Neg"]


def test_add_zero_on_either_side() -> None:
    x = pt.matrix("x")
    result = check_rewrite(Graph([x], [x + 0, 0.0 + x]), CANONICALIZE)
    assert result.outputs == (x, x)


def test_sub_zero() -> None:
    x = pt.vector("x", dtype="float32")
    result = check_rewrite(Graph([x], [x - 0]), CANONICALIZE)
    assert result.outputs == (x,)


def test_zero_minus_x_is_not_x() -> None:
    x = pt.vector("x")
    graph = Graph([x], [0 - x])
    assert check_rewrite(graph, CANONICALIZE) is graph


def test_div_by_one_of_integers_is_a_cast_to_float() -> None:
    x = pt.vector("x", dtype="int64")
    result = check_rewrite(Graph([x], [x / 1]), CANONICALIZE, np.array([4, -5, 7]))
    assert ops_of(result) == ["Cast{float64}"]


def test_pow_one() -> None:
    x = pt.vector("x")
    result = check_rewrite(Graph([x], [x**1]), CANONICALIZE)
    assert result.outputs == (x,)


def test_double_neg() -> None:
    x = pt.vector("x", dtype="uint8")
    graph = Graph([x], [-(-x), -x])
    result = check_rewrite(graph, CANONICALIZE, np.array([0, 1, 255], dtype="uint8"))
    assert result.outputs[0] is x
    assert ops_of(result) == ["Neg"]


def test_cast_to_own_dtype() -> None:
    x = pt.vector("x")
    result = check_rewrite(Graph([x], [Elemwise(Cast("float64"))(x)]), CANONICALIZE)
    assert result.outputs == (x,)


def test_cast_of_lossless_cast_is_one_cast() -> None:
    x = pt.vector("x", dtype="int16")
    graph = Graph([x], [pt.cast(pt.cast(x, "float64"), "float32")])
    result = check_rewrite(graph, CANONICALIZE, np.array([1, -300, 7], dtype="int16"))
    assert ops_of(result) == ["Cast{float32}"]
    back = Graph([x], [pt.cast(pt.cast(x, "int64"), "int16")])
    assert check_rewrite(back, CANONICALIZE).outputs == (x,)


def test_cast_of_lossy_cast_is_kept() -> None:
    x = pt.vector("x")
    graph = Graph([x], [pt.cast(pt.cast(x, "int32"), "float64")])
    assert check_rewrite(graph, CANONICALIZE, np.array([1.5, -2.7, 3.0])) is graph


def test_identity_dimshuffle() -> None:
    x = pt.matrix("x")
    result = check_rewrite(Graph([x], [pt.DimShuffle((0, 1))(x)]), CANONICALIZE)
    assert result.outputs == (x,)


def test_dropping_and_reinserting_a_length_one_axis_is_the_identity() -> None:
    x = pt.tensor("x", shape=(None, 1))
    y = pt.expand_dims(pt.squeeze(x, 1), 1)  # x[:, 0][:, None]
    result = check_rewrite(Graph([x], [y]), CANONICALIZE)
    assert result.outputs == (x,)


def test_a_new_axis_where_a_longer_axis_was_dropped_is_kept() -> None:
    x = pt.tensor("x", shape=(1, None))
    y = pt.expand_dims(pt.squeeze(x, 0), 1)  # (n,) -> (n, 1): not x
    result = check_rewrite(Graph([x], [y]), CANONICALIZE)
    assert result.outputs[0].type == y.type and result.outputs != (x,)


def test_dimshuffles_merge() -> None:
    x = pt.tensor("x", shape=(2, 1, 3))
    y = pt.expand_dims(pt.transpose(pt.squeeze(x, 1)), 0)
    result = check_rewrite(Graph([x], [y]), CANONICALIZE)
    assert ops_of(result) == ["DimShuffle"]
    assert result.outputs[0].type == y.type


def test_transpose_of_transpose_disappears() -> None:
    x = pt.matrix("x")
    result = check_rewrite(Graph([x], [x.T.T]), CANONICALIZE)
    assert result.outputs == (x,)


def test_reshapes_merge() -> None:
    x = pt.vector("x")
    y = pt.reshape(pt.reshape(x, (2, -1)), (-1, 2))
    result = check_rewrite(Graph([x], [y]), CANONICALIZE, np.arange(8.0))
    assert ops_of(result) == ["Reshape"]


def test_reshapes_that_cannot_fit_statically_are_kept() -> None:
    x, rows = pt.tensor("x", shape=(6,)), pt.scalar("rows", dtype="int64")
    graph = Graph([x, rows], [pt.reshape(pt.reshape(x, (rows, -1)), (4,))])
    assert rewritten(graph, CANONICALIZE) is graph


def test_reshapes_that_would_lose_a_static_length_are_kept() -> None:
    """reshape(reshape(x, (3, 2)), (1, -1)) is (1, 6); reshape(x, (1, -1)) would be (1, ?)."""
    x = pt.vector("x")
    graph = Graph([x], [pt.reshape(pt.reshape(x, (3, 2)), (1, -1))])
    assert rewritten(graph, CANONICALIZE) is graph
    np.testing.assert_array_equal(
        evaluate(optimize(graph, "fast_run").outputs, {x: np.arange(6.0)})[0], [np.arange(6.0)]
    )


def test_reshape_to_own_shape() -> None:
    x = pt.matrix("x")
    result = check_rewrite(Graph([x], [pt.reshape(x, pt.shape(x))]), CANONICALIZE)
    assert result.outputs == (x,)


def test_reshape_to_same_static_shape() -> None:
    x = pt.tensor("x", shape=(2, 3))
    y = pt.Reshape((2, 3))(x, pt.constant(np.array([2, 3], dtype="int64")))
    result = check_rewrite(Graph([x], [y]), CANONICALIZE)
    assert result.outputs == (x,)


def test_reshape_of_unknown_to_a_known_shape_is_kept() -> None:
    x = pt.tensor("x", shape=(None, 3))
    graph = Graph([x], [pt.reshape(x, (2, 3))])
    assert check_rewrite(graph, CANONICALIZE, random_value(pt.tensor("v", shape=(2, 3)))) is graph


def test_second_alloc_and_broadcast_to_of_the_same_type() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    size = pt.shape(y)
    outputs = [pt.second(x, y), pt.BroadcastTo((None,))(y, size), pt.Alloc((None,))(y, size)]
    result = check_rewrite(Graph([x, y], outputs), CANONICALIZE)
    assert result.outputs == (y, y, y)


def test_broadcasts_that_stretch_are_kept() -> None:
    x, y = pt.vector("x"), pt.tensor("y", shape=(1,))
    outputs = [pt.second(x, y), pt.BroadcastTo((None,))(y, pt.shape(x))]
    graph = Graph([x, y], outputs)
    assert check_rewrite(graph, CANONICALIZE) is graph


def test_shape_of_static_input_is_a_constant() -> None:
    x, y = pt.tensor("x", shape=(2, 3)), pt.vector("y")
    graph = Graph([x, y], [pt.shape(x), ShapeI(1)(x), pt.shape(y)])
    result = check_rewrite(graph, CANONICALIZE)
    first, second, unknown = result.outputs
    assert isinstance(first, Constant) and first.data.tolist() == [2, 3]
    assert isinstance(second, Constant) and int(second.data) == 3
    assert not isinstance(unknown, Constant)


def test_canonicalize_reaches_a_fixpoint_in_one_pass() -> None:
    x = pt.vector("x")
    y = -(-(pt.cast(x * 1 + 0, "float64") / 1))
    once = check_rewrite(Graph([x], [y]), CANONICALIZE)
    assert once.outputs == (x,) and once.nodes == ()


def test_a_static_broadcast_into_an_elementwise_op_is_the_elementwise_ops_own() -> None:
    """alloc / broadcast_to of a value that an elementwise op then reads: the op
    broadcasts the value itself (no array filled first) when its result keeps its type."""
    x, s = pt.tensor("x", shape=(2, 3)), pt.scalar("s")
    y = pt.tensor("y", shape=(3,))
    stretched = [pt.Alloc((2, 3))(s, pt.shape(x)), pt.BroadcastTo((2, 3))(y, pt.shape(x))]
    graph = Graph([x, s, y], [x * stretched[0], stretched[1] - x])
    feed = [random_value(x), random_value(s), random_value(y)]
    result = check_rewrite(graph, CANONICALIZE, *feed)
    assert not any(isinstance(node.op, (pt.Alloc, pt.BroadcastTo)) for node in result.nodes)


def test_a_broadcast_that_sets_the_elementwise_results_shape_is_kept() -> None:
    """Where the broadcast gives the result its (static) length, or its shape is not
    static (its run-time length check would be lost), it stays."""
    x, s = pt.vector("x"), pt.scalar("s")
    known = pt.tensor("known", shape=(1,))
    graph = Graph([x, s, known], [known * pt.Alloc((3,))(s, pt.as_tensor(np.array([3]))),
                                  x + pt.Alloc((None,))(s, pt.shape(x))])
    result = check_rewrite(graph, CANONICALIZE, random_value(pt.tensor("v", shape=(3,))),
                           random_value(s), random_value(known))
    assert sum(isinstance(node.op, pt.Alloc) for node in result.nodes) == 2
