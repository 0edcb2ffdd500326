"""`OpFromGraph` inlined: the inner graph's kernels are emitted in place, reading the
node's input names, with local names nested under the node's prefix.

Inlining costs no extra njit function (each costs about 0.05-0.1 s to compile), and
every application gets its own names, as numba needs one type per variable name.
Inner constants become arguments of the entry function like any other constant. The op
declares no `view_map`, so an output that may be a view of an inner input or constant
is copied: the inplace rewrite may overwrite the op's outputs.
"""

from __future__ import annotations

from fgraph import Variable
from numba_backend.block import emit_block
from numba_backend.registry import ModuleBuilder, NodeInfo, numba_kernel
from ops.op_from_graph import OpFromGraph


@numba_kernel.register
def _op_from_graph(op: OpFromGraph, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    inner = op.inner_graph
    names: dict[Variable, str] = dict(zip(inner.inputs, node.inputs))
    lines = emit_block(inner, names, module, node.prefix)
    lines.extend(
        f"{output} = {names[inner_output]}" + (".copy()" if _may_view_root(inner_output) else "")
        for output, inner_output in zip(node.outputs, inner.outputs)
    )
    return lines


def _may_view_root(variable: Variable) -> bool:
    """Whether `variable` may share memory with an input or constant of its graph,
    following the `view_map`s of the nodes that computed it."""
    pending = [variable]
    while pending:
        current = pending.pop()
        node = current.owner
        if node is None:
            return True
        pending.extend(node.inputs[i] for o, i in node.op.view_map if o == current.index)
    return False
