"""PyTensor's scan contract, first derivatives (issue 18): gradients through loops of
every form against central finite differences or PyTensor's exact numbers, the
connectivity of a loop's outputs to its inputs, truncated gradients and gradients of
while-loops. Each test mirrors the PyTensor test its docstring names
(`tests/scan/test_basic.py` unless another file is named); gradients go through the
reference evaluator on the unoptimized graph and the compiled function (`fast_run`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Variable
from tests.numba_backend.scan_contract import assert_gradients, assert_values, assert_values_at

RNG = np.random.default_rng(1819)
ACCUMULATE_OUTSIDE = (
    "new: the accumulate_outside rewrite removes a summing carry that other body values "
    "still read (MissingInputError when compiling)")


def projected(outputs: Sequence[Variable], shapes: Sequence[tuple[int, ...]]) -> Variable:
    """PyTensor's scan_project_sum: the outputs summed against fixed random factors in
    (0.1, 0.9), so that every entry of every output reaches the cost."""
    factors = np.random.default_rng(123)
    total: Variable = pt.as_tensor(0.0)
    for output, shape in zip(outputs, shapes):
        total = total + (output * pt.constant(factors.uniform(0.1, 0.9, size=shape))).sum()
    return total


def _rnn_step(u_t: Variable, x_tm1: Variable, w_in: Variable, w: Variable) -> Variable:
    return u_t * w_in + x_tm1 * w


# -- gradients against finite differences --------------------------------------------------
def test_grad_one_output() -> None:
    """TestScan.test_grad_one_output: the scalar RNN's gradient with respect to the
    sequence, the initial value and both weights."""
    u, x0, w_in, w = pt.vector("u"), pt.scalar("x0"), pt.scalar("w_in"), pt.scalar("w")
    out = pt.scan(_rnn_step, u, x0, [w_in, w])
    cost = projected([out], [(10,)])
    values = [RNG.uniform(-0.5, 0.5, size=10), RNG.uniform(), RNG.uniform(), RNG.uniform()]
    assert_gradients([u, x0, w_in, w], cost, pt.grad(cost, [u, x0, w_in, w]), values)


def _multiple_outs_inputs() -> tuple[list[Variable], list[Any]]:
    names = ["w_in2", "w", "w_out", "w_in1", "u1", "u2", "x0", "y0"]
    variables: list[Variable] = [pt.vector(names[0]), pt.matrix(names[1]), pt.vector(names[2]),
                 pt.matrix(names[3]), pt.matrix(names[4]), pt.vector(names[5]),
                 pt.vector(names[6]), pt.scalar(names[7])]
    values: list[Any] = [RNG.uniform(-0.1, 0.1, size=2), RNG.uniform(-0.1, 0.1, size=(2, 2)),
              RNG.uniform(-0.1, 0.1, size=2), RNG.uniform(-0.1, 0.1, size=(2, 2)),
              RNG.uniform(-0.1, 0.1, size=(7, 2)), RNG.uniform(-0.1, 0.1, size=7),
              RNG.uniform(-0.1, 0.1, size=2), RNG.uniform()]
    return variables, values


def test_grad_multiple_outs() -> None:
    """TestScan.test_grad_multiple_outs: two sequences, a vector and a scalar carry (the
    scalar's initial value reaches no output: a zero gradient), closures."""
    variables, values = _multiple_outs_inputs()
    w_in2, w, w_out, w_in1, u1, u2, x0, y0 = variables

    def step(u1_t: Variable, u2_t: Variable, x_tm1: Variable, y_tm1: Variable,
             w_in1: Variable) -> list[Variable]:
        return [pt.dot(u1_t, w_in1) + u2_t * w_in2 + pt.dot(x_tm1, w), pt.dot(x_tm1, w_out)]

    x, y = pt.scan(step, [u1, u2], [x0, y0], w_in1)
    cost = projected([x, y], [(7, 2), (7,)])
    params = [u1, u2, x0, y0, w_in1]
    gradients = pt.grad(cost, params, disconnected_inputs="ignore")
    assert_gradients(variables, cost, gradients, values, wrt=[4, 5, 6, 7, 3])


@pytest.mark.parametrize("go_backwards", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_grad_multiple_outs_taps(go_backwards: bool) -> None:
    """TestScan.test_grad_multiple_outs_taps and test_grad_multiple_outs_taps_backwards:
    sequence taps [-1, 0, 1], output taps [-1, -3] given in that order, a per-step
    output; forwards and backwards."""
    w_in2, w, w_out = pt.vector("w_in2"), pt.matrix("w"), pt.vector("w_out")
    w_in1, u1, u2, x0, y0 = (pt.matrix("w_in1"), pt.matrix("u1"), pt.matrix("u2"),
                             pt.vector("x0"), pt.vector("y0"))

    def step(u1_t: Variable, u2_tm1: Variable, u2_t: Variable, u2_tp1: Variable,
             x_tm1: Variable, y_tm1: Variable, y_tm3: Variable, w_in1: Variable) -> list[Variable]:
        return [pt.dot(u1_t, w_in1) + (u2_t + u2_tm1 * u2_tp1) * w_in2 + pt.dot(x_tm1, w),
                (y_tm1 + y_tm3) * pt.dot(x_tm1, w_out), pt.dot(u1_t, w_in1)]

    x, y, z = pt.scan(step, [u1, {"input": u2, "taps": [-1, 0, 1]}],
                      [x0, {"initial": y0, "taps": [-1, -3]}, None], w_in1,
                      go_backwards=go_backwards)
    cost = projected([x, y, z], [(5, 2), (5,), (5, 2)])
    variables = [w_in2, w, w_out, w_in1, u1, u2, x0, y0]
    values = [RNG.uniform(-0.2, 0.2, size=2), RNG.uniform(-0.2, 0.2, size=(2, 2)),
              RNG.uniform(-0.2, 0.2, size=2), RNG.uniform(-0.2, 0.2, size=(2, 2)),
              RNG.uniform(-0.2, 0.2, size=(5, 2)), RNG.uniform(-0.2, 0.2, size=(7, 2)),
              RNG.uniform(-0.2, 0.2, size=2), RNG.uniform(size=3)]
    gradients = pt.grad(cost, [u1, u2, x0, y0, w_in1])
    assert_gradients(variables, cost, gradients, values, wrt=[4, 5, 6, 7, 3])


def test_grad_multiple_outs_some_uncomputable() -> None:
    """TestScan.test_grad_multiple_outs_some_uncomputable: an int32 sequence cast into
    the step, an integer per-step output and a uniform draw whose generator state is a
    carry (PyTensor's inner RandomStream); gradients of the float inputs."""
    w_in, u, u2 = pt.matrix("w_in"), pt.matrix("u"), pt.ivector("u2")
    x0, s0 = pt.vector("x0"), pt.random.state("s0")

    def step(u_t: Variable, u2_t: Variable, x_tm1: Variable, s: Variable,
             w_in: Variable) -> tuple[Variable, ...]:
        s, noise = pt.random.uniform(s, -1.1, 1.1)
        return pt.cast(u2_t, "float64") + pt.dot(u_t, w_in) + x_tm1 + noise, s, 2 * u2_t

    x, _, doubled = pt.scan(step, [u, u2], [x0, s0, None], w_in)
    assert doubled.dtype == "int32"
    cost = projected([x], [(5, 2)]) + pt.cast(doubled.sum(), "float64")
    values = [RNG.uniform(-3, 3, size=(2, 2)), RNG.uniform(-3, 3, size=(5, 2)),
              np.array([1, 3, 4, 6, 8], dtype="int32"), RNG.uniform(-3, 3, size=2),
              pt.random.seed(123)]
    gradients = pt.grad(cost, [u, x0, w_in])
    assert_gradients([w_in, u, u2, x0, s0], cost, gradients, values, wrt=[1, 3, 0])


def test_grad_multiple_taps_state() -> None:
    """TestScan.test_grad_multiple_taps_state: output taps [-4, -1] of a 3-d initial
    value given 5 rows (only the first 4 are read, so the last row's gradient is 0)."""
    xinit, w = pt.tensor3("xinit"), pt.matrix("w")
    xseq = pt.scan(lambda xdl, xprev, w: w + xprev, n_steps=10,
                   outputs_info=[{"initial": xinit, "taps": [-4, -1]}], non_sequences=w)
    loss = (xseq[-1] ** 2).sum()
    v_x = RNG.uniform(1.0, 3.0, size=(5, 2, 2)) * RNG.choice([-1, 1], size=(5, 2, 2))
    v_w = RNG.uniform(1.0, 3.0, size=(2, 2)) * RNG.choice([-1, 1], size=(2, 2))
    gx, gw = pt.grad(loss, [xinit, w])
    assert_gradients([xinit, w], loss, [gx, gw], [v_x, v_w], rtol=1e-6, atol=1e-5)


def test_grad_linear_recurrence_weights() -> None:
    """TestScan.test_grad_multiple_outs_some_truncate, reduced: x_t = u_t @ W + x_{t-1}
    (no noise, no truncation); the gradient of sum(x) with respect to W."""
    u, x0, w = pt.matrix("u"), pt.vector("x0"), pt.matrix("w")
    x = pt.scan(lambda u_t, x_tm1, w: pt.dot(u_t, w) + x_tm1, u, [x0], w)
    cost = x.sum()
    values = [RNG.normal(size=(4, 2)), RNG.normal(size=2), RNG.normal(size=(2, 2))]
    assert_gradients([u, x0, w], cost, [pt.grad(cost, w)], values, wrt=[2])


def test_carry_of_static_length_one_updated_by_rows() -> None:
    """test_inconsistent_broadcast_error with consistent values: a carry of static shape
    (1,) updated by rows of unknown length that are 1 long at run time; the gradient
    with respect to the rows."""
    x, h0 = pt.matrix("x"), pt.vector("h0", shape=(1,))
    y = pt.scan(lambda r, p: r + p, sequences=x, outputs_info=[h0])
    cost = (y * y).sum()
    values = [RNG.normal(size=(3, 1)), RNG.normal(size=1)]
    assert_gradients([x, h0], cost, pt.grad(cost, [x, h0]), values)


def test_connection_pattern_multiple_mitmot() -> None:
    """TestScan.test_connection_pattern_multiple_mitmot: taps [-2, -1] of a matrix
    initial value and a sequence; gradients of both."""
    x, seq = pt.matrix("x"), pt.vector("seq")
    out = pt.scan(lambda s, old, current: old * 2 + current + s, sequences=seq,
                  outputs_info={"initial": x, "taps": [-2, -1]})
    cost = out.sum()
    values = [RNG.normal(size=(2, 3)), RNG.normal(size=4)]
    assert_gradients([x, seq], cost, pt.grad(cost, [x, seq]), values)


def test_grad_duplicate_outputs_connection_pattern() -> None:
    """TestScan.test_grad_duplicate_outputs_connection_pattern: six outputs of one
    value (two per-step, two carries, two with taps [-2, -1]); the first output's
    gradient with respect to the second carry's initial value."""
    inits = [pt.vector("i0"), pt.vector("i1"), pt.matrix("i2"), pt.matrix("i3")]

    def step(*taps: Variable) -> tuple[Variable, ...]:
        total = taps[0] + taps[1] + taps[2] + taps[3] + taps[4] + taps[5]
        return (total,) * 6

    outs = pt.scan(step, outputs_info=[None, None, inits[0], inits[1],
                                       {"initial": inits[2], "taps": [-2, -1]},
                                       {"initial": inits[3], "taps": [-2, -1]}], n_steps=10)
    cost = outs[0].sum()
    values = [RNG.uniform(-0.1, 0.1, size=2), RNG.uniform(-0.1, 0.1, size=2),
              RNG.uniform(-0.1, 0.1, size=(2, 2)), RNG.uniform(-0.1, 0.1, size=(2, 2))]
    assert_gradients(inits, cost, [pt.grad(cost, inits[1])], values, wrt=[1], rtol=1e-6)


def test_default_value_broadcasted() -> None:
    """TestExamples.test_default_value_broadcasted: a carry of shape (1, 4) from
    alloc, each step reshaping its row to (1, 2); the gradient of the mean with
    respect to the closed-over weights."""
    x, w_x = pt.matrix("X"), pt.matrix("w_x")

    def active(row: Variable, pre_h: Variable) -> Variable:
        return pt.dot(pt.reshape(row, (1, 2)), w_x)

    value = pt.scan(active, sequences=x, outputs_info=[pt.alloc(0.0, 1, 4)])
    cost = pt.mean(value)
    values = [RNG.random((10, 2)), RNG.random((2, 4)) * 0.1]
    assert_gradients([x, w_x], cost, [pt.grad(cost, w_x)], values, wrt=[1])


def test_infer_shape_remove_stuff() -> None:
    """TestExamples.test_infer_shape_remove_stuff: two per-step outputs with uniform
    noise (the state a carry); the gradient of the first's mean over [1, 2, 3] is 2/3
    for every entry."""
    x, s0 = pt.vector("x"), pt.random.state("s0")

    def step(m: Variable, s: Variable) -> tuple[Variable, ...]:
        s, a = pt.random.uniform(s, -1.1, 1.1)
        s, b = pt.random.uniform(s, size=(3,))
        return 2 * m + a, m + b, s

    o1, _, _ = pt.scan(step, sequences=x, outputs_info=[None, None, s0])
    gradient = pt.grad(o1.mean(), x)
    assert_values([x, s0], [gradient], [np.array([1.0, 2.0, 3.0]), pt.random.seed(0)],
                  [np.full(3, 2.0 / 3)])


def test_grad_multiple_outs_some_disconnected() -> None:
    """TestExamples.test_grad_multiple_outs_some_disconnected and _2: an RNN whose state
    has taps [-2, -1] (the step reads only tap -2) and a per-step output, trained on a
    loss of means and standard deviations; gradients of all parameters."""
    w_ih, w_hh, b_h = pt.matrix("w_ih"), pt.matrix("w_hh"), pt.vector("b_h")
    w_ho, b_o, h0, x, t = (pt.matrix("w_ho"), pt.vector("b_o"), pt.matrix("h0"),
                           pt.matrix("x"), pt.matrix("t"))

    def one_step(x_t: Variable, h_tm2: Variable, h_tm1: Variable, w_ih: Variable,
                 w_hh: Variable, b_h: Variable, w_ho: Variable, b_o: Variable) -> list[Variable]:
        h_t = pt.tanh(pt.dot(x_t, w_ih) + pt.dot(h_tm2, w_hh) + b_h)
        return [h_t, pt.dot(h_t, w_ho) + b_o]

    _, y = pt.scan(one_step, sequences={"input": x},
                   outputs_info=[{"initial": h0, "taps": [-2, -1]}, None],
                   non_sequences=[w_ih, w_hh, b_h, w_ho, b_o])
    cost = 0.5 * ((y - t) ** 2.0).mean() + 0.5 * (pt.std(y) - pt.std(t)) ** 2.0
    params = [w_ih, w_hh, b_h, w_ho, b_o, h0]
    series = np.sin(np.arange(0.0, 10.49, 0.21)).reshape(-1, 1)[:12]
    values = [RNG.uniform(-1, 1, size=(1, 3)), RNG.uniform(-1, 1, size=(3, 3)),
              RNG.uniform(-0.01, 0.01, size=3), RNG.uniform(-1, 1, size=(3, 1)),
              RNG.uniform(-0.01, 0.01, size=1), RNG.uniform(-1, 1, size=(2, 3)),
              series[:-1], np.roll(series, -1)[:-1]]
    assert_gradients([*params, x, t], cost, pt.grad(cost, params), values, wrt=list(range(6)))


def test_grad_dtype_change() -> None:
    """TestScan.test_grad_dtype_change: float32 carries beside an int32 carry that a
    switch and a cast compute; gradients stay float32 and match finite differences."""
    x, y, c = pt.scalar("x", dtype="float32"), pt.scalar("y", dtype="float32"), pt.iscalar("c")

    def step(cond: Variable, x: Variable, y: Variable) -> tuple[Variable, ...]:
        new_cond = pt.cast(pt.switch(cond, x, y), "int32")
        new_x = pt.switch(cond, pt.sigmoid(y * x), x)
        new_y = pt.switch(cond, y, pt.sigmoid(x))
        return new_cond, new_x, new_y

    values = pt.scan(step, outputs_info=[c, x, y], n_steps=10)
    cost = values[1].sum() + values[2].sum()
    gx, gy = pt.grad(cost, [x, y])
    assert gx.dtype == "float32" and gy.dtype == "float32"
    for start in (0, 1):
        arguments = [np.float32(0.7), np.float32(0.5), np.int32(start)]
        assert_gradients([x, y, c], cost, [gx, gy], arguments, wrt=[0, 1], eps=1e-2,
                         rtol=2e-2, atol=2e-3)


# -- exact gradients --------------------------------------------------------------------------
def test_only_nonseq_inputs_gradient() -> None:
    """TestScan.test_only_nonseq_inputs: a non-sequence stacked twice has gradient 2."""
    inp = pt.matrix("inp")
    out = pt.scan(lambda x: x, non_sequences=[inp], n_steps=2)
    assert_values([inp], [pt.grad(out.sum(), inp)], [np.array([[1.0, 2.0], [3.0, 4.0]])],
                  [np.full((2, 2), 2.0)])


def test_grad_wrt_shared() -> None:
    """TestScan.test_grad_wrt_shared: the gradient with respect to a closed-over scalar
    is the sum of the sequence."""
    x1, x2 = pt.scalar("x1"), pt.vector("x2")
    y = pt.scan(lambda v: v * x1, sequences=x2)
    assert_values([x1, x2], [pt.grad(y.sum(), x1)], [3.0, np.array([2.0, 3.0])], [5.0])


def test_grad_duplicate_outputs() -> None:
    """TestScan.test_grad_duplicate_outputs: one value returned per step and fed back
    through tap -3; PyTensor's exact gradients for the sequence, the initial value and
    the non-sequence."""
    seq, out_init, non_seq = pt.matrix("seq"), pt.matrix("out_init"), pt.vector("non_seq")
    outs = pt.scan(lambda a, b, c: (a + b + c, a + b + c), sequences=seq,
                   outputs_info=[None, {"initial": out_init, "taps": [-3]}], non_sequences=non_seq)
    g0 = pt.grad(outs[0].sum(), [seq, out_init, non_seq])
    g1 = pt.grad(outs[1].sum(), [seq, out_init, non_seq])
    g_seq = np.repeat(np.array([4, 3, 3, 3, 2, 2, 2, 1, 1, 1], dtype="float64")[:, None], 3, axis=1)
    expected = [g_seq, g_seq[:3], np.full(3, 22.0)] * 2
    values = [RNG.random((10, 3)), RNG.random((3, 3)), RNG.random(3)]
    assert_values([seq, out_init, non_seq], [*g0, *g1], values, expected)


def test_grad_multiple_seqs_different_nsteps() -> None:
    """TestScan.test_grad_multiple_seqs_different_nsteps: sequences of 4 and 1000 rows
    run 4 steps; d/dx of 1 + 2x - 3x^2 + 4x^3 at 2 is 38."""
    c, x = pt.vector("c"), pt.scalar("x")
    components = pt.scan(lambda coeff, power, free: coeff * (free**power), outputs_info=None,
                         sequences=[c, pt.arange(1000)], non_sequences=x)
    assert_values([c, x], [pt.grad(components.sum(), x)], [np.array([1.0, 2.0, -3.0, 4.0]), 2.0],
                  [38.0])


def test_grad_bug_disconnected_input() -> None:
    """TestExamples.test_grad_bug_disconnected_input: rows picked by an int32 sequence
    of indices; the gradient counts the picks."""
    w, v = pt.matrix("w"), pt.ivector("v")
    y = pt.scan(lambda i, w: w[i], sequences=v, outputs_info=None, non_sequences=w)
    assert_values([w, v], [pt.grad(y.sum(), w)], [np.zeros((3, 3)), np.array([1, 2], dtype="int32")],
                  [np.array([[0.0, 0, 0], [1, 1, 1], [1, 1, 1]])])


def test_grad_find_input() -> None:
    """TestExamples.test_grad_find_input: every step returns the closed-over float32 w,
    so the last value's gradient with respect to w is 1."""
    w, init = pt.scalar("w", dtype="float32"), pt.scalar("init", dtype="float32")
    out = pt.scan(lambda prev: w, outputs_info=init, n_steps=2)
    assert_values([w, init], [pt.grad(out[-1], w)], [np.float32(0.0), np.float32(1.0)],
                  [np.float32(1.0)])


def test_grad_numeric_shared() -> None:
    """TestScan.test_grad_numeric_shared: a float32 state incremented 10 times has
    gradient 1 with respect to its initial value."""
    state = pt.scalar("state", dtype="float32")
    final = pt.reduce(lambda s: s + np.float32(1.0), None, state, n_steps=10)
    assert_values([state], [final, pt.grad(final, state)], [np.float32(1.0)],
                  [np.float32(11.0), np.float32(1.0)])


def test_views_reduce_foldl_foldr_gradients() -> None:
    """test_views.py::test_reduce_memory_consumption, test_foldl_memory_consumption,
    test_foldr_memory_consumption: a sum by reduce, foldl or foldr has gradient 1."""
    x = pt.vector("x")
    outs = [wrapper(lambda v, acc: acc + v, x, pt.constant(0.0))
            for wrapper in (pt.reduce, pt.foldl, pt.foldr)]
    assert_values([x], [pt.grad(out, x) for out in outs], [RNG.uniform(size=10)], [np.ones(10)] * 3)


def test_connection_pattern() -> None:
    """TestScan.test_connection_pattern: outputs with taps [-2, -1] that copy their
    tap -1; the last value of the first is the second row of its initial value."""
    a0, b0 = pt.vector("a0"), pt.vector("b0")
    a, _ = pt.scan(lambda a_m2, a_m1, b_m2, b_m1: (a_m1, b_m1),
                   outputs_info=[{"initial": a0, "taps": [-2, -1]},
                                 {"initial": b0, "taps": [-2, -1]}], n_steps=2)
    assert_values([a0, b0], [a[-1], pt.grad(a[-1], a0)], [np.arange(2.0), np.arange(2.0)],
                  [1.0, np.array([0.0, 1.0])])


def test_power_gradient() -> None:
    """test_printing.py::test_debugprint_mitmot: d/dA of sum(A ** k), by a loop with a
    symbolic k, is k A ** (k - 1)."""
    k, a = pt.iscalar("k"), pt.dvector("A")
    result = pt.scan(lambda prior, a: prior * a, outputs_info=pt.ones_like(a), non_sequences=a,
                     n_steps=k)
    value = np.array([2.0, 3.0, 0.1, -1.0, 1.0])
    assert_values([a, k], [pt.grad(result[-1].sum(), a)], [value, 4], [4 * value**3])


# -- disconnected inputs ---------------------------------------------------------------------
def _connectivity_loop() -> tuple[list[Variable], tuple[Variable, ...]]:
    x0, y0, z0 = pt.vector("x0"), pt.vector("y0"), pt.vector("z0")
    outs = pt.scan(lambda x, y, z: (x**2, y, x + 1), outputs_info=[x0, y0, z0], n_steps=10)
    return [x0, y0, z0], outs


def test_grad_connectivity_matrix_connected() -> None:
    """TestExamples.test_grad_connectivity_matrix: the connected gradients (x_t =
    x0 ** (2 ** t), z_t = x_{t-1} + 1, y_t = y0)."""
    (x0, y0, z0), (x, y, z) = _connectivity_loop()
    cost = (x + y + z).sum()
    values = [np.array([0.99, -0.98]), np.array([0.3, 0.4]), np.array([0.5, 0.6])]
    assert_gradients([x0, y0, z0], cost, [pt.grad(cost, x0)], values, wrt=[0],
                     outputs=[pt.grad(cost, y0)], expected=[np.full(2, 10.0)])


def test_grad_connectivity_matrix_disconnected() -> None:
    """TestExamples.test_grad_connectivity_matrix: z0 reaches no output (z_t reads x),
    and x never reads y: DisconnectedInputError."""
    (x0, y0, z0), (x, y, z) = _connectivity_loop()
    with pytest.raises(pt.DisconnectedInputError):
        pt.grad((x + y + z).sum(), z0)
    with pytest.raises(pt.DisconnectedInputError):
        pt.grad(x.sum(), y0)


def test_disconnected_gradient() -> None:
    """TestExamples.test_disconnected_gradient: a per-step output that is the closed-over
    v beside a carry that only copies itself; d/dv sum(m * m2) is the column sums of m."""
    v, m = pt.vector("v"), pt.matrix("m")
    _, m2 = pt.scan(lambda _, u: [u, v], sequences=m, outputs_info=[pt.zeros((7,)), None])
    m_value = RNG.normal(size=(4, 7))
    assert_values([v, m], [pt.grad((m * m2).sum(), v)], [RNG.normal(size=7), m_value],
                  [m_value.sum(axis=0)])


def test_disconnected_gradient2() -> None:
    """TestExamples.test_disconnected_gradient2: m2_t = u_{t-1} + v where u sums the
    rows of m, so d/dm_s sum(m2) = number of later steps."""
    v, m = pt.vector("v"), pt.matrix("m")
    _, m2 = pt.scan(lambda x, u: [x + u, u + v], sequences=m, outputs_info=[pt.zeros((7,)), None])
    later = np.repeat(np.arange(3.0, -1.0, -1.0)[:, None], 7, axis=1)
    assert_values([v, m], [pt.grad(m2.sum(), m)], [RNG.normal(size=7), RNG.normal(size=(4, 7))],
                  [later])


def test_disconnected_gradient3() -> None:
    """TestExamples.test_disconnected_gradient3: the gradient of the second of two
    per-step outputs (the first unused) is 1."""
    v = pt.dvector("v")
    _, out2 = pt.scan(lambda s: (s + 1, s + 2), sequences=v)
    assert_values([v], [pt.grad(out2.sum(), v)], [RNG.random(5)], [np.ones(5)])


@pytest.mark.parametrize("case", ["outside", "inside-implicit", "inside-explicit"])
def test_non_shaped_input_disconnected_gradient(case: str) -> None:
    """TestScan.test_non_shaped_input_disconnected_gradient: a datum picked at a random
    index (the state not updated by the loop) and added to each row; the first value
    and its gradient are finite though the unread rows are nan."""
    seq, s0 = pt.vector("seq"), pt.random.state("s0")
    data = pt.zeros(16)
    _, index = pt.random.integers(s0, 16)
    datum = data[index]
    if case == "outside":
        xs = pt.scan(lambda s, d: (d + s) ** 2, sequences=[seq], non_sequences=[datum])
    elif case == "inside-implicit":
        xs = pt.scan(lambda s: (datum + s) ** 2, sequences=[seq])
    else:
        xs = pt.scan(lambda s, data, state: (data[pt.random.integers(state, 16)[1]] + s) ** 2,
                     sequences=[seq], non_sequences=[data, s0])
    value = np.array([np.pi, np.nan, np.nan])
    assert_values([seq, s0], [xs[0], pt.grad(xs[0], seq)[0]], [value, pt.random.seed(0)],
                  [np.pi**2, 2 * np.pi])


# -- truncated gradients and while-loops ------------------------------------------------------
def test_grad_multiple_outs_some_truncate() -> None:
    """TestScan.test_grad_multiple_outs_some_truncate: truncate_gradient=3 over 5 steps
    (with uniform noise, the state a carry): only the last 3 steps propagate, so the
    first two rows of the sequence get no gradient, nor does the initial value."""
    w_in, u, x0, s0 = pt.matrix("w_in"), pt.matrix("u"), pt.vector("x0"), pt.random.state("s0")

    def step(u_t: Variable, x_tm1: Variable, s: Variable, w_in: Variable) -> tuple[Variable, ...]:
        s, noise = pt.random.uniform(s, -0.1, 0.1)
        return pt.dot(u_t, w_in) + x_tm1 + noise, s

    x, _ = pt.scan(step, u, [x0, s0], w_in, truncate_gradient=3)
    factors = np.random.default_rng(123).uniform(0.1, 0.9, size=(5, 2))
    cost = (x * pt.constant(factors)).sum()
    v_w, v_u, v_x0 = (RNG.uniform(-0.1, 0.1, size=(2, 2)), RNG.uniform(-0.1, 0.1, size=(5, 2)),
                      RNG.uniform(-0.1, 0.1, size=2))
    g_x = np.cumsum(factors[::-1], axis=0)[::-1]  # d cost / d x_t through all later steps
    g_u = np.zeros((5, 2))
    g_u[2:] = g_x[2:] @ v_w.T
    g_w = sum(np.outer(v_u[t], g_x[t]) for t in range(2, 5))
    assert_values([w_in, u, x0, s0], pt.grad(cost, [u, x0, w_in]),
                  [v_w, v_u, v_x0, pt.random.seed(1)], [g_u, np.zeros(2), g_w])


SEQ = np.arange(15.0)
UNTIL_OUTPUT = SEQ[:7] ** 2
UNTIL_GRADIENT = 2 * np.concatenate([SEQ[:7], np.zeros(8)])


def test_grad_until() -> None:
    """TestGradUntil.test_grad_until: x * x until x > 5 stops after 7 rows; the unread
    rows get zero gradient."""
    x, threshold = pt.vector("x"), pt.scalar("threshold", dtype="int64")
    r = pt.scan(lambda x, u: (x * x, pt.until(x > u)), sequences=x, non_sequences=[threshold])
    assert_values([x, threshold], [r, pt.grad(r.sum(), x)], [SEQ, 5], [UNTIL_OUTPUT, UNTIL_GRADIENT])


def test_grad_until_ndim_greater_one() -> None:
    """TestGradUntil.test_grad_until_ndim_greater_one: the same over rows of a matrix,
    stopping when all entries pass the threshold."""
    x, threshold = pt.matrix("x"), pt.scalar("threshold", dtype="int64")
    r = pt.scan(lambda x, u: (x * x, pt.until(pt.all(x > u))), sequences=x,
                non_sequences=[threshold])

    def tile(v: Any) -> Any:
        return np.tile(v.reshape((-1, 1)), (1, 5))

    assert_values([x, threshold], [r, pt.grad(r.sum(), x)], [tile(SEQ), 5],
                  [tile(UNTIL_OUTPUT), tile(UNTIL_GRADIENT)])


def test_grad_until_and_truncate() -> None:
    """TestGradUntil.test_grad_until_and_truncate: with truncate_gradient=3 only the
    last 3 executed steps propagate."""
    x, threshold = pt.vector("x"), pt.scalar("threshold", dtype="int64")
    r = pt.scan(lambda x, u: (x * x, pt.until(x > u)), sequences=x, non_sequences=[threshold],
                truncate_gradient=3)
    expected = UNTIL_GRADIENT.copy()
    expected[: 7 - 3] = 0
    assert_values([x, threshold], [r, pt.grad(r.sum(), x)], [SEQ, 5], [UNTIL_OUTPUT, expected])


def test_grad_until_and_truncate_sequence_taps() -> None:
    """ScanCompatibilityTests.check_grad_until_and_truncate_sequence_taps: sequence
    taps [-2, 0], truncate_gradient=3, threshold 6; PyTensor's gradient by hand."""
    x, threshold = pt.vector("x"), pt.scalar("threshold", dtype="int64")
    r = pt.scan(lambda a, b, u: (a * b, pt.until(b > u)), sequences={"input": x, "taps": [-2, 0]},
                non_sequences=[threshold], truncate_gradient=3)
    expected = np.array([0, 0, 0, 5, 6, 10, 4, 5, 0, 0, 0, 0, 0, 0, 0], dtype="float64")
    assert_values([x, threshold], [pt.grad(r.sum(), x)], [SEQ, 6], [expected])


def test_grad_until_with_recurrent_state() -> None:
    """TestGradUntil.test_grad_until_with_recurrent_state: x_t = a x_{t-1} + y_t until it
    passes 5; closed-form gradients for the sequence and the initial value."""
    x, x0, a = pt.vector("x"), pt.scalar("x0"), 1.3
    xs = pt.scan(lambda y, prev: (a * prev + y, pt.until(a * prev + y > 5.0)), sequences=x,
                 outputs_info=[x0])
    seq_value = np.linspace(0.4, 0.9, 12)
    executed, prev = 0, 0.2
    for y in seq_value:
        prev, executed = a * prev + y, executed + 1
        if prev > 5.0:
            break
    assert 1 < executed < 12
    j = np.arange(12)
    g_seq = np.where(j < executed, (a ** (executed - j) - 1) / (a - 1), 0.0)
    g_x0 = a * (a**executed - 1) / (a - 1)
    assert_values([x, x0], pt.grad(xs.sum(), [x, x0]), [seq_value, 0.2], [g_seq, g_x0])


def test_until_random_infer_shape() -> None:
    """TestExamples.test_until_random_infer_shape: a while-loop adding uniform draws
    (the state a carry); the gradient of the trace's sum with respect to the initial
    value is the number of executed steps."""
    x, s0 = pt.scalar("x"), pt.random.state("s0")

    def step(prev: Variable, s: Variable) -> Any:
        s, draw = pt.random.uniform(s)
        return (prev + draw, s), pt.until(prev > 5)

    out, _ = pt.scan(step, outputs_info=[x, s0], n_steps=10)
    cases: list[tuple[list[Any], list[Any]]] = []
    for start in range(-5, 5):
        executed, value = 0, float(start)
        reference = np.random.default_rng(start + 10)
        for _ in range(10):
            previous, value, executed = value, value + reference.uniform(), executed + 1
            if previous > 5:
                break
        cases.append(([float(start), pt.random.seed(start + 10)],
                      [np.int64(executed), float(executed)]))
    assert_values_at([x, s0], [out.shape[0], pt.grad(out.sum(), x)], cases)
