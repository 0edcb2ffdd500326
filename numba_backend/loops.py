"""Element loops: `Elemwise` and `Fused` nodes become one explicit loop nest.

Each output element is computed by inlined scalar expressions (no temporaries). Inputs
broadcast along axes whose static length is 1; every other axis must match the loop
length at run time, which the generated code checks with a clear error.
"""

from __future__ import annotations

from collections.abc import Sequence

from fgraph import Param, TensorType, Variable
from fgraph.variable import Constant
from numba_backend.registry import ModuleBuilder, NodeInfo, dtype_expression, numba_kernel
from numba_backend.scalar import scalar_expression
from ops.elemwise import Elemwise
from ops.fused import Fused


def _loop_lengths(input_types: Sequence[TensorType], rank: int) -> tuple[list[str], list[str]]:
    """Per axis, the expression for the loop length and the runtime checks it needs."""
    lengths: list[str] = []
    checks: list[str] = []
    for axis in range(rank):
        sources = [k for k, t in enumerate(input_types) if t.shape[axis] != 1]
        if not sources:
            lengths.append("1")
            continue
        first = sources[0]
        lengths.append(f"a{first}.shape[{axis}]")
        for other in sources[1:]:
            checks.append(
                f"    if a{other}.shape[{axis}] != a{first}.shape[{axis}]:\n"
                f"        raise ValueError('elementwise inputs {first} and {other} differ in length "
                f"along axis {axis} (broadcasting needs a static length of 1)')"
            )
    return lengths, checks


def element_loop(
    module: ModuleBuilder,
    input_types: Sequence[TensorType],
    output_types: Sequence[TensorType],
    body: Sequence[str],
    extra_arguments: Sequence[str] = (),
) -> str:
    """A helper computing outputs `o0..` elementwise; `body` reads scalars `x0..` (inputs)
    and `extra_arguments` (scalars), and assigns scalars `y0..` (outputs)."""
    rank = output_types[0].ndim
    lengths, checks = _loop_lengths(input_types, rank)
    indices = [f"j{axis}" for axis in range(rank)]
    arguments = [f"a{k}" for k in range(len(input_types))] + list(extra_arguments)
    lines = [f"def NAME({', '.join(arguments)}):", *checks]
    shape = "(" + "".join(f"{length}, " for length in lengths) + ")"
    for k, output_type in enumerate(output_types):
        lines.append(f"    o{k} = np.empty({shape}, dtype={dtype_expression(output_type.dtype)})")
    indent = "    "
    for axis in range(rank):
        lines.append(f"{indent}for j{axis} in range({lengths[axis]}):")
        indent += "    "
    for k, input_type in enumerate(input_types):
        position = ", ".join(
            "0" if input_type.shape[axis] == 1 else indices[axis] for axis in range(rank)
        )
        lines.append(f"{indent}x{k} = a{k}[{position if rank else '()'}]")
    lines.extend(indent + line for line in body)
    target = ", ".join(indices) if rank else "()"
    for k in range(len(output_types)):
        lines.append(f"{indent}o{k}[{target}] = y{k}")
    outputs = ", ".join(f"o{k}" for k in range(len(output_types)))
    lines.append(f"    return ({outputs},)")
    return module.add_helper("\n".join(lines), fastmath=False)


@numba_kernel.register
def _elemwise(op: Elemwise, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    arguments = tuple(f"x{k}" for k in range(len(node.inputs)))
    expression = scalar_expression(op.scalar_op, arguments, node.output_types[0].dtype)
    helper = element_loop(module, node.input_types, node.output_types, [f"y0 = {expression}"])
    return [f"({node.outputs[0]},) = {helper}({', '.join(node.inputs)})"]


@numba_kernel.register
def _fused(op: Fused, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """Inner constants become extra scalar arguments (read from 0-d arrays), so the
    helper's source does not depend on their values."""
    inner = op.inner_graph
    names: dict[Variable, str] = {param: f"x{k}" for k, param in enumerate(inner.inputs)}
    constants: list[Constant] = []
    body: list[str] = []

    def name_of(variable: Variable) -> str:
        found = names.get(variable)
        if found is None:
            if not isinstance(variable, Constant):
                raise TypeError(f"Fused inner graph reads an unknown variable {variable!r}")
            found = names[variable] = f"s{len(constants)}"
            constants.append(variable)
        return found

    for number, inner_node in enumerate(inner.nodes):
        if not isinstance(inner_node.op, Elemwise):
            raise TypeError(f"Fused inner node {inner_node.op} is not Elemwise")
        arguments = tuple(name_of(variable) for variable in inner_node.inputs)
        dtype = inner_node.output_types[0].dtype
        expression = scalar_expression(inner_node.op.scalar_op, arguments, dtype)
        body.append(f"t{number} = {dtype_expression(dtype)}({expression})")
        names[inner_node.out] = f"t{number}"
    for k, output in enumerate(inner.outputs):
        source = name_of(output) if not isinstance(output, Param) else names[output]
        body.append(f"y{k} = {source}")
    extra = [f"c_{name_of(constant)}" for constant in constants]
    body = [f"{name_of(constant)} = c_{name_of(constant)}[()]" for constant in constants] + body
    helper = element_loop(module, node.input_types, node.output_types, body, extra)
    constant_arguments = [_constant_argument(module, constant) for constant in constants]
    outputs = ", ".join(node.outputs)
    return [f"({outputs},) = {helper}({', '.join([*node.inputs, *constant_arguments])})"]


def _constant_argument(module: ModuleBuilder, constant: Constant) -> str:
    """Inner constants are passed like outer ones: registered with the module."""
    return module.constant(constant)
