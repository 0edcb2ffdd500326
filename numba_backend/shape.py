"""Shape vectors, reshapes and broadcasts as inlined NumPy calls numba supports.

Shapes arrive as int64 vector variables, or as tuples where the block holds them so
(`registry.scalar_kernel`: `Shape` and `MakeVector` make tuples for the kernels that
only subscript them); numba wants tuples, so a target of static rank r becomes
`(s[0], ..., s[r-1])`, with the lengths known when the graph was built written as
literals. Lengths (`ShapeI`) are plain integers where the block holds them as scalars.
"""

from __future__ import annotations

from collections.abc import Iterable

from fgraph.types import Shape as StaticShape
from numba_backend.registry import (
    Allocation,
    ModuleBuilder,
    NodeInfo,
    no_input,
    numba_kernel,
    only_input,
    scalar_kernel,
)
from ops.broadcast import BroadcastTo
from ops.reshape import Reshape, SpecifyShape
from ops.shape_vector import MakeVector, Shape, ShapeI


def shape_tuple(vector: str, static: StaticShape) -> str:
    """A tuple expression for a shape: literals where `static` knows the length, else the
    entry of the int64 vector variable `vector`."""
    entries = (f"{vector}[{k}]" if n is None else str(n) for k, n in enumerate(static))
    return tuple_expression(entries)


def tuple_expression(entries: Iterable[str]) -> str:
    """`(a, b, )`: a tuple literal, also of length 0 and 1."""
    return "(" + "".join(f"{entry}, " for entry in entries) + ")"


def _vector(output: str, values: list[str]) -> list[str]:
    """Lines filling `output` with an int64 vector of `values`."""
    lines: list[str] = [Allocation(output, str(len(values)), "int64")]
    lines.extend(f"{output}[{k}] = {value}" for k, value in enumerate(values))
    return lines


@numba_kernel.register
@scalar_kernel(reads=no_input, makes_vectors=True)
def _shape(op: Shape, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    (source,) = node.inputs
    if node.makes_scalar(0):
        return [f"{node.outputs[0]} = {source}.shape"]
    rank = node.input_types[0].ndim
    return _vector(node.outputs[0], [f"{source}.shape[{k}]" for k in range(rank)])


@numba_kernel.register
@scalar_kernel()
def _shape_i(op: ShapeI, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    return node.assign_scalar(0, f"{node.inputs[0]}.shape[{op.axis}]")


@numba_kernel.register
@scalar_kernel(makes_vectors=True)
def _make_vector(op: MakeVector, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    entries = [node.scalar(k) for k in range(len(node.inputs))]
    if node.makes_scalar(0):
        return [f"{node.outputs[0]} = {tuple_expression(entries)}"]
    return _vector(node.outputs[0], entries)


@numba_kernel.register
@scalar_kernel(reads=no_input, makes=False, vectors=only_input(1))
def _reshape(op: Reshape, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """NumPy reshapes views where it can; numba only reshapes contiguous arrays, so a
    view (say a transpose) is copied first."""
    source, target = node.inputs
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
        f"if ({p}free == 0 and {p}known != {source}.size) or ({p}free == 1 and "
        f"({p}known == 0 or {source}.size % {p}known != 0)):",
        f"    raise ValueError('cannot reshape {node.label(0)}, of {{}} elements, into shape "
        f"{{}}', {source}.size, {shape})",
        f"{node.outputs[0]} = np.ascontiguousarray({source}).reshape({shape})",
    ]
    return lines


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


@numba_kernel.register
@scalar_kernel(reads=no_input, makes=False, vectors=only_input(1))
def _broadcast_to(op: BroadcastTo, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """A read-only view, as in NumPy (`function` copies it if it is returned)."""
    source, target = node.inputs
    return [f"{node.outputs[0]} = np.broadcast_to({source}, {shape_tuple(target, op.shape)})"]
