"""Emitting a graph as a block of statements: the one walk over a graph's nodes that the
entry function, inlined `OpFromGraph`s and loop bodies all use.

Each node's kernel gets names for its inputs (from `names`, which the caller fills with
the names of the graph's inputs) and writes names for its outputs, all under the block's
`prefix` (unique per inlined graph: numba needs one type per variable name). A `Sum` over
trailing axes of an elementwise result nothing else reads is computed in the producing
loop, so the summed array never exists.
"""

from __future__ import annotations

from fgraph import Apply, Constant, Graph, Variable, display_name
from numba_backend import split
from numba_backend.body import element_body
from numba_backend.loops import summed_loop
from numba_backend.kernels import emit_node
from numba_backend.registry import ModuleBuilder, NodeInfo
from ops.elemwise import Elemwise
from ops.fused import Fused
from ops.reduction import Sum


def emit_block(
    graph: Graph, names: dict[Variable, str], module: ModuleBuilder, prefix: str = ""
) -> list[str]:
    """Statements computing every node of `graph`; `names` maps the graph's inputs to the
    names holding them and receives the names of every computed variable."""

    def name_of(variable: Variable) -> str:
        found = names.get(variable)
        if found is not None:
            return found
        if isinstance(variable, Constant):
            return module.constant(variable, scope=prefix)
        raise ValueError(f"{variable!r} is used before it is computed")

    positions = {node: number for number, node in enumerate(graph.nodes)}

    def info_of(node: Apply) -> NodeInfo:
        number = positions[node]
        return NodeInfo(
            inputs=tuple(name_of(variable) for variable in node.inputs),
            outputs=tuple(f"{prefix}v{number}_{k}" for k in range(len(node.output_types))),
            input_types=tuple(variable.type for variable in node.inputs),
            output_types=node.output_types,
            prefix=f"{prefix}n{number}_",
            input_labels=tuple(describe(variable) for variable in node.inputs),
        )

    summed = summed_producers(graph)
    absorbed = set(summed.values())
    lines: list[str] = []
    for node in graph.nodes:
        if node in absorbed:
            continue  # computed inside the loop of the Sum that reads it
        producer = summed.get(node)
        if producer is None:
            info = info_of(node)
            lines.extend(emit_node(node.op, info, module))
        else:
            producer_info = info_of(producer)
            names[producer.out] = producer_info.outputs[0]  # a name only, never an array
            info = info_of(node)
            lines.extend(sum_while_computing(producer, producer_info, info, module))
        for output, name in zip(node.outputs, info.outputs):
            names[output] = name
    for result in graph.outputs:
        names.setdefault(result, name_of(result))
    return lines


def describe(variable: Variable) -> str:
    """A variable as run-time errors name it: a graph input by its name, a constant as
    such, a computed value by the op computing it."""
    if variable.owner is not None:
        return f"the result of {variable.owner.op} ({variable.type})"
    if isinstance(variable, Constant):
        return f"a constant ({variable.type})"
    return f"{display_name(variable)} ({variable.type})"


def summed_producers(graph: Graph) -> dict[Apply, Apply]:
    """`Sum`s over trailing axes (all axes included) whose input is the only output of an
    Elemwise or Fused node that nothing else reads: each such pair becomes one loop, so
    the summed array never exists. A body large enough to be split is summed fully or
    not at all."""
    pairs: dict[Apply, Apply] = {}
    outputs = set(graph.outputs)
    for node in graph.nodes:
        if not isinstance(node.op, Sum) or not _trailing(node.op.axes, node.inputs[0].ndim):
            continue
        producer = node.inputs[0].owner
        partial = len(node.op.axes) != node.inputs[0].ndim
        if partial and producer is not None and isinstance(producer.op, Fused):
            if len(producer.op.inner_graph.nodes) > split.SPLIT_ABOVE:
                continue
        if (
            producer is not None
            and isinstance(producer.op, (Elemwise, Fused))
            and len(producer.output_types) == 1
            and not producer.op.destroy_map
            and graph.clients.get(node.inputs[0]) == ((node, 0),)
            and node.inputs[0] not in outputs
        ):
            pairs[node] = producer
    return pairs


def _trailing(axes: tuple[int, ...], ndim: int) -> bool:
    return bool(axes) and axes == tuple(range(ndim - len(axes), ndim))


def sum_while_computing(
    producer: Apply, producer_info: NodeInfo, info: NodeInfo, module: ModuleBuilder
) -> list[str]:
    """The lines of one loop computing `producer`'s elements and adding them up into the
    Sum's output."""
    if not isinstance(producer.op, (Elemwise, Fused)):
        raise TypeError(f"cannot sum while computing {producer.op}")
    body = element_body(producer.op, producer_info, module)
    total_type = info.output_types[0]
    return summed_loop(producer_info, body, module, info.outputs[0], total_type)
