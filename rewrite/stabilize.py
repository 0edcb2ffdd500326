"""Stabilization: rewrite formulas that overflow, underflow or cancel in floating point
into equivalent ones that do not (`log(1 + x) -> log1p(x)`, `log(sigmoid(x)) ->
-softplus(-x)`, `log(sum(exp(x)))` -> the max-shifted log-sum-exp).

Where the naive formula is finite the result agrees with it to rounding; where it
overflows or loses everything to cancellation the result is the finite, accurate value.
The rules apply to real floating-point values only (complex logarithms wrap their
phase, and integer inputs would change where overflow happens). One edge differs: the
max-shifted log-sum-exp takes a maximum, so over an axis that turns out empty at run
time it raises (as `ops.logsumexp` does) where the naive form gives -inf.
"""

from __future__ import annotations

from collections.abc import Sequence

from fgraph import Apply, Variable
from fgraph.dtypes import is_float
from ops.dimshuffle import DimShuffle
from ops.elemwise import Elemwise, isfinite, where
from ops.reduction import Max, Sum, restore_axes
from ops.scalar import Add, Exp, Expm1, Log, Log1p, Neg, Sigmoid, Softplus, Sub, Switch, TrueDiv
from rewrite.patterns import fit_to_type, is_constant_value, replacement
from rewrite.rule import RuleSet, rule


def _neg(x: Variable) -> Variable:
    return Elemwise(Neg())(x)


def _softplus(x: Variable) -> Variable:
    return Elemwise(Softplus())(x)


@rule(Elemwise)
def log_one_plus(node: Apply) -> Sequence[Variable] | None:
    """log(1 + x) -> log1p(x), which keeps the digits of small x that 1 + x rounds away."""
    match node:
        case Apply(op=Elemwise(scalar_op=Log()), inputs=(Variable(owner=Apply() as inner),)):
            match inner:
                case Apply(op=Elemwise(scalar_op=Add()), inputs=(x, one)) if is_constant_value(
                    one, 1
                ):
                    return _log1p(x, inner.out, node.out)
                case Apply(op=Elemwise(scalar_op=Add()), inputs=(one, x)) if is_constant_value(
                    one, 1
                ):
                    return _log1p(x, inner.out, node.out)
    return None


def _log1p(x: Variable, one_plus_x: Variable, log: Variable) -> Sequence[Variable] | None:
    """log1p of `x` computed in the dtype `one_plus_x` was, standing for `log`."""
    if not is_float(one_plus_x.dtype):
        return None
    operand = fit_to_type(x, one_plus_x.type)
    return None if operand is None else replacement(Elemwise(Log1p())(operand), log)


@rule(Elemwise)
def exp_minus_one(node: Apply) -> Sequence[Variable] | None:
    """exp(x) - 1 -> expm1(x), which keeps the digits of small x that exp(x) - 1 cancels."""
    match node:
        case Apply(op=Elemwise(scalar_op=Sub()), inputs=(Variable(owner=Apply() as inner), one)):
            match inner:
                case Apply(op=Elemwise(scalar_op=Exp()), inputs=(x,)) if (
                    is_float(inner.out.dtype) and is_constant_value(one, 1)
                ):
                    return replacement(Elemwise(Expm1())(x), node.out)
    return None


@rule(Elemwise)
def log_of_exp(node: Apply) -> Sequence[Variable] | None:
    """log(exp(x)) -> x for real x, which exp would overflow to inf (or underflow to 0)."""
    match node:
        case Apply(op=Elemwise(scalar_op=Log()), inputs=(Variable(owner=Apply() as inner),)):
            match inner:
                case Apply(op=Elemwise(scalar_op=Exp()), inputs=(x,)) if is_float(inner.out.dtype):
                    return replacement(x, node.out)
    return None


@rule(Elemwise)
def log_of_sigmoid(node: Apply) -> Sequence[Variable] | None:
    """log(sigmoid(x)) -> -softplus(-x), finite where sigmoid underflows to 0."""
    match node:
        case Apply(op=Elemwise(scalar_op=Log()), inputs=(Variable(owner=Apply() as inner),)):
            match inner:
                case Apply(op=Elemwise(scalar_op=Sigmoid()), inputs=(x,)) if is_float(
                    inner.out.dtype
                ):
                    operand = fit_to_type(x, inner.out.type)
                    if operand is not None:
                        return replacement(_neg(_softplus(_neg(operand))), node.out)
    return None


@rule(Elemwise)
def log_of_one_minus_sigmoid(node: Apply) -> Sequence[Variable] | None:
    """log(1 - sigmoid(x)) -> -softplus(x), finite where 1 - sigmoid(x) cancels to 0."""
    match node:
        case Apply(op=Elemwise(scalar_op=Log()), inputs=(Variable(owner=Apply() as inner),)):
            match inner:
                case Apply(
                    op=Elemwise(scalar_op=Sub()),
                    inputs=(
                        one,
                        Variable(owner=Apply(op=Elemwise(scalar_op=Sigmoid()), inputs=(x,))),
                    ),
                ) if is_float(inner.out.dtype) and is_constant_value(one, 1):
                    operand = fit_to_type(x, inner.out.type)
                    if operand is not None:
                        return replacement(_neg(_softplus(operand)), node.out)
    return None


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
                    return maximized is source
    return False


def _stable_log_sum_exp(x: Variable, axes: tuple[int, ...]) -> Variable:
    """log(sum(exp(x), axes)) with the maximum shifted out (kept at 0 where infinite, so
    infinities give inf / -inf), as `ops.logsumexp` builds it."""
    highest = Max(axes)(x)
    shift = where(isfinite(highest), highest, 0)
    shifted = Elemwise(Sub())(x, restore_axes(shift, axes, x.ndim))
    total = Sum(axes)(Elemwise(Exp())(shifted))
    return Elemwise(Add())(Elemwise(Log())(total), shift)


@rule(Elemwise)
def log_sum_exp(node: Apply) -> Sequence[Variable] | None:
    """log(sum(exp(x))) -> the max-shifted form, finite where exp(x) overflows."""
    match node:
        case Apply(
            op=Elemwise(scalar_op=Log()),
            inputs=(Variable(owner=Apply(op=Sum(axes=axes), inputs=(summed,))),),
        ) if axes:
            match summed.owner:
                case Apply(op=Elemwise(scalar_op=Exp()), inputs=(x,)) if (
                    is_float(x.dtype)
                    and not _is_max_shifted(x)
                    and all(x.type.shape[axis] != 0 for axis in axes)
                ):
                    return replacement(_stable_log_sum_exp(x, axes), node.out)
    return None


@rule(Elemwise)
def log_of_softmax(node: Apply) -> Sequence[Variable] | None:
    """log(exp(s) / shuffle(sum(exp(s)))) -> s - shuffle(log(sum(exp(s)))): the
    log-softmax form, which neither takes log(0) where the softmax underflows nor divides.
    (An unshifted s then gets its log-sum-exp stabilized by `log_sum_exp`.)"""
    match node:
        case Apply(op=Elemwise(scalar_op=Log()), inputs=(Variable(owner=Apply() as inner),)):
            match inner:
                case Apply(
                    op=Elemwise(scalar_op=TrueDiv()),
                    inputs=(
                        Variable(owner=Apply(op=Elemwise(scalar_op=Exp()), inputs=(s,))) as exps,
                        Variable(owner=Apply(op=DimShuffle() as shuffle, inputs=(total,))),
                    ),
                ) if is_float(s.dtype) and _is_sum_of(total, exps):
                    normalizer = shuffle(Elemwise(Log())(total))
                    return replacement(Elemwise(Sub())(s, normalizer), node.out)
    return None


def _is_sum_of(total: Variable, summed: Variable) -> bool:
    match total.owner:
        case Apply(op=Sum(), inputs=(source,)):
            return source is summed
    return False


STABILIZE = RuleSet(
    "stabilize",
    (
        log_one_plus,
        exp_minus_one,
        log_of_exp,
        log_of_sigmoid,
        log_of_one_minus_sigmoid,
        log_of_softmax,
        log_sum_exp,
    ),
)
"""Numerically stable forms of overflowing or cancelling formulas."""
