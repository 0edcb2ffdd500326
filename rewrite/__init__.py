"""The rewrite engine: rules, rule sets, the one driver, passes and named pipelines."""

from fgraph.packages import require_package

require_package("ops")

from rewrite.context import Clients, GraphContext, RewriteContext
from rewrite.engine import DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_SWEEPS, rewrite_graph
from rewrite.errors import (
    InvalidReplacementError,
    RewriteCycleError,
    RewriteError,
    RewriteLimitError,
    RewriteWarning,
)
from rewrite.fusion import fuse_elemwise
from rewrite.inc_subtensor import INC_SUBTENSOR
from rewrite.inline import INLINE
from rewrite.inner import InnerGraphPass, evolve_inner_graph, map_inner_graphs
from rewrite.loops import LOOP_RULES, loop_pass
from rewrite.loops_merge import merge_loops
from rewrite.loops_trace import trim_traces
from rewrite.pipeline import Pass, Pipeline, RulePass, pass_name, rule_pass
from rewrite.pipelines import FAST_COMPILE, FAST_RUN, INNER_GRAPHS, NONE, PIPELINES, optimize
from rewrite.rules import (
    AnyRule,
    ContextRule,
    ContextualRule,
    NodeRule,
    Rule,
    RuleSet,
    context_rule,
    rule,
)
from rewrite.shapes import SHAPES
from rewrite.subtensor import LIFT_SUBTENSOR, SUBTENSOR
from rewrite.trace import RuleFailed, RuleFired, Trace, TraceEntry

__all__ = [
    "DEFAULT_MAX_ITERATIONS",
    "DEFAULT_MAX_SWEEPS",
    "FAST_COMPILE",
    "FAST_RUN",
    "INC_SUBTENSOR",
    "INLINE",
    "INNER_GRAPHS",
    "LIFT_SUBTENSOR",
    "LOOP_RULES",
    "NONE",
    "PIPELINES",
    "SHAPES",
    "SUBTENSOR",
    "AnyRule",
    "Clients",
    "ContextRule",
    "ContextualRule",
    "GraphContext",
    "InnerGraphPass",
    "InvalidReplacementError",
    "NodeRule",
    "Pass",
    "Pipeline",
    "RewriteContext",
    "RewriteCycleError",
    "RewriteError",
    "RewriteLimitError",
    "RewriteWarning",
    "Rule",
    "RuleFailed",
    "RuleFired",
    "RuleSet",
    "RulePass",
    "Trace",
    "TraceEntry",
    "context_rule",
    "evolve_inner_graph",
    "fuse_elemwise",
    "loop_pass",
    "map_inner_graphs",
    "merge_loops",
    "optimize",
    "pass_name",
    "rewrite_graph",
    "rule",
    "rule_pass",
    "trim_traces",
]
