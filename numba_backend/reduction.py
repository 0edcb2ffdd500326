"""Reductions as explicit accumulation loops (exact NumPy output dtypes, no temporaries)."""

from __future__ import annotations

from numba_backend.registry import ModuleBuilder, NodeInfo, dtype_expression, numba_kernel
from ops.reduction import Sum


@numba_kernel.register
def _sum(op: Sum, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    (input_type,) = node.input_types
    (output_type,) = node.output_types
    rank = input_type.ndim
    (source,) = node.inputs
    (output,) = node.outputs
    prefix = node.prefix
    kept = [axis for axis in range(rank) if axis not in op.axes]
    dtype = dtype_expression(output_type.dtype)
    shape = "(" + "".join(f"{source}.shape[{axis}], " for axis in kept) + ")"
    lines = [f"{output} = np.zeros({shape}, dtype={dtype})"]
    indent = ""
    for axis in range(rank):
        lines.append(f"{indent}for {prefix}j{axis} in range({source}.shape[{axis}]):")
        indent += "    "
    read = ", ".join(f"{prefix}j{axis}" for axis in range(rank)) if rank else "()"
    target = ", ".join(f"{prefix}j{axis}" for axis in kept) if kept else "()"
    lines.append(f"{indent}{output}[{target}] += {source}[{read}]")
    return lines
