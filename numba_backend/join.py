"""`Concatenate` and `Split` along an axis."""

from __future__ import annotations

from numba_backend.loops import element_assignment, fresh_copy
from numba_backend.registry import Allocation, ModuleBuilder, NodeInfo, numba_kernel
from ops.join import Concatenate, Split


@numba_kernel.register
def _concatenate(op: Concatenate, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """An allocation and, per piece, element loops into its slice of the result (cast to
    the result's dtype on the way), after checking the other axes' lengths as NumPy
    does: numba's `np.concatenate` is an overload compiled in every process for every
    tuple of piece types (0.1 s each), and optimized again in each function using it."""
    output, output_type = node.outputs[0], node.output_types[0]
    first, prefix, rank = node.inputs[0], node.prefix, output_type.ndim
    lines: list[str] = []
    for k, (piece, piece_type) in enumerate(zip(node.inputs, node.input_types)):
        for axis in range(rank):
            static = (piece_type.shape[axis], node.input_types[0].shape[axis])
            if k == 0 or axis == op.axis or None not in static:
                continue  # static lengths were checked when the graph was built
            lines += [
                f"if {piece}.shape[{axis}] != {first}.shape[{axis}]:",
                f"    raise ValueError('Concatenate along axis {op.axis}: {node.label(k)} differs in length from "
                f"{node.label(0)} along axis {axis}: {{}} and {{}}', "
                f"{piece}.shape[{axis}], {first}.shape[{axis}])",
            ]
    joined = " + ".join(f"{piece}.shape[{op.axis}]" for piece in node.inputs)
    shape = "".join(f"{joined if axis == op.axis else f'{first}.shape[{axis}]'}, "
                    for axis in range(rank))
    lines += [Allocation(output, f"({shape})", output_type.dtype), f"{prefix}o = 0"]
    leading = ":, " * op.axis
    for k, piece in enumerate(node.inputs):
        part = f"{prefix}part{k}"
        length = f"{piece}.shape[{op.axis}]"
        lines += [
            f"{part} = {output}[{leading}{prefix}o:{prefix}o + {length}]",
            *element_assignment(part, piece, piece, rank, f"{prefix}c{k}_"),
            f"{prefix}o += {length}",
        ]
    return lines


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
