"""Derivatives through loops: closed forms, finite differences (first to third order,
reverse and forward mode, random step functions), backpropagation through time written
out in NumPy, while-loops and truncated gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ops as pt
from fgraph import Graph, Input, TensorType, Variable, check_graph, evaluate
from tests.ops.checks import check_pullback, check_pushforward, numeric_gradient

Array = np.ndarray[Any, np.dtype[Any]]


def seed_loop(x0: Variable) -> Variable:
    """The seed: y_t = y_{t-1} ** 2 for 4 steps, so y_4 = x0 ** 16."""
    result: Variable = pt.scan(lambda prev: prev**2, outputs_info=[x0], n_steps=4)
    return result


def test_seed_first_second_and_third_derivatives_in_closed_form() -> None:
    x0 = pt.scalar("x0")
    f = seed_loop(x0)[-1]
    g = pt.grad(f, x0)
    h = pt.grad(g, x0)
    third = pt.grad(h, x0)
    check_graph(Graph([x0], [f, g, h, third]))
    got = evaluate([f, g, h, third], {x0: 1.1})
    np.testing.assert_allclose(got[:3], [1.1**16, 16 * 1.1**15, 240 * 1.1**14], rtol=1e-13)
    assert float(got[2]) == pytest.approx(911.3996005997793, rel=1e-15)
    np.testing.assert_allclose(got[3], 3360 * 1.1**13, rtol=1e-12)


def test_third_derivative_of_a_nonlinear_loop_against_finite_differences() -> None:
    x0 = pt.scalar("x0")
    out = pt.scan(lambda p: pt.sin(p) * 1.5 + 0.1 * p * p, outputs_info=[x0], n_steps=5)[-1]
    second = pt.grad(pt.grad(out, x0), x0)
    third = pt.grad(second, x0)

    def second_at(value: float) -> float:
        return float(evaluate([second], {x0: value})[0])

    eps = 1e-4
    numeric = (second_at(0.3 + eps) - second_at(0.3 - eps)) / (2 * eps)
    np.testing.assert_allclose(evaluate([third], {x0: 0.3})[0], numeric, rtol=1e-6)


def test_vector_recurrence_with_sequences_and_non_sequences() -> None:
    def build(h0: Variable, xs: Variable, w: Variable) -> Variable:
        result: Variable = pt.scan(lambda x, h, w: pt.tanh(h * w + x), sequences=[xs], outputs_info=[h0],
                       non_sequences=[w])
        return result

    rng = np.random.default_rng(1)
    values = [rng.normal(size=3), rng.normal(size=(4, 3)), rng.normal(size=3)]
    check_pullback(build, values)
    check_pushforward(build, values)


def test_taps_on_sequences_and_outputs() -> None:
    def build(start: Variable, xs: Variable) -> Variable:
        result: Variable = pt.scan(lambda a, b, y2, y1: y1 * 0.5 + y2 * a - b * b,
                       sequences=[{"input": xs, "taps": [-1, 1]}],
                       outputs_info=[{"initial": start, "taps": [-2, -1]}])
        return result

    rng = np.random.default_rng(2)
    values = [rng.normal(size=2), rng.normal(size=6)]
    check_pullback(build, values)
    check_pushforward(build, values)


def test_per_step_outputs_final_only_and_go_backwards() -> None:
    def build(x0: Variable, xs: Variable) -> Variable:
        loop: tuple[Variable, ...] = pt.scan(
            lambda x, acc: (acc * x + 1, pt.sin(x * acc)),
            sequences=[xs], outputs_info=[x0, None], go_backwards=True,
        )
        total, squares = loop
        folded: Variable = pt.foldr(lambda x, acc: acc * pt.cos(x), xs, x0)
        return total.sum() + squares.sum() + folded

    rng = np.random.default_rng(3)
    values = [np.asarray(0.4), rng.normal(size=5)]
    check_pullback(build, values)
    check_pushforward(build, values)


def test_nested_loops() -> None:
    def build(m: Variable, w: Variable) -> Variable:
        def row(r: Variable, w: Variable) -> Variable:
            result: Variable = pt.reduce(lambda a, acc, w: pt.sin(acc * w + a), r, pt.constant(0.0), [w])
            return result

        result: Variable = pt.map(row, m, non_sequences=[w])
        return result

    rng = np.random.default_rng(4)
    values = [rng.normal(size=(3, 4)), np.asarray(0.7)]
    check_pullback(build, values)
    check_pushforward(build, values)


def test_second_derivative_through_a_vector_loop() -> None:
    def build(x0: Variable) -> Variable:
        ys = pt.scan(lambda p: pt.sin(p) * p, outputs_info=[x0], n_steps=3)
        return pt.grad(ys[-1].sum(), x0)

    check_pullback(build, [np.array([0.3, -0.8])])


def test_while_loop_gradient_and_unreached_sequence_rows() -> None:
    xs = pt.vector("xs")
    x0 = pt.scalar("x0")

    def step(x: Variable, p: Variable) -> tuple[Variable, pt.Until]:
        new = p * x + 1.0
        return new, pt.until(new > 12.0)

    out = pt.scan(step, sequences=[xs], outputs_info=[x0])
    cost = out[-1]
    gx0, gxs = pt.grad(cost, [x0, xs])
    sequence = np.array([2.0, 3.0, 1.5, 4.0, 5.0])
    values: dict[Variable, Any] = {x0: 1.0, xs: sequence}
    # Steps: 3, 10, 16 (stop): the last two rows never ran.
    np.testing.assert_allclose(evaluate([out], values)[0], np.array([3.0, 10.0, 16.0]))

    def cost_of(a: float, seq: Array) -> float:
        return float(evaluate([cost], {x0: a, xs: seq})[0])

    (numeric_xs,) = numeric_gradient(lambda s: np.asarray(cost_of(1.0, s)), [sequence],
                                     np.asarray(1.0))
    got = evaluate([gx0, gxs], values)
    np.testing.assert_allclose(got[1], numeric_xs, atol=1e-6)
    assert got[1][3] == 0 and got[1][4] == 0
    np.testing.assert_allclose(got[0], 2 * 3 * 1.5)


def test_truncate_gradient_keeps_the_last_steps() -> None:
    xs = pt.vector("xs")
    y0 = pt.scalar("y0")
    out = pt.scan(lambda x, y: y * 0.5 + x, sequences=[xs], outputs_info=[y0],
                  truncate_gradient=2)
    gy0, gxs = pt.grad(out[-1], [y0, xs])
    got = evaluate([gy0, gxs], {y0: 1.0, xs: np.arange(5.0)})
    assert got[0] == 0
    np.testing.assert_allclose(got[1], [0, 0, 0, 0.5, 1.0])
    full = pt.scan(lambda x, y: y * 0.5 + x, sequences=[xs], outputs_info=[y0])
    gfull = pt.grad(full[-1], xs)
    np.testing.assert_allclose(evaluate([gfull], {y0: 1.0, xs: np.arange(5.0)})[0],
                               0.5 ** np.arange(4, -1, -1))


def test_rnn_gradient_matches_numpy_backpropagation_through_time() -> None:
    steps, hidden, features = 6, 4, 3
    rng = np.random.default_rng(5)
    values = {
        "xs": rng.normal(size=(steps, features)),
        "w": rng.normal(size=(hidden, hidden)) * 0.5,
        "u": rng.normal(size=(hidden, features)),
        "b": rng.normal(size=hidden),
        "h0": rng.normal(size=hidden),
    }
    xs, w, u = pt.matrix("xs"), pt.matrix("w"), pt.matrix("u")
    b, h0 = pt.vector("b"), pt.vector("h0")
    hs = pt.scan(lambda x, h, w, u, b: pt.tanh(w @ h + u @ x + b), sequences=[xs],
                 outputs_info=[h0], non_sequences=[w, u, b])
    loss = (hs**2).sum()
    variables = [w, u, b, h0, xs]
    got = evaluate(pt.grad(loss, variables), {v: values[str(v.name)] for v in [xs, w, u, b, h0]})

    # Backpropagation through time by hand.
    states = [values["h0"]]
    for t in range(steps):
        states.append(np.tanh(values["w"] @ states[-1] + values["u"] @ values["xs"][t] + values["b"]))
    grads = {name: np.zeros_like(values[name]) for name in values}
    carried = np.zeros(hidden)
    for t in range(steps - 1, -1, -1):
        d_state = carried + 2 * states[t + 1]
        d_pre = d_state * (1 - states[t + 1] ** 2)
        grads["w"] += np.outer(d_pre, states[t])
        grads["u"] += np.outer(d_pre, values["xs"][t])
        grads["b"] += d_pre
        grads["xs"][t] = values["u"].T @ d_pre
        carried = values["w"].T @ d_pre
    grads["h0"] = carried
    for variable, gradient in zip(variables, got):
        np.testing.assert_allclose(gradient, grads[str(variable.name)], rtol=1e-10,
                                   err_msg=str(variable.name))


# -- random step functions --------------------------------------------------------------
UNARY: tuple[Callable[[Variable], Variable], ...] = (
    pt.sin, pt.tanh, pt.sigmoid, lambda a: a * a * 0.5, lambda a: pt.exp(a * 0.3),
)
BINARY: tuple[Callable[[Variable, Variable], Variable], ...] = (
    lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b * 0.5,
)


@st.composite
def step_functions(draw: st.DrawFn) -> Callable[[Variable, Variable, Variable], Variable]:
    """A random expression of (sequence row, carry, non-sequence)."""
    plan = draw(st.lists(st.tuples(st.integers(0, len(UNARY) - 1),
                                   st.integers(0, len(BINARY) - 1),
                                   st.integers(0, 2)), min_size=1, max_size=4))

    def step(x: Variable, h: Variable, w: Variable) -> Variable:
        value = h
        operands = (x, h, w)
        for unary, binary, operand in plan:
            value = BINARY[binary](UNARY[unary](value), operands[operand])
        return pt.tanh(value)

    return step


@given(
    step=step_functions(),
    length=st.integers(0, 4),
    static=st.booleans(),
    width=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_random_step_functions_match_finite_differences(
    step: Callable[[Variable, Variable, Variable], Variable],
    length: int,
    static: bool,
    width: int,
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    xs = Input(TensorType("float64", (length if static else None, width if static else None)), "xs")
    h0 = Input(TensorType("float64", (width if static else None,)), "h0")
    w = Input(TensorType("float64", (None,)), "w")
    hs = pt.scan(step, sequences=[xs], outputs_info=[h0], non_sequences=[w])
    cotangent = rng.normal(size=(length, width))
    cost = (hs * pt.constant(cotangent)).sum()
    variables = [h0, xs, w]
    gradients = pt.grad(cost, variables, disconnected_inputs="ignore")
    values = [rng.normal(size=width), rng.normal(size=(length, width)), rng.normal(size=width)]
    got = evaluate(gradients, dict(zip(variables, values)))

    def forward(*arrays: Array) -> Array:
        return evaluate([hs], dict(zip(variables, arrays)))[0]

    expected = numeric_gradient(forward, values, cotangent)
    for number, (g, e) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=f"input {number}")
