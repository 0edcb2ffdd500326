"""PyTensor's scan contract, derivatives of derivatives (issue 18): second to fourth
derivatives through loops, gradients taken inside a step function (the Jacobian-by-scan
idiom among them), and forward-mode derivatives (PyTensor's pushforward). Each test
mirrors the PyTensor test its docstring names (`tests/scan/test_basic.py` unless another
file is named); values go through the reference evaluator on the unoptimized graph and
the compiled function (`fast_run`), against closed forms or finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Variable, evaluate
from tests.numba_backend.scan_contract import (
    assert_gradients,
    assert_tangents,
    assert_values,
    assert_values_at,
    numeric_gradients,
)

RNG = np.random.default_rng(1820)
JACOBIAN_BY_SCAN = "issue 18 defect: the Jacobian-by-scan idiom raises DisconnectedInputError"


# -- higher derivatives ------------------------------------------------------------------------
def test_high_order_grad_sitsot() -> None:
    """TestScan.test_high_order_grad_sitsot and ScanCompatibilityTests
    .check_higher_order_derivative: xs[-1] of 4 squarings is x ** 16; its first four
    derivatives at 0.95 (PyTensor notes every backend got the third wrong)."""
    x = pt.scalar("x")
    ys = pt.scan(lambda xtm1: xtm1**2, outputs_info=[x], n_steps=4)
    derivatives = [ys[-1]]
    for _ in range(4):
        derivatives.append(pt.grad(derivatives[-1], x))
    expected = [np.prod((16, 15, 14, 13)[:order]) * 0.95 ** (16 - order) for order in range(5)]
    assert_values([x], derivatives, [0.95], expected, rtol=1e-12)


def test_grad_sitsot() -> None:
    """TestScan.test_grad_sitsot: the derivative of sum(grad(sum(ys), x0)) for
    y_t = 2 y_{t-1} (zero: the gradient is the constant 62), and for a nonlinear step
    (against finite differences)."""
    inp = pt.vector("inp")
    outs = pt.scan(lambda x: x * 2, outputs_info=[inp], n_steps=5)
    first = pt.grad(outs.sum(), inp)
    second = pt.grad(first.sum(), inp, disconnected_inputs="ignore")
    nonlinear = pt.scan(lambda x: pt.sin(x) * 2, outputs_info=[inp], n_steps=5)
    cost = pt.grad(nonlinear.sum(), inp).sum()
    assert_gradients([inp], cost, [pt.grad(cost, inp)], [RNG.random(3)], outputs=[first, second],
                     expected=[np.full(3, 62.0), np.zeros(3)])


def test_grad_mitsot() -> None:
    """TestScan.test_grad_mitsot: one value both the new tap-(-2) output and the new
    carry; the derivative of the sum of the two first gradients."""
    input0, input1 = pt.matrix("input0"), pt.vector("input1")

    def step(mitsot_m2: Variable, sitsot: Variable) -> tuple[Variable, Variable]:
        output = (mitsot_m2 + sitsot) ** 1.02
        return output, output

    outs = pt.scan(step, outputs_info=[{"initial": input0, "taps": [-2]}, input1], n_steps=3)
    cost = pt.grad(outs[0].sum(), input0).sum() + pt.grad(outs[1].sum(), input1).sum()
    values = [RNG.random((2, 3)) + 0.1, RNG.random(3) + 0.1]
    assert_gradients([input0, input1], cost, pt.grad(cost, [input0, input1]), values)


@pytest.mark.slow
def test_grad_grad_mitsot_sitsot() -> None:
    """TestScan.test_grad_grad_mitsot_sitsot: taps [-2, -1] and a carry sharing one
    value; the derivative of the sum of the first gradients."""
    input0, input1 = pt.matrix("input0"), pt.vector("input1")

    def step(m2: Variable, m1: Variable, sitsot: Variable) -> tuple[Variable, Variable]:
        output = (m2 + m1 + sitsot) ** 1.05
        return output, output

    outs = pt.scan(step, outputs_info=[{"initial": input0, "taps": [-2, -1]}, input1], n_steps=5)
    cost = pt.grad(outs[0].sum(), input0).sum() + pt.grad(outs[1].sum(), input1).sum()
    values = [RNG.random((2, 3)) * 0.1 + 0.05, RNG.random(3) * 0.1 + 0.05]
    assert_gradients([input0, input1], cost, [pt.grad(cost, input0)], values, wrt=[0])


def test_grad_of_grad_of_state() -> None:
    """TestScan.test_grad_of_grad_of_state: d2/dx2 of 1 + 2x - 3x^2 + 4x^3 at 2 is 42
    (sequences of 4 and 1000 rows)."""
    c, x = pt.vector("c"), pt.scalar("x")
    components = pt.scan(lambda coeff, power, free: coeff * (free**power), outputs_info=None,
                         sequences=[c, pt.arange(1000)], non_sequences=x)
    second = pt.grad(pt.grad(components.sum(), x).sum(), x)
    assert_values([c, x], [second], [np.array([1.0, 2.0, -3.0, 4.0]), 2.0], [42.0])


def _sneaky_loop() -> tuple[list[Variable], Variable]:
    seq, z, x0 = pt.vector("seq", shape=(2,)), pt.scalar("z"), pt.vector("x0", shape=(2,))

    def step(s: Variable, xtm2: Variable, xtm1: Variable, z: Variable) -> Variable:
        return s * ((xtm2 * 0 + xtm1) ** 2) * (z / 2)

    xs = pt.scan(step, sequences=[seq], outputs_info=[{"initial": x0, "taps": (-2, -1)}],
                 non_sequences=[z], n_steps=2)
    return [seq, z, x0], xs[-1]


def test_second_derivative_disconnected_cost_with_mit_mot() -> None:
    """TestScan.test_second_derivative_disconnected_cost_with_mit_mot: with s = 1 and
    z = 2 the last value is x ** 4; first and second derivatives 4 and 12 at 1 (96 with
    s = 2, 3/2 with z = 1), whichever other gradients the cost (times 0) includes."""
    (seq, z, x0), last_x = _sneaky_loop()
    ones = np.ones(2)
    outputs = []
    for others in ([z, seq], [seq], [z], []):
        gradients = pt.grad(last_x, [x0, *others])
        g = gradients[0].sum() + sum((extra.sum() * 0 for extra in gradients[1:]), pt.as_tensor(0.0))
        outputs += [g, pt.grad(g, x0).sum()]
    assert_values_at([seq, z, x0], outputs, [
        ([ones, 2.0, ones], [4.0, 12.0] * 4),
        ([2 * ones, 2.0, ones], [32.0, 96.0] * 4),
        ([ones, 1.0, ones], [0.5, 1.5] * 4),
    ])


# -- gradients inside step functions ---------------------------------------------------------
def test_jacobian_by_scan_idiom() -> None:
    """The Jacobian-by-scan idiom (TestScan.test_inner_grad's form): rows grad(y[i], x)
    for y = x ** 2 at [1, 2] are [[2, 0], [0, 4]]."""
    x = pt.vector("x")
    y = x**2
    jacobian = pt.scan(lambda i, y, x: pt.grad(y[i], x), sequences=[pt.arange(y.shape[0])],
                       non_sequences=[y, x])
    assert_values([x], [jacobian], [np.array([1.0, 2.0])], [np.array([[2.0, 0.0], [0.0, 4.0]])])


def test_inner_grad() -> None:
    """TestScan.test_inner_grad: the Hessian of 0.5 (x * x) . (A x) by a loop of
    gradients of the gradient's entries scaled by 0.9 (both scalars closed over)."""
    x, a = pt.vector("x"), pt.matrix("A")
    fc1, fc2 = pt.scalar("fc1"), pt.scalar("fc2")
    y = fc1 * pt.dot(x * x, pt.dot(a, x))
    gy = pt.grad(y, x)
    hy = pt.scan(lambda i, gy, x: pt.grad(gy[i] * fc2, x), sequences=pt.arange(gy.shape[0]),
                 non_sequences=[gy, x])
    assert_values([x, a, fc1, fc2], [hy],
                  [np.ones(2), np.array([[1.0, 1.0], [1.0, 0.0]]), 0.5, 0.9],
                  [np.array([[3.6, 1.8], [1.8, 0.9]])])


def test_inner_grad_wrt_shared() -> None:
    """TestScan.test_inner_grad_wrt_shared: a loop of grad(K[i], x1) for K = x2 * x1 read
    as a closure gives x2."""
    x1 = pt.scalar("x1")
    x2 = pt.constant(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    k = x2 * x1
    out = pt.scan(lambda i, v: pt.grad(k[i], v), sequences=pt.arange(k.shape[0]), non_sequences=x1)
    assert_values([x1], [out], [3.0], [np.arange(1.0, 6.0)])


def test_gradient_descent_loop() -> None:
    """TestScan.test_inner_grad's other half, a gradient inside the step of a carry:
    five steps of gradient descent on 0.5 x . (A x), then the gradient of the result
    with respect to the start and to A (second derivatives through the loop; the step
    count is symbolic so that the compiled loop stays a loop)."""
    x0, a, n_steps = pt.vector("x0"), pt.matrix("a"), pt.iscalar("n_steps")
    xs = pt.scan(lambda x, a: x - 0.1 * pt.grad(0.5 * pt.dot(x, pt.dot(a, x)), x),
                 outputs_info=[x0], non_sequences=[a], n_steps=n_steps)
    values: list[Any] = [RNG.normal(size=3), RNG.normal(size=(3, 3)), np.int32(5)]
    x, sym = values[0], 0.5 * (values[1] + values[1].T)
    for _ in range(5):
        x = x - 0.1 * sym @ x
    cost = (xs[-1] ** 2).sum()
    assert_gradients([x0, a, n_steps], cost, pt.grad(cost, [x0, a]), values, wrt=[0, 1],
                     outputs=[xs[-1]], expected=[x])


def _predictive_mean() -> tuple[list[Variable], Variable, Variable, list[Any]]:
    """test_push_out.py::TestPushOutNonSeqScan.test_pushout_seqs's model: a loop of
    scalars computed from the inputs, and a loop of predictive means reading them."""
    inputs, targets = pt.dmatrix("X"), pt.dmatrix("Y")
    x_star, s_star = pt.dvector("x_star"), pt.dmatrix("s_star")
    hyp = pt.constant(np.log(np.tile([1, 1, 1, 1, 1, 1, 0.01], (3, 1))))
    e = hyp.shape[0]

    def init_k(i: Variable, x: Variable, y: Variable) -> Variable:
        xx = pt.reshape(x.sum(1), (x.shape[0], 1))
        return (xx + xx.T).sum()

    beta = pt.scan(init_k, sequences=pt.arange(e), non_sequences=[inputs, targets])

    def predict_mean_i(i: Variable, x_star: Variable, s_star: Variable, x: Variable,
                       beta: Variable, h: Variable) -> Variable:
        d = x.shape[1]
        il = pt.diag(h[i, :d])
        inp = pt.dot(x - x_star, il)
        t = pt.dot(inp, pt.dot(pt.dot(il, s_star), il))
        lb = (inp * t).sum() + beta.sum()
        return lb * h[i, d]

    m = pt.scan(predict_mean_i, sequences=pt.arange(e),
                non_sequences=[x_star, s_star, inputs, beta, hyp])
    values = [RNG.random((10, 4)), RNG.random((10, 3)), RNG.random(4), np.eye(4)]
    return [inputs, targets, x_star, s_star], m, x_star, values


@pytest.mark.slow
def test_pushout_seqs_rows_and_jacobian() -> None:
    """test_push_out.py::TestPushOutNonSeqScan.test_pushout_seqs: the gradient of each
    predictive mean, and pt.jacobian of all three, match finite differences."""
    inputs, m, x_star, values = _predictive_mean()
    rows = [pt.grad(m[row], x_star) for row in range(3)]
    numeric = [numeric_gradients(inputs, m[row], values, [2])[0] for row in range(3)]
    assert_values(inputs, [*rows, pt.jacobian(m, x_star)], values, [*numeric, np.stack(numeric)],
                  rtol=1e-6, atol=1e-5)


def test_pushout_seqs_jacobian_by_scan() -> None:
    """test_push_out.py::TestPushOutNonSeqScan.test_pushout_seqs: the Jacobian by a loop
    of grad(M[i], x_star) equals the rows taken one by one."""
    inputs, m, x_star, values = _predictive_mean()
    by_scan = pt.scan(lambda i, m, x: pt.grad(m[i], x), sequences=pt.arange(m.shape[0]),
                      non_sequences=[m, x_star])
    rows = [pt.grad(m[row], x_star) for row in range(3)]
    expected = np.stack(evaluate(rows, dict(zip(inputs, values))))
    assert_values(inputs, [by_scan], values, [expected], rtol=1e-9, atol=1e-9)


def test_0_step_nested_gradient() -> None:
    """test_trace.py::TestReduceTrace.test_0_step: an outer loop whose step runs an
    inner loop over all but the first row of its slice; the gradient of the features'
    sum with respect to the inner loop's weights."""
    x, w = pt.tensor3("x"), pt.matrix("w")

    def outer_step(x_t: Variable, w: Variable) -> Variable:
        inner: Variable = pt.scan(lambda x_t_t, h_tm1, w: pt.dot(h_tm1, w) + x_t_t,
                                  sequences=[x_t[1:]], outputs_info=[x_t[0]], non_sequences=[w])
        return inner

    features = pt.scan(outer_step, sequences=[x], non_sequences=[w])
    x_value, w_value = RNG.random((2, 2, 3)), RNG.random((3, 3))
    assert_values([x, w], [pt.grad(features.sum(), w)], [x_value, w_value],
                  [np.tile(x_value[:, 0].sum(0), (3, 1)).transpose()])


# -- forward mode (pushforward) ------------------------------------------------------------------
def _rnn() -> tuple[list[Variable], Variable, list[Any]]:
    u, h0, w = pt.matrix("u"), pt.vector("h0"), pt.matrix("w")
    o = pt.scan(lambda u_t, y, w: pt.tanh(pt.dot(w, u_t + y)), sequences=u, outputs_info=h0,
                non_sequences=w)
    values = [RNG.uniform(size=(6, 5)), RNG.uniform(size=5), RNG.uniform(size=(5, 5))]
    return [u, h0, w], o[-1], values


@pytest.mark.parametrize("position", [0, 1, 2], ids=["u", "h0", "W"])
def test_pushforward(position: int) -> None:
    """TestScan.test_pushforward: the forward-mode derivative of an RNN's last state
    along a direction for the sequence, the initial state or the weights."""
    inputs, last, values = _rnn()
    direction = RNG.uniform(size=np.shape(values[position]))
    assert_tangents(inputs, last, position, direction, values)


def test_pushforward_equals_jacobian_by_scan() -> None:
    """TestScan.test_pushforward: the tangent equals the loop of (grad(o[i], u) * eu).sum()."""
    (u, h0, w), last, values = _rnn()
    eu = pt.matrix("eu")
    (tangent,) = pt.jvp([last], [u], [eu])
    by_scan = pt.scan(lambda i, o, u, eu: (pt.grad(o[i], u) * eu).sum(),
                      sequences=pt.arange(last.shape[0]), non_sequences=[last, u, eu])
    direction = RNG.uniform(size=(6, 5))
    expected = evaluate([tangent], {u: values[0], h0: values[1], w: values[2], eu: direction})[0]
    assert_values([u, h0, w, eu], [by_scan], [*values, direction], [expected])


@pytest.mark.parametrize("position", [0, 1, 2], ids=["u", "h0", "W"])
def test_pushforward_2(position: int) -> None:
    """TestScan.test_pushforward_2: the same with a second, per-step output (the
    pre-activation) beside the carry."""
    u, h0, w = pt.matrix("u"), pt.vector("h0"), pt.matrix("w")

    def step(u_t: Variable, y: Variable, w: Variable) -> tuple[Variable, Variable]:
        pre = u_t + y
        return pt.tanh(pt.dot(w, pre)), pre

    o, pre = pt.scan(step, sequences=u, outputs_info=[h0, None], non_sequences=w)
    values = [RNG.uniform(size=(3, 5)) - 0.5, RNG.uniform(size=5) - 0.5,
              RNG.uniform(size=(5, 5)) - 0.5]
    direction = RNG.uniform(size=np.shape(values[position])) - 0.5
    assert_tangents([u, h0, w], o[-1] + pre[-1].sum(), position, direction, values)


@pytest.mark.slow
def test_pushforward_mitmot() -> None:
    """TestScan.test_pushforward_mitmot: the forward-mode derivative of the gradient of
    a recurrent model's loss with respect to a parameter vector sliced into its
    weights (forward over reverse through the loop)."""
    pars, inpt, target = pt.dvector("pars"), pt.tensor3("inpt"), pt.tensor3("target")
    w1, w2 = pt.reshape(pars[:3], (1, 3)), pt.reshape(pars[3:], (3, 3))
    flat = pt.reshape(inpt, (inpt.shape[0] * inpt.shape[1], inpt.shape[2]))
    hidden = pt.reshape(pt.dot(flat, w1), (inpt.shape[0], inpt.shape[1], 3))
    hidden_rec = pt.scan(lambda x, h_tm1: pt.sigmoid(pt.dot(h_tm1, w2) + x), sequences=hidden,
                         outputs_info=[pt.zeros_like(hidden[0])])
    cost = ((hidden_rec - target) ** 2).mean()
    gradient = pt.grad(cost, pars)
    values = [RNG.normal(size=12), RNG.normal(size=(4, 2, 1)), RNG.normal(size=(4, 2, 3))]
    assert_tangents([pars, inpt, target], gradient, 0, RNG.normal(size=12), values)
