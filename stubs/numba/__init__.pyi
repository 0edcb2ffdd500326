# Type stubs for the parts of numba that fgraph uses (numba ships no type information).
from collections.abc import Callable
from typing import Any, Literal, TypeVar, overload

_F = TypeVar("_F", bound=Callable[..., Any])

from numba.core.types import Type as NumbaType

def typeof(value: object) -> NumbaType: ...
def from_dtype(dtype: object) -> NumbaType: ...

class _Cache:
    """A dispatcher's on-disk cache (an index file and one data file per entry)."""

    def flush(self) -> None: ...

class _CacheStats:
    """Per signature, how often numba's disk cache was hit and missed (compiled)."""

    cache_hits: dict[Any, int]
    cache_misses: dict[Any, int]

class Dispatcher:
    """A compiled function: calls dispatch on argument types, compiling as needed."""

    _cache: _Cache

    py_func: Callable[..., Any]
    def __call__(self, *args: Any) -> Any: ...
    def compile(self, signature: tuple[NumbaType, ...]) -> Any: ...
    def inspect_llvm(self) -> dict[Any, str]: ...
    overloads: dict[tuple[NumbaType, ...], Any]
    stats: _CacheStats
    @property
    def signatures(self) -> list[tuple[NumbaType, ...]]: ...

@overload
def njit(function: _F) -> Dispatcher: ...
@overload
def njit(
    *,
    cache: bool = ...,
    parallel: bool = ...,
    fastmath: bool = ...,
    nogil: bool = ...,
    error_model: str = ...,
    forceinline: bool = ...,
    no_cpython_wrapper: bool = ...,
    no_cfunc_wrapper: bool = ...,
    inline: Literal["always", "never"] = ...,
) -> Callable[[Callable[..., Any]], Dispatcher]: ...

def prange(*args: int) -> range: ...
def get_num_threads() -> int: ...
def set_num_threads(n: int) -> None: ...

class _Config:
    NUMBA_NUM_THREADS: int

config: _Config

class CFunc:
    """A function compiled for one C signature (`numba.cfunc`)."""

    address: int
    @property
    def ctypes(self) -> Any: ...

def cfunc(
    signature: Any, *, nogil: bool = ..., cache: bool = ...
) -> Callable[[Callable[..., Any]], CFunc]: ...
def carray(pointer: Any, shape: Any, dtype: Any = ...) -> Any: ...

__version__: str
