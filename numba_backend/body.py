"""What one element of an `Elemwise` or `Fused` node takes, as structured statements:
the loop code in `loops` inlines them, and `split` spreads a huge body over helpers.

Inner constants are packed into one array argument per dtype, read once before the
loop, so the source does not depend on their values, and a body with hundreds of
constants does not become a function with hundreds of arguments (numba's compile time
grows steeply with both).
"""

from __future__ import annotations

import attrs
import numpy as np

from fgraph import Variable
from fgraph.variable import Constant
from numba_backend.registry import (
    ModuleBuilder, NodeInfo, dtype_expression, is_call, is_size_one,
)
from numba_backend.scalar_ops import Operand, scalar_expression, sequential_code
from numba_backend.vecmath import VECTORIZED_MIN_LENGTH
from ops.elemwise import Elemwise, ElementwiseOp
from ops.fused import Fused


@attrs.frozen
class ElementBody:
    """One element's computation: `statements` (name, expression) in order, reading the
    input scalars `scalars` and the `constants` (name, where the packed value is read);
    output k's value is `outputs[k]`."""

    scalars: tuple[Operand, ...]
    constants: tuple[tuple[Operand, str], ...]
    statements: tuple[tuple[Operand, str], ...]
    outputs: tuple[Operand, ...]

    def hoisted(self) -> list[str]:
        """Lines reading the constants, to run before the loop."""
        return [f"{name} = {source}" for name, source in self.constants]

    def lines(self, prefix: str) -> list[str]:
        """The statements, then `{prefix}y{k} = ` each output's value."""
        lines = [f"{name} = {expression}" for name, expression in self.statements]
        return lines + [f"{prefix}y{k} = {value}" for k, value in enumerate(self.outputs)]


def element_body(op: ElementwiseOp, node: NodeInfo, module: ModuleBuilder) -> ElementBody:
    """The statements of one element of `node`, calling libm's functions where its loop
    runs one element at a time (`runs_one_at_a_time`), vecmath's elsewhere."""
    if runs_one_at_a_time(node):
        with sequential_code():
            return _element_body(op, node, module)
    return _element_body(op, node, module)


def runs_one_at_a_time(node: NodeInfo) -> bool:
    """Whether `node`'s element loop cannot vectorize: one element, or an innermost loop
    (the last axis not of static length 1: a loop of one step is no loop to LLVM) of
    static length below `VECTORIZED_MIN_LENGTH`."""
    output_type = node.output_types[0]
    if is_size_one(output_type):
        return True
    innermost = next(length for length in reversed(output_type.shape) if length != 1)
    return innermost is not None and innermost < VECTORIZED_MIN_LENGTH


def _element_body(op: ElementwiseOp, node: NodeInfo, module: ModuleBuilder) -> ElementBody:
    if isinstance(op, Fused):
        return _fused_body(op, node, module)
    if not isinstance(op, Elemwise):
        raise TypeError(f"no element body for {op}")
    scalars = tuple(
        Operand(f"{node.prefix}x{k}", t.dtype) for k, t in enumerate(node.input_types)
    )
    dtype = node.output_types[0].dtype
    result = Operand(f"{node.prefix}t0", dtype)
    expression = scalar_expression(op.scalar_op, scalars, dtype)
    return ElementBody(scalars, (), ((result, expression),), (result,))


def _fused_body(op: Fused, node: NodeInfo, module: ModuleBuilder) -> ElementBody:
    """float64 statements over float64 operands need no cast; others are wrapped in
    their dtype, since numba widens small integers."""
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

    statements: list[tuple[Operand, str]] = []
    for number, inner_node in enumerate(inner.nodes):
        if not isinstance(inner_node.op, Elemwise):
            raise TypeError(f"Fused inner node {inner_node.op} is not Elemwise")
        arguments = tuple(name_of(variable) for variable in inner_node.inputs)
        dtype = inner_node.output_types[0].dtype
        expression = scalar_expression(inner_node.op.scalar_op, arguments, dtype)
        float64 = dtype == "float64" and all(a.dtype == "float64" for a in arguments)
        if not (float64 or is_call(expression, dtype_expression(dtype))):
            expression = f"{dtype_expression(dtype)}({expression})"  # numba may widen
        result = Operand(f"{prefix}t{number}", dtype)
        statements.append((result, expression))
        names[inner_node.out] = result
    outputs = tuple(name_of(output) for output in inner.outputs)
    reads: list[tuple[Operand, str]] = []
    for dtype, group in constants.items():
        values = Constant(np.array([c.data for c in group], dtype=dtype))
        packed = module.constant(values, scope=prefix)
        reads += [(names[c], f"{packed}[{k}]") for k, c in enumerate(group)]
    module.scalars.update(name for name, _ in reads)
    return ElementBody(scalars, tuple(reads), tuple(statements), outputs)


def element_position(node: NodeInfo, k: int) -> str:
    """The subscript of input k's element at the loop indices `{prefix}j{axis}` (0 along
    its broadcast axes)."""
    input_type = node.input_types[k]
    rank = node.output_types[0].ndim
    indices = ("0" if input_type.shape[a] == 1 else f"{node.prefix}j{a}" for a in range(rank))
    return ", ".join(indices) if rank else "()"
