"""Immutability at run time: every field of every graph object refuses assignment."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from fgraph import Apply, Constant, Graph, Param, TensorType
from tests.fgraph.builders import VECTOR, smuggle, vector
from tests.fgraph.toy_ops import Composite, Exp, Scale, SplitSign, exp


def frozen_objects() -> list[tuple[object, str]]:
    """(object, field) pairs covering every class a user can hold."""
    x = vector("x")
    output = SplitSign().apply(x)[1]
    node = output.owner
    assert node is not None
    graph = Graph([x], [exp(x)])
    p = Param(0, VECTOR)
    return [
        (VECTOR, "dtype"),
        (VECTOR, "shape"),
        (x, "type"),
        (x, "name"),
        (p, "index"),
        (p, "type"),
        (Constant(1.0), "data"),
        (Constant(1.0), "type"),
        (node, "op"),
        (node, "inputs"),
        (node, "position"),
        (node, "output_types"),
        (node, "structural_hash"),
        (output, "owner"),
        (output, "index"),
        (output, "type"),
        (graph, "inputs"),
        (graph, "outputs"),
        (graph, "nodes"),
        (graph, "dedup_nodes"),
        (graph, "digest"),
        (Scale(2.0), "factor"),
        (Composite(Graph([p], [exp(p)])), "inner_graph"),
    ]


@pytest.mark.parametrize(
    ("target", "field"),
    frozen_objects(),
    ids=[f"{type(target).__name__}.{field}" for target, field in frozen_objects()],
)
def test_assigning_a_field_raises(target: object, field: str) -> None:
    before = getattr(target, field)
    name = type(target).__name__
    with pytest.raises(attrs.exceptions.FrozenInstanceError,
                       match=f"{name} is frozen: cannot set '{field}'"):
        setattr(target, field, None)
    with pytest.raises(attrs.exceptions.FrozenInstanceError,
                       match=f"{name} is frozen: cannot delete '{field}'"):
        delattr(target, field)
    assert getattr(target, field) is before


@pytest.mark.parametrize("target", [VECTOR, vector("x"), Apply(Exp(), (vector("x"),)), Scale(1.0)])
def test_new_attributes_cannot_be_added(target: object) -> None:
    with pytest.raises((attrs.exceptions.FrozenInstanceError, AttributeError)):
        setattr(target, "note", "side data belongs in a weak-keyed map")


def test_constant_data_is_read_only() -> None:
    constant = Constant(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="read-only"):
        constant.data[0] = 5.0
    with pytest.raises(ValueError):
        constant.data.setflags(write=True)
    view = constant.data.reshape(2, 1)
    with pytest.raises(ValueError, match="read-only"):
        view[0, 0] = 5.0
    assert Constant(np.array([1.0, 2.0])) is constant
    assert constant.data.tolist() == [1.0, 2.0]


def test_tensor_type_fields_are_normalized_immutable_values() -> None:
    shaped = TensorType(np.float32, smuggle([2, np.int64(3), None]))
    assert shaped.dtype == "float32"
    assert shaped.shape == (2, 3, None)
    assert type(shaped.shape) is tuple and type(shaped.shape[1]) is int
    assert shaped == TensorType("float32", (2, 3, None))
    assert hash(shaped) == hash(TensorType("float32", (2, 3, None)))
