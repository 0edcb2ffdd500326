"""`function(..., specialize_shapes=True)`: values equal to the unspecialized function and
to `evaluate` for several shapes (lengths 0 and 1 included), one compile per new set of
shapes, static input types in each specialization (loop bodies re-typed too), the
unspecialized function's errors, pickling, and the refused numba/C entry points.

Compiles are shared through module-scoped fixtures.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Input, ShapeError, Variable, display_name, evaluate
from numba_backend import CompiledFunction, ShapeSpecializedFunction, function
from rewrite.input_shapes import with_input_shapes

Array = np.ndarray[Any, np.dtype[Any]]


def dense_graph() -> tuple[list[Input], list[Variable]]:
    """Elementwise work, reductions, a product and a static-width input."""
    x, a, w = pt.vector("x"), pt.matrix("A"), pt.tensor("w", shape=(None, 2))
    outputs = [pt.exp(-x) * 2 + a.sum(), pt.dot(a, x), (w * w).sum(axis=0), x.sum() * a]
    return [x, a, w], outputs


@pytest.fixture(scope="module")
def dense() -> tuple[ShapeSpecializedFunction[Any], CompiledFunction[Any], Graph]:
    inputs, outputs = dense_graph()
    return (function(inputs, outputs, specialize_shapes=True), function(inputs, outputs),
            Graph(inputs, outputs))


def dense_arguments(n: int, m: int, rows: int) -> tuple[Array, Array, Array]:
    rng = np.random.default_rng(n * 100 + m * 10 + rows)
    return rng.normal(size=n), rng.normal(size=(m, n)), rng.normal(size=(rows, 2))


def loop_graph() -> tuple[list[Input], list[Variable]]:
    """An HMM-like forward loop over a sequence of unknown length (its state of unknown
    length too), with its gradient: a carry, a sequence and a non-sequence."""
    ys, init, transition = pt.matrix("ys"), pt.vector("init"), pt.matrix("transition")

    def step(emission: Variable, alpha: Variable, log_transition: Variable) -> Variable:
        return pt.logsumexp(alpha[:, None] + log_transition, axis=0) + emission

    alphas = pt.scan(step, sequences=[ys], outputs_info=[init], non_sequences=[transition])
    final = pt.concatenate([init[None, :], alphas])[-1]
    loglik = pt.logsumexp(final)
    return [ys, init, transition], [loglik, *pt.grad(loglik, [init, transition])]


@pytest.fixture(scope="module")
def loop() -> tuple[ShapeSpecializedFunction[Any], CompiledFunction[Any], Graph]:
    inputs, outputs = loop_graph()
    return (function(inputs, outputs, specialize_shapes=True), function(inputs, outputs),
            Graph(inputs, outputs))


def loop_arguments(steps: int, states: int) -> tuple[Array, Array, Array]:
    rng = np.random.default_rng(steps * 10 + states)
    return (rng.normal(size=(steps, states)), rng.normal(size=states),
            rng.normal(size=(states, states)))


def check_values(specialized: Any, plain: Any, graph: Graph, arguments: tuple[Any, ...]) -> None:
    got = specialized(*arguments)
    expected = evaluate(graph, dict(zip(graph.inputs, arguments)))
    for value, unspecialized, reference in zip(got, plain(*arguments), expected):
        assert value.shape == reference.shape
        np.testing.assert_allclose(value, unspecialized, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(value, reference, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("n", "m", "rows"), [(4, 3, 5), (0, 2, 1), (1, 1, 0), (1, 0, 1)])
def test_dense_values_equal_the_unspecialized_function_and_evaluate(
    dense: tuple[ShapeSpecializedFunction[Any], CompiledFunction[Any], Graph],
    n: int, m: int, rows: int,
) -> None:
    check_values(*dense, dense_arguments(n, m, rows))


@pytest.mark.parametrize(("steps", "states"), [(7, 3), (1, 3), (0, 2), (5, 1)])
def test_loop_values_equal_the_unspecialized_function_and_evaluate(
    loop: tuple[ShapeSpecializedFunction[Any], CompiledFunction[Any], Graph],
    steps: int, states: int,
) -> None:
    check_values(*loop, loop_arguments(steps, states))


def test_a_second_call_with_the_same_shapes_compiles_nothing() -> None:
    x = pt.vector("x")
    f = function([x], (x * x).sum(), specialize_shapes=True)
    assert not f.specializations
    assert f(np.arange(3.0)) == 5.0
    first = f.specializations[((3,),)]
    assert f(np.array([1.0, 2.0, 2.0])) == 9.0
    assert f([4, 0, 0]) == 16.0  # a list of the same length: converted, the same code
    assert list(f.specializations) == [((3,),)] and f.specializations[((3,),)] is first
    assert f(np.ones(2)) == 2.0
    assert list(f.specializations) == [((3,),), ((2,),)]


def test_each_specialization_is_compiled_for_static_input_types(
    dense: tuple[ShapeSpecializedFunction[Any], CompiledFunction[Any], Graph],
) -> None:
    specialized, _, _ = dense
    specialized(*dense_arguments(3, 2, 4))
    compiled = specialized.specializations[((3,), (2, 3), (4, 2))]
    assert [v.type.shape for v in compiled.graph.inputs] == [(3,), (2, 3), (4, 2)]
    assert [display_name(v) for v in compiled.graph.inputs] == ["x", "A", "w"]
    assert all(v.type.is_fully_static for v in compiled.graph.outputs)


def test_loop_bodies_are_retyped_with_the_static_lengths() -> None:
    """The forward loop's and the gradient loop's params all get static shapes."""
    inputs, outputs = loop_graph()
    retyped = with_input_shapes(Graph(inputs, outputs), [(6, 3), (3,), (3, 3)])
    loops = [node.op for node in retyped.nodes if isinstance(node.op, pt.Scan)]
    assert len(loops) == 2  # the forward loop and its gradient's
    for op in loops:
        assert all(p.type.is_fully_static for p in op.inner_graph.inputs)
        assert all(o.type.is_fully_static for o in op.inner_graph.outputs)
    assert all(o.type.is_fully_static for o in retyped.outputs)


def test_a_carry_whose_step_changes_its_length_keeps_it_unknown() -> None:
    """`c[:k]` with `k` an input: the step's result has no static length, so the carry's
    param keeps none (a static one would claim a length later steps may not have)."""
    x, k = pt.vector("x"), pt.scalar("k", dtype="int64")
    trace = pt.scan(lambda c, k: c[:k] * 2.0, outputs_info=[x], non_sequences=[k], n_steps=3)
    retyped = with_input_shapes(Graph([x, k], [trace]), [(4,), ()])
    (op,) = [node.op for node in retyped.nodes if isinstance(node.op, pt.Scan)]
    assert op.inner_graph.inputs[0].type.shape == (None,)
    f = function([x, k], trace, specialize_shapes=True)
    np.testing.assert_array_equal(f(np.arange(4.0), 9), [np.arange(4.0) * 2 ** t for t in (1, 2, 3)])


def test_op_from_graph_params_take_the_input_lengths() -> None:
    a, b = pt.vector("a"), pt.vector("b")
    op = pt.op_from_graph([a, b], [a * b + 1.0])
    x = pt.vector("x")
    retyped = with_input_shapes(Graph([x], [op(x, x)]), [(5,)])
    (retyped_op,) = [n.op for n in retyped.nodes if isinstance(n.op, pt.OpFromGraph)]
    assert [p.type.shape for p in retyped_op.inner_graph.inputs] == [(5,), (5,)]
    assert retyped.outputs[0].type.shape == (5,)
    f = function([x], op(x, x), specialize_shapes=True)
    np.testing.assert_array_equal(f(np.arange(5.0)), np.arange(5.0) ** 2 + 1)


def test_numbers_and_lists_are_arguments_as_for_the_unspecialized_function() -> None:
    x, scale = pt.vector("x"), pt.scalar("scale")
    f = function([x, scale], x * scale, specialize_shapes=True)
    np.testing.assert_array_equal(f([1, 2], 3), [3.0, 6.0])
    np.testing.assert_array_equal(f(np.arange(2.0), np.float64(2.0)), [0.0, 2.0])
    assert list(f.specializations) == [((2,), ())]


def test_bad_arguments_fail_as_for_the_unspecialized_function(
    dense: tuple[ShapeSpecializedFunction[Any], CompiledFunction[Any], Graph],
) -> None:
    specialized, plain, _ = dense
    x, a, w = dense_arguments(3, 2, 4)
    before = dict(specialized.specializations)
    bad_calls: list[tuple[Any, ...]] = [
        (x, a),  # count
        (x, a.astype(np.complex128), w),  # dtype
        (x, a, w[:, :1]),  # w's static width
        (x[None], a, w),  # x's rank
    ]
    for arguments in bad_calls:
        with pytest.raises((TypeError, ValueError)) as expected:
            plain(*arguments)
        with pytest.raises(type(expected.value)) as got:
            specialized(*arguments)
        assert str(got.value) == str(expected.value)
    specialized(x, a, w)
    with pytest.raises(TypeError, match="complex128"):  # shapes seen before: its checks
        specialized(x, a.astype(np.complex128), w)
    assert set(specialized.specializations) == {*before, ((3,), (2, 3), (4, 2))}


def test_lengths_that_do_not_fit_together_name_the_argument_shapes(
    dense: tuple[ShapeSpecializedFunction[Any], CompiledFunction[Any], Graph],
) -> None:
    specialized, _, _ = dense
    x, a, w = dense_arguments(3, 2, 4)
    with pytest.raises(ShapeError, match=r"x \(4,\), A \(2, 3\), w \(4, 2\)"):
        specialized(np.ones(4), a, w)
    assert ((4,), (2, 3), (4, 2)) not in specialized.specializations


def test_an_unknown_mode_fails_when_compiling() -> None:
    x = pt.vector("x")
    with pytest.raises(ValueError, match="unknown pipeline 'fastest'"):
        function([x], x + 1, "fastest", specialize_shapes=True)


def test_pickling_keeps_specialize_shapes(
    loop: tuple[ShapeSpecializedFunction[Any], CompiledFunction[Any], Graph],
) -> None:
    specialized, plain, _ = loop
    arguments = loop_arguments(4, 2)
    specialized(*arguments)
    restored = pickle.loads(pickle.dumps(specialized))
    assert isinstance(restored, ShapeSpecializedFunction)
    assert not restored.specializations
    for got, expected in zip(restored(*arguments), plain(*arguments)):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert list(restored.specializations) == [((4, 2), (2,), (2, 2))]
    x = pt.vector("x")
    single = pickle.loads(pickle.dumps(function([x], x * 2, specialize_shapes=True)))
    np.testing.assert_array_equal(single(np.arange(3.0)), [0.0, 2.0, 4.0])


def test_entry_points_are_refused_but_each_specialization_has_its_own() -> None:
    x = pt.vector("x")
    f = function([x], (x * x).sum(), specialize_shapes=True)
    for name in ("numba_function", "cfunc", "low_level_callable"):
        with pytest.raises(TypeError, match=rf"{name}: .* f\.specializations\[shapes\]\.{name}"):
            getattr(f, name)
    f(np.ones(3))
    inner = f.specializations[((3,),)].numba_function
    assert inner(np.arange(3.0)) == 5.0
