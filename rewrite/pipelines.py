"""The named pipelines, and `optimize`, which runs one by name.

This is the one place that says which passes run in which mode: add a rule set by
adding `rule_pass(ITS_RULE_SET)` to the tuples below (in the order it must run). Keep
folding rule sets (fusion, op_from_graph) out of `INNER_GRAPHS`: see `rewrite.inner`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from fgraph import Graph
from rewrite.inner import InnerGraphPass
from rewrite.pipeline import Pipeline

INNER_GRAPHS = Pipeline("inner_graphs", ())
"""What runs on the inner graph of every op that has one (simplifications only)."""

FAST_RUN = Pipeline("fast_run", (InnerGraphPass(INNER_GRAPHS),))
"""Full optimization, for `function(..., mode="fast_run")`."""

FAST_COMPILE = Pipeline("fast_compile", ())
"""Cheap, always-worth-it rewrites only, for quick compiles."""

NONE = Pipeline("none", ())
"""No rewriting at all: the graph as written."""

PIPELINES: Mapping[str, Pipeline] = MappingProxyType(
    {pipeline.name: pipeline for pipeline in (FAST_RUN, FAST_COMPILE, NONE)}
)


def optimize(graph: Graph, pipeline: str | Pipeline = "fast_run") -> Graph:
    """`graph` rewritten by `pipeline` (a name from `PIPELINES` or a `Pipeline`); pure."""
    if isinstance(pipeline, str):
        found = PIPELINES.get(pipeline)
        if found is None:
            raise ValueError(
                f"unknown pipeline {pipeline!r}; known: {', '.join(sorted(PIPELINES))} "
                "(or pass a Pipeline)"
            )
        pipeline = found
    return pipeline(graph)
