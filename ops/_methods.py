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
import ops  # the package: `ufunc` finds NumPy's ufuncs among its public functions
import ops.elementwise_functions as elementwise
import ops.matmul_op as matmul_module
import ops.reduction as reduction
import ops.subtensor as subtensor
from ops.dimshuffle import DimShuffle, squeeze, transpose
from ops.reshape_ops import flatten, reshape
from ops.scan_op import Scan
from ops.shape_vector import shape

_BINARY: dict[str, Callable[[TensorLike, TensorLike], Variable]] = {
    "add": elementwise.add,
    "sub": elementwise.sub,
    "mul": elementwise.mul,
    "true_div": elementwise.true_div,
    "int_div": elementwise.int_div,
    "mod": elementwise.mod,
    "pow": elementwise.pow,
    "matmul": matmul_module.matmul,
    "lt": elementwise.lt,
    "le": elementwise.le,
    "gt": elementwise.gt,
    "ge": elementwise.ge,
    "and": elementwise.bitwise_and,
    "or": elementwise.bitwise_or,
    "xor": elementwise.bitwise_xor,
}
_UNARY: dict[str, Callable[[TensorLike], Variable]] = {
    "neg": elementwise.neg,
    "abs": elementwise.abs,
    "invert": elementwise.invert,
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
    "clip": elementwise.clip,
    "dot": matmul_module.dot,
    "squeeze": squeeze,
    "cumsum": reduction.cumsum,
    "round": elementwise.round,
    "dimshuffle": lambda x, *order: DimShuffle(tuple(None if a == "x" else a for a in order))(x),
    "real": elementwise.real,
    "imag": elementwise.imag,
    "conj": elementwise.conj,
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
        return elementwise.cast(x, dtype)

    def flatten(self, x: Variable) -> Variable:
        return flatten(x)

    def shape(self, x: Variable) -> Variable:
        return shape(x)

    def method(self, name: MethodName, x: Variable, *args: Any) -> Variable:
        return _METHODS[name](x, *args)

    def ufunc(self, name: str, operands: tuple[Any, ...]) -> Variable:
        """The public `ops` function of NumPy's ufunc `name` (`np.subtract` is `pt.sub`)."""
        function_name = _UFUNC_NAMES.get(name, name)
        function = getattr(ops, function_name, None) if function_name in ops.__all__ else None
        if function is None:
            raise TypeError(
                f"numpy.{name} on a symbolic variable needs pt.{function_name}, which fgraph "
                "does not have; build the value from the ops functions (`import ops as pt`)"
            )
        result: Variable = function(*operands)
        return result

    def not_iterable(self, x: Variable) -> str:
        """Why `x` cannot be iterated or unpacked; for a loop's result, the PyTensor habit
        `ys, updates = pt.scan(...)` is the likely cause (a loop of one output returns a
        variable, which that unpacks), so the message says how fgraph's scan returns."""
        message = "a symbolic variable is not iterable; index it instead"
        if _from_loop(x):
            message += (
                " (it is a result of pt.scan, which returns only its outputs, one variable "
                "or a tuple of several, and no updates: write `ys = pt.scan(...)`, not "
                "PyTensor's `ys, updates = pt.scan(...)`)"
            )
        return message


def _from_loop(x: Variable) -> bool:
    """Whether `x` is a loop's output or the rows `pt.scan` cuts from one."""
    node = x.owner
    if node is not None and isinstance(node.op, subtensor.Subtensor):
        node = node.inputs[0].owner
    return node is not None and isinstance(node.op, Scan)


_UFUNC_NAMES: dict[str, str] = {
    "subtract": "sub", "multiply": "mul", "divide": "true_div", "floor_divide": "int_div",
    "remainder": "mod", "power": "pow", "negative": "neg", "absolute": "abs",
    "conjugate": "conj", "less": "lt", "less_equal": "le", "greater": "gt",
    "greater_equal": "ge", "equal": "eq", "not_equal": "neq", "rint": "round",
}
"""NumPy's ufunc names that differ from the `ops` function's (others are the same)."""


install(_Methods())
