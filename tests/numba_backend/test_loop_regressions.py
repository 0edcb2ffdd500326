"""Minimal reproducers of the loop defects of issue 18 and of those the loop fuzzer
(`test_loop_fuzz.py`) found, each the smallest program showing it.

Every test asserts the behaviour PyTensor's and NumPy's semantics give (by hand, or by
`evaluate` of the unoptimized graph where that is right) and is marked
`xfail(strict=True)` while its defect is open: the list is the to-do list of the fixes,
and a fix makes its test pass, which fails the suite until the mark (and the matching
switch in `tests.loop_programs.OPEN_DEFECTS`, named in each reason) is removed.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, evaluate
from numba_backend import function
from rewrite import optimize
from tests.loop_programs import Array


def optimized(inputs: Sequence[Variable], outputs: Sequence[Variable], *values: object) -> list[Array]:
    """`evaluate` of the graph after `optimize(graph, "fast_run")`."""
    graph = optimize(Graph(inputs, outputs), "fast_run")
    return evaluate(list(graph.outputs), dict(zip(graph.inputs, map(np.asarray, values))))


def compiled(inputs: Sequence[Variable], outputs: Sequence[Variable], *values: object) -> list[Array]:
    return function(inputs, outputs)(*values)


# --- issue 18 defect 1: a value that is both a carry and a per-step output --------------------
def test_carry_also_returned_per_step() -> None:
    s, a = pt.vector("s"), pt.scalar("a")
    _, per_step = pt.scan(lambda x, c: (c + x, c + x), sequences=[s], outputs_info=[a, None])
    want = 1.0 + np.cumsum(np.arange(4.0))
    np.testing.assert_allclose(optimized([s, a], [per_step], np.arange(4.0), 1.0)[0], want)
    np.testing.assert_allclose(compiled([s, a], [per_step], np.arange(4.0), 1.0)[0], want)


def test_output_taps_with_an_ignored_tap_compile() -> None:
    h0 = pt.vector("h0")
    ys = pt.scan(lambda older, last: last + 1.0,
                 outputs_info=[{"initial": h0, "taps": [-2, -1]}], n_steps=4)
    np.testing.assert_allclose(compiled([h0], [ys], np.array([0.0, 1.0]))[0], [2.0, 3.0, 4.0, 5.0])


def test_output_taps_with_an_ignored_tap_over_a_sequence() -> None:
    s, h0 = pt.vector("s"), pt.vector("h0")
    ys = pt.scan(lambda x, older, last: last + x, sequences=[s],
                 outputs_info=[{"initial": h0, "taps": [-2, -1]}])
    np.testing.assert_allclose(
        optimized([s, h0], [ys[-1]], np.ones(4), np.array([0.0, 1.0]))[0], 5.0
    )


def test_grad_of_an_accumulating_carry() -> None:
    s, a = pt.vector("s"), pt.scalar("a")
    ys = pt.scan(lambda x, p: x + p, sequences=[s], outputs_info=[a])
    gradient = pt.grad(ys.sum(), s)  # ys[t] = a + s[0] + ... + s[t]
    assert evaluate([gradient], {s: np.arange(4.0), a: np.array(1.0)})[0].tolist() == [4, 3, 2, 1]
    np.testing.assert_allclose(compiled([s, a], [gradient], np.arange(4.0), 1.0)[0], [4, 3, 2, 1])


def test_grad_of_an_accumulating_while_loop() -> None:
    s, c0 = pt.vector("s"), pt.scalar("c0")
    ys = pt.scan(lambda x, c: (c + pt.tanh(x), pt.until(x > 0.625)), sequences=[s],
                 outputs_info=[c0])
    cost = pt.sin(ys[-2:]).sum()
    gradient = pt.grad(cost, s)
    values = (np.array([-1.25, -1.0, 1.5, 0.5]), np.array(1.0))
    want = evaluate([gradient], dict(zip([s, c0], map(np.asarray, values))))[0]
    np.testing.assert_allclose(optimized([s, c0], [gradient], *values)[0], want)


# --- issue 18 defect 2: array carries passing values to each other (compiled) ---------------------
def test_carries_swapping_through_a_view() -> None:
    a0, b0 = pt.tensor("a0", shape=(2,)), pt.tensor("b0", shape=(2,))
    a, b = pt.scan(lambda a, b: (b[::-1] * 2.0, a), outputs_info=[a0, b0], n_steps=9)
    values = (np.array([1.0, 3.0]), np.array([10.0, 1.0]))
    want = evaluate([a[-1], b[-1]], dict(zip([a0, b0], values)))
    got = compiled([a0, b0], [a[-1], b[-1]], *values)
    np.testing.assert_allclose(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1])


def test_carries_swapping_through_a_product() -> None:
    a0, b0, w = pt.vector("a0"), pt.vector("b0"), pt.tensor("w", shape=(1, 1))
    a, b = pt.scan(lambda a, b, w: (w @ b, a), outputs_info=[a0, b0], non_sequences=[w],
                   n_steps=9)
    got = compiled([a0, b0, w], [a[-1], b[-1]], np.array([1.0]), np.array([10.0]),
                   np.array([[2.0]]))
    np.testing.assert_allclose(got[0], [320.0])
    np.testing.assert_allclose(got[1], [16.0])


# --- issue 18 defect 4: sequence taps all on one side of 0 ------------------------------------------
@pytest.mark.parametrize(("taps", "rows"), [([-1], [0, 1, 2, 3]), ([2], [2, 3, 4])])
def test_sequence_taps_on_one_side_of_zero(taps: list[int], rows: list[int]) -> None:
    s = pt.vector("s")
    ys = pt.scan(lambda x: x * 1.0, sequences=[{"input": s, "taps": taps}])
    assert evaluate([ys], {s: np.arange(5.0)})[0].tolist() == rows


# --- issue 18 defect 5: constant n_steps over a longer sequence --------------------------------------
def test_constant_n_steps_over_a_longer_sequence() -> None:
    s = pt.vector("s")
    ys = pt.scan(lambda x: x * 2.0, sequences=[s], n_steps=4)
    np.testing.assert_allclose(compiled([s], [ys], np.arange(6.0))[0], [0.0, 2.0, 4.0, 6.0])


# --- issue 18 defect 6: run-time errors a rewrite turns into values ------------------------------------
def test_sequence_shorter_than_n_steps_ignored_by_the_body() -> None:
    s, n = pt.vector("s"), pt.scalar("n", dtype="int64")
    ys = pt.scan(lambda x, c: c + 1.0, sequences=[s], outputs_info=[pt.constant(0.0)], n_steps=n)
    with pytest.raises(ValueError):
        evaluate([ys], {s: np.arange(3.0), n: np.array(5)})
    with pytest.raises(ValueError):
        compiled([s, n], [ys], np.arange(3.0), 5)


def test_last_row_of_a_zero_step_loop() -> None:
    x0, n = pt.scalar("x0"), pt.scalar("n", dtype="int64")
    ys = pt.scan(lambda c: c + 1.0, outputs_info=[x0], n_steps=n)
    with pytest.raises(IndexError):
        evaluate([ys[-1]], {x0: np.array(1.0), n: np.array(0)})
    with pytest.raises(IndexError):
        optimized([x0, n], [ys[-1]], 1.0, 0)


def test_row_before_the_first_step() -> None:
    x0, n = pt.scalar("x0"), pt.scalar("n", dtype="int64")
    ys = pt.scan(lambda c: c * 2.0, outputs_info=[x0], n_steps=n)
    with pytest.raises(IndexError):
        evaluate([ys[-2]], {x0: np.array(1.0), n: np.array(1)})
    with pytest.raises(IndexError):
        optimized([x0, n], [ys[-2]], 1.0, 1)


# --- issue 18 defect 8: gradients through loops ----------------------------------------------------------
def test_grad_of_a_loop_not_reading_the_variable() -> None:
    a, w = pt.scalar("a"), pt.scalar("w")
    ys = pt.scan(lambda c, w: c * 2.0, outputs_info=[a], non_sequences=[w], n_steps=3)
    with pytest.raises(pt.DisconnectedInputError):
        pt.grad(ys[-1], w)


# --- issue 18 defect 9: vmap of while-loops ----------------------------------------------------------------
def test_vmap_of_a_while_loop() -> None:
    batch = pt.matrix("batch")

    def last(s: Variable) -> Variable:
        sums: Variable = pt.scan(lambda x, c: (c + x, pt.until(x > 0.5)), sequences=[s],
                                 outputs_info=[pt.constant(0.0)])
        return sums[-1]

    finals = pt.vmap(last)(batch)
    assert isinstance(finals, Variable)
    values = np.array([[0.0, 1.0, 2.0, 3.0], [0.25, 0.25, 0.25, 1.0]])
    np.testing.assert_allclose(compiled([batch], [finals], values)[0], np.array([1.0, 1.75]))


def test_vmap_of_a_while_loop_of_unknown_step_count() -> None:
    """scan(...)[-1] of a batched while-loop whose n_steps (the same for every example)
    may be 0: each example's final value, and IndexError after zero steps."""
    batch, n = pt.matrix("batch"), pt.scalar("n", dtype="int64")

    def last(s: Variable) -> Variable:
        sums: Variable = pt.scan(lambda x, c: (c + x, pt.until(x > 0.5)), sequences=[s],
                                 outputs_info=[pt.constant(0.0)], n_steps=n)
        return sums[-1]

    finals = pt.vmap(last)(batch)
    assert isinstance(finals, Variable)
    values = np.array([[0.0, 1.0, 2.0, 3.0], [0.25, 0.25, 0.25, 1.0]])
    np.testing.assert_allclose(compiled([batch, n], [finals], values, 4)[0], [1.0, 1.75])
    np.testing.assert_allclose(compiled([batch, n], [finals], values, 2)[0], [1.0, 0.5])
    with pytest.raises(IndexError):
        evaluate([finals], {batch: values, n: np.array(0)})
    with pytest.raises(IndexError):
        compiled([batch, n], [finals], values, 0)


def test_vmap_of_a_while_loop_over_an_unbatched_trace() -> None:
    """Found by the loop fuzzer: a while-loop reading, as its sequence, a trace that
    does not depend on the batched input runs the same steps for every example; the
    vectorizer took the trace as batched (another output of its loop is) and refused."""
    c = pt.vector("c")

    def program(c1: Variable) -> list[Variable]:
        ys0, ys1 = pt.scan(lambda x, a, b: (pt.tanh(x), pt.tanh(x) + b),
                           sequences=[pt.constant(np.array([0.0, 0.5]))],
                           outputs_info=[pt.constant(0.0), c1])
        us0 = pt.scan(lambda x, a: (pt.tanh(x), pt.until(x > 0.125)), sequences=[ys0],
                      outputs_info=[pt.constant(0.0)])
        return [us0[-1], ys1[-1]]

    outputs = pt.vmap(program)(c)
    assert isinstance(outputs, list)
    got = compiled([c], outputs, np.array([0.0, 1.0]))
    np.testing.assert_allclose(got[0], np.full(2, np.tanh(np.tanh(0.5))))
    np.testing.assert_allclose(got[1], np.tanh(0.5) + np.array([0.0, 1.0]))


def test_vmap_of_a_while_loop_over_rows_no_batched_value_wrote() -> None:
    """Found by the loop fuzzer: the rows a loop's steps write (`scan(...)`) do not
    depend on a batched initial value, so a while-loop over them is not ragged."""
    c = pt.vector("c")

    def program(c0: Variable) -> Variable:
        rows = pt.scan(lambda x, a: pt.tanh(x), sequences=[pt.constant(np.array([0.5, 0.0]))],
                       outputs_info=[c0])
        trace: Variable = pt.scan(lambda x, a: (pt.tanh(x), pt.until(x > 0.125)),
                                  sequences=[rows], outputs_info=[pt.constant(0.0)])
        return trace

    traces = pt.vmap(program)(c)
    assert isinstance(traces, Variable)
    want = np.tile([np.tanh(np.tanh(0.5))], (2, 1))
    np.testing.assert_allclose(compiled([c], [traces], np.array([0.0, 1.0]))[0], want)


# --- new, found by the loop fuzzer -----------------------------------------------------------------------------
def test_static_carry_of_an_unknown_step() -> None:
    c0, w0 = pt.tensor("c0", shape=(3,)), pt.vector("w0")
    ys = pt.scan(lambda c, w: pt.tanh(w), outputs_info=[c0], non_sequences=[w0], n_steps=2)
    got = compiled([c0, w0], [ys[-1]], np.zeros(3), np.arange(3.0))
    np.testing.assert_allclose(got[0], np.tanh(np.arange(3.0)))


def test_vmap_of_a_zero_step_loop() -> None:
    batch = pt.matrix("batch")
    mapped = pt.vmap(lambda s: pt.map(lambda x: pt.tanh(x), sequences=[s]))(batch)
    assert isinstance(mapped, Variable)
    assert evaluate([mapped], {batch: np.zeros((2, 0))})[0].shape == (2, 0)
    assert compiled([batch], [mapped], np.zeros((2, 0)))[0].shape == (2, 0)
    values = np.arange(6.0).reshape(2, 3) / 4
    np.testing.assert_allclose(compiled([batch], [mapped], values)[0], np.tanh(values))


def test_fold_over_a_static_empty_sequence() -> None:
    s, c = pt.tensor("s", shape=(0,)), pt.scalar("c")
    _, total = pt.foldl(lambda x, c: (x * 2.0, c + x), sequences=[s], outputs_info=[None, c])
    assert evaluate([total], {s: np.zeros(0), c: np.array(1.5)})[0] == 1.5
    assert compiled([s, c], [total], np.zeros(0), 1.5)[0] == 1.5
    last = pt.foldl(lambda x, c: (x * 2.0, c + x), sequences=[s], outputs_info=[None, c])[0]
    with pytest.raises(IndexError):
        evaluate([last], {s: np.zeros(0), c: np.array(1.5)})
    with pytest.raises(IndexError):
        compiled([s, c], [last], np.zeros(0), 1.5)


def test_negative_n_steps_of_a_map() -> None:
    s, n = pt.vector("s"), pt.scalar("n", dtype="int64")
    ys = pt.scan(lambda x: pt.sin(x), sequences=[s], n_steps=n)
    with pytest.raises(ValueError):
        evaluate([ys], {s: np.zeros(3), n: np.array(-1)})
    with pytest.raises(ValueError):
        optimized([s, n], [ys], np.zeros(3), -1)


def test_parallel_per_step_rows_sliced() -> None:
    s = pt.matrix("s")
    ys = pt.map(lambda x: pt.tanh(x), sequences=[s])
    values = np.arange(12.0).reshape(6, 2) / 10
    got = function([s], ys[:, -2:], parallel=True)(values)
    np.testing.assert_allclose(got, np.tanh(values))


def test_grad_of_a_zero_step_loop() -> None:
    n, z = pt.scalar("n", dtype="int64"), pt.vector("z")
    ys = pt.scan(lambda z: z * z, outputs_info=[None], non_sequences=[z], n_steps=n)
    gradient = pt.grad(ys.sum(), z)
    assert evaluate([gradient], {n: np.array(0), z: np.ones(3)})[0].tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(optimized([n, z], [gradient], 0, np.ones(3))[0], np.zeros(3))
    np.testing.assert_allclose(compiled([n, z], [gradient], 0, np.ones(3))[0], np.zeros(3))
    np.testing.assert_allclose(compiled([n, z], [gradient], 3, np.ones(3))[0], np.full(3, 6.0))


def test_hessian_of_a_map_compiles() -> None:
    s, w = pt.tensor("s", shape=(5, 2)), pt.matrix("w")
    ys = pt.map(lambda x, w: w @ x, sequences=[s], non_sequences=[w])
    gradient = pt.grad((ys * ys).sum(), s)
    hessian_sum = pt.grad(gradient.sum(), s)  # d/ds of sum(2 (w^T w) s_t): 2 w^T w 1, per row
    values = (np.arange(10.0).reshape(5, 2) / 10, np.array([[1.0, 2.0], [0.5, -1.0]]))
    want = np.tile(2 * values[1].T @ values[1] @ np.ones(2), (5, 1))
    assert np.allclose(evaluate([hessian_sum], dict(zip([s, w], values)))[0], want)
    np.testing.assert_allclose(compiled([s, w], [hessian_sum], *values)[0], want)


def test_accumulation_read_by_another_carry() -> None:
    s, a, b = pt.vector("s"), pt.scalar("a"), pt.scalar("b")
    _, squashed = pt.foldl(lambda x, acc, other: (acc + x, pt.tanh(acc + x)), sequences=[s],
                           outputs_info=[a, b])
    want = np.tanh(1.0 + np.arange(4.0).sum())
    assert np.isclose(evaluate([squashed], {s: np.arange(4.0), a: np.array(1.0),
                                            b: np.array(0.0)})[0], want)
    np.testing.assert_allclose(optimized([s, a, b], [squashed], np.arange(4.0), 1.0, 0.0)[0], want)


def test_gradient_of_a_zero_step_map_over_taps() -> None:
    """Found by the long fuzz profile: taps [-3, -1, 3] over 6 rows leave zero steps; the
    optimized gradient met the empty trace's rows (length 0) on the sequence's
    (length 1) and raised where evaluate gives zeros. The rows now have the sequence's
    length (`ops.loop_rows`)."""
    s = pt.tensor("s", shape=(None, None, None))
    ys = pt.map(lambda a, b, c: c[0], sequences=[{"input": s, "taps": [-3, -1, 3]}])
    cost = pt.sin(ys[:1]).sum()
    (gradient,) = pt.grad(cost, [s])
    value = np.arange(6.0).reshape(6, 1, 1)
    want = evaluate([gradient], {s: value})[0]
    np.testing.assert_array_equal(want, np.zeros((6, 1, 1)))
    np.testing.assert_allclose(optimized([s], [gradient], value)[0], want)
    np.testing.assert_allclose(compiled([s], [gradient], value)[0], want)
    assert evaluate([ys], {s: value})[0].shape == (0, 1)
    assert compiled([s], [ys], value)[0].shape == (0, 1)


def test_hessian_of_a_zero_step_loop() -> None:
    h0, d_h0 = pt.matrix("h0"), pt.matrix("d_h0")
    ys = pt.scan(lambda a, b: pt.tanh(pt.outer(a, a)[:, ::-1].sum(axis=0)),
                 outputs_info=[{"initial": h0, "taps": [-3, -1]}],
                 n_steps=pt.constant(0) * 1, go_backwards=True)
    cost = pt.sin(ys[::-1]).sum()
    (gradient,) = pt.grad(cost, [h0], disconnected_inputs="ignore")
    hvp = pt.grad((gradient * d_h0).sum(), h0, disconnected_inputs="ignore")
    values = (np.array([[-1.5], [2.0], [-0.25]]), np.zeros((3, 1)))
    want = evaluate([hvp], dict(zip([h0, d_h0], values)))[0]
    np.testing.assert_allclose(optimized([h0, d_h0], [hvp], *values)[0], want)
    np.testing.assert_allclose(compiled([h0, d_h0], [hvp], *values)[0], want)


def test_rows_after_zero_steps_have_the_lengths_of_the_inputs_they_come_from() -> None:
    """After zero steps a per-step output's rows have the length the step would give
    where it is an input's length (of a sequence row, a carry, a non-sequence), and 0
    where the step computes it from values (an arange of a carry's value; an arange of
    an outer `n` is a non-sequence the loop passes through, of its length)."""
    s, c, w = pt.matrix("s"), pt.vector("c"), pt.matrix("w")
    n = pt.scalar("n", dtype="int64")
    outputs = pt.scan(
        lambda row, carry, w: (carry, row * 2.0, pt.outer(carry, row), w.T, pt.arange(n),
                               pt.arange(pt.cast(carry[0], "int64"))),
        sequences=[s], outputs_info=[c, None, None, None, None, None], non_sequences=[w],
    )[1:]
    values = (np.zeros((0, 3)), np.ones(2), np.ones((4, 5)), np.array(2))
    want = [(0, 3), (0, 2, 3), (0, 5, 4), (0, 2), (0, 0)]
    assert [v.shape for v in evaluate(outputs, dict(zip([s, c, w, n], values)))] == want
    assert [v.shape for v in compiled([s, c, w, n], outputs, *values)] == want


def test_grad_through_a_fold_over_a_static_empty_sequence() -> None:
    """Found by the loop fuzzer: the gradient of the last per-step row of a fold that
    runs no step writes at index -1 of an empty trace; optimizing must leave that
    IndexError to the run (the index update's rule folded it and failed to build)."""
    s, c = pt.tensor("s", shape=(0, 3)), pt.scalar("c")
    _, last = pt.foldl(lambda x, c: (c, pt.tanh(x)), sequences=[s], outputs_info=[c, None])
    cost = pt.sin(last).sum() + c
    (gradient,) = pt.grad(cost, [s])
    with pytest.raises(IndexError):
        evaluate([gradient], {s: np.zeros((0, 3)), c: np.array(0.0)})
    with pytest.raises(IndexError):
        optimized([s, c], [gradient], np.zeros((0, 3)), 0.0)



def test_hessian_of_a_zero_step_loop_contracting_an_unknown_length_with_a_static_one() -> None:
    """Found by the long fuzz profile: `row @ y` with a row of unknown lengths and a
    carry of static length 1 does not type with a probe length on the contracted axis;
    the row's other (unknown) length must still be traced, or the optimized Hessian
    meets rows of length 0 beside rows of length 1 and raises where evaluate gives
    values."""
    s0, s1 = pt.tensor("s0", shape=(None, None, None)), pt.tensor("s1", shape=(5,))
    c0, c2 = pt.tensor("c0", shape=(1,)), pt.tensor("c2", shape=(1, None))
    w0, w2 = pt.tensor("w0", shape=(1, None)), pt.tensor("w2", shape=(None,))

    def step(s0_tm1: Variable, s0_tp3: Variable, s1_t0: Variable, y0: Variable,
             ns0: Variable) -> Variable:
        return pt.tanh((ns0[0] * ns0[0] * 0.5) * (s1_t0 * (s0_tm1 @ y0)))

    ys0 = pt.scan(step, sequences=[{"input": s0, "taps": [-1, 3]}, s1], outputs_info=[c0],
                  non_sequences=[w0], n_steps=pt.constant(0) * 1)
    us0 = pt.reduce(lambda y, c, w: c + pt.expand_dims(w, 0), sequences=[ys0],
                    outputs_info=[c2], non_sequences=[w2], go_backwards=True)
    cost = pt.sin(ys0).sum() + pt.sin(ys0[:2]).sum() + pt.sin(us0).sum()
    wrt = [s0, c0, w0, c2, w2]
    directions = [pt.tensor(f"d{k}", shape=v.type.shape) for k, v in enumerate(wrt)]
    gradients = pt.grad(cost, wrt, disconnected_inputs="ignore")
    along = (gradients[0] * directions[0]).sum()
    for gradient, direction in zip(gradients[1:], directions[1:]):
        along = along + (gradient * direction).sum()
    hvp = pt.grad(along, wrt, disconnected_inputs="ignore")
    rng = np.random.default_rng(0)
    values = [rng.normal(size=(8, 1, 1)), np.array([-0.25]), np.array([[0.25]]),
              np.array([[1.5]]), np.array([-2.0])]
    values += [rng.normal(size=np.shape(v)) for v in values]
    inputs = [*wrt, s1, *directions]
    values.insert(5, np.linspace(-1.0, 1.0, 5))
    want = evaluate(hvp, dict(zip(inputs, values)))
    for got, expected in zip(optimized(inputs, hvp, *values), want):
        np.testing.assert_allclose(got, expected)
    for got, expected in zip(compiled(inputs, hvp, *values), want):
        np.testing.assert_allclose(got, expected)


def test_accumulating_outside_keeps_the_check_of_an_unread_sequence() -> None:
    """Found by the compiled long fuzz profile: a carry summing outer products of one
    sequence's rows became a product after the loop, and the loop, read no more,
    vanished with its check that the other (unread) sequence has n_steps rows: a value
    where the loop raises."""
    s0, s1 = pt.vector("s0"), pt.tensor("s1", shape=(3, 1))
    ys = pt.scan(lambda a, b, y: y + pt.outer(b, b), sequences=[s0, s1],
                 outputs_info=[np.zeros((1, 1))], n_steps=s1.shape[0], go_backwards=True)
    values = (np.zeros(1), np.ones((3, 1)))
    with pytest.raises(ValueError, match="fewer than n_steps"):
        evaluate([ys[-1]], dict(zip([s0, s1], values)))
    with pytest.raises(ValueError, match="fewer than n_steps"):
        optimized([s0, s1], [ys[-1]], *values)
    with pytest.raises(ValueError):
        compiled([s0, s1], [ys[-1]], *values)
    longer = (np.zeros(3), np.ones((3, 1)))
    np.testing.assert_allclose(compiled([s0, s1], [ys[-1]], *longer)[0], [[3.0]])
