"""Parity of the numba backend with the reference evaluator on random graphs
(`tests.graph_strategies`), compiled with `function(..., mode="fast_run")`.

Each example is a cold numba compile (about half a second), so the graphs are small and
the example count a small share of the profile's. Only steps whose ops have numba
kernels are generated: each step of the vocabulary is probed by generating (not
compiling) the code of a one-step graph, so coverage grows as kernels land, and
`EXCLUDED_STEPS` names what is left out. Bugs this test found are pinned by explicit
tests at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

import numpy as np
from hypothesis import given, settings

import ops as pt
from fgraph import Graph, Variable, check_graph, evaluate
from numba_backend import MissingKernelError, function
from numba_backend.codegen import generate
from ops.dimshuffle import DimShuffle
from rewrite import optimize
from tests.graph_strategies import (
    OP_NAMES,
    UNARY,
    GeneratedGraph,
    assert_outputs_close,
    graphs,
    scaled_examples,
)

_Probe = Callable[[Variable, Variable], Variable]
"""A step applied to a float64 (2, 3) matrix `x`, with a (3, 2) matrix `y` at hand."""


def _on_x(apply: Callable[[Variable], Variable]) -> _Probe:
    return lambda x, y: apply(x)


_STEP_PROBES: Mapping[str, _Probe] = MappingProxyType(
    {
        **{name: _on_x(unary.apply) for name, unary in UNARY.items()},
        "add": lambda x, y: pt.add(x, x),
        "sub": lambda x, y: pt.sub(x, 1.0),
        "mul": lambda x, y: pt.mul(x, x),
        "true_div": lambda x, y: pt.true_div(x, x),
        "maximum": lambda x, y: pt.maximum(x, x),
        "minimum": lambda x, y: pt.minimum(x, 0.0),
        "pow": lambda x, y: pt.pow(x, 1.5),
        "where": lambda x, y: pt.where(pt.gt(x, 0.5), x, 1.0),
        "clip": lambda x, y: pt.clip(x, -1.0, 1.0),
        "fill": lambda x, y: pt.second(x, 2.0),
        "cast": lambda x, y: pt.cast(x, "float32"),
        "softmax": lambda x, y: pt.softmax(x),
        "log_softmax": lambda x, y: pt.log_softmax(x),
        "logsumexp": lambda x, y: pt.logsumexp(x),
        "squeeze": lambda x, y: pt.squeeze(x[:1]),
        "set_subtensor": lambda x, y: pt.set_subtensor(x[1:, ::-1], 2.0),
        "inc_subtensor": lambda x, y: pt.inc_subtensor(x[np.array([1, 0])], x[:1]),
        "log_sigmoid": lambda x, y: pt.log(pt.sigmoid(x)),
        "log_one_minus_sigmoid": lambda x, y: pt.log(1.0 - pt.sigmoid(x)),
        "log_sum_exp": lambda x, y: pt.log(pt.sum(pt.exp(x), 1)),
        "log_of_softmax": lambda x, y: pt.log(pt.softmax(x)),
        "exp_minus_one": lambda x, y: pt.exp(x) - 1.0,
        "double_cast": lambda x, y: pt.cast(pt.cast(x, "float32"), "float64"),
        "slice_of_slice": lambda x, y: x[1:][::-1],
        "slice_of_elemwise": lambda x, y: (x * 2.0)[1],
        "slice_of_update": lambda x, y: pt.set_subtensor(x[1:], 1.0)[:, 1:],
        "update_twice": lambda x, y: pt.inc_subtensor(pt.set_subtensor(x[1:], 1.0)[1:], x[:1]),
        "broadcast_like": lambda x, y: pt.broadcast_to(x[:1], pt.shape(x)),
        "alloc_like": lambda x, y: pt.alloc(x[1], pt.shape(x)),
        "reshape_like": lambda x, y: pt.reshape(x, pt.shape(pt.reshape(x, (3, 2)))),
        "sum": lambda x, y: pt.sum(x, 0),
        "max": lambda x, y: pt.max(x, 1),
        "mean": lambda x, y: pt.mean(x),
        "transpose": lambda x, y: pt.transpose(x),
        "expand_dims": lambda x, y: pt.expand_dims(x, 1),
        "reshape": lambda x, y: pt.reshape(x, (3, 2)),
        "flatten": lambda x, y: pt.flatten(x),
        "slice": lambda x, y: x[::-1, 1:],
        "take": lambda x, y: x[np.array([1, -1, 0])],
        "matmul": lambda x, y: pt.matmul(x, y),
    }
)


def _has_kernels(step: str) -> bool:
    """Whether code can be generated for `step`'s probe graph after fast_run."""
    x, y = pt.tensor("x", shape=(2, 3)), pt.tensor("y", shape=(3, 2))
    graph = Graph([x, y], [_STEP_PROBES[step](x, y)])
    try:
        generate(optimize(graph, "fast_run"))
    except MissingKernelError:
        return False
    return True


SUPPORTED_STEPS = frozenset(step for step in OP_NAMES if _has_kernels(step))
EXCLUDED_STEPS = OP_NAMES - SUPPORTED_STEPS
"""Steps whose ops have no numba kernel yet (see the module docstring)."""


def test_every_step_has_a_probe() -> None:
    """A new step of the strategy needs a probe, or it would never be checked for kernels."""
    assert set(_STEP_PROBES) == OP_NAMES


@settings(max_examples=scaled_examples(0.2))
@given(graphs(vocabulary=SUPPORTED_STEPS, max_steps=4))
def test_numba_matches_evaluate(example: GeneratedGraph) -> None:
    """The compiled function returns the evaluator's values, dtypes and shapes."""
    graph = example.graph
    check_graph(graph)
    compiled = function(list(graph.inputs), list(graph.outputs), mode="fast_run")
    check_graph(compiled.graph)
    expected = evaluate(graph.outputs, example.feed)
    assert_outputs_close(compiled(*example.values), expected, example)


def test_dimshuffle_of_every_axis() -> None:
    """A graph the fuzz test found: a DimShuffle that drops every input axis and inserts
    new ones (`expand_dims(max(x, axis=0), 0)` with x of shape (1,), after rewriting)
    once generated `i0[0,][None,]`, which numba cannot type."""
    x = pt.tensor("x", shape=(1,))
    compiled = function([x], DimShuffle((None,))(x))
    np.testing.assert_array_equal(compiled(np.array([2.5])), np.array([2.5]))


def test_graphs_whose_fused_nodes_share_constants_differently() -> None:
    """Found by the fuzz test (as `TypeError: not enough arguments: expected 4, got 3`):
    two graphs equal but for constant values, where equal constants in different fused
    nodes become one argument of the generated code."""
    x, y, z = (pt.tensor(name, shape=(length,)) for name, length in (("x", 3), ("y", 4), ("z", 5)))
    function([x, y, z], [pt.exp(x + 1.0), pt.exp(y + 2.0), pt.exp(z + 1.0)])
    outputs = [pt.exp(x + 1.0), pt.exp(y + 2.0), pt.exp(z + 2.0)]
    values = (np.zeros(3), np.zeros(4), np.zeros(5))
    actual = function([x, y, z], outputs)(*values)
    expected = evaluate(outputs, dict(zip((x, y, z), values)))
    for got, want in zip(actual, expected):
        np.testing.assert_allclose(got, want)
