"""`pt.einsum`, `pt.kron` and `pt.linalg.matrix_power`, compositions of existing ops:
values against NumPy with static and unknown lengths, the lowering's structure (one
MatMul per pair), derivatives against finite differences, a compiled case, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import ops as pt
from fgraph import Graph, Input, ShapeError, TensorType, evaluate
from numba_backend import function
from rewrite import optimize
from tests.ops.checks import check_pullback

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(0)
Shapes = list[tuple[int, ...]]

CASES: list[tuple[str, Shapes]] = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("i,i->", [(3,), (3,)]),
    ("i,j->ij", [(3,), (4,)]), ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]), ("...ij,jk->...ik", [(6, 5, 2, 3), (3, 4)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]), ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("i,i,i->", [(4,), (4,), (4,)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("iij->j", [(3, 3, 4)]), (",ij->ij", [(), (2, 3)]), ("i,->i", [(3,), ()]),
    ("ab,cd->abcd", [(2, 3), (4, 5)]), ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]), ("...i,...i->...", [(2, 3, 4), (2, 3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), ("i...->...", [(3, 2, 4)]), ("ji", [(2, 3)]),
    ("...ii->...i", [(2, 3, 3)]), ("ij,j->i", [(2, 3), (3,)]),
]


def inputs_for(values: list[Array], static: bool) -> list[Input]:
    return [Input(TensorType("float64", v.shape if static else (None,) * v.ndim), f"x{k}")
            for k, v in enumerate(values)]


@pytest.mark.parametrize("subscripts, shapes", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("static", [True, False], ids=["static", "unknown"])
def test_einsum_matches_numpy(subscripts: str, shapes: Shapes, static: bool) -> None:
    values = [RNG.normal(size=shape) for shape in shapes]
    inputs = inputs_for(values, static)
    (got,) = evaluate([pt.einsum(subscripts, *inputs)], dict(zip(inputs, values)))
    expected = np.einsum(subscripts, *values)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_a_batched_contraction_is_one_matmul() -> None:
    x, y = pt.tensor3("x"), pt.tensor3("y")
    graph = optimize(Graph([x, y], [pt.einsum("bij,bjk->bik", x, y)]))
    names = [type(node.op).__name__ for node in graph.nodes]
    assert names.count("MatMul") == 1
    assert not any(name in ("Elemwise", "Fused") for name in names)


@pytest.mark.parametrize("subscripts, shapes", [("ij,jk->ik", [(2, 3), (3, 4)]),
                                                ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
                                                ("ii,i->", [(3, 3), (3,)])])
def test_einsum_derivatives(subscripts: str, shapes: Shapes) -> None:
    check_pullback(lambda *xs: pt.einsum(subscripts, *xs), [RNG.normal(size=s) for s in shapes])


def test_einsum_compiles() -> None:
    x, y = pt.tensor3("x"), pt.matrix("y")
    compiled = function([x, y], pt.einsum("...ij,jk->...ik", x, y))
    a, b = RNG.normal(size=(4, 2, 3)), RNG.normal(size=(3, 5))
    np.testing.assert_allclose(compiled(a, b), np.einsum("...ij,jk->...ik", a, b), rtol=1e-12)


@pytest.mark.parametrize(
    "subscripts, shapes, error, message",
    [
        ("ij,jk->ik", [(2, 3)], ValueError, "2 operand subscripts for 1 operands"),
        ("ij->ij", [(2, 3, 4)], ValueError, "for an operand of rank 3"),
        ("ij->k", [(2, 3)], ValueError, "in no operand"),
        ("ij->ii", [(2, 3)], ValueError, "repeats"),
        ("i1->i", [(2, 3)], ValueError, "invalid subscripts"),
        ("ij,jk->ik", [(2, 3), (4, 5)], ShapeError, "index 'j' has lengths 3 and 4"),
    ],
)
def test_einsum_errors(subscripts: str, shapes: Shapes, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        pt.einsum(subscripts, *inputs_for([np.zeros(s) for s in shapes], True))


@pytest.mark.parametrize("shapes", [((2,), (3,)), ((2, 3), (4, 5)), ((2,), (3, 4)), ((2, 3, 4), (5, 2))])
def test_kron(shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    a, b = (RNG.normal(size=s) for s in shapes)
    inputs = inputs_for([a, b], static=False)
    (got,) = evaluate([pt.kron(*inputs)], dict(zip(inputs, [a, b])))
    np.testing.assert_allclose(got, np.kron(a, b), rtol=1e-14)


def test_kron_derivative() -> None:
    check_pullback(pt.kron, [RNG.normal(size=(2, 3)), RNG.normal(size=(2, 2))])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -3])
def test_matrix_power(n: int) -> None:
    a = RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)
    x = pt.tensor3("a")
    (got,) = evaluate([pt.linalg.matrix_power(x, n)], {x: a})
    np.testing.assert_allclose(got, np.linalg.matrix_power(a, n), rtol=1e-10)


def test_matrix_power_derivative_and_errors() -> None:
    check_pullback(lambda a: pt.linalg.matrix_power(a, 3), [RNG.normal(size=(3, 3))])
    with pytest.raises(TypeError, match="n must be a Python int"):
        pt.linalg.matrix_power(pt.matrix("a"), 1.5)  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match="square"):
        pt.linalg.matrix_power(pt.matrix("a", shape=(2, 3)), 2)

