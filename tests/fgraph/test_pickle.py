"""Pickling: every object round-trips, and unpickled nodes are re-interned."""

from __future__ import annotations

import copy
import pickle
from typing import TypeVar

import numpy as np

from fgraph import Apply, Constant, Graph, Input, Output, Param, TensorType, check_graph
from tests.fgraph.builders import VECTOR, checked_graph, vector
from tests.fgraph.toy_ops import Composite, Scale, SplitSign, add, exp, sub


T = TypeVar("T")


def round_trip(value: T) -> T:
    loaded: T = pickle.loads(pickle.dumps(value))
    return loaded


def param_graph() -> Graph:
    """A graph whose inputs are params: unpickling it yields the very same nodes."""
    p, q = Param(0, VECTOR), Param(1, VECTOR)
    inner = Graph([p], [Scale(0.5)(exp(p))])
    positive, negative = SplitSign().apply(sub(p, q))
    return checked_graph(
        [p, q], [add(Composite(inner)(positive), Constant(np.array([1.0, -0.0]))), negative]
    )


def test_params_and_constants_unpickle_to_the_identical_object() -> None:
    param = Param(3, TensorType("int16", (2, None)))
    assert round_trip(param) is param
    for constant in (Constant(-0.0), Constant(np.nan), Constant(np.arange(6, dtype="uint8"))):
        assert round_trip(constant) is constant
    assert round_trip(Constant(-0.0)) is not Constant(0.0)


def test_graph_over_params_unpickles_to_identical_outputs() -> None:
    graph = param_graph()
    loaded = round_trip(graph)
    assert loaded is not graph
    assert loaded == graph
    assert loaded.inputs == graph.inputs
    assert all(a is b for a, b in zip(loaded.nodes, graph.nodes))
    assert loaded.outputs == graph.outputs
    assert loaded.digest == graph.digest
    check_graph(loaded)


def test_nodes_and_outputs_unpickle_to_the_identical_object() -> None:
    graph = param_graph()
    for node in graph.nodes:
        assert round_trip(node) is node
        for output in node.outputs:
            loaded = round_trip(output)
            assert isinstance(loaded, Output)
            assert loaded == output and loaded.owner is node


def test_graph_over_inputs_round_trips_to_an_equal_graph() -> None:
    x, y = vector("x"), vector("y")
    graph = checked_graph([x, y], [add(exp(x), y), SplitSign().apply(x)[1]])
    data = pickle.dumps(graph)
    first, second = pickle.loads(data), pickle.loads(data)
    assert first == graph and second == graph and first == second
    assert first.digest == graph.digest
    assert [variable.name for variable in first.inputs if isinstance(variable, Input)] == ["x", "y"]
    # Inputs are unique per creation, so each load has its own inputs and nodes ...
    assert first.inputs[0] is not second.inputs[0]
    # ... but within one load, nodes are interned and shared.
    negative = SplitSign().apply(first.inputs[0])[1]
    assert first.outputs[1] == negative
    check_graph(first)


def test_position_aware_graph_round_trips() -> None:
    p = Param(0, VECTOR)
    twice_a, twice_b = (Apply(Scale(2.0), (p,), position).out for position in (1, 2))
    graph = checked_graph([p], [add(twice_a, twice_b)], dedup_nodes=False)
    loaded = round_trip(graph)
    assert loaded == graph
    assert not loaded.dedup_nodes
    assert [node.position for node in loaded.nodes] == [0, 1, 2]
    assert loaded.outputs == graph.outputs


def test_pickled_node_over_inputs_is_rebuilt_with_its_inputs() -> None:
    x = vector("x")
    node = exp(add(x, x)).owner
    assert node is not None
    loaded = round_trip(node)
    assert isinstance(loaded, Apply)
    assert loaded.op == node.op and loaded.position == node.position
    (loaded_sum,) = loaded.inputs
    assert loaded_sum.owner is not None
    (loaded_x, again) = loaded_sum.owner.inputs
    assert loaded_x is again and isinstance(loaded_x, Input) and loaded_x.name == "x"


def test_copying_interned_objects_returns_them() -> None:
    graph = param_graph()
    for node in graph.nodes:
        assert copy.copy(node) is node and copy.deepcopy(node) is node
        assert copy.deepcopy(node.outputs) == node.outputs
    for variable in (*graph.inputs, Constant(np.array([3, 4]))):
        assert copy.copy(variable) is variable and copy.deepcopy(variable) is variable
    assert copy.deepcopy(graph) == graph


def test_graph_whose_output_is_an_unread_input_round_trips() -> None:
    import pickle

    from fgraph import Graph, Input, TensorType

    x = Input(TensorType("float64", (None,)), "x")
    graph = Graph([x], [x])
    restored = pickle.loads(pickle.dumps(graph))
    assert restored == graph
    assert restored.outputs[0] is restored.inputs[0]
