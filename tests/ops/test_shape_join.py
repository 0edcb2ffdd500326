"""`concatenate`, `stack` and `split`: values against NumPy, static shapes, derivatives
(each op's pullback is the other), and errors naming the shapes involved."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, ShapeError, Variable, check_graph, evaluate
from ops.join import Concatenate, Split, split
from tests.ops.checks import check_pullback, check_pushforward, run
from tests.ops.shape_checks import evaluate_checked, run_static

Array = np.ndarray[Any, np.dtype[Any]]


def sample(shape: tuple[int, ...], dtype: str = "float64", seed: int = 0) -> Array:
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


CONCATENATIONS = [
    ([(2,), (3,)], 0),
    ([(2,), (0,), (1,)], 0),
    ([(2, 3), (4, 3)], 0),
    ([(2, 3), (2, 1), (2, 0)], 1),
    ([(2, 3), (2, 5)], -1),
    ([(2, 3, 4), (2, 1, 4)], 1),
    ([(0, 3), (0, 3)], 0),
]


@pytest.mark.parametrize("shapes, axis", CONCATENATIONS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_concatenate_matches_numpy(
    shapes: list[tuple[int, ...]], axis: int, dtype: str
) -> None:
    values = [sample(shape, dtype, seed) for seed, shape in enumerate(shapes)]
    expected = np.concatenate(values, axis=axis)
    np.testing.assert_array_equal(
        run(lambda *xs: pt.concatenate(xs, axis=axis), values), expected
    )
    output, result = run_static(lambda *xs: pt.concatenate(xs, axis=axis), values)
    assert output.type.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize(
    "dtypes", [("int32", "float32"), ("int8", "uint8"), ("bool", "int16"), ("float32", "float64")]
)
def test_concatenate_promotes_dtypes_like_numpy(dtypes: tuple[str, str]) -> None:
    values = [sample((2,), dtype, seed) for seed, dtype in enumerate(dtypes)]
    expected = np.concatenate(values)
    result = run(lambda *xs: pt.concatenate(xs), values)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def test_concatenate_flattened_single_and_constants() -> None:
    values = [sample((2, 3)), sample((4,), seed=1)]
    expected = np.concatenate(values, axis=None)
    np.testing.assert_array_equal(run(lambda *xs: pt.concatenate(xs, axis=None), values), expected)
    x = pt.vector("x")
    assert pt.concatenate([x]) is x
    y = pt.concatenate([x, [1.0, 2.0]])
    (result,) = evaluate_checked([y], {x: np.zeros(1)})
    np.testing.assert_array_equal(result, [0.0, 1.0, 2.0])


def test_concatenate_static_shape_merges_known_lengths() -> None:
    a = pt.tensor("a", shape=(None, 3))
    b = pt.tensor("b", shape=(2, None))
    assert pt.concatenate([a, b], axis=0).type.shape == (None, 3)
    assert pt.concatenate([a, b], axis=1).type.shape == (2, None)
    c = pt.tensor("c", shape=(2, 3))
    assert pt.concatenate([c, b], axis=0).type.shape == (4, 3)
    assert pt.concatenate([c, a], axis=0).type.shape == (None, 3)


def test_concatenate_errors_name_the_shapes() -> None:
    a = pt.tensor("a", shape=(2, 3))
    b = pt.tensor("b", shape=(2, 4))
    with pytest.raises(ShapeError, match=r"axis 1: float64\(2, 3\), float64\(2, 4\)"):
        pt.concatenate([a, b], axis=0)
    with pytest.raises(ShapeError, match=r"equal ranks.*\(2, 3\), \(3,\)"):
        pt.concatenate([a, pt.tensor("c", shape=(3,))])
    with pytest.raises(ShapeError, match="scalars"):
        pt.concatenate([pt.scalar("s"), pt.scalar("t")])
    with pytest.raises(ValueError, match="out of bounds"):
        pt.concatenate([a, a], axis=2)
    with pytest.raises(ValueError, match="at least one"):
        pt.concatenate([])
    x, y = pt.matrix("x"), pt.matrix("y")
    joined = pt.concatenate([x, y])
    with pytest.raises(ShapeError, match=r"\(2, 3\), \(2, 4\)"):
        evaluate([joined], {x: np.zeros((2, 3)), y: np.zeros((2, 4))})


@pytest.mark.parametrize("shapes, axis", CONCATENATIONS)
def test_concatenate_derivatives(shapes: list[tuple[int, ...]], axis: int) -> None:
    values = [sample(shape, seed=seed) for seed, shape in enumerate(shapes)]

    def build(*xs: Variable) -> Variable:
        return pt.concatenate([x * (number + 1) for number, x in enumerate(xs)], axis=axis) ** 2

    check_pullback(build, values)
    check_pushforward(build, values)


def test_concatenate_gradient_skips_integer_inputs() -> None:
    x = pt.vector("x")
    counts = pt.vector("counts", dtype="int64")
    joined = pt.concatenate([x, counts])
    gradient = pt.grad((joined * 2.0).sum(), x)
    (result,) = evaluate_checked([gradient], {x: np.ones(2), counts: np.ones(3, dtype="int64")})
    np.testing.assert_array_equal(result, [2.0, 2.0])
    node = joined.owner
    assert node is not None and isinstance(node.op, Concatenate)
    cotangent = pt.constant(np.ones(5))
    assert node.op.pullback(node.inputs, node.outputs, (cotangent,))[1] is None


def test_concatenate_pushforward_with_a_constant_piece() -> None:
    check_pushforward(lambda x: pt.concatenate([x, np.ones(2), x * x]), [sample((3,))])


@pytest.mark.parametrize(
    "shape, count, axis",
    [((), 3, 0), ((3,), 2, 0), ((3,), 2, 1), ((2, 3), 3, -1), ((0, 2), 2, 1), ((4,), 1, 0)],
)
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_stack_matches_numpy(shape: tuple[int, ...], count: int, axis: int, dtype: str) -> None:
    values = [sample(shape, dtype, seed) for seed in range(count)]
    expected = np.stack(values, axis=axis)
    np.testing.assert_array_equal(run(lambda *xs: pt.stack(xs, axis=axis), values), expected)
    output, result = run_static(lambda *xs: pt.stack(xs, axis=axis), values)
    assert output.type.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


def test_stack_of_python_numbers_and_scalars() -> None:
    x = pt.scalar("x")
    (result,) = evaluate_checked([pt.stack([x, 2.0, x * 3])], {x: 1.5})
    np.testing.assert_array_equal(result, [1.5, 2.0, 4.5])


def test_stack_errors() -> None:
    with pytest.raises(ShapeError, match=r"\(2,\), \(2, 1\)"):
        pt.stack([pt.tensor("a", shape=(2,)), pt.tensor("b", shape=(2, 1))])
    with pytest.raises(ShapeError, match=r"float64\(1, 2\), float64\(1, 3\)"):
        pt.stack([pt.tensor("a", shape=(2,)), pt.tensor("b", shape=(3,))])
    with pytest.raises(ValueError, match="out of bounds"):
        pt.stack([pt.vector("a"), pt.vector("b")], axis=3)
    with pytest.raises(ValueError, match="at least one"):
        pt.stack([])


@pytest.mark.parametrize("shape, axis", [((), 0), ((3,), 0), ((3,), -1), ((2, 3), 1)])
def test_stack_derivatives(shape: tuple[int, ...], axis: int) -> None:
    values = [sample(shape, seed=seed) for seed in range(3)]

    def build(a: Variable, b: Variable, c: Variable) -> Variable:
        return pt.stack([a, b * a, c], axis=axis) ** 2

    check_pullback(build, values)
    check_pushforward(build, values)


@pytest.mark.parametrize(
    "shape, sizes, axis", [((5,), (2, 3), 0), ((2, 6), (1, 0, 5), 1), ((4, 2), (4,), 0)]
)
def test_split_matches_numpy(shape: tuple[int, ...], sizes: tuple[int, ...], axis: int) -> None:
    value = sample(shape)
    expected = np.split(value, np.cumsum(sizes[:-1]), axis=axis)
    x = pt.tensor("x", shape=shape)
    pieces = split(x, sizes, axis)
    results = evaluate_checked(pieces, {x: value})
    for piece, result, wanted in zip(pieces, results, expected):
        assert piece.type.shape == wanted.shape
        np.testing.assert_array_equal(result, wanted)


def test_split_with_symbolic_sizes_infers_the_last_static_length() -> None:
    x = pt.tensor("x", shape=(7, 2))
    n = pt.scalar("n", dtype="int64")
    first, second = split(x, (n, 4))
    assert first.type.shape == (3, 2) and second.type.shape == (4, 2)
    value = sample((7, 2))
    results = evaluate_checked([first, second], {x: value, n: np.int64(3)})
    np.testing.assert_array_equal(results[0], value[:3])
    np.testing.assert_array_equal(results[1], value[3:])


def test_split_errors() -> None:
    x = pt.tensor("x", shape=(5,))
    with pytest.raises(ShapeError, match=r"\(2, 2\).*length 5"):
        split(x, (2, 2))
    with pytest.raises(ShapeError, match="scalar"):
        split(pt.scalar("s"), (1,))
    y = pt.vector("y")
    n = pt.scalar("n", dtype="int64")
    pieces = split(y, (n, 2))
    check_graph(Graph([y, n], list(pieces)))
    with pytest.raises(ShapeError, match=r"\(4, 2\).*\(5,\)"):
        evaluate(pieces, {y: np.zeros(5), n: 4})


def test_split_derivatives_with_unused_pieces() -> None:
    def first_piece(x: Variable) -> Variable:
        return split(x, (2, 3), 1)[0] ** 2

    def both_pieces(x: Variable) -> Variable:
        left, right = split(x, (1, 1), 0)
        return left * right

    check_pullback(first_piece, [sample((2, 5))])
    check_pushforward(first_piece, [sample((2, 5))])
    check_pullback(both_pieces, [sample((2, 3))])
    check_pushforward(both_pieces, [sample((2, 3))])


def test_split_op_str() -> None:
    assert str(Split(0, (2, None))) == "Split{axis=0, sizes=(2, None)}"
