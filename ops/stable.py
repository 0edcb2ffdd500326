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

import functools
from collections.abc import Callable

import attrs

from fgraph import Apply, TensorType, Variable
from fgraph.dtypes import is_float
from ops.dimshuffle import DimShuffle
from ops.elemwise import Elemwise
from ops.elementwise_functions import cast
from ops.matching import fit_to_type, is_constant_value
from ops.gradient_control import StopGradient
from ops.reduction import Max, Sum, logsumexp
from ops.scalar_ops import (
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
    """A logarithm of type `type` is `formula(operand)`, computed stably from `operand`,
    the one variable outside the pattern that it reads. A formula rather than a value, so
    `grad` can differentiate it on a stand-in for the operand, without walking (or
    rebuilding) everything the operand depends on."""

    operand: Variable
    formula: Callable[[Variable], Variable]
    type: TensorType

    def value_of(self, operand: Variable) -> Variable:
        """The stable value for `operand` (or a stand-in of the same type): the formula on
        `operand` in the logarithm's dtype, fitted to its type."""
        value = _fitted(self.formula, operand, self.type)
        if value is None:  # `_form` checked the fit for the operand's type
            raise TypeError(f"the stable form of type {self.type} does not fit {operand}")
        return value

    @property
    def value(self) -> Variable:
        """The stable value, standing for the logarithm."""
        return self.value_of(self.operand)


def _fitted(
    formula: Callable[[Variable], Variable], operand: Variable, target: TensorType
) -> Variable | None:
    """`formula(operand)` computed in `target`'s dtype, or None if its shape differs (as
    when a broadcast constant gave the logarithm its rank)."""
    return fit_to_type(formula(cast(operand, target.dtype)), target)


def _form(
    formula: Callable[[Variable], Variable], operand: Variable, log: Apply
) -> StableForm | None:
    """The stable form `formula(operand)` of the logarithm `log`, if it fits its type."""
    target = log.outputs[0].type
    fits = _fitted(formula, operand, target) is not None
    return StableForm(operand, formula, target) if fits else None


def _same(x: Variable) -> Variable:
    return x


def _neg(x: Variable) -> Variable:
    return Elemwise(Neg())(x)


def _softplus(x: Variable) -> Variable:
    return Elemwise(Softplus())(x)


def _log_sigmoid(x: Variable) -> Variable:
    return _neg(_softplus(_neg(x)))


def _log_one_minus_sigmoid(x: Variable) -> Variable:
    return _neg(_softplus(x))


def _log1mexp(x: Variable) -> Variable:
    return Elemwise(Log1mexp())(x)


def _log_softmax(axes: tuple[int, ...], shuffle: DimShuffle, s: Variable) -> Variable:
    """s - shuffle(log(sum(exp(s), axes))), the shuffle broadcasting the sum back."""
    return Elemwise(Sub())(s, shuffle(Elemwise(Log())(Sum(axes)(Elemwise(Exp())(s)))))


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
            return _form(_same, x, node)
    return None


def log_of_sigmoid(node: Apply) -> StableForm | None:
    """log(sigmoid(x)) -> -softplus(-x), finite where sigmoid underflows to 0."""
    inner = _argument(node)
    match inner:
        case Apply(op=Elemwise(scalar_op=Sigmoid()), inputs=(x,)) if _is_log(node):
            return _form(_log_sigmoid, x, node)
    return None


def log_of_one_minus_sigmoid(node: Apply) -> StableForm | None:
    """log(1 - sigmoid(x)) -> -softplus(x), finite where 1 - sigmoid(x) cancels to 0."""
    inner = _argument(node)
    match inner:
        case Apply(
            op=Elemwise(scalar_op=Sub()),
            inputs=(one, Variable(owner=Apply(op=Elemwise(scalar_op=Sigmoid()), inputs=(x,)))),
        ) if _is_log(node) and is_constant_value(one, 1):
            return _form(_log_one_minus_sigmoid, x, node)
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
    return _form(_softplus, x, node)


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
    return _form(_log1mexp, x, node)


def _is_max_shifted(variable: Variable) -> bool:
    """Whether `variable` is `v - shuffle(max(v))` (or with the maximum set to 0 where it
    is infinite, as `ops.logsumexp` does, or under `stop_gradient`): already shifted, so
    not to shift again."""
    match variable.owner:
        case Apply(
            op=Elemwise(scalar_op=Sub()),
            inputs=(source, Variable(owner=Apply(op=DimShuffle(), inputs=(shift,)))),
        ):
            match shift.owner:  # the shift is under stop_gradient (ops.reduction._shifted)
                case Apply(op=StopGradient(), inputs=(stopped,)):
                    shift = stopped
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
                return _form(functools.partial(logsumexp, axis=axes), x, node)
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
            match total.owner:
                case Apply(op=Sum(axes=axes), inputs=(summed,)) if (
                    s is not None and is_float(s.dtype) and summed == exps
                ):
                    return _form(functools.partial(_log_softmax, axes, shuffle), s, node)
    return None


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
