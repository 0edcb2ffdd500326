"""Passes and pipelines.

A **pass** is anything callable as `Graph -> Graph` (a plain function works). `rule_pass`
turns a `RuleSet` into one; a `Pipeline` is a named, ordered tuple of passes and is a pass
itself, so pipelines nest. The named pipelines users pick by name (`"fast_run"`, ...)
are declared in `rewrite.pipelines`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import attrs

from fgraph import Graph
from rewrite.engine import DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_SWEEPS, rewrite_graph
from rewrite.rules import RuleSet


class Pass(Protocol):
    """A pure graph transformation."""

    def __call__(self, graph: Graph, /) -> Graph: ...


def pass_name(pass_: Pass) -> str:
    """How printouts name a pass: its `name` attribute, else its function name."""
    for attribute in ("name", "__name__"):
        name = getattr(pass_, attribute, None)
        if isinstance(name, str):
            return name
    return repr(pass_)


@attrs.frozen
class RulePass:
    """`rewrite_graph(graph, rules, ...)` as a pass."""

    rules: RuleSet
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    max_sweeps: int = DEFAULT_MAX_SWEEPS
    strict: bool = True

    @property
    def name(self) -> str:
        return self.rules.name

    def __call__(self, graph: Graph) -> Graph:
        return rewrite_graph(
            graph,
            self.rules,
            max_iterations=self.max_iterations,
            max_sweeps=self.max_sweeps,
            strict=self.strict,
        )


def rule_pass(
    rules: RuleSet,
    *,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    max_sweeps: int = DEFAULT_MAX_SWEEPS,
    strict: bool = True,
) -> RulePass:
    """A pass applying `rules` to a fixpoint."""
    return RulePass(rules, max_iterations, max_sweeps, strict)


def _as_passes(passes: Iterable[Pass]) -> tuple[Pass, ...]:
    result = tuple(passes)
    for number, pass_ in enumerate(result):
        if not callable(pass_):
            raise TypeError(f"pipeline entry {number} is {pass_!r}, not a Graph -> Graph pass")
    return result


@attrs.frozen
class Pipeline:
    """A named, ordered tuple of passes; calling it runs them in order."""

    name: str
    passes: tuple[Pass, ...] = attrs.field(default=(), converter=_as_passes)

    def __call__(self, graph: Graph) -> Graph:
        for pass_ in self.passes:
            graph = pass_(graph)
        return graph

    def __add__(self, other: Pipeline) -> Pipeline:
        return Pipeline(f"{self.name}+{other.name}", self.passes + other.passes)

    def then(self, *passes: Pass) -> Pipeline:
        """This pipeline followed by `passes`, under the same name."""
        return Pipeline(self.name, self.passes + passes)

    def __str__(self) -> str:
        return f"{self.name}: [{', '.join(pass_name(pass_) for pass_ in self.passes)}]"


@attrs.frozen
class Fixpoint:
    """`pipeline` run again until a run changes nothing (at most `max_rounds` runs): for
    passes that enable each other, such as rewriting loop bodies and rewriting the loops
    holding them (a simpler body frees inputs; an inlined constant simplifies a body)."""

    pipeline: Pipeline
    max_rounds: int = 8

    @property
    def name(self) -> str:
        return f"fixpoint({self.pipeline.name})"

    def __call__(self, graph: Graph) -> Graph:
        for _ in range(self.max_rounds):
            result = self.pipeline(graph)
            if result is graph:
                return result
            graph = result
        return graph
