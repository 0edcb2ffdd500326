"""`rewrite_graph`: the one driver every rule pass runs on.

How a pass works
----------------
The graph is rebuilt bottom-up (inputs before their readers, the order of
`Graph.nodes`) with an explicit stack, never Python recursion, and a memo table mapping
every node met (original or new) to the variables that finally stand for its outputs.
At each node:

1. its inputs are replaced by their final variables; if any changed, the node is
   re-created (interning returns an existing node when there is one: CSE for free);
2. the rules that apply to its op class are tried in order; the first one that returns
   a replacement wins;
3. the replacement's own new nodes are pushed on the same stack and rewritten the same
   way, so a rule's output can enable another rule (local fixpoint, no recursion); the
   node's final value is the replacement's final value.

So every node of the result was visited with its final inputs and every rule declined
on it: one pass of node rules reaches a fixpoint. Unchanged nodes come back as the same
objects, and a pass that changes nothing returns the very same `Graph`.

Guards. A node that comes back while it is still being rewritten (say `swap_add` turning
`a + b` into `b + a` and back, or a replacement that contains the node it replaces) raises
`RewriteCycleError` naming the rules of the chain. A chain of more than `max_iterations`
rewrites feeding each other (a rule that keeps growing its output) raises
`RewriteLimitError` naming the rules and how often each fired.

Why re-running is cheap. Rules are pure functions of a node, and nodes are interned
and immutable, so "every node rule of this set declines on this node and on everything
below it" is a permanent fact. The engine records it in a weak set per rule set (nodes
are not kept alive by it); a later pass with the same rule set stops at such nodes
without calling any rule. Re-optimizing an optimized graph is then a walk over the
outputs. (Non-strict passes neither read nor write this record.)

Context rules and clients
-------------------------
A context rule's `context.clients(v)` cannot be exact in the middle of a bottom-up pass:
the readers of `v` are downstream and not rewritten yet. The engine answers with the
readers `v` has in the graph as it stood when the pass began, carried over to new
variables: a variable that replaced others (`x * 1 -> x`) reports the readers of all of
them from the moment that is known (a node rebuilt over new inputs, before its rules
run; a rule's replacement, before its own new nodes are rewritten), a variable first
built in this pass reports the new nodes built so far that read it, and nodes that a rule rewrote away are no longer counted. `is_output` is exact in the
same sense. Rewrites later in the same pass can still remove readers (or, rarely, add
one), so a context rule must be correct for any answer and use clients to choose
between equally correct results: not duplicating work, or dropping an output of the node
being rewritten that nothing reads (downstream nodes are rebuilt from the replacement,
so they cannot read what it dropped).

Precision comes from iteration: for a rule set with context rules, `rewrite_graph`
repeats the pass until one changes nothing (at most `max_sweeps` times). In that last
pass no variable was replaced, so every answer was exact: the result is a fixpoint of
all rules, context rules included, under the result's own clients. Rule sets without
context rules need a single pass.
"""

from __future__ import annotations

import collections
import warnings
import weakref
from collections.abc import Sequence

from fgraph import Apply, Graph, Op, Variable
from rewrite.context import Clients
from rewrite.errors import (
    InvalidReplacementError,
    RewriteCycleError,
    RewriteError,
    RewriteLimitError,
    RewriteWarning,
    describe_node,
)
from rewrite.rules import AnyRule, ContextualRule, RuleSet
from rewrite.trace import RuleFailed, RuleFired, Trace

DEFAULT_MAX_ITERATIONS = 1000
"""Longest chain of rewrites feeding each other at one place before `RewriteLimitError`."""

DEFAULT_MAX_SWEEPS = 100
"""Most passes a rule set with context rules may take to reach its fixpoint."""


def rewrite_graph(
    graph: Graph,
    rules: RuleSet,
    *,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    max_sweeps: int = DEFAULT_MAX_SWEEPS,
    strict: bool = True,
    trace: Trace | None = None,
) -> Graph:
    """`graph` with `rules` applied everywhere until none applies (the input is untouched).

    Returns `graph` itself when no rule fires. With `strict=True` (the default) a rule
    that raises or returns an invalid replacement raises `RewriteError` /
    `InvalidReplacementError` naming the rule and the node, chained to the original
    error. With `strict=False` such a rule is skipped at that node and recorded in
    `trace` (or reported with a `RewriteWarning` when there is no trace): never silently.
    `trace` also receives a `RuleFired` entry per rule application.
    """
    if max_iterations < 1 or max_sweeps < 1:
        raise ValueError(
            f"max_iterations and max_sweeps must be >= 1, got {max_iterations}, {max_sweeps}"
        )
    if not rules.rules:
        return graph
    state = _state_of(rules)
    if not rules.uses_context:
        return _Sweep(graph, rules, state, max_iterations, strict, trace, False).run()
    fired: collections.Counter[str] = collections.Counter()
    for _ in range(max_sweeps):
        sweep = _Sweep(graph, rules, state, max_iterations, strict, trace, True)
        result = sweep.run()
        if result is graph:
            return result
        graph, fired = result, sweep.fired
    raise RewriteLimitError(
        f"rule set {rules.name!r} still changed the graph after {max_sweeps} sweeps "
        f"(rules that fired in the last one: {_tally(fired)}); context rules probably undo "
        "each other",
        tuple(fired),
    )


class _RuleSetState:
    """What the engine remembers about a rule set across passes: its rules per op class,
    and the nodes known to be node-rule fixpoints all the way down."""

    __slots__ = ("dispatch", "certified", "__weakref__")

    def __init__(self) -> None:
        self.dispatch: dict[type[Op], tuple[AnyRule, ...]] = {}
        self.certified: weakref.WeakSet[Apply] = weakref.WeakSet()


_STATES: weakref.WeakKeyDictionary[RuleSet, _RuleSetState] = weakref.WeakKeyDictionary()


def _state_of(rules: RuleSet) -> _RuleSetState:
    state = _STATES.get(rules)
    if state is None:
        state = _STATES.setdefault(rules, _RuleSetState())
    return state


class _Firing:
    """One rule application, linked to the one whose replacement contained its node: the
    chain the cycle and limit errors report."""

    __slots__ = ("rule", "node", "parent", "depth")

    def __init__(self, rule: str, node: Apply, parent: _Firing | None) -> None:
        self.rule = rule
        self.node = node
        self.parent = parent
        self.depth: int = 1 if parent is None else parent.depth + 1

    def chain(self) -> list[_Firing]:
        """This firing and its ancestors, oldest first."""
        found: list[_Firing] = []
        current: _Firing | None = self
        while current is not None:
            found.append(current)
            current = current.parent
        found.reverse()
        return found


class _PassContext:
    """`RewriteContext` during a pass: the clients of the pass's input graph, carried over
    to the variables that replace them (see the module docstring)."""

    __slots__ = ("_clients", "_nodes", "_outputs", "_stands_for", "_new_reads", "_rewritten")

    def __init__(self, graph: Graph) -> None:
        self._clients = graph.clients
        self._nodes = graph.node_set
        self._outputs = frozenset(graph.outputs)
        self._stands_for: dict[Variable, list[Variable]] = {}
        self._new_reads: dict[Variable, list[tuple[Apply, int]]] = {}
        self._rewritten: set[Apply] = set()

    def record_reads(self, node: Apply) -> None:
        """`node` is part of a replacement: count it as a client of its inputs, unless it
        is a node of the input graph (interning can hand a rule one), already counted."""
        if node in self._nodes:
            return
        for number, variable in enumerate(node.inputs):
            self._new_reads.setdefault(variable, []).append((node, number))

    def record_stand_in(self, old: Variable, new: Variable) -> None:
        """`new` stands for `old` and for whatever `old` stood for."""
        if new == old:
            return
        found = self._stands_for.setdefault(new, [])
        for original in (old, *self._stands_for.get(old, ())):
            if original != new and original not in found:
                found.append(original)

    def record_rewritten(self, node: Apply) -> None:
        """A rule replaced `node`: it no longer reads its inputs."""
        self._rewritten.add(node)

    def clients(self, variable: Variable) -> Clients:
        found: list[tuple[Apply, int]] = []
        for original in (variable, *self._stands_for.get(variable, ())):
            for source in (self._clients.get(original, ()), self._new_reads.get(original, ())):
                found.extend(client for client in source if client[0] not in self._rewritten)
        return tuple(found)

    def is_output(self, variable: Variable) -> bool:
        return variable in self._outputs or any(
            original in self._outputs for original in self._stands_for.get(variable, ())
        )


_VISIT, _REBUILD, _REPLACE = 0, 1, 2
_Frame = tuple[int, Apply, "_Firing | None", "tuple[Variable, ...] | None"]


class _Sweep:
    """One bottom-up pass over a graph (see the module docstring)."""

    def __init__(
        self,
        graph: Graph,
        rules: RuleSet,
        state: _RuleSetState,
        max_iterations: int,
        strict: bool,
        trace: Trace | None,
        with_context: bool,
    ) -> None:
        self.graph = graph
        self.rules = rules
        self.dispatch = state.dispatch
        self.certified = state.certified if strict else None
        self.max_iterations = max_iterations
        self.strict = strict
        self.trace = trace
        self.context = _PassContext(graph) if with_context else None
        # node -> the variables standing for its outputs; None: the node's own outputs.
        self.memo: dict[Apply, tuple[Variable, ...] | None] = {}
        # nodes whose rewrite is under way: meeting one again is a cycle.
        self.active: set[Apply] = set()
        self.fired: collections.Counter[str] = collections.Counter()

    def run(self) -> Graph:
        outputs = self.graph.outputs
        self._process([output.owner for output in outputs if output.owner is not None])
        new_outputs = tuple(self._final(output) for output in outputs)
        if new_outputs == outputs:
            return self.graph
        return Graph(self.graph.inputs, new_outputs, self.graph.dedup_nodes)

    def _final(self, variable: Variable) -> Variable:
        owner = variable.owner
        if owner is None:
            return variable
        result = self.memo[owner]
        return variable if result is None else result[variable.index]

    def _process(self, roots: Sequence[Apply]) -> None:
        memo, active, context = self.memo, self.active, self.context
        # Without context rules a certified node is final with everything below it.
        skip = self.certified if context is None else None
        stack: list[_Frame] = [(_VISIT, root, None, None) for root in reversed(roots)]
        while stack:
            step, node, firing, replacement = stack.pop()
            if step == _VISIT:
                if node in memo:
                    continue
                if node in active:
                    raise self._cycle_error(node, firing)
                if skip is not None and node in skip:
                    memo[node] = None
                    continue
                active.add(node)
                stack.append((_REBUILD, node, firing, None))
                if context is not None and firing is not None:
                    context.record_reads(node)
                for input_ in reversed(node.inputs):
                    owner = input_.owner
                    if owner is not None and owner not in memo:
                        stack.append((_VISIT, owner, firing, None))
            elif step == _REBUILD:
                self._rebuild(node, firing, stack)
            else:
                assert firing is not None and replacement is not None
                self._finish_replacement(node, firing, replacement)

    def _rebuild(self, node: Apply, firing: _Firing | None, stack: list[_Frame]) -> None:
        """Re-create `node` over its inputs' final variables, then try the rules on it."""
        memo, active, certified = self.memo, self.active, self.certified
        new_inputs: list[Variable] = []
        for variable in node.inputs:
            owner = variable.owner
            if owner is not None:
                result = memo[owner]
                if result is not None:
                    variable = result[variable.index]
            new_inputs.append(variable)
        candidate = node
        if not _same(new_inputs, node.inputs):
            candidate = Apply(node.op, tuple(new_inputs), node.position)
        # Whether the node rules are known to decline here (without context rules, a
        # visited node was checked on the way down).
        node_rules_done = False
        if candidate is not node:
            if candidate in memo:
                known = memo[candidate]
                self._settle(node, candidate.outputs if known is None else known)
                return
            if candidate in active:
                raise self._cycle_error(candidate, firing)
            active.add(candidate)
            node_rules_done = certified is not None and candidate in certified
            self._record_stand_ins(node.outputs, candidate.outputs)
        elif certified is not None and self.context is not None:
            node_rules_done = node in certified
        fired = self._apply_rules(candidate, node_rules_done)
        if fired is None:
            memo[candidate] = None
            active.discard(candidate)
            if candidate is not node:
                self._settle(node, candidate.outputs)
            return
        rule, replacement = fired
        self._record_stand_ins(candidate.outputs, replacement)
        new_firing = _Firing(rule.name, candidate, firing)
        if new_firing.depth > self.max_iterations:
            raise self._limit_error(new_firing)
        stack.append((_REPLACE, node, new_firing, replacement))
        for variable in reversed(replacement):
            owner = variable.owner
            if owner is not None and owner is not candidate and owner not in memo:
                stack.append((_VISIT, owner, new_firing, None))

    def _finish_replacement(
        self, node: Apply, firing: _Firing, replacement: tuple[Variable, ...]
    ) -> None:
        """The replacement's nodes are rewritten: its final variables stand for `node`."""
        candidate = firing.node
        result = tuple(
            variable if variable.owner is candidate else self._final(variable)
            for variable in replacement
        )
        if result == candidate.outputs:
            raise self._cycle_error(candidate, firing)
        if self.context is not None:
            self.context.record_rewritten(candidate)
            self.context.record_rewritten(node)
        self._settle(candidate, result)
        if candidate is not node:
            self._settle(node, result)

    def _settle(self, node: Apply, result: tuple[Variable, ...]) -> None:
        self.memo[node] = result
        self.active.discard(node)
        self._record_stand_ins(node.outputs, result)

    def _record_stand_ins(
        self, olds: Sequence[Variable], news: Sequence[Variable]
    ) -> None:
        """`news` stand for `olds` from now on: recorded as soon as that is known (a
        rebuilt node before its rules run, a replacement before its own nodes are
        rewritten), so that context rules on those nodes see the readers of what they
        replace."""
        if self.context is not None:
            for old, new in zip(olds, news):
                self.context.record_stand_in(old, new)

    def _apply_rules(
        self, node: Apply, node_rules_done: bool
    ) -> tuple[AnyRule, tuple[Variable, ...]] | None:
        """The first rule that rewrites `node` and its validated replacement, or None.
        `node_rules_done`: the node is certified, only context rules need to run."""
        op_type = type(node.op)
        rules = self.dispatch.get(op_type)
        if rules is None:
            rules = self.dispatch[op_type] = self.rules.rules_for(op_type)
        certified = self.certified
        for rule in rules:
            try:
                if isinstance(rule, ContextualRule):
                    assert self.context is not None
                    result = rule.fn(node, self.context)
                elif node_rules_done:
                    continue
                else:
                    result = rule.fn(node)
            except Exception as error:
                self._rule_raised(rule, node, error)
                continue
            if result is None:
                continue
            replacement = self._validated(rule, node, result)
            if replacement is None:
                continue
            self.fired[rule.name] += 1
            if self.trace is not None:
                self.trace.record(RuleFired(rule.name, node.op, node.outputs, replacement))
            return rule, replacement
        if certified is not None and not node_rules_done:
            certified.add(node)
        return None

    def _validated(
        self, rule: AnyRule, node: Apply, result: Sequence[Variable]
    ) -> tuple[Variable, ...] | None:
        """`result` as a tuple if it may stand for `node`'s outputs; None if it keeps them
        all (the rule declined) or, in non-strict mode, if it is invalid."""
        problem = None
        items: tuple[object, ...] = ()
        try:
            items = tuple(result)
        except TypeError:
            problem = f"it returned {result!r}, not a sequence of variables"
        output_types = node.output_types
        if problem is None and len(items) != len(output_types):
            problem = f"it returned {len(items)} variables for {len(output_types)} outputs"
        replacement: list[Variable] = []
        kept = 0
        if problem is None:
            for number, (variable, expected) in enumerate(zip(items, output_types)):
                if not isinstance(variable, Variable):
                    problem = f"replacement {number} is {variable!r}, not a Variable"
                    break
                replacement.append(variable)
                if variable.owner is node and variable.index == number:
                    kept += 1
                    continue
                got = variable.type
                if got is not expected and not got.is_subtype_of(expected):
                    problem = (
                        f"output {number} has type {expected}, the replacement {got} (the dtype "
                        "and rank must match; a static length may be added, never changed or "
                        "dropped)"
                    )
                    break
        if problem is None:
            return None if kept == len(replacement) else tuple(replacement)
        error = InvalidReplacementError(
            f"rule {rule.name} returned an invalid replacement for {describe_node(node)}: "
            f"{problem}",
            (rule.name,),
            node,
        )
        if self.strict:
            raise error
        self._record_failure(rule, node, error)
        return None

    def _rule_raised(self, rule: AnyRule, node: Apply, error: Exception) -> None:
        if self.strict:
            raise RewriteError(
                f"rule {rule.name} raised {type(error).__name__} on {describe_node(node)}: {error}",
                (rule.name,),
                node,
            ) from error
        self._record_failure(rule, node, error)

    def _record_failure(self, rule: AnyRule, node: Apply, error: Exception) -> None:
        if self.trace is not None:
            self.trace.record(RuleFailed(rule.name, node.op, node, error))
            return
        warnings.warn(
            f"rewrite rule {rule.name} skipped on {describe_node(node)}: "
            f"{type(error).__name__}: {error}",
            RewriteWarning,
            stacklevel=2,
        )

    def _cycle_error(self, node: Apply, firing: _Firing | None) -> RewriteCycleError:
        chain = firing.chain() if firing is not None else []
        start = next((number for number, link in enumerate(chain) if link.node is node), 0)
        rules = tuple(link.rule for link in chain[start:])
        return RewriteCycleError(
            f"rewrite cycle: {describe_node(node)} came back while it was being rewritten "
            f"(rules: {' -> '.join(rules) or '?'}); rules must not undo each other, and a "
            "replacement must not contain the node it replaces",
            rules,
            node,
        )

    def _limit_error(self, firing: _Firing) -> RewriteLimitError:
        chain = firing.chain()
        names = collections.Counter(link.rule for link in chain)
        return RewriteLimitError(
            f"no fixpoint after {self.max_iterations} chained rewrites starting at "
            f"{describe_node(chain[0].node)} (rules fired: {_tally(names)}); a rule probably "
            "keeps growing its own output (raise max_iterations if the chain is really this long)",
            tuple(names),
            chain[0].node,
        )


def _same(variables: list[Variable], originals: tuple[Variable, ...]) -> bool:
    """Whether two sequences hold the same variables (identity first: the common case)."""
    for variable, original in zip(variables, originals):
        if variable is not original and variable != original:
            return False
    return True


def _tally(counts: collections.Counter[str]) -> str:
    return ", ".join(f"{name} x{count}" for name, count in counts.most_common()) or "none"
