"""`pt.kron` and `pt.linalg.matrix_power`, compositions of existing ops: values against
NumPy with static and unknown lengths, derivatives against finite differences, errors."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Input, ShapeError, TensorType, Variable, check_graph, evaluate
from tests.ops.checks import check_pullback, run

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(0)


def evaluated_static(build: Callable[..., Variable], values: list[Array]) -> Array:
    """`build` over inputs with the values' static shapes, validated and evaluated."""
    inputs = [Input(TensorType(v.dtype.name, v.shape), f"x{k}") for k, v in enumerate(values)]
    output = build(*inputs)
    check_graph(Graph(inputs, [output]))
    (result,) = evaluate([output], dict(zip(inputs, values)))
    return result


def assert_equal_to(expected: Array, got: Array) -> None:
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


KRON_SHAPES = [((2,), (3,)), ((2, 3), (4, 5)), ((2,), (3, 4)), ((2, 3, 4), (5, 2)),
               ((), (3,)), ((2, 1), (1, 3))]


@pytest.mark.parametrize("shapes", KRON_SHAPES, ids=str)
def test_kron_matches_numpy(shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    values = [RNG.normal(size=s) for s in shapes]
    expected = np.kron(*values)
    assert_equal_to(expected, evaluated_static(pt.kron, values))
    assert_equal_to(expected, run(pt.kron, values))


def test_kron_derivative() -> None:
    check_pullback(pt.kron, [RNG.normal(size=(2, 3)), RNG.normal(size=(3,))])


def matrices(shape: tuple[int, ...]) -> Array:
    """Well-conditioned random matrices (for the inverse in negative powers)."""
    return RNG.normal(size=shape) + 3 * np.eye(shape[-1])


@pytest.mark.parametrize("n", range(6))
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3, 3)], ids=["matrix", "batch"])
def test_matrix_power_matches_numpy(n: int, shape: tuple[int, ...]) -> None:
    a = matrices(shape)
    expected = np.linalg.matrix_power(a, n)
    assert_equal_to(expected, evaluated_static(lambda x: pt.linalg.matrix_power(x, n), [a]))
    assert_equal_to(expected, run(lambda x: pt.linalg.matrix_power(x, n), [a]))


def test_matrix_power_keeps_an_integer_dtype() -> None:
    a = RNG.integers(-3, 4, size=(3, 3))
    for n in (0, 3):
        assert_equal_to(np.linalg.matrix_power(a, n), run(lambda x: pt.linalg.matrix_power(x, n), [a]))


def require_inv() -> None:
    """Negative powers need `ops.linalg.inv`; skip where the library has none."""
    if not hasattr(importlib.import_module("ops.linalg"), "inv"):
        pytest.skip("ops.linalg has no inv")


@pytest.mark.parametrize("n", [-1, -2, -5])
def test_matrix_power_of_a_negative_n_is_a_power_of_the_inverse(n: int) -> None:
    require_inv()
    a = matrices((2, 3, 3))
    assert_equal_to(np.linalg.matrix_power(a, n), run(lambda x: pt.linalg.matrix_power(x, n), [a]))


@pytest.mark.parametrize("n, shape", [(3, (3, 3)), (2, (2, 2, 2)), (-2, (3, 3))])
def test_matrix_power_derivative(n: int, shape: tuple[int, ...]) -> None:
    if n < 0:
        require_inv()
    check_pullback(lambda a: pt.linalg.matrix_power(a, n), [matrices(shape)], rtol=1e-4)


@pytest.mark.parametrize("n", [1.5, True, "2"], ids=["float", "bool", "str"])
def test_matrix_power_needs_a_python_int(n: object) -> None:
    with pytest.raises(TypeError, match="matrix_power: n must be a Python int"):
        pt.linalg.matrix_power(pt.matrix("a"), n)  # type: ignore[arg-type]


@pytest.mark.parametrize("shape, message", [((2, 3), "square"), ((3,), "at least 2 axes")])
def test_matrix_power_needs_square_matrices(shape: tuple[int, ...], message: str) -> None:
    with pytest.raises(ShapeError, match=message):
        pt.linalg.matrix_power(pt.tensor("a", shape=shape), 2)
