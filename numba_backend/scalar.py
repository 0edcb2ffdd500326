"""Scalar ops as numba expressions over scalar operands (inlined into element loops).

Import op classes with `from ops.<module> import ...`: `ops.scalar` and `ops.shape` are
also names of user functions in the `ops` namespace, which shadow the submodules.
"""

from __future__ import annotations

import functools

from numba_backend.registry import MissingKernelError, dtype_expression
from ops.scalar import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NEQ,
    Abs,
    Add,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    Cast,
    Exp,
    IntDiv,
    Invert,
    Log,
    Mod,
    Mul,
    Neg,
    Pow,
    Second,
    Sign,
    Sub,
    TrueDiv,
    ScalarOp,
)


@functools.singledispatch
def scalar_expression(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
    """A numba expression computing `op` on scalar operands `args`."""
    raise MissingKernelError(f"no numba scalar expression for {type(op).__name__}")


def _register_binary(cls: type[ScalarOp], operator: str) -> None:
    def expression(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
        return f"({args[0]} {operator} {args[1]})"

    scalar_expression.register(cls)(expression)


def _register_call(cls: type[ScalarOp], function: str) -> None:
    def expression(op: ScalarOp, args: tuple[str, ...], out_dtype: str) -> str:
        return f"{function}({', '.join(args)})"

    scalar_expression.register(cls)(expression)


_OPERATORS: tuple[tuple[type[ScalarOp], str], ...] = (
    (Add, "+"),
    (Sub, "-"),
    (Mul, "*"),
    (TrueDiv, "/"),
    (IntDiv, "//"),
    (Pow, "**"),
    (LT, "<"),
    (LE, "<="),
    (GT, ">"),
    (GE, ">="),
    (EQ, "=="),
    (NEQ, "!="),
    (BitwiseAnd, "&"),
    (BitwiseOr, "|"),
    (BitwiseXor, "^"),
)
_FUNCTIONS: tuple[tuple[type[ScalarOp], str], ...] = (
    (Exp, "np.exp"),
    (Log, "np.log"),
    (Abs, "np.abs"),
    (Sign, "np.sign"),
    (Mod, "np.mod"),
    (Invert, "np.invert"),
)
for _op_class, _operator in _OPERATORS:
    _register_binary(_op_class, _operator)
for _op_class, _function in _FUNCTIONS:
    _register_call(_op_class, _function)


@scalar_expression.register
def _neg(op: Neg, args: tuple[str, ...], out_dtype: str) -> str:
    return f"(-{args[0]})"


@scalar_expression.register
def _second(op: Second, args: tuple[str, ...], out_dtype: str) -> str:
    return args[1]


@scalar_expression.register
def _cast(op: Cast, args: tuple[str, ...], out_dtype: str) -> str:
    return f"{dtype_expression(op.dtype)}({args[0]})"
