"""Calling an outlined kernel by symbol name, as `blas` calls BLAS: callers use its
machine code, never its LLVM IR.

numba links a called njit function's IR into every caller and optimizes and compiles
the whole again (on the RNN benchmark, a function calling its two loops as njit
functions took as long to finish as when it held the loops itself, and the loops' own
compile came on top). A kernel is instead compiled for the argument types of a call
(one specialization per types, as numba's own calls), its address registered with LLVM
under a name made of the kernel's and the types' (`fgraph_k_<digest>_<types digest>`),
and the caller declares that symbol and calls it with numba's calling convention:
status and exception travel back as from any njit call.

Only the name is in the caller's machine code, so whatever loads that code must have
registered the name first. The caller's library records a `Specialize` of each kernel
it calls among its `reload_init` functions, which numba pickles into its disk cache
and runs before loading the cached code in another process: the kernel is then loaded
(from its own cache) or compiled, and registered, first. That needs the kernel's module
imported, which `function` does for every kernel a graph's module calls.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable
from typing import Any

import attrs
import numba
from llvmlite import binding
from numba.core import cgutils, types
from numba.core.errors import NumbaError
from numba.core.typing import signature

Codegen = Callable[[Any, Any, Any, Any], Any]


@attrs.frozen
class Specialize:
    """Load or compile kernel `name` (of module `module`) for `types` and register its
    symbol: run before numba loads cached code that calls it."""

    module: str
    name: str
    types: tuple[Any, ...]

    def __call__(self) -> None:
        importlib.import_module(self.module)  # its import makes its kernels' calls
        KERNEL_CALLS[self.module, self.name].specialized(self.types)


KERNEL_CALLS: dict[tuple[str, str], KernelCall] = {}
"""Every kernel's calls by module and name, for `Specialize` (a module's import makes
its kernels' `KernelCall`s)."""


class KernelCall:
    """A kernel's compiled specializations, reached through their symbols: the generated
    intrinsic of its module types its calls with `typed`."""

    def __init__(
        self,
        dispatcher: numba.Dispatcher,
        parameter_types: Callable[[tuple[Any, ...]], tuple[Any, ...]] | None = None,
        raises: bool = True,
    ) -> None:
        """`parameter_types` maps a call's argument types to the types the kernel is
        compiled for, of the same data model (an array of any layout passed as one of
        layout 'A'), so that calls of several argument types share one specialization;
        a kernel that never `raises` is called without a status check (an exit from
        the caller, which numba compiles at a cost)."""
        self.dispatcher = dispatcher
        self.module = dispatcher.py_func.__module__
        self.name = dispatcher.py_func.__name__.removesuffix("_code")
        KERNEL_CALLS[self.module, self.name] = self
        self._parameter_types = parameter_types
        self._raises = raises
        self._specializations: dict[tuple[Any, ...], tuple[str, Any]] = {}

    def typed(self, *arguments: Any) -> tuple[Any, Codegen]:
        """The intrinsic's typing: the call's signature and code generator (the kernel
        is compiled for these argument types now, as numba compiles a called function;
        a literal argument, a scalar the caller knows, counts as its type)."""
        parameters = tuple(types.unliteral(argument) for argument in arguments)
        called = parameters if self._parameter_types is None else self._parameter_types(parameters)
        symbol, return_type = self.specialized(called)
        reload = Specialize(self.module, self.name, called)
        raises = self._raises

        def codegen(context: Any, builder: Any, sig: Any, values: Any) -> Any:
            context.active_code_library._reload_init.add(reload)
            function_type = context.call_conv.get_function_type(return_type, called)
            callee = cgutils.get_or_insert_function(builder.module, function_type, symbol)
            status, result = context.call_conv.call_function(
                builder, callee, return_type, called, values
            )
            if raises:
                with cgutils.if_unlikely(builder, status.is_error):
                    context.call_conv.return_status_propagate(builder, status)
            return result

        return signature(return_type, *parameters), codegen  # a literal passes as its type

    def specialized(self, types: tuple[Any, ...]) -> tuple[str, Any]:
        """The symbol and return type of the kernel compiled for `types` (loaded from
        numba's disk cache, or compiled, and registered the first time)."""
        found = self._specializations.get(types)
        if found is not None:
            return found
        try:
            self.dispatcher.compile(types)
        except NumbaError:
            raise  # the code itself does not compile: a cold retry would only fail again
        except Exception:
            # A damaged numba cache entry (unpickling or rebuilding it fails) must not
            # poison every later run: drop it and compile once more from scratch.
            self.dispatcher._cache.flush()
            self.dispatcher.compile(types)
        compiled = self.dispatcher.overloads[types]
        digest = hashlib.sha256(str(types).encode()).hexdigest()[:16]
        symbol = f"fgraph_{self.name}_{digest}"
        address = compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)
        binding.add_symbol(symbol, address)
        found = self._specializations[types] = (symbol, compiled.signature.return_type)
        return found
