"""`numba_backend.lapack`, the per-matrix LAPACK calls of the linear-algebra kernels,
against NumPy and SciPy: both dtypes; inputs in C order, Fortran order and as views
(read in place with a longer leading dimension, or copied from a column-strided view),
never written; square, rectangular and empty matrices; the failure codes; and a
compiled call that loads from numba's disk cache in a fresh process.

Each function compiles once per dtype and argument layout (C, F, 'A' for every view),
so the cases of a function share a handful of compiles.
"""

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
from numpy.lib.stride_tricks import as_strided

from numba_backend import lapack
from numba_backend.library import python_callable

Array = np.ndarray[Any, np.dtype[Any]]
DType = type[np.floating[Any]]
DTYPES: list[DType] = [np.float64, np.float32]
SIZES = [1, 2, 5]
SHAPES = [(1, 1), (4, 4), (5, 3), (3, 5), (1, 3), (3, 1)]


def tolerance(dtype: DType) -> float:
    return 1e-10 if dtype == np.float64 else 1e-4


def close(actual: Any, expected: Any, dtype: DType, scale: float = 1.0) -> None:
    """Relative agreement, with an absolute floor of `scale` times the tolerance for
    entries that cancel to about zero."""
    tol = tolerance(dtype)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol * scale)


def layouts(x: Array) -> list[Array]:
    """`x` in C order, in Fortran order, as a row-major view inside wider rows, as a
    column-major view inside longer columns, and as a view of every other column."""
    m, n = x.shape
    wide = np.full((m, n + 3), np.nan, dtype=x.dtype)
    wide[:, :n] = x
    tall = np.full((m + 2, n), np.nan, dtype=x.dtype, order="F")
    tall[:m] = x
    doubled = np.repeat(x, 2, axis=1)
    views = [np.ascontiguousarray(x), np.asfortranarray(x), wide[:, :n], tall[:m], doubled[:, ::2]]
    for view in views:
        np.testing.assert_array_equal(view, x)
    return views


def unchanged(call: Callable[[Array], Any], a: Array) -> Any:
    """`call(a)`, checking that it leaves `a` as it was (NaN included)."""
    before = a.copy()
    result = call(a)
    np.testing.assert_array_equal(a, before)
    return result


def spd(rng: np.random.Generator, n: int, dtype: DType) -> Array:
    x = rng.normal(size=(n, n))
    return np.asarray(x @ x.T + n * np.eye(n), dtype=dtype)


def general(rng: np.random.Generator, n: int, dtype: DType) -> Array:
    return np.asarray(rng.normal(size=(n, n)) + 2 * np.eye(n), dtype=dtype)


def with_garbage(a: Array, lower: bool) -> Array:
    """`a`'s triangle `lower` names, and large values in the other, which a routine
    reading only that triangle never sees."""
    garbage = np.full(a.shape, 1e6, dtype=a.dtype)
    return np.tril(a) + np.triu(garbage, 1) if lower else np.triu(a) + np.tril(garbage, -1)


def empty(*shape: int, dtype: DType = np.float64) -> Array:
    """An output filled with NaN, so that entries a function fails to write show."""
    return np.full(shape, np.nan, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_cholesky_reads_one_triangle_and_zeroes_the_other(dtype: DType, n: int) -> None:
    rng = np.random.default_rng(n)
    a = spd(rng, n, dtype)
    for lower in (True, False):
        expected = np.linalg.cholesky(a) if lower else np.linalg.cholesky(a).T
        for view in layouts(with_garbage(a, lower)):
            out = empty(n, n, dtype=dtype)
            assert unchanged(lambda m: python_callable(lapack.cholesky_into)(m, out, lower), view) == 0
            close(out, expected, dtype)
            np.testing.assert_array_equal(np.triu(out, 1) if lower else np.tril(out, -1), 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("k", [1, 3])
def test_solve_triangular_every_flag(dtype: DType, n: int, k: int) -> None:
    rng = np.random.default_rng(10 * n + k)
    factor = np.linalg.cholesky(spd(rng, n, np.float64)).astype(dtype)
    b = rng.normal(size=(n, k)).astype(dtype)
    for lower in (True, False):
        triangle = factor if lower else factor.T.copy()
        for trans in (False, True):
            for unit in (False, True):
                expected = scipy.linalg.solve_triangular(
                    triangle, b, lower=lower, trans=1 if trans else 0, unit_diagonal=unit
                )
                for view in layouts(with_garbage(triangle, lower)):
                    out = empty(n, k, dtype=dtype)
                    info = unchanged(
                        lambda m: python_callable(lapack.solve_triangular_into)(m, b, out, lower, trans, unit), view
                    )
                    assert info == 0
                    close(out, expected, dtype, scale=float(np.abs(expected).max()))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("k", [1, 3])
def test_solve_and_cho_solve(dtype: DType, n: int, k: int) -> None:
    rng = np.random.default_rng(20 * n + k)
    a, positive = general(rng, n, dtype), spd(rng, n, dtype)
    b = rng.normal(size=(n, k)).astype(dtype)
    expected = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
    for view in layouts(a):
        out = empty(n, k, dtype=dtype)
        assert unchanged(lambda m: python_callable(lapack.solve_into)(m, b, out), view) == 0
        close(out, expected, dtype, scale=float(np.abs(expected).max()))
    for right in layouts(b)[1:3]:
        out = empty(n, k, dtype=dtype)
        assert unchanged(lambda r: python_callable(lapack.solve_into)(a, r, out), right) == 0
        close(out, expected, dtype, scale=float(np.abs(expected).max()))
    for lower in (True, False):
        factor = np.linalg.cholesky(positive) if lower else np.linalg.cholesky(positive).T
        wanted = scipy.linalg.cho_solve((factor, lower), b)
        for view in layouts(with_garbage(factor, lower)):
            out = empty(n, k, dtype=dtype)
            assert unchanged(lambda m: python_callable(lapack.cho_solve_into)(m, b, out, lower), view) == 0
            close(out, wanted, dtype, scale=float(np.abs(wanted).max()))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_inverse_and_determinants(dtype: DType, n: int) -> None:
    rng = np.random.default_rng(30 + n)
    a = general(rng, n, dtype)
    a[[0, -1]] = a[[-1, 0]]  # a row swap, so that n > 1 gives a negative determinant too
    inverse = np.linalg.inv(a.astype(np.float64))
    sign, logabsdet = np.linalg.slogdet(a)
    for view in layouts(a):
        out = empty(n, n, dtype=dtype)
        assert unchanged(lambda m: python_callable(lapack.inv_into)(m, out), view) == 0
        close(out, inverse, dtype, scale=float(np.abs(inverse).max()))
        got_sign, got_log = unchanged(python_callable(lapack.slogdet), view)
        assert got_sign == sign
        close(got_log, logabsdet, dtype, scale=1.0)
        close(unchanged(python_callable(lapack.det), view), np.linalg.det(a), dtype)


def test_det_takes_the_logarithm_route_of_numpy_where_the_product_overflows() -> None:
    a = np.diag([1e200, 1e200, 1e-300])
    assert np.isfinite(np.linalg.det(a))
    close(python_callable(lapack.det)(a), np.linalg.det(a), np.float64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_eigh_values_and_reconstruction(dtype: DType, n: int) -> None:
    rng = np.random.default_rng(40 + n)
    a = spd(rng, n, dtype) - n * np.eye(n, dtype=dtype)  # eigenvalues of both signs
    scale = float(np.abs(a).max())
    for lower in (True, False):
        values = np.linalg.eigvalsh(a, UPLO="L" if lower else "U")
        for view in layouts(with_garbage(a, lower)):
            w, v = empty(n, dtype=dtype), empty(n, n, dtype=dtype)
            assert unchanged(lambda m: python_callable(lapack.eigh_into)(m, w, v, lower), view) == 0
            close(w, values, dtype, scale=scale)
            assert np.all(np.diff(w) >= 0)
            close((v * w) @ v.T, a, dtype, scale=10 * scale)
            close(v.T @ v, np.eye(n), dtype, scale=10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_svd_values_and_reconstruction(dtype: DType, shape: tuple[int, int]) -> None:
    m, n = shape
    k = min(shape)
    rng = np.random.default_rng(m * 10 + n)
    a = rng.normal(size=shape).astype(dtype)
    values = np.linalg.svd(a, compute_uv=False)
    for view in layouts(a):
        for full in (True, False):
            u, s = empty(m, m if full else k, dtype=dtype), empty(k, dtype=dtype)
            vh = empty(n if full else k, n, dtype=dtype)
            assert unchanged(lambda x: python_callable(lapack.svd_into)(x, u, s, vh, full), view) == 0
            close(s, values, dtype, scale=float(values[0]))
            close((u[:, :k] * s) @ vh[:k], a, dtype, scale=10)
            close(u.T @ u, np.eye(u.shape[1]), dtype, scale=10)
            close(vh @ vh.T, np.eye(vh.shape[0]), dtype, scale=10)
        s = empty(k, dtype=dtype)
        assert unchanged(lambda x: python_callable(lapack.svd_values_into)(x, s), view) == 0
        close(s, values, dtype, scale=float(values[0]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_qr_matches_numpy_signs_included(dtype: DType, shape: tuple[int, int]) -> None:
    m, n = shape
    rng = np.random.default_rng(m * 10 + n + 100)
    a = rng.normal(size=shape).astype(dtype)
    for complete in (True, False):
        expected_q, expected_r = np.linalg.qr(a, mode="complete" if complete else "reduced")
        for view in layouts(a):
            q, r = empty(*expected_q.shape, dtype=dtype), empty(*expected_r.shape, dtype=dtype)
            assert unchanged(lambda x: python_callable(lapack.qr_into)(x, q, r, complete), view) == 0
            close(q, expected_q, dtype, scale=10)
            close(r, expected_r, dtype, scale=10)


@pytest.mark.parametrize("shape", [(0, 0), (3, 0), (0, 3)])
def test_empty_factorizations_give_numpy_results(shape: tuple[int, int]) -> None:
    a = np.empty(shape)
    for full in (True, False):
        expected_u, expected_s, expected_vh = np.linalg.svd(a, full_matrices=full)
        u, s = empty(*expected_u.shape), empty(*expected_s.shape)
        vh = empty(*expected_vh.shape)
        assert python_callable(lapack.svd_into)(a, u, s, vh, full) == 0
        np.testing.assert_array_equal(u, expected_u)
        np.testing.assert_array_equal(vh, expected_vh)
    assert python_callable(lapack.svd_values_into)(a, np.empty(0)) == 0
    for complete in (True, False):
        expected_q, expected_r = np.linalg.qr(a, mode="complete" if complete else "reduced")
        q, r = empty(*expected_q.shape), empty(*expected_r.shape)
        assert python_callable(lapack.qr_into)(a, q, r, complete) == 0
        np.testing.assert_array_equal(q, expected_q)
        np.testing.assert_array_equal(r, expected_r)


def test_empty_square_matrices_and_right_sides() -> None:
    nothing = np.empty((0, 0))
    assert python_callable(lapack.cholesky_into)(nothing, np.empty((0, 0)), True) == 0
    assert python_callable(lapack.inv_into)(nothing, np.empty((0, 0))) == 0
    assert python_callable(lapack.eigh_into)(nothing, np.empty(0), np.empty((0, 0)), True) == 0
    assert python_callable(lapack.slogdet)(nothing) == (1.0, 0.0) and python_callable(lapack.det)(nothing) == 1.0
    assert python_callable(lapack.solve_into)(nothing, np.empty((0, 2)), np.empty((0, 2))) == 0
    eye, no_columns = np.eye(2), np.empty((2, 0))
    assert python_callable(lapack.solve_into)(eye, no_columns, np.empty((2, 0))) == 0
    assert python_callable(lapack.solve_triangular_into)(eye, no_columns, np.empty((2, 0)), True, False, False) == 0
    assert python_callable(lapack.cho_solve_into)(eye, no_columns, np.empty((2, 0)), True) == 0


@pytest.mark.parametrize("dtype", DTYPES)
def test_failures_come_back_as_info(dtype: DType) -> None:
    out, column = np.empty((3, 3), dtype), np.empty((3, 1), dtype)
    ones = np.ones((3, 3), dtype)
    assert python_callable(lapack.cholesky_into)(-np.eye(3, dtype=dtype), out, True) == 1
    assert python_callable(lapack.cholesky_into)(np.diag([1.0, -1.0, 1.0]).astype(dtype), out, False) == 2
    assert python_callable(lapack.solve_into)(ones, np.ones((3, 1), dtype), column) > 0
    assert python_callable(lapack.inv_into)(ones, out) > 0
    singular = np.tril(ones) - np.diag(np.array([0, 1, 0], dtype))
    assert python_callable(lapack.solve_triangular_into)(singular, np.ones((3, 1), dtype), column,
                                        True, False, False) == 2
    assert python_callable(lapack.solve_triangular_into)(singular.T.copy(), np.ones((3, 1), dtype), column,
                                        False, True, False) == 2
    assert python_callable(lapack.slogdet)(ones) == (0.0, -np.inf)
    assert python_callable(lapack.det)(ones) == 0.0


def huge(*shape: int) -> Array:
    """A view of one element with lengths beyond 32 bits (no memory behind them)."""
    return as_strided(np.zeros(1), shape=shape, strides=(0,) * len(shape))


def test_lengths_beyond_32_bits_are_refused_not_truncated() -> None:
    """Only rectangular operands can be that long: a square one would not fit in
    NumPy's 64-bit sizes."""
    big = 2**32 + 3  # truncated to 32 bits it would read as 3
    out, wide = np.empty((3, 3)), huge(3, big)
    assert python_callable(lapack.solve_into)(np.eye(3), wide, out) == lapack.TOO_LONG
    assert python_callable(lapack.solve_triangular_into)(np.eye(3), wide, out, True, False, False) == lapack.TOO_LONG
    assert python_callable(lapack.cho_solve_into)(np.eye(3), wide, out, True) == lapack.TOO_LONG
    for matrix in (huge(big, 2), huge(2, big)):
        assert python_callable(lapack.svd_into)(matrix, out, np.empty(3), out, False) == lapack.TOO_LONG
        assert python_callable(lapack.svd_values_into)(matrix, np.empty(3)) == lapack.TOO_LONG
        assert python_callable(lapack.qr_into)(matrix, out, out, False) == lapack.TOO_LONG


def test_outputs_lapack_cannot_write_in_place_are_refused() -> None:
    strided = np.zeros((3, 6))[:, ::2]
    assert python_callable(lapack.cholesky_into)(np.eye(3), strided, True) == lapack.NOT_C_CONTIGUOUS
    np.testing.assert_array_equal(strided, 0)
    fortran = np.zeros((3, 3), order="F")
    assert python_callable(lapack.cholesky_into)(np.eye(3), fortran, True) == lapack.NOT_C_CONTIGUOUS
    np.testing.assert_array_equal(fortran, 0)


def test_outputs_whose_odd_strides_do_not_matter_are_written() -> None:
    """Strides of axes of length 1, and of empty outputs, do not keep LAPACK from
    writing an output in place (NumPy calls such arrays C-contiguous too)."""
    column = as_strided(np.zeros(3), shape=(3, 1), strides=(8, 1000))
    assert column.flags.c_contiguous
    right = np.array([[1.0], [2.0], [3.0]])
    assert python_callable(lapack.solve_into)(2.0 * np.eye(3), right, column) == 0
    np.testing.assert_array_equal(column, right / 2.0)
    row = np.zeros((2, 3))[1:, :]  # (1, 3), its row stride that of the whole
    assert python_callable(lapack.solve_into)(np.eye(1), np.ones((1, 3)), row) == 0
    np.testing.assert_array_equal(row, 1.0)
    nothing = np.zeros((0, 4))[:, ::2]
    assert python_callable(lapack.solve_into)(np.eye(0), np.zeros((0, 2)), nothing) == 0


WORKER = """
import numpy as np
import ops as pt
from ops.linalg import cholesky
from numba_backend import function, lapack
from numba_backend.calls import KERNEL_CALLS
print(lapack.__file__)
a = pt.matrix("a")
out = function([a], cholesky(a))(np.array([[4.0, 2.0], [2.0, 3.0]]))
assert np.allclose(out, [[2.0, 0.0], [1.0, np.sqrt(2.0)]]), out
stats = KERNEL_CALLS["numba_backend.lapack", "cholesky_into"].dispatcher.stats
print(len(stats.cache_hits), len(stats.cache_misses))
"""


@pytest.mark.slow
def test_compiled_calls_load_from_the_disk_cache_in_a_fresh_process(tmp_path: Path) -> None:
    """The second process loads the helper a compiled graph calls from disk (the
    graph's cached code names it, and its load compiles or loads the helper first); the
    helper's LAPACK symbol resolves only because `numba_backend.lapack` registers it
    again on import."""
    environment = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path),
                       FGRAPH_CACHE_DIR=str(tmp_path / "graphs"))
    environment.pop("NUMBA_DISABLE_JIT", None)
    root = Path(__file__).resolve().parents[2]
    runs = [
        subprocess.run([sys.executable, "-c", WORKER], cwd=root, env=environment,
                       capture_output=True, text=True, timeout=600)
        for _ in range(2)
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr[-3000:]
    outputs = [run.stdout.split() for run in runs]
    assert all(Path(output[0]) == root / "numba_backend" / "lapack.py" for output in outputs)
    assert [output[1:] for output in outputs] == [["0", "1"], ["1", "0"]]
    assert list(tmp_path.rglob("*lapack*.nbc"))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [*SHAPES, (0, 3), (3, 0)])
def test_lu_factor_matches_scipy(dtype: DType, shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    a = rng.normal(size=shape).astype(dtype)
    k = min(shape)
    for view in layouts(a):
        lu, pivots = empty(*shape, dtype=dtype), np.full(k, -7, dtype=np.int32)
        assert unchanged(lambda m: python_callable(lapack.lu_factor_into)(m, lu, pivots), view) == 0
        if k:
            expected_lu, expected_pivots = scipy.linalg.lu_factor(a)
            close(lu, expected_lu, dtype, scale=float(np.abs(expected_lu).max()))
            np.testing.assert_array_equal(pivots, expected_pivots)


def test_lu_factor_of_a_singular_matrix_is_no_failure() -> None:
    lu, pivots = empty(3, 3), np.empty(3, dtype=np.int32)
    assert python_callable(lapack.lu_factor_into)(np.ones((3, 3)), lu, pivots) == 0
    with pytest.warns(scipy.linalg.LinAlgWarning):
        np.testing.assert_allclose(lu, scipy.linalg.lu_factor(np.ones((3, 3)))[0])


def test_pivot_rows() -> None:
    rng = np.random.default_rng(3)
    for n in (1, 4, 7):
        a = rng.normal(size=(n, n))
        expected, _, _ = scipy.linalg.lu(a, p_indices=True)
        out = np.full(n, -1, dtype=np.int32)
        assert python_callable(lapack.pivot_rows_into)(scipy.linalg.lu_factor(a)[1], out) == 0
        np.testing.assert_array_equal(out, expected)
    out = np.empty(3, dtype=np.int32)
    assert python_callable(lapack.pivot_rows_into)(np.array([0, 3, 2], dtype=np.int32), out) == 2
    assert python_callable(lapack.pivot_rows_into)(np.array([-1, 1, 2], dtype=np.int32), out) == 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", [0.0, 1e-3, 0.2, 0.9, 2.0, 5.0, 40.0])
def test_expm_matches_scipy_for_every_pade_degree(dtype: DType, norm: float) -> None:
    """The 1-norms pick each Padé degree (3, 5, 7, 9 and 13 with and without squaring)."""
    rng = np.random.default_rng(int(norm * 10))
    for n in SIZES:
        a = rng.normal(size=(n, n))
        a *= norm / max(np.abs(a).sum(axis=0).max(), 1e-300)
        a = a.astype(dtype)
        expected = scipy.linalg.expm(a.astype(np.float64))
        for view in layouts(a):
            out = empty(n, n, dtype=dtype)
            assert unchanged(lambda m: python_callable(lapack.expm_into)(m, out), view) == 0
            scale = float(np.abs(expected).max())
            np.testing.assert_allclose(out, expected, rtol=tolerance(dtype) * 10,
                                       atol=tolerance(dtype) * scale)


def test_expm_of_non_finite_and_empty_matrices() -> None:
    out = empty(2, 2)
    assert python_callable(lapack.expm_into)(np.array([[np.inf, 0.0], [0.0, 1.0]]), out) == 0
    assert np.isnan(out).all()
    assert python_callable(lapack.expm_into)(np.empty((0, 0)), np.empty((0, 0))) == 0
