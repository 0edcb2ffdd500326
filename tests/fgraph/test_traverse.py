"""Traversals and the op protocol: deterministic orders, `rebuild`, and op conveniences."""

from __future__ import annotations

import numpy as np
import pytest

from fgraph import (
    Constant,
    Graph,
    Param,
    display_name,
    inner_graphs_of,
    rebuild,
    root_variables,
    toposort,
)
from tests.fgraph.builders import VECTOR, vector
from tests.fgraph.toy_ops import Add, Composite, Exp, Scale, SplitSign, add, exp, sub


def test_toposort_is_depth_first_left_to_right_and_deduplicated() -> None:
    x, y = vector("x"), vector("y")
    left, right = exp(x), exp(y)
    out = add(sub(left, right), left)
    order = toposort([out, right])
    assert order == (left.owner, right.owner, sub(left, right).owner, out.owner)
    assert toposort([right, out])[0] is right.owner
    assert toposort([x, Constant(1.0)]) == ()
    assert toposort([out, out]) == order


def test_root_variables_in_first_use_order() -> None:
    x, y = vector("x"), vector("y")
    one = Constant(np.array([1.0]))
    out = add(sub(y, one), x)
    assert root_variables([out]) == (y, one, x)
    assert root_variables([x, out]) == (y, one, x)
    assert root_variables([x]) == (x,)


def test_rebuild_replaces_and_keeps_unchanged_nodes() -> None:
    x, y, z = vector("x"), vector("y"), vector("z")
    kept = exp(y)
    out = add(exp(x), kept)
    assert rebuild([out], {}) == (out,)
    (replaced,) = rebuild([out], {x: z})
    assert replaced == add(exp(z), kept)
    assert replaced.owner is not None and replaced.owner.inputs[1] is kept
    assert rebuild([x, out], {x: z})[0] is z
    (swapped,) = rebuild([sub(x, y)], {x: y, y: x})  # simultaneous, not sequential
    assert swapped == sub(y, x)


def test_rebuild_keeps_a_replacement_whose_own_inputs_are_replaced() -> None:
    """Replacing both a variable and something computed from it (what closing a loop's
    body over outer values does) must not re-create the replaced node from its new
    inputs: the replacement given for it wins."""
    x, p, q = vector("x"), vector("p"), vector("q")
    inner = exp(x)
    outer = add(inner, x)
    (rebuilt,) = rebuild([add(outer, x)], {x: p, outer: q})
    assert rebuilt == add(q, p)


def test_rebuild_with_positions() -> None:
    x = vector("x")
    out = add(exp(x), x)
    (moved,) = rebuild([out], {}, position=lambda number, node: number + 10)
    assert moved.owner is not None
    assert moved.owner.position == 11
    assert moved.owner.inputs[0].owner is not None
    assert moved.owner.inputs[0].owner.position == 10


def test_op_call_apply_and_string_forms() -> None:
    x = vector("x")
    assert str(Scale(2.5)) == "Scale{factor=2.5}" and str(Add()) == "Add"
    assert str(Composite(Graph([Param(0, VECTOR)], []))) == "Composite{inner_graph=<graph>}"
    with pytest.raises(TypeError, match="has 2 outputs; use op.apply"):
        SplitSign()(x)
    node = SplitSign().make_node(x)
    with pytest.raises(TypeError, match="has 2 outputs; use .outputs"):
        _ = node.out
    assert SplitSign().apply(x) == node.outputs
    assert Exp().make_node(x).out == exp(x)


def test_inner_graphs_of() -> None:
    p = Param(0, VECTOR)
    inner = Graph([p], [exp(p)])
    assert inner_graphs_of(Composite(inner)) == (inner,)
    assert inner_graphs_of(Exp()) == ()


def test_display_names() -> None:
    assert display_name(vector("weights")) == "weights"
    assert display_name(Param(2, VECTOR)) == "p2"
    assert "Constant" in display_name(Constant(1.0))
    assert repr(vector("x")) == "Input(x: float64(?,))"
    assert repr(Param(1, VECTOR)) == "Param(1: float64(?,))"
    assert repr(Constant(np.array([1, 2], dtype="int8"))) == "Constant([1, 2]: int8(2,))"
    assert repr(Constant(np.zeros((3, 3)))) == "Constant(float64(3, 3))"
    assert repr(exp(vector("x"))) == "Output(Exp: float64(?,))"
    assert repr(SplitSign().apply(vector("x"))[1]) == "Output(SplitSign.1: float64(?,))"
    assert repr(Exp().make_node(vector("x"))) == "Apply(Exp, inputs=1, position=0)"
