"""Test-only ops and rules for the engine tests, over the toy ops of `tests.fgraph`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from fgraph import Apply, Constant, Graph, Op, TensorType, Variable, check_graph, evaluate
from fgraph.op import Array
from rewrite import ContextualRule, RewriteContext, Rule, RuleSet, rewrite_graph
from tests.fgraph.toy_ops import Add, Exp, Scale, SplitSign


@attrs.frozen
class ScaledExp(Op):
    """exp(factor * x): what `fold_scale_into_exp` folds a Scale+Exp pair into."""

    factor: float

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        return (input_types[0],)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (np.exp(inputs[0] * self.factor),)


@attrs.frozen
class Forget(Op):
    """Identity that forgets the static shape (for the lossy-replacement test)."""

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        return (TensorType(x.dtype, (None,) * x.ndim),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (inputs[0].copy(),)


@attrs.frozen
class Refine(Op):
    """Identity that asserts a static length (for the more-precise-replacement test)."""

    length: int

    def infer(self, *input_types: TensorType) -> tuple[TensorType, ...]:
        (x,) = input_types
        return (TensorType(x.dtype, (self.length,)),)

    def perform(self, *inputs: Array) -> tuple[Array, ...]:
        return (inputs[0].copy(),)


# -- ordinary rules ---------------------------------------------------------------------


def scale_by_one(node: Apply) -> Sequence[Variable] | None:
    """x * 1 -> x."""
    match node:
        case Apply(op=Scale(factor=1.0), inputs=(x,)):
            return (x,)
    return None


def merge_scales(node: Apply) -> Sequence[Variable] | None:
    """(x * b) * a -> x * (a * b): its output may enable `scale_by_one`."""
    match node:
        case Apply(
            op=Scale(factor=outer),
            inputs=(Variable(owner=Apply(op=Scale(factor=inner), inputs=(x,))),),
        ):
            return (Scale(outer * inner)(x),)
    return None


def scale_by_zero(node: Apply) -> Sequence[Variable] | None:
    """x * 0 -> zeros, when the shape is static."""
    match node:
        case Apply(op=Scale(factor=0.0), inputs=(x,)) if x.type.is_fully_static:
            shape = tuple(length or 0 for length in x.type.shape)
            return (Constant(np.zeros(shape, dtype=x.dtype)),)
    return None


def exp_of_split_is_positive(node: Apply) -> Sequence[Variable] | None:
    """SplitSign(exp(x)): the negative part is zero; keep the positive output as it is."""
    match node:
        case Apply(op=SplitSign(), inputs=(Variable(owner=Apply(op=Exp())) as x,)) if (
            x.type.is_fully_static
        ):
            shape = tuple(length or 0 for length in x.type.shape)
            return (node.outputs[0], Constant(np.zeros(shape, dtype=x.dtype)))
    return None


CANONICALIZE = RuleSet("canonicalize", (scale_by_one, merge_scales))


# -- misbehaving rules ------------------------------------------------------------------


def swap_add(node: Apply) -> Sequence[Variable] | None:
    """a + b -> b + a: undoes itself."""
    match node:
        case Apply(op=Add(), inputs=(x, y)) if x is not y:
            return (Add()(y, x),)
    return None


def double_to_add(node: Apply) -> Sequence[Variable] | None:
    match node:
        case Apply(op=Scale(factor=2.0), inputs=(x,)):
            return (Add()(x, x),)
    return None


def add_to_double(node: Apply) -> Sequence[Variable] | None:
    match node:
        case Apply(op=Add(), inputs=(x, y)) if x is y:
            return (Scale(2.0)(x),)
    return None


def wrap_in_scale(node: Apply) -> Sequence[Variable] | None:
    """exp(x) -> 1 * exp(x): a replacement containing the node it replaces."""
    match node:
        case Apply(op=Exp()):
            return (Scale(1.0)(node.out),)
    return None


def grow_exp(node: Apply) -> Sequence[Variable] | None:
    """exp(x) -> exp(x + 0): never reaches a fixpoint."""
    match node:
        case Apply(op=Exp(), inputs=(x,)):
            return (Exp()(Add()(x, Constant(0.0))),)
    return None


def boom(node: Apply) -> Sequence[Variable] | None:
    if isinstance(node.op, Exp):
        raise ValueError("boom")
    return None


def wrong_dtype(node: Apply) -> Sequence[Variable] | None:
    if isinstance(node.op, Exp):
        return (Constant(np.zeros(3, dtype="float32")),)
    return None


def wrong_rank(node: Apply) -> Sequence[Variable] | None:
    if isinstance(node.op, Exp):
        return (Constant(np.zeros((3, 1))),)
    return None


def wrong_count(node: Apply) -> Sequence[Variable] | None:
    if isinstance(node.op, Exp):
        return (node.inputs[0], node.inputs[0])
    return None


def not_a_variable(node: Apply) -> Sequence[Variable] | None:
    if isinstance(node.op, Exp):
        untyped: Any = [np.zeros(3)]  # a rule from untyped code can return anything
        returned: Sequence[Variable] = untyped
        return returned
    return None


def forget_shape(node: Apply) -> Sequence[Variable] | None:
    if isinstance(node.op, Exp):
        return (Forget()(node.inputs[0]),)
    return None


def refine_exp(node: Apply) -> Sequence[Variable] | None:
    """exp(x) with x of unknown length -> exp(refine(x)): a more precise static shape."""
    match node:
        case Apply(op=Exp(), inputs=(x,)) if x.type.shape == (None,) and x.owner is None:
            return (Exp()(Refine(3)(x)),)
    return None


# -- context rules ----------------------------------------------------------------------


def fold_scale_into_exp(node: Apply, context: RewriteContext) -> Sequence[Variable] | None:
    """exp(a * x) -> scaled_exp(a)(x), only if nothing else reads a * x (no duplicated work)."""
    match node:
        case Apply(
            op=Exp(),
            inputs=(Variable(owner=Apply(op=Scale(factor=factor), inputs=(x,))) as scaled,),
        ):
            if len(context.clients(scaled)) == 1 and not context.is_output(scaled):
                return (ScaledExp(factor)(x),)
    return None


FOLD = RuleSet("fold", (ContextualRule(fold_scale_into_exp, ops=(Exp,)),))


# -- helpers ----------------------------------------------------------------------------


def rewritten(graph: Graph, rules: RuleSet, **options: Any) -> Graph:
    """`rewrite_graph` plus the validator on its result (and on the input)."""
    check_graph(graph)
    result = rewrite_graph(graph, rules, **options)
    check_graph(result)
    return result


def assert_same_values(before: Graph, after: Graph, *values: Array) -> None:
    expected = evaluate(before.outputs, dict(zip(before.inputs, values)))
    got = evaluate(after.outputs, dict(zip(after.inputs, values)))
    assert len(expected) == len(got)
    for want, have in zip(expected, got):
        np.testing.assert_allclose(have, want)
