"""Helpers for the tests of the algebraic rule sets: apply rules with the validator on,
compare values with the reference evaluator, name what a graph computes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fgraph import Graph, Variable, check_graph, evaluate
from fgraph.op import Array
from ops.elemwise import Elemwise
from rewrite import RuleSet, rewrite_graph

RNG = np.random.default_rng(0)


def rewritten(graph: Graph, rules: RuleSet) -> Graph:
    """`rewrite_graph` with the validator run on its input and result."""
    check_graph(graph)
    result = rewrite_graph(graph, rules)
    check_graph(result)
    return result


def ops_of(graph: Graph) -> list[str]:
    """What each node computes, in order: the scalar op for elementwise nodes."""
    return [
        str(node.op.scalar_op) if isinstance(node.op, Elemwise) else type(node.op).__name__
        for node in graph.nodes
    ]


def assert_same_values(before: Graph, after: Graph, *values: Array) -> None:
    """Both graphs give the same dtypes and values (nan where nan) on `values`, up to a
    few units of the dtype's resolution (stable forms round differently)."""
    expected = evaluate(before.outputs, dict(zip(before.inputs, values)))
    got = evaluate(after.outputs, dict(zip(after.inputs, values)))
    assert len(expected) == len(got)
    for want, have in zip(expected, got):
        assert have.dtype == want.dtype and have.shape == want.shape
        resolution = np.finfo(want.dtype).resolution if want.dtype.kind in "fc" else 0.0
        np.testing.assert_allclose(have, want, rtol=max(1e-6, 20 * float(resolution)))


def random_value(variable: Variable, low: float = -3.0, high: float = 3.0) -> Array:
    """A random value for an input of static shape (None lengths become 4)."""
    shape = tuple(4 if length is None else length for length in variable.type.shape)
    return RNG.uniform(low, high, size=shape).astype(variable.dtype)


def check_rewrite(graph: Graph, rules: RuleSet, *values: Array) -> Graph:
    """`graph` rewritten by `rules`, checked to give the same values (random ones
    when none are given)."""
    result = rewritten(graph, rules)
    chosen: Sequence[Array] = values or tuple(random_value(v) for v in graph.inputs)
    assert_same_values(graph, result, *chosen)
    return result
