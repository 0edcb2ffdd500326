"""`pt.scan` through the reference evaluator: values against NumPy loops, the API's
forms (taps, while-loops, wrappers, closures), build- and run-time errors, and the
representation (equal loops are equal ops; printing, digests, pickling)."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, check_graph, dprint, evaluate
from ops.scan_op import Scan

Array = np.ndarray[Any, np.dtype[Any]]


def _nodes(outputs: list[Variable]) -> tuple[Any, ...]:
    from fgraph import toposort

    return toposort(outputs)


def test_seed_recurrence_values() -> None:
    x0 = pt.scalar("x0")
    ys = pt.scan(lambda prev: prev**2, outputs_info=[x0], n_steps=4)
    (got,) = evaluate([ys], {x0: 1.1})
    np.testing.assert_allclose(got, [1.1**2, 1.1**4, 1.1**8, 1.1**16])
    assert ys.type.shape == (4,)  # a constant step count gives the trace a static length


def test_sequences_non_sequences_and_several_outputs() -> None:
    xs = pt.vector("xs")
    scale = pt.scalar("scale")

    def step(x: Variable, total: Variable, s: Variable) -> tuple[Variable, Variable]:
        return total + x * s, x * 2

    totals, doubled = pt.scan(step, sequences=[xs], outputs_info=[pt.constant(0.0), None],
                              non_sequences=[scale])
    values = np.array([1.0, 2.0, 3.0])
    got_totals, got_doubled = evaluate([totals, doubled], {xs: values, scale: 10.0})
    np.testing.assert_allclose(got_totals, np.cumsum(values * 10))
    np.testing.assert_allclose(got_doubled, values * 2)


def test_output_taps_fibonacci() -> None:
    start = pt.vector("start")
    fib = pt.scan(lambda a, b: a + b, outputs_info=[{"initial": start, "taps": [-2, -1]}],
                  n_steps=8)
    (got,) = evaluate([fib], {start: np.array([0.0, 1.0])})
    np.testing.assert_allclose(got, [1, 2, 3, 5, 8, 13, 21, 34])


def test_sequence_taps_negative_zero_positive() -> None:
    s = pt.vector("s")
    out = pt.scan(lambda a, b, c: a + 10 * b + 100 * c,
                  sequences=[{"input": s, "taps": [-1, 0, 2]}])
    values = np.arange(6.0)
    expected = [values[t - 1] + 10 * values[t] + 100 * values[t + 2] for t in range(1, 4)]
    np.testing.assert_allclose(evaluate([out], {s: values})[0], expected)


def test_n_steps_shorter_than_sequence_and_symbolic() -> None:
    xs = pt.vector("xs")
    n = pt.scalar("n", dtype="int32")
    out = pt.scan(lambda x: x + 1, sequences=[xs], n_steps=n)
    assert out.type.shape == (None,)
    np.testing.assert_allclose(evaluate([out], {xs: np.arange(5.0), n: 3})[0], [1, 2, 3])


def test_while_loop_stops_after_the_first_true_step() -> None:
    x0 = pt.scalar("x0")
    out = pt.scan(lambda p: (p * 2, pt.until(p * 2 > 100)), outputs_info=[x0], n_steps=50)
    np.testing.assert_allclose(evaluate([out], {x0: 1.0})[0], 2.0 ** np.arange(1, 8))
    # The bound wins when the condition never holds.
    np.testing.assert_allclose(evaluate([out], {x0: -1.0})[0], -(2.0 ** np.arange(1, 51)))


def test_go_backwards_and_wrappers() -> None:
    v = pt.vector("v")
    values = np.array([1.0, 2.0, 3.0])
    backwards = pt.scan(lambda a, acc: acc * 10 + a, sequences=[v],
                        outputs_info=[pt.constant(0.0)], go_backwards=True)
    mapped = pt.map(lambda a: a * 2, v)
    summed = pt.reduce(lambda a, acc: acc + a, v, pt.constant(0.0))
    left = pt.foldl(lambda a, acc: acc * 10 + a, v, pt.constant(0.0))
    right = pt.foldr(lambda a, acc: acc * 10 + a, v, pt.constant(0.0))
    got = evaluate([backwards, mapped, summed, left, right], {v: values})
    np.testing.assert_allclose(got[0], [3, 32, 321])
    np.testing.assert_allclose(got[1], values * 2)
    assert got[2] == 6 and got[3] == 123 and got[4] == 321
    assert summed.ndim == 0  # reduce keeps no trace


def test_zero_steps() -> None:
    x0 = pt.vector("x0", shape=(2,))
    traced = pt.scan(lambda p: p * 2, outputs_info=[x0], n_steps=0)
    final = pt.reduce(lambda p: p * 2, None, x0, n_steps=0)
    per_step = pt.scan(lambda p: (p * 2, p.sum()), outputs_info=[x0, None], n_steps=0)
    got = evaluate([traced, final, per_step[1]], {x0: np.array([3.0, 4.0])})
    assert got[0].shape == (0, 2)
    np.testing.assert_allclose(got[1], [3.0, 4.0])
    assert got[2].shape == (0,)


def test_closure_variables_become_non_sequences_and_invariant_work_stays_outside() -> None:
    x0 = pt.vector("x0")
    w = pt.matrix("w")
    b = pt.vector("b")
    shifted = w @ b  # reads no loop value: computed once, before the loop
    out = pt.scan(lambda h: pt.tanh(h + shifted), outputs_info=[x0], n_steps=3)
    (loop,) = [node for node in _nodes([out]) if isinstance(node.op, Scan)]
    inner_ops = {type(node.op).__name__ for node in loop.op.inner_graph.nodes}
    assert "MatMul" not in inner_ops
    values: dict[Variable, Array] = {x0: np.zeros(2), w: np.eye(2), b: np.array([0.5, -0.5])}
    h = values[x0]
    expected = []
    for _ in range(3):
        h = np.tanh(h + values[w] @ values[b])
        expected.append(h)
    np.testing.assert_allclose(evaluate([out], values)[0], expected)


def test_nested_loops() -> None:
    m = pt.matrix("m")

    def row_total(row: Variable) -> Variable:
        result: Variable = pt.reduce(lambda a, acc: acc + a * a, row, pt.constant(0.0))
        return result

    out = pt.map(row_total, m)
    values = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(evaluate([out], {m: values})[0], (values**2).sum(axis=1))
    check_graph(Graph([m], [out]))


def test_integer_carry_counts_steps() -> None:
    x0 = pt.scalar("x0")
    count, value = pt.scan(lambda c, p: (c + 1, p * 3), outputs_info=[pt.constant(0), x0],
                           n_steps=4)
    got = evaluate([count, value], {x0: 1.0})
    np.testing.assert_array_equal(got[0], [1, 2, 3, 4])
    np.testing.assert_allclose(got[1], [3, 9, 27, 81])


# -- errors ------------------------------------------------------------------------------
def test_build_errors_name_the_argument() -> None:
    x0 = pt.scalar("x0")
    with pytest.raises(TypeError, match=r"output 0 .* float32.*outputs_info\[0\]"):
        pt.scan(lambda p: pt.cast(p, "float32"), outputs_info=[x0], n_steps=2)
    with pytest.raises(TypeError, match=r"output 0 .*float64\(2,\).*carry float64\(\)"):
        pt.scan(lambda p: pt.stack([p, p]), outputs_info=[x0], n_steps=2)
    with pytest.raises(ValueError, match="returned 2 outputs, but outputs_info has 1"):
        pt.scan(lambda p: (p, p), outputs_info=[x0], n_steps=2)
    with pytest.raises(TypeError, match=r"sequences\[0\] is a scalar"):
        pt.scan(lambda a: a, sequences=[x0])
    with pytest.raises(TypeError, match="n_steps must be an integer"):
        pt.scan(lambda p: p, outputs_info=[x0], n_steps=2.5)
    with pytest.raises(TypeError, match="n_steps must be an integer scalar"):
        pt.scan(lambda p: p, outputs_info=[x0], n_steps=x0)
    with pytest.raises(ValueError, match="give n_steps or at least one sequence"):
        pt.scan(lambda p: p, outputs_info=[x0])
    with pytest.raises(ValueError, match=r"taps \[-2, -1\] need an initial value with 2 rows"):
        one_row = pt.vector("one_row", shape=(1,))
        pt.scan(lambda a, b: a + b, outputs_info=[{"initial": one_row, "taps": [-2, -1]}],
                n_steps=2)
    with pytest.raises(TypeError, match="no hidden updates"):
        pt.scan(lambda p: {p: p}, outputs_info=[x0], n_steps=2)


def test_run_time_errors_in_evaluate() -> None:
    xs = pt.vector("xs")
    n = pt.scalar("n", dtype="int64")
    out = pt.scan(lambda x: x + 1, sequences=[xs], n_steps=n)
    with pytest.raises(ValueError, match="n_steps is -1; it must be >= 0"):
        evaluate([out], {xs: np.zeros(3), n: -1})
    with pytest.raises(ValueError, match="sequence 0 has 3 rows, fewer than n_steps=4"):
        evaluate([out], {xs: np.zeros(3), n: 4})
    x0 = pt.vector("x0")
    grows = pt.scan(lambda p: pt.concatenate([p, p])[: p.shape[0] + 1], outputs_info=[x0],
                    n_steps=2)
    with pytest.raises(ValueError, match="carry 0 changed shape from"):
        evaluate([grows], {x0: np.zeros(2)})


# -- representation ---------------------------------------------------------------------
def test_equal_loops_are_equal_ops_and_graphs() -> None:
    a, b = pt.scalar("a"), pt.scalar("b")
    first = pt.scan(lambda p: pt.sin(p) * 2, outputs_info=[a], n_steps=3)
    second = pt.scan(lambda q: pt.sin(q) * 2, outputs_info=[b], n_steps=3)
    assert first.owner is not None and second.owner is not None
    assert first.owner.op == second.owner.op
    assert Graph([a], [first]) == Graph([b], [second])
    assert Graph([a], [first]).digest == Graph([b], [second]).digest
    same_input = pt.scan(lambda p: pt.sin(p) * 2, outputs_info=[a], n_steps=3)
    assert same_input is first or same_input.owner is first.owner


def test_dprint_nests_inner_graphs_and_pickle_round_trips() -> None:
    x0 = pt.scalar("x0")
    ys = pt.scan(lambda prev: prev**2, outputs_info=[x0], n_steps=4)
    h = pt.grad(pt.grad(ys[-1], x0), x0)
    graph = Graph([x0], [h])
    check_graph(graph)
    printed = dprint(graph, file=None)
    assert "Inner graphs:" in printed and printed.count("Scan{") >= 3
    restored = pickle.loads(pickle.dumps(graph))
    assert restored == graph and restored.digest == graph.digest
    np.testing.assert_allclose(evaluate(restored.outputs, {restored.inputs[0]: 1.1}),
                               [240 * 1.1**14])


# -- non-sequences keep their relation to the outer graph ----------------------------------
def test_jacobian_by_scan_over_non_sequences() -> None:
    from numba_backend import function

    x = pt.vector("x")
    y = x**2
    jacobian = pt.scan(lambda i, y, x: pt.grad(y[i], x), sequences=[pt.arange(y.shape[0])],
                       non_sequences=[y, x])
    value = np.array([1.0, 2.0])
    np.testing.assert_allclose(evaluate([jacobian], {x: value})[0], [[2, 0], [0, 4]])
    np.testing.assert_allclose(function([x], jacobian)(np.array([1.0, 2.0, -3.0])),
                               np.diag([2.0, 4.0, -6.0]))


def test_hessian_by_scan_and_its_derivative() -> None:
    x = pt.vector("x")
    cost = (pt.sin(x) * x[::-1]).sum()
    g = pt.grad(cost, x)
    hessian = pt.scan(lambda i, g, x: pt.grad(g[i], x), sequences=[pt.arange(x.shape[0])],
                      non_sequences=[g, x])
    value = np.array([0.3, -1.2, 0.7])
    expected = np.diag(-np.sin(value) * value[::-1]) + np.fliplr(np.diag(np.cos(value[::-1])))
    expected += np.fliplr(np.diag(np.cos(value)))
    np.testing.assert_allclose(evaluate([hessian], {x: value})[0], expected, atol=1e-12)
    third = pt.grad(hessian.sum(), x)  # a derivative of the loop of derivatives
    got = evaluate([third], {x: value})[0]

    def total(v: Array) -> float:
        return float(evaluate([hessian.sum()], {x: v})[0])

    eps = 1e-6
    numeric = [(total(value + eps * e) - total(value - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(got, numeric, rtol=1e-6)


def test_non_sequences_repeated_constant_or_returned() -> None:
    x = pt.vector("x")
    out = pt.scan(lambda a, w, v, two, same: (a * w + v * two, same),
                  sequences=[x], outputs_info=[None, None], non_sequences=[x.sum(), x.sum(), 2.0, x])
    values = np.array([1.0, 3.0])
    got = evaluate(list(out), {x: values})
    np.testing.assert_allclose(got[0], values * 4 + 4 * 2)
    np.testing.assert_allclose(got[1], [values, values])


# -- run-time errors in compiled code, as docs/loops.md states them ------------------------
def test_run_time_errors_in_compiled_code() -> None:
    from numba_backend import function

    xs = pt.vector("xs")
    n = pt.scalar("n", dtype="int64")
    running = pt.scan(lambda x, total: total + x, sequences=[xs],
                      outputs_info=[pt.constant(0.0)], n_steps=n)
    f = function([xs, n], running)
    np.testing.assert_allclose(f(np.ones(3), 2), [1.0, 2.0])
    with pytest.raises(ValueError, match="n_steps is negative; it must be >= 0"):
        f(np.ones(3), -1)
    with pytest.raises(ValueError, match="sequence 0 has fewer rows than n_steps"):
        f(np.ones(3), 4)
    final = pt.reduce(lambda p: p * 2, None, [pt.constant(1.5)], n_steps=n)
    assert function([n], final)(0) == 1.5  # zero steps: the initial value


def test_compiled_loop_names_its_first_short_sequence() -> None:
    """The rows of all sequences are checked in one comparison each
    (`intrinsics.first_below`, over tuples of 25): the error names the first short one,
    past the first group too."""
    from numba_backend import function

    sequences = [pt.vector(f"xs{k}") for k in range(30)]
    n = pt.scalar("n", dtype="int64")
    total = pt.scan(lambda *rows_and_total: sum(rows_and_total), sequences=sequences,
                    outputs_info=[pt.constant(0.0)], n_steps=n)
    f = function([*sequences, n], total)
    rows = [np.full(4, float(k)) for k in range(30)]
    np.testing.assert_allclose(f(*rows, 3), np.cumsum([sum(range(30))] * 3))
    for short in ([27], [2, 27], [29], [0, 1]):
        given = [row[:2] if k in short else row for k, row in enumerate(rows)]
        with pytest.raises(ValueError, match=f"sequence {short[0]} has fewer rows than n_steps"):
            f(*given, 3)
    np.testing.assert_allclose(f(*[row[:2] for row in rows], 2),
                               np.cumsum([sum(range(30))] * 2))


def test_compiled_loop_checks_only_sequences_that_may_be_short() -> None:
    """A step count that is a sequence's length is not checked against that sequence
    (nor for being negative); the others are, numbered among all the loop's sequences."""
    from numba_backend import function

    xs, ys, zs = pt.vector("xs"), pt.vector("ys"), pt.vector("zs")
    total = pt.scan(lambda y, x, z, t: t + y * x + z, sequences=[ys, xs, zs],
                    outputs_info=[pt.constant(0.0)], n_steps=xs.shape[0])
    f = function([xs, ys, zs], total)
    np.testing.assert_allclose(f(np.ones(3), np.full(4, 2.0), np.ones(3)), [3.0, 6.0, 9.0])
    np.testing.assert_allclose(f(np.ones(0), np.ones(0), np.ones(0)), np.ones(0))
    for short, arguments in [(0, (np.ones(3), np.ones(2), np.ones(3))),
                             (2, (np.ones(3), np.ones(3), np.ones(2))),
                             (0, (np.ones(3), np.ones(2), np.ones(2)))]:
        with pytest.raises(ValueError, match=f"sequence {short} has fewer rows than n_steps"):
            f(*arguments)


def test_compiled_map_checks_n_steps() -> None:
    from numba_backend import function

    xs = pt.vector("xs")
    n = pt.scalar("n", dtype="int64")
    f = function([xs, n], pt.scan(lambda x: x + 1, sequences=[xs], n_steps=n))
    with pytest.raises(ValueError, match="n_steps is negative"):
        f(np.zeros(3), -1)


def test_compiled_carry_shape_change_error() -> None:
    from numba_backend import function

    x0 = pt.vector("x0")
    n = pt.scalar("n", dtype="int64")
    grows = pt.scan(lambda p: pt.concatenate([p, p])[: p.shape[0] + 1], outputs_info=[x0],
                    n_steps=n)
    with pytest.raises(ValueError, match="carry 0 changed shape"):
        function([x0, n], grows)(np.zeros(2), 2)
    unrolled = pt.scan(lambda p: pt.concatenate([p, p])[: p.shape[0] + 1], outputs_info=[x0],
                       n_steps=2)
    with pytest.raises(ValueError):  # two steps of straight-line code check their shapes
        function([x0], unrolled)(np.zeros(2))


def test_compiled_last_row_after_zero_steps_is_an_index_error() -> None:
    from numba_backend import function

    s0 = pt.scalar("s0")
    n = pt.scalar("n", dtype="int64")
    last = pt.scan(lambda p: p * 2, outputs_info=[s0], n_steps=n)[-1]
    with pytest.raises(IndexError):
        evaluate([last], {s0: 1.0, n: 0})
    with pytest.raises(IndexError):
        function([s0, n], last)(1.0, 0)


def test_per_step_output_changing_shape_is_an_error() -> None:
    """Rows of one per-step output have one shape: evaluated and compiled loops raise
    (before the check, compiled code wrote the longer row past the trace's end)."""
    from numba_backend import function

    n, x = pt.scalar("n", dtype="int64"), pt.vector("x")
    growing = pt.scan(lambda i, x: x[: i + 1], sequences=[pt.arange(n)], non_sequences=[x])
    with pytest.raises(ValueError, match="per-step output 0 changed shape from"):
        evaluate([growing], {n: np.int64(3), x: np.ones(3)})
    with pytest.raises(ValueError, match="per-step output 0 changed shape"):
        function([n, x], growing)(3, np.ones(3))
