"""Shape, reshape, broadcast, join and creation kernels against the reference evaluator:
static and symbolic shapes (scalars, another variable's `.shape`), views made
contiguous before reshaping, dtype promotion in joins, and run-time errors."""

from __future__ import annotations

import numpy as np
import pytest

import ops as pt
from fgraph import Variable, evaluate
from numba_backend import function
from ops.join import split
from ops.shape_vector import shape_i
from tests.numba_backend.batch_parity import Array, Batch, assert_same


def _int(batch: Batch, value: int) -> Variable:
    """An int64 scalar input with test value `value`."""
    return batch.input(np.array(value, dtype="int64"))


def _build() -> Batch:
    batch = Batch(seed=2)
    x = batch.input((2, 3, 4))
    unknown = batch.input((2, 3, 4), static=(None, None, None))
    other = batch.input((4, 6))
    batch.case("shape", pt.shape(unknown))
    batch.case("shape of a scalar", pt.shape(batch.input(())))
    batch.case("shape_i", shape_i(unknown, 1))
    batch.case("reshape static", pt.reshape(x, (6, 4)))
    batch.case("reshape -1", pt.reshape(unknown, (-1, 4)))
    batch.case("reshape like another", pt.reshape(unknown, other.shape))
    batch.case("reshape symbolic entries", pt.reshape(x, (_int(batch, 3), -1, _int(batch, 2))))
    batch.case("reshape transposed view", pt.reshape(pt.transpose(x), (4, 6)))
    batch.case("reshape to a scalar", pt.reshape(batch.input((1, 1)), ()))
    batch.case("reshape int", pt.reshape(batch.input((3, 4), dtype="int32"), (2, -1)))
    batch.case("flatten", pt.flatten(unknown))
    batch.case("flatten ndim 2", pt.flatten(unknown, 2))
    batch.case("specify_shape", pt.specify_shape(unknown, (2, None, 4)))
    batch.case("broadcast_to static", pt.broadcast_to(batch.input((3, 1)), (2, 3, 5)))
    batch.case("broadcast_to shape of", pt.broadcast_to(batch.input((4,)), other.T.shape))
    batch.case("broadcast_to symbolic", pt.broadcast_to(batch.input(()), (_int(batch, 3),)))
    batch.case("alloc", pt.alloc(batch.input((1, 3)), _int(batch, 4), 3))
    batch.case("alloc like", pt.alloc(batch.input(()), unknown.shape))
    batch.case("zeros", pt.zeros((2, 3)))
    batch.case("ones int32", pt.ones((_int(batch, 2), 3), dtype="int32"))
    batch.case("full symbolic", pt.full(other.shape, batch.input(()), dtype="float32"))
    batch.case("full_like", pt.full_like(unknown, 7, dtype="int8"))
    batch.case("arange", pt.arange(10))
    batch.case("arange float step", pt.arange(0.5, 3.0, 0.25))
    batch.case("arange symbolic", pt.arange(_int(batch, 2), _int(batch, 11), 3))
    batch.case("arange negative step", pt.arange(_int(batch, 5), -4, -2, dtype="float32"))
    batch.case("arange empty", pt.arange(_int(batch, 5), 2))
    float_stop = batch.input(np.array(3.0))
    batch.case("arange float to int", pt.arange(0.5, float_stop, 0.7, dtype="int64"))
    batch.case("arange float32", pt.arange(batch.input(np.array(1.0, "float32")), 2.05, 0.1))
    batch.case("arange int8", pt.arange(batch.input(np.array(-3, "int8")), 100, 7))
    batch.case("reshape a scalar", pt.reshape(batch.input(()), (1, 1)))
    batch.case("eye", pt.eye(3))
    batch.case("eye k", pt.eye(3, 5, k=2, dtype="int32"))
    batch.case("eye symbolic", pt.eye(_int(batch, 4), _int(batch, 2), k=_int(batch, -1)))
    batch.case("eye bool below", pt.eye(2, 3, k=-1, dtype="bool"))
    batch.case("eye no rows", pt.eye(0, 3))
    batch.case("eye complex", pt.eye(2, dtype="complex128"))
    batch.case("concatenate axis 0", pt.concatenate([x, batch.input((1, 3, 4))]))
    batch.case("concatenate axis 1 unknown", pt.concatenate([unknown, x], axis=1))
    mixed = [batch.input((2, 2), dtype="int32"), batch.input((2, 3)), batch.input((2, 1))]
    batch.case("concatenate promotes", pt.concatenate(mixed, axis=-1))
    batch.case("concatenate views", pt.concatenate([other.T, other.T], axis=0))
    batch.case("concatenate axis None", pt.concatenate([x, other], axis=None))
    batch.case("stack", pt.stack([other, other * 2], axis=1))
    first, second, third = split(unknown, (_int(batch, 1), 2, _int(batch, 1)), axis=2)
    batch.case("split 0", first)
    batch.case("split 1", second)
    batch.case("split 2", third)
    return batch


@pytest.fixture(scope="module")
def results() -> dict[str, tuple[Array, Array]]:
    return _build().results()


@pytest.mark.parametrize("name", _build().names)
def test_matches_reference(results: dict[str, tuple[Array, Array]], name: str) -> None:
    got, want = results[name]
    assert_same(got, want, rtol=1e-6)



def test_concatenate_checks_the_other_axes_at_run_time() -> None:
    """Lengths unknown until the call are checked as NumPy checks them (a ValueError, as
    the reference evaluator's ShapeError is), naming the pieces; promotion casts."""
    a, b = pt.matrix("a"), pt.matrix("b", dtype="int32")
    joined = pt.concatenate([a, b], axis=1)
    compiled = function([a, b], [joined], mode="none")
    left, right = np.ones((2, 3)), np.arange(4, dtype=np.int32).reshape(2, 2)
    np.testing.assert_array_equal(compiled(left, right)[0], np.concatenate([left, right], axis=1))
    assert compiled(left, right)[0].dtype == np.float64
    with pytest.raises(ValueError, match="b .*differs in length from a .*along axis 0: 3 and 2"):
        compiled(left, np.ones((3, 2), dtype=np.int32))
    with pytest.raises(ValueError):
        evaluate([joined], {a: left, b: np.ones((3, 2), dtype=np.int32)})
    empty = compiled(np.ones((2, 0)), np.ones((2, 0), dtype=np.int32))[0]
    assert empty.shape == (2, 0)

def test_empty_and_runtime_errors() -> None:
    """`empty` has the right shape and dtype; bad run-time shapes raise."""
    x = pt.tensor("x", shape=(None, None))
    n = pt.scalar("n", dtype="int64")
    checked = pt.specify_shape(x, (2, None))
    reshaped = pt.reshape(x, (n, -1))
    created = pt.empty((n, 3), dtype="int16")
    compiled = function([x, n], [checked, reshaped, created], mode="none")
    got_checked, got_reshaped, got_created = compiled(np.ones((2, 6)), 3)
    assert got_checked.shape == (2, 6) and got_reshaped.shape == (3, 4)
    assert got_created.shape == (3, 3) and got_created.dtype == np.int16
    with pytest.raises(ValueError, match="SpecifyShape"):
        compiled(np.ones((3, 6)), 3)
    with pytest.raises(ValueError):
        compiled(np.ones((2, 6)), 5)
    with pytest.raises(ValueError, match="Reshape"):
        compiled(np.ones((2, 6)), -3)
    with pytest.raises(ValueError, match="one unknown dimension"):  # as NumPy says
        compiled(np.ones((2, 6)), -1)
