"""`MatMul` as a loop over the broadcast batch axes around one matrix product per batch.

Float and complex products of static shapes with at most `blas.SMALL_PRODUCT`
multiply-adds are written out inline (`blas.small_matmul_into`). Other float and complex
products call BLAS (`?gemm`, or `?gemv` when one side has length 1) through
`blas.matmul_into`, one call per batch, on operands cast to the output dtype;
BLAS reads them in place whatever their strides allow (a transposed `X.T` in a
gradient, a column `w[:, None]`). Integer and bool products have no BLAS routine in
numba, so they are written as explicit triple loops (integer sums wrap to the output
dtype as NumPy's do).
"""

from __future__ import annotations

import math

from fgraph.dtypes import is_bool, is_complex, is_float
from numba_backend.blas import SMALL_PRODUCT
from numba_backend.registry import (
    Allocation, ModuleBuilder, NodeInfo, dtype_expression, numba_kernel, unequal,
)
from ops.matmul_op import MatMul


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
    # One raise for all checks that can fail: each raise adds noticeably to numba's
    # compile time.
    pairs = [(node.length(0, batch_rank + 1), node.length(1, batch_rank))]
    lengths: list[str] = []
    for axis in range(batch_rank):
        sources = [k for k, t in enumerate((x_type, y_type)) if t.shape[axis] != 1]
        lengths.append(node.length(sources[0], axis) if sources else "1")
        if len(sources) == 2:
            pairs.append((node.length(1, axis), lengths[-1]))
    lines: list[str] = []
    if mismatches := unequal(pairs):
        lines += [
            f"if {' or '.join(mismatches)}:",
            f"    raise ValueError('MatMul of {node.label(0)} and {node.label(1)}: the "
            "contracted axes differ in length, or the batch axes do not match (broadcasting "
            f"needs a static length of 1); the shapes are {{}} and {{}}', {x}.shape, {y}.shape)",
        ]
    if blas:  # BLAS takes operands of the output dtype
        if x_type.dtype != output_type.dtype:
            lines.append(f"{prefix}a = {x}.astype({dtype})")
            x = f"{prefix}a"
        if y_type.dtype != output_type.dtype:
            lines.append(f"{prefix}b = {y}.astype({dtype})")
            y = f"{prefix}b"
    shape = ", ".join([*lengths, node.length(0, batch_rank), node.length(1, batch_rank + 1)])
    lines.append(Allocation(output, f"({shape})", output_type.dtype))
    core = (*x_type.shape[batch_rank:], y_type.shape[-1])
    static = [length for length in core if length is not None]
    if blas and len(static) == len(core) and math.prod(static) <= SMALL_PRODUCT:
        sizes = ", ".join(str(length) for length in static)  # stacks too: one call
        return [*lines, f"small_matmul_into({x}, {y}, {output}, {sizes})"]
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
        return [*lines, f"{indent}matmul_into({', '.join(operands)})"]
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

