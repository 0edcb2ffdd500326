"""Creation ops (`Alloc`, `AllocEmpty`, `ARange`, `Eye`) as fresh arrays.

Shapes arrive as int64 vectors and become tuples (`numba_backend.shape.shape_tuple`);
scalar inputs are 0-d arrays read with `[()]`.
"""

from __future__ import annotations

from fgraph.dtypes import is_bool, is_inexact, is_integer
from numba_backend.registry import (
    Allocation, ModuleBuilder, NodeInfo, dtype_expression, numba_kernel,
)
from numba_backend.shape import shape_tuple
from ops.creation import Alloc, AllocEmpty, ARange, Eye


@numba_kernel.register
def _alloc(op: Alloc, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    value, target = node.inputs
    shape = shape_tuple(target, op.shape)
    return [f"{node.outputs[0]} = np.copy(np.broadcast_to({value}, {shape}))"]


@numba_kernel.register
def _alloc_empty(op: AllocEmpty, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    (target,) = node.inputs
    shape = shape_tuple(target, op.shape)
    return [Allocation(node.outputs[0], shape, op.dtype)]


@numba_kernel.register
def _arange(op: ARange, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """NumPy's arange exactly: the length from float division, the first two values
    computed in the inputs' widest type and cast, the rest as first + i * (second -
    first) in the output dtype (so float arguments with an integer dtype count as
    NumPy's do: arange(0.5, 3, 0.7, dtype=int) is [0, 1, 2, 3])."""
    wide = "np.float64" if is_inexact(node.input_types[0].dtype) else "np.int64"
    start, stop, step = (f"{wide}({name}[()])" for name in node.inputs)
    (output,) = node.outputs
    prefix = node.prefix
    dtype = dtype_expression(op.dtype)
    count, index = f"{prefix}n", f"{prefix}i"
    # NumPy's fill loops multiply in the output type (integers in machine width).
    steps = index if is_integer(op.dtype) or is_bool(op.dtype) else f"{dtype}({index})"
    lines = [
        f"if {step} == 0:",
        "    raise ValueError('ARange: step must not be zero')",
        f"{count} = max(0, math.ceil((np.float64({stop}) - np.float64({start})) / "
        f"np.float64({step})))",
        Allocation(output, count, op.dtype),
        f"if {count} > 0:",
        f"    {output}[0] = {start}",
        f"if {count} > 1:",
        f"    {output}[1] = {start} + {step}",
        f"    {prefix}d = {output}[1] - {output}[0]",
        f"    for {index} in range(2, {count}):",
        f"        {output}[{index}] = {output}[0] + {steps} * {prefix}d",
    ]
    if op.length is not None:
        lines += [
            f"if {count} != {op.length}:",
            f"    raise ValueError('ARange: expected {op.length} values')",
        ]
    return lines


@numba_kernel.register
def _eye(op: Eye, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    target, diagonal = node.inputs
    rows, columns = (f"{target}[{k}]" if n is None else str(n) for k, n in enumerate(op.shape))
    dtype = dtype_expression(op.dtype)
    return [
        f"if {rows} < 0 or {columns} < 0:",
        "    raise ValueError('Eye: shape entries must be non-negative')",
        f"{node.outputs[0]} = np.eye({rows}, {columns}, {diagonal}[()], dtype={dtype})",
    ]
