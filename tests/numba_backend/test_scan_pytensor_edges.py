"""PyTensor's scan contract at its edges (issue 18): zero steps, sequences of static
length 0 and 1, dtypes that must survive the loop (float32, int32), and the errors:
bad taps, types that change between steps, negative step counts, step counts longer
than a sequence, reading past an empty trace. Each test mirrors the PyTensor test its
docstring names (`tests/scan/test_basic.py` unless another file is named) and checks
the reference evaluator on the unoptimized graph and the compiled function
(`fast_run`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Variable, evaluate
from numba_backend import function
from tests.numba_backend.scan_contract import assert_values, assert_values_at


def _both_raise(
    inputs: list[Variable], outputs: list[Variable], arguments: list[Any],
    error: type[Exception] | tuple[type[Exception], ...], match: str | None = None,
) -> None:
    """`evaluate` of the unoptimized graph and the compiled function both raise."""
    with pytest.raises(error, match=match):
        evaluate(outputs, dict(zip(inputs, arguments)))
    compiled = function(inputs, outputs)
    with pytest.raises(error, match=match):
        compiled(*arguments)


# -- zero steps -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_no_step(dtype: str) -> None:
    """TestScan.test_no_step: n_steps == 0 (symbolic) gives an empty trace of the
    carry's dtype."""
    x_init, n_steps = pt.scalar("x", dtype=dtype), pt.iscalar("n_steps")
    values = pt.scan(lambda x_tm1: 2 * x_tm1, outputs_info=(x_init,), n_steps=n_steps)
    assert_values([x_init, n_steps], [values], [1, 0], [np.array([], dtype=dtype)])


@pytest.mark.parametrize("x_dtype", ["float64", "int32"])
@pytest.mark.parametrize("init_dtype", ["float64", "int32"])
def test_no_steps_sit_sot(x_dtype: str, init_dtype: str) -> None:
    """TestScan.test_no_steps_sit_sot: a carry over an empty sequence gives an empty
    trace of the carry's dtype."""
    x, x_init = pt.vector("x", dtype=x_dtype), pt.scalar("x_init", dtype=init_dtype)
    values = pt.scan(lambda x_seq, x_i: 2 * x_i, outputs_info=(x_init,), sequences=x)
    assert_values([x_init, x], [values], [1, np.array([], dtype=x_dtype)],
                  [np.array([], dtype=init_dtype)])


@pytest.mark.parametrize("x_dtype", ["float64", "int32"])
def test_no_steps_nit_sot(x_dtype: str) -> None:
    """TestScan.test_no_steps_nit_sot: a map over an empty sequence is empty, of the
    step's dtype."""
    x = pt.vector("x", dtype=x_dtype)
    values = pt.scan(lambda x_i: 2 * x_i, sequences=x)
    assert_values([x], [values], [np.array([], dtype=x_dtype)], [np.array([], dtype=x_dtype)])


def test_while_scan_map_last_of_empty() -> None:
    """test_trace.py::TestReduceTrace.test_while_scan_map: the last value of a
    while-loop map is the stopping step's (10 over arange(100), 1 over [0]); over an
    empty sequence there is none: IndexError."""
    xs = pt.vector("xs")
    ys = pt.scan(lambda x: (x + 1, pt.until(x + 1 >= 10)), outputs_info=[None], sequences=[xs])
    assert_values_at([xs], [ys[-1]], [([np.arange(100.0)], [10.0]), ([np.array([0.0])], [1.0])])
    _both_raise([xs], [ys[-1]], [np.array([])], IndexError)


def test_while_scan_taps_and_map_zero_steps() -> None:
    """test_trace.py::TestReduceTrace.test_while_scan_taps_and_map: the last values of
    a while-loop's carry and per-step output (100 and 100, 21, e + 1), and IndexError
    after zero steps."""
    x0, seq, n_steps = pt.scalar("x0"), pt.vector("seq"), pt.scalar("n_steps", dtype="int64")
    ys, zs = pt.scan(lambda s, x: ((x + 1, x + 1 + s), pt.until(x >= 99)), sequences=[seq],
                     outputs_info=[x0, None], n_steps=n_steps)
    seq_value = np.zeros(200)
    assert_values_at([x0, seq, n_steps], [ys[-1], zs[-1]], [
        ([start, seq_value, steps], [last, last])
        for start, steps, last in ((0.0, 200, 100.0), (1.0, 20, 21.0), (np.e, 1, np.e + 1))
    ])
    _both_raise([x0, seq, n_steps], [ys[-1], zs[-1]], [0.0, seq_value, 0], IndexError)


def test_last_row_of_zero_step_trace_raises() -> None:
    """basic.scan ("If the value is 0, the outputs will have 0 rows"): the last row of
    an empty trace does not exist, whatever the loop's form."""
    x0, n_steps = pt.scalar("x0"), pt.iscalar("n_steps")
    ys = pt.scan(lambda x: x * 2, outputs_info=[x0], n_steps=n_steps)
    _both_raise([x0, n_steps], [ys[-1]], [1.0, 0], IndexError)


def test_reading_before_the_first_row_raises() -> None:
    """basic.scan (a trace holds the rows after each step, not the initial value): ys[-2]
    of a one-step trace does not exist."""
    x0, n_steps = pt.scalar("x0"), pt.iscalar("n_steps")
    ys = pt.scan(lambda x: x * 2, outputs_info=[x0], n_steps=n_steps)
    _both_raise([x0, n_steps], [ys[-2]], [1.0, 1], IndexError)


def test_reduce_after_zero_steps_is_the_initial_value() -> None:
    """test_trace.py::TestReduceTrace.test_0_steps_does_not_point_to_unitialized_memory:
    the final value after a symbolic 0, 1 or 2 steps."""
    init_state, n = pt.vector("init_state", shape=(3,)), pt.scalar("n", dtype="int64")
    final = pt.reduce(lambda x: x * 2, None, init_state, n_steps=n)
    assert_values_at([init_state, n], [final], [
        ([np.ones(3), steps], [np.ones(3) * 2**steps]) for steps in (0, 1, 2)
    ])


# -- static lengths 0 and 1 ---------------------------------------------------------------
@pytest.mark.parametrize("length", [0, 1])
def test_sequences_of_static_length_0_and_1(length: int) -> None:
    """TestScan.test_no_steps_nit_sot / test_output_padding with static lengths: a map, a
    carry and a reduce over a sequence of static length 0 or 1 (PyTensor builds no
    loop for one step and pads the outputs: same values)."""
    xs, x0 = pt.vector("xs", shape=(length,)), pt.scalar("x0")
    mapped = pt.map(lambda x: x * 3, xs)
    traced = pt.scan(lambda x, acc: acc * 2 + x, sequences=[xs], outputs_info=[x0])
    final = pt.reduce(lambda x, acc: acc * 2 + x, xs, x0)
    assert mapped.type.shape == (length,) and traced.type.shape == (length,)
    value = np.arange(1.0, length + 1)
    expected_trace = np.array([0.5 * 2 + value[0]]) if length else np.zeros(0)
    assert_values([xs, x0], [mapped, traced, final], [value, 0.5],
                  [value * 3, expected_trace, expected_trace[-1] if length else 0.5])


@pytest.mark.parametrize("steps", [0, 1])
def test_output_taps_with_constant_0_and_1_steps(steps: int) -> None:
    """test_mintap_onestep / test_no_step with output taps: a Fibonacci output of taps
    [-2, -1] over a constant 0 or 1 steps has a trace of that static length."""
    start = pt.vector("start", shape=(2,))
    fib = pt.scan(lambda a, b: a + b, outputs_info=[{"initial": start, "taps": [-2, -1]}],
                  n_steps=steps)
    assert fib.type.shape == (steps,)
    assert_values([start], [fib], [np.array([2.0, 3.0])], [np.array([5.0])[:steps]])


# -- dtypes -----------------------------------------------------------------------------------
def test_float32_carries_stay_float32() -> None:
    """TestScan.test_grad_dtype_change and test_same: float32 carries combined with Python
    floats stay float32; an int32 carry stays int32."""
    x, c = pt.scalar("x", dtype="float32"), pt.iscalar("c")
    xs, cs = pt.scan(lambda x, c: (x * 0.5 + 1.0, c + 1), outputs_info=[x, c], n_steps=3)
    assert xs.dtype == "float32" and cs.dtype == "int32"
    expected, value = [], np.float32(2.0)
    for _ in range(3):
        value = np.float32(value * np.float32(0.5) + np.float32(1.0))
        expected.append(value)
    assert_values([x, c], [xs, cs], [np.float32(2.0), np.int32(7)],
                  [np.array(expected, dtype="float32"), np.array([8, 9, 10], dtype="int32")])


# -- errors --------------------------------------------------------------------------------------
def test_outputs_taps_check() -> None:
    """test_outputs_taps_check: output taps must be negative and distinct."""
    x, y = pt.fvector("x"), pt.fvector("y")

    def step(x: Variable, y: Variable) -> list[Variable]:
        return [x]

    with pytest.raises(ValueError, match="output taps must be distinct and negative"):
        pt.scan(step, x, {"initial": y, "taps": [0]})
    with pytest.raises(ValueError, match="output taps must be distinct and negative"):
        pt.scan(step, x, {"initial": y, "taps": [-1, -1]})
    with pytest.raises(ValueError, match="output taps must be distinct and negative"):
        pt.scan(step, x, {"initial": y, "taps": [1]})


def test_output_taps_without_initial_state() -> None:
    """basic.scan: "If you are using slices of an output you need to provide a initial
    state" (a ValueError naming the output)."""
    try:
        pt.scan(lambda p: p + 1, outputs_info=[{"taps": [-1]}], n_steps=3)
    except ValueError as error:
        assert "outputs_info[0]" in str(error)
        return
    except TypeError:
        pass
    raise AssertionError("outputs_info[0] with taps but no initial value was not rejected")


def _stretching_loop() -> tuple[Variable, Variable]:
    """test_inconsistent_broadcast_error's loop: the carry's initial value has static
    shape (1, 10), the step adds it to a sequence row of unknown shape."""
    x = pt.tensor3("x")
    initial = pt.constant(np.zeros((1, 10)))
    return x, pt.scan(lambda x, prev: x + prev, sequences=x, outputs_info=[{"initial": initial}])


def test_inconsistent_broadcast_error() -> None:
    """test_inconsistent_broadcast_error: a step result that stretches the carry's
    length-1 axis is an error (PyTensor finds it when differentiating; fgraph, whose
    unknown lengths never stretch, when the step result comes back longer than the
    carry), for the loop and its gradient."""
    x, y = _stretching_loop()
    rows_of_3 = np.ones((2, 3, 10))
    with pytest.raises(ValueError, match="carry 0 changed shape"):
        evaluate([y], {x: rows_of_3})
    with pytest.raises(ValueError, match="carry 0 changed shape"):
        evaluate([pt.grad(y.sum(), x)], {x: rows_of_3})


@pytest.mark.parametrize("mode", ["none", "fast_run"])
def test_inconsistent_broadcast_error_compiled(mode: str) -> None:
    """test_inconsistent_broadcast_error, compiled: the same run-time error."""
    x, y = _stretching_loop()
    compiled = function([x], [y], mode=mode)
    with pytest.raises(ValueError, match="carry 0 changed shape"):
        compiled(np.ones((2, 3, 10)))


def test_outputs_info_not_typed_int_initial_value() -> None:
    """TestExamples.test_outputs_info_not_typed (skipped in PyTensor): an untyped Python
    int initial value is an int64 carry, which a float step result cannot update: a
    clear build error rather than a silent downcast."""
    coefficients, x = pt.vector("coefficients"), pt.scalar("x")
    with pytest.raises(TypeError, match=r"outputs_info\[0\].*int64"):
        pt.scan(lambda c, power, prev, free: prev + c * (free**power), outputs_info=0,
                sequences=[coefficients, pt.arange(10)], non_sequences=x)


def test_step_returning_a_wrong_number_of_outputs() -> None:
    """basic.scan ("Please provide None as outputs_info for any output that does not
    feed back"): outputs_info must have one entry per output of the step."""
    x0 = pt.scalar("x0")
    with pytest.raises(ValueError, match="returned 2 outputs, but outputs_info has 1"):
        pt.scan(lambda p: (p + 1, p * 2), outputs_info=[x0], n_steps=3)


def test_no_information_about_the_number_of_steps() -> None:
    """basic.scan ("No information about the number of steps provided"): neither n_steps
    nor a sequence."""
    x0 = pt.scalar("x0")
    with pytest.raises(ValueError, match="n_steps"):
        pt.scan(lambda p: p + 1, outputs_info=[x0])


def test_non_integer_n_steps() -> None:
    """basic.scan (" n_steps must be an int"): a float step count is rejected at build
    time (PyTensor raises ValueError for a float variable; fgraph a TypeError)."""
    x0, steps = pt.scalar("x0"), pt.scalar("steps")
    for bad in (2.5, steps):
        with pytest.raises(TypeError, match="n_steps must be an integer"):
            pt.scan(lambda p: p + 1, outputs_info=[x0], n_steps=bad)


def test_negative_n_steps() -> None:
    """basic.scan ("n_steps < 0 is not supported"): a negative symbolic step count is a
    run-time error."""
    x0, n_steps, xs = pt.scalar("x0"), pt.iscalar("n_steps"), pt.vector("xs")
    generated = pt.scan(lambda p: p + 1, outputs_info=[x0], n_steps=n_steps)
    _both_raise([x0, n_steps], [generated], [1.0, -1], ValueError, "negative|>= 0")
    summed = pt.scan(lambda x, acc: acc + x, sequences=[xs], outputs_info=[x0], n_steps=n_steps)
    _both_raise([xs, x0, n_steps], [summed], [np.zeros(3), 1.0, -2], ValueError, "negative|>= 0")


def test_negative_n_steps_of_a_map() -> None:
    """basic.scan ("n_steps < 0 is not supported"): a map given a negative symbolic step
    count raises, compiled too."""
    n_steps, xs = pt.iscalar("n_steps"), pt.vector("xs")
    mapped = pt.scan(lambda x: x + 1, sequences=[xs], n_steps=n_steps)
    _both_raise([xs, n_steps], [mapped], [np.zeros(3), -2], ValueError, "negative|>= 0")


def test_infershape_seq_shorter_nsteps() -> None:
    """TestExamples.test_infershape_seq_shorter_nsteps (xfail in PyTensor, which wants
    this ValueError): n_steps=20 over a sequence of 10 rows is a run-time error."""
    x = pt.vector("x")
    o1, o2 = pt.scan(lambda x, y: (x + 1, y + x), sequences=x, outputs_info=[None, x[0]],
                     n_steps=20)
    _both_raise([x], [o1, o2], [np.ones(10)], ValueError, "fewer")


@pytest.mark.parametrize("build", [
    pytest.param(lambda xs, n: pt.scan(lambda x: x + 1, sequences=[xs], n_steps=n), id="map"),
    pytest.param(lambda xs, n: pt.scan(lambda x, acc: acc + x, sequences=[xs],
                                       outputs_info=[pt.as_tensor(0.0)], n_steps=n), id="carry"),
])
def test_n_steps_larger_than_a_sequence(build: Callable[[Variable, Variable], Variable]) -> None:
    """basic.scan ("If any of the input sequences do not have enough elements, scan will
    raise an error"): a symbolic n_steps of 4 over 3 rows."""
    xs, n = pt.vector("xs"), pt.scalar("n", dtype="int64")
    _both_raise([xs, n], [build(xs, n)], [np.zeros(3), 4], ValueError, "fewer")


def test_cvm_exception_handling() -> None:
    """test_cvm_exception_handling: an error raised inside a step (here an index out of
    range at the third step) propagates out of the loop."""
    w, n_steps = pt.vector("w"), pt.iscalar("n_steps")
    out = pt.scan(lambda i, w: w[i], sequences=[pt.arange(n_steps)], non_sequences=[w])
    _both_raise([w, n_steps], [out], [np.zeros(2), 4], IndexError)


def test_carry_changing_shape_at_run_time() -> None:
    """basic.scan ("the initial state should have the same shape as the output"): a
    step result whose shape differs from the carry's at run time is an error, not a
    reallocation."""
    x0 = pt.vector("x0")
    grows = pt.scan(lambda p: pt.concatenate([p, p])[: p.shape[0] + 1], outputs_info=[x0],
                    n_steps=2)
    _both_raise([x0], [grows], [np.zeros(2)], ValueError)


def test_initial_value_with_too_few_rows_for_its_taps() -> None:
    """basic.scan (taps [-5, -2, -1] need an initial state of shape (5,) + output.shape):
    an initial value of unknown length with fewer rows than the deepest tap is a run-time
    error."""
    start = pt.vector("start")
    fib = pt.scan(lambda a, b: a + b, outputs_info=[{"initial": start, "taps": [-2, -1]}],
                  n_steps=3)
    _both_raise([start], [fib], [np.array([1.0])], (IndexError, ValueError))
