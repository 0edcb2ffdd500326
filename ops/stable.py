"""Stable forms of logarithms that overflow, underflow or cancel in floating point:
`log(sigmoid(x)) = -softplus(-x)`, `log(1 + exp(x)) = softplus(x)`,
`log(1 - exp(x)) = log1mexp(x)`, `log(sum(exp(x)))` max-shifted, `log(softmax)` as
`s - log(sum(exp(s)))`, ...

Each form is defined once, here, and used twice: `rewrite.stabilize` replaces the value
by it, and `grad` differentiates a matched logarithm through it, straight to the
variables the pattern reads. The second matters because the chain rule through the
naive formula multiplies an infinity by a zero (the derivative of `log(sigmoid(x))` at
x = -1000 is `(1 / 0) * 0`), which no rewrite of the value can undo afterwards.

The forms apply to real floating-point values only (complex logarithms wrap their phase,
and integer inputs would change where overflow happens). One edge differs: the
max-shifted log-sum-exp takes a maximum, so over an axis that turns out empty at run
time it raises (as `ops.logsumexp` does) where the naive form gives -inf.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from fgraph import Apply, Variable
from fgraph.dtypes import is_float
from ops.dimshuffle import DimShuffle
from ops.elemwise import Elemwise
from ops.matching import fit_to_type, is_constant_value
from ops.reduction import Max, Sum, logsumexp
from ops.scalar import (
    Add,
    Exp,
    Expm1,
    Log,
    Log1mexp,
    Log1p,
    Neg,
    Sigmoid,
    Softplus,
    Sub,
    Switch,
    TrueDiv,
)


@attrs.frozen
class StableForm:
    """`value` equals the matched logarithm (same type) and is computed stably from
    `operands`, the variables outside the pattern that it reads."""

    value: Variable
    operands: tuple[Variable, ...]


def _form(candidate: Variable, operand: Variable, log: Apply) -> StableForm | None:
    """`candidate`, standing for the output of `log`, fitted to its type (None if a shape
    would change, as when a broadcast constant gave the logarithm its rank)."""
    fitted = fit_to_type(candidate, log.outputs[0].type)
    return None if fitted is None else StableForm(fitted, (operand,))


def _neg(x: Variable) -> Variable:
    return Elemwise(Neg())(x)


def _softplus(x: Variable) -> Variable:
    return Elemwise(Softplus())(x)


def _argument(node: Apply) -> Apply | None:
    """The node computing the argument of the logarithm `node` (`log` or `log1p`)."""
    match node:
        case Apply(
            op=Elemwise(scalar_op=Log() | Log1p()), inputs=(Variable(owner=Apply() as inner),)
        ) if is_float(node.outputs[0].dtype):
            return inner
    return None


def _is_log(node: Apply) -> bool:
    return isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Log)


def _is_log1p(node: Apply) -> bool:
    return isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Log1p)


def log_of_exp(node: Apply) -> StableForm | None:
    """log(exp(x)) -> x for real x, which exp would overflow to inf (or underflow to 0)."""
    inner = _argument(node)
    match inner:
        case Apply(op=Elemwise(scalar_op=Exp()), inputs=(x,)) if _is_log(node):
            return _form(x, x, node)
    return None


def log_of_sigmoid(node: Apply) -> StableForm | None:
    """log(sigmoid(x)) -> -softplus(-x), finite where sigmoid underflows to 0."""
    inner = _argument(node)
    match inner:
        case Apply(op=Elemwise(scalar_op=Sigmoid()), inputs=(x,)) if _is_log(node):
            operand = fit_to_type(x, inner.outputs[0].type)  # sigmoid's float dtype
            if operand is not None:
                return _form(_neg(_softplus(_neg(operand))), x, node)
    return None


def log_of_one_minus_sigmoid(node: Apply) -> StableForm | None:
    """log(1 - sigmoid(x)) -> -softplus(x), finite where 1 - sigmoid(x) cancels to 0."""
    inner = _argument(node)
    match inner:
        case Apply(
            op=Elemwise(scalar_op=Sub()),
            inputs=(one, Variable(owner=Apply(op=Elemwise(scalar_op=Sigmoid()), inputs=(x,)))),
        ) if _is_log(node) and is_constant_value(one, 1):
            operand = fit_to_type(x, inner.outputs[0].type)  # sigmoid's float dtype
            if operand is not None:
                return _form(_neg(_softplus(operand)), x, node)
    return None


def _exp_argument(variable: Variable) -> Variable | None:
    """`x` when `variable` is exp(x), else None."""
    match variable.owner:
        case Apply(op=Elemwise(scalar_op=Exp()), inputs=(x,)):
            return x
    return None


def log_of_one_plus_exp(node: Apply) -> StableForm | None:
    """log(1 + exp(x)) and log1p(exp(x)) -> softplus(x), finite where exp(x) overflows."""
    inner = _argument(node)
    x: Variable | None = None
    match inner:
        case Apply(op=Elemwise(scalar_op=Exp()), inputs=(exponent,)) if _is_log1p(node):
            x = exponent
        case Apply(op=Elemwise(scalar_op=Add()), inputs=(left, right)) if _is_log(node):
            if is_constant_value(left, 1):
                x = _exp_argument(right)
            elif is_constant_value(right, 1):
                x = _exp_argument(left)
    if x is None or not is_float(x.dtype):
        return None
    return _form(_softplus(x), x, node)


def log_of_one_minus_exp(node: Apply) -> StableForm | None:
    """log(1 - exp(x)), log(-expm1(x)) and log1p(-exp(x)) -> log1mexp(x), accurate both
    where 1 - exp(x) cancels (x near 0) and where -expm1(x) rounds to 1 (x very negative)."""
    inner = _argument(node)
    x: Variable | None = None
    match inner:
        case Apply(op=Elemwise(scalar_op=Sub()), inputs=(one, exps)) if (
            _is_log(node) and is_constant_value(one, 1)
        ):
            x = _exp_argument(exps)
        case Apply(
            op=Elemwise(scalar_op=Neg()),
            inputs=(Variable(owner=Apply(op=Elemwise(scalar_op=Expm1()), inputs=(exponent,))),),
        ) if _is_log(node):
            x = exponent
        case Apply(op=Elemwise(scalar_op=Neg()), inputs=(exps,)) if _is_log1p(node):
            x = _exp_argument(exps)
    if x is None or not is_float(x.dtype):
        return None
    return _form(Elemwise(Log1mexp())(x), x, node)


def _is_max_shifted(variable: Variable) -> bool:
    """Whether `variable` is `v - shuffle(max(v))` (or with the maximum set to 0 where it
    is infinite, as `ops.logsumexp` does): already shifted, so not to shift again."""
    match variable.owner:
        case Apply(
            op=Elemwise(scalar_op=Sub()),
            inputs=(source, Variable(owner=Apply(op=DimShuffle(), inputs=(shift,)))),
        ):
            match shift.owner:
                case Apply(op=Elemwise(scalar_op=Switch()), inputs=(_, highest, _)):
                    shift = highest
            match shift.owner:
                case Apply(op=Max(), inputs=(maximized,)):
                    return maximized == source
    return False


def log_sum_exp(node: Apply) -> StableForm | None:
    """log(sum(exp(x))) -> the max-shifted form (`ops.logsumexp`), finite where exp(x)
    overflows."""
    inner = _argument(node)
    match inner:
        case Apply(op=Sum(axes=axes), inputs=(summed,)) if axes and _is_log(node):
            x = _exp_argument(summed)
            if (
                x is not None
                and is_float(x.dtype)
                and not _is_max_shifted(x)
                and all(x.type.shape[axis] != 0 for axis in axes)
            ):
                return _form(logsumexp(x, axes), x, node)
    return None


def log_of_softmax(node: Apply) -> StableForm | None:
    """log(exp(s) / shuffle(sum(exp(s)))) -> s - shuffle(log(sum(exp(s)))): the
    log-softmax form, which neither takes log(0) where the softmax underflows nor divides.
    (An unshifted s then gets its log-sum-exp stabilized by `log_sum_exp`.)"""
    inner = _argument(node)
    match inner:
        case Apply(
            op=Elemwise(scalar_op=TrueDiv()),
            inputs=(exps, Variable(owner=Apply(op=DimShuffle() as shuffle, inputs=(total,)))),
        ) if _is_log(node):
            s = _exp_argument(exps)
            if s is not None and is_float(s.dtype) and _is_sum_of(total, exps):
                normalizer = shuffle(Elemwise(Log())(total))
                return _form(Elemwise(Sub())(s, normalizer), s, node)
    return None


def _is_sum_of(total: Variable, summed: Variable) -> bool:
    """Whether `total` is a sum of `summed` (outputs are equal by node and index: `==`)."""
    match total.owner:
        case Apply(op=Sum(), inputs=(source,)):
            return source == summed
    return False


STABLE_FORMS: tuple[Callable[[Apply], StableForm | None], ...] = (
    log_of_exp,
    log_of_sigmoid,
    log_of_one_minus_sigmoid,
    log_of_one_plus_exp,
    log_of_one_minus_exp,
    log_sum_exp,
    log_of_softmax,
)
"""Every stable form, each a matcher `(node) -> StableForm | None`."""


def stable_form(node: Apply) -> StableForm | None:
    """The stable form of the logarithm `node` computes, if it matches one."""
    if _argument(node) is None:
        return None
    for match_form in STABLE_FORMS:
        form = match_form(node)
        if form is not None:
            return form
    return None
