"""PyTensor's scan contract through the loop rewrites (issue 18): the numbers of
PyTensor's rewrite tests (`tests/scan/rewriting/test_trace.py`, `test_push_out.py`,
`test_merge.py`), which read parts of traces (shortened loops, kept last rows), push
work out of loops and merge loops. fgraph's rewrites differ from PyTensor's, so what is
pinned is the values: the reference evaluator on the unoptimized graph and the compiled
function (`fast_run`) against NumPy, and where PyTensor removes a loop entirely, that
the compiled graph has none."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable
from numba_backend import function
from rewrite import optimize
from tests.numba_backend.scan_contract import assert_values, assert_values_at

RNG = np.random.default_rng(1821)
MAP_WITH_N_STEPS = (
    "issue 18 defect: a map with explicit n_steps over a longer sequence fails to compile")


def _loops(compiled: Any) -> int:
    return sum(isinstance(node.op, pt.Scan) for node in compiled.graph.nodes)


# -- test_basic.py: equal loops ------------------------------------------------------------------
def test_hash_and_can_merge() -> None:
    """TestScan.test_hash and test_can_merge: loops with equal step functions over other
    inputs are equal ops with equal hashes; built twice over the same inputs they are
    one node (fgraph interns nodes), and with the sequences swapped they are not."""
    x, y, c = pt.vector("x"), pt.vector("y"), pt.scalar("c")
    first = pt.scan(lambda s: s + 1, x)
    second = pt.scan(lambda s: s + 1, y)
    assert first.owner is not None and second.owner is not None
    assert first.owner.op == second.owner.op and hash(first.owner.op) == hash(second.owner.op)

    def step(a: Variable, b: Variable, c: Variable) -> Variable:
        return a + b + c

    scan_a = pt.scan(step, sequences=[x, y], non_sequences=[c])
    scan_b = pt.scan(step, sequences=[x, y], non_sequences=[c])
    scan_c = pt.scan(step, sequences=[y, x], non_sequences=[c])
    assert scan_a.owner is scan_b.owner and scan_c.owner is not scan_a.owner


def test_hash_equality_after_inner_optimization() -> None:
    """TestScan.test_hash_equality_after_inner_optimization: bodies x + 0 and x * 1
    differ before optimizing and are the same loop after."""
    x0 = pt.scalar("x0")
    xs = pt.scan(lambda x: x + 0, outputs_info=[x0], n_steps=5)
    ys = pt.scan(lambda x: x * 1, outputs_info=[x0], n_steps=5)

    def loop_ops(graph: Graph) -> set[Any]:
        return {node.op for node in graph.nodes if isinstance(node.op, pt.Scan)}

    assert len(loop_ops(Graph([x0], [xs, ys]))) == 2
    assert len(loop_ops(optimize(Graph([x0], [xs, ys]), "fast_run"))) <= 1
    assert_values([x0], [xs, ys], [2.0], [np.full(5, 2.0)] * 2)


# -- test_trace.py: reading parts of traces ------------------------------------------------
@pytest.mark.parametrize("with_symbolic_slice", [False, True])
def test_reduced_number_of_steps(with_symbolic_slice: bool) -> None:
    """TestReduceNsteps.test_reduced_number_of_steps: seven maps read at a constant
    prefix, a constant or symbolic index, negative indices and symbolic slices."""
    u, idx, jdx = pt.vector("u"), pt.iscalar("idx"), pt.iscalar("jdx")
    x1, x2, x3, x4, x5, x6, x7 = pt.scan(lambda u_t: tuple(u_t + k for k in range(1, 8)), u)
    outs = [x1[:2], x2[4], x3[idx], x5[-10], x6[-jdx]]
    if with_symbolic_slice:
        outs += [x4[:idx], x7[:-jdx]]
    v_u = RNG.uniform(-5, 5, size=20)
    cases = []
    for i, j in ((3, 15), (3, 3), (16, 15), (-5, 15), (19, 15)):
        expected = [v_u[:2] + 1, v_u[4] + 2, v_u[i] + 3, v_u[-10] + 5, v_u[-j] + 6]
        if with_symbolic_slice:
            expected += [v_u[:i] + 4, v_u[:-j] + 7]
        cases.append(([v_u, i, j], expected))
    assert_values_at([u, idx, jdx], outs, cases)


def test_reduced_number_of_steps_constant() -> None:
    """TestReduceNsteps.test_reduced_number_of_steps_constant: the third-last of 10
    increments is 8."""
    x0 = pt.scalar("x0")
    xs = pt.scan(lambda xtm1: xtm1 + 1, outputs_info=[x0], n_steps=10)
    assert_values([x0], [xs[-3]], [0.0], [8.0])


def test_cannot_reduce_constant_number_of_steps() -> None:
    """TestReduceNsteps.test_cannot_reduce_constant_number_of_steps: a prefix of one
    carry beside the last value of another needs all the steps."""
    x0 = pt.scalar("x0")
    xs, ys = pt.scan(lambda xtm1, ytm1: (xtm1 + 1, ytm1 - 1), outputs_info=[x0, x0], n_steps=10)
    assert_values([x0], [xs[:5], ys[-1]], [0.0], [np.arange(1.0, 6.0), -10.0])


def test_reduce_trace_basic() -> None:
    """TestReduceTrace.test_basic: the last values of a per-step output, a carry and an
    output with taps [-1, -3] (which reads the initial value's third row)."""
    w_in2, w, w_out = pt.vector("w_in2"), pt.matrix("w"), pt.vector("w_out")
    w_in1, u1, u2, x0, y0 = (pt.matrix("w_in1"), pt.matrix("u1"), pt.vector("u2"),
                             pt.vector("x0"), pt.vector("y0"))

    def step(u1_t: Variable, u2_t: Variable, x_tm1: Variable, y_tm1: Variable,
             y_tm3: Variable, w_in1: Variable) -> list[Variable]:
        return [y_tm3 + 1, pt.dot(u1_t, w_in1) + u2_t * w_in2 + pt.dot(x_tm1, w),
                y_tm1 + pt.dot(x_tm1, w_out)]

    outs = pt.scan(step, [u1, u2], [None, {"initial": x0}, {"initial": y0, "taps": [-1, -3]}], w_in1)
    values: list[Any] = [RNG.uniform(-0.5, 0.5, size=2), RNG.uniform(-0.5, 0.5, size=(2, 2)),
                         RNG.uniform(-0.5, 0.5, size=2), RNG.uniform(-0.5, 0.5, size=(2, 2)),
                         RNG.uniform(-0.5, 0.5, size=(8, 2)), RNG.uniform(-0.5, 0.5, size=8),
                         RNG.uniform(-0.5, 0.5, size=2), RNG.uniform(size=3)]
    v_in2, v_w, v_out, v_in1, v_u1, v_u2, v_x0, v_y0 = values
    ys, x = list(v_y0), v_x0
    xs, dumps = [], []
    for t in range(8):
        dumps.append(ys[-3] + 1)
        ys.append(ys[-1] + x @ v_out)
        x = v_u1[t] @ v_in1 + v_u2[t] * v_in2 + x @ v_w
        xs.append(x)
    assert_values([w_in2, w, w_out, w_in1, u1, u2, x0, y0], [outs[0][-1], outs[1][-1], outs[2][-1]],
                  values, [dumps[-1], xs[-1], ys[-1]])


def test_store_steps() -> None:
    """TestReduceTrace.test_store_steps: traces read at -7, [-3:-1], [-6:] and -1, beside
    outputs with taps [-1, -2] and carries nobody reads."""
    u, x10, x20, x30, x40 = (pt.vector("u"), pt.vector("x10"), pt.scalar("x20"),
                             pt.vector("x30"), pt.scalar("x40"))
    outs = pt.scan(lambda u_t, *_: tuple(u_t + k for k in range(1, 8)), u,
                   [None, None, None, {"initial": x10, "taps": [-1, -2]}, x20,
                    {"initial": x30, "taps": [-1, -2]}, x40])
    x1, x2, x3, x4, x5 = outs[:5]
    v_u = RNG.uniform(-5, 5, size=20)
    assert_values([u, x10, x20, x30, x40], [x1[-7], x2[-3:-1], x3[-6:], x4[-1], x5[-1]],
                  [v_u, np.zeros(2), 0.0, np.zeros(2), 0.0],
                  [v_u[-7] + 1, v_u[-3:-1] + 2, v_u[-6:] + 3, v_u[-1] + 4, v_u[-1] + 5])


def test_does_not_duplicate_scan_nodes() -> None:
    """TestReduceTrace.test_does_not_duplicate_scan_nodes: a while-loop whose condition
    is its own carry (1: true) stops after one step, and compiles to at most one loop."""
    var = pt.scalar("var")
    values = pt.scan(lambda x: ([x], pt.until(x)), outputs_info=[var], n_steps=2)
    assert_values([var], [values], [1.0], [np.array([1.0])])
    assert _loops(function([var], [values])) <= 1


def test_while_scan_taps() -> None:
    """TestReduceTrace.test_while_scan_taps: Fibonacci from [1, 1] until a tap passes 34
    ends at 55; one step gives 2."""
    n_steps, x0 = pt.scalar("n_steps", dtype="int64"), pt.vector("x0")
    ys = pt.scan(lambda xtm2, xtm1: (xtm1 + xtm2, pt.until(xtm1 >= 34)),
                 outputs_info=[{"initial": x0, "taps": [-2, -1]}], n_steps=n_steps)
    assert_values_at([n_steps, x0], [ys[-1]], [([1000, np.ones(2)], [55.0]),
                                               ([1, np.ones(2)], [2.0])])


def test_while_scan_untraced_sit_sot_shape() -> None:
    """TestReduceTrace.test_while_scan_untraced_sit_sot_shape: the last values of a
    while-loop's carry and per-step output."""
    x0, n_steps = pt.scalar("x0"), pt.scalar("n_steps", dtype="int64")
    ys, zs = pt.scan(lambda xtm1: ((xtm1 + 1, xtm1 * 2), pt.until(xtm1 >= 10)),
                     outputs_info=[x0, None], n_steps=n_steps)
    assert_values([x0, n_steps], [ys[-1], zs[-1]], [0.0, 100], [11.0, 20.0])


@pytest.mark.parametrize("val_ndim", [0, 1])
@pytest.mark.parametrize("keep_beginning", [False, True])
def test_broadcasted_init(keep_beginning: bool, val_ndim: int) -> None:
    """TestReduceTrace.test_broadcasted_init: taps [-2, -1] from full((2,), val) over 100
    steps, the first or the last 50 values kept."""
    val = pt.tensor("val", shape=(1,) * val_ndim)
    ys = pt.scan(lambda *args: pt.add(*args),
                 outputs_info=[{"initial": pt.full((2,), val), "taps": (-2, -1)}], n_steps=100)
    out = ys[:-50] if keep_beginning else ys[-50:]
    fib = [0.5, 0.5]
    for _ in range(100):
        fib.append(fib[-1] + fib[-2])
    expected = np.array(fib[2:52] if keep_beginning else fib[-50:])
    assert_values([val], [out], [np.full((1,) * val_ndim, 0.5)], [expected], rtol=1e-14)


def test_symbolic_stop_not_dropped() -> None:
    """TestReduceTrace.test_symbolic_stop_not_dropped: a per-step output of 10 constant
    steps sliced with a symbolic stop."""
    x0, sym_stop = pt.scalar("x0"), pt.iscalar("sym_stop")
    _, ws = pt.scan(lambda xtm1: (xtm1 + 1, xtm1 * 2), outputs_info=[x0, None], n_steps=10)
    reference = np.arange(10.0) * 2
    assert_values_at([x0, sym_stop], [ws[3:sym_stop]],
                     [([0.0, stop], [reference[3:stop]]) for stop in (5, 8, 10)])


def test_idempotent() -> None:
    """TestReduceTrace.test_idempotent: optimizing an already optimized graph reading
    the last three values of a carry keeps them (8, 9, 10)."""
    x0 = pt.scalar("x0")
    acc = pt.scan(lambda prev: prev + 1, outputs_info=[x0], n_steps=10)
    once = optimize(Graph([x0], [acc[-3:]]), "fast_run")
    twice = optimize(once, "fast_run")
    for graph in (once, twice):
        compiled = function(list(graph.inputs), list(graph.outputs))
        np.testing.assert_allclose(compiled(0.0)[0], [8.0, 9.0, 10.0])


def test_scan_sit_sot_to_untraced() -> None:
    """test_trace.py::test_scan_sit_sot_to_untraced: a carry read whole, one read at its
    last value, a per-step output read at its last value and a carry nobody reads."""
    x0, y0, r0 = pt.vector("x0"), pt.vector("y0"), pt.vector("r0")

    def step(x_tm1: Variable, y_tm1: Variable, r_tm1: Variable) -> tuple[Variable, ...]:
        r = 1.0 - x_tm1
        return x_tm1 + 0.5 * r + 0.3 * r_tm1, y_tm1 + 1, x_tm1 * 2, r

    xs, ys, ws, _ = pt.scan(step, outputs_info=[x0, y0, None, r0], n_steps=10)
    x, y, r, trace, last_w = np.zeros(3), np.zeros(3), np.zeros(3), [], np.zeros(3)
    for _ in range(10):
        new_r = 1.0 - x
        last_w = x * 2
        x, y, r = x + 0.5 * new_r + 0.3 * r, y + 1, new_r
        trace.append(x)
    assert_values([x0, y0, r0], [xs, ys[-1], ws[-1]], [np.zeros(3)] * 3,
                  [np.array(trace), y, last_w])


# -- test_push_out.py: work moved out of loops ------------------------------------------------
def test_pushout_all() -> None:
    """TestPushOutDot.test_pushout_all: a loop reading only non-sequences repeats
    h @ (W1 + W2) five times, and compiles to no loop."""
    w1, w2, h0 = pt.matrix("w1"), pt.matrix("w2"), pt.vector("h0")
    o = pt.scan(lambda h, w1, w2: pt.dot(h, w1 + w2), non_sequences=[h0, w1, w2], n_steps=5)
    v_h, v_w1, v_w2 = RNG.uniform(size=2), RNG.uniform(size=(2, 2)), RNG.uniform(size=(2, 2))
    assert_values([h0, w1, w2], [o], [v_h, v_w1, v_w2], [np.tile(v_h @ (v_w1 + v_w2), (5, 1))])
    assert _loops(function([h0, w1, w2], [o])) == 0


def test_pushout_while() -> None:
    """TestPushOutDot.test_pushout_while: a while-loop over two sequences whose step is
    a product with a non-sequence; pushing it out of the loop keeps the stopping step
    (float32)."""
    w1, w2, steps = pt.fmatrix("w1"), pt.fmatrix("w2"), pt.fvector("steps")
    o = pt.scan(lambda step_idx, w1_row, w2: (pt.dot(w1_row, w2), pt.until(step_idx > 2)),
                sequences=[steps, w1], non_sequences=[w2], n_steps=5)
    v_w1, v_w2 = RNG.random((5, 5)).astype("float32"), RNG.random((5, 5)).astype("float32")
    expected = v_w1[:4] @ v_w2
    assert_values([w1, w2, steps], [o], [v_w1, v_w2, np.arange(5, dtype="float32")], [expected],
                  rtol=1e-5)


def test_pushout_nomodif() -> None:
    """TestPushOutDot.test_pushout_nomodif: a carry and the carry's entering value as
    a per-step output."""
    inp = pt.matrix("inp")
    i_t, i_tm1 = pt.scan(lambda i, i_tm1: (i + 10, i_tm1), sequences=[inp],
                         outputs_info=[np.zeros(2), None])
    val = np.arange(10.0).reshape(5, 2)
    assert_values([inp], [i_t, i_tm1], [val],
                  [val + 10, [[0.0, 0.0], [10.0, 11.0], [12.0, 13.0], [14.0, 15.0], [16.0, 17.0]]])


def test_pushout_seqs2_and_nonseq() -> None:
    """TestPushOutNonSeqScan.test_pushout_seqs2 and test_pushout_nonseq: a carry beside a
    constant per-step output; a per-step square of a constant non-sequence."""
    x = pt.matrix("x")
    squares, zeros = pt.scan(lambda x: [x * x, pt.constant(0)], n_steps=2, outputs_info=[x, None])
    (s, c) = pt.scan(lambda x: (x * x, x), non_sequences=[2.0], n_steps=2)
    value = np.array([[1.0, 2.0], [3.0, 0.5]])
    assert_values([x], [squares, zeros, s, c], [value],
                  [np.stack([value**2, value**4]), np.zeros(2, dtype="int64"), [4.0, 4.0], [2.0, 2.0]])


def test_dot_outputs() -> None:
    """TestPushOutAddScan.test_dot_not_output, test_dot_nitsot_output and
    test_dot_sitsot_output: products of per-step values with a non-sequence, as the
    Jacobian of v @ m, beside a square, and of a running sum."""
    v, m, a, b = pt.vector("v"), pt.matrix("m"), pt.matrix("a"), pt.matrix("b")
    jacobian = pt.jacobian(pt.dot(v, m), v)
    products, squares = pt.scan(lambda vect, mat: (pt.dot(vect**2, mat), vect**2),
                                outputs_info=[None] * 2, sequences=a, non_sequences=b)
    sums, summed_products = pt.scan(lambda seq, prev, mat: (prev + seq, pt.dot(prev + seq, mat)),
                                    outputs_info=[a[0], None], sequences=a, non_sequences=b)
    v_v, v_m = RNG.random(4), RNG.random((4, 5))
    v_a, v_b = RNG.random((3, 4)), RNG.random((4, 5))
    running = v_a[0] + np.cumsum(v_a, axis=0)
    assert_values([v, m, a, b], [jacobian, products, squares, sums, summed_products],
                  [v_v, v_m, v_a, v_b],
                  [v_m.T, (v_a**2) @ v_b, v_a**2, running, running @ v_b])


def test_sum_dot() -> None:
    """TestPushOutAddScan.test_sum_dot: a carry summing outer products of the rows of
    A and B is A.T @ B; its final value (PyTensor reads the raw buffer's last row, fgraph's
    reduce keeps no trace) compiles to no loop."""
    a, b = pt.matrix("A"), pt.matrix("B")

    def step(x1: Variable, x2: Variable, u: Variable) -> Variable:
        return u + pt.dot(x1, x2)

    sequences = [a[:, :, None], b[:, None, :]]
    s = pt.scan(step, sequences=sequences, outputs_info=[pt.zeros_like(a)])
    final = pt.reduce(step, sequences, pt.zeros_like(a))
    v_a, v_b = RNG.uniform(size=(5, 5)), RNG.uniform(size=(5, 5))
    assert_values([a, b], [s[-1], final], [v_a, v_b], [v_a.T @ v_b] * 2)
    assert _loops(function([a, b], [final])) == 0


def test_non_zero_init() -> None:
    """TestPushOutAddScan.test_non_zero_init: a carry from a non-zero constant summing
    products of three sequences' transformed rows."""
    input1, input2, input3 = pt.tensor3("input1"), pt.tensor3("input2"), pt.tensor3("input3")
    w_value, u_value = RNG.normal(size=(4, 5)), RNG.normal(size=(6, 7))
    init_value = RNG.normal(size=(3, 7))
    w, u_ = pt.constant(w_value), pt.constant(u_value)
    h = pt.scan(lambda s1, s2, s3, prev: prev + pt.dot(pt.dot(s1, w) + s3, pt.dot(s2, u_)),
                sequences=[input1, input2, input3], outputs_info=pt.constant(init_value))
    v1, v2, v3 = RNG.random((2, 3, 4)), RNG.random((2, 5, 6)), RNG.random((2, 3, 5))
    expected = init_value + sum((v1[t] @ w_value + v3[t]) @ (v2[t] @ u_value) for t in range(2))
    assert_values([input1, input2, input3], [h[-1]], [v1, v2, v3], [expected])


# -- test_merge.py: loops merged (or not) --------------------------------------------------------
def test_merge_basic() -> None:
    """TestScanMerge.test_basic: maps over two sequences with different, equal or
    unequal step counts, and with different truncate_gradient."""
    x, y = pt.vector("x"), pt.vector("y")
    outputs = [
        pt.scan(lambda s: s + 1, sequences=[x]), pt.scan(lambda s: s + 1, sequences=[y]),
        pt.scan(lambda s: s + 1, sequences=[x], n_steps=2),
        pt.scan(lambda s: s + 1, sequences=[y], n_steps=3),
        pt.scan(lambda s: s * 2, sequences=[x], n_steps=4),
        pt.scan(lambda s: s * 3, sequences=[y], n_steps=4),
        pt.scan(lambda s: s - 1, sequences=[x], truncate_gradient=1),
    ]
    v_x, v_y = RNG.random(6), RNG.random(5)
    assert_values([x, y], outputs, [v_x, v_y],
                  [v_x + 1, v_y + 1, v_x[:2] + 1, v_y[:3] + 1, v_x[:4] * 2, v_y[:4] * 3, v_x - 1])


def test_constant_inner_output() -> None:
    """TestScanMerge.test_constant_inner_output: two loops of 4 steps with a constant
    per-step output each."""
    x, y = pt.vector("x"), pt.vector("y")
    sx, cx = pt.scan(lambda s: (s + 1, pt.constant(3.0)), sequences=[x], n_steps=4)
    sy, cy = pt.scan(lambda s: (s + 1, pt.constant(3.0)), sequences=[y], n_steps=4)
    x_val, y_val = np.arange(4.0), np.arange(10.0, 14.0)
    compiled = function([x, y], [sx, cx, sy, cy])
    assert _loops(compiled) <= 1
    assert_values([x, y], [sx, cx, sy, cy], [x_val, y_val],
                  [x_val + 1, np.full(4, 3.0), y_val + 1, np.full(4, 3.0)])


def test_three_scans() -> None:
    """TestScanMerge.test_three_scans: three maps of 4 steps, the third over the first's
    trace (it can merge with either of the others, not both)."""
    x, y = pt.vector("x"), pt.vector("y")
    sy = pt.scan(lambda s: s + 1, sequences=[2 * y + 2], n_steps=4)
    sz = pt.scan(lambda s: s + 1, sequences=[pt.scan(lambda s: s + 1, sequences=[x], n_steps=4)],
                 n_steps=4)
    v_x, v_y = RNG.uniform(size=4), RNG.uniform(size=4)
    assert_values([x, y], [sy, sz], [v_x, v_y], [2 * v_y + 3, v_x + 2])


def test_no_cyclic_merge() -> None:
    """TestScanMerge.test_no_cyclic_merge: loops of 15 and 14 steps that read each
    other's traces both ways (merging both pairs would make a cycle)."""
    x = pt.vector("x")
    a_out = pt.scan(lambda p: 0.9 * p + 1.0, outputs_info=[x], n_steps=15)
    b_fwd = pt.scan(lambda p: 0.8 * p + 0.5, outputs_info=[x], n_steps=14)
    b_glue = pt.stack([x, *[b_fwd[i] for i in range(14)]])
    a_in = pt.scan(lambda s, p: 0.5 * p + s, sequences=[b_glue], outputs_info=[pt.zeros(3)],
                   n_steps=15)
    b_sm = pt.scan(lambda s, p: 0.5 * p + s, sequences=[a_out[:-1]], outputs_info=[pt.zeros(3)],
                   n_steps=14)

    def recurrence(start: Any, factor: float, shift: float, steps: int) -> Any:
        values, p = [], start
        for _ in range(steps):
            p = factor * p + shift
            values.append(p)
        return np.array(values)

    def decayed(rows: Any) -> Any:
        p = np.zeros(3)
        for row in rows:
            p = 0.5 * p + row
        return p

    v_x = np.array([1.0, 2.0, 3.0])
    a_ref, b_ref = recurrence(v_x, 0.9, 1.0, 15), recurrence(v_x, 0.8, 0.5, 14)
    assert_values([x], [a_in[-1] + b_sm[-1]], [v_x],
                  [decayed(np.vstack([v_x, b_ref])) + decayed(a_ref[:-1])])


def test_while_scan() -> None:
    """TestScanMerge.test_while_scan: while-loops over the same sequence with the same
    or different stopping conditions each stop at their own step."""
    x, y = pt.vector("x"), pt.vector("y")
    add = pt.scan(lambda s: (s + 1, pt.until(s > 5)), sequences=[x])
    sub = pt.scan(lambda s: (s - 1, pt.until(s > 5)), sequences=[x])
    sub_alt = pt.scan(lambda s: (s - 1, pt.until(s > 4)), sequences=[x])
    sub_y = pt.scan(lambda s: (s - 1, pt.until(s > 5)), sequences=[y])
    value = np.arange(10.0)
    assert_values([x, y], [add, sub, sub_alt, sub_y], [value, value + 3],
                  [value[:7] + 1, value[:7] - 1, value[:6] - 1, value[:4] + 2])


def test_while_scan_nominal_dependency() -> None:
    """TestScanMerge.test_while_scan_nominal_dependency: two while-loops whose
    conditions read different sequences or bounds stop at their own steps."""
    c1, c2 = pt.scalar("c1"), pt.scalar("c2")
    x, y, z = pt.vector("x", shape=(5,)), pt.vector("y", shape=(5,)), pt.vector("z", shape=(5,))

    def add(s1: Variable, s2: Variable, const: Variable) -> Any:
        return s1 + 1, pt.until(s2 > const)

    def sub(s1: Variable, s2: Variable, const: Variable) -> Any:
        return s1 - 1, pt.until(s2 > const)

    outs = [pt.scan(add, sequences=[x, z], non_sequences=[c1]),
            pt.scan(sub, sequences=[y, -z], non_sequences=[c1]),
            pt.scan(sub, sequences=[y, z], non_sequences=[c2]),
            pt.scan(sub, sequences=[y, z], non_sequences=[c1])]
    zeros, ramp = np.zeros(5), np.arange(5.0)
    assert_values_at([x, y, z, c1, c2], outs, [
        ([zeros, zeros, ramp, 0.0, 1.0], [np.ones(2), -np.ones(5), -np.ones(3), -np.ones(2)]),
        ([zeros, zeros, ramp, 3.0, 1.0], [np.ones(5), -np.ones(5), -np.ones(3), -np.ones(5)]),
    ])
