"""Compiled functions take arguments by input name as well as by position, with errors
naming the inputs for unknown, repeated and missing names."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from numba_backend import function
from numba_backend.compiled_function import CompiledFunction
from numba_backend.specialize import ShapeSpecializedFunction

Array = np.ndarray[Any, np.dtype[Any]]


Compiled = CompiledFunction[Array] | ShapeSpecializedFunction[Array]


@pytest.fixture(scope="module", params=[False, True], ids=["compiled", "specialized"])
def compiled(request: pytest.FixtureRequest) -> Compiled:
    x, w, b = pt.vector("x"), pt.vector("w"), pt.scalar("b")
    if request.param:
        return function([x, w, b], (x * w).sum() + b, specialize_shapes=True)
    return function([x, w, b], (x * w).sum() + b)


X, W = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
EXPECTED = float(X @ W + 4.0)


def test_keywords_positions_and_mixtures_agree(compiled: Compiled) -> None:
    f = compiled
    assert float(f(X, W, 4.0)) == EXPECTED
    assert float(f(x=X, w=W, b=4.0)) == EXPECTED
    assert float(f(b=4.0, w=W, x=X)) == EXPECTED
    assert float(f(X, b=4.0, w=W)) == EXPECTED
    assert float(f(X, W, b=4)) == EXPECTED  # converted as a positional argument is


def test_keyword_errors_name_the_inputs(compiled: Compiled) -> None:
    f = compiled
    with pytest.raises(TypeError, match=r"no input is named 'z'; the inputs are \(x, w, b\)"):
        f(X, W, z=4.0)
    with pytest.raises(TypeError, match="input 'x' given twice: as argument 1 and by name"):
        f(X, x=X, w=W, b=4.0)
    with pytest.raises(TypeError, match="missing arguments for inputs w, b"):
        f(x=X)
    with pytest.raises(TypeError, match=r"expected 3 arguments \(x, w, b\), got 4"):
        f(X, W, 4.0, 5.0, b=1.0)
    with pytest.raises(TypeError, match="w"):  # the usual conversion error, naming w
        f(x=X, w=np.array(["a"]), b=4.0)


def test_inputs_sharing_a_name_go_by_position() -> None:
    first, second = pt.scalar("x"), pt.scalar("x")
    f = function([first, second], first - second)
    assert float(f(3.0, 1.0)) == 2.0
    with pytest.raises(TypeError, match="several inputs are named 'x': pass them by position"):
        f(3.0, x=1.0)


def test_keywords_pass_through_the_thread_limit() -> None:
    x, w = pt.vector("x"), pt.vector("w")
    f = function([x, w], x * w, threads=1)
    np.testing.assert_array_equal(f(w=W, x=X), X * W)
    with pytest.raises(TypeError, match="no input is named 'v'"):
        f(X, v=W)
