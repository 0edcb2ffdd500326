"""The numba backend: `function(inputs, outputs)` compiles a graph to one njit function."""

from fgraph.packages import require_package

require_package("ops")
require_package("rewrite")

from numba_backend import advanced_indexing as _advanced_indexing
from numba_backend import creation as _creation
from numba_backend import dimshuffle as _dimshuffle
from numba_backend import gradient_control as _gradient_control
from numba_backend import indexing as _indexing
from numba_backend import join as _join
from numba_backend import linalg as _linalg
from numba_backend import matmul as _matmul
from numba_backend import loops as _loops
from numba_backend import op_from_graph as _op_from_graph
from numba_backend import random as _random
from numba_backend import reduction as _reduction
from numba_backend import scan as _scan
from numba_backend import shape as _shape
from numba_backend import sort as _sort
from numba_backend import special as _special
from numba_backend.function import CompiledFunction, function
from numba_backend.heap import keep_working_memory
from numba_backend.registry import MissingKernelError, numba_kernel
from numba_backend.specialize import ShapeSpecializedFunction

keep_working_memory()

__all__ = [
    "CompiledFunction",
    "MissingKernelError",
    "ShapeSpecializedFunction",
    "function",
    "numba_kernel",
]
