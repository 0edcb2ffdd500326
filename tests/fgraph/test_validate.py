"""`check_graph`: passes on well-formed graphs and names the broken invariant otherwise.

Graphs built through the public API are valid by construction, except where an op itself
is buggy (a non-deterministic `infer`). The other invalid graphs here are forged by
bypassing the constructors with `object.__new__`, as only a buggy extension could.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from fgraph import Apply, Constant, Graph, InvalidGraphError, Param, Variable, check_graph
from tests.fgraph.builders import VECTOR, checked_graph, vector
from tests.fgraph.test_digest import different_graphs, reference_graph
from tests.fgraph.toy_ops import Composite, Exp, FlakyInfer, SplitSign, Zeros, add, exp


def forged_graph(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    nodes: Sequence[Apply],
    dedup_nodes: bool = True,
) -> Graph:
    """A Graph whose fields are set directly, skipping every check the constructor makes."""
    graph = object.__new__(Graph)
    graph.__attrs_init__(tuple(inputs), tuple(outputs), dedup_nodes, tuple(nodes))
    return graph


def test_well_formed_graphs_pass() -> None:
    check_graph(reference_graph())
    for graph in different_graphs():
        check_graph(graph)
    first, second = Apply(Zeros(2), (), 4).out, Apply(Zeros(2), (), 9).out
    check_graph(Graph([], [add(first, second)], dedup_nodes=False))
    check_graph(Graph([], [add(first, second)]))
    check_graph(Graph([], []))


def test_non_deterministic_infer_is_caught() -> None:
    x = vector("x")
    out = FlakyInfer()(x)
    graph = Graph([x], [exp(out)])  # construction trusts the types inferred at creation
    with pytest.raises(InvalidGraphError, match=r"node 0 \(FlakyInfer\) has output types"):
        check_graph(graph)


def test_position_that_does_not_match_the_dedup_mode_is_caught() -> None:
    x = vector("x")
    moved = Apply(Exp(), (x,), 3)
    with pytest.raises(InvalidGraphError, match="node 0 .* has position 3, expected 0"):
        check_graph(forged_graph([x], [moved.out], [moved]))
    first, second = Apply(Exp(), (x,)), Apply(Exp(), (exp(x),))
    with pytest.raises(InvalidGraphError, match="node 1 .* has position 0, expected 1"):
        check_graph(forged_graph([x], [second.out], [first, second], dedup_nodes=False))


def test_nodes_out_of_order_are_caught() -> None:
    x = vector("x")
    inner, outer = Apply(Exp(), (x,)), Apply(Exp(), (exp(x),))
    with pytest.raises(InvalidGraphError, match="node 0 .* reads .*neither an input"):
        check_graph(forged_graph([x], [outer.out], [outer, inner]))


def test_undeclared_input_is_caught() -> None:
    x, y = vector("x"), vector("y")
    node = Apply(Exp(), (y,))
    with pytest.raises(InvalidGraphError, match="reads y"):
        check_graph(forged_graph([x], [node.out], [node]))
    with pytest.raises(InvalidGraphError, match="output 0 .* is not computed"):
        check_graph(forged_graph([x], [node.out], []))
    with pytest.raises(InvalidGraphError, match="output 0 .*y.* is not computed"):
        check_graph(forged_graph([x], [y], []))


def test_bad_inputs_are_caught() -> None:
    x = vector("x")
    with pytest.raises(InvalidGraphError, match="bad or repeated graph input"):
        check_graph(forged_graph([x, x], [x], []))
    with pytest.raises(InvalidGraphError, match="bad or repeated graph input"):
        check_graph(forged_graph([Constant(1.0)], [], []))


def test_node_that_bypassed_the_intern_table_is_caught() -> None:
    x = vector("x")
    interned = Apply(Exp(), (x,))
    impostor = object.__new__(Apply)
    Apply.__init__(impostor, Exp(), (x,), 0)
    assert impostor is not interned
    assert impostor.output_types == interned.output_types
    with pytest.raises(InvalidGraphError, match=r"node 0 \(Exp\) is not the interned node"):
        check_graph(forged_graph([x], [impostor.out], [impostor]))


def test_invalid_inner_graph_is_caught_from_the_outer_graph() -> None:
    p = Param(0, VECTOR)
    node = Apply(SplitSign(), (p,), 2)
    broken_inner = forged_graph([p], [node.outputs[1]], [node])
    x = vector("x")
    outer = Graph([x], [Composite(broken_inner)(x)])
    with pytest.raises(InvalidGraphError, match="has position 2, expected 0"):
        check_graph(outer)


def test_ops_with_equal_inner_graphs_share_one_node_and_check() -> None:
    p = Param(0, VECTOR)
    x = vector("x")
    first = Composite(Graph([p], [exp(p)]))
    second = Composite(Graph([p], [exp(p)]))
    assert first == second and first.inner_graph is not second.inner_graph
    graph = checked_graph([x], [add(first(x), second(x))])
    assert len(graph.nodes) == 2  # equal ops, same input: one node
