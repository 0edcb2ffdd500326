"""Basic indexing (`Subtensor`): values and static shapes against NumPy, symbolic slice
bounds, derivatives, and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Input, TensorType, Variable, check_graph, evaluate
from ops.indexing import SYMBOLIC, Slice
from tests.ops.checks import check_pullback, check_pushforward, run

Array = np.ndarray[Any, np.dtype[Any]]


def assert_static_shape_matches(variable: Variable, actual: tuple[int, ...]) -> None:
    """Every statically known length is the actual one, and the ranks agree."""
    static = variable.type.shape
    assert len(static) == len(actual), (variable.type, actual)
    assert all(want is None or want == got for want, got in zip(static, actual)), (
        variable.type,
        actual,
    )


def evaluate_static(x_value: Array, index: Any) -> tuple[Variable, Array]:
    """`x[index]` over an input with the value's full static shape, validated and run."""
    x = Input(TensorType(x_value.dtype.name, x_value.shape), "x")
    y = x[index]
    check_graph(Graph([x], [y]))
    (result,) = evaluate([y], {x: x_value})
    return y, result


BASIC_INDICES = [
    1,
    -1,
    slice(1, 3),
    slice(None, None, -1),
    slice(3, -6, -1),
    slice(-2, None),
    slice(None, -7),
    slice(10, None),
    slice(None, None, -2),
    slice(5, 0, -2),
    (slice(None, None, 2), 1),
    (None, Ellipsis, 0),
    (slice(None), None),
    (Ellipsis, None),
    (Ellipsis, 2),
    (1, 2),
    (-1, Ellipsis, -2),
    (None, 1, None, slice(1, None)),
    (),
    Ellipsis,
    (slice(None), slice(None), slice(None)),
    np.int64(2),
    (np.int32(-2), slice(np.int64(1), None)),
]


@pytest.mark.parametrize("index", BASIC_INDICES, ids=repr)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_basic_values_and_static_shapes(index: Any, dtype: str) -> None:
    value = np.arange(6 * 5 * 3).reshape(6, 5, 3).astype(dtype)
    expected = value[index]
    # Unknown static shape.
    got = run(lambda x: x[index], [value])
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == expected.dtype
    # Fully known static shape: the result's static shape is the actual one.
    variable, got = evaluate_static(value, index)
    np.testing.assert_array_equal(got, expected)
    assert variable.type.shape == expected.shape
    assert variable.owner is not None and isinstance(variable.owner.op, pt.Subtensor)


@pytest.mark.parametrize(
    "index", [slice(1, None), slice(None, None, -1), (slice(None), 1), (None, 0), 0], ids=repr
)
def test_size_zero_axes(index: Any) -> None:
    value = np.zeros((0, 3, 2))
    if index == 0 or index == (None, 0):
        with pytest.raises(IndexError, match="out of bounds for axis 0 with length 0"):
            evaluate_static(value, index)
        return
    variable, got = evaluate_static(value, index)
    assert got.shape == value[index].shape == variable.type.shape


def test_static_lengths_unknown_where_they_must_be() -> None:
    x = pt.tensor("x", shape=(None, 4))
    assert x[1:3].type.shape == (None, 4)
    assert x[:, 1:3].type.shape == (None, 2)
    assert x[:, ::-1].type.shape == (None, 4)
    assert x[None, 0].type.shape == (1, 4)
    i = pt.scalar("i", dtype="int64")
    assert x[:, i:].type.shape == (None, None)
    assert x[i].type.shape == (4,)


def test_trailing_full_slices_give_the_same_node() -> None:
    x = pt.matrix("x")
    node = x[1].owner
    assert node is not None and node is x[1, :].owner is x[1, ...].owner
    assert x[1:2].owner is x[1:2, :].owner
    assert str(node.op) == "Subtensor{1}"


# Each case indexes a variable or, for the expected value, a NumPy array alike.
SYMBOLIC_CASES: list[tuple[Callable[[Any, Any, Any, Any], Any], tuple[int, int, int]]] = [
    (lambda x, i, j, k: x[i:j], (1, 4, 1)),
    (lambda x, i, j, k: x[i:j:k], (-1, 0, -2)),
    (lambda x, i, j, k: x[::k], (0, 0, -1)),
    (lambda x, i, j, k: x[i::k, j], (4, 2, -3)),
    (lambda x, i, j, k: x[i], (-2, 0, 0)),
    (lambda x, i, j, k: x[i, j], (2, -1, 0)),
    (lambda x, i, j, k: x[None, :j, i], (2, 3, 0)),
    (lambda x, i, j, k: x[i:j], (7, -9, 1)),
]


@pytest.mark.parametrize(
    ("case", "index_dtype"),
    [
        (case, dtype)
        for case, (_, bounds) in enumerate(SYMBOLIC_CASES)
        for dtype in ("int64", "int32", "uint8")
        if dtype != "uint8" or min(bounds) >= 0  # negative bounds need a signed dtype
    ],
)
def test_symbolic_bounds(case: int, index_dtype: str) -> None:
    build, (i_value, j_value, k_value) = SYMBOLIC_CASES[case]
    value = np.arange(30.0).reshape(6, 5)
    x = pt.tensor("x", shape=(6, 5))
    i, j, k = (pt.scalar(name, dtype=index_dtype) for name in "ijk")
    y = build(x, i, j, k)
    inputs = [x, i, j, k]
    check_graph(Graph(inputs, [y]))
    (got,) = evaluate([y], {x: value, i: i_value, j: j_value, k: k_value})
    expected = build(value, i_value, j_value, k_value)
    np.testing.assert_array_equal(got, expected)
    assert_static_shape_matches(y, got.shape)


def test_symbolic_index_is_a_node_input_not_a_parameter() -> None:
    x = pt.vector("x")
    i = pt.scalar("i", dtype="int64")
    j = pt.scalar("j", dtype="int64")
    first, second = x[i:], x[j:]
    assert first.owner is not None and second.owner is not None
    assert first.owner.op == second.owner.op == pt.Subtensor((Slice(SYMBOLIC, None, None),))
    assert first.owner.inputs == (x, i)
    # A constant scalar index is folded into the op, so its bounds are static.
    assert x[pt.constant(np.int64(2)) :].owner == x[2:].owner


def test_run_time_bounds_error() -> None:
    x = pt.vector("x")
    i = pt.scalar("i", dtype="int64")
    with pytest.raises(IndexError, match=r"Subtensor\{\?\}.*out of bounds"):
        evaluate([x[i]], {x: np.zeros(3), i: 3})
    k = pt.scalar("k", dtype="int64")
    with pytest.raises(ValueError, match="step cannot be zero"):
        evaluate([x[::k]], {x: np.zeros(3), k: 0})


# --- errors --------------------------------------------------------------------------------
def test_static_out_of_bounds_names_axis_index_and_length() -> None:
    x = pt.tensor("x", shape=(3, 4))
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with length 4"):
        x[0, 4]
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0 with length 3"):
        x[-4]
    assert x[-3].type.shape == (4,)


def test_too_many_indices_names_rank_and_count() -> None:
    x = pt.matrix("x")
    with pytest.raises(IndexError, match=r"too many indices.*rank 2, 3 indexed"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match=r"too many indices.*rank 2, 3 indexed"):
        x[None, 0, ..., 1:, 2]
    with pytest.raises(IndexError, match="too many indices"):
        pt.scalar("s")[0]


def test_float_index_variables_are_rejected_naming_the_dtype() -> None:
    x = pt.vector("x")
    with pytest.raises(TypeError, match="float32"):
        x[pt.scalar("f", dtype="float32")]
    with pytest.raises(TypeError, match="float64"):
        x[pt.vector("v")]
    with pytest.raises(TypeError, match="float64"):
        x[: pt.scalar("f")]
    with pytest.raises(TypeError, match="float"):
        x[1.0]
    with pytest.raises(TypeError, match="float64"):
        x[[0.0, 1.5]]
    with pytest.raises(TypeError, match="slice bounds must be integer scalars"):
        x[: pt.vector("n", dtype="int64")]


def test_other_malformed_indices() -> None:
    x = pt.matrix("x")
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 0, ...]
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    with pytest.raises(IndexError, match="scalar boolean"):
        x[True]
    with pytest.raises(TypeError, match="indices must be"):
        x["a"]
    with pytest.raises(TypeError, match="ops.stack"):
        x[[pt.scalar("i", dtype="int64")]]


def test_op_checks_its_inputs() -> None:
    x = pt.vector("x")
    with pytest.raises(TypeError, match="expected 1 index inputs, got 0"):
        pt.Subtensor((SYMBOLIC,))(x)
    with pytest.raises(TypeError, match="must be a scalar"):
        pt.Subtensor((SYMBOLIC,))(x, pt.vector("i", dtype="int64"))
    with pytest.raises(TypeError, match="index entries"):
        pt.Subtensor((1.5,))
    assert pt.Subtensor((np.int64(1),)) == pt.Subtensor((1,))


# --- derivatives ---------------------------------------------------------------------------
GRADIENT_INDICES = [
    1,
    -1,
    slice(1, 3),
    slice(None, None, -1),
    slice(3, -6, -1),
    (slice(None, None, 2), 1),
    (None, Ellipsis, 0),
    (slice(None), None),
    (slice(1, None), slice(None, 1)),
]


@pytest.mark.parametrize("index", GRADIENT_INDICES, ids=repr)
def test_pullback_and_pushforward(index: Any) -> None:
    value = np.random.default_rng(1).normal(size=(5, 3))
    check_pullback(lambda x: x[index], [value])
    check_pushforward(lambda x: x[index], [value])


def test_gradient_with_symbolic_bounds() -> None:
    x = pt.vector("x")
    i = pt.scalar("i", dtype="int64")
    j = pt.scalar("j", dtype="int64")
    weights = np.arange(1.0, 11.0)
    cost = (x[i:j:2] * pt.constant(weights)[: 3]).sum()
    gradient = pt.grad(cost, x)
    check_graph(Graph([x, i, j], [gradient]))
    (got,) = evaluate([gradient], {x: np.zeros(8), i: 1, j: 7})
    expected = np.zeros(8)
    expected[1:7:2] = weights[:3]
    np.testing.assert_array_equal(got, expected)


def test_gradient_of_repeated_basic_indexing_adds_up() -> None:
    check_pullback(lambda x: x[1] * x[1:3].sum(axis=0) + x[-1], [np.arange(12.0).reshape(4, 3)])


def test_integer_input_has_no_gradient_path() -> None:
    x = pt.vector("x", dtype="int64")
    f = pt.vector("f")
    cost = (pt.cast(x[1:], "float64") * f).sum()
    (gradient,) = pt.grad(cost, [f])
    (got,) = evaluate([gradient], {x: np.array([1, 2, 3]), f: np.ones(2)})
    np.testing.assert_array_equal(got, [2.0, 3.0])
