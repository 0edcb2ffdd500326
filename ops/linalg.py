"""Linear algebra (in progress)."""

from __future__ import annotations

from fgraph import Variable
from fgraph.operators import TensorLike


def matmul(x: TensorLike, y: TensorLike) -> Variable:
    raise NotImplementedError("matmul: being implemented")
