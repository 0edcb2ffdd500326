"""Compiled linear algebra against the reference evaluator: every op on stacked and
broadcast batches, float32 and float64, gradients compiled, and the run-time errors
(bad shapes, singular and indefinite matrices) naming the op. Cases share a few
compiled functions, since each costs a numba compile."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Variable, evaluate
from numba_backend import function

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(11)


def spd(n: int, *batch: int, dtype: str = "float64") -> Array:
    x = RNG.normal(size=(*batch, n, n))
    return np.asarray(x @ np.swapaxes(x, -1, -2) + n * np.eye(n), dtype=dtype)


def assert_parity(inputs: list[Variable], outputs: list[Variable], values: list[Array], rtol: float) -> None:
    compiled = function(inputs, outputs)
    got = compiled(*values)
    expected = evaluate(outputs, dict(zip(inputs, values)))
    for g, e in zip(got, expected):
        assert np.asarray(g).dtype == e.dtype and np.shape(g) == e.shape
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol)


def _every_op(a: Variable, b: Variable, tall: Variable) -> list[Variable]:
    factor = pt.linalg.cholesky(a)
    sign, logdet = pt.linalg.slogdet(a)
    w, _ = pt.linalg.eigh(a)
    u, s, vh = pt.linalg.svd(tall, full_matrices=False)
    q, r = pt.linalg.qr(tall)
    reconstructed = (u * pt.expand_dims(s, -2)) @ vh
    return [
        factor,
        pt.linalg.cholesky(a, lower=False),
        pt.linalg.solve(a, b),
        pt.linalg.solve_triangular(factor, b, lower=True),
        pt.linalg.solve_triangular(factor, b, lower=True, trans=1, unit_diagonal=True),
        pt.linalg.cho_solve((factor, True), b),
        pt.linalg.inv(a),
        pt.linalg.det(a),
        sign,
        logdet,
        w,
        s,
        reconstructed,
        q @ r,
        pt.linalg.svd(tall, compute_uv=False),
        pt.linalg.svd(tall)[0] * pt.linalg.svd(tall)[0],
    ]


@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-9), ("float32", 2e-3)])
def test_every_op_on_batches(dtype: str, rtol: float) -> None:
    a = pt.tensor("a", dtype=dtype, shape=(None, None, None))
    b = pt.tensor("b", dtype=dtype, shape=(None, None, None))
    tall = pt.tensor("tall", dtype=dtype, shape=(None, None, None))
    values = [spd(4, 3, dtype=dtype), RNG.normal(size=(3, 4, 2)).astype(dtype),
              RNG.normal(size=(3, 5, 3)).astype(dtype)]
    assert_parity([a, b, tall], _every_op(a, b, tall), values, rtol)


def test_unbatched_and_broadcast_batches() -> None:
    a = pt.tensor("a", shape=(1, 3, 3))
    b = pt.tensor("b", shape=(4, 3, 2))
    matrix, vector = pt.matrix("m"), pt.vector("v")
    outputs = [pt.linalg.solve(a, b), pt.linalg.solve(matrix, vector), pt.linalg.det(matrix),
               pt.linalg.qr(pt.transpose(matrix), mode="complete")[0]]
    values = [spd(3, 1), RNG.normal(size=(4, 3, 2)), spd(3), RNG.normal(size=3)]
    assert_parity([a, b, matrix, vector], outputs, values, 1e-10)


def test_gradients_compile() -> None:
    cov, y = pt.matrix("cov"), pt.vector("y")
    factor = pt.linalg.cholesky(cov)
    z = pt.linalg.solve_triangular(factor, y, lower=True)
    logp = -0.5 * pt.sum(z * z) - pt.sum(pt.log(pt.linalg.diagonal(factor)))
    _, logabsdet = pt.linalg.slogdet(cov)
    outputs = [logp, *pt.grad(logp + logabsdet, [cov, y])]
    assert_parity([cov, y], outputs, [spd(5), RNG.normal(size=5)], 1e-9)


def test_run_time_errors_name_the_op() -> None:
    a, b = pt.matrix("a"), pt.matrix("b")
    compiled = function([a, b], [pt.linalg.cholesky(a), pt.linalg.solve(a, b)])
    with pytest.raises(np.linalg.LinAlgError, match=r"Cholesky.* of a .*: the matrix is not positive definite"):
        compiled(-np.eye(3), np.ones((3, 1)))
    with pytest.raises(ValueError, match=r"Cholesky.*shapes do not fit.*\(2, 3\)"):
        compiled(np.ones((2, 3)), np.ones((2, 1)))
    solve = function([a, b], [pt.linalg.solve(a, b), pt.linalg.inv(b)])
    with pytest.raises(np.linalg.LinAlgError, match="Solve.*singular"):
        solve(np.ones((3, 3)), np.eye(3))
    with pytest.raises(np.linalg.LinAlgError, match="Inv.*singular"):
        solve(np.eye(3), np.ones((3, 3)))
    triangular = function([a, b], [pt.linalg.solve_triangular(a, b, lower=True)])
    with pytest.raises(np.linalg.LinAlgError, match="SolveTriangular.*singular"):
        triangular(np.tril(np.ones((3, 3))) - np.eye(3), np.ones((3, 1)))


def test_optimized_graph_uses_the_rewrites() -> None:
    a, b = pt.matrix("a"), pt.vector("b")
    compiled = function([a, b], [pt.log(pt.linalg.det(a)), pt.linalg.inv(a) @ b])
    names = {type(node.op).__name__ for node in compiled.graph.nodes}
    assert "Inv" not in names and "Det" not in names and {"SLogDet", "Solve"} <= names
    value = spd(4)
    log_det, solved = compiled(value, np.ones(4))
    np.testing.assert_allclose(log_det, np.log(np.linalg.det(value)), rtol=1e-12)
    np.testing.assert_allclose(solved, np.linalg.solve(value, np.ones(4)), rtol=1e-12)
