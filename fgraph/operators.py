"""The plug-in point through which variables get NumPy's operators and methods.

`fgraph` cannot import the op library (imports go down only), yet `x + y` on a
variable must build an `Add` node. The op library installs one object satisfying
`TensorApi` at import; `Variable`'s dunder methods and methods call through it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

import numpy as np

if TYPE_CHECKING:  # annotations only: fgraph.variable imports this module
    from fgraph.variable import Variable

TensorLike: TypeAlias = "Variable | np.ndarray[Any, np.dtype[Any]] | np.generic | bool | int | float | complex | list[Any] | tuple[Any, ...]"
"""What ops accept as a tensor: variables, arrays, numbers and nested lists or tuples of
numbers (not `str`, which is a sequence too: `pt.exp("x")` is a type error)."""
Axis: TypeAlias = "int | Sequence[int] | None"
BinaryName = Literal[
    "add", "sub", "mul", "true_div", "int_div", "mod", "pow", "matmul",
    "lt", "le", "gt", "ge", "and", "or", "xor",
]
UnaryName = Literal["neg", "abs", "invert"]
ReductionName = Literal["sum", "prod", "mean", "max", "min", "all", "any", "var", "std"]
ArgReductionName = Literal["argmax", "argmin"]
MethodName = Literal[
    "clip", "dot", "squeeze", "cumsum", "round", "dimshuffle", "real", "imag", "conj",
]


class TensorApi(Protocol):
    """What the op library provides to variables; see `ops/_methods.py`."""

    def binary(self, name: BinaryName, x: TensorLike, y: TensorLike) -> Variable: ...

    def unary(self, name: UnaryName, x: Variable) -> Variable: ...

    def reduce(self, name: ReductionName, x: Variable, axis: Axis, keepdims: bool) -> Variable: ...

    def arg_reduce(self, name: ArgReductionName, x: Variable, axis: Axis, keepdims: bool) -> Variable: ...

    def getitem(self, x: Variable, index: Any) -> Variable: ...

    def transpose(self, x: Variable, axes: Sequence[int] | None) -> Variable: ...

    def reshape(self, x: Variable, new_shape: TensorLike) -> Variable: ...

    def astype(self, x: Variable, dtype: str) -> Variable: ...

    def flatten(self, x: Variable) -> Variable: ...

    def shape(self, x: Variable) -> Variable: ...

    def method(self, name: MethodName, x: Variable, *args: Any) -> Variable: ...

    def ufunc(self, name: str, operands: tuple[Any, ...]) -> Variable: ...

    def not_iterable(self, x: Variable) -> str: ...


_installed: list[TensorApi] = []


def install(api: TensorApi) -> None:
    """Called once by the op library at import; later calls replace the implementation."""
    _installed[:] = [api]


def api() -> TensorApi:
    """The installed implementation, or a clear error if the op library is not imported."""
    if not _installed:
        raise RuntimeError("tensor operators need the op library: `import ops` first")
    return _installed[0]
