"""`op_from_graph`: a canonical inner graph as one op; equality, values, derivatives
(default, overridden, of higher order), printing and digests."""

from __future__ import annotations

import pickle
from typing import cast

import numpy as np
import pytest

import ops as pt
from fgraph import (
    DTypeError,
    Graph,
    Param,
    ShapeError,
    TensorType,
    Variable,
    check_graph,
    dprint,
    evaluate,
)
from ops.from_graph import InputPullback, OpFromGraph
from tests.ops.checks import check_pullback, check_pushforward

Variables = tuple[Variable, ...]
X_VALUE = np.array([0.5, -1.2, 2.0])
Y_VALUE = np.array([1.5, 0.3, -0.7])


def exp_times() -> OpFromGraph:
    """f(x, y) = exp(x) * y over vectors."""
    x, y = pt.vector("x"), pt.vector("y")
    return pt.op_from_graph([x, y], [pt.exp(x) * y], name="exp_times")


def test_inner_graph_is_a_graph_over_params() -> None:
    op = exp_times()
    graph = op.inner_graph
    assert isinstance(graph, Graph)
    assert graph.inputs == (Param(0, TensorType("float64", (None,))),) + (
        Param(1, TensorType("float64", (None,))),
    )
    check_graph(graph)


def test_structurally_equal_graphs_give_equal_ops() -> None:
    first, second = exp_times(), exp_times()
    assert first == second and hash(first) == hash(second)
    x, y = pt.vector("a"), pt.vector("b")
    swapped = pt.op_from_graph([y, x], [pt.exp(x) * y], name="exp_times")
    different = pt.op_from_graph([x, y], [pt.exp(y) * x], name="exp_times")
    assert swapped != first  # the inputs' order is part of the graph
    assert different != first
    assert pt.op_from_graph([x, y], [pt.exp(x) * y], inline=True, name="exp_times") != first
    assert pt.op_from_graph([x, y], [pt.exp(x) * y]) != first  # the name shows in printouts
    matrix = pt.matrix("m")
    assert pt.op_from_graph([matrix], [pt.exp(matrix)]) != pt.op_from_graph([x], [pt.exp(x)])


def test_equal_ops_share_nodes() -> None:
    a, b = pt.vector("a"), pt.vector("b")
    first = exp_times()(a, b)
    assert exp_times()(a, b).owner is first.owner


def test_values_and_validation() -> None:
    op = exp_times()
    a, b = pt.vector("a"), pt.vector("b")
    output = op(a, b)
    assert output.type == TensorType("float64", (None,))
    check_graph(Graph([a, b], [output]))
    (value,) = evaluate([output], {a: X_VALUE, b: Y_VALUE})
    np.testing.assert_allclose(value, np.exp(X_VALUE) * Y_VALUE)


def test_infer_checks_input_types() -> None:
    op = exp_times()
    with pytest.raises(TypeError, match="expected 2 inputs, got 1"):
        op(pt.vector("a"))
    with pytest.raises(DTypeError, match=r"input 1 must be float64\(\?,\), got float32"):
        op(pt.vector("a"), pt.vector("b", dtype="float32"))
    with pytest.raises(ShapeError, match=r"input 0 must be float64\(\?,\), got float64\(\?, \?\)"):
        op(pt.matrix("a"), pt.vector("b"))
    static = pt.vector("s", shape=(3,))
    fixed = pt.op_from_graph([static], [static * 2])
    assert fixed(pt.vector("u")).type.shape == (3,)
    assert fixed(pt.vector("u", shape=(3,))).type.shape == (3,)
    with pytest.raises(ShapeError, match=r"float64\(3,\), got float64\(4,\)"):
        fixed(pt.vector("u", shape=(4,)))


def test_multiple_outputs_apply() -> None:
    x = pt.vector("x")
    op = pt.op_from_graph([x], [pt.exp(x), x.sum()])
    a = pt.vector("a")
    first, total = op.apply(a)
    assert (first.type.ndim, total.type.ndim) == (1, 0)
    got_first, got_total = evaluate([first, total], {a: X_VALUE})
    np.testing.assert_allclose(got_first, np.exp(X_VALUE))
    np.testing.assert_allclose(got_total, X_VALUE.sum())
    with pytest.raises(TypeError, match="use op.apply"):
        op(a)


def test_outputs_that_are_inputs_or_constants() -> None:
    x = pt.vector("x")
    op = pt.op_from_graph([x], [x, pt.constant(np.float64(2.0))])
    a = pt.vector("a")
    same, two = evaluate(list(op.apply(a)), {a: X_VALUE})
    np.testing.assert_allclose(same, X_VALUE)
    assert two == 2.0
    gradient = pt.grad(op.apply(a)[0].sum(), a)
    np.testing.assert_allclose(evaluate([gradient], {a: X_VALUE})[0], np.ones(3))


def test_nested_op_from_graph() -> None:
    inner = exp_times()
    x, y = pt.vector("x"), pt.vector("y")
    outer = pt.op_from_graph([x, y], [inner(x, y) + inner(y, x)], name="symmetric")
    a, b = pt.vector("a"), pt.vector("b")
    output = outer(a, b)
    check_graph(Graph([a, b], [output]))
    (value,) = evaluate([output], {a: X_VALUE, b: Y_VALUE})
    expected = np.exp(X_VALUE) * Y_VALUE + np.exp(Y_VALUE) * X_VALUE
    np.testing.assert_allclose(value, expected)
    check_pullback(lambda u, v: outer(u, v), [X_VALUE, Y_VALUE])
    check_pushforward(lambda u, v: outer(u, v), [X_VALUE, Y_VALUE])


def test_default_derivatives_match_finite_differences() -> None:
    op = exp_times()
    check_pullback(lambda u, v: op(u, v), [X_VALUE, Y_VALUE])
    check_pushforward(lambda u, v: op(u, v), [X_VALUE, Y_VALUE])
    x = pt.vector("x")
    multi = pt.op_from_graph([x], [pt.exp(x), (x * x).sum()])
    check_pullback(lambda u: multi.apply(u)[0] * 3 + multi.apply(u)[1], [X_VALUE])
    check_pushforward(lambda u: multi.apply(u)[0] * multi.apply(u)[1], [X_VALUE])


def test_gradient_is_an_op_from_graph_built_once() -> None:
    op = exp_times()
    a, b = pt.vector("a"), pt.vector("b")
    first = pt.grad(op(a, b).sum(), a)
    second = pt.grad((op(b, a) * 2).sum(), b)
    pullbacks = {
        node.op
        for gradient in (first, second)
        for node in Graph([a, b], [gradient]).nodes
        if isinstance(node.op, OpFromGraph) and node.op != op
    }
    assert len(pullbacks) == 1
    (pullback,) = pullbacks
    assert str(pullback) == "OpFromGraph{exp_times.pullback}"
    assert exp_times().pullback((a, b), (op(a, b),), (pt.vector("c"),))[0] is not None
    check_graph(Graph([a, b], [first, second]))


def test_multiple_output_gradient_with_one_cotangent() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    op = pt.op_from_graph([x, y], [pt.exp(x), y * 3])
    a, b = pt.vector("a"), pt.vector("b")
    first, _ = op.apply(a, b)
    (gradient,) = pt.grad(first.sum(), [a])
    np.testing.assert_allclose(evaluate([gradient], {a: X_VALUE, b: Y_VALUE})[0], np.exp(X_VALUE))
    with pytest.raises(pt.DisconnectedInputError, match="b"):
        pt.grad(first.sum(), b)


def test_disconnected_and_integer_inputs() -> None:
    x, unused, count = pt.vector("x"), pt.vector("unused"), pt.scalar("count", dtype="int64")
    op = pt.op_from_graph([x, unused, count], [pt.exp(x) * count])
    a, u, n = pt.vector("a"), pt.vector("u"), pt.scalar("n", dtype="int64")
    cost = op(a, u, n).sum()
    with pytest.raises(pt.DisconnectedInputError, match="u"):
        pt.grad(cost, [a, u])
    gradient, zeros = pt.grad(cost, [a, u], disconnected_inputs="ignore")
    got, got_zeros = evaluate([gradient, zeros], {a: X_VALUE, u: Y_VALUE, n: 3})
    np.testing.assert_allclose(got, 3 * np.exp(X_VALUE))
    np.testing.assert_allclose(got_zeros, np.zeros(3))
    nodes = Graph([a, u, n], [cost]).nodes
    (applied,) = [node for node in nodes if isinstance(node.op, OpFromGraph)]
    cotangents = applied.op.pullback(applied.inputs, applied.outputs, (pt.vector("c"),))
    assert cotangents[1] is None and cotangents[2] is None


def test_pullback_function_override() -> None:
    """A deliberately different gradient shows the override is used: d/dx := 2 * c."""
    x = pt.vector("x")

    def doubled(
        inputs: Variables, outputs: Variables, cotangents: Variables
    ) -> list[Variable | None]:
        return [cotangents[0] * 2]

    op = pt.op_from_graph([x], [pt.exp(x)], pullback=doubled)
    a = pt.vector("a")
    gradient = pt.grad(op(a).sum(), a)
    np.testing.assert_allclose(evaluate([gradient], {a: X_VALUE})[0], np.full(3, 2.0))
    second = pt.grad(gradient.sum(), a, disconnected_inputs="ignore")
    np.testing.assert_allclose(evaluate([second], {a: X_VALUE})[0], np.zeros(3))
    assert op != pt.op_from_graph([x], [pt.exp(x)])
    assert op == pt.op_from_graph([x], [pt.exp(x)], pullback=doubled)


def test_per_input_pullback_list_with_default() -> None:
    x, y = pt.vector("x"), pt.vector("y")

    def x_gradient(
        inputs: Variables, outputs: Variables, cotangents: Variables
    ) -> Variable:
        return cotangents[0] * inputs[1] * 10  # ten times the true gradient y * c

    op = pt.op_from_graph([x, y], [x * y], pullback=[x_gradient, None])
    a, b = pt.vector("a"), pt.vector("b")
    ga, gb = pt.grad(op(a, b).sum(), [a, b])
    got_a, got_b = evaluate([ga, gb], {a: X_VALUE, b: Y_VALUE})
    np.testing.assert_allclose(got_a, 10 * Y_VALUE)
    np.testing.assert_allclose(got_b, X_VALUE)
    with pytest.raises(ValueError, match="2 inputs"):
        pt.op_from_graph([x, y], [x * y], pullback=[x_gradient])


def test_override_must_use_what_it_receives() -> None:
    x, outside = pt.vector("x"), pt.vector("outside")
    op = pt.op_from_graph([x], [x * 2], pullback=lambda inputs, outputs, cotangents: [outside])
    a = pt.vector("a")
    with pytest.raises(ValueError, match="outside"):
        pt.grad(op(a).sum(), a)


def test_second_and_third_derivatives_through_the_op() -> None:
    x = pt.vector("x")
    op = pt.op_from_graph([x], [x**3 * pt.exp(x)])
    a = pt.vector("a")
    first = pt.grad(op(a).sum(), a)
    second = pt.grad(first.sum(), a)
    third = pt.grad(second.sum(), a)
    check_graph(Graph([a], [first, second, third]))
    got = evaluate([first, second, third], {a: X_VALUE})
    v, e = X_VALUE, np.exp(X_VALUE)
    np.testing.assert_allclose(got[0], (3 * v**2 + v**3) * e)
    np.testing.assert_allclose(got[1], (6 * v + 6 * v**2 + v**3) * e)
    np.testing.assert_allclose(got[2], (6 + 18 * v + 9 * v**2 + v**3) * e)


def test_dprint_shows_the_inner_graph() -> None:
    op = exp_times()
    a, b = pt.vector("a"), pt.vector("b")
    text = dprint(op(a, b), file=None)
    assert text.splitlines()[0].startswith("OpFromGraph{exp_times}")
    assert "Inner graphs:" in text
    inner_part = text.split("Inner graphs:")[1]
    assert "Mul" in inner_part and "Exp" in inner_part and "p0" in inner_part


def test_digest_is_stable_with_a_pullback_function() -> None:
    x = pt.vector("x")

    def custom(
        inputs: Variables, outputs: Variables, cotangents: Variables
    ) -> list[Variable | None]:
        return [cotangents[0]]

    y, a, b = pt.vector("y"), pt.vector("a"), pt.vector("b")
    first = pt.op_from_graph([x], [pt.exp(x)], pullback=custom)
    second = pt.op_from_graph([y], [pt.exp(y)], pullback=custom)
    digest = Graph([a], [first(a)]).digest
    assert Graph([b], [second(b)]).digest == digest
    plain = pt.op_from_graph([x], [pt.exp(x)])
    assert Graph([a], [plain(a)]).digest != digest


def test_pickle_round_trip() -> None:
    op = exp_times()
    a, b = pt.vector("a"), pt.vector("b")
    graph = Graph([a, b], [op(a, b)])
    restored = pickle.loads(pickle.dumps(graph))
    assert restored == graph and restored.digest == graph.digest
    assert pickle.loads(pickle.dumps(op)) == op


def test_invalid_constructions() -> None:
    x = pt.vector("x")
    with pytest.raises(TypeError, match="Param"):
        OpFromGraph(Graph([x], [pt.exp(x)]))
    with pytest.raises(ValueError, match="no outputs"):
        pt.op_from_graph([x], [])
    with pytest.raises(TypeError, match="callable or None"):
        pt.op_from_graph([x], [x * 2], pullback=cast(list[InputPullback | None], [3]))
