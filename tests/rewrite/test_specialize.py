"""Specialization rules: cheap forms of small constant powers and of division by a
constant, keeping values and types."""

from __future__ import annotations

import numpy as np

import ops as pt
from fgraph import Constant, Graph
from rewrite.specialize import SPECIALIZE
from tests.rewrite.algebra_checks import check_rewrite, ops_of, rewritten


def test_square() -> None:
    x = pt.vector("x")
    assert ops_of(check_rewrite(Graph([x], [x**2]), SPECIALIZE)) == ["Square"]


def test_cube_and_fourth_power() -> None:
    x = pt.vector("x", dtype="float32")
    result = check_rewrite(Graph([x], [x**3, x**4.0]), SPECIALIZE)
    assert sorted(ops_of(result)) == ["Mul", "Square", "Square"]  # x*x shared


def test_integer_powers_stay_integers() -> None:
    x = pt.vector("x", dtype="int64")
    value = np.array([3, -7, 100_000])  # 100_000 ** 3 wraps around, like power does
    result = check_rewrite(Graph([x], [x**2, x**3]), SPECIALIZE, value)
    assert "Pow" not in ops_of(result)
    assert result.outputs[0].dtype == "int64"


def test_float_power_of_integers_is_computed_in_float() -> None:
    x = pt.vector("x", dtype="int8")
    y = x ** pt.constant(np.array([2.0]))
    result = check_rewrite(Graph([x], [y]), SPECIALIZE, np.array([100, -3, 5], dtype="int8"))
    assert ops_of(result) == ["Cast{float64}", "Square"]


def test_square_root() -> None:
    x = pt.vector("x")
    result = check_rewrite(Graph([x], [x**0.5]), SPECIALIZE, np.array([0.0, 2.0, 9.0]))
    assert ops_of(result) == ["Sqrt"]


def test_negative_powers_of_floats() -> None:
    x = pt.vector("x")
    result = check_rewrite(Graph([x], [x**-1, x**-2]), SPECIALIZE, np.array([0.5, -2.0, 3.0]))
    assert sorted(ops_of(result)) == ["Reciprocal", "Reciprocal", "Square"]


def test_negative_powers_of_integers_are_kept() -> None:
    x = pt.vector("x", dtype="int32")
    graph = Graph([x], [x ** pt.constant(np.array([-1], dtype="int32"))])
    assert rewritten(graph, SPECIALIZE) is graph  # (NumPy refuses to evaluate it)


def test_other_and_varying_powers_are_kept() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    graph = Graph([x, y], [x**5, x**y, x ** pt.constant(np.array([2.0, 3.0, 2.0]))])
    positive = np.array([0.5, 1.5, 2.0])
    assert check_rewrite(graph, SPECIALIZE, positive, positive) is graph


def test_power_that_broadcasts_is_kept() -> None:
    x = pt.tensor("x", shape=(1,))
    graph = Graph([x], [x ** pt.constant(np.full(3, 2.0))])
    assert check_rewrite(graph, SPECIALIZE) is graph


def test_division_by_a_float_constant() -> None:
    x = pt.tensor("x", shape=(None, 2), dtype="float32")
    graph = Graph([x], [x / 4.0, x / pt.constant(np.array([[2.0, 8.0]], dtype="float32"))])
    result = check_rewrite(graph, SPECIALIZE)
    assert ops_of(result) == ["Mul", "Mul"]
    product = result.outputs[0].owner
    assert product is not None
    scale = product.inputs[1]
    assert isinstance(scale, Constant) and float(scale.data.reshape(())) == 0.25


def test_division_by_zero_or_a_tiny_constant_is_kept() -> None:
    x = pt.vector("x")
    graph = Graph([x], [x / 0.0, x / 1e-310])
    assert check_rewrite(graph, SPECIALIZE, np.array([1e-300, 0.0, -2.0])) is graph


def test_integer_division_by_integers_is_kept() -> None:
    x = pt.vector("x", dtype="int64")
    graph = Graph([x], [x / 4])
    assert check_rewrite(graph, SPECIALIZE, np.array([1, 2, 3])) is graph


def test_one_over_x_is_a_reciprocal() -> None:
    x, n = pt.vector("x", dtype="float32"), pt.vector("n", dtype="int32")
    graph = Graph([x, n], [1 / x, 1.0 / n])
    value = np.array([0.5, -4.0, 0.0], dtype="float32")
    result = check_rewrite(graph, SPECIALIZE, value, np.array([1, -2, 0], dtype="int32"))
    assert sorted(ops_of(result)) == ["Cast{float64}", "Reciprocal", "Reciprocal"]
