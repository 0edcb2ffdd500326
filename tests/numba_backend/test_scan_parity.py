"""Loops compiled with numba against the reference evaluator: every form of `pt.scan`,
derivatives through loops to third order, run-time errors, and random loops; each
compiled as written (`mode="none"`) and after the loop rewrites (`fast_run`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ops as pt
from fgraph import Input, TensorType, Variable, evaluate
from numba_backend import function
from numba_backend.scan_op import is_scalar_body, lowered_body
from ops.scan_op import Scan
from tests.loop_steps import PLANS, planned_step

Array = np.ndarray[Any, np.dtype[Any]]
Case = tuple[str, list[Variable], list[Variable], list[Any]]


def _cases() -> list[Case]:
    rng = np.random.default_rng(0)
    cases: list[Case] = []

    x0 = pt.scalar("x0")
    seed = pt.scan(lambda p: p**2, outputs_info=[x0], n_steps=4)
    first = pt.grad(seed[-1], x0)
    second = pt.grad(first, x0)
    third = pt.grad(second, x0)
    cases.append(("seed and its derivatives", [x0], [seed, first, second, third], [1.1]))

    n = pt.scalar("n", dtype="int64")
    chaotic = pt.scan(lambda p: 0.5 * p + pt.sin(p) + 0.1, outputs_info=[x0], n_steps=n)
    cases.append(("long scalar recurrence and gradient", [x0, n],
                  [chaotic[-1], pt.grad(chaotic[-1], x0)], [0.3, 200]))
    cases.append(("zero steps", [x0, n], [chaotic, pt.grad(chaotic.sum(), x0)], [0.3, 0]))

    xs, h0, w = pt.matrix("xs"), pt.vector("h0"), pt.vector("w")
    hs = pt.scan(lambda x, h, w: pt.tanh(h * w + x), sequences=[xs], outputs_info=[h0],
                 non_sequences=[w])
    cases.append(("vector recurrence with sequences", [xs, h0, w],
                  [hs, *pt.grad((hs**2).sum(), [xs, h0, w])],
                  [rng.normal(size=(6, 3)), rng.normal(size=3), rng.normal(size=3)]))

    start = pt.vector("start")
    fib = pt.scan(lambda a, b: a + b, outputs_info=[{"initial": start, "taps": [-2, -1]}],
                  n_steps=10)
    s = pt.vector("s")
    tapped = pt.scan(lambda a, b, c: a + 10 * b + 100 * c,
                     sequences=[{"input": s, "taps": [-1, 0, 2]}])
    cases.append(("taps", [start, s], [fib, tapped, pt.grad(tapped.sum() + fib[-1], start)],
                  [np.array([0.0, 1.0]), np.arange(8.0)]))

    def step(x: Variable, p: Variable) -> Any:
        new = p * x + 1.0
        return new, pt.until(new > 12.0)

    while_out = pt.scan(step, sequences=[s], outputs_info=[x0])
    cases.append(("while-loop and its gradient", [s, x0],
                  [while_out, *pt.grad(while_out[-1], [s, x0])],
                  [np.array([2.0, 3.0, 1.5, 4.0, 5.0]), 1.0]))

    v = pt.vector("v")
    cases.append(("wrappers and go_backwards", [v], [
        pt.map(lambda a: a * 2, v),
        pt.reduce(lambda a, acc: acc + a, v, pt.constant(0.0)),
        pt.foldr(lambda a, acc: acc * 10 + a, v, pt.constant(0.0)),
        pt.scan(lambda a, acc: acc * 0.5 + a, sequences=[v], outputs_info=[pt.constant(0.0)],
                go_backwards=True),
    ], [np.array([1.0, 2.0, 3.0])]))

    m = pt.matrix("m")
    nested = pt.map(lambda r: pt.reduce(lambda a, acc: acc + pt.sin(a) * acc, r,
                                        pt.constant(1.0)), m)
    cases.append(("nested loops and their gradient", [m],
                  [nested, pt.grad(nested.sum(), m)], [rng.normal(size=(3, 4))]))

    count, value = pt.scan(lambda c, p: (c + 1, p * 3), outputs_info=[pt.constant(0), x0],
                           n_steps=4)
    truncated = pt.scan(lambda x, y: y * 0.5 + x, sequences=[v], outputs_info=[x0],
                        truncate_gradient=2)
    cases.append(("integer carry and truncated gradient", [x0, v],
                  [count, value, *pt.grad(truncated[-1], [x0, v])],
                  [1.0, np.arange(5.0)]))

    steps, hidden, features = 7, 4, 3
    X, W, U = pt.matrix("X"), pt.matrix("W"), pt.matrix("U")
    b, h = pt.vector("b"), pt.vector("h")
    rnn = pt.scan(lambda x, h, W, U, b: pt.tanh(W @ h + U @ x + b), sequences=[X],
                  outputs_info=[h], non_sequences=[W, U, b])
    loss = (rnn**2).sum()
    cases.append(("rnn loss and gradient", [X, W, U, b, h], [loss, *pt.grad(loss, [W, U, b, h])],
                  [rng.normal(size=(steps, features)), rng.normal(size=(hidden, hidden)) * 0.5,
                   rng.normal(size=(hidden, features)), rng.normal(size=hidden),
                   rng.normal(size=hidden)]))

    t = pt.scalar("t")
    (tangent,) = pt.jvp([seed], [x0], [t])
    cases.append(("jvp through a loop", [x0, t], [tangent], [1.1, 1.0]))
    return cases


CASES = _cases()


@pytest.mark.parametrize("mode", ["none", "fast_run"])
@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_compiled_loops_match_the_reference(case: Case, mode: str) -> None:
    _, inputs, outputs, values = case
    compiled = function(inputs, outputs, mode=mode)(*values)
    expected = evaluate(outputs, dict(zip(inputs, values)))
    for got, want in zip(compiled, expected):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_run_time_errors() -> None:
    xs = pt.vector("xs")
    n = pt.scalar("n", dtype="int64")
    f = function([xs, n], [pt.scan(lambda x: x + 1, sequences=[xs], n_steps=n)], mode="none")
    with pytest.raises(ValueError, match="n_steps is negative"):
        f(np.zeros(3), -1)
    with pytest.raises(ValueError, match="sequence 0 has fewer rows than n_steps"):
        f(np.zeros(3), 4)
    np.testing.assert_allclose(f(np.zeros(3), 2)[0], [1.0, 1.0])


def loop_bodies(source: str) -> list[list[str]]:
    """The lines of each step loop (`for <prefix>s in range(...)`) in generated code,
    found by their indentation."""
    lines = source.splitlines()
    bodies = []
    for number, line in enumerate(lines):
        header = line.lstrip()
        if header.startswith("for ") and header.split()[1].endswith("_s") and " in range(" in line:
            indent = len(line) - len(header)
            body = []
            for inner in lines[number + 1 :]:
                if len(inner) - len(inner.lstrip()) <= indent:
                    break
                body.append(inner)
            bodies.append(body)
    return bodies


def test_a_scalar_recurrence_allocates_nothing_per_step() -> None:
    x0 = pt.scalar("x0")
    out = pt.scan(lambda p: 0.5 * p + pt.sin(p) + 0.1, outputs_info=[x0], n_steps=1000)
    f = function([x0], [out[-1]])
    (loop,) = [node.op for node in f.graph.nodes if isinstance(node.op, Scan)]
    assert is_scalar_body(lowered_body(loop.inner_graph))
    (body,) = loop_bodies(f.source)
    assert body and not any("new_array" in line or "np.empty" in line for line in body)
    np.testing.assert_allclose(f(0.3), evaluate([out[-1]], {x0: 0.3})[0], rtol=1e-12)


@settings(max_examples=8)
@given(
    plan=PLANS,
    steps=st.sampled_from([0, 1, 5]),
    static=st.booleans(),
    width=st.sampled_from([None, 2]),
)
def test_random_loops_compile_to_the_reference(
    plan: list[tuple[int, int]], steps: int, static: bool, width: int | None
) -> None:
    size = 2 if width is None else width
    xs = Input(TensorType("float64", (steps if static else None, width)), "xs")
    h0 = Input(TensorType("float64", (width,)), "h0")
    w = Input(TensorType("float64", ()), "w")

    step = planned_step(plan)
    hs = pt.scan(step, sequences=[xs], outputs_info=[h0], non_sequences=[w])
    outputs = [hs, pt.grad(hs.sum(), w, disconnected_inputs="ignore")]  # a plan may not read w
    rng = np.random.default_rng(steps)
    values = [rng.normal(size=(steps, size)), rng.normal(size=size), 0.7]
    expected = evaluate(outputs, dict(zip([xs, h0, w], values)))
    got = function([xs, h0, w], outputs)(*values)
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)


def test_an_array_body_of_static_shapes_allocates_nothing_per_step() -> None:
    """Buffers are allocated before the loop; the one a carry lives in alternates between
    two (the next step still reads it), the others are reused."""
    xs = pt.matrix("xs", shape=(None, 3))
    w, u = pt.matrix("w", shape=(4, 4)), pt.matrix("u", shape=(4, 3))
    h0 = pt.vector("h0", shape=(4,))
    hs = pt.scan(lambda x, h, w, u: pt.tanh(w @ h + u @ x) * 0.5 + h[::-1] * 0.25,
                 sequences=[xs], outputs_info=[h0], non_sequences=[w, u])
    loss = (hs**2).sum()
    outputs = [hs, loss, pt.grad(loss, w)]
    f = function([xs, w, u, h0], outputs)
    bodies = loop_bodies(f.source)
    assert len(bodies) == 2  # the forward loop and the gradient's backward loop
    for body in bodies:
        assert body and not any("new_array" in line for line in body), "\n".join(body)
    rng = np.random.default_rng(4)
    values = [rng.normal(size=(9, 3)), rng.normal(size=(4, 4)) * 0.5, rng.normal(size=(4, 3)),
              rng.normal(size=4)]
    for got, want in zip(f(*values), evaluate(outputs, dict(zip([xs, w, u, h0], values)))):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def _allocations(run: Callable[[], object]) -> int:
    """How many arrays numba's runtime allocates while `run()` runs (numba's own
    allocation statistics, switched on for the call)."""
    runtime = importlib.import_module("numba.core.runtime._nrt_python")
    was_enabled = runtime.memsys_stats_enabled()
    runtime.memsys_enable_stats()
    try:
        before = runtime.memsys_get_stats_alloc()
        run()
        return int(runtime.memsys_get_stats_alloc() - before)
    finally:
        if not was_enabled:
            runtime.memsys_disable_stats()


def _rnn_values(rng: np.random.Generator, steps: int, hidden: int, features: int) -> list[Any]:
    return [rng.normal(size=(steps, features)), rng.normal(size=(hidden, hidden)) * 0.5,
            rng.normal(size=(hidden, features)), rng.normal(size=hidden)]


def test_an_array_body_of_unknown_lengths_allocates_once_per_loop() -> None:
    """Every length unknown: the body's buffers (the carry's ring of two, a matrix
    product's, an index update's copy) are allocated at the first step, again only
    when a step's lengths differ from them; the count of allocations of a call does not
    grow with its steps, and values stay right when the lengths change between calls."""
    xs, w, u, h0 = pt.matrix("xs"), pt.matrix("w"), pt.matrix("u"), pt.vector("h0")

    def step(x: Variable, h: Variable, w: Variable, u: Variable) -> Variable:
        mixed = pt.set_subtensor(h[::2], h[::2] * 0.5)
        return pt.tanh(w @ mixed + u @ x) * 0.5 + h[::-1] * 0.25

    hs = pt.scan(step, sequences=[xs], outputs_info=[h0], non_sequences=[w, u])
    loss = (hs**2).sum()
    outputs = [hs, loss, pt.grad(loss, w)]
    f = function([xs, w, u, h0], outputs)
    bodies = loop_bodies(f.source)
    assert len(bodies) == 2  # the forward loop and the gradient's backward loop
    for body in bodies:
        assert not any(".copy()" in line or "np.copy" in line for line in body), "\n".join(body)
        allocating = [k for k, line in enumerate(body) if "new_array" in line]
        assert allocating, "\n".join(body)
        for k in allocating:  # each under a test of the buffer's lengths
            test = body[k - 1].strip()
            assert test.startswith("if ") and ".shape" in test and " != " in test, body[k - 1]
    rng = np.random.default_rng(5)
    per_call = {}
    for steps, hidden, features in [(9, 4, 3), (40, 4, 3), (7, 2, 5), (0, 3, 2), (1, 6, 1)]:
        values = _rnn_values(rng, steps, hidden, features)
        expected = evaluate(outputs, dict(zip([xs, w, u, h0], values)))
        for got, want in zip(f(*values), expected):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        per_call[steps] = _allocations(lambda: f(*values))
    assert per_call[9] == per_call[40] == per_call[1], per_call


def test_a_body_whose_lengths_change_between_steps_allocates_again() -> None:
    """A per-step value whose length a sequence sets (a window of the step's row, as
    long as the step's count) gets a fresh buffer in each step whose lengths differ
    from the previous step's, never a stale one of other lengths."""
    xs, h0 = pt.matrix("xs"), pt.vector("h0")
    counts = pt.vector("counts", dtype="int64")

    def step(x: Variable, count: Variable, h: Variable) -> Variable:
        window = pt.exp(x[:count]) * 0.5
        return h * 0.9 + window.sum() + h[::-1] * 0.1

    hs = pt.scan(step, sequences=[xs, counts], outputs_info=[h0])
    outputs = [hs, pt.grad((hs**2).sum(), xs)]
    f = function([xs, counts, h0], outputs)
    rng = np.random.default_rng(6)
    values = [rng.normal(size=(8, 5)), np.array([5, 1, 3, 3, 0, 4, 2, 5]), rng.normal(size=3)]
    expected = evaluate(outputs, dict(zip([xs, counts, h0], values)))
    for got, want in zip(f(*values), expected):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
