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
from numba_backend.registry import ModuleBuilder, NodeInfo, dtype_expression, numba_kernel
from numba_backend.scalar import Operand, scalar_expression
from ops.elemwise import Elemwise
from ops.fused import Fused


def element_loop(
    node: NodeInfo,
    body: Sequence[str],
    scalar_names: Sequence[str],
    destroy_map: Sequence[tuple[int, int]] = (),
) -> list[str]:
    """Lines computing `node.outputs` elementwise. `body` reads the scalar of input k as
    `scalar_names[k]` and assigns output k's scalar to `{prefix}y{k}`. An output in
    `destroy_map` is written into its input's buffer: each element of every input is read
    before the same element of any output is written, so this is safe."""
    prefix = node.prefix
    rank = node.output_types[0].ndim
    lines: list[str] = []
    lengths: list[str] = []
    for axis in range(rank):
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
    shape = "(" + "".join(f"{length}, " for length in lengths) + ")"
    reused = dict(destroy_map)
    for k, (output, output_type) in enumerate(zip(node.outputs, node.output_types)):
        if k in reused:
            lines.append(f"{output} = {node.inputs[reused[k]]}")
        else:
            dtype = dtype_expression(output_type.dtype)
            lines.append(f"{output} = np.empty({shape}, dtype={dtype})")
    indent = ""
    for axis in range(rank):
        lines.append(f"{indent}for {prefix}j{axis} in range({lengths[axis]}):")
        indent += "    "
    for k, (source, input_type) in enumerate(zip(node.inputs, node.input_types)):
        position = ", ".join(
            "0" if input_type.shape[axis] == 1 else f"{prefix}j{axis}" for axis in range(rank)
        )
        lines.append(f"{indent}{scalar_names[k]} = {source}[{position if rank else '()'}]")
    lines.extend(indent + line for line in body)
    target = ", ".join(f"{prefix}j{axis}" for axis in range(rank)) if rank else "()"
    for k, output in enumerate(node.outputs):
        lines.append(f"{indent}{output}[{target}] = {prefix}y{k}")
    return lines


@numba_kernel.register
def _elemwise(op: Elemwise, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    scalars = tuple(f"{node.prefix}x{k}" for k in range(len(node.inputs)))
    expression = scalar_expression(op.scalar_op, scalars, node.output_types[0].dtype)
    return element_loop(node, [f"{node.prefix}y0 = {expression}"], scalars, op.destroy_map)


@numba_kernel.register
def _fused(op: Fused, node: NodeInfo, module: ModuleBuilder) -> list[str]:
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
    return hoisted + element_loop(node, body, scalars, op.destroy_map)
