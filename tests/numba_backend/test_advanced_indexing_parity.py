"""Advanced indexing and its updates against the reference evaluator: integer arrays of
any rank and dtype, negative and repeated indices, broadcasting index arrays, NumPy's
placement of the indexed axes, boolean masks, mixes with slices, ints and new axes,
increments accumulating over duplicates, and out-of-bounds errors."""

from __future__ import annotations

import numpy as np
import pytest

import ops as pt
from fgraph import Variable
from numba_backend import function
from ops.advanced_subtensor import AdvancedIncSubtensor
from ops.indexing import SYMBOLIC
from tests.numba_backend.batch_parity import Array, Batch, assert_same


def _index(batch: Batch, values: object, dtype: str = "int64") -> Variable:
    """An index input of unknown static shape with the given test values."""
    array = np.array(values, dtype=dtype)
    return batch.input(array, static=(None,) * array.ndim)


def _build() -> Batch:
    batch = Batch(seed=5)
    x = batch.input((5, 4, 3))
    unknown = batch.input((5, 4, 3), static=(None, None, None))
    rows = _index(batch, [4, 0, -1, 2, 0])
    grid = _index(batch, [[1, 2], [-4, 3], [0, 0]], "int32")
    column = _index(batch, [[0], [2], [1]], "uint8")
    lanes = _index(batch, [2, 0, 1, 1])
    batch.case("rows with repeats", x[rows])
    batch.case("2-d index", unknown[grid])
    batch.case("second axis", x[:, grid])
    batch.case("broadcast pair", unknown[column, lanes])
    batch.case("apart goes first", x[rows, :, _index(batch, [0, 2, 1, 1, 0])])
    batch.case("int and array apart", x[1, :, lanes])
    batch.case("int and array adjacent", unknown[:, 1, lanes])
    batch.case("new axis", x[None, rows, ::-1])
    batch.case("0-d index", x[_index(batch, 3)])
    batch.case("0-d index and array", unknown[:, _index(batch, -1), lanes])
    start = batch.input(np.array(1, dtype="int64"))
    batch.case("symbolic slice", unknown[start:, grid])
    batch.case("constant index", x[:, [3, 0, 3]])
    batch.case("take", pt.take(unknown, lanes, axis=2))
    mask = batch.input(np.array([[True, False, True, True]] * 4 + [[False] * 4]), (5, 4))
    batch.case("mask", x[mask])
    batch.case("mask unknown", unknown[mask])
    batch.case("row mask and int", x[_index(batch, [True, False, True, False, True], "bool"), 2])
    duplicates = _index(batch, [1, 3, 1, 1, -5])
    batch.case("inc duplicates", pt.inc_subtensor(x[duplicates], batch.input((5, 4, 3))))
    batch.case("inc scalar duplicates", pt.inc_subtensor(unknown[:, lanes], 1.5))
    batch.case("inc pair duplicates", pt.inc_subtensor(x[column, lanes], batch.input((4, 3))))
    batch.case("set", pt.set_subtensor(unknown[_index(batch, [4, 0, 2])], batch.input((1, 3))))
    batch.case("set mask", pt.set_subtensor(x[mask], 0.0))
    batch.case("inc apart", pt.inc_subtensor(x[rows, 1:, lanes[:1]], batch.input((5, 3))))
    counts = batch.input((6,), dtype="int64")
    batch.case("inc int", pt.inc_subtensor(counts[_index(batch, [0, 5, 5, 0, 5])], 1))
    # Index arrays of static lengths: read and written without broadcasting them.
    column_constant, lanes_constant = pt.constant([[0], [4], [-1]]), pt.constant([[2, 0, 1, 1]])
    batch.case("static broadcast pair", unknown[column_constant, lanes_constant])
    batch.case("static empty index", unknown[pt.constant(np.zeros(0, dtype="int64"))])
    repeated = pt.constant([1, -4, 3, 1])
    batch.case("inc static duplicates", pt.inc_subtensor(unknown[repeated], batch.input((4, 4, 3))))
    value = batch.input((1, 4, 3), static=(1, None, 3))
    batch.case("inc static, value stretched", pt.inc_subtensor(x[repeated], value))
    batch.case("set static", pt.set_subtensor(unknown[:, lanes_constant[0]], batch.input((5, 4, 3))))
    inplace = AdvancedIncSubtensor((SYMBOLIC,), set_instead_of_inc=False, destroy_map=((0, 0),))
    batch.case("inc inplace", inplace(x * 2.0, batch.input((5, 4, 3)), duplicates))
    return batch


@pytest.fixture(scope="module")
def results() -> dict[str, tuple[Array, Array]]:
    return _build().results()


@pytest.mark.parametrize("name", _build().names)
def test_matches_reference(results: dict[str, tuple[Array, Array]], name: str) -> None:
    got, want = results[name]
    assert_same(got, want)


def test_out_of_bounds_and_bad_masks() -> None:
    x = pt.matrix("x")
    index = pt.vector("index", dtype="int64")
    mask = pt.vector("mask", dtype="bool")
    compiled = function(
        [x, index, mask], [x[index], pt.inc_subtensor(x[:, index], 1.0), x[mask]], mode="none"
    )
    value = np.zeros((2, 3))
    gathered, updated, masked = compiled(value, [-2, 1], [True, False])
    assert gathered.shape == (2, 3) and updated.sum() == 4.0 and masked.shape == (1, 3)
    assert value.sum() == 0.0
    with pytest.raises(IndexError):
        compiled(value, [2], [True, False])
    with pytest.raises(IndexError):
        compiled(value, [-3], [True, False])
    with pytest.raises(IndexError):
        compiled(value, [0], [True, False, True])


def test_out_of_bounds_static_index_arrays() -> None:
    """Index arrays of static lengths are still checked element by element."""
    x = pt.vector("x")
    index = pt.constant([0, 3, -1])
    compiled = function([x], [x[index], pt.inc_subtensor(x[index], pt.exp(x[:3]))], mode="none")
    gathered, updated = compiled(np.arange(4.0))
    np.testing.assert_array_equal(gathered, [0.0, 3.0, 3.0])
    np.testing.assert_allclose(updated, np.arange(4.0) + [1.0, 0.0, 0.0, np.e + np.e**2])
    with pytest.raises(IndexError):
        compiled(np.arange(3.0))
    with pytest.raises(IndexError):
        compiled(np.arange(2.0))
