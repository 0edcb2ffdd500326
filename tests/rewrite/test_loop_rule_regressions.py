"""Issue 18: loops the rewrites compiled into wrong numbers, or into a value where the
loop raises. Each case compares the compiled function (`fast_run`) or the optimized
graph with `evaluate` of the graph as written, values and errors alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, evaluate
from numba_backend import function
from ops.scan_op import Scan
from rewrite import RuleSet, optimize
from rewrite.engine import rewrite_graph
from rewrite.loops_unroll import unroll


def compiled_matches(inputs: Sequence[Variable], outputs: Sequence[Variable],
                     values: Sequence[Any]) -> None:
    expected = evaluate(list(outputs), dict(zip(inputs, values)))
    got = function(list(inputs), list(outputs))(*values)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)


def raises_like_evaluate(inputs: Sequence[Variable], outputs: Sequence[Variable],
                         values: Sequence[Any], compiled: bool = True) -> None:
    """The graph as written raises; so do the optimized graph and, if `compiled`, the
    compiled function, with an error of the same class."""
    given = dict(zip(inputs, values))
    with pytest.raises(Exception) as before:
        evaluate(list(outputs), given)
    optimized = optimize(Graph(list(inputs), list(outputs)), "fast_run")
    with pytest.raises(before.type):
        evaluate(optimized.outputs, dict(zip(optimized.inputs, values)))
    if compiled:
        with pytest.raises(before.type):
            function(list(inputs), list(outputs))(*values)


# -- defect 1: a carry that a per-step output also returns -------------------------------------
def test_carry_also_returned_as_a_per_step_output() -> None:
    y0, w = pt.scalar("y0"), pt.scalar("w")
    _, out = pt.scan(lambda c, w: (c + w, c + w), outputs_info=[y0, None], non_sequences=[w],
                     n_steps=5)
    np.testing.assert_allclose(function([y0, w], out)(1.0, 1.0), [2, 3, 4, 5, 6])
    compiled_matches([y0, w], [out], [1.0, 0.5])


def test_gradient_of_a_running_sum_with_respect_to_its_sequence() -> None:
    s, a = pt.vector("s"), pt.scalar("a")
    y = pt.scan(lambda x, p: x + p, sequences=[s], outputs_info=[a])
    gradient = pt.grad(y.sum(), s)
    np.testing.assert_allclose(function([s, a], gradient)(np.ones(3), 0.0), [3, 2, 1])
    compiled_matches([s, a], [gradient], [np.arange(4.0), 1.0])


def test_output_taps_shift_carries_that_an_accumulator_reads() -> None:
    x0 = pt.vector("x0", shape=(2,))
    ys = pt.scan(lambda a, b: b + 1.0, n_steps=6, outputs_info=[dict(initial=x0, taps=[-2, -1])])
    compiled_matches([x0], [ys], [np.array([1.0, 2.0])])


# -- defect 5: explicit step counts and static carries ----------------------------------------
def test_map_with_an_explicit_step_count_over_a_longer_sequence() -> None:
    s = pt.vector("s")
    doubled = pt.scan(lambda x: x * 2, sequences=[s], n_steps=4)
    np.testing.assert_allclose(function([s], doubled)(np.arange(6.0)), [0, 2, 4, 6])
    raises_like_evaluate([s], [doubled], [np.arange(3.0)])


def test_static_carry_with_a_step_value_of_unknown_length() -> None:
    c0 = pt.matrix("c0", shape=(1, 2))
    k = pt.scalar("k", dtype="int64")
    final = pt.reduce(lambda c, k: c[:, :k] + 1.0, None, outputs_info=[c0], non_sequences=[k],
                      n_steps=3)
    assert optimize(Graph([c0, k], [final])).outputs[0].type.shape == (1, 2)
    compiled_matches([c0, k], [final], [np.array([[1.0, 2.0]]), 5])
    # k = 1 shrinks the carry: the loop raises, and so does its unrolled form.
    raises_like_evaluate([c0, k], [final], [np.array([[1.0, 2.0]]), 1], compiled=False)


def test_unrolled_carry_keeps_its_shape_check() -> None:
    v0 = pt.vector("v0")
    final = pt.reduce(lambda c: c[1:] * 2.0, None, outputs_info=[v0], n_steps=3)
    optimized = optimize(Graph([v0], [final]))
    assert not any(isinstance(node.op, Scan) for node in optimized.nodes)  # unrolled
    raises_like_evaluate([v0], [final], [np.arange(5.0)], compiled=False)


# -- defect 6: a rewrite never turns an error into a value ------------------------------------
def test_sequence_shorter_than_n_steps_that_the_body_ignores() -> None:
    s, c0 = pt.vector("s"), pt.scalar("c0")
    n = pt.scalar("n", dtype="int64")
    out = pt.scan(lambda x, c: c + 1.0, sequences=[s], outputs_info=[c0], n_steps=n)
    raises_like_evaluate([s, c0, n], [out], [np.ones(2), 0.0, 4])
    compiled_matches([s, c0, n], [out], [np.ones(5), 0.0, 4])


def test_last_row_of_a_zero_step_loop() -> None:
    c0 = pt.scalar("c0")
    n = pt.scalar("n", dtype="int64")
    last = pt.scan(lambda c: c + 1.0, outputs_info=[c0], n_steps=n)[-1]
    raises_like_evaluate([c0, n], [last], [0.0, 0])
    compiled_matches([c0, n], [last], [0.0, 3])


def test_last_rows_of_a_loop_shorter_than_the_read() -> None:
    c0 = pt.scalar("c0")
    n = pt.scalar("n", dtype="int64")
    trace = pt.scan(lambda c: c * 0.5 + 1.0, outputs_info=[c0], n_steps=n)
    raises_like_evaluate([c0, n], [trace[-3]], [1.0, 2])
    compiled_matches([c0, n], [trace[-3], trace[-1]], [1.0, 5])


def test_initial_row_of_a_trace_keeps_the_sequence_check() -> None:
    s, c0 = pt.vector("s"), pt.scalar("c0")
    trace = pt.scan(lambda x, c: c + x, sequences=[s], outputs_info=[c0], n_steps=30)
    assert trace.owner is not None
    whole = trace.owner.inputs[0]  # the trace with the initial value as row 0
    raises_like_evaluate([s, c0], [whole[0]], [np.ones(20), 0.5])


def test_prefix_of_a_long_loop_keeps_the_sequence_check() -> None:
    s, c0 = pt.vector("s"), pt.scalar("c0")
    trace = pt.scan(lambda x, c: c + x, sequences=[s], outputs_info=[c0], n_steps=100)
    raises_like_evaluate([s, c0], [trace[:5].sum()], [np.ones(50), 0.5])
    compiled_matches([s, c0], [trace[:5].sum()], [np.arange(100.0), 0.5])


def test_unrolled_loop_raises_as_the_loop_for_a_short_sequence() -> None:
    s, c0 = pt.vector("s"), pt.scalar("c0")
    final = pt.reduce(lambda x, c: c * x, s, c0, n_steps=4)
    raises_like_evaluate([s, c0], [final], [np.ones(3), 1.0])


def test_sum_taken_outside_keeps_the_step_checks() -> None:
    s, c0 = pt.vector("s"), pt.scalar("c0")
    n = pt.scalar("n", dtype="int64")
    total = pt.reduce(lambda x, acc: acc + x, s, c0, n_steps=n)
    raises_like_evaluate([s, c0, n], [total], [np.ones(3), 0.0, 5])
    raises_like_evaluate([s, c0, n], [total], [np.ones(3), 0.0, -1])
    compiled_matches([s, c0, n], [total], [np.arange(6.0), 0.5, 4])


def test_unrolled_loop_keeps_the_check_of_a_sequence_only_a_dead_output_reads() -> None:
    """Found by the loop fuzzer: unrolled, the checked rows of a sequence that only an
    unread per-step output reads die with it, and the short sequence no longer raises."""
    s, c0 = pt.vector("s"), pt.scalar("c0")
    carried, _ = pt.scan(lambda x, c, d: (pt.tanh(c), pt.tanh(x)), sequences=[s],
                         outputs_info=[c0, pt.constant(0.0)], n_steps=8, go_backwards=True)
    unrolled = rewrite_graph(Graph([s, c0], [carried[-1]]), RuleSet("unroll", (unroll,)))
    with pytest.raises(ValueError):
        evaluate(list(unrolled.outputs), dict(zip(unrolled.inputs, [np.zeros(7), np.array(0.5)])))
    raises_like_evaluate([s, c0], [carried[-1]], [np.zeros(7), 0.5])
    compiled_matches([s, c0], [carried[-1]], [np.zeros(9), 0.5])
