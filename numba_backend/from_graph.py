"""`OpFromGraph` inlined: the inner graph's kernels are emitted in place, reading the
node's input names, with local names nested under the node's prefix.

Inlining costs no extra njit function (each costs about 0.05-0.1 s to compile), and
every application gets its own names, as numba needs one type per variable name.
Inner constants become arguments of the entry function like any other constant. The op
declares no `view_map`, so its outputs must be fresh, independent buffers (the inplace
rewrite may overwrite any of them): an output that may share memory with an inner input,
a constant or an earlier output (`Aliasing.shared_outputs`) is copied.
"""

from __future__ import annotations

from fgraph import Variable
from fgraph.aliasing import Aliasing
from numba_backend.block import emit_block
from numba_backend.loops import fresh_copy
from numba_backend.registry import ModuleBuilder, NodeInfo, numba_kernel
from ops.from_graph import OpFromGraph


@numba_kernel.register
def _op_from_graph(op: OpFromGraph, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    inner = op.inner_graph
    names: dict[Variable, str] = dict(zip(inner.inputs, node.inputs))
    lines = emit_block(inner, names, module, node.prefix)
    shared = Aliasing.of(inner).shared_outputs()
    for k, (output, inner_output, copy) in enumerate(zip(node.outputs, inner.outputs, shared)):
        if copy:  # an allocation and element loops: numba's copy() is a compiled overload
            lines += fresh_copy(output, names[inner_output], node.output_types[k],
                                f"{node.prefix}c{k}_")
        else:
            lines.append(f"{output} = {names[inner_output]}")
    return lines
