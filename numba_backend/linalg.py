"""`MatMul` as a loop over the broadcast batch axes around one matrix product per batch.

Float and complex products call BLAS `?gemm` through `blas.gemm_into`, which takes
C- or Fortran-ordered operands of one dtype: operands are cast to the output dtype, and
`runtime.blas_operand` copies only those in neither order (a transposed matrix, say
`X.T` in a gradient, is passed to BLAS as it is). Batched operands are made C-ordered,
so that every batch slice is. Integer and bool products have no BLAS routine in numba, so they are
written as explicit triple loops (integer sums wrap to the output dtype as NumPy's do).
"""

from __future__ import annotations

from fgraph.dtypes import is_bool, is_complex, is_float
from numba_backend.registry import ModuleBuilder, NodeInfo, dtype_expression, numba_kernel
from ops.linalg import MatMul


@numba_kernel.register
def _matmul(op: MatMul, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    x, y = node.inputs
    x_type, y_type = node.input_types
    (output,) = node.outputs
    output_type = node.output_types[0]
    prefix = node.prefix
    dtype = dtype_expression(output_type.dtype)
    batch_rank = output_type.ndim - 2
    blas = is_float(output_type.dtype) or is_complex(output_type.dtype)
    # One raise for all checks: each raise adds noticeably to numba's compile time.
    mismatches = [f"{x}.shape[{batch_rank + 1}] != {y}.shape[{batch_rank}]"]
    lengths: list[str] = []
    for axis in range(batch_rank):
        sources = [name for name, t in ((x, x_type), (y, y_type)) if t.shape[axis] != 1]
        lengths.append(f"{sources[0]}.shape[{axis}]" if sources else "1")
        if len(sources) == 2:
            mismatches.append(f"{sources[1]}.shape[{axis}] != {lengths[-1]}")
    lines = [
        f"if {' or '.join(mismatches)}:",
        "    raise ValueError('MatMul: contracted axes differ in length, or batch axes do not "
        "match (broadcasting needs a static length of 1)')",
    ]
    if blas:
        lines += [
            f"{prefix}a = {_contiguous(x, x_type.dtype, output_type.dtype, batch_rank)}",
            f"{prefix}b = {_contiguous(y, y_type.dtype, output_type.dtype, batch_rank)}",
        ]
        x, y = f"{prefix}a", f"{prefix}b"
    shape = ", ".join([*lengths, f"{x}.shape[{batch_rank}]", f"{y}.shape[{batch_rank + 1}]"])
    lines.append(f"{output} = np.empty(({shape}), dtype={dtype})")
    indent = ""
    for axis in range(batch_rank):
        lines.append(f"{indent}for {prefix}j{axis} in range({lengths[axis]}):")
        indent += "    "
    x_batch = [("0" if x_type.shape[a] == 1 else f"{prefix}j{a}") for a in range(batch_rank)]
    y_batch = [("0" if y_type.shape[a] == 1 else f"{prefix}j{a}") for a in range(batch_rank)]
    out_batch = [f"{prefix}j{axis}" for axis in range(batch_rank)]
    if blas:
        operands = [x, y, output]
        if batch_rank:
            operands = [
                f"{name}[{', '.join(batch)}]"
                for name, batch in zip(operands, (x_batch, y_batch, out_batch))
            ]
        return [*lines, f"{indent}gemm_into({', '.join(operands)})"]
    row, column, inner, total = (f"{prefix}{name}" for name in ("r", "c", "k", "s"))
    left = f"{x}[{', '.join([*x_batch, row, inner])}]"
    right = f"{y}[{', '.join([*y_batch, inner, column])}]"
    if is_bool(output_type.dtype):
        zero, accumulate = "False", f"{total} = {total} | ({left} & {right})"
    else:
        zero, accumulate = f"{dtype}(0)", f"{total} += {dtype}({left}) * {dtype}({right})"
    lines += [
        f"{indent}for {row} in range({x}.shape[{batch_rank}]):",
        f"{indent}    for {column} in range({y}.shape[{batch_rank + 1}]):",
        f"{indent}        {total} = {zero}",
        f"{indent}        for {inner} in range({x}.shape[{batch_rank + 1}]):",
        f"{indent}            {accumulate}",
        f"{indent}        {output}[{', '.join([*out_batch, row, column])}] = {total}",
    ]
    return lines


def _contiguous(name: str, dtype: str, target: str, batch_rank: int) -> str:
    """`name` as an array of dtype `target` that BLAS can read, copied only if needed:
    C- or Fortran-ordered for a matrix, C-ordered for a batch of matrices."""
    if dtype != target:
        return f"np.ascontiguousarray({name}).astype({dtype_expression(target)})"
    return f"np.ascontiguousarray({name})" if batch_rank else f"blas_operand({name})"
