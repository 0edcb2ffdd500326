"""Matrix products in compiled code: a numba intrinsic that calls BLAS `?gemm` or `?gemv`
directly.

Why not `np.dot`: numba's `np.dot` costs about 0.6 s of compile time per distinct
signature (its overload is typed and compiled like user code), and its first use imports
`scipy.linalg` (0.2 s). Here a product is one intrinsic whose lowering calls SciPy's
Fortran BLAS (the `cython_blas` function pointers numba also uses), reached by
symbol name so that numba's on-disk cache stays valid across processes.

`cython_blas` is loaded straight from its extension file, without running
`scipy/linalg/__init__.py`: the routines need nothing from the package, and skipping it
saves 0.2 s in every process that loads a compiled graph. Cython hands later ordinary
imports the same module object.

Threads: OpenBLAS splits a product over its threads once it is large enough for
OpenBLAS (about 64^3 multiply-adds for `gemm`, a 460 800-element matrix for `gemv`).
Where another process keeps a core busy (a laptop, a CI runner, two Dask workers per
machine) the second thread waits for the scheduler and the product stalls by whole
ticks (4 ms here): on 2 cores with one busy, one thread against two, a 256^3 `gemm`
took 0.53 against 24 ms, an 800^3 one 32 against 60 ms, a 20 000 x 100 `gemv` 0.26
against 12 ms. Quiet, two threads gain at most 2x on such sizes. So a product of fewer
than `THREADED_PRODUCT_MIN` multiply-adds runs on one thread: the compiled code reads
OpenBLAS's thread count and, if it is above one, sets it to one for the call and back
after it. It only ever lowers the count to one and restores a count above one that it
read, so products running at once in several threads never leave a temporary one
behind (a thread that reads another's temporary one changes nothing). Larger products
use the count the process has: `OPENBLAS_NUM_THREADS` or `OMP_NUM_THREADS` at start-up,
or what `threadpoolctl` (which calls the same `openblas_set_num_threads`) or a call of a
function given `threads` (`numba_backend.threads`) set since. The count's get and set
are found in the library `cython_blas` links to, under any of the spellings
`threadpoolctl` looks for; without them (SciPy built on another BLAS) products run as
that BLAS decides.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import operator
import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType
from collections.abc import Callable
from typing import Any

import numba
from llvmlite import binding, ir
from numba.core import cgutils, types
from numba.core.typing import signature
from numba.extending import intrinsic

from numba_backend.calls import KernelCall
from numba_backend.intrinsics import ArrayFields

_KINDS = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def cython_module(name: str) -> ModuleType:
    """`scipy.linalg.<name>` (`cython_blas`, `cython_lapack`), loaded from its extension
    file without importing `scipy.linalg`."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or spec.origin is None:
        raise ImportError("fgraph's matrix kernels need SciPy's BLAS and LAPACK (pip install scipy)")
    folder = Path(spec.origin).parent / "linalg"
    qualified = f"scipy.linalg.{name}"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"{name}{suffix}"
        if path.exists():
            loader = importlib.machinery.ExtensionFileLoader(qualified, str(path))
            module_spec = importlib.util.spec_from_file_location(qualified, path, loader=loader)
            if module_spec is not None:
                module = importlib.util.module_from_spec(module_spec)
                loader.exec_module(module)
                return module
    return importlib.import_module(qualified)


def capsule_address(capsule: object) -> int:
    """The function address a Cython `__pyx_capi__` capsule holds."""
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    address = get_pointer(capsule, get_name(capsule))
    if not isinstance(address, int):
        raise ImportError("a SciPy BLAS/LAPACK capsule holds no address")
    return address


def _register_symbols() -> None:
    """Make `fgraph_<kind>gemm` and `fgraph_<kind>gemv` resolvable by numba's JIT linker
    in this process."""
    capsules = cython_module("cython_blas").__pyx_capi__
    for kind in _KINDS.values():
        for routine in ("gemm", "gemv"):
            binding.add_symbol(f"fgraph_{kind}{routine}", capsule_address(capsules[f"{kind}{routine}"]))


_register_symbols()

THREADED_PRODUCT_MIN = 2**30
"""Products of fewer multiply-adds (rows x columns x inner length) run on one BLAS
thread, unless a call of a function given `threads` lifts the rule: about 30 ms on
one core here, where a stall under load costs less than a second thread saves quiet."""

threaded_min = ctypes.c_int64(THREADED_PRODUCT_MIN)
"""The threshold as compiled code reads it (symbol `fgraph_blas_threaded_min`):
`THREADED_PRODUCT_MIN`, or 0 while `numba_backend.threads` lifts the rule."""
binding.add_symbol("fgraph_blas_threaded_min", ctypes.addressof(threaded_min))


def _openblas_threads() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """OpenBLAS's get and set of its thread count, in the library behind `cython_blas`
    (a library handle's symbol lookup searches the libraries it links to as well),
    registered for compiled code as `fgraph_blas_get_threads` and `..._set_threads`."""
    try:
        library = ctypes.CDLL(cython_module("cython_blas").__file__)
    except (OSError, TypeError):
        return None
    for prefix, suffix in itertools.product(("scipy_", ""), ("", "64_", "_64")):
        get_name, set_name = (f"{prefix}openblas_{verb}_num_threads{suffix}" for verb in ("get", "set"))
        if hasattr(library, get_name) and hasattr(library, set_name):
            get, set_ = library[get_name], library[set_name]
            get.restype, get.argtypes = ctypes.c_int, []
            set_.restype, set_.argtypes = None, [ctypes.c_int]
            for symbol, function in (("fgraph_blas_get_threads", get), ("fgraph_blas_set_threads", set_)):
                binding.add_symbol(symbol, ctypes.cast(function, ctypes.c_void_p).value or 0)
            return get, set_
    return None


openblas_threads = _openblas_threads()
"""OpenBLAS's thread count (get, set) in this process, or None without OpenBLAS."""

_VOID_P = ir.IntType(8).as_pointer()
_INT = ir.IntType(32)
_INT_MAX = 2**31 - 1
_TRANSPOSE_OR_NOT = (ir.Constant(ir.IntType(8), ord("T")), ir.Constant(ir.IntType(8), ord("N")))


def _matrix(array: Any) -> bool:
    return isinstance(array, types.Array) and array.ndim == 2


@numba.njit(cache=True, nogil=True, no_cpython_wrapper=True)
def matmul_into_code(a: Any, b: Any, out: Any) -> None:
    inline_matmul_into(a, b, out)


def _any_operands(parameters: tuple[Any, ...]) -> tuple[Any, ...]:
    """Operands of any layout as layout 'A' (BLAS reads their strides at run time),
    the output as C-ordered: one specialization per dtype."""
    a, b, out = parameters
    if not all(isinstance(array, types.Array) for array in parameters):
        return parameters  # refused by inline_matmul_into's typing
    return (a.copy(layout="A", readonly=False), b.copy(layout="A", readonly=False),
            out.copy(readonly=False))


matmul_into_call = KernelCall(matmul_into_code, parameter_types=_any_operands, raises=False)


@intrinsic
def matmul_into(typingctx: object, a: Any, b: Any, out: Any) -> Any:
    """`out[...] = a @ b` (see `inline_matmul_into`), as a call of one compiled function
    per dtype. Its code inline at every product cost numba 50-100 ms of compile time a
    product (the Kalman filter's gradient loop, 24 products of 2 x 2 matrices: 4.1 s
    with them inline, 1.6 s without them); a call is a few nanoseconds at run time,
    beside a BLAS call's 50 or more."""
    if not all(_matrix(array) for array in (a, b, out)) or out.layout != "C":
        return None
    return matmul_into_call.typed(a, b, out)


SMALL_PRODUCT = 128
"""Multiply-adds up to which a product of static shapes is an explicit loop inline
(`small_matmul_into`) rather than a call: a BLAS call costs 50-100 ns whatever its
size, and a call of `matmul_into` some more (the Kalman filter's 2 x 2 products: 650 us
inline, 820 us as calls, 630 us as small loops)."""


@intrinsic(prefer_literal=True)
def small_matmul_into(
    typingctx: object, a: Any, b: Any, out: Any, rows: Any, inner: Any, columns: Any
) -> Any:
    """`out[...] = a @ b` written out inline for small static shapes (`rows`, `inner`,
    `columns` literal integers; the kernel uses it where they make at most
    `SMALL_PRODUCT` multiply-adds): each output element one chain of multiply-adds of
    elements read through the strides, with no loop for LLVM to unroll; any dtype numba
    multiplies and adds. Stacks of matrices (arrays of one rank above 2) are multiplied
    matrix by matrix over `out`'s leading axes, an operand's axis of length 1 read at 0
    (broadcast): one call where a loop of calls on views would cost numba a view's
    typing and lowering per operand (0.1 s a product in the Kalman filter's gradient)."""
    operands = (a, b, out)
    if not all(isinstance(x, types.Array) and x.ndim >= 2 for x in operands):
        return None
    if len({x.dtype for x in operands}) != 1 or len({x.ndim for x in operands}) != 1:
        return None
    lengths = (rows, inner, columns)
    if not all(isinstance(length, types.IntegerLiteral) for length in lengths):
        return None
    m, k, n = (length.literal_value for length in lengths)
    dtype, batch = a.dtype, a.ndim - 2

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        arrays = [ArrayFields.of(context, builder, t, v) for t, v in zip(operands, args)]
        shapes = [cgutils.unpack_tuple(builder, x.shape, batch + 2) for x in arrays]
        strides = [cgutils.unpack_tuple(builder, x.strides, batch + 2) for x in arrays]
        multiply = context.get_function(operator.mul, signature(dtype, dtype, dtype))
        add = context.get_function(operator.add, signature(dtype, dtype, dtype))
        zero, one = (context.get_constant(types.intp, value) for value in (0, 1))

        def product(stack: list[ir.Value]) -> None:
            starts = [  # an operand's batch index: the stack's, or 0 along a broadcast axis
                [builder.select(builder.icmp_signed("==", shape[axis], one), zero, index)
                 for axis, index in enumerate(stack)] for shape in shapes]

            def element(position: int, row: int, column: int) -> ir.Value:
                indices = [*starts[position], *(context.get_constant(types.intp, index)
                                                for index in (row, column))]
                return cgutils.get_item_pointer2(
                    context, builder, arrays[position].data, shapes[position],
                    strides[position], operands[position].layout, indices)

            for i in range(m):
                for j in range(n):
                    total = context.get_constant_generic(builder, dtype, 0)
                    for step in range(k):
                        term = multiply(builder, (builder.load(element(0, i, step)),
                                                  builder.load(element(1, step, j))))
                        total = add(builder, (total, term))
                    builder.store(total, element(2, i, j))

        if batch:
            with cgutils.loop_nest(builder, shapes[2][:batch], zero.type) as stack:
                product(list(stack))
        else:
            product([])
        return context.get_dummy_value()

    return types.void(a, b, out, rows, inner, columns), codegen


@intrinsic
def inline_matmul_into(typingctx: object, a: Any, b: Any, out: Any) -> Any:
    """`out[...] = a @ b` for 2-d arrays of one BLAS dtype, `out` C-ordered.

    BLAS reads an operand in place when one axis has unit stride and the other a stride
    it can express as a leading dimension: C or Fortran order, a transposed matrix, a
    column `w[:, None]`, every other row. Others (negative or two non-unit strides, or
    lengths beyond BLAS's 32-bit integers) take an explicit loop instead, rather than
    a copy whose code numba would have to compile for every graph."""
    operands = (a, b, out)
    if not all(_matrix(array) for array in operands) or out.layout != "C":
        return None
    if len({array.dtype for array in operands}) != 1 or str(a.dtype) not in _KINDS:
        return None
    kind = _KINDS[str(a.dtype)]

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        arrays = [ArrayFields.of(context, builder, t, v) for t, v in zip(operands, args)]
        rows, inner = cgutils.unpack_tuple(builder, arrays[0].shape, 2)
        columns = cgutils.unpack_tuple(builder, arrays[1].shape, 2)[1]
        lengths = (rows, columns, inner)
        item = ir.Constant(rows.type, context.get_abi_sizeof(context.get_data_type(a.dtype)))
        views = [_blas_view(builder, array, item) for array in arrays[:2]]
        fits = builder.and_(views[0].usable, views[1].usable)
        for length in lengths:
            fits = builder.and_(fits, _fits_int(builder, length))
        zero, one = ir.Constant(rows.type, 0), ir.Constant(rows.type, 1)

        def vector_case(length: ir.Value, array: Any, axis: int) -> tuple[ir.Value, ir.Value]:
            """Whether the product is matrix-vector: `length` is 1 and the other
            operand's contracted axis is a BLAS vector; its increment. gemv leaves its
            output alone when nothing is contracted, so that case is gemm's."""
            stride = cgutils.unpack_tuple(builder, array.strides, 2)[axis]
            usable, step = _increment(builder, stride, inner, item)
            is_one = builder.icmp_signed("==", length, one)
            case = builder.and_(builder.and_(usable, is_one), builder.icmp_signed(">", inner, zero))
            return case, step

        column, column_step = vector_case(columns, arrays[1], 0)
        row, row_step = vector_case(rows, arrays[0], 1)
        gemv = functools.partial(_call_gemv, context, builder, kind, a.dtype, out=arrays[2])
        empty = builder.or_(
            builder.icmp_signed("==", rows, zero), builder.icmp_signed("==", columns, zero)
        )
        with builder.if_then(builder.not_(empty)), builder.if_else(fits) as (blas, loop):
            with blas:
                work = _multiply_adds(builder, lengths)
                floor = ir.Constant(ir.DoubleType(), _OPENBLAS_SERIAL_BELOW[kind])
                lowered = _one_thread_if_small(builder, work, builder.fcmp_ordered("<", work, floor))
                with builder.if_else(column) as (matrix_vector, other):
                    with matrix_vector:
                        gemv(views[0], arrays[0], (arrays[1], column_step), (inner, rows), True)
                    with other, builder.if_else(row) as (vector_matrix, general):
                        with vector_matrix:
                            gemv(views[1], arrays[1], (arrays[0], row_step), (inner, columns), False)
                        with general:
                            _call_gemm(context, builder, kind, a.dtype, views, arrays, lengths)
                _restore_threads(builder, lowered)
            with loop:
                _loop_product(context, builder, operands, arrays, lengths)
        return context.get_dummy_value()

    return types.void(a, b, out), codegen


class _BlasView:
    """How BLAS can read one operand in place: whether it can, its transpose flag in the
    column-major view of a row-major product, and its leading dimension."""

    def __init__(self, usable: ir.Value, transposed: ir.Value, lead: ir.Value) -> None:
        self.usable, self.transposed, self.lead = usable, transposed, lead


def _blas_view(builder: ir.IRBuilder, array: Any, item: ir.Value) -> _BlasView:
    rows, columns = cgutils.unpack_tuple(builder, array.shape, 2)
    row_stride, column_stride = cgutils.unpack_tuple(builder, array.strides, 2)
    one = ir.Constant(rows.type, 1)

    def at_most_one(length: ir.Value) -> ir.Value:
        return builder.icmp_signed("<=", length, one)

    def leading(stride: ir.Value, other: ir.Value, length: ir.Value) -> tuple[ir.Value, ir.Value]:
        """Whether `stride` (bytes) works as the leading dimension of a matrix whose
        other axis has `other` elements; the dimension (in elements) if so."""
        minimum = builder.select(at_most_one(other), one, other)
        whole = builder.icmp_signed("==", builder.srem(stride, item), ir.Constant(rows.type, 0))
        far_enough = builder.icmp_signed(">=", stride, builder.mul(minimum, item))
        usable = builder.or_(at_most_one(length), builder.and_(whole, far_enough))
        lead = builder.select(at_most_one(length), minimum, builder.sdiv(stride, item))
        return builder.and_(usable, _fits_int(builder, lead)), lead

    def unit(stride: ir.Value, length: ir.Value) -> ir.Value:
        return builder.or_(builder.icmp_signed("==", stride, item), at_most_one(length))

    row_usable, row_lead = leading(row_stride, columns, rows)
    row_major = builder.and_(unit(column_stride, columns), row_usable)
    column_usable, column_lead = leading(column_stride, rows, columns)
    column_major = builder.and_(unit(row_stride, rows), column_usable)
    return _BlasView(
        builder.or_(row_major, column_major),
        builder.not_(row_major),
        builder.select(row_major, row_lead, column_lead),
    )


def _increment(
    builder: ir.IRBuilder, stride: ir.Value, length: ir.Value, item: ir.Value
) -> tuple[ir.Value, ir.Value]:
    """Whether a vector with this byte stride is a BLAS vector (a positive whole number
    of elements apart, or at most one element), and its increment if so."""
    one = ir.Constant(length.type, 1)
    short = builder.icmp_signed("<=", length, one)
    whole = builder.icmp_signed("==", builder.srem(stride, item), ir.Constant(length.type, 0))
    positive = builder.icmp_signed(">", stride, ir.Constant(length.type, 0))
    step = builder.select(short, one, builder.sdiv(stride, item))
    usable = builder.or_(short, builder.and_(whole, positive))
    return builder.and_(usable, _fits_int(builder, step)), step


_OPENBLAS_SERIAL_BELOW = {"s": 2.0**18, "d": 2.0**18, "c": 2.0**12, "z": 2.0**12}
"""Multiply-adds below which OpenBLAS (built with its default thresholds) runs every
product of the kind on one thread itself (real `gemm` up to 64^3, `gemv` below 460 800;
complex `gemm` up to 32^3, `gemv` below 4096): there a product does not read the count,
which in a loop of 3 x 3 products cost 4 % of the run time."""


@intrinsic
def one_blas_thread(typingctx: object, work: Any, serial: Any) -> Any:
    """Before a LAPACK call of about `work` (float64) multiply-adds: below
    `THREADED_PRODUCT_MIN`, lower OpenBLAS's thread count to one if it is above, unless
    `serial` says OpenBLAS runs this call on one thread itself (then the count is not
    read). Returns the count `restore_blas_threads` sets back after the call (0: none)."""
    if work != types.float64 or serial != types.boolean:
        return None

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        return builder.load(_one_thread_if_small(builder, args[0], args[1]))

    return types.int32(work, serial), codegen


@intrinsic
def restore_blas_threads(typingctx: object, count: Any) -> Any:
    """After the LAPACK call: set back the count `one_blas_thread` lowered, if it did."""
    if count != types.int32:
        return None

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        slot = cgutils.alloca_once_value(builder, args[0])
        _restore_threads(builder, slot)
        return context.get_dummy_value()

    return types.void(count), codegen


def _one_thread_if_small(builder: ir.IRBuilder, work: ir.Value, serial: ir.Value) -> ir.Value:
    """Before a BLAS call of `work` multiply-adds (a double): below the threshold, and
    unless `serial` (OpenBLAS keeps this call on one thread itself), lower OpenBLAS's
    thread count to one if it is above. Returns the slot holding the count
    `_restore_threads` sets back after the call (0: none)."""
    slot = cgutils.alloca_once_value(builder, ir.Constant(_INT, 0))
    if openblas_threads is None:
        return slot
    module, real = builder.module, ir.DoubleType()
    threshold = module.globals.get("fgraph_blas_threaded_min")
    if threshold is None:
        threshold = ir.GlobalVariable(module, ir.IntType(64), "fgraph_blas_threaded_min")
    below = builder.fcmp_ordered("<", work, builder.sitofp(builder.load(threshold), real))
    with builder.if_then(builder.and_(builder.not_(serial), below)):
        get = cgutils.get_or_insert_function(module, ir.FunctionType(_INT, []), "fgraph_blas_get_threads")
        count = builder.call(get, [])
        with builder.if_then(builder.icmp_signed(">", count, ir.Constant(_INT, 1))):
            _set_threads(builder, ir.Constant(_INT, 1))
            builder.store(count, slot)
    return slot


def _multiply_adds(builder: ir.IRBuilder, lengths: tuple[ir.Value, ...]) -> ir.Value:
    """The product of the lengths, in floating point (three lengths may overflow)."""
    real = ir.DoubleType()
    work: ir.Value = ir.Constant(real, 1.0)
    for length in lengths:
        work = builder.fmul(work, builder.sitofp(length, real))
    return work


def _restore_threads(builder: ir.IRBuilder, slot: ir.Value) -> None:
    if openblas_threads is None:
        return
    count = builder.load(slot)
    with builder.if_then(builder.icmp_signed(">", count, ir.Constant(_INT, 0))):
        _set_threads(builder, count)


def _set_threads(builder: ir.IRBuilder, count: ir.Value) -> None:
    function_type = ir.FunctionType(ir.VoidType(), [_INT])
    setter = cgutils.get_or_insert_function(builder.module, function_type, "fgraph_blas_set_threads")
    builder.call(setter, [count])


def _fits_int(builder: ir.IRBuilder, length: ir.Value) -> ir.Value:
    return builder.icmp_signed("<=", length, ir.Constant(length.type, _INT_MAX))


def _call_gemm(
    context: Any,
    builder: ir.IRBuilder,
    kind: str,
    dtype: Any,
    views: list[_BlasView],
    arrays: list[Any],
    lengths: tuple[ir.Value, ir.Value, ir.Value],
) -> None:
    """Row-major C = A B is column-major C^T = B^T A^T: an operand stored row-major is
    already its transpose in BLAS's column-major view ('N'); one stored column-major
    is not ('T')."""
    rows, columns, inner = lengths
    slot, count = _slots(context, builder)

    def flag(view: _BlasView) -> ir.Value:
        return slot(builder.select(view.transposed, *_TRANSPOSE_OR_NOT))

    one = ir.Constant(rows.type, 1)
    data = [builder.bitcast(array.data, _VOID_P) for array in arrays]
    function_type = ir.FunctionType(ir.VoidType(), [_VOID_P] * 13)
    gemm = cgutils.get_or_insert_function(builder.module, function_type, f"fgraph_{kind}gemm")
    builder.call(
        gemm,
        [
            flag(views[1]),
            flag(views[0]),
            count(columns),
            count(rows),
            count(inner),
            slot(context.get_constant_generic(builder, dtype, 1)),
            data[1],
            count(views[1].lead),
            data[0],
            count(views[0].lead),
            slot(context.get_constant_generic(builder, dtype, 0)),
            data[2],
            count(builder.select(builder.icmp_signed(">", columns, one), columns, one)),
        ],
    )


def _call_gemv(
    context: Any,
    builder: ir.IRBuilder,
    kind: str,
    dtype: Any,
    view: _BlasView,
    matrix: Any,
    vector: tuple[Any, ir.Value],
    lengths: tuple[ir.Value, ir.Value],
    matrix_first: bool,
    *,
    out: Any,
) -> None:
    """A product with one side of length 1 as BLAS `?gemv` (OpenBLAS's gemm is several
    times slower on an (n, 1) operand). `matrix_first`: out (m, 1) = matrix (m, k) @
    column (k, 1), `lengths` = (k, m); otherwise out (1, n) = row (1, k) @ matrix
    (k, n), `lengths` = (k, n). In BLAS's column-major view a row-major matrix is
    its transpose, so the product needs 'T' exactly when the matrix comes first and
    is row-major, or comes second and is column-major."""
    first, second = lengths
    slot, count = _slots(context, builder)
    row_major = builder.not_(view.transposed)
    transpose = row_major if matrix_first else view.transposed
    # BLAS's matrix has shape (M, N): `lengths` when transposing, else reversed.
    blas_rows = builder.select(transpose, first, second)
    blas_columns = builder.select(transpose, second, first)
    function_type = ir.FunctionType(ir.VoidType(), [_VOID_P] * 11)
    gemv = cgutils.get_or_insert_function(builder.module, function_type, f"fgraph_{kind}gemv")
    vector_array, step = vector
    builder.call(
        gemv,
        [
            slot(builder.select(transpose, *_TRANSPOSE_OR_NOT)),
            count(blas_rows),
            count(blas_columns),
            slot(context.get_constant_generic(builder, dtype, 1)),
            builder.bitcast(matrix.data, _VOID_P),
            count(view.lead),
            builder.bitcast(vector_array.data, _VOID_P),
            count(step),
            slot(context.get_constant_generic(builder, dtype, 0)),
            builder.bitcast(out.data, _VOID_P),
            count(ir.Constant(first.type, 1)),
        ],
    )


def _slots(
    context: Any, builder: ir.IRBuilder
) -> tuple[Callable[[ir.Value], ir.Value], Callable[[ir.Value], ir.Value]]:
    """Fortran passes every argument by pointer: `slot` stores a value on the stack and
    gives its address, `count` does so for a length as a 32-bit integer."""

    def slot(value: ir.Value) -> ir.Value:
        return builder.bitcast(cgutils.alloca_once_value(builder, value), _VOID_P)

    def count(length: ir.Value) -> ir.Value:
        return slot(builder.trunc(length, _INT))

    return slot, count


def _element_pointer(
    context: Any, builder: ir.IRBuilder, array: Any, array_type: Any, indices: list[ir.Value]
) -> ir.Value:
    """The address of the element of the 2-d `array` at `indices`, through its strides."""
    shape = cgutils.unpack_tuple(builder, array.shape, 2)
    strides = cgutils.unpack_tuple(builder, array.strides, 2)
    return cgutils.get_item_pointer2(
        context, builder, array.data, shape, strides, array_type.layout, indices
    )


def _loop_product(
    context: Any,
    builder: ir.IRBuilder,
    operands: tuple[Any, Any, Any],
    arrays: list[Any],
    lengths: tuple[ir.Value, ir.Value, ir.Value],
) -> None:
    """out[i, j] = sum over l of a[i, l] * b[l, j], element by element through strides."""
    rows, columns, inner = lengths
    dtype = operands[0].dtype
    multiply = context.get_function(operator.mul, signature(dtype, dtype, dtype))
    add = context.get_function(operator.add, signature(dtype, dtype, dtype))

    def element(position: int, indices: list[ir.Value]) -> ir.Value:
        return _element_pointer(context, builder, arrays[position], operands[position], indices)

    total = cgutils.alloca_once(builder, context.get_data_type(dtype))
    with cgutils.for_range(builder, rows) as row:
        with cgutils.for_range(builder, columns) as column:
            builder.store(context.get_constant_generic(builder, dtype, 0), total)
            with cgutils.for_range(builder, inner) as step:
                left = builder.load(element(0, [row.index, step.index]))
                right = builder.load(element(1, [step.index, column.index]))
                product = multiply(builder, (left, right))
                builder.store(add(builder, (builder.load(total), product)), total)
            builder.store(builder.load(total), element(2, [row.index, column.index]))
