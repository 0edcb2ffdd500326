"""Matrix products in compiled code: a numba intrinsic that calls BLAS `?gemm` directly.

Why not `np.dot`: numba's `np.dot` costs about 0.6 s of compile time per distinct
signature (its overload is typed and compiled like user code), and its first use imports
`scipy.linalg` (0.2 s). Here a product is one intrinsic whose lowering is a single call
to SciPy's Fortran BLAS (the `cython_blas` function pointers numba also uses), reached by
symbol name so that numba's on-disk cache stays valid across processes.

`cython_blas` is loaded straight from its extension file, without running
`scipy/linalg/__init__.py`: the routines need nothing from the package, and skipping it
saves 0.2 s in every process that loads a compiled graph. Cython hands later ordinary
imports the same module object.
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

from llvmlite import binding, ir
from numba.core import cgutils, types
from numba.extending import intrinsic

_KINDS = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def _cython_blas() -> ModuleType:
    """`scipy.linalg.cython_blas`, loaded without importing `scipy.linalg`."""
    spec = importlib.util.find_spec("scipy")
    if spec is None or spec.origin is None:
        raise ImportError("fgraph's matrix products need SciPy's BLAS (pip install scipy)")
    folder = Path(spec.origin).parent / "linalg"
    name = "scipy.linalg.cython_blas"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = folder / f"cython_blas{suffix}"
        if path.exists():
            loader = importlib.machinery.ExtensionFileLoader(name, str(path))
            module_spec = importlib.util.spec_from_file_location(name, path, loader=loader)
            if module_spec is not None:
                module = importlib.util.module_from_spec(module_spec)
                loader.exec_module(module)
                return module
    return importlib.import_module(name)


def _register_symbols() -> None:
    """Make `fgraph_<kind>gemm` resolvable by numba's JIT linker in this process."""
    capsules = _cython_blas().__pyx_capi__
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    for kind in _KINDS.values():
        capsule = capsules[f"{kind}gemm"]
        address = get_pointer(capsule, get_name(capsule))
        binding.add_symbol(f"fgraph_{kind}gemm", address)


_register_symbols()

_VOID_P = ir.IntType(8).as_pointer()
_INT = ir.IntType(32)


def _blas_layout(array: Any) -> bool:
    return isinstance(array, types.Array) and array.ndim == 2 and array.layout in ("C", "F")


@intrinsic
def gemm_into(typingctx: object, a: Any, b: Any, out: Any) -> Any:
    """`out[...] = a @ b` for 2-d arrays of one BLAS dtype; `a` and `b` C- or
    Fortran-ordered (a transposed matrix is passed as it is), `out` C-ordered and of shape
    (rows of a, columns of b). Lengths must fit BLAS's 32-bit integers."""
    operands = (a, b, out)
    if not all(_blas_layout(array) for array in operands) or out.layout != "C":
        return None
    if len({array.dtype for array in operands}) != 1 or str(a.dtype) not in _KINDS:
        return None
    kind = _KINDS[str(a.dtype)]

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> Any:
        arrays = [context.make_array(t)(context, builder, v) for t, v in zip(operands, args)]
        rows, inner = cgutils.unpack_tuple(builder, arrays[0].shape, 2)
        columns = cgutils.unpack_tuple(builder, arrays[1].shape, 2)[1]
        one = ir.Constant(rows.type, 1)

        def at_least_one(length: ir.Value) -> ir.Value:
            return builder.select(builder.icmp_signed(">", length, one), length, one)

        def slot(value: ir.Value) -> ir.Value:
            return builder.bitcast(cgutils.alloca_once_value(builder, value), _VOID_P)

        def count(length: ir.Value) -> ir.Value:
            return slot(builder.trunc(length, _INT))

        def flag(letter: str) -> ir.Value:
            return slot(ir.Constant(ir.IntType(8), ord(letter)))

        # Row-major C = A B is column-major C^T = B^T A^T: a C-ordered operand read in
        # column-major order is already its transpose; a Fortran-ordered one is not.
        (a_order, b_order) = (a.layout, b.layout)
        a_lead = inner if a_order == "C" else rows
        b_lead = columns if b_order == "C" else inner
        data = [builder.bitcast(array.data, _VOID_P) for array in arrays]
        dtype = a.dtype
        function_type = ir.FunctionType(ir.VoidType(), [_VOID_P] * 13)
        gemm = cgutils.get_or_insert_function(builder.module, function_type, f"fgraph_{kind}gemm")
        zero = ir.Constant(rows.type, 0)
        empty = builder.or_(
            builder.icmp_signed("==", rows, zero), builder.icmp_signed("==", columns, zero)
        )
        with builder.if_then(builder.not_(empty)):
            builder.call(
                gemm,
                [
                    flag("N" if b_order == "C" else "T"),
                    flag("N" if a_order == "C" else "T"),
                    count(columns),
                    count(rows),
                    count(inner),
                    slot(context.get_constant_generic(builder, dtype, 1)),
                    data[1],
                    count(at_least_one(b_lead)),
                    data[0],
                    count(at_least_one(a_lead)),
                    slot(context.get_constant_generic(builder, dtype, 0)),
                    data[2],
                    count(at_least_one(columns)),
                ],
            )
        return context.get_dummy_value()

    return types.void(a, b, out), codegen
