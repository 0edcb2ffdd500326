"""`set_subtensor` / `inc_subtensor` (`IncSubtensor`, `AdvancedIncSubtensor`): values
against NumPy, broadcasting of the written value, repeated indices, dtypes,
derivatives with respect to both operands, and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import DTypeError, Graph, ShapeError, Variable, check_graph, evaluate
from tests.ops.checks import check_pullback, check_pushforward, run

Array = np.ndarray[Any, np.dtype[Any]]

# (index, shape of the written value); basic and advanced, with broadcasting values.
UPDATES = [
    (1, (3,)),
    (1, ()),
    (slice(1, 3), (2, 3)),
    (slice(1, 3), (1, 3)),
    (slice(1, 3), (2, 1)),
    (slice(None, None, -2), (3,)),
    ((slice(None), 2), (5,)),
    ((None, 0), (1, 3)),
    ((Ellipsis, None), (5, 3, 1)),
    ([0, 2, 4], (3, 3)),
    ([0, 2, 4], (3, 1)),
    (([0, 1], [1, 2]), (2,)),
    ((slice(None), [2, 0]), (5, 2)),
    ((slice(1, None), [[2], [0]]), (2, 1)),
    (np.array([True, False, False, True, True]), (3,)),
]


def numpy_update(x: Array, y: Array, index: Any, set_instead_of_inc: bool) -> Array:
    result = x.copy()
    if set_instead_of_inc:
        result[index] = y
    else:
        np.add.at(result, index, y)
    return result


@pytest.mark.parametrize(("index", "y_shape"), UPDATES, ids=repr)
@pytest.mark.parametrize("set_instead_of_inc", [True, False], ids=["set", "inc"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_update_values(
    index: Any, y_shape: tuple[int, ...], set_instead_of_inc: bool, dtype: str
) -> None:
    rng = np.random.default_rng(0)
    x_value = rng.integers(-5, 5, size=(5, 3)).astype(dtype)
    y_value = rng.integers(-5, 5, size=y_shape).astype(dtype)
    update = pt.set_subtensor if set_instead_of_inc else pt.inc_subtensor
    y_static = pt.tensor("y", dtype=dtype, shape=y_shape)  # static 1s broadcast
    x = pt.tensor("x", dtype=dtype, shape=(None, None))
    z = update(x[index], y_static)
    assert z.type == x.type
    check_graph(Graph([x, y_static], [z]))
    (got,) = evaluate([z], {x: x_value, y_static: y_value})
    np.testing.assert_array_equal(got, numpy_update(x_value, y_value, index, set_instead_of_inc))
    assert got.dtype == x_value.dtype
    x_static = pt.tensor("x", dtype=dtype, shape=(5, 3))
    assert update(x_static[index], y_static).type == x_static.type


def test_inc_accumulates_repeated_indices_and_set_keeps_the_last() -> None:
    x_value = np.zeros((4, 2))
    index = ([0, 2, 0, 0], [1, 1, 1, 0])
    y_value = np.array([1.0, 2.0, 3.0, 4.0])
    got_inc = run(lambda x, y: pt.inc_subtensor(x[index], y), [x_value, y_value])
    expected = np.zeros((4, 2))
    expected[0, 1], expected[2, 1], expected[0, 0] = 4.0, 2.0, 4.0
    np.testing.assert_array_equal(got_inc, expected)
    got_set = run(lambda x, y: pt.set_subtensor(x[index], y), [x_value, y_value])
    expected[0, 1] = 3.0
    np.testing.assert_array_equal(got_set, expected)


def test_updates_with_symbolic_indices() -> None:
    x = pt.matrix("x")
    y = pt.vector("y")
    i = pt.scalar("i", dtype="int64")
    rows = pt.vector("rows", dtype="int64")
    outputs = [
        pt.set_subtensor(x[i:, 0], y),
        pt.inc_subtensor(x[rows, i], y),
        pt.set_subtensor(x[rows][:, i], y),  # updates the gathered rows, as in PyTensor
    ]
    check_graph(Graph([x, y, i, rows], outputs))
    x_value = np.arange(12.0).reshape(4, 3)
    y_value = np.array([10.0, 20.0, 30.0])
    got = evaluate(outputs, {x: x_value, y: y_value, i: 1, rows: [3, 1, 3]})
    expected = [x_value.copy(), x_value.copy(), x_value[[3, 1, 3]].copy()]
    expected[0][1:, 0] = y_value
    np.add.at(expected[1], ([3, 1, 3], 1), y_value)
    expected[2][:, 1] = y_value
    for result, want in zip(got, expected):
        np.testing.assert_array_equal(result, want)


def test_input_values_are_not_modified() -> None:
    x = pt.vector("x")
    constant = pt.constant(np.arange(3.0))
    value = np.arange(3.0)
    got = evaluate(
        [pt.set_subtensor(x[0], 9.0), pt.inc_subtensor(constant[[1, 1]], 1.0)], {x: value}
    )
    np.testing.assert_array_equal(value, np.arange(3.0))
    np.testing.assert_array_equal(got[0], [9.0, 1.0, 2.0])
    np.testing.assert_array_equal(got[1], [0.0, 3.0, 2.0])


def test_value_dtypes() -> None:
    x = pt.vector("x", dtype="float32")
    # A Python scalar takes the variable's dtype (NEP 50), a safe cast is inserted.
    assert pt.set_subtensor(x[0], 1.5).dtype == "float32"
    assert pt.inc_subtensor(x[1:], pt.vector("i", dtype="int8")).dtype == "float32"
    with pytest.raises(DTypeError, match=r"float64 value into a float32 variable.*astype"):
        pt.set_subtensor(x[0], pt.scalar("d"))
    n = pt.vector("n", dtype="int64")
    with pytest.raises(DTypeError, match="float64 value into a int64 variable"):
        pt.set_subtensor(n[0], 2.5)
    with pytest.raises(DTypeError, match="dtype float64, the indexed variable float32"):
        pt.IncSubtensor((0,))(x, pt.scalar("d"))


def test_value_shape_errors_name_both_shapes() -> None:
    x = pt.tensor("x", shape=(5, 3))
    with pytest.raises(ShapeError, match=r"shape \(3, 3\) does not broadcast .* shape \(2, 3\)"):
        pt.set_subtensor(x[1:3], pt.tensor("y", shape=(3, 3)))
    with pytest.raises(ShapeError, match=r"shape \(1, 3\) does not broadcast .* shape \(3,\)"):
        pt.inc_subtensor(x[1], pt.tensor("y", shape=(1, 3)))
    with pytest.raises(ShapeError, match=r"shape \(4,\) does not broadcast .* shape \(2, 3\)"):
        pt.inc_subtensor(x[[0, 1]], np.zeros(4))


@pytest.mark.parametrize("advanced", [False, True])
def test_a_value_broadcasts_at_run_time_only_along_static_length_1_axes(advanced: bool) -> None:
    """Its gradient sums the region over exactly the static length-1 axes, so a value of
    unknown length that turns out to be 1 would get a gradient of the wrong shape."""
    x, index = pt.matrix("x"), pt.vector("index", dtype="int64")
    region = x[index] if advanced else x[1:3]
    unknown, one = pt.vector("unknown"), pt.tensor("one", shape=(1,))
    values: dict[Variable, Any] = {x: np.zeros((4, 3)), index: np.array([0, 2])}
    with pytest.raises(ShapeError, match=r"value \(float64\(\?,\)\) has length 1 along axis 0 "
                       r"at run time where the indexed region has 3"):
        evaluate([pt.inc_subtensor(region, unknown)], {**values, unknown: np.ones(1)})
    (result,) = evaluate([pt.inc_subtensor(region, one)], {**values, one: np.ones(1)})
    np.testing.assert_array_equal(result.sum(axis=1), [3, 0, 3, 0] if advanced else [0, 3, 3, 0])


def test_first_argument_must_come_from_indexing() -> None:
    x = pt.vector("x")
    with pytest.raises(TypeError, match=r"set_subtensor: .*result of indexing"):
        pt.set_subtensor(x, 1.0)
    with pytest.raises(TypeError, match=r"inc_subtensor: .*result of indexing"):
        pt.inc_subtensor(pt.exp(x), 1.0)
    with pytest.raises(TypeError, match="result of indexing"):
        pt.inc_subtensor(np.zeros(3), 1.0)


def test_update_ops_print_what_they_do() -> None:
    x = pt.vector("x")
    for z, name in [
        (pt.set_subtensor(x[1:], 0.0), "SetSubtensor{1:}"),
        (pt.inc_subtensor(x[1:], 0.0), "IncSubtensor{1:}"),
        (pt.set_subtensor(x[[1]], 0.0), "AdvancedSetSubtensor{?}"),
        (pt.inc_subtensor(x[[1]], 0.0), "AdvancedIncSubtensor{?}"),
    ]:
        assert z.owner is not None and str(z.owner.op) == name


# --- derivatives ---------------------------------------------------------------------------
# (index, shape of the written value, whether the index repeats an element)
GRADIENT_UPDATES = [
    (slice(1, 3), (2, 3), False),
    (slice(1, 3), (1, 3), False),
    (slice(1, 3), (3,), False),
    (slice(None, None, -2), (), False),
    ((None, 0), (1, 1), False),
    ([0, 2, 2], (3, 3), True),
    (([0, 1, 1], [1, 2, 2]), (3,), True),
    ((slice(None), [2, 0, 2]), (1, 3), True),
    (([[4], [0]], slice(None, 2)), (2, 1, 1), False),
]


def with_static_ones(y: Variable, shape: tuple[int, ...]) -> Variable:
    """`y` (unknown lengths, as check_pullback makes inputs) with the axes that have length
    1 in `shape` marked statically 1, so that they broadcast (`y[None, 0]` per such axis)."""
    index: list[Any] = []
    for length in shape:
        index.extend([None, 0] if length == 1 else [slice(None)])
    return y[tuple(index)]


@pytest.mark.parametrize(("index", "y_shape", "repeats"), GRADIENT_UPDATES, ids=repr)
@pytest.mark.parametrize("set_instead_of_inc", [True, False], ids=["set", "inc"])
def test_update_derivatives(
    index: Any, y_shape: tuple[int, ...], repeats: bool, set_instead_of_inc: bool
) -> None:
    rng = np.random.default_rng(3)
    values = [rng.normal(size=(5, 3)), rng.normal(size=y_shape)]
    update = pt.set_subtensor if set_instead_of_inc else pt.inc_subtensor
    if set_instead_of_inc and repeats:
        # A repeated set keeps one write, yet the gradient of y reaches every written
        # element (PyTensor's convention): only the derivative for x is checked here.
        y_value = pt.constant(values[1])
        check_pullback(lambda x: update(x[index], y_value), values[:1])
        check_pushforward(lambda x: update(x[index], y_value), values[:1])
        return

    def build(x: Variable, y: Variable) -> Variable:
        return update(x[index], with_static_ones(y, y_shape))

    check_pullback(build, values)
    check_pushforward(build, values)


def test_pushforward_with_a_constant_operand() -> None:
    y_value = np.array([1.0, 2.0])
    x_value = np.arange(4.0)
    check_pushforward(lambda x: pt.set_subtensor(x[1:3], pt.constant(y_value)), [x_value])
    check_pushforward(lambda y: pt.inc_subtensor(pt.constant(x_value)[[0, 0]], y), [y_value])
    check_pushforward(lambda y: pt.set_subtensor(pt.constant(x_value)[1:3], y), [y_value])


def test_gradient_with_symbolic_index_inputs() -> None:
    x = pt.vector("x")
    y = pt.vector("y")
    rows = pt.vector("rows", dtype="int64")
    i = pt.scalar("i", dtype="int64")
    weights = pt.constant(np.arange(1.0, 6.0))
    cost = (pt.set_subtensor(x[i:], y[rows]) * weights).sum()
    grad_x, grad_y = pt.grad(cost, [x, y])
    check_graph(Graph([x, y, rows, i], [grad_x, grad_y]))
    got = evaluate([grad_x, grad_y], {x: np.zeros(5), y: np.zeros(2), rows: [1, 1, 0], i: 2})
    np.testing.assert_array_equal(got[0], [1.0, 2.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(got[1], [5.0, 3.0 + 4.0])


def test_integer_updates_have_no_gradient() -> None:
    n = pt.vector("n", dtype="int64")
    f = pt.vector("f")
    updated = pt.cast(pt.set_subtensor(n[0], 5), "float64")
    (gradient,) = pt.grad((updated * f).sum(), [f])
    (got,) = evaluate([gradient], {n: np.array([1, 2]), f: np.ones(2)})
    np.testing.assert_array_equal(got, [5.0, 2.0])
