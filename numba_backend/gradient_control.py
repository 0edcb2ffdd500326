"""Gradient stops compiled as they are: the input itself (a view, as the op declares).
The optimizing pipelines remove them; this kernel is for graphs compiled unoptimized
(`mode="none"`)."""

from __future__ import annotations

from numba_backend.registry import ModuleBuilder, NodeInfo, numba_kernel
from ops.gradient_control import StopGradient


@numba_kernel.register
def _stop_gradient(op: StopGradient, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    return [f"{node.outputs[0]} = {node.inputs[0]}"]
