"""Calling an outlined kernel by symbol name, as `blas` calls BLAS: callers use its
machine code, never its LLVM IR.

numba links a called njit function's IR into every caller and optimizes and compiles
the whole again (on the RNN benchmark, a function calling its two loops as njit
functions took as long to finish as when it held the loops itself, and the loops' own
compile came on top). A kernel is instead compiled once, for arguments its module fixes
(arrays of any layout, and scalars), its address registered with LLVM under its own name
(`fgraph_k_<digest>`), and callers declare that symbol and call it with numba's calling
convention: status and exception travel back as from any njit call. Only the name is
in the caller's code, so numba's disk cache of the caller stays valid in another
process once the kernel is loaded there (`function` loads a module's kernels before
the module; a kernel's module compiles it when imported).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from llvmlite import binding
from numba.core import cgutils, types
from numba.core.errors import NumbaError
from numba.core.typing import signature

Codegen = Callable[[Any, Any, Any, Any], Any]


class KernelCall:
    """A compiled kernel reached through `symbol`: the generated intrinsic of its module
    types its calls with `typed`."""

    def __init__(
        self, dispatcher: numba.Dispatcher, symbol: str, parameters: tuple[tuple[str, int], ...]
    ) -> None:
        """Compile `dispatcher` for arrays of the (dtype, rank) `parameters`, any
        layout, and register its machine code as `symbol`."""
        self.symbol = symbol
        self.parameters = tuple(_parameter_type(dtype, rank) for dtype, rank in parameters)
        try:
            dispatcher.compile(self.parameters)
        except NumbaError:
            raise  # the code itself does not compile: a cold retry would only fail again
        except Exception:
            # A damaged numba cache entry (unpickling or rebuilding it fails) must not
            # poison every later run: drop it and compile once more from scratch.
            dispatcher._cache.flush()
            dispatcher.compile(self.parameters)
        compiled = dispatcher.overloads[self.parameters]
        binding.add_symbol(symbol, compiled.library.get_pointer_to_function(
            compiled.fndesc.llvm_func_name))
        self.return_type = compiled.signature.return_type

    def typed(self, *arguments: Any) -> tuple[Any, Codegen] | None:
        """The intrinsic's typing: the call's signature and code generator, or None
        when the arguments do not fit the parameters."""
        if len(arguments) != len(self.parameters) or not all(
            _passes_as(given, expected) for given, expected in zip(arguments, self.parameters)
        ):
            return None
        # A scalar argument is converted to the parameter's type (a literal to its value).
        passed = [
            given if isinstance(expected, types.Array) else expected
            for given, expected in zip(arguments, self.parameters)
        ]
        return signature(self.return_type, *passed), self._codegen

    def _codegen(self, context: Any, builder: Any, sig: Any, values: Any) -> Any:
        function_type = context.call_conv.get_function_type(self.return_type, self.parameters)
        callee = cgutils.get_or_insert_function(builder.module, function_type, self.symbol)
        status, result = context.call_conv.call_function(
            builder, callee, self.return_type, self.parameters, values
        )
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return result


def _parameter_type(dtype: str, rank: int) -> Any:
    """An array of `rank` axes and any layout, or for rank -1 a plain scalar (a 0-d
    value the generated code holds as a scalar)."""
    scalar = numba.from_dtype(np.dtype(dtype))
    return scalar if rank < 0 else types.Array(scalar, rank, "A")


def _passes_as(given: Any, expected: Any) -> bool:
    """An array of one dtype and rank has one native form whatever its layout, and
    whether it is read-only: it is passed unchanged. A scalar passes as a scalar of
    its type."""
    if not isinstance(expected, types.Array):
        return bool(types.unliteral(given) == expected)
    return (
        isinstance(given, types.Array)
        and given.dtype == expected.dtype
        and given.ndim == expected.ndim
    )
