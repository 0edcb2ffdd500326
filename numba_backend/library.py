"""`library_function` and `library_kernel`: how the backend's own numba helpers
(special functions, LAPACK calls, random streams) are compiled."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
from numba.extending import intrinsic

from numba_backend.calls import KernelCall

_Function = TypeVar("_Function", bound=Callable[..., Any])


def library_function(function: _Function) -> _Function:
    """`numba.njit` with the options every helper shares: cached on disk (compiled once
    per machine and signature, then linked into each generated module), no GIL, NumPy's
    error model (division by zero gives inf, not an exception). Typed as the function it
    compiles, so that calls between helpers keep their types for mypy."""
    return cast(_Function, _compiled(function))


def _compiled(function: Callable[..., Any]) -> numba.Dispatcher:
    return numba.njit(cache=True, nogil=True, error_model="numpy")(function)


def inlined_helper(function: _Function) -> _Function:
    """A small helper of `library_kernel`s, inlined into each caller as numba IR
    (`inline="always"`) rather than compiled as a function of its own: each njit
    function pays numba's whole pipeline and an LLVM module on a machine's first use
    (`solve_triangular_into` and its six helpers took 0.94 s cold, 0.56 s with them
    inlined), while a helper of a few statements adds little to its caller's typing.
    numba's inliner takes no star arguments."""
    return cast(_Function, numba.njit(inline="always", nogil=True, error_model="numpy")(function))


def library_kernel(function: _Function) -> _Function:
    """A `library_function` that generated code calls by symbol (`calls.KernelCall`):
    compiled once per signature on its own, never linked into a caller. A helper called
    as a plain njit function is linked into every generated function calling it, whose
    LLVM optimizes and compiles its code once more (the LAPACK helpers: about as long
    again as their own compile, in every graph). Its array arguments are passed as
    arrays of layout 'A' (`intrinsics.any_layout`) so that one specialization per dtype
    serves every caller. Generated code reaches it by symbol only, so it is compiled
    without numba's Python and C wrappers (about 0.03 s of each helper's first compile);
    Python reaches it through `python_callable`."""
    call = KernelCall(numba.njit(cache=True, nogil=True, error_model="numpy",
                                 no_cpython_wrapper=True, no_cfunc_wrapper=True)(function))
    # An intrinsic's typing function spelled with the helper's own parameters: numba
    # lowers no star arguments in an intrinsic's call.
    parameters = ", ".join(inspect.signature(function).parameters)
    namespace: dict[str, Any] = {"call": call}
    exec(  # noqa: S102 (text made from the helper's parameter names only)
        f"def {function.__name__}(typingctx, {parameters}):\n"
        f"    return call.typed({parameters})\n",
        namespace,
    )
    typing = namespace[function.__name__]
    typing.__module__ = function.__module__  # a runtime name of its own module (source.py)
    typing.__qualname__, typing.__doc__ = function.__qualname__, function.__doc__
    outlined = intrinsic(typing)
    _PARAMETERS[id(outlined)] = parameters
    return cast(_Function, outlined)


_PARAMETERS: dict[int, str] = {}
_PYTHON_CALLABLE: dict[int, numba.Dispatcher] = {}


def python_callable(helper: _Function) -> _Function:
    """A `library_kernel` callable from Python (an intrinsic is not), as tests call it:
    an njit function calling it as generated code does (by symbol, the helper loaded
    from or saved to numba's disk cache), itself compiled in the process. The helper's
    own function has no Python wrapper, and one compiled with it must not be cached:
    numba's cache index does not tell the two apart."""
    found = _PYTHON_CALLABLE.get(id(helper))
    if found is None:
        parameters = _PARAMETERS[id(helper)]
        namespace: dict[str, Any] = {"helper": helper}
        exec(  # noqa: S102 (text made from the helper's parameter names only)
            f"def call({parameters}):\n    return helper({parameters})\n", namespace)
        found = _PYTHON_CALLABLE[id(helper)] = numba.njit(nogil=True, error_model="numpy")(
            namespace["call"])
    return cast(_Function, found)
