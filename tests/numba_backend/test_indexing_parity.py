"""Basic indexing and its updates against the reference evaluator: ints, slices with
negative steps and symbolic bounds, new axes, 0-d results, broadcast update values,
and out-of-bounds symbolic indices."""

from __future__ import annotations

import numpy as np
import pytest

import ops as pt
from fgraph import Variable
from numba_backend import function
from ops.indexing import Slice
from ops.subtensor import IncSubtensor
from tests.numba_backend.batch_parity import Array, Batch, assert_same


def _int(batch: Batch, value: int, dtype: str = "int64") -> Variable:
    """An integer scalar input with test value `value`."""
    return batch.input(np.array(value, dtype=dtype))


def _build() -> Batch:
    batch = Batch(seed=3)
    x = batch.input((5, 4, 3))
    unknown = batch.input((5, 4, 3), static=(None, None, None))
    i, j, k = _int(batch, 1), _int(batch, -2, "int32"), _int(batch, -1)
    batch.case("int", x[1])
    batch.case("negative int", x[-1, 2])
    batch.case("all ints", x[1, 2, 0])
    batch.case("all ints unknown", unknown[-1, 0, 2])
    batch.case("slice", x[1:3])
    batch.case("reversed", x[::-1])
    batch.case("negative step", unknown[::-2, 1])
    batch.case("new axis", x[None, 1:, :, None, ::2])
    batch.case("ellipsis", unknown[..., 0])
    batch.case("symbolic int", unknown[i])
    batch.case("symbolic bounds", unknown[i:j])
    batch.case("symbolic step", unknown[j::k, i])
    batch.case("clipped bounds", x[2:100, -100:2])
    batch.case("symbolic all ints", unknown[i, j, k])
    batch.case("int dtype", batch.input((4, 3), dtype="int32")[1:, ::-1])
    y = batch.input((2, 4, 3))
    batch.case("set slice", pt.set_subtensor(x[1:3], y))
    batch.case("inc slice", pt.inc_subtensor(unknown[i:3], y))
    batch.case("set broadcast", pt.set_subtensor(x[:, 1:3], batch.input((1, 3))))
    batch.case("inc scalar into region", pt.inc_subtensor(unknown[::-2, j], 2.5))
    batch.case("set element", pt.set_subtensor(x[1, 2, 0], batch.input(())))
    batch.case("inc symbolic element", pt.inc_subtensor(unknown[i, j, k], 1.0))
    batch.case("inc new axis", pt.inc_subtensor(x[None, 0], batch.input((1, 4, 3))))
    ints = batch.input((4, 3), dtype="int64")
    batch.case("inc int", pt.inc_subtensor(ints[:, -1], batch.input((4,), dtype="int64")))
    inplace = IncSubtensor((Slice(1, None, 2),), set_instead_of_inc=False, destroy_map=((0, 0),))
    batch.case("inc inplace", inplace(x * 2.0, batch.input((2, 4, 3))))
    return batch


@pytest.fixture(scope="module")
def results() -> dict[str, tuple[Array, Array]]:
    return _build().results()


@pytest.mark.parametrize("name", _build().names)
def test_matches_reference(results: dict[str, tuple[Array, Array]], name: str) -> None:
    got, want = results[name]
    assert_same(got, want)


def test_out_of_bounds_and_unchanged_input() -> None:
    """Symbolic indices are bounds-checked; updates never write into the input."""
    x = pt.vector("x")
    i = pt.scalar("i", dtype="int64")
    compiled = function([x, i], [x[i], pt.inc_subtensor(x[i], 1.0)], mode="none")
    value = np.zeros(3)
    got, updated = compiled(value, -3)
    assert got == 0.0 and updated.tolist() == [1.0, 0.0, 0.0]
    assert value.tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(IndexError):
        compiled(value, 3)
    with pytest.raises(IndexError):
        compiled(value, -4)


@pytest.mark.parametrize("advanced", [False, True])
def test_a_value_of_unknown_length_1_is_refused_as_by_evaluate(advanced: bool) -> None:
    x, index, value = pt.matrix("x"), pt.vector("index", dtype="int64"), pt.vector("value")
    region = x[index] if advanced else x[1:3]
    compiled = function([x, value, index], pt.inc_subtensor(region, value))
    arrays = (np.zeros((4, 3)), np.ones(3), np.array([0, 2]))
    np.testing.assert_array_equal(compiled(*arrays).sum(), 6.0)
    with pytest.raises(ValueError, match=r"differs in length from the indexed region"):
        compiled(arrays[0], np.ones(1), arrays[2])
