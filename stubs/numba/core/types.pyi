# Type stubs for the numba types that fgraph's intrinsics inspect and build signatures from.
from typing import Any

class Type:
    """A numba type; calling a type with argument types makes a signature."""

    def __call__(self, *args: Type) -> Any: ...

class Array(Type):
    dtype: Type
    ndim: int
    layout: str

void: Type
