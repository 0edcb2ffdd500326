"""`OpFromGraph` inlined by the numba backend, against the reference evaluator: one op
applied twice (each application gets its own names), several outputs, inner constants,
an output that is an inner input, nesting, and the pullback op of a gradient."""

from __future__ import annotations

import numpy as np
import pytest

import ops as pt
from numba_backend import function
from ops.indexing import Slice
from ops.subtensor import IncSubtensor
from tests.numba_backend.batch_parity import Array, Batch, assert_same


def _build() -> Batch:
    batch = Batch(seed=4)
    a, b = pt.vector("a"), pt.vector("b")
    affine = pt.op_from_graph([a, b], [pt.exp(a) * 2.0 + b, (a * b).sum(), a])
    x, y = batch.input((4,)), batch.input((4,))
    first = affine.apply(x, y)
    second = affine.apply(first[0], x)  # applied twice, once to its own output
    for number, output in enumerate((*first, *second)):
        batch.case(f"applied twice {number}", output)
    m = pt.matrix("m")
    rows = pt.op_from_graph([m], [pt.matmul(m.T, m)[1:, ::-1]])
    nested = pt.op_from_graph([m], [rows(m) + np.arange(3.0)])
    matrix = batch.input((4, 3), static=(None, 3))
    batch.case("nested", nested(matrix))
    batch.case("inner constant array", nested(matrix[:, ::-1]))
    scalar = pt.scalar("s")
    square = pt.op_from_graph([scalar], [scalar * scalar])
    t = batch.input(())
    batch.case("gradient through the op", pt.grad(square(square(t)), t))
    return batch


@pytest.fixture(scope="module")
def results() -> dict[str, tuple[Array, Array]]:
    return _build().results()


@pytest.mark.parametrize("name", _build().names)
def test_matches_reference(results: dict[str, tuple[Array, Array]], name: str) -> None:
    got, want = results[name]
    assert_same(got, want, rtol=1e-10)


def test_outputs_viewing_inputs_are_copies() -> None:
    """The op declares no view_map, so an update marked inplace on its output must not
    reach the op's input (here the caller's array)."""
    a = pt.vector("a")
    viewing = pt.op_from_graph([a], [pt.reshape(a, (2, 2)), a])
    x = pt.vector("x", shape=(4,))
    grid, same = viewing.apply(x)
    in_grid = IncSubtensor((0,), destroy_map=((0, 0),))(grid, pt.constant(np.ones(2)))
    in_same = IncSubtensor((Slice(None, None, None),), destroy_map=((0, 0),))(same, pt.constant(1.0))
    value = np.arange(4.0)
    got_grid, got_same = function([x], [in_grid, in_same], mode="none")(value)
    assert got_grid.tolist() == [[1.0, 2.0], [2.0, 3.0]]
    assert got_same.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert value.tolist() == [0.0, 1.0, 2.0, 3.0]
