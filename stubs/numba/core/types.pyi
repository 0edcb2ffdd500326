# Type stubs for the numba types that fgraph's intrinsics inspect and build signatures from.
from collections.abc import Iterable, Iterator
from typing import Any

class Type:
    """A numba type; calling a type with argument types makes a signature."""

    def __call__(self, *args: Type) -> Any: ...

class Array(Type):
    dtype: Type
    ndim: int
    layout: str
    mutable: bool
    def __init__(self, dtype: Type, ndim: int, layout: str, readonly: bool = ...) -> None: ...
    def copy(self, *, ndim: int = ..., layout: str = ..., readonly: bool = ...) -> Array: ...

class Integer(Type):
    signed: bool
    bitwidth: int
class Number(Type): ...
class Boolean(Type): ...

class CPointer(Type):
    def __init__(self, dtype: Type) -> None: ...

class Tuple(BaseTuple):
    def __init__(self, types: tuple[Type, ...]) -> None: ...

class BaseTuple(Type):
    def __iter__(self) -> Iterator[Type]: ...
    def __len__(self) -> int: ...
    @staticmethod
    def from_types(tys: Iterable[Type]) -> BaseTuple: ...

class NumberClass(Type):
    dtype: Type

class DType(Type):
    dtype: Type

class Float(Type): ...

class StringLiteral(Type):
    literal_value: str

class IntegerLiteral(Integer):
    literal_value: int

void: Type
none: Type
slice2_type: Type
slice3_type: Type

float64: Float
int64: Type
float32: Float
int32: Type
boolean: Type
voidptr: Type
intp: Type
intc: Type

class Dispatcher(Type):
    """The type of an njit function called from compiled code."""

    def __init__(self, dispatcher: Any) -> None: ...

class ExternalFunction(Type):
    """A C function numba calls by symbol name (resolved by LLVM's linker)."""

    def __init__(self, symbol: str, sig: Any) -> None: ...
    def __call__(self, *args: Any) -> Any: ...

def unliteral(lit_type: Type) -> Type:
    """The type of a literal's value (any other type unchanged)."""
    ...
