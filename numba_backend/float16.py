"""float16 graphs compiled in float32: numba has no float16 on the CPU (no arithmetic,
not even arrays of it), yet NumPy gives float16 for `exp` of int8, uint8 and bool.

`widened` rewrites a graph before it is optimized so that every float16 value is a
float32 one: float16 inputs become float32 inputs (the caller converts the arguments,
a safe cast) and float16 constants float32 ones, an elementwise node whose NumPy result is float16 computes on float32
operands (its integer and bool operands cast first: they are exact in float32), and
other ops are rebuilt on the widened inputs (a `dtype="float16"` parameter, as of
`zeros`, becomes float32). The outputs that were float16 are converted back to float16
after the call, so the dtypes are NumPy's.

The values are those of float32 arithmetic rounded to float16 once, at the end: NumPy
rounds each float16 operation's result (most of its float16 loops also compute in
float32), so a chain of operations can differ from NumPy's in the last float16 bit,
and an intermediate value that overflows float16 (inf in NumPy) stays finite here.
Loops and other ops with inner graphs in float16 are refused with a clear error.
"""

from __future__ import annotations

import attrs

from fgraph import Constant, Graph, Input, TensorType, Variable, display_name
from fgraph.dtypes import is_bool, is_integer
from fgraph.op import Op, inner_graphs_of
from ops.elemwise import Elemwise
from ops.elementwise_functions import cast
from ops.scalar_ops import Cast


def widened(graph: Graph) -> tuple[Graph, tuple[int, ...]]:
    """`graph` computed in float32 wherever it computes in float16, and the positions of
    its outputs that were float16 (to be converted back after the call)."""
    if not _has_float16(graph):
        return graph, ()
    replacements: dict[Variable, Variable] = {}
    inputs: list[Variable] = []
    for variable in graph.inputs:
        if variable.dtype == "float16" and isinstance(variable, Input):
            replacement = Input(TensorType("float32", variable.type.shape), variable.name)
            replacements[variable] = replacement
            variable = replacement
        inputs.append(variable)
    for node in graph.nodes:
        operands = tuple(replacements.get(v, v) for v in node.inputs)
        operands = tuple(_widened_constant(v) for v in operands)
        if operands == node.inputs and all(v.dtype != "float16" for v in node.outputs):
            continue
        if any(_has_float16(inner) for inner in inner_graphs_of(node.op)):
            raise TypeError(
                f"numba cannot compile float16 on the CPU, and {node.op} computes in float16 "
                "inside its inner graph: use float32 there (evaluate() handles float16)"
            )
        results = _in_float32(node.op, operands, node.outputs)
        replacements.update(zip(node.outputs, results))
    outputs = [replacements.get(v, v) for v in graph.outputs]
    narrowed = tuple(k for k, v in enumerate(graph.outputs) if v.dtype == "float16")
    return Graph(inputs, outputs), narrowed


def _in_float32(
    op: Op, operands: tuple[Variable, ...], outputs: tuple[Variable, ...]
) -> tuple[Variable, ...]:
    if isinstance(op, Elemwise) and any(v.dtype == "float16" for v in outputs):
        if isinstance(op.scalar_op, Cast):
            return (cast(operands[0], "float32"),)
        exact = [cast(v, "float32") if is_integer(v.dtype) or is_bool(v.dtype) else v
                 for v in operands]
        return Elemwise(op.scalar_op).apply(*exact)
    if getattr(op, "dtype", None) == "float16":
        op = attrs.evolve(op, dtype="float32")  # type: ignore[misc]
    results = op.apply(*operands)
    for before, after in zip(outputs, results):
        if after.dtype != (("float32" if before.dtype == "float16" else before.dtype)):
            raise TypeError(
                f"numba cannot compile float16 on the CPU, and {op} gives {after.type} for "
                f"{display_name(before)} when computed in float32: use float32"
            )
    return results


def _widened_constant(variable: Variable) -> Variable:
    if isinstance(variable, Constant) and variable.dtype == "float16":
        return Constant(variable.data.astype("float32"))
    return variable


def _has_float16(graph: Graph) -> bool:
    variables = [*graph.inputs, *(v for node in graph.nodes for v in node.outputs)]
    return any(v.dtype == "float16" for v in variables) or any(
        _has_float16(inner) for node in graph.nodes for inner in inner_graphs_of(node.op)
    )
