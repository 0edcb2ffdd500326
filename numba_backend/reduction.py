"""Reductions, arg-reductions and running scans as explicit loops, inlined into the entry
function: exact NumPy output dtypes, accumulation in the output dtype, no temporaries.

A reduction whose reduced axes are the trailing ones (a full reduction included)
accumulates each output element in local scalars, never in the output array: a float
sum or product in one accumulator whose update LLVM may reassociate (so it vectorizes,
see `intrinsics`), other reductions in several accumulators over the contiguous inner
loop, so they run in parallel. Other
reductions walk the input once in C order, updating the output in place, so reducing
the leading axis of a large matrix does not stride through memory. `Max` and `Min`
start from each group's first element (they have no identity), after checking at run
time that no reduced axis is empty, as NumPy does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from numba_backend.registry import (
    Allocation, ModuleBuilder, NodeInfo, dtype_expression, numba_kernel, scalar_kernel,
)
from ops.reduction import (
    AllTrue,
    AnyTrue,
    ArgExtremum,
    Argmax,
    Cumulative,
    CumSum,
    Max,
    Min,
    Prod,
    Reduction,
    Sum,
)


def _index(names: Sequence[str]) -> str:
    """The subscript selecting one element: `a, b`, or `()` for a 0-d array."""
    return ", ".join(names) if names else "()"


def _loops(prefix: str, source: str, axes: Sequence[int], indent: str) -> tuple[list[str], str]:
    """`for` headers over `axes` of `source` (in the given order), and the indentation of
    their body."""
    lines: list[str] = []
    for axis in axes:
        lines.append(f"{indent}for {prefix}j{axis} in range({source}.shape[{axis}]):")
        indent += "    "
    return lines, indent


def _empty_axis_checks(
    op: object, source: str, axes: Sequence[int], static: tuple[int | None, ...]
) -> list[str]:
    """Raise NumPy's ValueError when a reduced axis is empty (no identity to return);
    not generated for an axis of a static non-zero length (a raise in a loop body of
    static shapes is a costly exit to compile for nothing)."""
    lines: list[str] = []
    for axis in axes:
        if static[axis]:
            continue
        message = f"{op}: axis {axis} of the input is empty"
        lines += [f"if {source}.shape[{axis}] == 0:", f"    raise ValueError({message!r})"]
    return lines


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "complex"))


def _beats(value: str, best: str, greater: str, dtype: str) -> str:
    """`value greater best`; complex values in NumPy's lexicographic order, which numba
    lacks (`complex_gt`, `complex_lt`)."""
    if dtype.startswith("complex"):
        return f"complex_{'gt' if greater == '>' else 'lt'}({value}, {best})"
    return f"{value} {greater} {best}"


def _extremum_update(
    accumulator: str, value: str, greater: str, nan_aware: bool, dtype: str
) -> str:
    """The running extremum after seeing `value`; NaN wins and then stays, as in NumPy."""
    better = _beats(value, accumulator, greater, dtype)
    if nan_aware:
        better += f" or {value} != {value}"
    return f"({value} if {better} else {accumulator})"


def _combine(op: Reduction, accumulator: str, value: str, dtype: str) -> str:
    """The accumulator after one more element `value` (in the input dtype)."""
    converted = f"{dtype_expression(dtype)}({value})"
    match op.combine:
        case np.add:
            return f"({accumulator} + {converted})"
        case np.multiply:
            return f"({accumulator} * {converted})"
        case np.logical_and:
            return f"({accumulator} & ({value} != 0))"
        case np.logical_or:
            return f"({accumulator} | ({value} != 0))"
        case np.maximum | np.minimum:
            greater = ">" if op.combine is np.maximum else "<"
            return _extremum_update(accumulator, value, greater, _is_float(dtype), dtype)
    raise TypeError(f"no numba accumulation for {type(op).__name__}")


def _initial(op: Reduction, first: str, dtype: str) -> str:
    """The accumulator before any element: the identity, or (for `Max` and `Min`, which
    have none) the group's first element `first`."""
    if op.identity is None:
        return first
    if isinstance(op.identity, bool):
        return str(op.identity)
    return f"{dtype_expression(dtype)}({op.identity})"


def _element(source: str, prefix: str, rank: int, innermost: str | None = None) -> str:
    """The input element at the loop indices (with `innermost` as the last axis' index)."""
    names = [f"{prefix}j{axis}" for axis in range(rank)]
    if innermost is not None:
        names[-1] = innermost
    return f"{source}[{_index(names)}]"


@scalar_kernel()
def _reduction(op: Reduction, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """A 0-d result (all axes reduced, or a 0-d input) is given as `NodeInfo.assign_scalar`
    says: a plain scalar where the block holds one."""
    (source,) = node.inputs
    (output,) = node.outputs
    prefix = node.prefix
    rank = node.input_types[0].ndim
    dtype = node.output_types[0].dtype
    if not rank:  # nothing to reduce: the input's value, converted
        value = node.scalar(0)
        return node.assign_scalar(0, _combine(op, _initial(op, value, dtype), value, dtype))
    reduced = [axis for axis in range(rank) if axis in op.axes]
    kept = [axis for axis in range(rank) if axis not in op.axes]
    target = f"{output}[{_index([f'{prefix}j{axis}' for axis in kept])}]"
    first = f"{source}[{_index(['0' if a in op.axes else f'{prefix}j{a}' for a in range(rank)])}]"
    initial = _initial(op, first, dtype)
    lines = (_empty_axis_checks(op, source, reduced, node.input_types[0].shape)
             if op.identity is None else [])
    shape = "(" + "".join(f"{source}.shape[{axis}], " for axis in kept) + ")"
    if kept:
        lines.append(Allocation(output, shape, dtype))
    headers, indent = _loops(prefix, source, kept, "")
    lines += headers
    if not reduced:  # each output element is its input element, converted
        element = _element(source, prefix, rank)
        lines.append(f"{indent}{target} = {_combine(op, initial, element, dtype)}")
        return lines
    if reduced == list(range(len(kept), rank)):  # trailing: accumulate in local scalars
        innermost = node.input_types[0].shape[rank - 1]
        if op.combine in (np.add, np.multiply) and dtype in REASSOCIABLE:
            lines += _reassociated(op, node, reduced, initial, indent)
        elif innermost is not None and innermost < 4 * LANES:
            lines += _one_accumulator(op, node, reduced, initial, indent)
        else:
            lines += _lanes(op, node, reduced, initial, indent)
        if not kept:
            return lines + node.assign_scalar(0, f"{prefix}acc")
        lines.append(f"{indent}{target} = {prefix}acc")
        return lines
    lines.append(f"{indent}{target} = {initial}")
    headers, indent = _loops(prefix, source, range(rank), "")
    lines += headers
    value, accumulator = f"{prefix}v", f"{prefix}acc"
    lines += [
        f"{indent}{value} = {_element(source, prefix, rank)}",
        f"{indent}{accumulator} = {target}",
        f"{indent}{target} = {_combine(op, accumulator, value, dtype)}",
    ]
    return lines


REASSOCIABLE = ("float32", "float64")
"""Dtypes whose sums and products accumulate through `assoc_add` and `assoc_mul`."""


def _reassociated(
    op: Reduction, node: NodeInfo, reduced: Sequence[int], initial: str, group_indent: str
) -> list[str]:
    """Lines leaving the float sum or product of one group in `{prefix}acc`: one running
    accumulator, whose updates LLVM splits into vector lanes."""
    prefix = node.prefix
    (source,) = node.inputs
    rank = node.input_types[0].ndim
    dtype = node.output_types[0].dtype
    headers, indent = _loops(prefix, source, reduced, group_indent)
    update = "assoc_add" if op.combine is np.add else "assoc_mul"
    element = f"{dtype_expression(dtype)}({_element(source, prefix, rank)})"
    return [
        f"{group_indent}{prefix}acc = {initial}",
        *headers,
        f"{indent}{prefix}acc = {update}({prefix}acc, {element})",
    ]


def _one_accumulator(
    op: Reduction, node: NodeInfo, reduced: Sequence[int], initial: str, group_indent: str
) -> list[str]:
    """Lines leaving the reduction of one group in `{prefix}acc` through one running
    accumulator: for a short innermost axis of static length, where several lanes
    (`_lanes`) would gain no time and double the code numba compiles."""
    prefix = node.prefix
    (source,) = node.inputs
    rank = node.input_types[0].ndim
    dtype = node.output_types[0].dtype
    headers, indent = _loops(prefix, source, reduced, group_indent)
    element = _element(source, prefix, rank)
    return [
        f"{group_indent}{prefix}acc = {initial}",
        *headers,
        f"{indent}{prefix}acc = {_combine(op, f'{prefix}acc', element, dtype)}",
    ]


LANES = 4
"""Independent accumulators over the innermost reduced axis: one running sum is a single
dependency chain (about 5x slower than NumPy's SIMD sums); several run in parallel."""


def _lanes(
    op: Reduction, node: NodeInfo, reduced: Sequence[int], initial: str, group_indent: str
) -> list[str]:
    """Lines leaving the reduction of one group in `{prefix}acc`: `LANES` accumulators
    take interleaved elements of the innermost (last) axis, the first also the remainder,
    and are merged pairwise at the end."""
    prefix = node.prefix
    (source,) = node.inputs
    rank = node.input_types[0].ndim
    dtype = node.output_types[0].dtype
    accumulators = [f"{prefix}acc{lane}" for lane in range(LANES)]
    lines = [f"{group_indent}{name} = {initial}" for name in accumulators]
    headers, indent = _loops(prefix, source, reduced[:-1], group_indent)
    lines += headers
    index = f"{prefix}j{rank - 1}"
    length = f"{source}.shape[{rank - 1}]"
    lines.append(f"{indent}for {index} in range(0, {length} - {LANES - 1}, {LANES}):")
    for lane, name in enumerate(accumulators):
        element = _element(source, prefix, rank, f"{index} + {lane}" if lane else None)
        lines.append(f"{indent}    {name} = {_combine(op, name, element, dtype)}")
    lines.append(f"{indent}for {index} in range({length} - {length} % {LANES}, {length}):")
    update = _combine(op, accumulators[0], _element(source, prefix, rank), dtype)
    lines.append(f"{indent}    {accumulators[0]} = {update}")
    merged = accumulators
    while len(merged) > 1:
        merged = [_combine(op, a, b, dtype) for a, b in zip(merged[::2], merged[1::2])]
    lines.append(f"{group_indent}{prefix}acc = {merged[0]}")
    return lines


for _reduction_class in (Sum, Prod, Max, Min, AllTrue, AnyTrue):
    numba_kernel.register(_reduction_class)(_reduction)


@numba_kernel.register
def _arg_extremum(op: ArgExtremum, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """The first position of the extremum (of the first NaN, for floats): a running best
    value and its position; with `axis=None`, the position counts in C order."""
    (source,) = node.inputs
    (output,) = node.outputs
    prefix = node.prefix
    rank = node.input_types[0].ndim
    reduced = list(range(rank)) if op.axis is None else [op.axis]
    kept = [axis for axis in range(rank) if axis not in reduced]
    best, position, value = f"{prefix}best", f"{prefix}at", f"{prefix}v"
    counter = f"{prefix}count" if op.axis is None else f"{prefix}j{op.axis}"
    first = f"{source}[{_index(['0' if a in reduced else f'{prefix}j{a}' for a in range(rank)])}]"
    greater = ">" if isinstance(op, Argmax) else "<"
    better = _beats(value, best, greater, node.input_types[0].dtype)
    if _is_float(node.input_types[0].dtype):
        # A first NaN wins and stays. Spelled with short-circuit `or`/`and` on purpose:
        # numba compiles `|`/`&` on these bools, or `best == best and (...)`, to a loop
        # about 12x slower (10 ms instead of 0.8 ms for 10**6 elements).
        better += f" or ({value} != {value} and {best} == {best})"
    shape = "(" + "".join(f"{source}.shape[{axis}], " for axis in kept) + ")"
    lines = _empty_axis_checks(op, source, reduced, node.input_types[0].shape)
    lines.append(Allocation(output, shape, "int64"))
    headers, indent = _loops(prefix, source, kept, "")
    lines += headers
    lines += [f"{indent}{best} = {first}", f"{indent}{position} = 0"]
    if op.axis is None:
        lines.append(f"{indent}{counter} = 0")
    inner, inner_indent = _loops(prefix, source, reduced, indent)
    lines += inner
    read = f"{source}[{_index([f'{prefix}j{axis}' for axis in range(rank)])}]"
    lines += [
        f"{inner_indent}{value} = {read}",
        f"{inner_indent}if {better}:",
        f"{inner_indent}    {best} = {value}",
        f"{inner_indent}    {position} = {counter}",
    ]
    if op.axis is None:
        lines.append(f"{inner_indent}{counter} += 1")
    lines.append(f"{indent}{output}[{_index([f'{prefix}j{axis}' for axis in kept])}] = {position}")
    return lines


@numba_kernel.register
def _cumulative(op: Cumulative, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """One pass in C order (the scanned axis walked backwards with `reverse`): each
    element adds (multiplies) its input to the previous output along the axis."""
    (source,) = node.inputs
    (output,) = node.outputs
    prefix = node.prefix
    rank = node.input_types[0].ndim
    dtype = node.output_types[0].dtype
    axis = op.axis
    step = 1 if op.reverse else -1
    lines: list[str] = [Allocation(output, f"{source}.shape", dtype)]
    indent = ""
    for k in range(rank):
        length = f"{source}.shape[{k}]"
        bounds = f"{length} - 1, -1, -1" if k == axis and op.reverse else length
        lines.append(f"{indent}for {prefix}j{k} in range({bounds}):")
        indent += "    "
    here = [f"{prefix}j{k}" for k in range(rank)]
    previous = [f"{prefix}j{k} + {step}" if k == axis else name for k, name in enumerate(here)]
    start = f"{source}.shape[{axis}] - 1" if op.reverse else "0"
    operator = "+" if isinstance(op, CumSum) else "*"
    converted = f"{dtype_expression(dtype)}({source}[{_index(here)}])"
    lines += [
        f"{indent}if {prefix}j{axis} == {start}:",
        f"{indent}    {output}[{_index(here)}] = {converted}",
        f"{indent}else:",
        f"{indent}    {output}[{_index(here)}] = "
        f"{output}[{_index(previous)}] {operator} {converted}",
    ]
    return lines
