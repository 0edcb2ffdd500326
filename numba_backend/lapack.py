"""LAPACK from compiled code: SciPy's Fortran routines (`cython_lapack`) called by symbol
name, and the njit functions the linear-algebra kernels call per matrix.

Why not numba's `np.linalg`: it compiles slowly (measured cold here: `np.linalg.solve`
3.7 s, `np.linalg.cholesky` 0.55 s, per signature and per generated module) and has no
triangular solve. Here each routine is one external call. Its address comes from
SciPy's capsule and is registered with LLVM under a fixed name (`fgraph_dpotrf`), as
`numba_backend.blas` does for BLAS, so that numba's on-disk cache, which records symbol
names, stays valid across processes. The functions below are compiled once per
signature into numba's cache and then linked into each generated module.

Every function takes 2-d inputs of any layout and never writes them: LAPACK works on a
column-major copy (the copy is O(n^2) next to the routine's O(n^3)). Results go into
C-contiguous outputs the caller allocated (views of a batched output), and LAPACK's
`info` comes back as an int for the caller to turn into an error naming the node.
Lengths beyond LAPACK's 32-bit integers give info -1 instead of being truncated.
Fortran takes every argument by reference: integers and characters travel in small
arrays, passed by address.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import binding, ir
from numba.core import types
from numba.extending import intrinsic

from numba_backend.blas import capsule_address, cython_module
from numba_backend.library import library_function

_ROUTINES = {
    # name: number of pointer arguments
    "potrf": 5,
    "trtrs": 10,
    "gesv": 8,
    "potrs": 8,
    "getrf": 6,
    "syevd": 11,
    "gesdd": 14,
    "geqrf": 8,
    "orgqr": 9,
}


def _register() -> dict[str, Any]:
    """Register `fgraph_<s|d><routine>` with LLVM and declare each as numba external."""
    capsules = cython_module("cython_lapack").__pyx_capi__
    declared: dict[str, Any] = {}
    for routine, count in _ROUTINES.items():
        for kind in "sd":
            symbol = f"fgraph_{kind}{routine}"
            binding.add_symbol(symbol, capsule_address(capsules[f"{kind}{routine}"]))
            signature = types.void(*(types.voidptr,) * count)
            declared[f"{kind}{routine}"] = types.ExternalFunction(symbol, signature)
    return declared


_EXTERNAL = _register()
spotrf, dpotrf = _EXTERNAL["spotrf"], _EXTERNAL["dpotrf"]
strtrs, dtrtrs = _EXTERNAL["strtrs"], _EXTERNAL["dtrtrs"]
sgesv, dgesv = _EXTERNAL["sgesv"], _EXTERNAL["dgesv"]
spotrs, dpotrs = _EXTERNAL["spotrs"], _EXTERNAL["dpotrs"]
sgetrf, dgetrf = _EXTERNAL["sgetrf"], _EXTERNAL["dgetrf"]
ssyevd, dsyevd = _EXTERNAL["ssyevd"], _EXTERNAL["dsyevd"]
sgesdd, dgesdd = _EXTERNAL["sgesdd"], _EXTERNAL["dgesdd"]
sgeqrf, dgeqrf = _EXTERNAL["sgeqrf"], _EXTERNAL["dgeqrf"]
sorgqr, dorgqr = _EXTERNAL["sorgqr"], _EXTERNAL["dorgqr"]

Array = np.ndarray[Any, np.dtype[Any]]
_INT_MAX = 2**31 - 1
_L, _U, _N, _T, _A, _S, _V = (ord(c) for c in "LUNTASV")


@intrinsic
def at(typingctx: object, array: Any, index: Any) -> Any:
    """The address of `array`'s element `index` (counted in elements from the start of
    its data; the array must be contiguous)."""
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        offset = builder.sext(args[1], ir.IntType(64)) if args[1].type.width < 64 else args[1]
        return builder.bitcast(builder.gep(data, [offset]), ir.IntType(8).as_pointer())

    return types.voidptr(array, index), codegen


@library_function
def _fortran(a: Array) -> Any:
    """A column-major copy of the 2-d array `a`."""
    return a.T.copy().T


@library_function
def _store(out: Array, work: Array) -> None:
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = work[i, j]


@library_function
def _too_long(*lengths: int) -> bool:
    for length in lengths:
        if length > _INT_MAX:
            return True
    return False


@library_function
def cholesky_into(a: Array, out: Array, lower: bool) -> int:
    """potrf: the factor of the triangle `lower` names, the other triangle zeroed."""
    n = a.shape[0]
    if n == 0:
        return 0
    if _too_long(n):
        return -1
    work = _fortran(a)
    chars = np.array([_L if lower else _U], dtype=np.uint8)
    ints = np.array([n, n, 0], dtype=np.int32)
    if work.itemsize == 8:
        dpotrf(at(chars, 0), at(ints, 0), at(work, 0), at(ints, 1), at(ints, 2))
    else:
        spotrf(at(chars, 0), at(ints, 0), at(work, 0), at(ints, 1), at(ints, 2))
    for i in range(n):
        for j in range(n):
            kept = j <= i if lower else j >= i
            out[i, j] = work[i, j] if kept else 0
    return int(ints[2])


@library_function
def solve_triangular_into(a: Array, b: Array, out: Array, lower: bool, trans: bool,
                          unit_diagonal: bool) -> int:
    """trtrs: op(a) x = b for triangular a; info > 0 for a zero on the diagonal."""
    n, k = b.shape
    if n == 0 or k == 0:
        return 0
    if _too_long(n, k):
        return -1
    matrix, right = _fortran(a), _fortran(b)
    chars = np.array([_L if lower else _U, _T if trans else _N, 85 if unit_diagonal else _N],
                     dtype=np.uint8)
    ints = np.array([n, k, n, n, 0], dtype=np.int32)
    arguments = (at(chars, 0), at(chars, 1), at(chars, 2), at(ints, 0), at(ints, 1),
                 at(matrix, 0), at(ints, 2), at(right, 0), at(ints, 3), at(ints, 4))
    if matrix.itemsize == 8:
        dtrtrs(*arguments)
    else:
        strtrs(*arguments)
    _store(out, right)
    return int(ints[4])


@library_function
def solve_into(a: Array, b: Array, out: Array) -> int:
    """gesv: a x = b by LU with partial pivoting; info > 0 for a singular a."""
    n, k = b.shape
    if n == 0 or k == 0:
        return 0
    if _too_long(n, k):
        return -1
    matrix, right = _fortran(a), _fortran(b)
    pivots = np.empty(n, dtype=np.int32)
    ints = np.array([n, k, n, n, 0], dtype=np.int32)
    arguments = (at(ints, 0), at(ints, 1), at(matrix, 0), at(ints, 2), at(pivots, 0),
                 at(right, 0), at(ints, 3), at(ints, 4))
    if matrix.itemsize == 8:
        dgesv(*arguments)
    else:
        sgesv(*arguments)
    _store(out, right)
    return int(ints[4])


@library_function
def cho_solve_into(c: Array, b: Array, out: Array, lower: bool) -> int:
    """potrs: (c c^T) x = b (or c^T c with `lower` false) from a Cholesky factor."""
    n, k = b.shape
    if n == 0 or k == 0:
        return 0
    if _too_long(n, k):
        return -1
    factor, right = _fortran(c), _fortran(b)
    chars = np.array([_L if lower else _U], dtype=np.uint8)
    ints = np.array([n, k, n, n, 0], dtype=np.int32)
    arguments = (at(chars, 0), at(ints, 0), at(ints, 1), at(factor, 0), at(ints, 2),
                 at(right, 0), at(ints, 3), at(ints, 4))
    if factor.itemsize == 8:
        dpotrs(*arguments)
    else:
        spotrs(*arguments)
    _store(out, right)
    return int(ints[4])


@library_function
def inv_into(a: Array, out: Array) -> int:
    """The inverse, as gesv against the identity; info > 0 for a singular a."""
    n = a.shape[0]
    identity = np.zeros((n, n), dtype=out.dtype)
    for i in range(n):
        identity[i, i] = 1
    return int(solve_into(a, identity, out))


@library_function
def _lu(a: Array) -> Any:
    """getrf on a copy: (the factors, the pivots, info)."""
    n = a.shape[0]
    work = _fortran(a)
    pivots = np.empty(max(n, 1), dtype=np.int32)
    ints = np.array([n, n, n, 0], dtype=np.int32)
    arguments = (at(ints, 0), at(ints, 1), at(work, 0), at(ints, 2), at(pivots, 0), at(ints, 3))
    if n > 0:
        if work.itemsize == 8:
            dgetrf(*arguments)
        else:
            sgetrf(*arguments)
    return work, pivots, ints[3]


@library_function
def slogdet(a: Array) -> Any:
    """(sign, log|det|) from the LU factors, NumPy's (0, -inf) for a singular matrix."""
    work, pivots, info = _lu(a)
    sign, logabsdet = 1.0, 0.0
    if info > 0:
        return 0.0, -np.inf
    for i in range(a.shape[0]):
        entry = work[i, i]
        if pivots[i] != i + 1:
            sign = -sign
        if entry < 0:
            sign = -sign
        logabsdet += np.log(np.abs(entry))
    return sign, logabsdet


@library_function
def det(a: Array) -> Any:
    """The determinant: the product of U's diagonal with the sign of the row swaps."""
    work, pivots, _ = _lu(a)
    value = 1.0
    for i in range(a.shape[0]):
        value *= work[i, i]
        if pivots[i] != i + 1:
            value = -value
    return value


@library_function
def eigh_into(a: Array, w_out: Array, v_out: Array, lower: bool) -> int:
    """syevd (as NumPy's eigh): ascending eigenvalues, eigenvectors in columns."""
    n = a.shape[0]
    if n == 0:
        return 0
    if _too_long(n):
        return -1
    work = _fortran(a)
    values = np.empty(n, dtype=a.dtype)
    chars = np.array([_V, _L if lower else _U], dtype=np.uint8)
    ints = np.array([n, n, -1, -1, 0], dtype=np.int32)
    query = np.empty(1, dtype=a.dtype)
    iquery = np.empty(1, dtype=np.int32)
    for attempt in range(2):
        if attempt == 1:
            ints[2], ints[3] = max(int(query[0]), 1), max(iquery[0], 1)
            query = np.empty(ints[2], dtype=a.dtype)
            iquery = np.empty(ints[3], dtype=np.int32)
        arguments = (at(chars, 0), at(chars, 1), at(ints, 0), at(work, 0), at(ints, 1),
                     at(values, 0), at(query, 0), at(ints, 2), at(iquery, 0), at(ints, 3),
                     at(ints, 4))
        if work.itemsize == 8:
            dsyevd(*arguments)
        else:
            ssyevd(*arguments)
    for i in range(n):
        w_out[i] = values[i]
    _store(v_out, work)
    return int(ints[4])


@library_function
def _gesdd(a: Array, jobz: int, u_columns: int, vt_rows: int) -> Any:
    """gesdd on a copy: (u, s, vt, info) as column-major arrays (u and vt empty for 'N')."""
    m, n = a.shape
    k = min(m, n)
    work = _fortran(a)
    values = np.empty(k, dtype=a.dtype)
    # At least one element each: LAPACK gets a valid address even where it writes none.
    u = np.empty((max(u_columns, 1), m), dtype=a.dtype).T
    vt = np.empty((n, max(vt_rows, 1)), dtype=a.dtype).T
    chars = np.array([jobz], dtype=np.uint8)
    ints = np.array([m, n, max(m, 1), max(m, 1), max(vt_rows, 1), -1, 0], dtype=np.int32)
    iwork = np.empty(max(8 * k, 1), dtype=np.int32)
    query = np.empty(1, dtype=a.dtype)
    for attempt in range(2):
        if attempt == 1:
            ints[5] = max(int(query[0]), 1)
            query = np.empty(ints[5], dtype=a.dtype)
        arguments = (at(chars, 0), at(ints, 0), at(ints, 1), at(work, 0), at(ints, 2),
                     at(values, 0), at(u, 0), at(ints, 3),
                     at(vt, 0), at(ints, 4), at(query, 0), at(ints, 5),
                     at(iwork, 0), at(ints, 6))
        if work.itemsize == 8:
            dgesdd(*arguments)
        else:
            sgesdd(*arguments)
    return u[:, :u_columns], values, vt[:vt_rows], ints[6]


@library_function
def svd_into(a: Array, u_out: Array, s_out: Array, vh_out: Array, full_matrices: bool) -> int:
    """gesdd (as NumPy's svd): u, s, vh with a = u diag(s) vh."""
    m, n = a.shape
    k = min(m, n)
    if k == 0:
        for i in range(u_out.shape[0]):
            for j in range(u_out.shape[1]):
                u_out[i, j] = 1 if i == j else 0
        for i in range(vh_out.shape[0]):
            for j in range(vh_out.shape[1]):
                vh_out[i, j] = 1 if i == j else 0
        return 0
    if _too_long(m, n):
        return -1
    u, values, vt, info = _gesdd(a, _A if full_matrices else _S, m if full_matrices else k,
                                 n if full_matrices else k)
    for i in range(k):
        s_out[i] = values[i]
    _store(u_out, u)
    _store(vh_out, vt)
    return int(info)


@library_function
def svd_values_into(a: Array, s_out: Array) -> int:
    """gesdd without vectors (as NumPy's svd(compute_uv=False))."""
    m, n = a.shape
    if min(m, n) == 0:
        return 0
    if _too_long(m, n):
        return -1
    _, values, _, info = _gesdd(a, _N, 0, 0)
    for i in range(values.shape[0]):
        s_out[i] = values[i]
    return int(info)


@library_function
def qr_into(a: Array, q_out: Array, r_out: Array, complete: bool) -> int:
    """geqrf and orgqr (as NumPy's qr): q with orthonormal columns, r upper triangular."""
    m, n = a.shape
    k = min(m, n)
    q_columns = m if complete else k
    if _too_long(m, n):
        return -1
    # geqrf on a copy wide enough to hold q's columns (complete mode adds m - n).
    width = max(n, q_columns)
    work = np.zeros((width, m), dtype=a.dtype).T
    for i in range(m):
        for j in range(n):
            work[i, j] = a[i, j]
    tau = np.empty(max(k, 1), dtype=a.dtype)
    ints = np.array([m, n, max(m, 1), -1, 0, q_columns, k], dtype=np.int32)
    if k > 0:
        query = np.empty(1, dtype=a.dtype)
        for attempt in range(2):
            if attempt == 1:
                ints[3] = max(int(query[0]), 1)
                query = np.empty(ints[3], dtype=a.dtype)
            factor_arguments = (at(ints, 0), at(ints, 1), at(work, 0), at(ints, 2), at(tau, 0),
                                at(query, 0), at(ints, 3), at(ints, 4))
            if work.itemsize == 8:
                dgeqrf(*factor_arguments)
            else:
                sgeqrf(*factor_arguments)
    for i in range(r_out.shape[0]):
        for j in range(n):
            r_out[i, j] = work[i, j] if j >= i else 0
    if m == 0 or q_columns == 0:
        return int(ints[4])
    if k == 0:
        for i in range(m):
            for j in range(q_columns):
                q_out[i, j] = 1 if i == j else 0
        return int(ints[4])
    ints[3] = -1
    query = np.empty(1, dtype=a.dtype)
    for attempt in range(2):
        if attempt == 1:
            ints[3] = max(int(query[0]), 1)
            query = np.empty(ints[3], dtype=a.dtype)
        arguments = (at(ints, 0), at(ints, 5), at(ints, 6), at(work, 0), at(ints, 2),
                     at(tau, 0), at(query, 0), at(ints, 3), at(ints, 4))
        if work.itemsize == 8:
            dorgqr(*arguments)
        else:
            sorgqr(*arguments)
    for i in range(m):
        for j in range(q_columns):
            q_out[i, j] = work[i, j]
    return int(ints[4])
