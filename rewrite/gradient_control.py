"""Gradient stops vanish: `stop_gradient`, `zero_grad` and `disconnected_grad` are the
identity in value and matter only to `grad`, which runs before optimization, so the
simplification passes replace each by its input and compiled code pays nothing."""

from __future__ import annotations

from collections.abc import Sequence

from fgraph import Apply, Variable
from ops.gradient_control import StopGradient
from rewrite.rules import RuleSet, rule


@rule(StopGradient)
def remove_stop_gradient(node: Apply) -> Sequence[Variable] | None:
    """stop_gradient(x) -> x (and disconnected_grad(x) -> x)."""
    match node:
        case Apply(op=StopGradient(), inputs=(x,)):
            return (x,)
    return None


GRADIENT_CONTROL = RuleSet("gradient_control", (remove_stop_gradient,))
