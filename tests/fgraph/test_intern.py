"""Hash-consing: structurally identical nodes, params and constants are one object."""

from __future__ import annotations

import gc

import attrs
import numpy as np
import pytest

from fgraph import Apply, Constant, Input, Output, Param, TensorType, intern_table_sizes
from tests.fgraph.builders import VECTOR, smuggle, vector
from tests.fgraph.toy_ops import Add, Exp, Scale, SplitSign, Zeros, add, exp


def test_same_op_on_same_inputs_is_the_same_node() -> None:
    x, y = vector("x"), vector("y")
    first = add(x, y).owner
    second = Add()(x, y).owner
    assert first is not None
    assert first is second
    assert Apply(Add(), (x, y)) is first
    assert Apply(Add(), smuggle([x, y]), smuggle(np.int64(0))) is first  # inputs and position are normalized


def test_nodes_differ_when_op_inputs_or_position_differ() -> None:
    x, y = vector("x"), vector("y")
    node = Apply(Add(), (x, y))
    assert Apply(Add(), (y, x)) is not node
    assert Apply(Add(), (x, x)) is not node
    assert Apply(Add(), (x, y), 1) is not node
    assert Apply(Scale(2.0), (x,)) is not Apply(Scale(3.0), (x,))
    assert Apply(Scale(2.0), (x,)) is Apply(Scale(2.0), (x,))  # equal ops by fields


def test_keyword_construction_and_evolve_go_through_the_table() -> None:
    x, y = vector("x"), vector("y")
    node = Apply(Add(), (x, y), 0)
    assert Apply(op=Add(), inputs=(x, y), position=0) is node
    assert Apply(Add(), inputs=smuggle([x, y])) is node
    assert attrs.evolve(node) is node
    assert attrs.evolve(node, position=0) is node
    moved = attrs.evolve(node, position=2)
    assert moved is not node
    assert moved.position == 2
    assert moved is Apply(Add(), (x, y), 2)
    assert attrs.evolve(moved, position=0) is node
    assert attrs.evolve(node, inputs=(y, x)) is Apply(Add(), (y, x))


def test_outputs_are_value_objects_of_the_interned_node() -> None:
    x = vector("x")
    positive, negative = SplitSign().apply(x)
    again = SplitSign().apply(x)
    assert isinstance(positive, Output)
    assert positive.owner is negative.owner is again[0].owner
    assert positive == again[0] and hash(positive) == hash(again[0])
    assert positive != negative
    assert (positive.index, negative.index) == (0, 1)
    assert positive.type == x.type


def test_structural_hash_is_computed_once_and_is_the_hash() -> None:
    node = Apply(Exp(), (vector("x"),))
    assert hash(node) == node.structural_hash
    assert node.output_types == (VECTOR,)


def test_apply_validates_its_arguments() -> None:
    x = vector("x")
    with pytest.raises(TypeError, match="needs an Op"):
        Apply(smuggle("add"), (x,))
    with pytest.raises(TypeError, match="input 1 must be a Variable"):
        Apply(Add(), (x, smuggle(np.ones(3))))
    with pytest.raises(TypeError, match="non-negative int"):
        Apply(Exp(), (x,), -1)
    with pytest.raises(TypeError, match="non-negative int"):
        Apply(Exp(), (x,), True)


def test_infer_errors_propagate_and_register_nothing() -> None:
    x = vector("x", length=2)
    y = vector("y", length=3)
    before = intern_table_sizes()["Apply"]
    with pytest.raises(ValueError, match=r"\(2,\), \(3,\)"):
        add(x, y)
    assert intern_table_sizes()["Apply"] == before


def test_constants_are_keyed_on_dtype_shape_and_bytes() -> None:
    assert Constant(2.0) is Constant(2.0)
    assert Constant(np.array([1.0, 2.0])) is Constant([1.0, 2.0])
    assert Constant(-0.0) is not Constant(0.0)
    assert Constant(1) is not Constant(1.0)
    assert Constant(True) is not Constant(1)
    assert Constant(np.asarray(1.0, dtype="float32")) is not Constant(1.0)
    assert Constant(np.zeros((2, 3))) is not Constant(np.zeros((3, 2)))
    assert Constant(np.zeros(6)) is not Constant(np.zeros((2, 3)))
    assert Constant(np.nan) is Constant(np.nan)
    assert Constant(np.array([1.0, np.nan])) is Constant(np.array([1.0, np.nan]))
    assert Constant(np.arange(6.0)[::2]) is Constant([0.0, 2.0, 4.0])  # copied contiguous


def test_constant_type_and_evolve() -> None:
    constant = Constant(np.ones((2, 3), dtype="int32"))
    assert constant.type == TensorType("int32", (2, 3))
    assert attrs.evolve(constant) is constant
    assert attrs.evolve(constant, data=np.zeros(2)) is Constant(np.zeros(2))


def test_constant_copies_its_data() -> None:
    source = np.array([1.0, 2.0])
    constant = Constant(source)
    source[0] = 5.0
    assert constant.data[0] == 1.0
    assert Constant(source) is not constant


def test_params_are_interned_on_index_and_type() -> None:
    param = Param(0, VECTOR)
    assert Param(0, TensorType("float64", (None,))) is param
    assert Param(index=0, type=VECTOR) is param
    assert Param(smuggle(np.int64(0)), VECTOR) is param
    assert attrs.evolve(param, index=0) is param
    assert attrs.evolve(param, index=1) is Param(1, VECTOR)
    assert Param(1, VECTOR) is not param
    assert Param(0, TensorType("float32", (None,))) is not param
    assert Param(0, TensorType("float64", (3,))) is not param
    with pytest.raises(TypeError, match="non-negative int"):
        Param(-1, VECTOR)
    with pytest.raises(TypeError, match="TensorType"):
        Param(0, smuggle("float64"))


def test_inputs_are_unique_per_creation() -> None:
    first, second = Input(VECTOR, "x"), Input(VECTOR, "x")
    assert first is not second and first != second
    assert exp(first).owner is not exp(second).owner


def test_intern_tables_report_live_entries_and_release_dropped_ones() -> None:
    gc.collect()
    before = intern_table_sizes()
    x = vector("x")
    value = exp(add(x, Constant(np.array([7.25, -3.5]))))
    param = Param(17, TensorType("int8", (5, 5)))
    during = intern_table_sizes()
    assert during["Apply"] == before["Apply"] + 2
    assert during["Constant"] == before["Constant"] + 1
    assert during["Param"] == before["Param"] + 1
    del x, value, param
    gc.collect()
    assert intern_table_sizes() == before


def test_op_parameters_are_keyed_exactly() -> None:
    x = vector("x")
    negative_zero = Scale(-0.0)(x)
    positive_zero = Scale(0.0)(x)
    assert negative_zero.owner is not positive_zero.owner


def test_op_with_nan_parameter_is_interned() -> None:
    x = vector("x")
    assert Scale(float("nan"))(x).owner is Scale(float("nan"))(x).owner


def test_zero_input_nodes_are_interned_per_position() -> None:
    assert Apply(Zeros(5), ()) is Apply(Zeros(5), ())
    assert Apply(Zeros(5), (), 1) is not Apply(Zeros(5), (), 2)
    assert Apply(Zeros(5), ()) is not Apply(Zeros(6), ())
