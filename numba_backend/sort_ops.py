"""`Sort`, `Argsort` (along the last axis, stable) and `SearchSorted` as explicit loops
over the rows: numba sorts one contiguous row at a time (`kind="mergesort"` is its
stable sort, matching NumPy's `kind="stable"` on ties), and results are copied element
by element (an array assigned into a slice costs seconds of numba compile time)."""

from __future__ import annotations

from numba_backend.registry import (
    Allocation,
    ModuleBuilder,
    NodeInfo,
    numba_kernel,
    scalar_kernel,
)
from ops.sort_ops import Argsort, SearchSorted, Sort


def _rows(node: NodeInfo, sort: str) -> list[str]:
    (x,), (out,) = node.inputs, node.outputs
    p = node.prefix
    rank = node.input_types[0].ndim
    lead = " * ".join(f"{x}.shape[{axis}]" for axis in range(rank - 1)) or "1"
    return [
        f"{p}n = {x}.shape[{rank - 1}]",
        f"{p}rows = {lead}",
        f"{p}flat = reshaped({x}, ({p}rows, {p}n))",
        Allocation(out, f"{x}.shape", node.output_types[0].dtype),
        f"{p}result = reshaped({out}, ({p}rows, {p}n))",
        f"for {p}r in range({p}rows):",
        f"    {p}sorted = {sort.format(f'{p}flat[{p}r]')}",
        f"    for {p}j in range({p}n):",
        f"        {p}result[{p}r, {p}j] = {p}sorted[{p}j]",
    ]


@numba_kernel.register
def _sort(op: Sort, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    return _rows(node, "np.sort({})")


@numba_kernel.register
def _argsort(op: Argsort, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    return _rows(node, "np.argsort({}, kind='mergesort')")


@numba_kernel.register
@scalar_kernel()
def _searchsorted(op: SearchSorted, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    (array, values), (out,) = node.inputs, node.outputs
    p = node.prefix
    rank = node.input_types[1].ndim
    if rank == 0:
        return node.assign_scalar(
            0, f"np.searchsorted({array}, {node.scalar(1)}, side='{op.side}')")
    return [
        f"{p}flat = reshaped({values}, (-1,))",
        f"{p}found = np.searchsorted({array}, {p}flat, side='{op.side}')",
        Allocation(out, f"{values}.shape", "int64"),
        f"{p}result = reshaped({out}, ({p}flat.shape[0],))",
        f"for {p}j in range({p}flat.shape[0]):",
        f"    {p}result[{p}j] = {p}found[{p}j]",
    ]
