"""NumPy's ufuncs on variables, and the PyTensor habit of unpacking scan's updates."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest

import ops as pt
from fgraph import Variable, evaluate
from ops.elemwise import Elemwise

X = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize(
    ("ufunc", "expected_op"),
    [(np.exp, "Exp"), (np.log1p, "Log1p"), (np.absolute, "Abs"), (np.negative, "Neg"),
     (np.conjugate, None), (np.rint, "Round"), (np.sin, "Sin"), (np.sqrt, "Sqrt")],
)
def test_unary_ufuncs_dispatch_to_ops(ufunc: np.ufunc, expected_op: str | None) -> None:
    x = pt.vector("x")
    built = ufunc(x)
    if expected_op is None:
        assert built is x  # the conjugate of a real value is itself
    else:
        assert isinstance(built.owner.op, Elemwise)
        assert type(built.owner.op.scalar_op).__name__.startswith(expected_op)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_allclose(evaluate([built], {x: X})[0], ufunc(X))


@pytest.mark.parametrize(
    "ufunc",
    [np.add, np.subtract, np.multiply, np.divide, np.power, np.maximum, np.arctan2,
     np.less, np.greater_equal, np.equal, np.not_equal, np.floor_divide, np.remainder,
     np.logaddexp],
)
def test_binary_ufuncs_dispatch_with_arrays_on_either_side(ufunc: np.ufunc) -> None:
    x = pt.vector("x")
    other = np.array([1.5, 2.0, -0.5])
    for built, expected in ((ufunc(x, other), ufunc(X, other)), (ufunc(other, x), ufunc(other, X))):
        (value,) = evaluate([built], {x: X})
        np.testing.assert_allclose(value, expected)
        assert value.dtype == expected.dtype


def test_operators_with_an_array_on_the_left_build_nodes() -> None:
    x = pt.vector("x")
    other = np.array([1.5, 2.0, -0.5])
    # NumPy's stubs type `array + x` as an array and mypy `==` as bool; at run time they
    # are variables (NumPy dispatches to Variable.__array_ufunc__)
    built = [cast(Variable, other + x), cast(Variable, other < x), cast(Variable, other @ x)]
    for value, expected in zip(evaluate(built, {x: X}), (other + X, other < X, other @ X)):
        np.testing.assert_allclose(value, expected)
    compared = [cast(Variable, x == other), cast(Variable, other == x), cast(Variable, x != other)]
    equal, reflected, different = evaluate(compared, {x: X})
    np.testing.assert_array_equal(equal, X == other)
    np.testing.assert_array_equal(reflected, X == other)
    np.testing.assert_array_equal(different, X != other)
    assert (x == pt.vector("y")) is False  # between variables, == is identity (dict keys)


def test_ufuncs_fgraph_lacks_name_the_missing_function() -> None:
    x = pt.vector("x")
    with pytest.raises(TypeError, match=r"numpy.cbrt on a symbolic variable needs pt.cbrt"):
        np.cbrt(x)
    with pytest.raises(TypeError, match=r"numpy.add.reduce is not supported.*pt.sum"):
        np.add.reduce(cast(Any, x))
    with pytest.raises(TypeError, match=r"numpy.exp with out is not supported"):
        np.exp(x, out=np.ones(3))


def test_unpacking_updates_from_scan_says_scan_returns_none() -> None:
    x0, rows = pt.scalar("x0"), pt.matrix("rows")
    with pytest.raises(TypeError, match=r"result of pt.scan.*no updates.*ys = pt.scan"):
        ys, updates = pt.scan(lambda p: p**2, outputs_info=[x0], n_steps=4)
    with pytest.raises(TypeError, match=r"result of pt.scan.*no updates"):
        (first, second), updates = pt.scan(
            lambda r, p: (p**2, r.sum()), sequences=[rows], outputs_info=[x0, None]
        )
    with pytest.raises(TypeError, match=r"result of pt.scan"):
        ys, updates = pt.map(lambda r: r * 2, sequences=[rows])
    first, second = pt.scan(lambda r, p: (p**2, r.sum()), sequences=[rows], outputs_info=[x0, None])
    assert first.ndim == second.ndim == 1  # unpacking several outputs is fine
    with pytest.raises(TypeError, match=r"^a symbolic variable is not iterable; index it instead$"):
        a, b = rows
