"""Advanced indexing (`AdvancedSubtensor`): values and static shapes against NumPy
(including its placement rule for non-adjacent array indices), symbolic index arrays
and masks, derivatives with repeated indices, and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Input, TensorType, Variable, check_graph, evaluate
from ops.indexing import NEW_AXIS, SYMBOLIC, Entry, Slice
from tests.ops.checks import check_pullback, check_pushforward, run
from tests.ops.test_subtensor import assert_static_shape_matches, evaluate_static

Array = np.ndarray[Any, np.dtype[Any]]

ADVANCED_INDICES = [
    [0, 2, 2],
    [-1],
    [],
    ([0, 1], [1, 2]),
    (slice(None), [1, 0]),
    (slice(None), [[1, 0], [2, 2]]),
    ([[0], [3]], [1, 2]),
    (0, slice(None), [1, 2]),
    ([0, 1], slice(None), 1),
    (slice(None), [0, 1], [2, 0]),
    (slice(None), [0, 1], None, [1, 2]),
    ([0, 1], None, [0, 1]),
    (None, [0, 1], [0, 1]),
    (Ellipsis, [2, 0]),
    (slice(1, None), [[3, 0]], slice(None, None, -1)),
    (np.array([1, -2]), slice(None, 2)),
    ([1, 2], Ellipsis, None),
    np.array([True, False, True, True, False, False]),
    (slice(None), np.array([False, True, True, False, True])),
    np.ones((6, 5), dtype=bool),
    (np.zeros(6, dtype=bool), 1),
    ([1, 4, 4], np.array([True, False, True, False, True])),
]


@pytest.mark.parametrize("index", ADVANCED_INDICES, ids=repr)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_advanced_values_and_static_shapes(index: Any, dtype: str) -> None:
    value = np.arange(6 * 5 * 3).reshape(6, 5, 3).astype(dtype)
    expected = value[index]
    got = run(lambda x: x[index], [value])
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == expected.dtype
    variable, got = evaluate_static(value, index)
    np.testing.assert_array_equal(got, expected)
    assert variable.type.shape == expected.shape
    assert variable.owner is not None and isinstance(variable.owner.op, pt.AdvancedSubtensor)


def test_placement_rule_matches_numpy_on_random_indices() -> None:
    """Random mixes of ints, slices, new axes and arrays: static shape and values."""
    rng = np.random.default_rng(0)
    value = np.arange(4 * 5 * 3 * 2).reshape(4, 5, 3, 2)
    checked = 0
    while checked < 150:
        index: list[Any] = []
        for length in value.shape[: rng.integers(1, 5)]:
            while rng.random() < 0.2:
                index.append(None)
            kind = rng.integers(3)
            if kind == 0:
                index.append(int(rng.integers(-length, length)))
            elif kind == 1:
                start, stop = (int(b) for b in rng.integers(-length, length, size=2))
                index.append(slice(start, stop, int(rng.choice([-2, -1, 1, 2]))))
            else:
                shape = [(2,), (1, 2), (3, 1)][rng.integers(3)]
                index.append(rng.integers(-length, length, size=shape))
        if not any(isinstance(item, np.ndarray) for item in index):
            continue
        try:
            expected = value[tuple(index)]
        except IndexError:  # arrays that do not broadcast: the graph must refuse too
            with pytest.raises(IndexError, match="do not broadcast"):
                evaluate_static(value, tuple(index))
            continue
        variable, got = evaluate_static(value, tuple(index))
        assert variable.type.shape == expected.shape, index
        np.testing.assert_array_equal(got, expected)
        checked += 1


def test_symbolic_index_arrays() -> None:
    value = np.arange(20.0).reshape(5, 4)
    x = pt.tensor("x", shape=(5, 4))
    rows = pt.vector("rows", dtype="int64")
    grid = pt.tensor("grid", dtype="int32", shape=(2, None))
    i = pt.scalar("i", dtype="int64")
    cases: list[tuple[Variable, Array]] = [
        (x[rows], value[[3, 0, 0]]),
        (x[:, grid], value[:, np.array([[1, 3], [0, 0]])]),
        (x[rows, i], value[[3, 0, 0], 2]),
        (x[i:, rows[:2]], value[2:, [3, 0]]),
        (x[rows[:2], None, grid[0]], value[[3, 0], None, [1, 3]]),
    ]
    inputs = [x, rows, grid, i]
    check_graph(Graph(inputs, [variable for variable, _ in cases]))
    got = evaluate(
        [variable for variable, _ in cases],
        {x: value, rows: [3, 0, 0], grid: np.array([[1, 3], [0, 0]], dtype="int32"), i: 2},
    )
    for (variable, expected), result in zip(cases, got):
        np.testing.assert_array_equal(result, expected)
        assert_static_shape_matches(variable, result.shape)
    assert x[rows].type.shape == (None, 4)
    assert x[:, grid].type.shape == (5, 2, None)


def test_symbolic_boolean_masks() -> None:
    value = np.arange(12.0).reshape(4, 3)
    x = pt.tensor("x", shape=(4, 3))
    rows = pt.vector("rows", dtype="bool")
    both = pt.matrix("both", dtype="bool")
    row_mask = np.array([True, False, True, True])
    full_mask = value % 2 == 0
    y_rows, y_both = x[rows], x[both]
    assert y_rows.type.shape == (None, 3) and y_both.type.shape == (None,)
    got = evaluate([y_rows, y_both, x[rows, 1]], {x: value, rows: row_mask, both: full_mask})
    np.testing.assert_array_equal(got[0], value[row_mask])
    np.testing.assert_array_equal(got[1], value[full_mask])
    np.testing.assert_array_equal(got[2], value[row_mask, 1])
    with pytest.raises(IndexError, match=r"boolean index of shape \(3,\) does not match axis 0"):
        x[pt.vector("m", dtype="bool", shape=(3,))]


def test_constant_masks_become_integer_arrays() -> None:
    x = pt.tensor("x", shape=(3, 2))
    y = x[np.array([[True, False], [False, False], [True, True]])]
    assert y.type.shape == (3,)
    assert y.owner is not None and y.owner.op == pt.AdvancedSubtensor((SYMBOLIC, SYMBOLIC))
    with pytest.raises(IndexError, match="did not match .* axis 0: length 3, mask length 2"):
        x[[True, False]]


def test_run_time_out_of_bounds() -> None:
    x = pt.vector("x")
    rows = pt.vector("rows", dtype="int64")
    with pytest.raises(IndexError, match=r"AdvancedSubtensor\{\?\}.*out of bounds"):
        evaluate([x[rows]], {x: np.zeros(3), rows: [0, 3]})


def test_errors() -> None:
    x = pt.tensor("x", shape=(3, 4))
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with length 4"):
        x[:, [0, 5]]
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with length 3"):
        x[[-4, 0]]
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with length 3"):
        x[3, [0]]
    with pytest.raises(IndexError, match=r"shapes \(2,\), \(3,\) do not broadcast"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(TypeError, match="float32"):
        x[pt.vector("f", dtype="float32")]
    with pytest.raises(IndexError, match=r"too many indices.*rank 2, 3 indexed"):
        x[[0], [0], [0]]
    with pytest.raises(TypeError, match="expected 1 index inputs, got 0"):
        pt.AdvancedSubtensor((SYMBOLIC,))(x)


def test_op_printing_and_equality() -> None:
    op = pt.AdvancedSubtensor((Slice(1, SYMBOLIC, -1), NEW_AXIS, SYMBOLIC, 2))
    assert str(op) == "AdvancedSubtensor{1:?:-1, None, ?, 2}"
    entries: tuple[Entry, ...] = (Slice(1, SYMBOLIC, -1), NEW_AXIS, SYMBOLIC, 2)
    assert op == pt.AdvancedSubtensor(entries) and hash(op) == hash(pt.AdvancedSubtensor(entries))


def test_take() -> None:
    value = np.arange(12.0).reshape(3, 4)
    got = run(lambda x: pt.take(x, [2, 0, 2], axis=1), [value])
    np.testing.assert_array_equal(got, np.take(value, [2, 0, 2], axis=1))
    np.testing.assert_array_equal(run(lambda x: pt.take(x, 1, axis=-1), [value]), value[:, 1])
    np.testing.assert_array_equal(run(lambda x: pt.take(x, [[5], [11]]), [value]), [[5.0], [11.0]])
    with pytest.raises(TypeError, match="integer dtype"):
        pt.take(pt.matrix("m"), [True, False], axis=0)
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        pt.take(pt.matrix("m"), [0], axis=2)


# --- derivatives ---------------------------------------------------------------------------
GRADIENT_INDICES = [
    [0, 2, 2],
    ([0, 1, 1], [1, 2, 2]),
    (slice(None), [1, 0, 1]),
    (slice(None, None, -1), [[1], [1]]),
    ([1, 1], None, slice(1, None)),
    (Ellipsis, [2, 2, 0], None),
    np.array([True, False, True, True]),
]


@pytest.mark.parametrize("index", GRADIENT_INDICES, ids=repr)
def test_pullback_accumulates_repeated_indices(index: Any) -> None:
    value = np.random.default_rng(2).normal(size=(4, 3))
    check_pullback(lambda x: x[index], [value])
    check_pushforward(lambda x: x[index], [value])


def test_gradient_through_a_symbolic_index_array() -> None:
    x = pt.vector("x")
    rows = pt.vector("rows", dtype="int64")
    gradient = pt.grad((x[rows] * pt.constant(np.array([1.0, 10.0, 100.0]))).sum(), x)
    check_graph(Graph([x, rows], [gradient]))
    (got,) = evaluate([gradient], {x: np.zeros(4), rows: [3, 0, 3]})
    np.testing.assert_array_equal(got, [10.0, 0.0, 0.0, 101.0])


def test_second_derivative_through_advanced_indexing() -> None:
    x = pt.vector("x")
    inner = pt.grad((x[[0, 0, 2]] ** 3).sum(), x)
    outer = pt.grad((inner * pt.constant(np.array([1.0, 2.0, 3.0]))).sum(), x)
    (got,) = evaluate([outer], {x: np.array([1.0, 2.0, 3.0])})
    # d/dx of [2 * 3x0^2, 0, 3x2^2] . [1, 2, 3] = [12 x0, 0, 18 x2]
    np.testing.assert_allclose(got, [12.0, 0.0, 54.0])


def test_input_without_static_shape_still_gathers() -> None:
    x = Input(TensorType("float64", (None, None)), "x")
    y = x[[1, 0], :1]
    assert y.type.shape == (2, None)
    (got,) = evaluate([y], {x: np.arange(6.0).reshape(2, 3)})
    np.testing.assert_array_equal(got, [[3.0], [0.0]])
