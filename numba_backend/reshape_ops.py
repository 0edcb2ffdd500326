"""Kernels of `ops.reshape_ops` (`Reshape`, `SpecifyShape`): inlined NumPy calls numba
supports, the target shape a tuple (`numba_backend.shape_vector.shape_tuple`)."""

from __future__ import annotations

import numpy as np

from numba_backend.registry import ModuleBuilder, NodeInfo, no_input, numba_kernel, only_input, scalar_kernel
from numba_backend.shape_vector import shape_tuple
from ops.reshape_ops import Reshape, SpecifyShape


@numba_kernel.register
@scalar_kernel(reads=no_input, makes=False, vectors=only_input(1))
def _reshape(op: Reshape, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """NumPy reshapes views where it can; `reshaped` views a C-contiguous array and
    copies any other (say a transpose) in C order."""
    source, target = node.inputs
    static = node.output_types[0].shape
    if all(length is not None for length in static):
        return _reshape_to_static(node, tuple(length for length in static if length is not None))
    lines: list[str] = []
    negative = [f"{target}[{k}] < -1" for k, length in enumerate(op.target) if length is None]
    if negative:  # numba would take any negative entry for -1
        lines += [
            f"if {' or '.join(negative)}:",
            "    raise ValueError('Reshape: shape entries must be non-negative or -1')",
        ]
    shape = shape_tuple(target, op.target)
    p = node.prefix
    entries = [f"{target}[{k}]" if n is None else str(n) for k, n in enumerate(op.target)]
    lines += [f"{p}known = 1", f"{p}free = 0"]
    for entry in entries:
        lines += [f"if {entry} == -1:", f"    {p}free += 1", "else:", f"    {p}known *= {entry}"]
    lines += [
        f"if {p}free > 1:",
        "    raise ValueError('Reshape: can only specify one unknown dimension')",
        f"if ({p}free == 0 and {p}known != {source}.size) or ({p}free == 1 and "
        f"({p}known == 0 or {source}.size % {p}known != 0)):",
        f"    raise ValueError('cannot reshape {node.label(0)}, of {{}} elements, into shape "
        f"{{}}', {source}.size, {shape})",
        f"{node.outputs[0]} = reshaped({source}, {shape})",
    ]
    return lines


def _reshape_to_static(node: NodeInfo, shape: tuple[int, ...]) -> list[str]:
    """A result of static shape: its lengths are the target's (the shape vector was
    folded into the type, or the type says what -1 stands for), so the target is a
    literal and the only check left is the source's size, where that is not static: the
    entries' checks were blocks and merges numba compiled for every reshape (the 200-d
    Gaussian's gradient flattens and unflattens a matrix)."""
    source = node.inputs[0]
    size = int(np.prod(shape))
    literal = "(" + "".join(f"{length}, " for length in shape) + ")"
    lines: list[str] = []
    if None in node.input_types[0].shape:
        lines += [
            f"if {source}.size != {size}:",
            f"    raise ValueError('cannot reshape {node.label(0)}, of {{}} elements, into shape "
            f"{shape}', {source}.size)",
        ]
    return [*lines, f"{node.outputs[0]} = reshaped({source}, {literal})"]


@numba_kernel.register
@scalar_kernel(reads=no_input, makes=False, vectors=only_input(1))
def _specify_shape(op: SpecifyShape, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """One check for all axes (each raise adds to numba's compile time)."""
    source, expected = node.inputs
    mismatches: list[str] = []
    for k, length in enumerate(op.shape):
        if length is None:  # entries -1 are not checked
            want = f"{expected}[{k}]"
            mismatches.append(f"({want} >= 0 and {want} != {source}.shape[{k}])")
        else:
            mismatches.append(f"{source}.shape[{k}] != {length}")
    lines = [
        f"if {' or '.join(mismatches)}:",
        "    raise ValueError('SpecifyShape: the shape differs from the one specified')",
    ] if mismatches else []
    return [*lines, f"{node.outputs[0]} = {source}"]
