"""The named pipelines, and `optimize`, which runs one by name.

This is the one place that says which passes run in which mode: add a rule set by
adding `rule_pass(ITS_RULE_SET)` to the tuples below (in the order it must run). Keep
folding rule sets (fusion, op_from_graph) out of `INNER_GRAPHS`: see `rewrite.inner`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from fgraph import Graph
from ops.fused import Fused
from rewrite.canonicalize import CANONICALIZE
from rewrite.constant_fold import CONSTANT_FOLD
from rewrite.fusion import fuse_elemwise
from rewrite.gradient_control import GRADIENT_CONTROL
from rewrite.inc_subtensor import INC_SUBTENSOR
from rewrite.indexed_terms import indexed_terms
from rewrite.inline import INLINE
from rewrite.inner import InnerGraphPass
from rewrite.join import JOIN
from rewrite.linalg import LINALG
from rewrite.matmul_op import MATMUL
from rewrite.inplace import inplace_pass
from rewrite.pipeline import Fixpoint, Pipeline, rule_pass
from rewrite.rules import RuleSet
from rewrite.loops import loop_pass
from rewrite.shapes import SHAPES
from rewrite.specialize import SPECIALIZE
from rewrite.stabilize import STABILIZE
from rewrite.subtensor import LIFT_SUBTENSOR, SUBTENSOR

SIMPLIFY = RuleSet.union(
    "simplify", CONSTANT_FOLD, CANONICALIZE, SHAPES, SUBTENSOR, INC_SUBTENSOR, JOIN, MATMUL,
    GRADIENT_CONTROL,
)
"""Constant folding, canonicalization and the shape and indexing simplifications
together, so each enables the others in one pass; gradient stops removed."""

SIMPLIFY_AND_LIFT = RuleSet.union("simplify_and_lift", SIMPLIFY, LIFT_SUBTENSOR)
"""`SIMPLIFY` plus moving indexing before elementwise work (which reads clients, so the
pass sweeps to a fixpoint): what second derivatives of loops need."""

STABILIZE_AND_SIMPLIFY = RuleSet.union(
    "stabilize_and_simplify", STABILIZE, LINALG, SIMPLIFY
)
"""Numerically stable forms (solves instead of inverses, `slogdet` for log-determinants),
with `SIMPLIFY` cleaning up what they build."""

SPECIALIZE_AND_SIMPLIFY = RuleSet.union("specialize_and_simplify", SPECIALIZE, SIMPLIFY)
"""Cheaper special cases (powers, division by constants), once stabilization has seen the
general forms it matches."""

INNER_GRAPHS = Pipeline(
    "inner_graphs", (rule_pass(SIMPLIFY), rule_pass(STABILIZE_AND_SIMPLIFY), loop_pass)
)
"""What runs on the inner graph of every op that has one (simplifications only)."""

FAST_RUN = Pipeline(
    "fast_run",
    (
        rule_pass(INLINE),
        indexed_terms,
        rule_pass(STABILIZE_AND_SIMPLIFY),
        loop_pass,
        rule_pass(SIMPLIFY_AND_LIFT),
        rule_pass(SPECIALIZE_AND_SIMPLIFY),
        Fixpoint(
            Pipeline(
                "loops_and_bodies",
                (
                    InnerGraphPass(INNER_GRAPHS, skip=(Fused,)),
                    loop_pass,
                    # The rule set of the pass before: what it certified is not walked again.
                    rule_pass(SPECIALIZE_AND_SIMPLIFY),
                    indexed_terms,
                ),
            )
        ),
        fuse_elemwise,
        inplace_pass,
    ),
)
"""Full optimization, for `function(..., mode="fast_run")`; inplace is always last.
Sums of indexed terms are vectorized first, on the graph as built, so that every later
pass works on the small graph (at 500 terms stabilization alone took 1.5 s on the scalar
terms), and again once everything else is simplified, for the terms that simplification
or unrolling made alike (optimize must be idempotent). Loops are rewritten once their
inputs are simplified, and again once their bodies are (bodies only get simpler), with
the indexing rules cleaning up what unrolling leaves.
Stabilization runs before lifting: it removes readers (`log(1 - sigmoid(x))` stops
reading `sigmoid(x)`), and lifting depends on who reads a value, so the other order left
work for a second run (optimize must be idempotent)."""

FAST_COMPILE = Pipeline(
    "fast_compile",
    (rule_pass(INLINE), indexed_terms, rule_pass(SIMPLIFY), indexed_terms, rule_pass(SIMPLIFY)),
)
"""Cheap, always-worth-it rewrites only, for quick compiles (vectorizing sums of indexed
terms saves far more compile time than it costs; its second pass is for the terms that
simplification made alike, and its own result is simplified again)."""

NONE = Pipeline("none", ())
"""No rewriting at all: the graph as written."""

PIPELINES: Mapping[str, Pipeline] = MappingProxyType(
    {pipeline.name: pipeline for pipeline in (FAST_RUN, FAST_COMPILE, NONE)}
)


def optimize(graph: Graph, pipeline: str | Pipeline = "fast_run") -> Graph:
    """`graph` rewritten by `pipeline` (a name from `PIPELINES`, in any case, or a
    `Pipeline`); pure."""
    if isinstance(pipeline, str):
        pipeline = pipeline_named(pipeline)
    return pipeline(graph)


def pipeline_named(name: str) -> Pipeline:
    """The pipeline `PIPELINES` holds under `name`, in any case; a clear error if none."""
    found = PIPELINES.get(name.lower())  # PyTensor spells them "FAST_RUN"
    if found is None:
        raise ValueError(
            f"unknown pipeline {name!r}; known: {', '.join(sorted(PIPELINES))} "
            "(or pass a Pipeline)"
        )
    return found
