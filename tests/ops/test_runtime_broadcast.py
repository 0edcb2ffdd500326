"""Broadcasting happens only along statically length-1 axes, in `evaluate` as in compiled
code: a gradient built for a full-length axis would otherwise get the wrong shape."""

from __future__ import annotations

import numpy as np
import pytest

import ops as pt
from fgraph import ShapeError, evaluate


def test_elemwise_refuses_run_time_broadcast_of_an_unknown_length() -> None:
    x, y = pt.vector("x"), pt.vector("y")
    with pytest.raises(ShapeError, match="input 0 .* length 1 along axis 0"):
        evaluate([x + y], {x: np.ones(1), y: np.ones(3)})


def test_elemwise_broadcasts_a_static_length_one() -> None:
    x, y = pt.vector("x", shape=(1,)), pt.vector("y")
    (result,) = evaluate([x + y], {x: np.array([2.0]), y: np.ones(3)})
    np.testing.assert_array_equal(result, np.full(3, 3.0))


def test_matmul_refuses_run_time_broadcast_of_batch_axes() -> None:
    a = pt.tensor("a", shape=(None, 2, 2))
    b = pt.tensor("b", shape=(None, 2, 2))
    with pytest.raises(ShapeError, match="axis 0"):
        evaluate([a @ b], {a: np.ones((1, 2, 2)), b: np.ones((3, 2, 2))})


def test_broadcast_to_and_alloc_refuse_stretching_an_unknown_length() -> None:
    x = pt.vector("x")
    for stretched in (pt.broadcast_to(x, (2, 3)), pt.alloc(x, 2, 3)):
        with pytest.raises(ShapeError, match="axis 0 .* length 1 at run time"):
            evaluate([stretched], {x: np.ones(1)})
        (result,) = evaluate([stretched], {x: np.arange(3.0)})
        np.testing.assert_array_equal(result, np.broadcast_to(np.arange(3.0), (2, 3)))
