"""Linear-algebra rewrites: each fires on its pattern, leaves look-alikes alone, and gives
the values of the graph it replaces; the default pipeline applies them."""

from __future__ import annotations

import numpy as np

import ops as pt
from fgraph import Graph, evaluate
from fgraph.op import Array
from rewrite import optimize
from rewrite.linalg import LINALG
from rewrite.rule import RuleSet
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
    a, b = pt.matrix("a"), pt.matrix("b")
    factor = pt.linalg.cholesky(a)
    solution = pt.linalg.solve(a, b)
    graph = check_rewrite(Graph([a, b], [factor, solution]), RULES, spd(4), RNG.normal(size=(4, 2)))
    assert "Solve" not in ops_of(graph) and ops_of(graph).count("CholeskySolve") == 1
    assert ops_of(graph).count("Cholesky") == 1
    alone = check_rewrite(Graph([a, b], [solution]), RULES, spd(4), RNG.normal(size=(4, 2)))
    assert ops_of(alone) == ["Solve"]


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
