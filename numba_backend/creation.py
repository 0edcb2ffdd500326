"""Creation ops (`Alloc`, `AllocEmpty`, `ARange`, `Eye`) as fresh arrays.

Shapes arrive as int64 vectors or tuples and become tuples
(`numba_backend.shape_vector.shape_tuple`); scalar inputs are read through `NodeInfo.scalar`
(plain scalars where the block holds them so).
"""

from __future__ import annotations

from fgraph.dtypes import is_bool, is_inexact, is_integer
from fgraph.types import Shape as StaticShape
from numba_backend.registry import (
    Allocation,
    ModuleBuilder,
    NodeInfo,
    dtype_expression,
    no_input,
    numba_kernel,
    only_input,
    scalar_kernel,
)
from numba_backend.loops import element_assignment, fresh_copy
from numba_backend.shape_vector import shape_tuple
from ops.creation import Alloc, AllocEmpty, ARange, Eye


@numba_kernel.register
@scalar_kernel(reads=only_input(0), makes=False, vectors=only_input(1))
def _alloc(op: Alloc, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """A 0-d value (a fill, as in `zeros`) is written into a fresh array element by
    element, with no broadcasting overload for numba to compile; so is an array value
    whose broadcast its static shape decides (an `Allocation`: a loop body reuses it)."""
    value, target = node.inputs
    shape = shape_tuple(target, op.shape)
    (output,) = node.outputs
    rank = len(op.shape)
    value_shape = node.input_types[0].shape
    if value_shape:
        if not _fits_statically(value_shape, op.shape):
            stretched = f"{node.prefix}b"
            return [f"{stretched} = broadcast_view({value}, {shape})",
                    *fresh_copy(output, stretched, node.output_types[0], f"{node.prefix}j")]
        return [Allocation(output, shape, node.output_types[0].dtype),
                *element_assignment(output, value, output, rank, f"{node.prefix}j",
                                    source_shape=value_shape)]
    if rank == 0:
        return [f"{output} = new_array((), {dtype_expression(node.output_types[0].dtype)})",
                f"{output}[()] = {node.scalar(0)}"]
    fill = f"{node.prefix}v"
    return [f"{fill} = {node.scalar(0)}", Allocation(output, shape, node.output_types[0].dtype),
            *element_assignment(output, fill, output, rank, f"{node.prefix}j", source_shape=())]


def _fits_statically(value: StaticShape, target: StaticShape) -> bool:
    """Whether a value of static shape `value` broadcasts to `target` by its types alone
    (each axis of static length 1, or of the target's static length): then element
    loops read it with no check, where a length known only at run time could be a 1
    that NumPy broadcasts."""
    aligned = target[len(target) - len(value) :]
    return all(n == 1 or (n is not None and n == m) for n, m in zip(value, aligned))


@numba_kernel.register
@scalar_kernel(reads=no_input, makes=False, vectors=only_input(0))
def _alloc_empty(op: AllocEmpty, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    (target,) = node.inputs
    shape = shape_tuple(target, op.shape)
    return [Allocation(node.outputs[0], shape, op.dtype)]


@numba_kernel.register
@scalar_kernel()
def _arange(op: ARange, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """NumPy's arange exactly: the length from float division, the first two values
    computed in the inputs' widest type and cast, the rest as first + i * (second -
    first) in the output dtype (so float arguments with an integer dtype count as
    NumPy's do: arange(0.5, 3, 0.7, dtype=int) is [0, 1, 2, 3])."""
    wide = "np.float64" if is_inexact(node.input_types[0].dtype) else "np.int64"
    start, stop, step = (f"{wide}({node.scalar(k)})" for k in range(3))
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
        Allocation(output, f"({count}, )", op.dtype),
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
@scalar_kernel(reads=only_input(1), vectors=only_input(0))
def _eye(op: Eye, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    target = node.inputs[0]
    rows, columns = (f"{target}[{k}]" if n is None else str(n) for k, n in enumerate(op.shape))
    p = node.prefix
    return [
        f"if {rows} < 0 or {columns} < 0:",
        "    raise ValueError('Eye: shape entries must be non-negative')",
        Allocation(node.outputs[0], f"({rows}, {columns})", op.dtype),
        f"for {p}i in range({rows}):",  # numba's np.eye is an overload compiled per process
        f"    for {p}j in range({columns}):",
        f"        {node.outputs[0]}[{p}i, {p}j] = 1 if {p}j - {p}i == {node.scalar(1)} else 0",
    ]
