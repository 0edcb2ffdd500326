"""Errors the rewrite engine raises. Every one names the rule(s) and the node involved,
because "some rewrite failed somewhere" is useless to the person who has to fix it."""

from __future__ import annotations

from fgraph import Apply


class RewriteError(Exception):
    """A rewrite went wrong. Raised as-is, or with the rule's own exception as `__cause__`
    when a rule raised (in strict mode)."""

    def __init__(self, message: str, rules: tuple[str, ...] = (), node: Apply | None = None) -> None:
        super().__init__(message)
        self.rules = rules
        self.node = node


class InvalidReplacementError(RewriteError, TypeError):
    """A rule returned something that cannot stand for the node's outputs (wrong count,
    not a variable, different dtype or rank, or a static shape that is not as precise)."""


class RewriteCycleError(RewriteError):
    """A chain of rewrites led back to a node it started from: the rules undo each other."""


class RewriteLimitError(RewriteError):
    """A chain of rewrites (or of sweeps, for rule sets with context rules) did not reach a
    fixpoint within the iteration guard: usually a rule that keeps growing its output."""


class RewriteWarning(UserWarning):
    """A rule failed in non-strict mode and no trace was given to record it."""


def describe_node(node: Apply) -> str:
    """`Op(input types)`: how errors and traces name a node."""
    return f"{node.op}({', '.join(str(variable.type) for variable in node.inputs)})"
