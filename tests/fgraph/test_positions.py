"""Position-aware graphs: `dedup_nodes=False` keeps structurally identical nodes apart."""

from __future__ import annotations

from fgraph import Apply, Variable
from tests.fgraph.builders import checked_graph, vector
from tests.fgraph.toy_ops import Add, Exp, Zeros, add, exp


def two_buffers() -> tuple[Variable, Variable]:
    """Two `zeros(5)` buffers created explicitly at different positions."""
    return Apply(Zeros(5), (), 1).out, Apply(Zeros(5), (), 2).out


def test_every_node_gets_its_toposort_index_as_position() -> None:
    x, y = vector("x"), vector("y")
    graph = checked_graph([x, y], [add(exp(x), exp(y)), exp(x)], dedup_nodes=False)
    assert [node.position for node in graph.nodes] == [0, 1, 2]
    assert [node.op for node in graph.nodes] == [Exp(), Exp(), Add()]
    assert [node.inputs for node in graph.nodes[:2]] == [(x,), (y,)]
    assert graph.nodes[2].inputs == (graph.nodes[0].out, graph.nodes[1].out)
    assert graph.outputs == (graph.nodes[2].out, exp(x))  # exp(x) already sat at position 0


def test_identical_nodes_at_different_positions_stay_distinct() -> None:
    first, second = two_buffers()
    assert first.owner is not second.owner
    assert first != second
    graph = checked_graph([], [add(first, second)], dedup_nodes=False)
    zeros = [node for node in graph.nodes if node.op == Zeros(5)]
    assert len(graph.nodes) == 3
    assert [node.position for node in zeros] == [0, 1]
    assert graph.nodes[2].inputs == (zeros[0].out, zeros[1].out)


def test_identical_position_aware_graphs_compare_equal() -> None:
    x, y = vector("x"), vector("y")

    def build(u: Variable, v: Variable) -> list[Variable]:
        first, second = two_buffers()
        return [add(add(first, exp(u)), add(second, exp(v)))]

    one = checked_graph([x, y], build(x, y), dedup_nodes=False)
    two = checked_graph([x, y], build(x, y), dedup_nodes=False)
    renamed_inputs = [vector("a"), vector("b")]
    three = checked_graph(renamed_inputs, build(*renamed_inputs), dedup_nodes=False)
    assert one.outputs == two.outputs  # interned all the way down
    assert one == two == three
    assert hash(one) == hash(three)
    assert one.digest == three.digest
    again = checked_graph(one.inputs, one.outputs, dedup_nodes=False)
    assert again.outputs == one.outputs and again.nodes == one.nodes


def test_dedup_graph_of_position_aware_outputs_collapses_duplicates() -> None:
    first, second = two_buffers()
    aware = checked_graph([], [add(first, second)], dedup_nodes=False)
    assert len(aware.nodes) == 3
    dedup = checked_graph([], aware.outputs)
    assert [node.position for node in dedup.nodes] == [0, 0]
    zeros = Apply(Zeros(5), ()).out
    assert dedup.outputs == (add(zeros, zeros),)
    assert dedup == checked_graph([], [add(first, second)])
    assert dedup != aware


def test_position_aware_graph_without_duplicates_keeps_its_shape() -> None:
    x = vector("x")
    out = add(exp(exp(x)), x)
    aware = checked_graph([x], [out], dedup_nodes=False)
    dedup = checked_graph([x], [out])
    assert [node.op for node in aware.nodes] == [node.op for node in dedup.nodes]
    assert [node.position for node in aware.nodes] == [0, 1, 2]
    assert checked_graph([x], aware.outputs) == dedup
    assert checked_graph([x], aware.outputs).outputs == (out,)
