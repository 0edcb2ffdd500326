"""`Graph`: equality up to renaming of inputs, validation, `replace` and `clients`."""

from __future__ import annotations

import numpy as np
import pytest

from fgraph import (
    Constant,
    Graph,
    Input,
    MissingInputError,
    Param,
    ShapeError,
    TensorType,
    root_variables,
    toposort,
)
from tests.fgraph.builders import VECTOR, checked_graph, smuggle, vector
from tests.fgraph.toy_ops import Add, Exp, Scale, add, exp, sub


def test_graphs_equal_up_to_renaming_of_inputs() -> None:
    x, y = vector("x"), vector("y")
    a, b = vector("a"), vector("b")
    first = checked_graph([x, y], [exp(sub(x, y)), add(x, Constant(1.0))])
    second = checked_graph([a, b], [exp(sub(a, b)), add(a, Constant(1.0))])
    assert first == second
    assert hash(first) == hash(second)
    assert first != Graph([a, b], [add(a, Constant(1.0)), exp(sub(a, b))])  # output order


def test_graph_over_params_equals_graph_over_inputs() -> None:
    x = vector("x")
    p = Param(0, VECTOR)
    assert checked_graph([x], [exp(x)]) == checked_graph([p], [exp(p)])
    assert Graph([p], [exp(p)]).canonical_outputs == (exp(p),)


def test_commuted_inputs_make_a_different_graph() -> None:
    x, y = vector("x"), vector("y")
    assert Graph([x, y], [sub(x, y)]) != Graph([y, x], [sub(x, y)])
    assert Graph([x, y], [sub(x, y)]) == Graph([y, x], [sub(y, x)])


def test_arity_constants_and_input_types_distinguish_graphs() -> None:
    x, y = vector("x"), vector("y")
    assert Graph([x], [exp(x)]) != Graph([x, y], [exp(x)])
    assert Graph([x], [add(x, Constant(1.0))]) != Graph([x], [add(x, Constant(2.0))])
    assert Graph([x], [add(x, Constant(0.0))]) != Graph([x], [add(x, Constant(-0.0))])
    narrow = vector("x", dtype="float32")
    assert Graph([x], [exp(x)]) != Graph([narrow], [exp(narrow)])
    fixed = vector("x", length=3)
    assert Graph([x], [exp(x)]) != Graph([fixed], [exp(fixed)])
    assert Graph([x], [x]) != Graph([fixed], [fixed])
    assert Graph([x], [x]) == Graph([y], [y])
    assert Graph([x], [Scale(2.0)(x)]) != Graph([x], [Scale(3.0)(x)])
    assert Graph([x], [exp(x)]) != "a graph"


def test_nodes_are_a_deterministic_toposort() -> None:
    x, y = vector("x"), vector("y")
    left = exp(x)
    right = sub(x, y)
    out = add(left, right)
    graph = checked_graph([x, y], [out, left])
    assert graph.nodes == (left.owner, right.owner, out.owner)
    assert graph.nodes == toposort([out])
    assert graph.node_set == frozenset(graph.nodes)
    assert root_variables(graph.outputs) == (x, y)
    assert Graph([x, y], [out]).nodes == graph.nodes


def test_inputs_must_be_distinct_inputs_or_params() -> None:
    x = vector("x")
    with pytest.raises(TypeError, match="constants are not inputs"):
        Graph([Constant(1.0)], [exp(x)])
    with pytest.raises(TypeError, match="must be an Input or Param"):
        Graph([exp(x)], [exp(x)])
    with pytest.raises(ValueError, match=r"input 1 \(x\) is repeated"):
        Graph([x, x], [exp(x)])
    with pytest.raises(TypeError, match="output 0 must be a Variable"):
        Graph([x], [smuggle(np.ones(3))])


def test_outputs_using_an_undeclared_input_raise_missing_input() -> None:
    x, y = vector("x"), vector("secret")
    with pytest.raises(MissingInputError, match="secret"):
        Graph([x], [add(x, y)])
    with pytest.raises(MissingInputError, match="output 0 is secret"):
        Graph([x], [y])
    with pytest.raises(MissingInputError, match="p3"):
        Graph([x], [add(x, Param(3, VECTOR))])


def test_graphs_may_have_unused_inputs_and_constant_or_input_outputs() -> None:
    x, y = vector("x"), vector("y")
    one = Constant(1.0)
    graph = checked_graph([x, y], [x, one, exp(x)])
    assert graph.outputs == (x, one, exp(x))
    assert len(graph.nodes) == 1


def test_replace_returns_a_new_graph_and_leaves_the_old_one() -> None:
    x, y = vector("x"), vector("y")
    graph = checked_graph([x, y], [add(exp(x), y)])
    nodes_before = graph.nodes
    replaced = graph.replace({exp(x): sub(x, y)})
    assert replaced is not graph
    assert replaced.outputs == (add(sub(x, y), y),)
    assert replaced.inputs == graph.inputs
    assert graph.outputs == (add(exp(x), y),)
    assert graph.nodes == nodes_before
    assert replaced == checked_graph([x, y], [add(sub(x, y), y)])
    assert graph.replace({}) == graph
    assert graph.replace({y: x}).outputs == (add(exp(x), x),)


def test_replace_checks_types_and_inputs() -> None:
    x, y = vector("x"), vector("y")
    graph = Graph([x, y], [add(exp(x), y)])
    with pytest.raises(TypeError, match=r"cannot replace x: expected float64\(\?,\), got float32"):
        graph.replace({x: vector("z", dtype="float32")})
    with pytest.raises(TypeError, match="cannot replace y"):
        graph.replace({y: Input(TensorType("float64", (None, None)), "m")})
    fixed = Graph([vector("f", length=3)], [])
    with pytest.raises(ShapeError, match="cannot replace f"):
        fixed.replace({fixed.inputs[0]: vector("g", length=4)})
    with pytest.raises(MissingInputError, match="stranger"):
        graph.replace({x: vector("stranger")})
    with pytest.raises(TypeError, match="must be a Variable"):
        graph.replace({x: smuggle(1.0)})


def test_clients_list_every_reader_in_toposort_order() -> None:
    x, y = vector("x"), vector("y")
    expx = exp(x)
    total = add(expx, x)
    out = sub(total, expx)
    graph = checked_graph([x, y], [out])
    expx_node, total_node, out_node = graph.nodes
    assert graph.clients[x] == ((expx_node, 0), (total_node, 1))
    assert graph.clients[expx] == ((total_node, 0), (out_node, 1))
    assert graph.clients[total] == ((out_node, 0),)
    assert out not in graph.clients
    assert y not in graph.clients
    with pytest.raises(TypeError):
        smuggle(graph.clients)[y] = ()  # the mapping is read-only


def test_position_aware_flag_is_part_of_equality() -> None:
    x = vector("x")
    assert Graph([x], [exp(x)]) != Graph([x], [exp(x)], dedup_nodes=False)
    assert Graph([x], [exp(x)], dedup_nodes=False) == Graph([x], [exp(x)], dedup_nodes=False)


def test_repr_names_inputs_and_sizes() -> None:
    x, y = vector("x"), vector("y")
    graph = Graph([x, y], [add(x, y), Add()(exp(x), y)])
    assert repr(graph) == "Graph(inputs=[x, y], outputs=2, nodes=3)"
    assert Exp()(x).owner in graph.node_set
