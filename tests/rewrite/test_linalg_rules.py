"""Linear-algebra rewrites: each fires on its pattern, leaves look-alikes alone, and gives
the values of the graph it replaces; the default pipeline applies them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Variable, evaluate
from fgraph.op import Array
from numba_backend import function
from rewrite import optimize
from rewrite.linalg import LINALG, is_symmetric
from rewrite.rules import RuleSet
from rewrite.canonicalize import CANONICALIZE
from tests.rewrite.algebra_checks import check_rewrite, ops_of

RNG = np.random.default_rng(3)
RULES = RuleSet.union("linalg_and_canonicalize", LINALG, CANONICALIZE)


def spd(n: int) -> Array:
    x = RNG.normal(size=(n, n))
    return np.asarray(x @ x.T + n * np.eye(n))


def test_inverse_times_matrix_becomes_a_solve() -> None:
    a, b = pt.matrix("a"), pt.matrix("b")
    values = (spd(4), RNG.normal(size=(4, 2)))
    graph = check_rewrite(Graph([a, b], [pt.linalg.inv(a) @ b]), RULES, *values)
    assert ops_of(graph) == ["Solve"]
    vector = pt.vector("v")
    graph = check_rewrite(Graph([a, vector], [pt.linalg.inv(a) @ vector]), RULES, values[0], RNG.normal(size=4))
    assert "Inv" not in ops_of(graph) and "Solve" in ops_of(graph)


def test_matrix_times_inverse_becomes_a_transposed_solve() -> None:
    a, b = pt.matrix("a"), pt.matrix("b")
    graph = check_rewrite(
        Graph([a, b], [b @ pt.linalg.inv(a)]), RULES, RNG.normal(size=(3, 3)) + 3 * np.eye(3),
        RNG.normal(size=(2, 3)),
    )
    assert "Inv" not in ops_of(graph) and ops_of(graph).count("Solve") == 1


def test_inverse_of_inverse() -> None:
    a = pt.matrix("a")
    graph = check_rewrite(Graph([a], [pt.linalg.inv(pt.linalg.inv(a))]), RULES, spd(3))
    assert graph.outputs == (a,)
    single = check_rewrite(Graph([a], [pt.linalg.inv(a)]), RULES, spd(3))
    assert ops_of(single) == ["Inv"]


def test_log_of_determinant_uses_slogdet_and_keeps_log_semantics() -> None:
    a = pt.matrix("a")
    naive = Graph([a], [pt.log(pt.linalg.det(a))])
    graph = check_rewrite(naive, RULES, spd(3))
    assert "Det" not in ops_of(graph) and "SLogDet" in ops_of(graph)
    negative = np.diag([-1.0, 2.0, 3.0])
    (value,) = evaluate(graph.outputs, {a: negative})
    assert np.isnan(value)  # as log(det) = log(-6)
    (value,) = evaluate(graph.outputs, {a: np.zeros((3, 3))})
    assert value == -np.inf
    huge = np.eye(200) * 1e3  # det overflows to inf; slogdet does not
    (value,) = evaluate(graph.outputs, {a: huge})
    assert np.isclose(value, 200 * np.log(1e3))


def test_determinant_of_a_cholesky_factor_is_the_product_of_its_diagonal() -> None:
    a = pt.matrix("a")
    factor = pt.linalg.cholesky(a)
    graph = check_rewrite(Graph([a], [pt.linalg.det(factor)]), RULES, spd(4))
    assert "Det" not in ops_of(graph) and "Prod" in ops_of(graph)
    sign, logdet = pt.linalg.slogdet(factor)
    graph = check_rewrite(Graph([a], [sign, logdet]), RULES, spd(4))
    assert "SLogDet" not in ops_of(graph)
    _, r = pt.linalg.qr(a)
    graph = check_rewrite(Graph([a], [pt.linalg.det(r)]), RULES, RNG.normal(size=(4, 4)))
    assert "Det" not in ops_of(graph)
    general = check_rewrite(Graph([a], [pt.linalg.det(a)]), RULES, spd(4))
    assert ops_of(general) == ["Det"]


def test_solve_with_a_factored_matrix_reuses_the_factor() -> None:
    """When `a` is known symmetric (`assume_a="sym"`), its Cholesky factor solves."""
    a, b = pt.matrix("a"), pt.matrix("b")
    factor = pt.linalg.cholesky(a)
    solution = pt.linalg.solve(a, b, assume_a="sym")
    graph = check_rewrite(Graph([a, b], [factor, solution]), RULES, spd(4), RNG.normal(size=(4, 2)))
    assert "Solve" not in ops_of(graph) and ops_of(graph).count("CholeskySolve") == 1
    assert ops_of(graph).count("Cholesky") == 1
    alone = check_rewrite(Graph([a, b], [solution]), RULES, spd(4), RNG.normal(size=(4, 2)))
    assert ops_of(alone) == ["Solve"]


def test_solve_assuming_positive_definite_shares_the_factor() -> None:
    a, b = pt.matrix("a"), pt.vector("b")
    outputs = [pt.linalg.cholesky(a), pt.linalg.solve(a, b, assume_a="pos", lower=True)]
    graph = check_rewrite(Graph([a, b], outputs), RULES, spd(4), RNG.normal(size=4))
    assert ops_of(graph).count("Cholesky") == 1 and "Solve" not in ops_of(graph)


# The lower triangle (what cholesky reads) is positive definite; `a` is not symmetric, so
# a Cholesky solve would solve another system: numpy.linalg.solve gives [0, 1].
NOT_SYMMETRIC = np.array([[2.0, 1.0], [0.0, 2.0]])


def test_solve_of_a_matrix_not_known_symmetric_keeps_the_general_solve() -> None:
    a, b = pt.matrix("a"), pt.vector("b")
    outputs = [pt.linalg.solve(a, b), pt.linalg.cholesky(a)]
    graph = check_rewrite(Graph([a, b], outputs), RULES, NOT_SYMMETRIC, np.array([1.0, 2.0]))
    assert "Solve" in ops_of(graph) and "CholeskySolve" not in ops_of(graph)
    assert "Solve" in ops_of(optimize(Graph([a, b], outputs)))
    solution, _ = function([a, b], outputs)(NOT_SYMMETRIC, np.array([1.0, 2.0]))
    np.testing.assert_allclose(solution, np.linalg.solve(NOT_SYMMETRIC, [1.0, 2.0]), atol=1e-15)


Build = Callable[[Variable, Variable, Variable], Variable]
SYMMETRIC: list[tuple[str, Build]] = [
    ("x @ x.T", lambda x, y, d: x @ x.T),
    ("x.T @ x", lambda x, y, d: x.T @ x),
    ("plus a scaled identity", lambda x, y, d: x @ x.T + 0.5 * pt.eye(4)),
    ("plus a diagonal", lambda x, y, d: x.T @ x + d * pt.eye(x.shape[1])),
    ("elementwise of symmetric terms", lambda x, y, d: 2.0 * pt.exp(x @ x.T / 8) - 1.0 + x.T @ x),
    ("transposed", lambda x, y, d: (x @ x.T + pt.eye(4)).T),
]
NOT_KNOWN_SYMMETRIC: list[tuple[str, Build]] = [
    ("x @ y.T", lambda x, y, d: x @ y.T),
    ("x @ x", lambda x, y, d: x @ x),
    ("plus a general matrix", lambda x, y, d: x @ x.T + 0.1 * y),
    ("plus a vector along rows", lambda x, y, d: x @ x.T + d),
]


def diagonally_dominant() -> Array:
    return np.asarray(2 * np.eye(4) + 0.1 * RNG.normal(size=(4, 4)))


def linalg_inputs() -> tuple[list[Variable], list[Array]]:
    x, y, d, b = pt.matrix("x"), pt.matrix("y"), pt.vector("d"), pt.vector("b")
    values = [diagonally_dominant(), diagonally_dominant(), RNG.uniform(1, 2, size=4), RNG.normal(size=4)]
    return [x, y, d, b], values


@pytest.mark.parametrize("build", [c[1] for c in SYMMETRIC], ids=[c[0] for c in SYMMETRIC])
def test_solve_of_a_matrix_symmetric_by_construction_uses_its_factor(build: Build) -> None:
    (x, y, d, b), values = linalg_inputs()
    a = build(x, y, d)
    graph = Graph([x, y, d, b], [pt.linalg.solve(a, b), pt.linalg.cholesky(a)])
    rewritten = check_rewrite(graph, RULES, *values)
    assert "Solve" not in ops_of(rewritten) and "CholeskySolve" in ops_of(rewritten)
    optimized = optimize(graph)
    assert "Solve" not in ops_of(optimized) and "CholeskySolve" in ops_of(optimized)
    solution, _ = function([x, y, d, b], graph.outputs)(*values)
    (a_value,) = evaluate([a], dict(zip(graph.inputs, values)))
    np.testing.assert_allclose(solution, np.linalg.solve(a_value, values[-1]), rtol=1e-10)


@pytest.mark.parametrize("build", [c[1] for c in NOT_KNOWN_SYMMETRIC], ids=[c[0] for c in NOT_KNOWN_SYMMETRIC])
def test_solve_of_a_look_alike_keeps_the_general_solve(build: Build) -> None:
    """Values are not symmetric but have a positive definite lower triangle: a Cholesky
    solve would give other numbers than numpy's."""
    (x, y, d, b), values = linalg_inputs()
    a = build(x, y, d)
    graph = Graph([x, y, d, b], [pt.linalg.solve(a, b), pt.linalg.cholesky(a)])
    (a_value,) = evaluate([a], dict(zip(graph.inputs, values)))
    assert not np.allclose(a_value, a_value.T)
    rewritten = check_rewrite(graph, RULES, *values)
    assert "Solve" in ops_of(rewritten) and "CholeskySolve" not in ops_of(rewritten)
    solution, _ = function([x, y, d, b], graph.outputs)(*values)
    np.testing.assert_allclose(solution, np.linalg.solve(a_value, values[-1]), rtol=1e-10)


def test_batched_products_are_symmetric() -> None:
    x, b = pt.tensor3("x"), pt.matrix("b")
    a = x @ pt.linalg.matrix_transpose(x) + pt.eye(3)
    graph = Graph([x, b], [pt.linalg.solve(a, b[..., None]), pt.linalg.cholesky(a)])
    values = (RNG.normal(size=(2, 3, 3)), RNG.normal(size=(2, 3)))
    assert "CholeskySolve" in ops_of(check_rewrite(graph, RULES, *values))


def test_solve_with_a_product_of_cholesky_factors() -> None:
    a, b = pt.matrix("a"), pt.matrix("b")
    lower = pt.linalg.cholesky(a)
    graph = check_rewrite(
        Graph([a, b], [pt.linalg.solve(lower @ lower.T, b)]), RULES, spd(3), RNG.normal(size=(3, 2))
    )
    assert "Solve" not in ops_of(graph) and "MatMul" not in ops_of(graph)
    upper = pt.linalg.cholesky(a, lower=False)
    graph = check_rewrite(
        Graph([a, b], [pt.linalg.solve(upper.T @ upper, b)]), RULES, spd(3), RNG.normal(size=(3, 2))
    )
    assert "Solve" not in ops_of(graph)


def test_double_transpose_is_removed() -> None:
    a = pt.matrix("a")
    graph = check_rewrite(Graph([a], [pt.linalg.inv(a.T.T)]), RULES, spd(3))
    assert ops_of(graph) == ["Inv"]


def test_default_pipeline_applies_the_rules() -> None:
    a, b = pt.matrix("a"), pt.vector("b")
    graph = optimize(Graph([a, b], [pt.log(pt.linalg.det(a)) + pt.sum(pt.linalg.inv(a) @ b)]))
    names = ops_of(graph)
    assert "Inv" not in names and "Det" not in names and "SLogDet" in names


def test_is_symmetric_by_construction() -> None:
    x, y, d = pt.matrix("x"), pt.matrix("y"), pt.vector("d")
    n = pt.scalar("n", dtype="int64")
    batch = pt.tensor3("batch")
    known = [batch @ pt.linalg.matrix_transpose(batch) + y[..., None] * pt.eye(n),
             pt.expand_dims(d, -1) * pt.eye(n), pt.constant(np.stack([np.eye(2)] * 3)) * batch,
             x @ x.T, x.T @ x, pt.eye(n), pt.eye(3), pt.constant(np.array([[1.0, 2.0], [2.0, 5.0]])),
             pt.exp(x @ x.T) * 3.0, d * pt.eye(n), pt.expand_dims(x @ x.T, 0) + pt.eye(n),
             pt.linalg.matrix_transpose(y @ y.T - pt.eye(y.shape[0]))]
    unknown = [x, x @ y.T, x @ x, pt.eye(n, n + 1), pt.eye(n, k=1), x @ x.T + d, x @ x.T + y,
               pt.constant(np.array([[1.0, 2.0], [0.0, 5.0]])), (x @ x.T)[:, ::-1], d * pt.eye(n, k=1)]
    assert [is_symmetric(v) for v in known] == [True] * len(known)
    assert [is_symmetric(v) for v in unknown] == [False] * len(unknown)
