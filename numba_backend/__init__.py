"""The numba backend: `function(inputs, outputs)` compiles a graph to one njit function.

The kernel of an op of `ops/<name>.py` is in `numba_backend/<name>.py` (`KERNEL_MODULES`)."""

from fgraph.packages import require_package

require_package("ops")
require_package("rewrite")

from types import ModuleType

from numba_backend import (
    advanced_subtensor,
    broadcast,
    creation,
    dimshuffle,
    elemwise,
    from_graph,
    fused,
    gradient_control,
    join,
    linalg,
    matmul_op,
    random_draw,
    reduction,
    reshape_ops,
    scalar_ops,
    scan_op,
    shape_vector,
    sort_ops,
    special,
    subtensor,
    undefined_gradient,
)
from numba_backend.compile import function
from numba_backend.compiled_function import CompiledFunction
from numba_backend.heap import keep_working_memory
from numba_backend.registry import MissingKernelError, numba_kernel
from numba_backend.specialize import ShapeSpecializedFunction

keep_working_memory()

KERNEL_MODULES: dict[str, ModuleType] = {
    "ops.advanced_subtensor": advanced_subtensor,
    "ops.broadcast": broadcast,
    "ops.creation": creation,
    "ops.dimshuffle": dimshuffle,
    "ops.elemwise": elemwise,
    "ops.fused": fused,
    "ops.gradient_control": gradient_control,
    "ops.from_graph": from_graph,
    "ops.join": join,
    "ops.matmul_op": matmul_op,
    "ops.random_draw": random_draw,
    "ops.reduction": reduction,
    "ops.reshape_ops": reshape_ops,
    "ops.scalar_ops": scalar_ops,
    "ops.scan_op": scan_op,
    "ops.shape_vector": shape_vector,
    "ops.sort_ops": sort_ops,
    "ops.special": special,
    "ops.special_bessel": special,  # with the other special functions' calls
    "ops.subtensor": subtensor,
    "ops.undefined_gradient": undefined_gradient,
    # The linear algebra families share one module of kernels (and of LAPACK calls).
    "ops.determinants": linalg,
    "ops.factorizations": linalg,
    "ops.lu": linalg,
    "ops.matrix_exponential": linalg,
    "ops.solves": linalg,
}
"""Where the kernels of each module of `ops` are: its namesake in this package, but for
linear algebra and the Bessel functions. Each kernel is registered next to its definition
(`@numba_kernel.register`, or `scalar_expression.register` for the scalar ops the
`Elemwise` kernel inlines), so importing these modules, above, registers them all.
tests/numba_backend/test_kernel_registry.py checks every op against this table."""

__all__ = [
    "CompiledFunction",
    "MissingKernelError",
    "ShapeSpecializedFunction",
    "function",
    "numba_kernel",
]
