"""Element loops: `Elemwise` and `Fused` nodes become one explicit loop nest, inlined
into the entry function.

Each output element is computed by inlined scalar expressions (no temporaries). Inputs
broadcast along axes whose static length is 1; every other axis must match the loop
length at run time, which the generated code checks with a clear error.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fgraph import Variable
from fgraph.variable import Constant
from numba_backend.reduction import REASSOCIABLE
from numba_backend.registry import ModuleBuilder, NodeInfo, dtype_expression, numba_kernel
from numba_backend.scalar import Operand, scalar_expression
from ops.elemwise import Elemwise
from ops.fused import Fused


def _lengths(node: NodeInfo) -> tuple[list[str], list[str]]:
    """Per axis, the loop length's expression, and the lines computing and checking them:
    inputs broadcast only along static length-1 axes; others must match at run time."""
    prefix = node.prefix
    lines: list[str] = []
    lengths: list[str] = []
    for axis in range(node.output_types[0].ndim):
        sources = [k for k, t in enumerate(node.input_types) if t.shape[axis] != 1]
        if not sources:
            lengths.append("1")
            continue
        first = node.inputs[sources[0]]
        lengths.append(f"{prefix}n{axis}")
        lines.append(f"{prefix}n{axis} = {first}.shape[{axis}]")
        for other in sources[1:]:
            lines += [
                f"if {node.inputs[other]}.shape[{axis}] != {prefix}n{axis}:",
                f"    raise ValueError('elementwise inputs {sources[0]} and {other} differ in "
                f"length along axis {axis} (broadcasting needs a static length of 1)')",
            ]
    return lines, lengths


PARALLEL_MIN_SIZE = 1 << 16
"""Elements from which a loop of a `parallel` function runs on all threads: below it, a
thread launch (several microseconds) costs more than it saves."""

CHUNKS = 64
"""Pieces a parallel summed loop is cut into along its first axis (each thread adds up
its own pieces; the pieces' totals are added at the end)."""


def _loop_nest(
    node: NodeInfo,
    lengths: Sequence[str],
    scalar_names: Sequence[str],
    indent: str = "",
    first_axis: str | None = None,
) -> tuple[list[str], str]:
    """`for` headers over every element and the loads of each input's scalar; returns
    the lines and the indentation of the loop body. `first_axis` replaces the header of
    axis 0 (to run it in parallel or over one chunk)."""
    prefix = node.prefix
    rank = len(lengths)
    lines: list[str] = []
    for axis in range(rank):
        header = f"for {prefix}j{axis} in range({lengths[axis]}):"
        lines.append(indent + (first_axis if axis == 0 and first_axis else header))
        indent += "    "
    for k, (source, input_type) in enumerate(zip(node.inputs, node.input_types)):
        position = ", ".join(
            "0" if input_type.shape[axis] == 1 else f"{prefix}j{axis}" for axis in range(rank)
        )
        lines.append(f"{indent}{scalar_names[k]} = {source}[{position if rank else '()'}]")
    return lines, indent


def _size(lengths: Sequence[str]) -> str:
    return " * ".join(lengths)


def element_loop(
    node: NodeInfo,
    body: Sequence[str],
    scalar_names: Sequence[str],
    destroy_map: Sequence[tuple[int, int]] = (),
    parallel: bool = False,
) -> list[str]:
    """Lines computing `node.outputs` elementwise. `body` reads the scalar of input k as
    `scalar_names[k]` and assigns output k's scalar to `{prefix}y{k}`. An output in
    `destroy_map` is written into its input's buffer: each element of every input is read
    before the same element of any output is written, so this is safe. With `parallel`,
    a large enough loop runs its first axis with `numba.prange`."""
    prefix = node.prefix
    lines, lengths = _lengths(node)
    shape = "(" + "".join(f"{length}, " for length in lengths) + ")"
    reused = dict(destroy_map)
    for k, (output, output_type) in enumerate(zip(node.outputs, node.output_types)):
        if k in reused:
            lines.append(f"{output} = {node.inputs[reused[k]]}")
        else:
            lines.append(f"{output} = new_array({shape}, {dtype_expression(output_type.dtype)})")
    rank = len(lengths)
    target = ", ".join(f"{prefix}j{axis}" for axis in range(rank)) if rank else "()"

    def loop(indent: str, first_axis: str | None) -> list[str]:
        nest, inner = _loop_nest(node, lengths, scalar_names, indent, first_axis)
        stores = [f"{inner}{output}[{target}] = {prefix}y{k}" for k, output in enumerate(node.outputs)]
        return nest + [inner + line for line in body] + stores

    if not (parallel and rank):
        return lines + loop("", None)
    return [
        *lines,
        f"if {_size(lengths)} >= {PARALLEL_MIN_SIZE}:",
        *loop("    ", f"for {prefix}j0 in numba.prange({lengths[0]}):"),
        "else:",
        *loop("    ", None),
    ]


def summed_loop(
    node: NodeInfo,
    body: Sequence[str],
    scalar_names: Sequence[str],
    total: str,
    dtype: str,
    parallel: bool = False,
) -> list[str]:
    """Lines adding up every element of `node`'s single output into a 0-d array `total`
    of `dtype`, in the same loop that computes them: no temporary array. A float sum
    is reassociable, so the loop vectorizes (`reduction.REASSOCIABLE`). With `parallel`,
    a large enough loop is cut into `CHUNKS` pieces along its first axis, added up on
    all threads."""
    prefix = node.prefix
    lines, lengths = _lengths(node)
    value = f"{prefix}y0"
    element_dtype = node.output_types[0].dtype
    if element_dtype != "float64":  # numba widens small ints: wrap as the array store would
        value = f"{dtype_expression(element_dtype)}({value})"
    if element_dtype != dtype:
        value = f"{dtype_expression(dtype)}({value})"
    zero = f"{dtype_expression(dtype)}(0)"

    def add(accumulator: str, term: str) -> str:
        if dtype in REASSOCIABLE:
            return f"{accumulator} = assoc_add({accumulator}, {term})"
        return f"{accumulator} = {accumulator} + {term}"

    def loop(accumulator: str, indent: str, first_axis: str | None) -> list[str]:
        nest, inner = _loop_nest(node, lengths, scalar_names, indent, first_axis)
        return nest + [inner + line for line in body] + [inner + add(accumulator, value)]

    accumulator = f"{prefix}total"
    lines.append(f"{accumulator} = {zero}")
    if parallel and lengths:
        piece, part, first = f"{prefix}c", f"{prefix}part", lengths[0]
        lines += [
            f"if {_size(lengths)} >= {PARALLEL_MIN_SIZE}:",
            f"    {prefix}parts = new_array({CHUNKS}, {dtype_expression(dtype)})",
            f"    for {piece} in numba.prange({CHUNKS}):",
            f"        {part} = {zero}",
            *loop(
                part,
                "        ",
                f"for {prefix}j0 in range({piece} * {first} // {CHUNKS}, "
                f"({piece} + 1) * {first} // {CHUNKS}):",
            ),
            f"        {prefix}parts[{piece}] = {part}",
            f"    for {piece} in range({CHUNKS}):",
            f"        {add(accumulator, f'{prefix}parts[{piece}]')}",
            "else:",
            *loop(accumulator, "    ", None),
        ]
    else:
        lines += loop(accumulator, "", None)
    lines += [
        f"{total} = new_array((), {dtype_expression(dtype)})",
        f"{total}[()] = {accumulator}",
    ]
    return lines


@numba_kernel.register
def _elemwise(op: Elemwise, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    hoisted, body, scalars = element_body(op, node, module)
    return hoisted + element_loop(node, body, scalars, op.destroy_map, module.parallel)


def element_body(
    op: Elemwise | Fused, node: NodeInfo, module: ModuleBuilder
) -> tuple[list[str], list[str], tuple[str, ...]]:
    """What one element of an Elemwise or Fused node takes: lines to run before the loop,
    the body computing `{prefix}y{k}` from the input scalars, and those scalars' names."""
    if isinstance(op, Fused):
        return _fused_body(op, node, module)
    scalars = tuple(
        Operand(f"{node.prefix}x{k}", t.dtype) for k, t in enumerate(node.input_types)
    )
    expression = scalar_expression(op.scalar_op, scalars, node.output_types[0].dtype)
    return [], [f"{node.prefix}y0 = {expression}"], scalars


@numba_kernel.register
def _fused(op: Fused, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    hoisted, body, scalars = _fused_body(op, node, module)
    return hoisted + element_loop(node, body, scalars, op.destroy_map, module.parallel)


def _fused_body(
    op: Fused, node: NodeInfo, module: ModuleBuilder
) -> tuple[list[str], list[str], tuple[str, ...]]:
    """Inner constants are packed into one array argument per dtype and read before the
    loop, so the source does not depend on their values, and a body with hundreds of
    constants does not become a function with hundreds of arguments (numba's compile time
    grows steeply with both). float64 statements over float64 operands need no cast."""
    prefix = node.prefix
    inner = op.inner_graph
    scalars = tuple(
        Operand(f"{prefix}x{k}", param.dtype) for k, param in enumerate(inner.inputs)
    )
    names: dict[Variable, Operand] = dict(zip(inner.inputs, scalars))
    constants: dict[str, list[Constant]] = {}  # by dtype, packed into one array each

    def name_of(variable: Variable) -> Operand:
        found = names.get(variable)
        if found is None:
            if not isinstance(variable, Constant):
                raise TypeError(f"Fused inner graph reads an unknown variable {variable!r}")
            same_dtype = constants.setdefault(variable.dtype, [])
            found = Operand(f"{prefix}s_{variable.dtype}_{len(same_dtype)}", variable.dtype)
            names[variable] = found
            same_dtype.append(variable)
        return found

    body: list[str] = []
    for number, inner_node in enumerate(inner.nodes):
        if not isinstance(inner_node.op, Elemwise):
            raise TypeError(f"Fused inner node {inner_node.op} is not Elemwise")
        arguments = tuple(name_of(variable) for variable in inner_node.inputs)
        dtype = inner_node.output_types[0].dtype
        expression = scalar_expression(inner_node.op.scalar_op, arguments, dtype)
        if not (dtype == "float64" and all(a.dtype == "float64" for a in arguments)):
            expression = f"{dtype_expression(dtype)}({expression})"  # numba may widen
        body.append(f"{prefix}t{number} = {expression}")
        names[inner_node.out] = Operand(f"{prefix}t{number}", dtype)
    for k, output in enumerate(inner.outputs):
        body.append(f"{prefix}y{k} = {name_of(output)}")
    hoisted: list[str] = []
    for dtype, group in constants.items():
        values = Constant(np.array([c.data for c in group], dtype=dtype))
        packed = module.constant(values, scope=prefix)
        hoisted += [f"{prefix}s_{dtype}_{k} = {packed}[{k}]" for k in range(len(group))]
    return hoisted, body, scalars
