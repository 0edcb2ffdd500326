"""PyTensor's scan contract, forward values of while-loops, explicit state and nesting
(issue 18): `until`, step counts from `n_steps`, PyTensor's shared-variable updates
written as explicit carries, random states threaded as carries, loops inside loops and
batched loops. Each test mirrors the PyTensor test its docstring names
(`tests/scan/test_basic.py`) and checks the reference evaluator on the unoptimized
graph and the compiled function (`fast_run`) against a NumPy loop."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Variable, evaluate
from numba_backend import function
from ops.random_draw import state_to_array
from tests.numba_backend.scan_contract import assert_values, assert_values_at

RNG = np.random.default_rng(1818)


def _has_loop(compiled: Any) -> bool:
    return any(isinstance(node.op, pt.Scan) for node in compiled.graph.nodes)


# -- while-loops and step counts ---------------------------------------------------------
def test_while() -> None:
    """TestScan.test_while and test_while_infer_shape: the loop stops after the first
    step whose condition holds (24 of 50 rows), and the trace's length says so."""
    x = pt.vector("x")
    out = pt.scan(lambda x_t: (x_t + 1, pt.until(x_t > 3)), x)
    value = np.zeros(50)
    value[23] = 4
    assert_values([x], [out, out.shape[0]], [value], [value[:24] + 1, np.int64(24)])


def test_infer_shape_nsteps_smaller_seq_length() -> None:
    """TestScan.test_infer_shape_nsteps_smaller_seq_length: n_steps=20 over 30 rows gives
    traces of 20 rows, whose lengths need no loop."""
    x = pt.vector("x")
    o1, o2 = pt.scan(lambda x, y: (x + 1, y + x), sequences=x, outputs_info=[None, x[0]],
                     n_steps=20)
    lengths = function([x], [o1.shape[0], o2.shape[0]])
    assert not _has_loop(lengths)
    assert [int(n) for n in lengths(np.ones(30))] == [20, 20]


def test_nsteps_smaller_than_seq_length_values() -> None:
    """TestScan.test_infer_shape_nsteps_smaller_seq_length, by value: the per-step output
    and the carry over the first 20 of 30 rows."""
    x = pt.vector("x")
    o1, o2 = pt.scan(lambda x, y: (x + 1, y + x), sequences=x, outputs_info=[None, x[0]],
                     n_steps=20)
    value = np.arange(30.0)
    assert_values([x], [o1, o2], [value], [value[:20] + 1, np.cumsum(value[:20])])


def test_map_nsteps_smaller_than_seq_length() -> None:
    """TestScan.test_infer_shape_nsteps_smaller_seq_length without the carry: a map of
    20 steps over 30 rows."""
    x = pt.vector("x")
    out = pt.scan(lambda x: x + 1, sequences=x, n_steps=20)
    value = np.arange(30.0)
    assert_values([x], [out], [value], [value[:20] + 1])


def test_condition_hidden_inp() -> None:
    """TestExamples.test_condition_hidden_inp: a while-loop of two integer carries whose
    condition reads a closed-over float bound; n_steps is a symbolic int32 bound."""
    max_value, n_steps = pt.scalar("max_value"), pt.iscalar("n_steps")

    def accumulate(prev: Variable, step: Variable) -> Any:
        new = prev + step
        return [new, step + 1], pt.until(new > max_value)

    total, steps = pt.scan(accumulate, outputs_info=[0, 0], n_steps=n_steps)
    expected_total, expected_steps, prev, step = [], [], 0, 0
    for _ in range(100):
        prev, step = prev + step, step + 1
        expected_total.append(prev)
        expected_steps.append(step)
        if prev > 100:
            break
    assert_values_at([max_value, n_steps], [total, steps], [
        ([100.0, 100], [np.array(expected_total), np.array(expected_steps)]),
        ([100.0, 3], [np.array(expected_total[:3]), np.array(expected_steps[:3])]),
    ])


def test_output_storage_reuse() -> None:
    """test_output_storage_reuse: a loop whose step runs a while-loop of n - 1 steps
    (n from the outer sequence [3, 2, 1], so the last inner loop runs no step)."""

    def inner_total(n: Variable) -> Variable:
        zs = pt.scan(lambda z: (z + 1, pt.until(z > 2)),
                     outputs_info=[{"taps": [-1], "initial": pt.as_tensor(0.0)}], n_steps=n - 1)
        return zs.sum()  # type: ignore[no-any-return]

    seq = pt.vector("seq", dtype="int64")
    out = pt.scan(inner_total, outputs_info=[None], sequences=[seq])
    assert_values([seq], [out], [np.array([3, 2, 1])], [np.array([3.0, 1.0, 0.0])])


# -- PyTensor's shared-variable updates as explicit carries ------------------------------
def test_shared_arguments_with_updates() -> None:
    """TestScan.test_shared_arguments_with_updates: weights updated every step (carries
    W1, W2), an output with taps [-3, -2, -1], a carry and a per-step output."""
    u1, u2, y0, y1 = pt.matrix("u1"), pt.matrix("u2"), pt.matrix("y0"), pt.vector("y1")
    w1, w2 = pt.matrix("w1"), pt.matrix("w2")

    def step(u1_t: Variable, u2_t: Variable, y0_tm3: Variable, y0_tm2: Variable,
             y0_tm1: Variable, y1_tm1: Variable, w1: Variable, w2: Variable) -> tuple[Variable, ...]:
        y0_t = pt.dot(pt.dot(u1_t, w1), w2) + 0.1 * y0_tm1 + 0.33 * y0_tm2 + 0.17 * y0_tm3
        return y0_t, pt.dot(u2_t, w2) + y1_tm1, pt.dot(u1_t, w1), w1 + 0.1, w2 + 0.05

    ys0, ys1, ys2, w1s, w2s = pt.scan(
        step, [u1, u2], [{"initial": y0, "taps": [-3, -2, -1]}, y1, None, w1, w2])
    values = [RNG.random((3, 2)), RNG.random((3, 3)), RNG.random((3, 2)), RNG.random(2),
              RNG.random((2, 3)), RNG.random((3, 2))]
    v_u1, v_u2, v_y0, v_y1, v_w1, v_w2 = values
    np_y0, np_y1, np_y2 = list(v_y0), [v_y1], []
    for t in range(3):
        np_y0.append(v_u1[t] @ v_w1 @ v_w2 + 0.1 * np_y0[-1] + 0.33 * np_y0[-2] + 0.17 * np_y0[-3])
        np_y1.append(v_u2[t] @ v_w2 + np_y1[-1])
        np_y2.append(v_u1[t] @ v_w1)
        v_w1, v_w2 = v_w1 + 0.1, v_w2 + 0.05
    assert_values([u1, u2, y0, y1, w1, w2], [ys0, ys1, ys2, w1s[-1], w2s[-1]], values,
                  [np.array(np_y0[3:]), np.array(np_y1[1:]), np.array(np_y2), v_w1, v_w2])


def test_only_shared_no_input_no_output() -> None:
    """TestScan.test_only_shared_no_input_no_output: a state doubled n_steps times
    (symbolic int32), only its final value kept."""
    state, n_steps = pt.scalar("state"), pt.iscalar("n_steps")
    final = pt.reduce(lambda s: 2 * s, None, state, n_steps=n_steps)
    assert_values([state, n_steps], [final], [0.7, 3], [0.7 * 2**3])


def test_shared_updates_and_memory_aliasing() -> None:
    """TestScan.test_shared_updates and test_shared_memory_aliasing_updates: integer
    carries x <- x + 1, y <- x for 10 steps; the two results are distinct arrays."""
    x0 = pt.scalar("x0", dtype="int64")
    x, y = pt.reduce(lambda x, y: (x + 1, x), None, [x0, x0], n_steps=10)
    assert_values([x0], [x, y], [1], [np.int64(11), np.int64(10)])
    got_x, got_y = function([x0], [x, y])(1)
    assert not np.may_share_memory(got_x, got_y)


# -- random states threaded as carries -----------------------------------------------------
def test_rng_outputs_info() -> None:
    """test_rng_outputs_info: x_t ~ normal(x_{t-1}) with the generator state a carry;
    the draws and the final state are NumPy's."""
    s0 = pt.random.state("s0")
    s1, x0 = pt.random.normal(s0, 0.0)

    def step(prev_x: Variable, prev_state: Variable) -> tuple[Variable, Variable]:
        next_state, next_x = pt.random.normal(prev_state, prev_x)
        return next_x, next_state

    xs, states = pt.scan(step, outputs_info=[x0, s1], n_steps=10)
    reference = np.random.default_rng(0)
    expected = [reference.normal(0)]
    for _ in range(10):
        expected.append(reference.normal(expected[-1]))
    final_state = state_to_array(dict(reference.bit_generator.state))
    assert_values([s0], [xs, states[-1]], [pt.random.seed(0)],
                  [np.array(expected[1:]), final_state], rtol=1e-14)


def test_simple_shared_random() -> None:
    """TestScan.test_simple_shared_random: five uniform(-1, 1) pairs per call; a second
    call from the returned state continues NumPy's stream."""
    s0 = pt.random.state("s0")
    draws, states = pt.scan(lambda s: pt.random.uniform(s, -1, 1, size=(2,))[::-1],
                            outputs_info=[None, s0], n_steps=5)
    reference = np.random.default_rng(5).uniform(-1, 1, size=(10, 2))
    f = function([s0], [draws, states[-1]])
    first, state = f(pt.random.seed(5))
    second, _ = f(state)
    np.testing.assert_allclose(first, reference[:5], rtol=1e-14)
    np.testing.assert_allclose(second, reference[5:], rtol=1e-14)
    assert_values([s0], [draws], [pt.random.seed(5)], [reference[:5]], rtol=1e-14)


def test_random_as_input_to_scan() -> None:
    """TestScan.test_random_as_input_to_scan: a draw made before the loop is the same
    non-sequence at every step."""
    x, s0 = pt.matrix("x"), pt.random.state("s0")
    _, y = pt.random.binomial(s0, 1, x, size=x.shape)
    z = pt.scan(lambda a: a, non_sequences=y, n_steps=2)
    p = RNG.uniform(size=(10, 10))
    drawn = np.random.default_rng(3).binomial(1, p, size=p.shape)
    assert_values([x, s0], [y, z], [p, pt.random.seed(3)], [drawn, np.stack([drawn, drawn])])


def test_inner_graph_cloning() -> None:
    """TestScan.test_inner_graph_cloning: a draw inside the step (its state a carry)
    differs at every step; a draw made outside and closed over is the same at every
    step."""
    s_inner, s_outer = pt.random.state("s_inner"), pt.random.state("s_outer")
    _, z = pt.random.normal(s_outer, 0.0, 1.0)

    def step(acc: Variable, state: Variable) -> tuple[Variable, ...]:
        next_state, r = pt.random.normal(state, 0.0, 1.0)
        return r + z, next_state, z

    res, _, z_res = pt.scan(step, outputs_info=[pt.as_tensor(0.0), s_inner, None], n_steps=4)
    for got_res, got_z in (evaluate([res, z_res], {s_inner: pt.random.seed(1), s_outer: pt.random.seed(2)}),
                           function([s_inner, s_outer], [res, z_res])(pt.random.seed(1), pt.random.seed(2))):
        assert len(set(np.asarray(got_res).tolist())) == 4
        assert len(set(np.asarray(got_z).tolist())) == 1


def test_gibbs_chain() -> None:
    """TestExamples.test_gibbs_chain: ten steps of a float32 Gibbs sampler whose
    binomial draws share one generator state (a carry)."""
    w_value = (RNG.random((20, 30)) - 0.5).astype("float32")
    bvis_value = (RNG.random(20) - 0.5).astype("float32")
    bhid_value = (RNG.random(30) - 0.5).astype("float32")
    vsample_value = RNG.binomial(1, 0.5, size=(3, 20)).astype("float32")
    w, bvis, bhid = pt.fmatrix("w"), pt.fvector("bvis"), pt.fvector("bhid")
    vsample, s0 = pt.fmatrix("vsample"), pt.random.state("s0")

    def step(v_tm1: Variable, state: Variable) -> tuple[Variable, Variable]:
        hmean = pt.sigmoid(pt.dot(v_tm1, w) + bhid)
        state, hsample = pt.random.binomial(state, 1, hmean, size=hmean.shape)
        vmean = pt.sigmoid(pt.dot(pt.cast(hsample, "float32"), w.T) + bvis)
        state, vsample_t = pt.random.binomial(state, 1, vmean, size=vmean.shape)
        return pt.cast(vsample_t, "float32"), state

    samples, _ = pt.scan(step, outputs_info=[vsample, s0], n_steps=10)
    reference, v = np.random.default_rng(9), vsample_value
    for _ in range(10):
        hmean = 1 / (1 + np.exp(-(v @ w_value + bhid_value)))
        hsample = reference.binomial(1, hmean, size=hmean.shape).astype("float32")
        vmean = 1 / (1 + np.exp(-(hsample @ w_value.T + bvis_value)))
        v = reference.binomial(1, vmean, size=vmean.shape).astype("float32")
    assert_values([w, bvis, bhid, vsample, s0], [samples[-1]],
                  [w_value, bvis_value, bhid_value, vsample_value, pt.random.seed(9)], [v])


@pytest.mark.parametrize("steps", [1, 5])
def test_scan_mapped_and_non_traced_output_ordering(steps: int) -> None:
    """test_scan_mapped_and_non_traced_output_ordering: a state carry listed before,
    after or between per-step outputs keeps its place and its type."""
    s0 = pt.random.state("s0")

    def draw(state: Variable) -> tuple[Variable, Variable]:
        next_state, x = pt.random.normal(state)
        return x, next_state

    xs1, states1 = pt.scan(draw, outputs_info=[None, s0], n_steps=steps)
    states2, xs2 = pt.scan(lambda s: draw(s)[::-1], outputs_info=[s0, None], n_steps=steps)
    xs3, states3, xs4, xs5 = pt.scan(lambda s: (draw(s)[0], draw(s)[1], draw(s)[0] + 1,
                                                draw(s)[0] + 2),
                                     outputs_info=[None, s0, None, None], n_steps=steps)
    for xs in (xs1, xs2, xs3, xs4, xs5):
        assert xs.dtype == "float64" and xs.ndim == 1
    for states in (states1, states2, states3):
        assert states.type.shape[1:] == s0.type.shape and states.dtype == s0.dtype
    expected = np.random.default_rng(4).normal(size=steps)
    assert_values([s0], [xs1, xs2, xs3, xs4, xs5], [pt.random.seed(4)],
                  [expected, expected, expected, expected + 1, expected + 2], rtol=1e-14)


@pytest.mark.parametrize("steps", [0, 1, 3])
def test_zero_steps_untraced_sit_sot(steps: int) -> None:
    """test_zero_steps_untraced_sit_sot, test_single_step_untraced_sit_sot and
    TestReduceTrace.test_0_steps_does_not_point_to_unitialized_memory: after a symbolic
    number of steps
    (zero included) the final value of a carry is its initial value advanced that many
    steps, twice in a row."""
    s0, n_steps = pt.random.state("s0"), pt.iscalar("n_steps")
    final_state, final_x = pt.reduce(lambda s, x: pt.random.normal(s, x), None,
                                     [s0, pt.as_tensor(np.pi)], n_steps=n_steps)
    reference, x = np.random.default_rng(6), np.pi
    for _ in range(steps):
        x = reference.normal(x)
    f = function([s0, n_steps], [final_x, final_state])
    for _ in range(2):
        got_x, got_state = f(pt.random.seed(6), steps)
        assert float(got_x) == pytest.approx(x, rel=1e-14)
        np.testing.assert_array_equal(got_state, state_to_array(dict(reference.bit_generator.state)))
    assert_values([s0, n_steps], [final_x], [pt.random.seed(6), steps], [x], rtol=1e-14)


@pytest.mark.parametrize("size", [[1, 2], [], [3]], ids=["symbolic", "empty", "constant"])
def test_inner_get_vector_length(size: list[int]) -> None:
    """test_inner_get_vector_length: a shape vector passed as a non-sequence keeps its
    length inside the step, so each step's draw has that shape (10 steps: (10, 1, 2),
    (10,), (10, 3)); symbolic entries come from int64 inputs."""
    s1, s2, s0 = pt.scalar("s1", dtype="int64"), pt.scalar("s2", dtype="int64"), pt.random.state("s0")
    shape = pt.stack([s1, s2]) if len(size) == 2 else pt.as_tensor(np.array(size, dtype="int64"))

    def step(state: Variable, shape: Variable) -> tuple[Variable, Variable]:
        next_state, draw = pt.random.normal(state, size=shape)
        return draw, next_state

    draws, _ = pt.scan(step, outputs_info=[None, s0], non_sequences=[shape], n_steps=10)
    assert draws.ndim == 1 + len(size)
    reference = np.random.default_rng(8)
    expected = np.array([reference.normal(size=size) for _ in range(10)])
    assert_values([s1, s2, s0], [draws.shape, draws], [1, 2, pt.random.seed(8)],
                  [np.array((10, *size)), expected], rtol=1e-14)


# -- batching ---------------------------------------------------------------------------------
def test_blockwise_scan() -> None:
    """TestScan.test_blockwise_scan: a loop over a scalar carry, vectorized over a
    vector of initial values."""
    x = pt.tensor("x", shape=())
    out = pt.scan(lambda x: x + 1, outputs_info=[x], n_steps=10)
    x_vec = pt.tensor("x_vec", shape=(None,))
    (out_vec,) = pt.vectorize_graph([out], {x: x_vec})
    assert_values([x_vec], [out_vec], [np.array([1.0, 2.0, 3.0])],
                  [np.arange(2.0, 12.0) + np.arange(3.0).reshape(-1, 1)])


def test_blockwise_while_scan() -> None:
    """TestScan.test_blockwise_scan with an until condition: the vectorized last value
    is each entry's own last value (every entry stops once its carry passes 4, after a
    different number of steps)."""
    x = pt.tensor("x", shape=())
    out = pt.scan(lambda x: (x + 1, pt.until(x + 1 > 4)), outputs_info=[x], n_steps=10)
    x_vec = pt.tensor("x_vec", shape=(None,))
    (last_vec,) = pt.vectorize_graph([out[-1]], {x: x_vec})
    assert_values([x_vec], [last_vec], [np.array([1.0, 2.0, 3.0])], [np.full(3, 5.0)])
