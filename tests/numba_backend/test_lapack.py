"""`numba_backend.lapack`, the per-matrix LAPACK calls of the linear-algebra kernels,
against NumPy and SciPy: both dtypes, inputs in C order, Fortran order and as strided
views (never written), rectangular and empty matrices, the failure codes, and a
compiled call that loads from numba's disk cache in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.linalg

from numba_backend import lapack

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(5)
DTYPES = [("float64", 1e-10), ("float32", 2e-4)]


def layouts(x: Array) -> list[Array]:
    """`x` in C order, in Fortran order and as a strided view (every other column)."""
    wide = np.repeat(x, 2, axis=1)
    return [np.ascontiguousarray(x), np.asfortranarray(x), wide[:, ::2]]


def spd(n: int, dtype: str) -> Array:
    x = RNG.normal(size=(n, n))
    return np.asarray(x @ x.T + n * np.eye(n), dtype=dtype)


def unchanged(call: Callable[[Array], Any], a: Array) -> Any:
    before = a.copy()
    result = call(a)
    np.testing.assert_array_equal(a, before)
    return result


@pytest.mark.parametrize("dtype, tol", DTYPES)
@pytest.mark.parametrize("n", [1, 4])
def test_cholesky_and_solves(dtype: str, tol: float, n: int) -> None:
    a = spd(n, dtype)
    b = RNG.normal(size=(n, 3)).astype(dtype)
    lower = np.linalg.cholesky(a)
    out = np.empty((n, n), dtype)
    for matrix in layouts(a):
        assert unchanged(lambda m: lapack.cholesky_into(m, out, True), matrix) == 0
        np.testing.assert_allclose(out, lower, rtol=tol, atol=tol)
        assert lapack.cholesky_into(matrix, out, False) == 0
        np.testing.assert_allclose(out, lower.T, rtol=tol, atol=tol)
    solution = np.empty((n, 3), dtype)
    for factor in layouts(lower):
        for is_lower, trans, unit in [(True, False, False), (True, True, True), (False, True, False)]:
            matrix = factor if is_lower else factor.T
            assert lapack.solve_triangular_into(matrix, b, solution, is_lower, trans, unit) == 0
            expected = scipy.linalg.solve_triangular(matrix, b, lower=is_lower, trans=int(trans),
                                                     unit_diagonal=unit)
            np.testing.assert_allclose(solution, expected, rtol=tol, atol=tol)
        assert lapack.cho_solve_into(factor, b, solution, True) == 0
        np.testing.assert_allclose(solution, scipy.linalg.cho_solve((lower, True), b), rtol=tol, atol=tol)
    general = (RNG.normal(size=(n, n)) + 3 * np.eye(n)).astype(dtype)
    for matrix in layouts(general):
        assert unchanged(lambda m: lapack.solve_into(m, b, solution), matrix) == 0
        np.testing.assert_allclose(solution, np.linalg.solve(general, b), rtol=tol, atol=tol)
        inverse = np.empty((n, n), dtype)
        assert lapack.inv_into(matrix, inverse) == 0
        np.testing.assert_allclose(inverse, np.linalg.inv(general), rtol=tol, atol=tol)
        sign, logabsdet = lapack.slogdet(matrix)
        expected_sign, expected_log = np.linalg.slogdet(general)
        assert sign == expected_sign
        np.testing.assert_allclose(logabsdet, expected_log, rtol=tol, atol=tol)
        np.testing.assert_allclose(lapack.det(matrix), np.linalg.det(general), rtol=tol)


@pytest.mark.parametrize("dtype, tol", DTYPES)
def test_eigh(dtype: str, tol: float) -> None:
    a = spd(5, dtype)
    values, vectors = np.empty(5, dtype), np.empty((5, 5), dtype)
    for matrix, lower in [(np.tril(a), True), (np.triu(a), False), (a, True)]:
        for view in layouts(matrix):
            assert unchanged(lambda m: lapack.eigh_into(m, values, vectors, lower), view) == 0
            np.testing.assert_allclose(values, np.linalg.eigvalsh(a), rtol=tol)
            np.testing.assert_allclose((vectors * values) @ vectors.T, a, rtol=tol, atol=10 * tol)


@pytest.mark.parametrize("dtype, tol", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (1, 3)])
def test_svd_and_qr(dtype: str, tol: float, shape: tuple[int, int]) -> None:
    m, n = shape
    k = min(shape)
    a = RNG.normal(size=shape).astype(dtype)
    for view in layouts(a):
        for full in (True, False):
            u = np.empty((m, m if full else k), dtype)
            s = np.empty(k, dtype)
            vh = np.empty((n if full else k, n), dtype)
            assert unchanged(lambda x: lapack.svd_into(x, u, s, vh, full), view) == 0
            np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=tol)
            np.testing.assert_allclose((u[:, :k] * s) @ vh[:k], a, rtol=tol, atol=10 * tol)
            np.testing.assert_allclose(u.T @ u, np.eye(u.shape[1]), atol=10 * tol)
        values = np.empty(k, dtype)
        assert lapack.svd_values_into(view, values) == 0
        np.testing.assert_allclose(values, np.linalg.svd(a, compute_uv=False), rtol=tol)
        for complete in (True, False):
            columns = m if complete else k
            q, r = np.empty((m, columns), dtype), np.empty((columns, n), dtype)
            assert unchanged(lambda x: lapack.qr_into(x, q, r, complete), view) == 0
            expected_q, expected_r = np.linalg.qr(a, mode="complete" if complete else "reduced")
            np.testing.assert_allclose(q, expected_q, rtol=tol, atol=10 * tol)
            np.testing.assert_allclose(r, expected_r, rtol=tol, atol=10 * tol)


def test_empty_matrices() -> None:
    empty = np.empty((0, 0))
    assert lapack.cholesky_into(empty, np.empty((0, 0)), True) == 0
    assert lapack.slogdet(empty) == (1.0, 0.0) and lapack.det(empty) == 1.0
    u, s, vh = np.empty((3, 3)), np.empty(0), np.empty((0, 0))
    assert lapack.svd_into(np.empty((3, 0)), u, s, vh, True) == 0
    np.testing.assert_array_equal(u, np.eye(3))
    q, r = np.empty((3, 3)), np.empty((3, 0))
    assert lapack.qr_into(np.empty((3, 0)), q, r, True) == 0
    np.testing.assert_array_equal(q, np.eye(3))


def test_failure_codes() -> None:
    out = np.empty((3, 3))
    assert lapack.cholesky_into(-np.eye(3), out, True) == 1
    assert lapack.cholesky_into(np.diag([1.0, -1.0, 1.0]), out, True) == 2
    column = np.empty((3, 1))
    assert lapack.solve_into(np.ones((3, 3)), np.ones((3, 1)), column) > 0
    assert lapack.inv_into(np.ones((3, 3)), out) > 0
    singular = np.tril(np.ones((3, 3))) - np.diag([0.0, 1.0, 0.0])
    assert lapack.solve_triangular_into(singular, np.ones((3, 1)), column, True, False, False) == 2
    assert lapack.slogdet(np.ones((3, 3))) == (0.0, -np.inf)


WORKER = """
import sys, numpy as np
from numba_backend import lapack
out = np.empty((2, 2))
info = lapack.cholesky_into(np.array([[4.0, 2.0], [2.0, 3.0]]), out, True)
assert info == 0 and np.allclose(out, [[2.0, 0.0], [1.0, np.sqrt(2.0)]]), out
print(len(lapack.cholesky_into.stats.cache_hits))
"""


@pytest.mark.slow
def test_compiled_calls_load_from_the_disk_cache_in_a_fresh_process(tmp_path: Path) -> None:
    environment = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    root = Path(__file__).resolve().parents[2]
    runs = [
        subprocess.run([sys.executable, "-c", WORKER], cwd=root, env=environment,
                       capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    assert [run.stdout.strip() for run in runs] == ["0", "1"]
