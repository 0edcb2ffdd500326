"""NumPy's and PyTensor's names built from existing ops: values against NumPy (static and
unknown lengths), gradients against finite differences, compiled against the reference;
the typed constructors and the Variable methods users reach for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Input, TensorType, Variable, evaluate
from numba_backend import function
from tests.ops.checks import check_pullback

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(0)
M = RNG.normal(size=(3, 4))
V = RNG.normal(size=5)
T = RNG.normal(size=(2, 3, 4))

# name, fgraph function, NumPy function, arguments
CASES: list[tuple[str, Callable[..., Variable], Callable[..., Any], list[Array]]] = [
    ("relu", pt.relu, lambda x: np.maximum(x, 0), [V]),
    ("logaddexp", pt.logaddexp, np.logaddexp, [V, V[::-1].copy()]),
    ("logaddexp infinities", pt.logaddexp, np.logaddexp,
     [np.array([np.inf, -np.inf, 1000.0]), np.array([np.inf, -np.inf, 999.0])]),
    ("isclose", lambda a, b: pt.isclose(a, b), np.isclose,
     [np.array([1.0, np.inf, np.nan, 1.0]), np.array([1.0 + 1e-9, np.inf, np.nan, 1.1])]),
    ("isclose equal_nan", lambda a, b: pt.isclose(a, b, equal_nan=True),
     lambda a, b: np.isclose(a, b, equal_nan=True),
     [np.array([np.nan, 1.0]), np.array([np.nan, 2.0])]),
    ("allclose", lambda a, b: pt.allclose(a, b), lambda a, b: np.array(np.allclose(a, b)),
     [V, V + 1e-10]),
    ("floor_divide", pt.floor_divide, np.floor_divide, [V * 7, np.full(5, 2.0)]),
    ("power", pt.power, np.power, [np.abs(V), np.full(5, 1.5)]),
    ("flip", pt.flip, np.flip, [M]),
    ("flip axis", lambda x: pt.flip(x, 1), lambda x: np.flip(x, 1), [M]),
    ("swapaxes", lambda x: pt.swapaxes(x, 0, 2), lambda x: np.swapaxes(x, 0, 2), [T]),
    ("moveaxis", lambda x: pt.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1), [T]),
    ("ravel", pt.ravel, np.ravel, [T]),
    ("roll", lambda x: pt.roll(x, 2), lambda x: np.roll(x, 2), [V]),
    ("roll negative axis", lambda x: pt.roll(x, -1, axis=1),
     lambda x: np.roll(x, -1, axis=1), [M]),
    ("roll flat", lambda x: pt.roll(x, 5), lambda x: np.roll(x, 5), [M]),
    ("diff", pt.diff, np.diff, [M]),
    ("diff twice axis 0", lambda x: pt.diff(x, 2, axis=0), lambda x: np.diff(x, 2, axis=0), [M]),
    ("tile", lambda x: pt.tile(x, (2, 3)), lambda x: np.tile(x, (2, 3)), [M]),
    ("tile adds axes", lambda x: pt.tile(x, (2, 1, 2)), lambda x: np.tile(x, (2, 1, 2)), [M]),
    ("repeat", lambda x: pt.repeat(x, 2, axis=1), lambda x: np.repeat(x, 2, axis=1), [M]),
    ("repeat flat", lambda x: pt.repeat(x, 3), lambda x: np.repeat(x, 3), [M]),
    ("pad", lambda x: pt.pad(x, ((1, 2), (0, 1))), lambda x: np.pad(x, ((1, 2), (0, 1))), [M]),
    ("pad value", lambda x: pt.pad(x, 2, constant_values=7.0),
     lambda x: np.pad(x, 2, constant_values=7.0), [V]),
    ("diagonal", pt.diagonal, np.diagonal, [M]),
    ("diagonal offset", lambda x: pt.diagonal(x, 1), lambda x: np.diagonal(x, 1), [M]),
    ("diagonal below", lambda x: pt.diagonal(x, -1), lambda x: np.diagonal(x, -1), [M]),
    ("diagonal of a batch", lambda x: pt.diagonal(x, 0, 1, 2),
     lambda x: np.diagonal(x, 0, 1, 2), [T]),
    ("trace", pt.trace, lambda x: np.array(np.trace(x)), [M]),
    ("diag of a vector", lambda x: pt.diag(x, -2), lambda x: np.diag(x, -2), [V]),
    ("diag of a matrix", pt.diag, np.diag, [M]),
    ("tril", pt.tril, np.tril, [M]),
    ("triu offset", lambda x: pt.triu(x, 1), lambda x: np.triu(x, 1), [M]),
    ("tril of a batch", lambda x: pt.tril(x, -1), lambda x: np.tril(x, -1), [T]),
    ("tensordot", lambda a, b: pt.tensordot(a, b, axes=([1, 2], [0, 1])),
     lambda a, b: np.tensordot(a, b, axes=([1, 2], [0, 1])), [T, RNG.normal(size=(3, 4, 2))]),
    ("tensordot int", lambda a, b: pt.tensordot(a, b, 1),
     lambda a, b: np.tensordot(a, b, 1), [M, RNG.normal(size=(4, 2))]),
    ("ifelse", lambda c, a, b: pt.ifelse(c > 0, a, b), lambda c, a, b: a if c > 0 else b,
     [np.array(1.0), V, V * 2]),
]


def _inputs(values: list[Array], static: bool) -> list[Variable]:
    return [
        Input(TensorType(v.dtype.name, v.shape if static else (None,) * v.ndim), f"in{k}")
        for k, v in enumerate(values)
    ]


@pytest.mark.parametrize("static", [True, False])
@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_values_match_numpy(case: tuple[str, Callable[..., Variable], Callable[..., Any],
                                        list[Array]], static: bool) -> None:
    _, build, reference, values = case
    variables = _inputs(values, static)
    (got,) = evaluate([build(*variables)], dict(zip(variables, values)))
    expected = np.asarray(reference(*values))
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_compiled_values_match_the_reference() -> None:
    numeric = [case for case in CASES if case[0] not in ("ifelse",)]
    for start in range(0, len(numeric), 12):
        chunk = numeric[start : start + 12]
        variables: list[Variable] = []
        values: list[Array] = []
        outputs: list[Variable] = []
        for _, build, _, args in chunk:
            own = _inputs(args, static=False)
            variables += own
            values += args
            outputs.append(build(*own))
        got = function(variables, outputs)(*values)
        for (name, *_), g, e in zip(chunk, got, evaluate(outputs, dict(zip(variables, values)))):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize(
    "build, values",
    [
        (lambda x: pt.roll(x, 2) * pt.flip(x), [V]),
        (lambda x: pt.tile(x, (1, 2)) ** 2, [M]),
        (lambda x: pt.repeat(x, 2, axis=0) * 3, [M]),
        (lambda x: pt.pad(x, 1) ** 2, [M]),
        (lambda x: pt.diagonal(x, 1) + pt.trace(x), [M]),
        (lambda x: pt.diag(x) * 2, [V]),
        (lambda x: pt.tril(x) + pt.triu(x, 1) * 2, [M]),
        (lambda a, b: pt.tensordot(a, b, 1), [M, RNG.normal(size=(4, 2))]),
        (lambda x: pt.diff(x, 2), [V]),
        (lambda a, b: pt.logaddexp(a, b), [V, V[::-1].copy()]),
        (lambda x: pt.relu(x) * x, [V]),
    ],
)
def test_gradients_match_finite_differences(build: Callable[..., Variable],
                                            values: list[Array]) -> None:
    check_pullback(build, values)


def test_split_meshgrid_and_linspace() -> None:
    x = pt.vector("x")
    value = np.arange(9.0)
    parts = evaluate(list(pt.split(x, 3)), {x: value})
    for got, want in zip(parts, np.split(value, 3)):
        np.testing.assert_array_equal(got, want)
    parts = evaluate(list(pt.split(x, [2, 5])), {x: value})
    for got, want in zip(parts, np.split(value, [2, 5])):
        np.testing.assert_array_equal(got, want)
    a, b = pt.vector("a"), pt.vector("b")
    for indexing in ("xy", "ij"):
        grids = evaluate(list(pt.meshgrid(a, b, indexing=indexing)),
                         {a: np.arange(3.0), b: np.arange(4.0)})
        for got, want in zip(grids, np.meshgrid(np.arange(3.0), np.arange(4.0),
                                                 indexing=indexing)):
            np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(evaluate([pt.linspace(0, 1, 5)], {})[0], np.linspace(0, 1, 5))
    with pytest.raises(ValueError, match="do not divide into 2 sections"):
        pt.split(pt.vector("s", shape=(5,)), 2)


def test_typed_constructors() -> None:
    assert pt.tensor3("a").type == TensorType("float64", (None, None, None))
    assert pt.tensor4("a").ndim == 4
    assert pt.iscalar("i").type == TensorType("int32", ())
    assert pt.ivector("i").dtype == "int32" and pt.imatrix("i").ndim == 2
    assert pt.dvector("d").dtype == "float64" and pt.dmatrix("d").ndim == 2
    assert pt.fvector("f").dtype == "float32" and pt.fmatrix("f").type.shape == (None, None)


def test_variable_methods() -> None:
    x, v = pt.matrix("x"), pt.vector("v")
    matrix, vector = np.array([[2.0, -1.0, 0.5]]), np.array([0.5, 1.5, 2.5])
    np.testing.assert_array_equal(x.clip(0, 1).eval({x: matrix}), np.clip(matrix, 0, 1))
    assert v.dot(v).eval({v: vector}) == vector @ vector
    assert x.squeeze().eval({x: matrix}).shape == (1, 3)  # length 1 only known at run time
    assert pt.matrix("y", shape=(1, 3)).squeeze().type.shape == (3,)
    np.testing.assert_array_equal(v.cumsum().eval({v: vector}), np.cumsum(vector))
    np.testing.assert_array_equal(v.round().eval({v: vector}), np.round(vector))
    assert x.dimshuffle(1, "x", 0).type.shape == (None, 1, None)
    np.testing.assert_array_equal(x.astype("int32").eval({x: matrix}), matrix.astype("int32"))
    assert (pt.constant(2.0) * 3).eval() == 6.0
