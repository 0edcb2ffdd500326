"""Taps of `pt.scan` with PyTensor's meaning, against NumPy loops written from that
meaning (not from our desugaring), in `evaluate` and compiled code, and their
derivatives against finite differences.

A sequence tap k at step t reads `s[t + k]`; t starts at the first position where every
tap is in range as if tap 0 were among them, so the loop has
`len(s) - (max(max(taps), 0) - min(min(taps), 0))` steps. `go_backwards` runs t the
other way, a tap keeping its offset in the sequence's own order. An output tap -d reads
the value d steps back, the initial value holding one row per depth, oldest first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ops as pt
from fgraph import Variable, evaluate
from numba_backend import function
from tests.ops.checks import check_pullback, check_pushforward, numeric_gradient

Array = np.ndarray[Any, np.dtype[Any]]


def tap_positions(length: int, taps: Sequence[int], go_backwards: bool,
                  n_steps: int | None = None) -> list[int]:
    """The positions t the steps run at, in order (PyTensor's rule)."""
    lowest, highest = min(*taps, 0), max(*taps, 0)
    positions = list(range(-lowest, length - highest))
    if go_backwards:
        positions.reverse()
    return positions if n_steps is None else positions[:n_steps]


def weighted_taps(*rows: Variable) -> Variable:
    """A step whose value tells which row each tap read: sum of rows[i] * 10**i."""
    total = rows[0]
    for number, row in enumerate(rows[1:], start=1):
        total = total + row * 10.0**number
    return total


def expected_weighted(values: Array, taps: Sequence[int], go_backwards: bool) -> Array:
    return np.array([
        sum(values[t + tap] * 10.0**number for number, tap in enumerate(taps))
        for t in tap_positions(len(values), taps, go_backwards)
    ])


CASES = [
    ([-1], False, [0, 1, 2, 3]),
    ([2], False, [2, 3, 4]),
    ([-1], True, [3, 2, 1, 0]),
    ([2], True, [4, 3, 2]),
    ([-2, -1], False, [0 + 10, 1 + 20, 2 + 30]),
    ([1, 2], False, [1 + 20, 2 + 30, 3 + 40]),
    ([-1, 0], True, [3 + 40, 2 + 30, 1 + 20, 0 + 10]),
    ([2, -1], True, [4 + 10, 3 + 0]),
]


@pytest.mark.parametrize(("taps", "go_backwards", "expected"), CASES)
def test_sequence_taps_count_steps_from_tap_zero(
    taps: list[int], go_backwards: bool, expected: list[float]
) -> None:
    s = pt.vector("s")
    out = pt.scan(weighted_taps, sequences=[{"input": s, "taps": taps}],
                  go_backwards=go_backwards)
    np.testing.assert_allclose(evaluate([out], {s: np.arange(5.0)})[0], expected)


def test_sequence_taps_compiled() -> None:
    s = pt.vector("s")
    outs = [
        pt.scan(weighted_taps, sequences=[{"input": s, "taps": taps}], go_backwards=backwards)
        for taps, backwards, _ in CASES
    ]
    got = function([s], outs)(np.arange(5.0))
    for (taps, backwards, expected), value in zip(CASES, got):
        np.testing.assert_allclose(value, expected, err_msg=f"taps {taps}, backwards {backwards}")


def test_static_length_of_tapped_sequences() -> None:
    s = pt.vector("s", shape=(5,))
    assert pt.scan(lambda a: a, sequences=[{"input": s, "taps": [-1]}]).type.shape == (4,)
    assert pt.scan(lambda a: a, sequences=[{"input": s, "taps": [2]}]).type.shape == (3,)
    assert pt.scan(lambda a, b: a + b,
                   sequences=[{"input": s, "taps": [-3, 3]}]).type.shape == (0,)


@given(
    taps=st.lists(st.integers(-3, 3), min_size=1, max_size=3, unique=True),
    length=st.integers(0, 8),
    go_backwards=st.booleans(),
    static=st.booleans(),
)
def test_sequence_taps_property(taps: list[int], length: int, go_backwards: bool,
                                static: bool) -> None:
    s = pt.vector("s", shape=(length if static else None,))
    out = pt.scan(weighted_taps, sequences=[{"input": s, "taps": taps}],
                  go_backwards=go_backwards)
    values = np.arange(1.0, length + 1.0)
    expected = expected_weighted(values, taps, go_backwards)
    (got,) = evaluate([out], {s: values})
    assert got.shape == (len(expected),)
    np.testing.assert_allclose(got, expected)


def test_n_steps_with_taps_takes_the_first_positions_in_iteration_order() -> None:
    s = pt.vector("s")
    forward = pt.scan(lambda a, b: a + 10 * b, sequences=[{"input": s, "taps": [-1, 1]}],
                      n_steps=2)
    backward = pt.scan(lambda a, b: a + 10 * b, sequences=[{"input": s, "taps": [-1, 1]}],
                       n_steps=2, go_backwards=True)
    values = np.arange(6.0)
    expected = [
        [values[t - 1] + 10 * values[t + 1] for t in tap_positions(6, [-1, 1], backwards, 2)]
        for backwards in (False, True)
    ]
    got = evaluate([forward, backward], {s: values})
    np.testing.assert_allclose(got[0], expected[0])
    np.testing.assert_allclose(got[1], expected[1])
    carried = pt.scan(lambda a, b, acc: acc * 2 + a + 10 * b,
                      sequences=[{"input": s, "taps": [-1, 1]}], outputs_info=[pt.constant(0.0)],
                      n_steps=3, go_backwards=True)
    total = 0.0
    for t in tap_positions(6, [-1, 1], True, 3):
        total = total * 2 + values[t - 1] + 10 * values[t + 1]
    assert function([s], carried)(values)[-1] == evaluate([carried], {s: values})[0][-1] == total
    too_many = pt.scan(lambda a, b: a + b, sequences=[{"input": s, "taps": [-1, 1]}],
                       n_steps=4)
    with pytest.raises(ValueError, match="has 3 rows, fewer than n_steps=4"):
        evaluate([too_many], {s: np.arange(5.0)})  # 5 rows give 3 positions


def test_n_steps_shorter_than_a_sequence_compiled() -> None:
    s = pt.vector("s")
    out = pt.scan(lambda a: a * 10, sequences=[s], n_steps=2)
    np.testing.assert_allclose(function([s], out)(np.arange(6.0)), [0.0, 10.0])


def test_sequence_tap_forms_pytensor_accepts() -> None:
    s = pt.vector("s")
    one_int = pt.scan(lambda a: a, sequences=[{"input": s, "taps": 2}])
    no_taps = pt.scan(lambda a: a, sequences=[{"input": s, "taps": None}])
    got = evaluate([one_int, no_taps], {s: np.arange(4.0)})
    np.testing.assert_allclose(got[0], [2, 3])
    np.testing.assert_allclose(got[1], [0, 1, 2, 3])


# -- output taps --------------------------------------------------------------------------
def numpy_output_taps(initial: Array, taps: Sequence[int], steps: int,
                      step: Callable[..., float]) -> Array:
    history = list(initial)
    for _ in range(steps):
        history.append(step(*(history[len(history) + tap] for tap in taps)))
    return np.array(history[len(initial):])


@pytest.mark.parametrize("taps", [[-2, -1], [-1, -3], [-2], [-3, -2]])
def test_output_taps_read_earlier_steps(taps: list[int]) -> None:
    depth = -min(taps)
    start = pt.vector("start")
    initial = np.arange(1.0, depth + 1.0)

    def step(*previous: Variable) -> Variable:
        return weighted_taps(*previous) * 0.5 + 1.0

    out = pt.scan(step, outputs_info=[{"initial": start, "taps": taps}], n_steps=5)
    expected = numpy_output_taps(initial, taps, 5, lambda *p: float(
        sum(v * 10.0**i for i, v in enumerate(p)) * 0.5 + 1.0))
    np.testing.assert_allclose(evaluate([out], {start: initial})[0], expected)
    np.testing.assert_allclose(function([start], out)(initial), expected)


def test_output_taps_with_tapped_sequences_and_go_backwards() -> None:
    s, start = pt.vector("s"), pt.vector("start")
    out = pt.scan(lambda a, b, y2, y1: y1 - 0.5 * y2 + a * b,
                  sequences=[{"input": s, "taps": [-2, 1]}],
                  outputs_info=[{"initial": start, "taps": [-2, -1]}], go_backwards=True)
    values, initial = np.linspace(0.5, 3.0, 7), np.array([1.0, -1.0])
    history = list(initial)
    for t in tap_positions(7, [-2, 1], True):
        history.append(history[-1] - 0.5 * history[-2] + values[t - 2] * values[t + 1])
    np.testing.assert_allclose(evaluate([out], {s: values, start: initial})[0], history[2:])
    np.testing.assert_allclose(function([s, start], out)(values, initial), history[2:])


def test_output_tap_errors() -> None:
    start = pt.vector("start")
    with pytest.raises(ValueError, match=r"outputs_info\[0\]: taps \[-1\] read earlier values"):
        pt.scan(lambda p: p, outputs_info=[{"taps": [-1]}], n_steps=2)
    with pytest.raises(ValueError, match="output taps must be distinct and negative"):
        pt.scan(lambda p: p, outputs_info=[{"initial": start, "taps": [0]}], n_steps=2)
    x0 = pt.scalar("x0")
    default = pt.scan(lambda p: p + 1, outputs_info=[{"initial": x0, "taps": None}], n_steps=2)
    np.testing.assert_allclose(evaluate([default], {x0: 1.0})[0], [2.0, 3.0])


# -- derivatives --------------------------------------------------------------------------
@pytest.mark.parametrize(("taps", "go_backwards"), [
    ([-2], False), ([1, 3], False), ([-1, 2], True), ([2], True), ([-3, 0, 1], True),
])
def test_derivatives_through_sequence_taps(taps: list[int], go_backwards: bool) -> None:
    def build(xs: Variable, h0: Variable, w: Variable) -> Variable:
        def step(*arguments: Variable) -> Variable:
            *rows, h, w = arguments
            return pt.tanh(h * w + weighted_taps(*rows) * 0.1)

        result: Variable = pt.scan(step, sequences=[{"input": xs, "taps": taps}],
                                   outputs_info=[h0], non_sequences=[w],
                                   go_backwards=go_backwards)
        return result

    rng = np.random.default_rng(7)
    values = [rng.normal(size=8), np.asarray(0.3), np.asarray(0.8)]
    check_pullback(build, values)
    check_pushforward(build, values)


def test_derivatives_through_output_taps_and_go_backwards() -> None:
    def build(start: Variable, xs: Variable) -> Variable:
        result: Variable = pt.scan(lambda a, y3, y1: pt.sin(y1) * 0.7 + y3 * a,
                                   sequences=[{"input": xs, "taps": [1]}],
                                   outputs_info=[{"initial": start, "taps": [-3, -1]}],
                                   go_backwards=True)
        return result

    rng = np.random.default_rng(8)
    values = [rng.normal(size=3), rng.normal(size=6)]
    check_pullback(build, values)
    check_pushforward(build, values)


def test_second_derivative_through_taps() -> None:
    xs, w = pt.vector("xs"), pt.scalar("w")
    out = pt.scan(lambda a, b, h, w: pt.sin(h * w) + a * b * w,
                  sequences=[{"input": xs, "taps": [-1, 2]}],
                  outputs_info=[pt.constant(0.5)], non_sequences=[w], go_backwards=True)
    first = pt.grad(out.sum(), w)
    second = pt.grad(first, w)
    values = np.linspace(-1.0, 1.0, 7)

    def first_at(value: float) -> Array:
        return np.asarray(evaluate([first], {xs: values, w: value})[0])

    (numeric,) = numeric_gradient(first_at, [np.asarray(0.6)], np.asarray(1.0), eps=1e-5)
    np.testing.assert_allclose(evaluate([second], {xs: values, w: 0.6})[0], numeric, rtol=1e-6)
