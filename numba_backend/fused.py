"""Kernel of `ops.fused` (`Fused`): one element loop (`numba_backend.loops`) whose body
is the inner graph's scalar statements (`numba_backend.body`)."""

from __future__ import annotations

from numba_backend.body import element_body
from numba_backend.loops import element_loop
from numba_backend.registry import ModuleBuilder, NodeInfo, numba_kernel, scalar_kernel
from ops.fused import Fused


@numba_kernel.register
@scalar_kernel(size_one=True)
def _fused(op: Fused, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    return element_loop(node, element_body(op, node, module), module, op.destroy_map)
