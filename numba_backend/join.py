"""`Concatenate` and `Split` along an axis."""

from __future__ import annotations

from numba_backend.loops import fresh_copy
from numba_backend.registry import ModuleBuilder, NodeInfo, dtype_expression, numba_kernel
from numba_backend.shape_vector import tuple_expression
from ops.join import Concatenate, Split


@numba_kernel.register
def _concatenate(op: Concatenate, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """numba joins arrays of one dtype only, so other pieces are cast to the result's."""
    output_dtype = node.output_types[0].dtype
    pieces = [
        name if piece.dtype == output_dtype else f"{name}.astype({dtype_expression(output_dtype)})"
        for name, piece in zip(node.inputs, node.input_types)
    ]
    joined = f"np.concatenate({tuple_expression(pieces)}, axis={op.axis})"
    return [f"{node.outputs[0]} = {joined}"]


@numba_kernel.register
def _split(op: Split, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """Consecutive pieces along the axis, after checking the lengths add up. Copies, not
    views: `Split` declares no `view_map`, so the inplace rewrite may overwrite them."""
    source, sizes = node.inputs
    prefix = node.prefix
    lengths = [f"{sizes}[{k}]" if n is None else str(n) for k, n in enumerate(op.sizes)]
    lines = [
        f"if {' or '.join(f'{length} < 0' for length in lengths)} or "
        f"{' + '.join(lengths)} != {source}.shape[{op.axis}]:",
        f"    raise ValueError('Split: the pieces do not add up to the length of axis {op.axis}')",
        f"{prefix}o = 0",
    ]
    leading = ":, " * op.axis
    for k, (output, length, output_type) in enumerate(zip(node.outputs, lengths, node.output_types)):
        piece = f"{prefix}piece{k}"
        lines += [
            f"{piece} = {source}[{leading}{prefix}o:{prefix}o + {length}]",
            *fresh_copy(output, piece, output_type, f"{prefix}c{k}_"),
            f"{prefix}o += {length}",
        ]
    return lines
