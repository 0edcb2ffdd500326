"""The table of elementwise functions the elemwise tests sweep: each with its NumPy
reference and, for differentiable ones, an input domain away from singularities and
discontinuities (where finite differences are meaningful)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

import ops as pt
from fgraph import Variable

Array = np.ndarray[Any, np.dtype[Any]]
Domain = tuple[float, float]


def float_dtype_of(x: Array) -> str:
    """The dtype NumPy's unary float functions give for `x` (float16 for int8/bool)."""
    return np.exp(np.zeros(0, dtype=x.dtype)).dtype.name


def in_float64(function: Callable[[Array], Array]) -> Callable[[Array], Array]:
    """A reference computed in float64, returned in the dtype NumPy's float functions give."""

    def reference(x: Array) -> Array:
        result: Array = function(x.astype("float64")).astype(float_dtype_of(x))
        return result

    return reference


reference_sigmoid = in_float64(lambda x: 1 / (1 + np.exp(-x)))
reference_softplus = in_float64(lambda x: np.log(1 + np.exp(x)))
reference_log1mexp = in_float64(lambda x: np.log(1 - np.exp(x)))
reference_erf = in_float64(np.vectorize(math.erf, otypes=["float64"]))
reference_erfc = in_float64(np.vectorize(math.erfc, otypes=["float64"]))


def reference_ceil_intdiv(a: Array, b: Array) -> Array:
    """PyTensor's definition: a // b, plus one where a % b leaves a remainder."""
    quotient = np.floor_divide(a, b)
    result: Array = quotient + (np.mod(a, b) != 0).astype(quotient.dtype)
    return result


@attrs.frozen
class Case:
    name: str
    build: Callable[..., Variable]
    reference: Callable[..., Array]
    domains: tuple[Domain, ...]
    differentiable: bool = True

    @property
    def nin(self) -> int:
        return len(self.domains)


WIDE: Domain = (-2.0, 2.0)
POSITIVE: Domain = (0.3, 3.0)
UNIT: Domain = (-0.9, 0.9)

CASES: tuple[Case, ...] = (
    Case("add", pt.add, np.add, (WIDE, WIDE)),
    Case("sub", pt.sub, np.subtract, (WIDE, WIDE)),
    Case("mul", pt.mul, np.multiply, (WIDE, WIDE)),
    Case("true_div", pt.true_div, np.true_divide, (WIDE, POSITIVE)),
    Case("int_div", pt.int_div, np.floor_divide, (WIDE, POSITIVE), differentiable=False),
    Case("mod", pt.mod, np.mod, ((0.1, 3.0), (0.7, 1.5))),
    Case("pow", pt.pow, np.power, (POSITIVE, WIDE)),
    Case("neg", pt.neg, np.negative, (WIDE,)),
    Case("abs", pt.abs, np.abs, (WIDE,)),
    Case("sign", pt.sign, np.sign, (WIDE,), differentiable=False),
    Case("reciprocal", pt.reciprocal, np.reciprocal, (POSITIVE,)),
    Case("square", pt.square, np.square, (WIDE,)),
    Case("sqrt", pt.sqrt, np.sqrt, (POSITIVE,)),
    Case("maximum", pt.maximum, np.maximum, (WIDE, WIDE)),
    Case("minimum", pt.minimum, np.minimum, (WIDE, WIDE)),
    Case("clip", pt.clip, np.clip, (WIDE, (-1.5, -0.5), (0.5, 1.5))),
    Case("where", pt.where, np.where, (WIDE, WIDE, WIDE)),
    Case("exp", pt.exp, np.exp, (WIDE,)),
    Case("exp2", pt.exp2, np.exp2, (WIDE,)),
    Case("expm1", pt.expm1, np.expm1, (WIDE,)),
    Case("log", pt.log, np.log, (POSITIVE,)),
    Case("log2", pt.log2, np.log2, (POSITIVE,)),
    Case("log10", pt.log10, np.log10, (POSITIVE,)),
    Case("log1p", pt.log1p, np.log1p, ((-0.5, 2.0),)),
    Case("log1mexp", pt.log1mexp, reference_log1mexp, ((-3.0, -0.1),)),
    Case("sigmoid", pt.sigmoid, reference_sigmoid, ((-4.0, 4.0),)),
    Case("softplus", pt.softplus, reference_softplus, ((-4.0, 4.0),)),
    Case("erf", pt.erf, reference_erf, (WIDE,)),
    Case("erfc", pt.erfc, reference_erfc, (WIDE,)),
    Case("sin", pt.sin, np.sin, (WIDE,)),
    Case("cos", pt.cos, np.cos, (WIDE,)),
    Case("tan", pt.tan, np.tan, ((-1.2, 1.2),)),
    Case("arcsin", pt.arcsin, np.arcsin, (UNIT,)),
    Case("arccos", pt.arccos, np.arccos, (UNIT,)),
    Case("arctan", pt.arctan, np.arctan, (WIDE,)),
    Case("arctan2", pt.arctan2, np.arctan2, (WIDE, POSITIVE)),
    Case("sinh", pt.sinh, np.sinh, (WIDE,)),
    Case("cosh", pt.cosh, np.cosh, (WIDE,)),
    Case("tanh", pt.tanh, np.tanh, (WIDE,)),
    Case("arcsinh", pt.arcsinh, np.arcsinh, (WIDE,)),
    Case("arccosh", pt.arccosh, np.arccosh, ((1.2, 3.0),)),
    Case("arctanh", pt.arctanh, np.arctanh, (UNIT,)),
    Case("floor", pt.floor, np.floor, (WIDE,), differentiable=False),
    Case("ceil", pt.ceil, np.ceil, (WIDE,), differentiable=False),
    Case("round", pt.round, np.round, (WIDE,), differentiable=False),
    Case("trunc", pt.trunc, np.trunc, (WIDE,), differentiable=False),
    Case("ceil_intdiv", pt.ceil_intdiv, reference_ceil_intdiv, (WIDE, POSITIVE),
         differentiable=False),
    Case("deg2rad", pt.deg2rad, np.deg2rad, (WIDE,)),
    Case("rad2deg", pt.rad2deg, np.rad2deg, (WIDE,)),
    Case("nan_to_num", pt.nan_to_num, np.nan_to_num, (WIDE,)),
    Case("lt", pt.lt, np.less, (WIDE, WIDE), differentiable=False),
    Case("le", pt.le, np.less_equal, (WIDE, WIDE), differentiable=False),
    Case("gt", pt.gt, np.greater, (WIDE, WIDE), differentiable=False),
    Case("ge", pt.ge, np.greater_equal, (WIDE, WIDE), differentiable=False),
    Case("eq", pt.eq, np.equal, (WIDE, WIDE), differentiable=False),
    Case("neq", pt.neq, np.not_equal, (WIDE, WIDE), differentiable=False),
    Case("logical_and", pt.logical_and, np.logical_and, (WIDE, WIDE), differentiable=False),
    Case("logical_or", pt.logical_or, np.logical_or, (WIDE, WIDE), differentiable=False),
    Case("logical_xor", pt.logical_xor, np.logical_xor, (WIDE, WIDE), differentiable=False),
    Case("logical_not", pt.logical_not, np.logical_not, (WIDE,), differentiable=False),
    Case("bitwise_and", pt.bitwise_and, np.bitwise_and, (WIDE, WIDE), differentiable=False),
    Case("bitwise_or", pt.bitwise_or, np.bitwise_or, (WIDE, WIDE), differentiable=False),
    Case("bitwise_xor", pt.bitwise_xor, np.bitwise_xor, (WIDE, WIDE), differentiable=False),
    Case("invert", pt.invert, np.invert, (WIDE,), differentiable=False),
    Case("isnan", pt.isnan, np.isnan, (WIDE,), differentiable=False),
    Case("isinf", pt.isinf, np.isinf, (WIDE,), differentiable=False),
    Case("isfinite", pt.isfinite, np.isfinite, (WIDE,), differentiable=False),
)

# `where` differentiated through its value inputs; its condition has no derivative.
WHERE_BY_SIGN = Case(
    "where",
    lambda x, y: pt.where(pt.gt(x, 0), x, y * 2),
    lambda x, y: np.where(x > 0, x, y * 2),
    (WIDE, WIDE),
)
DIFFERENTIABLE: tuple[Case, ...] = tuple(
    WHERE_BY_SIGN if case.name == "where" else case for case in CASES if case.differentiable
)


def sample(case: Case, shapes: tuple[tuple[int, ...], ...], seed: int = 0) -> list[Array]:
    """float64 values in each input's domain."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(low, high, size=shape) for (low, high), shape in zip(case.domains, shapes)]
