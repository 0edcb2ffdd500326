"""Scalar ops: the functions `Elemwise` maps over arrays and fused kernels inline.

A scalar op says three things: its NumPy implementation (`impl`, vectorized), its
output dtype (by default whatever NumPy's implementation gives for the input dtypes,
so promotion matches NumPy exactly), and its `partials`: the derivative of the output
with respect to each input as graph expressions, or None where it is zero or undefined.
Reverse and forward mode both derive from `partials` (see `Elemwise`), so each
derivative is written once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

import attrs
import numpy as np

import ops.elemwise as ew
from fgraph import Variable
from fgraph.op import Array

Partials = tuple[Variable | None, ...]


class ScalarOp:
    """Base of scalar ops; subclasses are `@attrs.frozen` and set `nin` and `ufunc`."""

    __slots__ = ()
    nin: ClassVar[int]
    ufunc: ClassVar[Callable[..., Any]]

    def impl(self, *inputs: Array) -> Array:
        return np.asarray(self.ufunc(*inputs))

    def output_dtype(self, *dtypes: str) -> str:
        return _numpy_output_dtype(self, dtypes)

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        """d output / d input_i, elementwise; None where the derivative is zero."""
        raise NotImplementedError(f"{type(self).__name__} is not differentiable")

    def __str__(self) -> str:
        return type(self).__name__


@functools.lru_cache(maxsize=8192)
def _numpy_output_dtype(op: ScalarOp, dtypes: tuple[str, ...]) -> str:
    """Apply the NumPy implementation to empty arrays: exact NumPy dtype semantics."""
    with np.errstate(all="ignore"):
        return op.impl(*(np.zeros(1, dtype=dtype) for dtype in dtypes)).dtype.name


# --- arithmetic ------------------------------------------------------------------------
@attrs.frozen
class Add(ScalarOp):
    nin = 2
    ufunc = np.add

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (ew.ones_like(output), ew.ones_like(output))


@attrs.frozen
class Sub(ScalarOp):
    nin = 2
    ufunc = np.subtract

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (ew.ones_like(output), -ew.ones_like(output))


@attrs.frozen
class Mul(ScalarOp):
    nin = 2
    ufunc = np.multiply

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x, y = inputs
        return (y, x)


@attrs.frozen
class TrueDiv(ScalarOp):
    nin = 2
    ufunc = np.true_divide

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x, y = inputs
        return (1 / y, -output / y)


@attrs.frozen
class Pow(ScalarOp):
    nin = 2
    ufunc = np.power

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x, y = inputs
        return (y * x ** (y - 1), output * ew.log(x))


@attrs.frozen
class Neg(ScalarOp):
    nin = 1
    ufunc = np.negative

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (-ew.ones_like(output),)


@attrs.frozen
class Second(ScalarOp):
    """`second(x, y)`: y broadcast to the broadcast shape of both (PyTensor's `fill`)."""

    nin = 2

    @staticmethod
    def ufunc(x: Array, y: Array) -> Array:
        return np.broadcast_to(y, np.broadcast_shapes(x.shape, y.shape)).copy()

    def output_dtype(self, *dtypes: str) -> str:
        return dtypes[1]

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (None, ew.ones_like(output))


@attrs.frozen
class IntDiv(ScalarOp):
    """Floor division, as `numpy.floor_divide` (piecewise constant: zero derivative)."""

    nin = 2
    ufunc = np.floor_divide

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (None, None)


@attrs.frozen
class Mod(ScalarOp):
    """Remainder with the sign of the divisor, as `numpy.mod`."""

    nin = 2
    ufunc = np.mod

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        x, y = inputs
        return (ew.ones_like(output), -ew.int_div(x, y))


@attrs.frozen
class Abs(ScalarOp):
    nin = 1
    ufunc = np.abs

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (ew.sign(inputs[0]),)


@attrs.frozen
class Sign(ScalarOp):
    nin = 1
    ufunc = np.sign

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (None,)


class _NonDifferentiable(ScalarOp):
    """Comparisons and logical/bitwise ops: boolean or integer results, no derivative."""

    __slots__ = ()

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (None,) * len(inputs)


@attrs.frozen
class LT(_NonDifferentiable):
    nin = 2
    ufunc = np.less


@attrs.frozen
class LE(_NonDifferentiable):
    nin = 2
    ufunc = np.less_equal


@attrs.frozen
class GT(_NonDifferentiable):
    nin = 2
    ufunc = np.greater


@attrs.frozen
class GE(_NonDifferentiable):
    nin = 2
    ufunc = np.greater_equal


@attrs.frozen
class EQ(_NonDifferentiable):
    nin = 2
    ufunc = np.equal


@attrs.frozen
class NEQ(_NonDifferentiable):
    nin = 2
    ufunc = np.not_equal


@attrs.frozen
class BitwiseAnd(_NonDifferentiable):
    """`&`: logical and on booleans, bitwise on integers."""

    nin = 2
    ufunc = np.bitwise_and


@attrs.frozen
class BitwiseOr(_NonDifferentiable):
    nin = 2
    ufunc = np.bitwise_or


@attrs.frozen
class BitwiseXor(_NonDifferentiable):
    nin = 2
    ufunc = np.bitwise_xor


@attrs.frozen
class Invert(_NonDifferentiable):
    """`~`: logical not on booleans, bitwise not on integers."""

    nin = 1
    ufunc = np.invert


# --- exponentials and logarithms --------------------------------------------------------
@attrs.frozen
class Exp(ScalarOp):
    nin = 1
    ufunc = np.exp

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (output,)


@attrs.frozen
class Log(ScalarOp):
    nin = 1
    ufunc = np.log

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (1 / inputs[0],)


@attrs.frozen
class Cast(ScalarOp):
    """Conversion to `dtype` (NumPy `astype`, unsafe casting allowed)."""

    dtype: str
    nin = 1

    def impl(self, *inputs: Array) -> Array:
        return inputs[0].astype(self.dtype)

    def output_dtype(self, *dtypes: str) -> str:
        return self.dtype

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (ew.ones_like(output),)

    def __str__(self) -> str:
        return f"Cast{{{self.dtype}}}"

