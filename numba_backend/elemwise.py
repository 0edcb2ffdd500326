"""Kernel of `ops.elemwise` (`Elemwise`): one element loop (`numba_backend.loops`) whose
body is the scalar op's expression (`numba_backend.body`, `numba_backend.scalar_ops`)."""

from __future__ import annotations

from numba_backend.body import element_body
from numba_backend.loops import element_loop
from numba_backend.registry import ModuleBuilder, NodeInfo, numba_kernel, scalar_kernel
from ops.elemwise import Elemwise


@numba_kernel.register
@scalar_kernel(size_one=True)
def _elemwise(op: Elemwise, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    return element_loop(node, element_body(op, node, module), module, op.destroy_map)
