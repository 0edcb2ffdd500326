"""`pt.vmap` of loops whose examples run different numbers of steps (while-loops stopping
on batched values, batched `n_steps`, zero steps for some examples) against a Python
loop over the batch, in `evaluate` and compiled code: each example keeps its own final
state, run-time errors are those of one example's loop, and reading a ragged trace is a
build-time error, never padding or garbage."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Input, TensorType, Variable, evaluate, toposort
from numba_backend import function
from ops.scan_op import Scan

Array = np.ndarray[Any, np.dtype[Any]]


def example_input(batched: Array, name: str) -> Input:
    """An input of one example of `batched`, lengths unknown."""
    return Input(TensorType(batched.dtype.name, (None,) * (batched.ndim - 1)), name)


def python_loop(fn: Callable[..., Variable], batched: Sequence[Array]) -> Array:
    """The reference: fn's unbatched graph evaluated once per example."""
    examples = [example_input(b, f"example{k}") for k, b in enumerate(batched)]
    output = fn(*examples)
    return np.stack([
        evaluate([output], dict(zip(examples, row)))[0] for row in zip(*batched)
    ])


def vmapped(fn: Callable[..., Variable], batched: Sequence[Array]) -> tuple[list[Input], Variable]:
    inputs = [Input(TensorType(b.dtype.name, (None,) * b.ndim), f"batch{k}")
              for k, b in enumerate(batched)]
    mapped = pt.vmap(fn)(*inputs)
    assert isinstance(mapped, Variable)
    return inputs, mapped


def check_against_python_loop(fn: Callable[..., Variable], batched: Sequence[Array],
                              compiled: bool = True) -> Variable:
    inputs, mapped = vmapped(fn, batched)
    expected = python_loop(fn, batched)
    (got,) = evaluate([mapped], dict(zip(inputs, batched)))
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-300)
    if compiled:
        np.testing.assert_allclose(function(inputs, mapped)(*batched), expected, rtol=1e-13,
                                   atol=1e-300)
    return mapped


def newton(a: Variable) -> Variable:
    def step(g: Variable) -> tuple[Variable, pt.Until]:
        g2 = 0.5 * (g + a / g)
        return g2, pt.until(abs(g2 - g) < 1e-10)

    result: Variable = pt.scan(step, outputs_info=[a], n_steps=100)[-1]
    return result


def test_vmap_of_newtons_square_root() -> None:
    values = np.array([4.0, 10000.0, 2.0, 1.0])
    mapped = check_against_python_loop(newton, [values])
    np.testing.assert_allclose(python_loop(newton, [values]), np.sqrt(values), rtol=1e-15)
    loops = [node.op for node in toposort([mapped]) if isinstance(node.op, Scan)]
    assert len(loops) == 1 and loops[0].while_loop  # one batched loop, not a loop of loops


def test_while_loop_final_values_of_several_carries() -> None:
    def doubling(x0: Variable, limit: Variable) -> Variable:
        count, value = pt.reduce(
            lambda c, p, limit: ((c + 1, p * 2.0), pt.until(p * 2.0 > limit)), None,
            [pt.constant(0), x0], non_sequences=[limit], n_steps=20,
        )
        return pt.stack([pt.cast(count, "float64"), value])

    check_against_python_loop(doubling, [np.array([1.0, 3.0, 0.5, 100.0, -1.0]),
                                         np.array([10.0, 10.0, 1000.0, 5.0, 3.0])])


def test_batched_n_steps_with_zero_steps_for_some_examples() -> None:
    def powers(x0: Variable, n: Variable) -> Variable:
        result: Variable = pt.reduce(lambda p: p * 1.5 + 1.0, None, [x0], n_steps=n)
        return result

    check_against_python_loop(powers, [np.array([1.0, 2.0, -1.0, 0.5]), np.array([0, 3, 1, 0])])


def test_batched_n_steps_over_batched_and_shared_sequences() -> None:
    def partial_sums(rows: Variable, n: Variable) -> Variable:
        result: Variable = pt.reduce(lambda r, acc: acc + r * r, rows, pt.zeros(3), n_steps=n)
        return result

    rows = np.arange(24.0).reshape(2, 4, 3)
    check_against_python_loop(partial_sums, [rows, np.array([4, 0])])
    shared = pt.matrix("shared")
    n = pt.vector("n", dtype="int64")
    mapped = pt.vmap(lambda k: pt.reduce(lambda r, acc: acc + r, shared, pt.zeros(3), n_steps=k))(n)
    assert isinstance(mapped, Variable)
    values: dict[Variable, Array] = {shared: rows[0], n: np.array([2, 0, 4, 1])}
    expected = np.stack([rows[0][:k].sum(axis=0) for k in values[n]])
    np.testing.assert_allclose(evaluate([mapped], values)[0], expected)
    np.testing.assert_allclose(function([shared, n], mapped)(rows[0], values[n]), expected)


def test_while_loop_with_batched_n_steps_and_zero_steps() -> None:
    def halving(x0: Variable, n: Variable) -> Variable:
        result: Variable = pt.reduce(lambda p: (p * 0.5, pt.until(p * 0.5 < 1.0)), None, [x0],
                                     n_steps=n)
        return result

    check_against_python_loop(halving, [np.array([100.0, 100.0, 7.0, 3.0]),
                                        np.array([3, 0, 10, 1])])


def test_examples_stopping_together_keep_their_traces() -> None:
    def counted(x0: Variable) -> Variable:
        loop: tuple[Variable, ...] = pt.scan(
            lambda c, p: ((c + 1, pt.sin(p) + p), pt.until(c + 1 >= 3)),
            outputs_info=[pt.constant(0), x0], n_steps=10,
        )
        return loop[1]

    mapped = check_against_python_loop(counted, [np.array([[0.1, 0.2], [0.3, -0.4], [1.0, 2.0]])])
    assert mapped.type.ndim == 3


def test_errors_are_those_of_one_examples_loop() -> None:
    def powers(x0: Variable, n: Variable) -> Variable:
        result: Variable = pt.reduce(lambda p: p * 1.5, None, [x0], n_steps=n)
        return result

    inputs, mapped = vmapped(powers, [np.zeros(2), np.zeros(2, dtype="int64")])
    compiled = function(inputs, mapped)
    negative = (np.array([1.0, 2.0]), np.array([2, -1]))
    with pytest.raises(ValueError, match="n_steps is -1; it must be >= 0"):
        evaluate([mapped], dict(zip(inputs, negative)))
    with pytest.raises(ValueError, match="n_steps is negative; it must be >= 0"):
        compiled(*negative)

    def sums(n: Variable, rows: Variable) -> Variable:
        result: Variable = pt.reduce(lambda r, acc: acc + r, rows, pt.constant(0.0), n_steps=n)
        return result

    inputs, mapped = vmapped(sums, [np.zeros(2, dtype="int64"), np.zeros((2, 3))])
    too_long = (np.array([1, 4]), np.ones((2, 3)))
    with pytest.raises(ValueError, match="sequence 0 has 3 rows, fewer than n_steps=4"):
        evaluate([mapped], dict(zip(inputs, too_long)))
    with pytest.raises(ValueError, match="sequence 0 has fewer rows than n_steps"):
        function(inputs, mapped)(*too_long)


def test_ragged_traces_are_a_build_time_error() -> None:
    def newton_trace(a: Variable) -> Variable:
        result: Variable = pt.scan(
            lambda g: (0.5 * (g + a / g), pt.until(abs(0.5 * (g + a / g) - g) < 1e-10)),
            outputs_info=[a], n_steps=100,
        )
        return result

    x = pt.vector("x")
    with pytest.raises(ValueError, match="trace of carry 0 of Scan.* different number of steps"):
        pt.vmap(newton_trace)(x)
    n = pt.vector("n", dtype="int64")
    with pytest.raises(ValueError, match="read the loop's final values instead"):
        pt.vmap(lambda k: pt.scan(lambda p: p * 2.0, outputs_info=[pt.constant(1.0)],
                                  n_steps=k)[-1])(n)  # zero steps would fail, so no final value
    with pytest.raises(ValueError, match="per-step output 0 of Scan.*make it a carry"):
        pt.vmap(lambda k: pt.scan(lambda p: (p * 2.0, p + 1.0),
                                  outputs_info=[pt.constant(1.0), None], n_steps=k)[1].sum())(n)
    with pytest.raises(ValueError, match="per-step output 0 of Scan.*make it a carry"):
        pt.vmap(lambda k: pt.reduce(lambda p: (p * 2.0, p + 1.0), sequences=[],
                                    outputs_info=[pt.constant(1.0), None], n_steps=k)[1])(n)


def test_gradient_of_a_vmapped_while_loop() -> None:
    x = pt.vector("x")
    roots = pt.vmap(newton)(x)
    assert isinstance(roots, Variable)
    gradient = pt.grad(roots.sum(), x)
    values = np.array([4.0, 10000.0, 2.0])
    a = pt.scalar("a")
    per_example = pt.grad(newton(a), a)
    expected = [evaluate([per_example], {a: v})[0] for v in values]
    np.testing.assert_allclose(evaluate([gradient], {x: values})[0], expected, rtol=1e-12)
    np.testing.assert_allclose(expected, 0.5 / np.sqrt(values), rtol=1e-8)
    np.testing.assert_allclose(function([x], gradient)(values), expected, rtol=1e-12)


def test_per_example_gradients_through_a_while_loop_are_refused_clearly() -> None:
    x = pt.vector("x")
    with pytest.raises(ValueError, match="take the gradient of the vmap"):
        pt.vmap(lambda a: pt.grad(newton(a), a))(x)
