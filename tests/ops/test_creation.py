"""Creation ops (`alloc`, `full`, `zeros`, `ones`, `empty`, the `_like` forms, `arange`,
`eye`): values and dtypes against NumPy, static and symbolic shapes, derivatives and
errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
import ops.elementwise_functions
from fgraph import DTypeError, Graph, ShapeError, Variable, check_graph, evaluate
from ops.creation import ARange, Alloc, AllocEmpty, Eye
from tests.ops.checks import check_pullback, check_pushforward
from tests.ops.shape_checks import evaluate_checked

Array = np.ndarray[Any, np.dtype[Any]]


def sample(shape: tuple[int, ...], dtype: str = "float64", seed: int = 0) -> Array:
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


def constant_value(variable: Variable) -> Array:
    """Evaluate a graph without inputs, checking it and its static type."""
    return evaluate_checked([variable], {})[0]


# --- alloc and full ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "value_shape, shape",
    [((), (2, 3)), ((), ()), ((3,), (2, 3)), ((1, 3), (4, 2, 3)), ((), (0, 2))],
)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
def test_alloc_matches_numpy(
    value_shape: tuple[int, ...], shape: tuple[int, ...], dtype: str
) -> None:
    value = sample(value_shape, dtype)
    x = pt.tensor("x", dtype=dtype, shape=value_shape)
    y = pt.alloc(x, *shape)
    assert y.type == pt.tensor(dtype=dtype, shape=shape).type
    (result,) = evaluate_checked([y], {x: value})
    np.testing.assert_array_equal(result, np.broadcast_to(value, shape))
    assert result.flags.writeable


def test_alloc_shape_spellings() -> None:
    x = pt.scalar("x")
    n = pt.scalar("n", dtype="int64")
    template = pt.matrix("template")
    spellings = [
        pt.alloc(x, 2, n),
        pt.alloc(x, (2, n)),
        pt.alloc(x, [2, n]),
        pt.alloc(x, template.shape),
    ]
    for y in spellings:
        assert y.owner is not None and isinstance(y.owner.op, Alloc)
    assert [y.type.shape for y in spellings] == [(2, None), (2, None), (2, None), (None, None)]
    results = evaluate_checked(spellings, {x: 1.5, n: 3, template: np.zeros((2, 3))})
    for result in results:
        np.testing.assert_array_equal(result, np.full((2, 3), 1.5))


@pytest.mark.parametrize(
    "value_shape, static, shape",
    [
        ((), (), (2, 3)),
        ((3,), (None,), (2, 3)),
        ((1, 3), (1, None), (4, 2, 3)),
        ((2,), (None,), (2,)),
    ],
)
def test_alloc_derivatives(
    value_shape: tuple[int, ...], static: tuple[int | None, ...], shape: tuple[int, ...]
) -> None:
    def build(x: Variable) -> Variable:
        return pt.alloc(pt.specify_shape(x, static), *shape) ** 2

    check_pullback(build, [sample(value_shape)])
    check_pushforward(build, [sample(value_shape)])


def test_alloc_gradient_of_a_scalar_value_sums_and_skips_integers() -> None:
    x = pt.scalar("x")
    n = pt.scalar("n", dtype="int64")
    y = pt.alloc(x, n, 3)
    gradient = pt.grad((y * 2.0).sum(), x)
    assert gradient.type.shape == ()
    (result,) = evaluate_checked([gradient], {x: 0.5, n: 4})
    assert result == 24.0
    node = pt.alloc(pt.scalar("k", dtype="int64"), 2).owner
    assert node is not None
    assert node.op.pullback(node.inputs, node.outputs, (pt.constant(np.ones(2)),)) == (None, None)


@pytest.mark.parametrize(
    "fill, dtype", [(1.5, None), (3, None), (True, None), (2, "float32"), (2.7, "int16")]
)
def test_full_dtypes_match_numpy(fill: float, dtype: str | None) -> None:
    expected = np.full((2, 3), fill, dtype=dtype)
    result = constant_value(pt.full((2, 3), fill, dtype))
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def test_full_of_a_variable_and_a_broadcast_row() -> None:
    x = pt.scalar("x", dtype="float32")
    y = pt.full(4, x)
    z = pt.full((2, 3), x, dtype="float64")
    row = pt.full((2, 3), np.arange(3))
    assert (y.dtype, z.dtype, row.dtype) == ("float32", "float64", "int64")
    results = evaluate_checked([y, z, row], {x: np.float32(2.5)})
    np.testing.assert_array_equal(results[0], np.full(4, 2.5, dtype="float32"))
    np.testing.assert_array_equal(results[2], np.broadcast_to(np.arange(3), (2, 3)))


# --- zeros, ones, empty -----------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), 3, (0,), (2, 3), [2, 0, 4]])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "bool"])
def test_zeros_ones_empty_match_numpy(shape: int | tuple[int, ...], dtype: str) -> None:
    for create, reference in ((pt.zeros, np.zeros), (pt.ones, np.ones)):
        result = constant_value(create(shape, dtype))
        expected = reference(shape, dtype)
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result, expected)
    empty = pt.empty(shape, dtype)
    assert empty.owner is not None and isinstance(empty.owner.op, AllocEmpty)
    assert constant_value(empty).shape == np.empty(shape).shape


def test_default_dtypes() -> None:
    assert pt.zeros(3).dtype == "float64"
    assert pt.ones((2,)).dtype == "float64"
    assert pt.empty(()).dtype == "float64"


def test_creation_with_symbolic_shapes() -> None:
    n = pt.scalar("n", dtype="int64")
    m = pt.scalar("m", dtype="int32")
    template = pt.tensor("template", shape=(None, 4))
    outputs = [pt.zeros((n, 2)), pt.ones(template.shape, "int32"), pt.empty((m, n)), pt.zeros(n)]
    assert [y.type.shape for y in outputs] == [(None, 2), (None, 4), (None, None), (None,)]
    results = evaluate_checked(outputs, {n: 3, m: np.int32(2), template: np.zeros((5, 4))})
    assert [r.shape for r in results] == [(3, 2), (5, 4), (2, 3), (3,)]
    np.testing.assert_array_equal(results[1], np.ones((5, 4), dtype="int32"))


def test_creation_shape_errors() -> None:
    with pytest.raises(ShapeError, match=r"non-negative.*\(2, -1\)"):
        pt.zeros((2, -1))
    with pytest.raises(ShapeError, match="non-negative"):
        pt.empty(-3)
    with pytest.raises(TypeError, match="ints or integer"):
        pt.ones((2.5,))
    with pytest.raises(DTypeError, match="integers"):
        pt.zeros(pt.scalar("f"))
    with pytest.raises(ShapeError, match=r"lower rank"):
        pt.alloc(pt.vector("v"), *())
    n = pt.scalar("n", dtype="int64")
    for y in (pt.zeros((n, 2)), pt.empty((2, n))):
        check_graph(Graph([n], [y]))
        with pytest.raises(ShapeError, match="-1"):
            evaluate([y], {n: -1})


# --- the _like forms --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [None, "int32", "float32"])
def test_like_forms_match_numpy(dtype: str | None) -> None:
    value = sample((2, 3), "float32")
    x = pt.tensor("x", dtype="float32", shape=(None, 3))
    outputs = [pt.zeros_like(x, dtype), pt.ones_like(x, dtype), pt.full_like(x, 7, dtype)]
    expected = [
        np.zeros_like(value, dtype),
        np.ones_like(value, dtype),
        np.full_like(value, 7, dtype),
    ]
    for output in outputs:
        assert output.type.shape == (None, 3)
    for result, wanted in zip(evaluate_checked(outputs, {x: value}), expected):
        assert result.dtype == wanted.dtype
        np.testing.assert_array_equal(result, wanted)


def test_like_forms_of_static_types_need_no_input() -> None:
    x = pt.tensor("x", shape=(2, 3))
    zeros = pt.zeros_like(x)
    assert zeros.type == x.type
    assert x not in Graph([x], [zeros]).nodes[0].inputs
    np.testing.assert_array_equal(constant_value(pt.ones_like([[1, 2]])), [[1, 1]])


def test_elemwise_like_helpers_are_kept() -> None:
    x = pt.vector("x", dtype="float32")
    assert ops.elementwise_functions.zeros_like(x).type == x.type
    assert ops.elementwise_functions.ones_like(x).type == x.type


# --- arange -----------------------------------------------------------------------------
ARANGES: list[tuple[float, float | None, float]] = [
    (5, None, 1),
    (0, None, 1),
    (-3, None, 1),
    (2, 7, 1),
    (7, 2, 1),
    (7, 2, -2),
    (0, 10, 3),
    (1.0, 2.0, 0.25),
    (0.0, 1.0, 0.1),
    (2.5, None, 1),
    (-1, 1, 0.3),
    (10, 0, -0.7),
]


@pytest.mark.parametrize("start, stop, step", ARANGES)
@pytest.mark.parametrize("dtype", [None, "float32", "int32"])
def test_arange_of_constants_matches_numpy(
    start: float, stop: float | None, step: float, dtype: str | None
) -> None:
    expected = np.arange(start, stop, step, dtype=dtype)
    y = pt.arange(start, stop, step, dtype=dtype)
    assert y.type.shape == expected.shape
    result = constant_value(y)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


Number = np.integer[Any] | np.floating[Any]


@pytest.mark.parametrize(
    "first, last",
    [
        (np.int64(1), np.int64(6)),
        (np.int32(1), np.int64(6)),
        (np.float32(1), np.float32(6)),
        (np.int16(1), np.float64(6)),
    ],
)
def test_arange_of_variables_matches_numpy_dtypes(first: Number, last: Number) -> None:
    start = pt.scalar("start", dtype=first.dtype)
    stop = pt.scalar("stop", dtype=last.dtype)
    outputs = [pt.arange(start, stop), pt.arange(stop), pt.arange(start, 10, 2)]
    expected = [np.arange(first, last), np.arange(last), np.arange(first, 10, 2)]
    results = evaluate_checked(outputs, {start: first, stop: last})
    for output, result, wanted in zip(outputs, results, expected):
        assert output.type.shape == (None,)
        assert result.dtype == wanted.dtype
        np.testing.assert_array_equal(result, wanted)


def test_arange_errors() -> None:
    with pytest.raises(ValueError, match="zero"):
        pt.arange(0, 5, 0)
    with pytest.raises(DTypeError, match="real scalars"):
        pt.arange(pt.vector("v"))
    with pytest.raises(DTypeError, match="real scalars"):
        pt.arange(1j)
    step = pt.scalar("step", dtype="int64")
    y = pt.arange(0, 5, step)
    with pytest.raises(ValueError, match="zero"):
        evaluate([y], {step: 0})


def test_arange_derivatives() -> None:
    def build(start: Variable, step: Variable) -> Variable:
        return pt.arange(start, 4.1, step) ** 2

    # Derivatives hold where the length is locally constant (away from 4.1 - start = k step).
    check_pullback(build, [np.array(0.3), np.array(0.7)])
    check_pushforward(build, [np.array(0.3), np.array(0.7)])
    check_pullback(lambda start: pt.arange(start, 3.0) * 2.0, [np.array(0.5)])


def test_arange_op_has_static_length_parameter() -> None:
    y = pt.arange(3)
    assert y.owner is not None and y.owner.op == ARange("int64", 3)
    assert str(y.owner.op) == "ARange{dtype='int64', length=3}"


# --- eye --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "n, m, k", [(3, None, 0), (3, 4, 0), (4, 3, 1), (3, 4, -2), (3, 3, 5), (0, None, 0), (2, 0, 0)]
)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
def test_eye_matches_numpy(n: int, m: int | None, k: int, dtype: str) -> None:
    expected = np.eye(n, m, k, dtype=dtype)
    y = pt.eye(n, m, k, dtype=dtype)
    assert y.type.shape == expected.shape
    result = constant_value(y)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def test_eye_of_variables() -> None:
    n = pt.scalar("n", dtype="int64")
    k = pt.scalar("k", dtype="int32")
    y = pt.eye(n, 3, k)
    assert y.type.shape == (None, 3)
    assert y.owner is not None and isinstance(y.owner.op, Eye)
    (result,) = evaluate_checked([y], {n: 4, k: np.int32(-1)})
    np.testing.assert_array_equal(result, np.eye(4, 3, -1))
    with pytest.raises(DTypeError, match="integer scalar"):
        pt.eye(3, k=pt.scalar("f"))
    with pytest.raises(ShapeError, match="non-negative"):
        pt.eye(-2)
