"""Rules and rule sets.

A **node rule** is a top-level function `(node) -> replacement outputs | None`: given an
`Apply`, it returns one variable per node output to stand for them, or None when it does
not apply. A **context rule** `(node, context) -> ... | None` may also read the graph's
`clients` through a `RewriteContext` (see `rewrite.context`); it must be wrapped in
`ContextualRule` (or decorated with `@context_rule()`) so the engine knows to pass one.

Rules are pure: the same node gives the same answer (the engine caches which nodes all
node rules of a set leave alone). They never mutate anything and never swallow errors.

A `RuleSet` is a named, ordered tuple of rules built explicitly at module level:

    CANONICALIZE = RuleSet("canonicalize", (mul_by_one, Rule(merge_scales, ops=(Scale,))))
    FAST = CANONICALIZE + STABILIZE

Plain functions are wrapped in `Rule` automatically. `Rule(fn, ops=(OpClass, ...))`
restricts a rule to nodes whose op is an instance of one of the classes: the engine then
never calls it on other nodes, which is what keeps a pass over thousands of nodes with
dozens of rules cheap.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import attrs

from fgraph import Apply, Op, Variable
from rewrite.context import RewriteContext


class NodeRule(Protocol):
    """`(node) -> replacement outputs | None`."""

    def __call__(self, node: Apply, /) -> Sequence[Variable] | None: ...


class ContextRule(Protocol):
    """`(node, context) -> replacement outputs | None`: a rule that reads the graph's clients."""

    def __call__(self, node: Apply, context: RewriteContext, /) -> Sequence[Variable] | None: ...


def _name_of(function: object) -> str:
    name = getattr(function, "__name__", None)
    return name if isinstance(name, str) else repr(function)


def _as_op_classes(ops: Iterable[type[Op]]) -> tuple[type[Op], ...]:
    classes = tuple(ops)
    for cls in classes:
        entry: object = cls  # checked at run time: decorators are easy to misuse
        if not (isinstance(entry, type) and issubclass(entry, Op)):
            raise TypeError(f"a rule's ops must be Op subclasses, got {entry!r}")
    return classes


@attrs.frozen
class Rule:
    """A node rule, its name (for traces and errors) and the op classes it applies to
    (empty: every op)."""

    fn: NodeRule
    ops: tuple[type[Op], ...] = attrs.field(default=(), converter=_as_op_classes)
    name: str = attrs.field(default=attrs.Factory(lambda self: _name_of(self.fn), takes_self=True))

    def __call__(self, node: Apply) -> Sequence[Variable] | None:
        return self.fn(node)


@attrs.frozen
class ContextualRule:
    """A context rule, its name and the op classes it applies to (empty: every op)."""

    fn: ContextRule
    ops: tuple[type[Op], ...] = attrs.field(default=(), converter=_as_op_classes)
    name: str = attrs.field(default=attrs.Factory(lambda self: _name_of(self.fn), takes_self=True))

    def __call__(self, node: Apply, context: RewriteContext) -> Sequence[Variable] | None:
        return self.fn(node, context)


AnyRule = Rule | ContextualRule


def rule(*ops: type[Op]) -> Callable[[NodeRule], Rule]:
    """Decorator: `@rule(Elemwise)` makes the function a `Rule` restricted to those op
    classes (`@rule()` for any op). The result stays callable as `fn(node)`."""
    classes = _as_op_classes(ops)

    def wrap(fn: NodeRule) -> Rule:
        return Rule(fn, classes)

    return wrap


def context_rule(*ops: type[Op]) -> Callable[[ContextRule], ContextualRule]:
    """Decorator: `@context_rule(Scan)` makes `(node, context)` function a `ContextualRule`."""
    classes = _as_op_classes(ops)

    def wrap(fn: ContextRule) -> ContextualRule:
        return ContextualRule(fn, classes)

    return wrap


def _required_positional(fn: Callable[..., object]) -> int | None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(
        1
        for parameter in signature.parameters.values()
        if parameter.kind in kinds and parameter.default is inspect.Parameter.empty
    )


def _as_rules(rules: Iterable[AnyRule | NodeRule]) -> tuple[AnyRule, ...]:
    """Wrap plain functions as `Rule`s; drop repeats (first occurrence wins)."""
    result: list[AnyRule] = []
    for entry in rules:
        wrapped: AnyRule
        if isinstance(entry, (Rule, ContextualRule)):
            wrapped = entry
        else:
            if _required_positional(entry) == 2:
                raise TypeError(
                    f"rule {_name_of(entry)} takes (node, context): wrap it in ContextualRule "
                    "or decorate it with @context_rule() so the engine passes a context"
                )
            wrapped = Rule(entry)
        if wrapped not in result:
            result.append(wrapped)
    return tuple(result)


@attrs.frozen(cache_hash=True)
class RuleSet:
    """A named, ordered tuple of rules. At each node the engine tries them in order and
    applies the first one that returns a replacement."""

    name: str
    rules: tuple[AnyRule, ...] = attrs.field(default=(), converter=_as_rules)

    def __add__(self, other: RuleSet) -> RuleSet:
        return RuleSet(f"{self.name}+{other.name}", self.rules + other.rules)

    @staticmethod
    def union(name: str, *rule_sets: RuleSet) -> RuleSet:
        """All rules of `rule_sets`, in order, under a new name (repeats dropped)."""
        return RuleSet(name, tuple(entry for rule_set in rule_sets for entry in rule_set.rules))

    @property
    def uses_context(self) -> bool:
        """Whether any rule reads the graph's clients (the engine then sweeps to a fixpoint)."""
        return any(isinstance(entry, ContextualRule) for entry in self.rules)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.rules)

    def rules_for(self, op_type: type[Op]) -> tuple[AnyRule, ...]:
        """The rules that apply to nodes whose op is of class `op_type`, in order."""
        return tuple(
            entry for entry in self.rules if not entry.ops or issubclass(op_type, entry.ops)
        )
