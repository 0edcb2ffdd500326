"""PyTensor's scan contract, forward values (issue 18): sequences, outputs with and
without taps, `go_backwards`, non-sequences and closures, several outputs, the
wrappers, and the graphs of PyTensor's printing tests. Each test mirrors the PyTensor
test its docstring names (`tests/scan/test_basic.py` unless another file is named) and
checks the reference evaluator on the unoptimized graph and the compiled function
(`fast_run`) against a NumPy loop. PyTensor's shared variables become graph inputs read
as closures; their updates become explicit carries."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Variable
from numba_backend import function
from tests.numba_backend.scan_contract import Array, assert_values

RNG = np.random.default_rng(18)


def rnn_reference(u: Array, x0: float, w_in: float, w: float) -> Array:
    """x_t = u_t * w_in + x_{t-1} * w, the scalar RNN of PyTensor's basic tests."""
    out, x = [], x0
    for u_t in u:
        x = u_t * w_in + x * w
        out.append(x)
    return np.array(out)


def _rnn_step(u_t: Variable, x_tm1: Variable, w_in: Variable, w: Variable) -> Variable:
    return u_t * w_in + x_tm1 * w


# -- sequences, outputs, non-sequences -------------------------------------------------
def test_one_sequence_one_output_weights() -> None:
    """TestScan.test_one_sequence_one_output_weights: a scalar RNN, weights as
    non-sequences, arguments given positionally."""
    u, x0, w_in, w = pt.vector("u"), pt.scalar("x0"), pt.scalar("w_in"), pt.scalar("w")
    out = pt.scan(_rnn_step, u, x0, [w_in, w], n_steps=None, truncate_gradient=-1,
                  go_backwards=False)
    values: list[Any] = [RNG.uniform(-5, 5, size=4), 0.3, 0.7, 0.9]
    assert_values([u, x0, w_in, w], [out], values, [rnn_reference(*values)])


def test_one_sequence_one_output_weights_shared() -> None:
    """TestScan.test_one_sequence_one_output_weights_shared: the weights are variables
    the step function closes over (PyTensor's shared variables)."""
    u, x0, w_in, w = pt.vector("u"), pt.scalar("x0"), pt.scalar("w_in"), pt.scalar("w")
    out = pt.scan(lambda u_t, x_tm1: u_t * w_in + x_tm1 * w, u, x0)
    values: list[Any] = [RNG.uniform(-5, 5, size=4), 0.3, 0.7, 0.9]
    assert_values([u, x0, w_in, w], [out], values, [rnn_reference(*values)])


def test_backwards() -> None:
    """TestScan.test_backwards: go_backwards reads the sequence from its last row."""
    u, x0, w_in, w = pt.vector("u"), pt.scalar("x0"), pt.scalar("w_in"), pt.scalar("w")
    out = pt.scan(_rnn_step, u, x0, [w_in, w], go_backwards=True)
    values: list[Any] = [RNG.uniform(-5, 5, size=4), 0.3, 0.7, 0.9]
    assert_values([u, x0, w_in, w], [out], values, [rnn_reference(values[0][::-1], *values[1:])])


def test_output_only() -> None:
    """TestScan.test_output_only: no outputs_info (an empty list) makes a map."""
    u = pt.vector("u")
    out = pt.scan(lambda u_t: u_t + 3, u, [], [])
    value = RNG.uniform(-5, 5, size=5)
    assert_values([u], [out], [value], [value + 3])


def test_sequence_dict() -> None:
    """TestScan.test_sequence_dict: a sequence given as a dict with only "input"."""
    x = pt.vector("x")
    out = pt.scan(lambda s: s + 1, sequences=[{"input": x}])
    assert_values([x], [out], [np.arange(4.0)], [np.arange(1.0, 5.0)])


def test_multiple_inputs_multiple_outputs() -> None:
    """TestExamples.test_multiple_inputs_multiple_outputs: two sequences, two carries
    of different ranks, a non-sequence and closures."""
    w_in2, w, w_out = pt.vector("w_in2"), pt.matrix("w"), pt.vector("w_out")
    w_in1, u1, u2 = pt.matrix("w_in1"), pt.matrix("u1"), pt.vector("u2")
    x0, y0 = pt.vector("x0"), pt.scalar("y0")

    def step(u1_t: Variable, u2_t: Variable, x_tm1: Variable, y_tm1: Variable,
             w_in1: Variable) -> tuple[Variable, Variable]:
        return pt.dot(u1_t, w_in1) + u2_t * w_in2 + pt.dot(x_tm1, w), pt.dot(x_tm1, w_out)

    x, y = pt.scan(step, [u1, u2], [x0, y0], w_in1)
    values: list[Any] = [RNG.uniform(-5, 5, size=2), RNG.uniform(-5, 5, size=(2, 2)),
              RNG.uniform(-5, 5, size=2), RNG.uniform(-5, 5, size=(2, 2)),
              RNG.uniform(-5, 5, size=(3, 2)), RNG.uniform(-5, 5, size=3),
              RNG.uniform(-5, 5, size=2), 0.4]
    v_in2, v_w, v_out, v_in1, v_u1, v_u2, v_x0, _ = values
    xs, ys, x_prev = [], [], v_x0
    for t in range(3):
        ys.append(x_prev @ v_out)
        x_prev = v_u1[t] @ v_in1 + v_u2[t] * v_in2 + x_prev @ v_w
        xs.append(x_prev)
    assert_values([w_in2, w, w_out, w_in1, u1, u2, x0, y0], [x, y], values,
                  [np.array(xs), np.array(ys)])


def test_sequence_is_scan() -> None:
    """TestScan.test_sequence_is_scan: one loop's trace is another loop's sequence."""
    x0 = pt.scalar("x0")
    first = pt.scan(lambda x: x + 1, outputs_info={"initial": x0}, n_steps=10)
    second = pt.scan(lambda x: x + 1, sequences=[first])
    assert_values([x0], [second], [0.0], [np.arange(1.0, 11.0) + 1])


def test_output_padding() -> None:
    """TestScan.test_output_padding: with n_steps=1 a trace still has the step axis,
    and its last row has the initial value's rank."""
    init_a = pt.vector("init_a")
    out = pt.scan(lambda a: a + 1, outputs_info=[{"initial": init_a}], n_steps=1)
    assert out[-1].ndim == 1 and out.ndim == 2
    assert_values([init_a], [out, out[-1]], [np.array([1.0, 2.0])],
                  [np.array([[2.0, 3.0]]), np.array([2.0, 3.0])])


def test_same() -> None:
    """TestExamples.test_same: one step value returned twice, once per step (None) and
    once fed back; both traces are equal (float32)."""
    x = pt.fmatrix("x")
    memory = pt.constant(np.zeros(2, dtype="float32"))
    w_value = RNG.random((5, 2)).astype("float32")
    w = pt.constant(w_value)

    def step(inp: Variable, mem: Variable) -> tuple[Variable, Variable]:
        d = pt.dot(pt.concatenate([inp, mem]), w)
        return d, d

    per_step, fed_back = pt.scan(step, sequences=[x], outputs_info=[None, memory])
    x_value = RNG.random((4, 3)).astype("float32")
    expected, mem = [], np.zeros(2, dtype="float32")
    for row in x_value:
        mem = np.concatenate([row, mem]) @ w_value
        expected.append(mem)
    assert_values([x], [per_step, fed_back], [x_value], [np.array(expected)] * 2, rtol=1e-5)


def test_eliminate_seqs() -> None:
    """TestExamples.test_eliminate_seqs: outputs with taps [-1, -3], tap -1 and None that
    read only the sequence."""
    u, x1, x2 = pt.vector("u"), pt.vector("x1"), pt.scalar("x2")
    outs = pt.scan(lambda *args: (args[0] + 1, args[0] + 2, args[0] + 3), u,
                   [{"initial": x1, "taps": [-1, -3]}, x2, None])
    v_u = RNG.uniform(size=5)
    assert_values([u, x1, x2], list(outs), [v_u, np.zeros(3), 0.0], [v_u + 1, v_u + 2, v_u + 3])


def test_eliminate_nonseqs() -> None:
    """TestExamples.test_eliminate_nonseqs: the same outputs reading only the
    non-sequence, for 5 steps."""
    w, x1, x2 = pt.scalar("w"), pt.vector("x1"), pt.scalar("x2")
    outs = pt.scan(lambda *args: (args[-1] + 1.0, args[-1] + 2.0, args[-1] + 3.0), [],
                   [{"initial": x1, "taps": [-1, -3]}, x2, None], w, n_steps=5)
    expected = [np.full(5, 0.25 + k) for k in (1, 2, 3)]
    assert_values([w, x1, x2], list(outs), [0.25, np.zeros(3), 0.0], expected)


def test_bug_function_provides_intermediate_nodes_as_inputs() -> None:
    """TestExamples.test_bugFunctioProvidesIntermediateNodesAsInputs: a non-sequence
    computed outside the loop and also used after it (float32). fgraph compiles
    functions of graph inputs only, so the function takes the matrix W is made from."""
    v, orig = pt.tensor3("v", dtype="float32"), pt.fmatrix("orig")
    w = orig + 2
    os_ = pt.scan(lambda x, w: x + 1 + w.sum(), sequences=v, outputs_info=[None],
                  non_sequences=[w])
    total = os_.sum() + w.sum()
    v_value = RNG.random((3, 2, 2)).astype("float32")
    orig_value = RNG.random((2, 2)).astype("float32")
    w_value = orig_value + 2
    expected = (v_value + 1 + w_value.sum()).sum() + w_value.sum()
    assert_values([v, orig], [total], [v_value, orig_value], [np.float32(expected)], rtol=1e-5)


# -- taps ---------------------------------------------------------------------------------
def test_using_taps_sequence() -> None:
    """TestScan.test_using_taps_sequence: taps [-1] alone give len(s) - 1 steps, step t
    reading s[t] (PyTensor pretends tap 0 is used: n = len(s) - (max(max_tap, 0) -
    min(min_tap, 0)))."""
    x = pt.dvector("x")
    out = pt.scan(lambda a: [a], sequences={"input": x, "taps": [-1]}, outputs_info=[None])
    value = np.arange(5.0)
    assert_values([x], [out], [value], [value[:-1]])


def test_using_negative_taps_sequence() -> None:
    """TestScan.test_using_negative_taps_sequence: taps [-2, -1] over 5 rows give 3
    steps; tap -2 reads rows 0, 1, 2 (float32)."""
    x = pt.fvector("x")
    out = pt.scan(lambda a, b: a, sequences={"input": x, "taps": [-2, -1]})
    value = np.array([1, 2, 3, 4, 5], dtype="float32")
    assert_values([x], [out], [value], [np.array([1, 2, 3], dtype="float32")])


def test_mintap_onestep() -> None:
    """test_mintap_onestep: the only tap is +2, so step 0 reads seq[2] (int32 sequence,
    integer carry from the Python int 0)."""
    seq = pt.ivector("seq")
    out = pt.scan(lambda s, total: total + s, sequences={"input": seq, "taps": [2]},
                  outputs_info=0, n_steps=1)
    assert_values([seq], [out], [np.arange(20, dtype="int32")], [np.array([2])])


def test_using_taps_input_output() -> None:
    """TestExamples.test_using_taps_input_output: sequence tap -2 alone (2 steps over 4
    rows, reading rows 0 and 1) and output taps [-1, -2] given in that order."""
    u, x0, w_in, w = pt.vector("u"), pt.vector("x0"), pt.scalar("w_in"), pt.scalar("w")
    out = pt.scan(lambda u_tm2, x_tm1, x_tm2: u_tm2 * w_in + x_tm1 * w + x_tm2,
                  {"input": u, "taps": [-2]}, {"initial": x0, "taps": [-1, -2]}, [])
    vu, vx0, vw_in, vw = RNG.uniform(-5, 5, size=4), RNG.uniform(-5, 5, size=2), 0.6, 0.8
    first = vu[0] * vw_in + vx0[1] * vw + vx0[0]
    second = vu[1] * vw_in + first * vw + vx0[1]
    assert_values([u, x0, w_in, w], [out], [vu, vx0, vw_in, vw], [np.array([first, second])])


def test_sequence_taps_given_as_an_int() -> None:
    """basic.scan's docstring (`dict(input=Sequence3, taps=3)`) and
    TestExamples.test_using_taps_input_output: one tap may be given as an int."""
    u = pt.vector("u")
    out = pt.scan(lambda a, b: a + b, sequences=[{"input": u, "taps": -1}, u[1:]])
    value = np.arange(5.0)
    assert_values([u], [out], [value], [value[:-1] + value[1:]])


def test_backwards_with_sequence_taps() -> None:
    """TestScan.test_grad_multiple_outs_taps_backwards's sequence, by value (basic.scan
    slices s[k - min_tap : len(s) - (max_tap - k)] per tap, then reverses it): taps
    [-1, 0, 1] with go_backwards over 5 rows run 3 steps, from the end, each reading
    the row before, at and after its own."""
    s = pt.vector("s")
    out = pt.scan(lambda before, at, after: 100 * before + 10 * at + after,
                  sequences=[{"input": s, "taps": [-1, 0, 1]}], go_backwards=True)
    value = np.arange(1.0, 6.0)
    centres = np.array([3, 2, 1])
    expected = 100 * value[centres - 1] + 10 * value[centres] + value[centres + 1]
    assert_values([s], [out], [value], [expected])


def test_past_future_taps_shared() -> None:
    """TestExamples.test_past_future_taps_shared: sequence taps [-2, 2] (2 steps over 6
    rows) and output taps [-1, -2], weights closed over."""
    u, x0, w_in, w = pt.vector("u"), pt.vector("x0"), pt.scalar("w_in"), pt.scalar("w")
    out = pt.scan(lambda u_tm2, u_tp2, x_tm1, x_tm2: (u_tm2 + u_tp2) * w_in + x_tm1 * w + x_tm2,
                  {"input": u, "taps": [-2, 2]}, {"initial": x0, "taps": [-1, -2]}, [])
    vu, vx0, vw_in, vw = RNG.uniform(-5, 5, size=6), RNG.uniform(-5, 5, size=2), 0.6, 0.8
    first = (vu[0] + vu[4]) * vw_in + vx0[1] * vw + vx0[0]
    second = (vu[1] + vu[5]) * vw_in + first * vw + vx0[1]
    assert_values([u, x0, w_in, w], [out], [vu, vx0, vw_in, vw], [np.array([first, second])])


def test_output_taps_with_an_unused_tap() -> None:
    """TestScan.test_grad_multiple_taps_state, forward: x_t = w + x_{t-1} with taps
    [-4, -1] (tap -4 unused) over 10 steps, from a 5-row initial value (the first 4
    rows are the taps' window, so the last value is row 3 plus 10 w)."""
    xinit, w = pt.tensor3("xinit"), pt.matrix("w")
    xseq = pt.scan(lambda xdl, xprev, w: w + xprev, n_steps=10,
                   outputs_info=[{"initial": xinit, "taps": [-4, -1]}], non_sequences=w)
    v_x, v_w = RNG.uniform(1, 3, size=(5, 2, 2)), RNG.uniform(1, 3, size=(2, 2))
    expected = np.array([v_x[3] + k * v_w for k in range(1, 11)])
    assert_values([xinit, w], [xseq, xseq[-1]], [v_x, v_w], [expected, expected[-1]])


def test_output_taps_counting_up() -> None:
    """TestExamples.test_using_taps_input_output's outputs, reduced: taps [-1, -2] of an
    output that adds 0.5 to its tap -1 every step (tap -2 unused)."""
    x0, n_steps = pt.vector("x0"), pt.iscalar("n_steps")
    out = pt.scan(lambda x_tm1, x_tm2: x_tm1 + 0.5, [], {"initial": x0, "taps": [-1, -2]},
                  n_steps=n_steps)
    assert_values([x0, n_steps], [out], [np.array([1.0, 2.0]), 3], [np.array([2.5, 3.0, 3.5])])


def test_initial_value_longer_than_the_taps() -> None:
    """TestScan.test_grad_multiple_taps_state's initial value (5 rows for taps [-4, -1])
    with a static length: basic.scan uses initial[:4]."""
    xinit = pt.tensor("xinit", shape=(5,))
    out = pt.scan(lambda x_tm4, x_tm1: x_tm4 + x_tm1, outputs_info=[{"initial": xinit,
                                                                     "taps": [-4, -1]}], n_steps=3)
    value = np.arange(1.0, 6.0)
    assert_values([xinit], [out], [value], [np.array([1.0 + 4.0, 2.0 + 5.0, 3.0 + 7.0])])


def test_seq_tap_bug_jeremiah() -> None:
    """TestExamples.test_seq_tap_bug_jeremiah: an output with the single tap -4 (a
    4-row initial value) returned per step as a second output."""
    seq = pt.matrix("seq")
    initial = pt.constant(np.zeros((4, 1)))
    _, delayed = pt.scan(lambda x, x_tm4: (x, x_tm4), sequences=seq,
                         outputs_info=[{"initial": initial, "taps": [-4]}, None])
    value = np.arange(10.0).reshape(-1, 1)
    expected = np.zeros((10, 1))
    expected[4:] = value[:-4]
    assert_values([seq], [delayed], [value], [expected])


def _delayed_rows(static_shape: bool) -> tuple[Variable, Variable, Variable, Variable]:
    """The loop of check_aliased_inner_outputs: each row fed back through tap -4, and
    the tap returned per step."""
    seq = pt.matrix("seq", shape=(10, 1) if static_shape else (None, None))
    init = pt.matrix("init", shape=(4, 1) if static_shape else (None, None))
    out_seq, out_seq_tm4 = pt.scan(lambda s, s_tm4: (s, s_tm4), sequences=seq,
                                   outputs_info=[{"initial": init, "taps": [-4]}, None])
    return seq, init, out_seq, out_seq_tm4


@pytest.mark.parametrize("static_shape", [True, False])
def test_aliased_inner_outputs(static_shape: bool) -> None:
    """ScanCompatibilityTests.check_aliased_inner_outputs (test_aliased_inner_outputs):
    a row fed back through tap -4 and the tap returned per step must not alias."""
    seq, init, out_seq, out_seq_tm4 = _delayed_rows(static_shape)
    delayed = np.zeros(10)
    delayed[4:] = np.arange(6)
    assert_values([seq, init], [pt.ravel(out_seq[-1]), pt.ravel(out_seq_tm4)],
                  [np.arange(10.0)[:, None], np.zeros((4, 1))], [np.array([9.0]), delayed])


@pytest.mark.parametrize("static_shape", [
    True,
    pytest.param(False, marks=pytest.mark.xfail(strict=True, reason=(
        "new: the shape of a trace row of unknown static shape still runs the loop "
        "(PyTensor's infer_shape removes it)"))),
])
def test_aliased_inner_outputs_shape_needs_no_loop(static_shape: bool) -> None:
    """ScanCompatibilityTests.check_aliased_inner_outputs: the shape of one row of the
    delayed trace is the initial value's row shape, computed without the loop."""
    seq, init, _, out_seq_tm4 = _delayed_rows(static_shape)
    shape_only = function([seq, init], [out_seq_tm4[1].shape])
    assert not any(isinstance(node.op, pt.Scan) for node in shape_only.graph.nodes)
    np.testing.assert_array_equal(shape_only(np.arange(10.0)[:, None], np.zeros((4, 1)))[0], [1])


def test_memory_reuse_with_outputs_as_inputs() -> None:
    """TestExamples.test_memory_reuse_with_outputs_as_inputs: per-step outputs that are
    the carries' taps themselves (or views and copies of them) beside an output with
    taps [-3, -2, -1]."""
    init = pt.matrix("init")

    def step(tap_m3: Variable, tap_m2: Variable, tap_m1: Variable) -> tuple[Variable, ...]:
        return tap_m2, tap_m1 * 1, tap_m2 + 0, tap_m2[::1], tap_m3 + tap_m2 + tap_m1

    outs = pt.scan(step, outputs_info=[None, None, None, None,
                                       {"initial": init, "taps": [-3, -2, -1]}], n_steps=3)
    states = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 12, 15], [18, 23, 28],
                       [33, 42, 51]], dtype="float64")
    expected = [states[1:4], states[2:5], states[1:4], states[1:4], states[3:6]]
    assert_values([init], list(outs), [np.arange(9.0).reshape(3, 3)], expected)


def test_use_scan_direct_output() -> None:
    """TestExamples.test_use_scan_direct_output: two carries' values entering each step
    (the initial value, then every row but the last)."""
    x, seq = pt.scalar("x"), pt.vector("seq")
    out1, out2 = pt.scan(lambda a, b, c: (a + b, b + c), sequences=seq,
                         outputs_info=[x, pt.zeros_like(x)])
    entering1 = pt.concatenate([x[None], out1])[:-1]
    entering2 = pt.concatenate([pt.zeros_like(x)[None], out2])[:-1]
    expected1, expected2 = [5.0], [0.0]
    for value in np.arange(3.0):
        expected2.append(expected1[-1] + expected2[-1])
        expected1.append(expected1[-1] + value)
    assert_values([x, seq], [entering1, entering2], [5.0, np.arange(4.0)],
                  [np.array(expected1), np.array(expected2)])


def test_use_scan_direct_output2() -> None:
    """TestExamples.test_use_scan_direct_output2: carries that are columns (a static
    length-1 axis) fed from a column sequence."""
    x, seq = pt.matrix("x", shape=(None, 1)), pt.matrix("seq", shape=(None, 1))
    out1, out2 = pt.scan(lambda a, b, c: (a + b, a + c), sequences=seq,
                         outputs_info=[x, pt.zeros_like(x)])
    x_value, seq_value = np.arange(4.0)[:, None], np.arange(4.0, 8.0)[:, None]
    first, second, expected1, expected2 = x_value, np.zeros_like(x_value), [], []
    for row in seq_value:
        first, second = row + first, row + second
        expected1.append(first)
        expected2.append(second)
    assert_values([x, seq], [out1, out2], [x_value, seq_value],
                  [np.array(expected1), np.array(expected2)])


# -- counts, closures and wrappers ------------------------------------------------------
def test_pickled_function_and_generator_one_output_scalar() -> None:
    """TestScan.test_pickling and TestExamples.test_generator_one_output_scalar: a
    generator (no sequence) with a symbolic int32 step count, through a pickled
    compiled function."""
    state, n_steps = pt.scalar("state"), pt.iscalar("n_steps")
    out = pt.scan(lambda x_tm1: 2 * x_tm1, [], state, [], n_steps=n_steps)
    restored = pickle.loads(pickle.dumps(function([state, n_steps], out)))
    expected = np.array([0.3 * 2 ** (k + 1) for k in range(5)])
    np.testing.assert_allclose(restored(0.3, 5), expected, rtol=1e-15)
    assert_values([state, n_steps], [out], [0.3, 5], [expected])


def test_only_nonseq_inputs_values() -> None:
    """TestScan.test_only_nonseq_inputs: a loop reading only a non-sequence stacks it
    n_steps times."""
    inp = pt.matrix("inp")
    out = pt.scan(lambda x: x, non_sequences=[inp], n_steps=2)
    value = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert_values([inp], [out], [value], [np.repeat(value[None], 2, axis=0)])


def test_constant_folding_n_steps() -> None:
    """test_constant_folding_n_steps: a loop over constants with a constant step
    count (everything can be folded)."""
    out = pt.scan(lambda x: x * 2, outputs_info=pt.ones(()), n_steps=10)
    dummy = pt.scalar("dummy")
    assert_values([dummy], [out + dummy * 0], [0.0], [2.0 ** np.arange(1, 11)])


def test_power_by_repeated_multiplication() -> None:
    """test_printing.py::test_debugprint_sitsot and TestScan.test_monitor_mode: A ** k
    by a loop whose carry starts at ones_like(A), symbolic k."""
    k, a = pt.iscalar("k"), pt.dvector("A")
    result = pt.scan(lambda prior, a: prior * a, outputs_info=pt.ones_like(a),
                     non_sequences=a, n_steps=k)
    value = np.array([2.0, 3.0, 0.1, 0.0, 1.0])
    assert_values([a, k], [result[-1], result], [value, 4],
                  [value**4, np.array([value**p for p in range(1, 5)])])


def test_polynomial_over_a_longer_range() -> None:
    """test_printing.py::test_debugprint_nitsot, TestExamples.test_outputs_info_not_typed:
    the sequences [coefficients, arange(10000)] give as many steps as coefficients."""
    coefficients, x = pt.vector("coefficients"), pt.scalar("x")
    full_range = pt.arange(10000)
    components = pt.scan(lambda c, power, free: c * (free**power), outputs_info=None,
                         sequences=[coefficients, full_range], non_sequences=x)
    summed = pt.scan(lambda c, power, prev, free: prev + c * (free**power),
                     outputs_info=pt.constant(0.0), sequences=[coefficients, full_range],
                     non_sequences=x)
    python_float = pt.scan(lambda c, power, prev, free: prev + c * (free**power),
                           outputs_info=0.0, sequences=[coefficients, full_range],
                           non_sequences=x)
    assert_values([coefficients, x], [components.sum(), summed[-1], python_float[-1]],
                  [np.array([1.0, 0.0, 2.0]), 3.0], [19.0, 19.0, 19.0])


def test_nested_scans() -> None:
    """test_printing.py::test_debugprint_nested_scans: a loop whose step runs the A ** k
    loop, with k and A non-sequences of the outer loop."""
    c, k, a = pt.dvector("c"), pt.iscalar("k"), pt.dvector("A")

    def a_to_the_k(a: Variable, k: Variable) -> Variable:
        result = pt.scan(lambda prior, a: prior * a, outputs_info=pt.ones_like(a),
                         non_sequences=a, n_steps=k)
        return result[-1]  # type: ignore[no-any-return]

    components = pt.scan(lambda c, power, some_a, some_k: c * (a_to_the_k(some_a, some_k) ** power),
                         outputs_info=None, sequences=[c, pt.arange(10)], non_sequences=[a, k])
    c_value, a_value = np.linspace(0.5, 1.5, 10), np.array([0.9, 1.1, -0.7])
    expected = sum(c_value[i] * (a_value**3) ** i for i in range(10)).sum()
    assert_values([c, k, a], [components.sum()], [c_value, 3, a_value], [expected])


def test_integer_mitsot() -> None:
    """test_printing.py::test_debugprint_mitsot: two int64 outputs with taps [-2, -1]
    (Fibonacci), 5 steps, added together."""
    a0, b0 = pt.vector("a0", dtype="int64"), pt.vector("b0", dtype="int64")
    a, b = pt.scan(lambda a_m2, a_m1, b_m2, b_m1: (a_m1 + a_m2, b_m1 + b_m2),
                   outputs_info=[{"initial": a0, "taps": [-2, -1]},
                                 {"initial": b0, "taps": [-2, -1]}], n_steps=5)
    start = np.arange(2, dtype="int64")
    assert_values([a0, b0], [a + b], [start, start], [2 * np.array([1, 2, 3, 5, 8])])


def test_each_kind_of_loop_value() -> None:
    """test_ScanInfo_totals: the loops of its cases (a sequence, per-step outputs with no
    input or a non-sequence, a carry, an integer while-loop carry, an output with the
    single tap -2, two carries), by value."""
    c = pt.scalar("c")
    outs = [
        pt.scan(lambda a_t: 2 * a_t, [pt.arange(10)], [{}]),
        pt.scan(lambda: pt.as_tensor(2.0), [], [{}], n_steps=3),
        pt.scan(lambda c: pt.as_tensor(2.0) * c, [], [{}], [c], n_steps=3),
        pt.scan(lambda a_tm1: 2 * a_tm1, [], [{"initial": pt.as_tensor(0.0), "taps": [-1]}],
                n_steps=3),
        pt.scan(lambda a_tm1: (a_tm1 + 1, pt.until(a_tm1 > 2)), [],
                [{"initial": pt.as_tensor(np.int64(1)), "taps": [-1]}], n_steps=3),
        pt.scan(lambda a_tm2: 2 * a_tm2, [],
                [{"initial": pt.as_tensor(np.array([0.0, 1.0])), "taps": [-2]}], n_steps=6),
        *pt.scan(lambda a_tm1, b_tm1: (2 * a_tm1, 2 * b_tm1), [],
                 [{"initial": pt.as_tensor(0.0), "taps": [-1]},
                  {"initial": pt.as_tensor(1.0), "taps": [-1]}], n_steps=10),
    ]
    expected: list[Any] = [
        2 * np.arange(10), np.full(3, 2.0), np.full(3, 2.0 * 1.5), np.zeros(3),
        np.array([2, 3, 4]), np.array([0.0, 2.0, 0.0, 4.0, 0.0, 8.0]), np.zeros(10),
        2.0 ** np.arange(1, 11),
    ]
    assert_values([c], outs, [1.5], expected)


def test_views_map_reduce_foldl_foldr() -> None:
    """test_views.py::test_map, test_reduce, test_foldl_memory_consumption,
    test_foldr_memory_consumption: the wrappers' values (reduce keeps no trace)."""
    v, s = pt.vector("v"), pt.scalar("s")
    mapped = pt.map(lambda x: abs(x), v, [], go_backwards=False)
    reduced = pt.reduce(lambda x, y: x + y, v, s)
    left = pt.foldl(lambda x, acc: acc * 10 + x, v, pt.constant(0.0))
    right = pt.foldr(lambda x, acc: acc * 10 + x, v, pt.constant(0.0))
    value = np.array([1.0, -2.0, 3.0, 4.0, -5.0])
    assert reduced.ndim == 0
    assert_values([v, s], [mapped, reduced, left, right], [value, 0.5],
                  [abs(value), value.sum() + 0.5, np.polyval(value, 10.0),
                   np.polyval(value[::-1], 10.0)])
