"""The numba backend: `function(inputs, outputs)` compiles a graph to one njit function."""

from numba_backend import dimshuffle as _dimshuffle
from numba_backend import loops as _loops
from numba_backend import reduction as _reduction
from numba_backend.function import CompiledFunction, function
from numba_backend.registry import MissingKernelError, numba_kernel

__all__ = ["CompiledFunction", "MissingKernelError", "function", "numba_kernel"]
