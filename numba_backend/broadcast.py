"""Kernel of `ops.broadcast` (`BroadcastTo`): NumPy's read-only broadcast view."""

from __future__ import annotations

from numba_backend.registry import ModuleBuilder, NodeInfo, no_input, numba_kernel, only_input, scalar_kernel
from numba_backend.shape_vector import shape_tuple
from ops.broadcast import BroadcastTo


@numba_kernel.register
@scalar_kernel(reads=no_input, makes=False, vectors=only_input(1))
def _broadcast_to(op: BroadcastTo, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """A read-only view, as in NumPy (`function` copies it if it is returned)."""
    source, target = node.inputs
    return [f"{node.outputs[0]} = broadcast_view({source}, {shape_tuple(target, op.shape)})"]
