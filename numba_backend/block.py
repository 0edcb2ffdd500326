"""Emitting a graph as a block of statements: the one walk over a graph's nodes that the
entry function, inlined `OpFromGraph`s and loop bodies all use.

Each node's kernel gets names for its inputs (from `names`, which the caller fills with
the names of the graph's inputs) and writes names for its outputs, all under the block's
`prefix` (unique per inlined graph: numba needs one type per variable name). A `Sum` over
trailing axes of an elementwise result nothing else reads is computed in the producing
loop, so the summed array never exists.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from fgraph import Apply, Constant, Graph, Variable
from fgraph.variable import error_name
from numba_backend import split
from numba_backend.body import element_body
from numba_backend.loops import summed_loop
from numba_backend.kernels import emit_node, kernel_key
from numba_backend.registry import (
    ModuleBuilder,
    NodeInfo,
    is_short_vector,
    is_size_one,
    one_element_array,
    scalar_use,
    vector_array,
)
from ops.elemwise import ElementwiseOp
from ops.fused import Fused
from ops.reduction import Sum
from rewrite.lengths import Length, count_root, length_root


def emit_block(
    graph: Graph,
    names: dict[Variable, str],
    module: ModuleBuilder,
    prefix: str = "",
    plain_ends: bool | Collection[Variable] = False,
    labels: Mapping[Variable, str] | None = None,
) -> list[str]:
    """Statements computing every node of `graph`; `names` maps the graph's inputs to the
    names holding them (arrays) and receives the names of every computed variable (of
    the graph's outputs, arrays; of other 0-d values, maybe scalars: see `Scalars`).

    With `plain_ends` True (the entry function's block), the graph's 0-d inputs are held
    as plain scalars and its 0-d outputs are named as plain scalars (an expression
    reading the one element of a 0-d array the block has): a caller passes and gets
    numbers, which numba unboxes and boxes at a fraction of a 0-d array's cost (0.25 us
    each). A collection instead names the 0-d inputs and outputs that are plain (a loop
    body's 0-d sequence rows and per-step outputs, else a 0-d array each step).

    `labels`: how run-time errors name the graph's params (a loop body's, after the
    user's values feeding them); by default inputs are named by their own names."""

    def name_of(variable: Variable) -> str:
        found = names.get(variable)
        if found is not None:
            return found
        if isinstance(variable, Constant):
            return module.constant(variable, scope=prefix)
        raise ValueError(f"{variable!r} is used before it is computed")

    positions = {node: number for number, node in enumerate(graph.nodes)}
    plain = _plain_ends(graph, plain_ends)
    scalars = Scalars(graph, plain)
    roots: dict[Length, Length] = {}

    def info_of(node: Apply, arrays: dict[int, str]) -> NodeInfo:
        number = positions[node]
        return NodeInfo(
            inputs=tuple(arrays.get(k) or name_of(v) for k, v in enumerate(node.inputs)),
            outputs=tuple(f"{prefix}v{number}_{k}" for k in range(len(node.output_types))),
            input_types=tuple(variable.type for variable in node.inputs),
            output_types=node.output_types,
            prefix=f"{prefix}n{number}_",
            input_labels=tuple(describe(variable, labels) for variable in node.inputs),
            input_names=tuple(error_name(variable, labels) for variable in node.inputs),
            scalar_inputs=scalars.read_by(node),
            scalar_outputs=tuple(output in scalars.made for output in node.outputs),
            input_lengths=tuple(
                tuple(length_root(v, axis, roots) for axis in range(v.ndim)) for v in node.inputs
            ),
            input_counts=tuple(count_root(v, roots) for v in node.inputs),
        )

    summed = summed_producers(graph)
    absorbed = set(summed.values())
    lines: list[str] = []
    for node in graph.nodes:
        if node in absorbed:
            continue  # computed inside the loop of the Sum that reads it
        made, arrays = scalars.arrays_for(node, names)
        lines += made
        producer = summed.get(node)
        if producer is None:
            info = info_of(node, arrays)
            lines.extend(emit_node(node.op, info, module, kernel_key(node)))
        else:
            producer_info = info_of(producer, {})
            names[producer.out] = producer_info.outputs[0]  # a name only, never an array
            info = info_of(node, arrays)
            lines.extend(sum_while_computing(producer, producer_info, info, module))
        for output, name in zip(node.outputs, info.outputs):
            names[output] = name
    for result in dict.fromkeys(graph.outputs):  # an output listed twice is named once
        names.setdefault(result, name_of(result))
        if result in plain:
            if result not in scalars.made:
                names[result] = f"{names[result]}[()]"
            continue
        made, array = scalars.array_of(result, names[result])
        lines += made
        names[result] = array
    return lines


def _plain_ends(graph: Graph, plain_ends: bool | Collection[Variable]) -> set[Variable]:
    """The graph's 0-d inputs and outputs held as plain scalars (`emit_block`)."""
    ends = [*graph.inputs, *graph.outputs]
    if isinstance(plain_ends, bool):
        return {v for v in ends if v.ndim == 0} if plain_ends else set()
    return {v for v in plain_ends if v.ndim == 0 and v in ends}


class Scalars:
    """Which 0-d values (and values of one element) of a graph are plain numba scalars,
    which shape vectors are tuples, and their arrays.

    A 0-d result is a scalar when its kernel can make one (`registry.scalar_kernel`) and
    a kernel reading it reads it as a scalar; a shape vector is a tuple on the same
    terms. Kernels that need an array, and the graph's outputs, get one made from the
    scalar or tuple before they run: one per value, or a fresh one for a kernel that
    overwrites it in place. The graph's inputs and outputs in `plain` (0-d) are plain
    scalars too: the inputs held so, the outputs read so."""

    def __init__(self, graph: Graph, plain: Collection[Variable] = ()) -> None:
        self.made: set[Variable] = {v for v in graph.inputs if v in plain}
        """The values that are plain: scalars (0-d, or of one element) and tuples."""
        self.tuples: set[Variable] = set()
        """The shape vectors among them, which are tuples."""
        self._arrays: dict[Variable, str] = {}
        returned = {v for v in graph.outputs if v in plain}
        outputs = set(graph.outputs)
        for node in graph.nodes:
            use = scalar_use(node.op)
            if use is None:
                continue
            for output in node.outputs:
                clients = graph.clients.get(output, ())
                if use.makes_vectors and is_short_vector(output.type):
                    if any(_takes_tuple(client, k) for client, k in clients):
                        self.made.add(output)
                        self.tuples.add(output)
                elif use.makes and (output.ndim == 0 or (use.size_one and is_size_one(output.type))):
                    unread = not clients and output not in outputs  # (slogdet's sign)
                    if output in returned or unread or any(
                        _takes_scalar(client, k) for client, k in clients
                    ):
                        self.made.add(output)

    def read_plain(self, node: Apply, k: int) -> bool:
        """Whether `node`'s kernel reads input k as the plain value it is (if it is one)."""
        if node.inputs[k] in self.tuples:
            return _takes_tuple(node, k)
        return _takes_scalar(node, k)

    def read_by(self, node: Apply) -> tuple[bool, ...]:
        """Per input of `node`, whether its kernel is handed it as a plain value."""
        return tuple(v in self.made and self.read_plain(node, k) for k, v in enumerate(node.inputs))

    def arrays_for(
        self, node: Apply, names: dict[Variable, str]
    ) -> tuple[list[str], dict[int, str]]:
        """Lines making arrays of the plain values `node`'s kernel reads as arrays, and
        the array's name for each such input."""
        lines: list[str] = []
        arrays: dict[int, str] = {}
        destroyed = {k for _, k in node.op.destroy_map}
        for k, variable in enumerate(node.inputs):
            if variable in self.made and not self.read_plain(node, k):
                made, arrays[k] = self.array_of(variable, names[variable], k in destroyed)
                lines += made
        return lines, arrays

    def array_of(
        self, variable: Variable, name: str, fresh: bool = False
    ) -> tuple[list[str], str]:
        """Lines making an array of `variable` (named `name`) if it is a plain value
        (once, unless `fresh`: for a kernel that overwrites it), and the array's name
        (`name` itself for an array)."""
        if variable not in self.made:
            return [], name
        if fresh:
            array = f"{name}_f"
        elif variable in self._arrays:
            return [], self._arrays[variable]
        else:
            array = self._arrays[variable] = f"{name}_a"
        if variable in self.tuples:
            return vector_array(array, name, variable.type), array
        return one_element_array(array, name, variable.type), array


def _takes_scalar(node: Apply, k: int) -> bool:
    """Whether `node`'s kernel may be handed input k as a plain scalar."""
    use = scalar_use(node.op)
    if use is None or not use.reads(node.op, k):
        return False
    value = node.inputs[k].type
    return value.ndim == 0 or (use.size_one and is_size_one(value))


def _takes_tuple(node: Apply, k: int) -> bool:
    """Whether `node`'s kernel may be handed shape vector input k as a tuple."""
    use = scalar_use(node.op)
    return use is not None and use.vectors(node.op, k) and is_short_vector(node.inputs[k].type)


def describe(variable: Variable, labels: Mapping[Variable, str] | None = None) -> str:
    """A variable as run-time errors name it (`fgraph.error_name`), and its type."""
    return f"{error_name(variable, labels)} ({variable.type})"


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
            and isinstance(producer.op, ElementwiseOp)
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
    if not isinstance(producer.op, ElementwiseOp):
        raise TypeError(f"cannot sum while computing {producer.op}")
    body = element_body(producer.op, producer_info, module)
    return summed_loop(producer_info, body, module, info)
