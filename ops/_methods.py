"""The `TensorApi` the op library installs into `fgraph.operators`, giving variables
NumPy's operators and methods. Each entry forwards to the user-level function."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fgraph import Variable
from fgraph.operators import (
    ArgReductionName,
    Axis,
    BinaryName,
    MethodName,
    ReductionName,
    TensorLike,
    UnaryName,
    install,
)
import ops.elemwise as elemwise
import ops.matmul as matmul_module
import ops.reduction as reduction
import ops.subtensor as subtensor
from ops.dimshuffle import DimShuffle, squeeze
from ops.shape import flatten, reshape, shape, transpose

# `ops.shape` and `ops.scalar` are user functions in the `ops` namespace that shadow the
# submodules of the same names: import from those modules by name, never `from ops import`.

_BINARY: dict[str, Callable[[TensorLike, TensorLike], Variable]] = {
    "add": elemwise.add,
    "sub": elemwise.sub,
    "mul": elemwise.mul,
    "true_div": elemwise.true_div,
    "int_div": elemwise.int_div,
    "mod": elemwise.mod,
    "pow": elemwise.pow,
    "matmul": matmul_module.matmul,
    "lt": elemwise.lt,
    "le": elemwise.le,
    "gt": elemwise.gt,
    "ge": elemwise.ge,
    "and": elemwise.bitwise_and,
    "or": elemwise.bitwise_or,
    "xor": elemwise.bitwise_xor,
}
_UNARY: dict[str, Callable[[TensorLike], Variable]] = {
    "neg": elemwise.neg,
    "abs": elemwise.abs,
    "invert": elemwise.invert,
}
_REDUCTIONS: dict[str, Callable[[TensorLike, Axis, bool], Variable]] = {
    "sum": reduction.sum,
    "prod": reduction.prod,
    "mean": reduction.mean,
    "max": reduction.max,
    "min": reduction.min,
    "all": reduction.all,
    "any": reduction.any,
    "var": reduction.var,
    "std": reduction.std,
}
_METHODS: dict[str, Callable[..., Variable]] = {
    "clip": elemwise.clip,
    "dot": matmul_module.dot,
    "squeeze": squeeze,
    "cumsum": reduction.cumsum,
    "round": elemwise.round,
    "dimshuffle": lambda x, *order: DimShuffle(tuple(None if a == "x" else a for a in order))(x),
}
_ARG_REDUCTIONS: dict[str, Callable[[TensorLike, Axis, bool], Variable]] = {
    "argmax": reduction.argmax,
    "argmin": reduction.argmin,
}


class _Methods:
    def binary(self, name: BinaryName, x: TensorLike, y: TensorLike) -> Variable:
        return _BINARY[name](x, y)

    def unary(self, name: UnaryName, x: Variable) -> Variable:
        return _UNARY[name](x)

    def reduce(self, name: ReductionName, x: Variable, axis: Axis, keepdims: bool) -> Variable:
        return _REDUCTIONS[name](x, axis, keepdims)

    def arg_reduce(
        self, name: ArgReductionName, x: Variable, axis: Axis, keepdims: bool
    ) -> Variable:
        return _ARG_REDUCTIONS[name](x, axis, keepdims)

    def getitem(self, x: Variable, index: Any) -> Variable:
        return subtensor.getitem(x, index)

    def transpose(self, x: Variable, axes: Sequence[int] | None) -> Variable:
        return transpose(x, None if axes is None else tuple(axes))

    def reshape(self, x: Variable, new_shape: TensorLike) -> Variable:
        return reshape(x, new_shape)

    def astype(self, x: Variable, dtype: str) -> Variable:
        return elemwise.cast(x, dtype)

    def flatten(self, x: Variable) -> Variable:
        return flatten(x)

    def shape(self, x: Variable) -> Variable:
        return shape(x)

    def method(self, name: MethodName, x: Variable, *args: Any) -> Variable:
        return _METHODS[name](x, *args)


install(_Methods())
