"""Stabilization: rewrite formulas that overflow, underflow or cancel in floating point
into equivalent ones that do not (`log(1 + x) -> log1p(x)`, `log(sigmoid(x)) ->
-softplus(-x)`, `log(sum(exp(x)))` -> the max-shifted log-sum-exp).

Where the naive formula is finite the result agrees with it to rounding; where it
overflows or loses everything to cancellation the result is the finite, accurate value.
The rules apply to real floating-point values only (complex logarithms wrap their
phase, and integer inputs would change where overflow happens). One edge differs: the
max-shifted log-sum-exp takes a maximum, so over an axis that turns out empty at run
time it raises (as `ops.logsumexp` does) where the naive form gives -inf.

The stable forms of logarithms are defined in `ops.stable`, which `grad` shares (it
differentiates a matched logarithm through its stable form); the rules here apply them.
"""

from __future__ import annotations

from collections.abc import Sequence

from fgraph import Apply, Variable
from fgraph.dtypes import is_float
from ops import stable
from ops.elemwise import Elemwise
from ops.scalar_ops import Add, Exp, Expm1, Log, Log1p, Sub
from ops.stable import StableForm
from rewrite.patterns import fit_to_type, is_constant_value, replacement
from rewrite.rules import RuleSet, rule


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


def _stable(form: StableForm | None) -> Sequence[Variable] | None:
    return None if form is None else (form.value,)


@rule(Elemwise)
def log_of_exp(node: Apply) -> Sequence[Variable] | None:
    """log(exp(x)) -> x (`ops.stable.log_of_exp`)."""
    return _stable(stable.log_of_exp(node))


@rule(Elemwise)
def log_of_sigmoid(node: Apply) -> Sequence[Variable] | None:
    """log(sigmoid(x)) -> -softplus(-x) (`ops.stable.log_of_sigmoid`)."""
    return _stable(stable.log_of_sigmoid(node))


@rule(Elemwise)
def log_of_one_minus_sigmoid(node: Apply) -> Sequence[Variable] | None:
    """log(1 - sigmoid(x)) -> -softplus(x) (`ops.stable.log_of_one_minus_sigmoid`)."""
    return _stable(stable.log_of_one_minus_sigmoid(node))


@rule(Elemwise)
def log_of_one_plus_exp(node: Apply) -> Sequence[Variable] | None:
    """log1p(exp(x)) -> softplus(x) (`ops.stable.log_of_one_plus_exp`)."""
    return _stable(stable.log_of_one_plus_exp(node))


@rule(Elemwise)
def log_of_one_minus_exp(node: Apply) -> Sequence[Variable] | None:
    """log(1 - exp(x)) -> log1mexp(x) (`ops.stable.log_of_one_minus_exp`)."""
    return _stable(stable.log_of_one_minus_exp(node))


@rule(Elemwise)
def log_sum_exp(node: Apply) -> Sequence[Variable] | None:
    """log(sum(exp(x))) -> the max-shifted form (`ops.stable.log_sum_exp`)."""
    return _stable(stable.log_sum_exp(node))


@rule(Elemwise)
def log_of_softmax(node: Apply) -> Sequence[Variable] | None:
    """log(exp(s) / sum(exp(s))) -> s - log(sum(exp(s))) (`ops.stable.log_of_softmax`)."""
    return _stable(stable.log_of_softmax(node))


STABILIZE = RuleSet(
    "stabilize",
    (
        log_one_plus,
        exp_minus_one,
        log_of_exp,
        log_of_sigmoid,
        log_of_one_minus_sigmoid,
        log_of_one_plus_exp,
        log_of_one_minus_exp,
        log_of_softmax,
        log_sum_exp,
    ),
)
"""Numerically stable forms of overflowing or cancelling formulas."""
