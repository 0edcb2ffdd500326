"""Kernel of `ops.undefined_gradient` (`UndefinedGradient`), which refuses to compile."""

from __future__ import annotations

from numba_backend.registry import ModuleBuilder, NodeInfo, numba_kernel
from ops.undefined_gradient import UndefinedGradient


@numba_kernel.register
def _undefined_gradient(op: UndefinedGradient, node: NodeInfo, module: ModuleBuilder) -> list[str]:
    """A derivative that is not implemented never reaches a compiled graph (`grad` and
    `jvp` raise first); one built by hand fails here, saying which it is."""
    raise NotImplementedError(op.message)
