"""LAPACK from compiled code: SciPy's Fortran routines (`cython_lapack`) called by symbol
name, and the njit functions the linear-algebra kernels call per matrix.

Why not numba's `np.linalg`: it has no triangular solve, and its general routines compile
slowly, per signature and per generated module (measured cold, fresh process: a function
calling `np.linalg.cholesky` and `np.linalg.solve` 3.1 s; `np.linalg.cholesky` alone
0.12 s). A function calling `cholesky_into` and `solve_triangular_into` compiles in
0.28 s once these helpers are in numba's disk cache (1.0 s the first time on a machine).
Here each routine is one external call. Its address comes from
SciPy's capsule and is registered with LLVM under a fixed name (`fgraph_dpotrf`), as
`numba_backend.blas` does for BLAS, so that numba's on-disk cache, which records symbol
names, stays valid across processes. The kernels below are compiled once per
signature into numba's cache and called by symbol (`library_kernel`); their small
helpers are inlined into them (`inlined_helper`).

Every function takes 2-d inputs of any layout and never writes them. Results go into
C-contiguous outputs the caller allocated (views of a batched output), and LAPACK's
`info` comes back as an int for the caller to turn into an error naming the node.
Fortran is column-major, and a C-contiguous matrix is the column-major storage of its
transpose: the functions use that to let LAPACK work in the output itself (a symmetric
matrix is its own transpose, and inv(a)^T = inv(a^T)), or to read a row-major operand
in place as its transpose with the opposite flags. Fortran takes every argument by
reference: integers and characters travel in small arrays, passed by address, so
lengths beyond LAPACK's 32-bit integers give TOO_LONG rather than being truncated. Only
those of rectangular matrices and right-hand sides are checked: a square matrix that
long would hold over 2^62 elements, more than NumPy's 64-bit sizes can describe.

Each LAPACK call runs on one OpenBLAS thread below `blas.THREADED_PRODUCT_MIN`
multiply-adds (its order: n^3 for a factorization, n^2 k for a solve of k right-hand
sides), as matrix products do (`numba_backend.blas`): OpenBLAS splits `potrf` from
n = 64 and a triangular solve of two right-hand sides whatever its size, and on a
machine with a busy core each such call stalls (the 200-d Gaussian's log-density and
gradient took 280 ms instead of 0.8 ms). Where OpenBLAS 0.3 keeps a call on one thread
itself, the count is not read (the check cost the 2-d Kalman filter 5 %): potrf below
n = 64, getrf below n^2 = 10 000 and gesv below n k = 10 000 (their interfaces' tests),
getri below n = 32 (unblocked, and under trtri's cut), potrs below n k = 512 (trsm's
cut), trtrs with one right-hand side (trsv); syevd, gesdd, geqrf and orgqr always
check (the reference routines' BLAS calls split at small sizes).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from llvmlite import binding, ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from numba_backend.blas import (
    capsule_address, cython_module, matmul_into, one_blas_thread, restore_blas_threads,
)
from numba_backend.intrinsics import ArrayFields, any_layout, array_of, new_array
from numba_backend.library import inlined_helper, library_kernel

# info values of calls LAPACK cannot take, apart from LAPACK's own -i (argument i wrong).
TOO_LONG = -1001
"""A length or leading dimension beyond LAPACK's 32-bit integers."""
NOT_C_CONTIGUOUS = -1002
"""An output that is not C-contiguous (LAPACK would write past it)."""

_ROUTINES = {
    # name: number of pointer arguments
    "potrf": 5,
    "trtrs": 10,
    "gesv": 8,
    "potrs": 8,
    "getrf": 6,
    "getri": 7,
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
sgetri, dgetri = _EXTERNAL["sgetri"], _EXTERNAL["dgetri"]
ssyevd, dsyevd = _EXTERNAL["ssyevd"], _EXTERNAL["dsyevd"]
sgesdd, dgesdd = _EXTERNAL["sgesdd"], _EXTERNAL["dgesdd"]
sgeqrf, dgeqrf = _EXTERNAL["sgeqrf"], _EXTERNAL["dgeqrf"]
sorgqr, dorgqr = _EXTERNAL["sorgqr"], _EXTERNAL["dorgqr"]

Array = np.ndarray[Any, np.dtype[Any]]
_INT_MAX = 2**31 - 1
_L, _U, _N, _T, _A, _S, _V = (ord(c) for c in "LUNTASV")


@intrinsic
def at(typingctx: object, array: Any, index: Any) -> Any:
    """The address of `array`'s element `index`, counted in elements from the start of
    its data (for a strided array only index 0, its first element, is meaningful)."""
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        data = ArrayFields.of(context, builder, signature.args[0], args[0]).data
        offset = builder.sext(args[1], ir.IntType(64)) if args[1].type.width < 64 else args[1]
        return builder.bitcast(builder.gep(data, [offset]), ir.IntType(8).as_pointer())

    return types.voidptr(array, index), codegen


@inlined_helper
def _too_long(first: int, second: int) -> bool:
    return first > _INT_MAX or second > _INT_MAX


@intrinsic
def _c_contiguous(typingctx: object, array: Any) -> Any:
    """Whether LAPACK may write `array` as one block of memory in C order; strides of
    axes of length 1, and of empty arrays, do not matter. Written as IR without a
    branch (as a loop over the axes, numba's blocks added 0.05 s to each kernel's
    first compile)."""
    if not isinstance(array, types.Array):
        return None

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        structure = ArrayFields.of(context, builder, signature.args[0], args[0])
        shape = cgutils.unpack_tuple(builder, structure.shape, array.ndim)
        strides = cgutils.unpack_tuple(builder, structure.strides, array.ndim)
        zero, one = (context.get_constant(types.intp, value) for value in (0, 1))
        expected = structure.itemsize
        contiguous: ir.Value = cgutils.true_bit
        empty: ir.Value = cgutils.false_bit
        for length, stride in reversed(list(zip(shape, strides))):
            fits = builder.or_(builder.icmp_signed("<=", length, one),
                               builder.icmp_signed("==", stride, expected))
            contiguous = builder.and_(contiguous, fits)
            empty = builder.or_(empty, builder.icmp_signed("==", length, zero))
            expected = builder.mul(expected, length)
        return builder.or_(empty, contiguous)

    return types.boolean(array), codegen


@inlined_helper
def _workspace_length(query: Array) -> int:
    """The workspace length a query (lwork = -1) returned, rounded up: a float32 query
    holds a large length only to 24 bits, and rounding down would give a workspace
    LAPACK rejects. TOO_LONG beyond 32 bits."""
    length = int(np.ceil(np.float64(query[0]) * (1.0 + 2.0**-23)))
    return TOO_LONG if length > _INT_MAX else max(length, 1)


@inlined_helper
def _readable(a: Array) -> Any:
    """(array, leading dimension, transposed): how LAPACK reads the square matrix `a`
    without writing it. Column-major storage (Fortran order, or a view with a longer
    leading dimension) is used in place; row-major storage is used in place as the
    column-major `a^T` (transposed True, the caller flips its flags); other strides
    get a column-major copy."""
    n = a.shape[0]
    item = a.itemsize
    rows, columns = a.strides
    if n <= 1:
        return a, 1, False
    if rows == item and columns % item == 0 and n <= columns // item <= _INT_MAX:
        return a, columns // item, False
    if columns == item and rows % item == 0 and n <= rows // item <= _INT_MAX:
        return a, rows // item, True
    copy = new_array((n, n), a.dtype).T
    _copy(any_layout(a), any_layout(copy))
    return copy, n, False


@intrinsic
def _copy(typingctx: object, source: Any, target: Any) -> Any:
    """`target[...] = source` for two matrices of one shape, any strides, as one loop
    nest of IR (numba's loop of element reads and writes cost its typing and lowering
    in every kernel copying: 0.1-0.2 s of `solve_into`'s first compile)."""
    if not all(isinstance(x, types.Array) and x.ndim == 2 for x in (source, target)):
        return None

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        kinds = signature.args
        arrays = [ArrayFields.of(context, builder, kind, value) for kind, value in zip(kinds, args)]
        shapes = [cgutils.unpack_tuple(builder, x.shape, 2) for x in arrays]
        strides = [cgutils.unpack_tuple(builder, x.strides, 2) for x in arrays]
        with cgutils.loop_nest(builder, shapes[0], shapes[0][0].type) as indices:
            read, written = (
                cgutils.get_item_pointer2(context, builder, x.data, shape, stride, kind.layout,
                                          list(indices))
                for x, shape, stride, kind in zip(arrays, shapes, strides, kinds))
            value = context.cast(builder, builder.load(read), kinds[0].dtype, kinds[1].dtype)
            builder.store(value, written)
        return context.get_dummy_value()

    return types.void(source, target), codegen


@inlined_helper
def _right_side(b: Array, out: Array) -> Any:
    """`b` in column-major storage for LAPACK to overwrite with the solution: `out`
    itself when it has one column (a C column is column-major too), else a new array
    the caller copies back."""
    n, k = b.shape
    target = out if k == 1 else new_array((k, n), out.dtype).T
    _copy(any_layout(b), any_layout(target))
    return target


@inlined_helper
def _copy_back(target: Array, out: Array) -> None:
    """The solution into `out`, unless `_right_side` had LAPACK solve in `out` itself."""
    if out.shape[1] != 1:
        _copy(any_layout(target), any_layout(out))


@library_kernel
def cholesky_into(a: Array, out: Array, lower: bool) -> int:
    """potrf: the factor of the triangle `lower` names, the other triangle zeroed.

    Only that triangle of `a` is read: it is copied into `out`, whose C storage is the
    column-major transpose, so potrf runs in `out` on the opposite triangle (the factor
    of the transpose is the transposed factor)."""
    n = a.shape[0]
    if not _c_contiguous(any_layout(out)):
        return NOT_C_CONTIGUOUS
    if n == 0:
        return 0
    for i in range(n):
        for j in range(n):
            kept = j <= i if lower else j >= i
            out[i, j] = a[i, j] if kept else 0
    chars = array_of((_U if lower else _L,), np.uint8)
    ints = array_of((n, n, 0), np.int32)
    arguments = (at(chars, 0), at(ints, 0), at(out, 0), at(ints, 1), at(ints, 2))
    lowered = one_blas_thread(float(n) * n * n, n < 64)
    if out.itemsize == 8:
        dpotrf(*arguments)
    else:
        spotrf(*arguments)
    restore_blas_threads(lowered)
    return int(ints[2])


@library_kernel
def solve_triangular_into(a: Array, b: Array, out: Array, lower: bool, trans: bool,
                          unit_diagonal: bool) -> int:
    """trtrs: op(a) x = b for triangular a; info > 0 for a zero on the diagonal. A
    row-major `a` is read in place as `a^T`: the other triangle, the other op."""
    n, k = b.shape
    if _too_long(n, k):
        return TOO_LONG
    if not _c_contiguous(any_layout(out)):
        return NOT_C_CONTIGUOUS
    if n == 0 or k == 0:
        return 0
    matrix, lead, transposed = _readable(any_layout(a))
    upper = lower == transposed
    transpose = trans != transposed
    chars = array_of((_U if upper else _L, _T if transpose else _N,
                      _U if unit_diagonal else _N), np.uint8)
    ints = array_of((n, k, lead, n, 0), np.int32)
    right = _right_side(any_layout(b), any_layout(out))
    arguments = (at(chars, 0), at(chars, 1), at(chars, 2), at(ints, 0), at(ints, 1),
                 at(matrix, 0), at(ints, 2), at(right, 0), at(ints, 3), at(ints, 4))
    lowered = one_blas_thread(float(n) * n * k, k == 1)
    if out.itemsize == 8:
        dtrtrs(*arguments)
    else:
        strtrs(*arguments)
    restore_blas_threads(lowered)
    _copy_back(any_layout(right), any_layout(out))
    return int(ints[4])


@library_kernel
def solve_into(a: Array, b: Array, out: Array) -> int:
    """gesv: a x = b by LU with partial pivoting, on a copy; info > 0 for a singular a."""
    n, k = b.shape
    if _too_long(n, k):
        return TOO_LONG
    if not _c_contiguous(any_layout(out)):
        return NOT_C_CONTIGUOUS
    if n == 0 or k == 0:
        return 0
    matrix = new_array((n, n), out.dtype).T
    _copy(any_layout(a), any_layout(matrix))
    pivots = new_array(n, np.int32)
    ints = array_of((n, k, n, n, 0), np.int32)
    right = _right_side(any_layout(b), any_layout(out))
    arguments = (at(ints, 0), at(ints, 1), at(matrix, 0), at(ints, 2), at(pivots, 0),
                 at(right, 0), at(ints, 3), at(ints, 4))
    lowered = one_blas_thread(float(n) * n * (n + k), n * k < 10000)
    if out.itemsize == 8:
        dgesv(*arguments)
    else:
        sgesv(*arguments)
    restore_blas_threads(lowered)
    _copy_back(any_layout(right), any_layout(out))
    return int(ints[4])


@library_kernel
def cho_solve_into(c: Array, b: Array, out: Array, lower: bool) -> int:
    """potrs: (c c^T) x = b (or c^T c with `lower` false) from a Cholesky factor. A
    row-major `c` is read in place as `c^T`, the factor of the other triangle."""
    n, k = b.shape
    if _too_long(n, k):
        return TOO_LONG
    if not _c_contiguous(any_layout(out)):
        return NOT_C_CONTIGUOUS
    if n == 0 or k == 0:
        return 0
    factor, lead, transposed = _readable(any_layout(c))
    chars = array_of((_U if lower == transposed else _L,), np.uint8)
    ints = array_of((n, k, lead, n, 0), np.int32)
    right = _right_side(any_layout(b), any_layout(out))
    arguments = (at(chars, 0), at(ints, 0), at(ints, 1), at(factor, 0), at(ints, 2),
                 at(right, 0), at(ints, 3), at(ints, 4))
    lowered = one_blas_thread(float(n) * n * k, n * k < 512)
    if out.itemsize == 8:
        dpotrs(*arguments)
    else:
        spotrs(*arguments)
    restore_blas_threads(lowered)
    _copy_back(any_layout(right), any_layout(out))
    return int(ints[4])


@inlined_helper
def _getrf(work: Array, pivots: Array) -> int:
    """getrf in place on the square C-contiguous `work`, read as the column-major
    transpose of its C contents; info > 0 for a singular matrix."""
    n = work.shape[0]
    ints = array_of((n, n, n, 0), np.int32)
    arguments = (at(ints, 0), at(ints, 1), at(work, 0), at(ints, 2), at(pivots, 0), at(ints, 3))
    lowered = one_blas_thread(float(n) * n * n, n * n < 10000)
    if work.itemsize == 8:
        dgetrf(*arguments)
    else:
        sgetrf(*arguments)
    restore_blas_threads(lowered)
    return int(ints[3])


@library_kernel
def lu_factor_into(a: Array, lu_out: Array, pivots_out: Array) -> int:
    """getrf (as SciPy's lu_factor) on a column-major copy of the (m, n) matrix a: the
    packed factors into `lu_out`, the 0-based pivots into `pivots_out`. info > 0 (a
    zero on U's diagonal) is no failure: the factors are still exact."""
    m, n = a.shape
    if _too_long(m, n):
        return TOO_LONG
    if not (_c_contiguous(any_layout(lu_out)) and _c_contiguous(any_layout(pivots_out))):
        return NOT_C_CONTIGUOUS
    if m == 0 or n == 0:
        return 0
    work = new_array((n, m), lu_out.dtype).T
    _copy(any_layout(a), any_layout(work))
    pivots = new_array(min(m, n), np.int32)
    ints = array_of((m, n, m, 0), np.int32)
    arguments = (at(ints, 0), at(ints, 1), at(work, 0), at(ints, 2), at(pivots, 0), at(ints, 3))
    lowered = one_blas_thread(float(m) * n * min(m, n), m * n < 10000)
    if work.itemsize == 8:
        dgetrf(*arguments)
    else:
        sgetrf(*arguments)
    restore_blas_threads(lowered)
    _copy(any_layout(work), any_layout(lu_out))
    for i in range(pivots.shape[0]):
        pivots_out[i] = pivots[i] - 1
    return min(int(ints[3]), 0)


@library_kernel
def pivot_rows_into(pivots: Array, out: Array) -> int:
    """The row indices p with a = (L U)[p] from 0-based pivots (see
    `ops.lu.PivotPermutation`); the position of the first pivot outside [0, k) plus one,
    or 0."""
    k = pivots.shape[0]
    order = new_array(k, np.int64)  # np.arange: an overload numba compiles in each process
    for i in range(k):
        order[i] = i
    for i in range(k):
        pivot = pivots[i]
        if pivot < 0 or pivot >= k:
            return i + 1
        order[i], order[pivot] = order[pivot], order[i]
    for i in range(k):
        out[order[i]] = i
    return 0


@library_kernel
def inv_into(a: Array, out: Array) -> int:
    """getrf and getri in `out`: a copied into C order is a^T column-major, and the
    inverse of a^T is inv(a)^T, which read in C order is inv(a). info > 0: singular."""
    n = a.shape[0]
    if not _c_contiguous(any_layout(out)):
        return NOT_C_CONTIGUOUS
    if n == 0:
        return 0
    _copy(any_layout(a), any_layout(out))
    pivots = new_array(n, np.int32)
    info = _getrf(out, pivots)
    if info != 0:
        return info
    ints = array_of((n, n, -1, 0), np.int32)
    work = new_array(1, out.dtype)
    for attempt in range(2):
        if attempt == 1:
            length = _workspace_length(work)
            if length < 0:
                return length
            ints[2] = length
            work = new_array(length, out.dtype)
        arguments = (at(ints, 0), at(out, 0), at(ints, 1), at(pivots, 0), at(work, 0),
                     at(ints, 2), at(ints, 3))
        lowered = one_blas_thread(float(n) * n * n, n < 32)
        if out.itemsize == 8:
            dgetri(*arguments)
        else:
            sgetri(*arguments)
        restore_blas_threads(lowered)
    return int(ints[3])


@library_kernel
def slogdet(a: Array) -> Any:
    """(sign, log|det|) in a's dtype from getrf on a C-order copy (a^T column-major,
    with the same determinant): the signs of U's diagonal and one flip per row swap.
    NumPy's (0, -inf) for a singular matrix."""
    n = a.shape[0]
    work = new_array((n, n), a.dtype)
    _copy(any_layout(a), any_layout(work))
    pivots = new_array(max(n, 1), np.int32)
    sign, logabsdet = 1.0, 0.0
    if n > 0 and _getrf(work, pivots) > 0:
        sign, logabsdet = 0.0, -np.inf
    else:
        for i in range(n):
            entry = work[i, i]
            if (pivots[i] != i + 1) != (entry < 0):
                sign = -sign
            logabsdet += np.log(np.abs(entry))
    result = new_array(2, a.dtype)
    result[0], result[1] = sign, logabsdet
    return result[0], result[1]


@library_kernel
def det(a: Array) -> Any:
    """sign * exp(log|det|), in a's dtype, as NumPy computes it (no overflow from
    multiplying the diagonal one entry at a time); 0.0 for a singular matrix."""
    sign, logabsdet = slogdet(a)
    return sign * np.exp(logabsdet)


@library_kernel
def eigh_into(a: Array, w_out: Array, v_out: Array, lower: bool) -> int:
    """syevd (as NumPy's eigh): ascending eigenvalues, eigenvectors in columns.

    a is copied into `v_out`, whose C storage is the column-major a^T: the triangle
    `lower` names is the other triangle there. syevd leaves the eigenvectors in the
    columns of that storage, the rows of `v_out`, which are then transposed in place."""
    n = a.shape[0]
    if not (_c_contiguous(any_layout(w_out)) and _c_contiguous(any_layout(v_out))):
        return NOT_C_CONTIGUOUS
    if n == 0:
        return 0
    _copy(any_layout(a), any_layout(v_out))
    chars = array_of((_V, _U if lower else _L), np.uint8)
    ints = array_of((n, n, -1, -1, 0), np.int32)
    work = new_array(1, v_out.dtype)
    iwork = new_array(1, np.int32)
    for attempt in range(2):
        if attempt == 1:
            length = _workspace_length(work)
            if length < 0:
                return length
            ints[2], ints[3] = length, max(iwork[0], 1)
            work = new_array(ints[2], v_out.dtype)
            iwork = new_array(ints[3], np.int32)
        arguments = (at(chars, 0), at(chars, 1), at(ints, 0), at(v_out, 0), at(ints, 1),
                     at(w_out, 0), at(work, 0), at(ints, 2), at(iwork, 0), at(ints, 3),
                     at(ints, 4))
        lowered = one_blas_thread(float(n) * n * n, False)
        if v_out.itemsize == 8:
            dsyevd(*arguments)
        else:
            ssyevd(*arguments)
        restore_blas_threads(lowered)
    for i in range(n):
        for j in range(i + 1, n):
            v_out[i, j], v_out[j, i] = v_out[j, i], v_out[i, j]
    return int(ints[4])


@inlined_helper
def _gesdd(a: Array, jobz: int, s_out: Array, u_out: Array, vh_out: Array) -> int:
    """gesdd on a C-order copy of a, which is a^T = vh^T diag(s) u^T column-major:
    LAPACK's U of a^T (column-major) is vh in C order, its VT is u in C order, so both
    are written straight into the outputs. `jobz` 'N' leaves u_out and vh_out alone."""
    m, n = a.shape
    k = min(m, n)
    work = new_array((m, n), a.dtype)
    _copy(any_layout(a), any_layout(work))
    chars = array_of((jobz,), np.uint8)
    vh_lead = n if jobz != _N else 1
    u_lead = max(u_out.shape[1], 1) if jobz != _N else 1
    ints = array_of((n, m, max(n, 1), vh_lead, u_lead, -1, 0), np.int32)
    iwork = new_array(8 * k, np.int32)
    query = new_array(1, a.dtype)
    for attempt in range(2):
        if attempt == 1:
            length = _workspace_length(query)
            if length < 0:
                return length
            ints[5] = length
            query = new_array(length, a.dtype)
        arguments = (at(chars, 0), at(ints, 0), at(ints, 1), at(work, 0), at(ints, 2),
                     at(s_out, 0), at(vh_out, 0), at(ints, 3), at(u_out, 0), at(ints, 4),
                     at(query, 0), at(ints, 5), at(iwork, 0), at(ints, 6))
        lowered = one_blas_thread(float(m) * n * k, False)
        if work.itemsize == 8:
            dgesdd(*arguments)
        else:
            sgesdd(*arguments)
        restore_blas_threads(lowered)
    return int(ints[6])


@inlined_helper
def _identity(out: Array) -> None:
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = 1 if i == j else 0


@library_kernel
def svd_into(a: Array, u_out: Array, s_out: Array, vh_out: Array, full_matrices: bool) -> int:
    """gesdd (as NumPy's svd): a = u diag(s) vh, u (m, m or k), vh (n or k, n). An
    empty a has identity factors, as in NumPy."""
    m, n = a.shape
    if _too_long(m, n):
        return TOO_LONG
    if not (_c_contiguous(any_layout(u_out)) and _c_contiguous(any_layout(s_out)) and _c_contiguous(any_layout(vh_out))):
        return NOT_C_CONTIGUOUS
    if min(m, n) == 0:
        _identity(u_out)
        _identity(vh_out)
        return 0
    return _gesdd(a, _A if full_matrices else _S, s_out, u_out, vh_out)


@library_kernel
def svd_values_into(a: Array, s_out: Array) -> int:
    """gesdd without vectors (as NumPy's svd(compute_uv=False))."""
    m, n = a.shape
    if _too_long(m, n):
        return TOO_LONG
    if not _c_contiguous(any_layout(s_out)):
        return NOT_C_CONTIGUOUS
    if min(m, n) == 0:
        return 0
    unused = new_array((1, 1), s_out.dtype)
    return _gesdd(a, _N, s_out, unused, unused)


@library_kernel
def qr_into(a: Array, q_out: Array, r_out: Array, complete: bool) -> int:
    """geqrf and orgqr, as NumPy's qr (same routines, so the same signs): q (m, m or k)
    with orthonormal columns, r (m or k, n) upper triangular.

    Both run in one column-major copy of a, wide enough for q's columns (complete mode
    with m > n adds m - n); r is read off before orgqr overwrites the copy with q."""
    m, n = a.shape
    k = min(m, n)
    q_columns = m if complete else k
    if _too_long(m, n):
        return TOO_LONG
    work = new_array((max(n, q_columns), m), a.dtype).T  # np.zeros: an overload to compile
    for i in range(m):
        for j in range(work.shape[1]):
            work[i, j] = a[i, j] if j < n else 0
    tau = new_array(max(k, 1), a.dtype)
    ints = array_of((m, n, max(m, 1), -1, 0, q_columns, k), np.int32)
    if k > 0:
        query = new_array(1, a.dtype)
        for attempt in range(2):
            if attempt == 1:
                length = _workspace_length(query)
                if length < 0:
                    return length
                ints[3] = length
                query = new_array(length, a.dtype)
            factor = (at(ints, 0), at(ints, 1), at(work, 0), at(ints, 2), at(tau, 0),
                      at(query, 0), at(ints, 3), at(ints, 4))
            lowered = one_blas_thread(float(m) * n * k, False)
            if work.itemsize == 8:
                dgeqrf(*factor)
            else:
                sgeqrf(*factor)
            restore_blas_threads(lowered)
    for i in range(r_out.shape[0]):
        for j in range(n):
            r_out[i, j] = work[i, j] if j >= i else 0
    if k == 0:
        _identity(q_out)
        return int(ints[4])
    ints[3] = -1
    query = new_array(1, a.dtype)
    for attempt in range(2):
        if attempt == 1:
            length = _workspace_length(query)
            if length < 0:
                return length
            ints[3] = length
            query = new_array(length, a.dtype)
        arguments = (at(ints, 0), at(ints, 5), at(ints, 6), at(work, 0), at(ints, 2),
                     at(tau, 0), at(query, 0), at(ints, 3), at(ints, 4))
        lowered = one_blas_thread(float(m) * q_columns * k, False)
        if work.itemsize == 8:
            dorgqr(*arguments)
        else:
            sorgqr(*arguments)
        restore_blas_threads(lowered)
    for i in range(m):
        for j in range(q_columns):
            q_out[i, j] = work[i, j]
    return int(ints[4])


# Higham (2005), "The scaling and squaring method for the matrix exponential revisited":
# the largest 1-norm for which the Padé approximant of each degree is accurate to double
# precision, and the approximants' coefficients.
_PADE_THETA = (1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
               2.097847961257068e0, 5.371920351148152e0)
_PADE_COEFFICIENTS = np.array([
    [120.0, 60.0, 12.0, 1.0] + [0.0] * 10,
    [30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0] + [0.0] * 8,
    [17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0] + [0.0] * 6,
    [17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
     110880.0, 3960.0, 90.0, 1.0] + [0.0] * 4,
    [64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
     129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
     40840800.0, 960960.0, 16380.0, 182.0, 1.0],
])


@inlined_helper
def _product(x: Array, y: Array) -> Array:
    out: Array = new_array((x.shape[0], y.shape[1]), x.dtype)
    matmul_into(x, y, out)
    return out


@library_kernel
def _plus_terms(base: Array, c1: float, m1: Array, c2: float, m2: Array, c3: float, m3: Array,
               diagonal: float) -> int:
    """`base + c1 m1 + c2 m2 + c3 m3 + diagonal I` into `base`, for `expm_into`, which
    calls it eight times: as loops, not numba's array expressions (each of those a ufunc
    kernel numba compiles), and as a function of its own, not inlined eight times (the
    matrix exponential's first compile: 2.3 s with array expressions)."""
    n = base.shape[0]
    for i in range(n):
        for j in range(n):
            base[i, j] += c1 * m1[i, j] + c2 * m2[i, j] + c3 * m3[i, j]
        base[i, i] += diagonal
    return 0


@inlined_helper
def _zeros(n: int) -> Array:
    zeros: Array = new_array((n, n), np.float64)
    for i in range(n):
        for j in range(n):
            zeros[i, j] = 0.0
    return zeros


@library_kernel
def expm_into(a: Array, out: Array) -> int:
    """exp(a) by scaling and squaring (Higham 2005, as SciPy's expm before its 1-norm
    estimates), computed in float64 whatever a's dtype: the Padé approximant of degree
    3, 5, 7 or 9 when a's 1-norm allows, else of degree 13 of a / 2^s, squared s times.
    A matrix holding inf or nan gives nan. info > 0: the approximant's solve failed."""
    n = a.shape[0]
    if not _c_contiguous(any_layout(out)):
        return NOT_C_CONTIGUOUS
    if n == 0:
        return 0
    x = new_array((n, n), np.float64)
    _copy(any_layout(a), any_layout(x))
    norm = 0.0
    for j in range(n):
        column = 0.0
        for i in range(n):
            column += abs(x[i, j])
        norm = max(norm, column)
    if not math.isfinite(norm):
        for i in range(n):
            for j in range(n):
                out[i, j] = np.nan
        return 0
    degree, squarings = 4, 0
    for candidate in range(4):
        if norm <= _PADE_THETA[candidate]:
            degree = candidate
            break
    if degree == 4 and norm > _PADE_THETA[4]:
        squarings = int(math.ceil(math.log2(norm / _PADE_THETA[4])))
        scale = 1.0
        for _ in range(squarings):
            scale *= 0.5  # exact: a power of two
        for i in range(n):
            for j in range(n):
                x[i, j] *= scale
    b = _PADE_COEFFICIENTS[degree]
    x2 = _product(x, x)
    if degree < 4:
        odd, even = _zeros(n), _zeros(n)
        _plus_terms(odd, 0.0, x2, 0.0, x2, 0.0, x2, b[1])
        _plus_terms(even, 0.0, x2, 0.0, x2, 0.0, x2, b[0])
        power = x2
        for k in range(1, degree + 2):
            if k > 1:
                power = _product(power, x2)
            _plus_terms(odd, b[2 * k + 1], power, 0.0, power, 0.0, power, 0.0)
            _plus_terms(even, b[2 * k], power, 0.0, power, 0.0, power, 0.0)
        u = _product(x, odd)
    else:
        x4 = _product(x2, x2)
        x6 = _product(x4, x2)
        inner = _zeros(n)
        _plus_terms(inner, b[13], x6, b[11], x4, b[9], x2, 0.0)
        odd = _product(x6, inner)
        _plus_terms(odd, b[7], x6, b[5], x4, b[3], x2, b[1])
        u = _product(x, odd)
        inner = _zeros(n)
        _plus_terms(inner, b[12], x6, b[10], x4, b[8], x2, 0.0)
        even = _product(x6, inner)
        _plus_terms(even, b[6], x6, b[4], x4, b[2], x2, b[0])
    denominator = new_array((n, n), np.float64)
    numerator = new_array((n, n), np.float64)
    for i in range(n):
        for j in range(n):
            denominator[i, j] = even[i, j] - u[i, j]
            numerator[i, j] = even[i, j] + u[i, j]
    result = new_array((n, n), np.float64)
    info = solve_into(denominator, numerator, result)
    if info != 0:
        return info
    for _ in range(squarings):
        result = _product(result, result)
    _copy(any_layout(result), any_layout(out))
    return 0
