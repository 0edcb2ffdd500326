"""Kernels of `ops.shape_vector` (`Shape`, `ShapeI`, `MakeVector`), and the shape tuples
the kernels of reshapes, broadcasts and allocations write.

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
    scalar_kernel,
)
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
    lines: list[str] = [Allocation(output, tuple_expression([str(len(values))]), "int64")]
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
