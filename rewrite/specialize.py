"""Specialization: replace general operations by cheaper special cases once the graph
is canonical and stable: small constant powers become multiplications (`x ** 3 -> x *
x * x`), `x ** 0.5` a square root, `1 / x` a reciprocal, and division by a float
constant a multiplication by its reciprocal.

The power rules compute in the power's own result dtype (an `int8 ** 2.0` is a float
power, so `x` is cast first), so results agree with `numpy.power` to rounding. Two
edges of IEEE `pow` are not kept by `sqrt`: `(-inf) ** 0.5` is inf where `sqrt` gives
nan, and `(-0.0) ** 0.5` is 0.0 where `sqrt` gives -0.0 (as in PyTensor and numexpr).
`x / c -> x * (1 / c)` may differ from the division in the last bit, and only fires
where `1 / c` is a finite, non-zero float.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fgraph import Apply, Constant, Variable
from fgraph.dtypes import is_float, is_inexact
from ops.elemwise import Elemwise
from ops.scalar_ops import Mul, Pow, Reciprocal, Sqrt, Square, TrueDiv
from rewrite.patterns import constant_data, fit_to_type, is_constant_value, replacement
from rewrite.rules import RuleSet, rule


def _single_value(variable: Variable) -> float | None:
    """The one real value every element of a constant `variable` holds, else None."""
    data = constant_data(variable)
    if data is None or data.size == 0 or np.iscomplexobj(data):
        return None
    first = data.flat[0]
    return float(first) if bool(np.all(data == first)) else None


def _mul(x: Variable, y: Variable) -> Variable:
    return Elemwise(Mul())(x, y)


def _power_by_multiplication(x: Variable, exponent: float) -> Variable | None:
    """`x ** exponent` for the exponents it is cheaper to multiply out, else None."""
    if exponent == 2:
        return Elemwise(Square())(x)
    if exponent == 3:
        return _mul(Elemwise(Square())(x), x)
    if exponent == 4:
        return Elemwise(Square())(Elemwise(Square())(x))
    if exponent == 0.5:
        return Elemwise(Sqrt())(x) if is_inexact(x.dtype) else None
    if exponent == -1:
        return Elemwise(Reciprocal())(x) if is_inexact(x.dtype) else None
    if exponent == -2:
        return Elemwise(Reciprocal())(Elemwise(Square())(x)) if is_inexact(x.dtype) else None
    return None


@rule(Elemwise)
def small_power(node: Apply) -> Sequence[Variable] | None:
    """x ** 2, 3, 4 -> multiplications; x ** 0.5 -> sqrt(x); x ** -1, -2 -> reciprocals
    (the last three for float and complex results only: integers to negative powers are
    an error in NumPy)."""
    match node:
        case Apply(op=Elemwise(scalar_op=Pow()), inputs=(x, power)):
            exponent = _single_value(power)
            if exponent is None:
                return None
            base = fit_to_type(x, node.out.type)  # computed in the power's result dtype
            if base is None:
                return None
            result = _power_by_multiplication(base, exponent)
            return None if result is None else replacement(result, node.out)
    return None


@rule(Elemwise)
def div_by_constant(node: Apply) -> Sequence[Variable] | None:
    """x / c -> x * (1 / c) for a float constant c whose reciprocal is a finite,
    non-zero float (a multiplication is several times cheaper than a division)."""
    match node:
        case Apply(op=Elemwise(scalar_op=TrueDiv()), inputs=(x, divisor)) if (
            is_float(node.out.dtype) and is_float(divisor.dtype)
        ):
            data = constant_data(divisor)
            if data is None:
                return None
            with np.errstate(all="ignore"):
                inverse = np.reciprocal(data)
            if not (np.all(np.isfinite(inverse)) and np.all(inverse != 0)):
                return None
            product = _mul(x, Constant(inverse))
            return (product,) if product.type == node.out.type else None
    return None


@rule(Elemwise)
def one_over(node: Apply) -> Sequence[Variable] | None:
    """1 / x -> reciprocal(x) for float results (the same IEEE division, without
    broadcasting a constant)."""
    match node:
        case Apply(op=Elemwise(scalar_op=TrueDiv()), inputs=(one, x)) if (
            is_inexact(node.out.dtype) and is_constant_value(one, 1)
        ):
            operand = fit_to_type(x, node.out.type)
            return None if operand is None else (Elemwise(Reciprocal())(operand),)
    return None


SPECIALIZE = RuleSet("specialize", (small_power, div_by_constant, one_over))
"""Cheaper special cases of powers and divisions."""
