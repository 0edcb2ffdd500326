"""`MatMul` kernels against the reference evaluator: BLAS for float and complex dtypes,
explicit loops for integers and bools, batch axes broadcast along static length 1, and
run-time length errors. All cases share one compiled function."""

from __future__ import annotations

import numpy as np
import pytest

import ops as pt
from numba_backend import function
from tests.numba_backend.batch_parity import Array, Batch, assert_same

Shape = tuple[int, ...]
MATMUL_SHAPES: list[tuple[Shape, Shape]] = [
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((2, 3), (5, 3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((6, 5, 2, 3), (5, 3, 4)),
    ((0, 3), (3, 2)),
    ((2, 0), (0, 3)),
    ((0,), (0,)),
]
UNKNOWN_SHAPES: list[tuple[Shape, Shape]] = [
    ((2, 3), (3,)),
    ((6, 5, 2, 3), (5, 3, 4)),
    ((2, 0), (0, 3)),
]
DOT_SHAPES: list[tuple[Shape, Shape]] = [
    ((), (2, 3)),
    ((2, 3), (3, 4)),
    ((5, 2, 3), (3,)),
    ((6, 2, 3), (5, 3, 4)),
]
DTYPES: list[tuple[str, str]] = [
    ("float32", "float32"),
    ("float32", "float64"),
    ("int32", "float32"),
    ("complex128", "float64"),
    ("int64", "int64"),
    ("int8", "int16"),
    ("uint8", "int8"),
    ("bool", "bool"),
    ("bool", "int32"),
]


def _build() -> Batch:
    batch = Batch(seed=1)
    for x_shape, y_shape in MATMUL_SHAPES:
        x, y = batch.input(x_shape), batch.input(y_shape)
        batch.case(f"matmul {x_shape} {y_shape}", pt.matmul(x, y))
    for x_shape, y_shape in UNKNOWN_SHAPES:
        unknown_x = batch.input(x_shape, static=(None,) * len(x_shape))
        unknown_y = batch.input(y_shape, static=(None,) * len(y_shape))
        batch.case(f"matmul unknown {x_shape} {y_shape}", pt.matmul(unknown_x, unknown_y))
    for x_shape, y_shape in DOT_SHAPES:
        batch.case(f"dot {x_shape} {y_shape}", pt.dot(batch.input(x_shape), batch.input(y_shape)))
    for x_dtype, y_dtype in DTYPES:
        x, y = batch.input((5, 2, 3), dtype=x_dtype), batch.input((3, 4), dtype=y_dtype)
        batch.case(f"dtypes {x_dtype} {y_dtype}", pt.matmul(x, y))
    broadcast_x, broadcast_y = batch.input((6, 1, 2, 3)), batch.input((1, 5, 3, 4))
    batch.case("batch broadcast", pt.matmul(broadcast_x, broadcast_y))
    batch.case("outer", pt.outer(batch.input((3,)), batch.input((2, 2))))
    transposed = batch.input((4, 3))
    batch.case("transposed operand", pt.matmul(transposed.T, batch.input((4, 2))))
    both = batch.input((3, 4), dtype="float32"), batch.input((2, 3), dtype="float32")
    batch.case("both transposed", pt.matmul(both[0].T, both[1].T))
    strided = batch.input((6, 3))
    batch.case("strided operand", pt.matmul(strided[::2], batch.input((3, 2))))
    batched = batch.input((5, 3, 2), dtype="complex64")
    batch.case("transposed batch", pt.matmul(batched.transpose(0, 2, 1), batch.input((3, 4))))
    # Matrix-vector products go to gemv: strided vectors, nothing contracted, complex.
    batch.case("strided column", pt.matmul(batch.input((4, 3)), batch.input((6,))[::2]))
    batch.case("strided row", pt.matmul(batch.input((6,))[::2], batch.input((3, 4)).T.T))
    batch.case("row of transposed", pt.matmul(batch.input((3,)), batch.input((4, 3)).T))
    batch.case("empty contraction", pt.matmul(batch.input((2, 0)), batch.input((0,))))
    complex_vector = batch.input((3,), dtype="complex128")
    batch.case("complex column", pt.matmul(batch.input((4, 3), dtype="complex128"), complex_vector))
    batch.case("int transposed", pt.matmul(batch.input((3, 4), dtype="int64").T,
                                           batch.input((3, 2), dtype="int64")))
    return batch


@pytest.fixture(scope="module")
def results() -> dict[str, tuple[Array, Array]]:
    return _build().results()


def _names() -> list[str]:
    return _build().names


@pytest.mark.parametrize("name", _names())
def test_matches_reference(results: dict[str, tuple[Array, Array]], name: str) -> None:
    got, want = results[name]
    assert_same(got, want, rtol=1e-5)


def test_runtime_length_errors() -> None:
    """Lengths unknown when the graph is built are checked when it runs."""
    x = pt.tensor("x", shape=(None, None, None))
    y = pt.tensor("y", shape=(None, None, None))
    compiled = function([x, y], pt.matmul(x, y), mode="none")
    assert compiled(np.ones((2, 2, 3)), np.ones((2, 3, 4))).shape == (2, 2, 4)
    with pytest.raises(ValueError, match="contracted axes"):
        compiled(np.ones((2, 2, 3)), np.ones((2, 4, 4)))
    with pytest.raises(ValueError, match="batch axes"):
        compiled(np.ones((2, 2, 3)), np.ones((1, 3, 4)))
