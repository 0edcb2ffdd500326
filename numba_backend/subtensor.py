"""Basic indexing: `Subtensor` as a numba view, `IncSubtensor` as a copy updated by loops
(or, when the inplace rewrite marked it, as its input's buffer updated in place).

Updates write through explicit loops over a view of the region rather than a slice
assignment, which numba compiles about ten times slower. Symbolic integer indices are
bounds-checked (numba does not check them); slices clip as in NumPy. Both kernels read
symbolic indices as scalars, and a 0-d read is a plain scalar where the block holds one
(`registry.scalar_kernel`).
"""

from __future__ import annotations

from collections.abc import Iterator

from fgraph import TensorType
from numba_backend.loops import element_assignment, fresh_copy
from numba_backend.registry import (
    ModuleBuilder, NodeInfo, inputs_from, numba_kernel, scalar_kernel,
)
from ops.indexing import Entry, IndexUpdate, NewAxis, Slice, Symbolic
from ops.subtensor import IncSubtensor, Subtensor


def basic_index(
    source: str, entries: tuple[Entry, ...], values: tuple[str, ...],
    static: tuple[int | None, ...], label: str = "the indexed array",
) -> tuple[list[str], str]:
    """Bounds checks and the index expression `[...]` of `source[entries]`, where
    `values` are the node's index inputs as scalar expressions (`NodeInfo.scalar`),
    `static` is the source's static shape and `label` how errors name the source."""
    remaining: Iterator[str] = iter(values)
    checks: list[str] = []
    parts: list[str] = []
    axis = 0
    for entry in entries:
        if isinstance(entry, NewAxis):
            parts.append("None")
            continue
        if isinstance(entry, Slice):
            bounds = (
                "" if part is None else next(remaining) if isinstance(part, Symbolic)
                else str(part)
                for part in entry.parts
            )
            parts.append(":".join(bounds))
        else:
            index = next(remaining) if isinstance(entry, Symbolic) else str(entry)
            if isinstance(entry, Symbolic) or static[axis] is None:
                length = f"{source}.shape[{axis}]"
                checks += [
                    f"if not -{length} <= {index} < {length}:",
                    f"    raise IndexError('index {{}} is out of bounds for axis {axis} of "
                    f"{label} with length {{}}', {index}, {length})",
                ]
            parts.append(index)
        axis += 1
    # One entry is written without a trailing comma: `x[1:]`, not `x[1:,]`, whose tuple
    # index numba's parallel (parfor) lowering cannot cast.
    return checks, "[" + ", ".join(parts) + "]"


def _index_values(node: NodeInfo, first: int) -> tuple[str, ...]:
    """The node's index inputs (from input `first` on) as scalar expressions."""
    return tuple(node.scalar(k) for k in range(first, len(node.inputs)))


@numba_kernel.register
@scalar_kernel(reads=inputs_from(1))
def _subtensor(op: Subtensor, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """A view; a 0-d result is a scalar read (a fresh 0-d array unless the block holds
    it as a scalar)."""
    source = node.inputs[0]
    (output,) = node.outputs
    if not op.idx_list:
        return node.assign_scalar(0, f"{source}[()]") if node.makes_scalar(0) else [
            f"{output} = {source}"]
    static = node.input_types[0].shape
    values = _index_values(node, 1)
    checks, index = basic_index(source, op.idx_list, values, static, node.label(0))
    if node.output_types[0].ndim:
        view = f"{source}{index}"
        if _keeps_memory_order(op.idx_list, static):
            view = f"with_layout_of({view}, {source})"
        return [*checks, f"{output} = {view}"]
    return [*checks, *node.assign_scalar(0, f"{source}{index}")]


def _keeps_memory_order(entries: tuple[Entry, ...], static: tuple[int | None, ...]) -> bool:
    """Whether the view only drops axes of static length 1, inserts new axes and keeps
    every other axis whole: then it is C (Fortran) ordered when its source is, which
    numba does not see (it types such views as arbitrarily strided)."""
    axis = 0
    for entry in entries:
        if isinstance(entry, NewAxis):
            continue
        whole = isinstance(entry, Slice) and entry.parts == (None, None, None)
        dropped_unit = isinstance(entry, int) and static[axis] == 1
        if not (whole or dropped_unit):
            return False
        axis += 1
    return True


def update_broadcast_check(
    op: IndexUpdate, node: NodeInfo, value: str, region_shape: str, region_rank: int
) -> list[str]:
    """Lines refusing, as `IndexUpdate.check_values` does, a value whose length differs
    from the region's along an axis whose static length is not 1 (numpy's broadcast
    would stretch a run-time length of 1 there), unless both lengths are static."""
    value_type = node.input_types[1]
    region = op.indexed_shape(node.input_types[0], node.input_types[2:])
    lead = region_rank - value_type.ndim
    mismatches = [
        f"{value}.shape[{axis}] != {region_shape}[{lead + axis}]"
        for axis, static in enumerate(value_type.shape)
        if static != 1 and (static is None or region[lead + axis] != static)
    ]
    if not mismatches:
        return []
    message = (
        f"{op}: the value ({value_type}) differs in length from the indexed region along "
        "an axis (broadcasting needs a static length of 1)"
    )
    return [f"if {' or '.join(mismatches)}:", f"    raise ValueError({message!r})"]


@numba_kernel.register
@scalar_kernel(reads=inputs_from(1))
def _inc_subtensor(op: IncSubtensor, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """The value is read as it broadcasts against the region (checked as
    `IndexUpdate.check_values` does): along its static length-1 axes at 0, a 0-d value
    as a scalar, written into every element."""
    source, value = node.inputs[:2]
    (output,) = node.outputs
    prefix = node.prefix
    checks, index = basic_index(
        source, op.idx_list, _index_values(node, 2), node.input_types[0].shape, node.label(0)
    )
    assign = "=" if op.set_instead_of_inc else "+="
    copied = fresh_copy(output, source, node.input_types[0], f"{prefix}c")
    lines = [*checks, *([f"{output} = {source}"] if op.destroy_map else copied)]
    entries = op.idx_list
    rank = node.input_types[0].ndim + sum(
        isinstance(entry, NewAxis) - isinstance(entry, (int, Symbolic)) for entry in entries
    )
    if rank == 0:
        return [*lines, f"{output}{index if op.idx_list else '[()]'} {assign} {node.scalar(1)}"]
    region = f"{prefix}r"
    lines.append(f"{region} = {output}{index}" if op.idx_list else f"{region} = {output}")
    value_type = node.input_types[1]
    source = node.scalar(1) if not value_type.ndim else value
    lines += update_broadcast_check(op, node, value, f"{region}.shape", rank)
    return [*lines, *element_assignment(
        region, source, region, rank, f"{prefix}j", assign, source_shape=value_type.shape)]
