"""The `pt.linalg` names of issue 21 (`lu`, `lu_factor`, `lu_solve`, `expm`,
`block_diag`, `cond`, `matrix_rank`, `tensorinv`, `tensorsolve`, SciPy's `solve`
structures and `transposed`, `eigh(a, b)`, `norm` over stacks, QR's derivative of wide
matrices): values against SciPy/NumPy with static and unknown shapes, stacked inputs
and edge lengths 0 and 1; derivatives against finite differences in both modes; the
compiled function against `evaluate`; and the errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.linalg

import ops as pt
from fgraph import DTypeError, Graph, Input, ShapeError, TensorType, Variable, check_graph, evaluate
from numba_backend import function
from tests.ops.checks import check_pullback, check_pushforward

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(21)


def general(*shape: int) -> Array:
    return np.asarray(RNG.normal(size=shape))


def spd(n: int, *batch: int) -> Array:
    x = RNG.normal(size=(*batch, n, n))
    return np.asarray(x @ np.swapaxes(x, -1, -2) + n * np.eye(n))


def symmetric(n: int, *batch: int) -> Array:
    x = RNG.normal(size=(*batch, n, n))
    return np.asarray(x + np.swapaxes(x, -1, -2))


def per_matrix(reference: Callable[..., Any]) -> Callable[..., Any]:
    """A SciPy function of matrices mapped over the leading batch axes of its inputs."""
    def mapped(*values: Array) -> Any:
        batch = values[0].shape[:-2]
        if not batch:
            return reference(*values)
        results = [reference(*(v[index] for v in values)) for index in np.ndindex(*batch)]
        if isinstance(results[0], tuple):
            return tuple(np.stack([r[k] for r in results]).reshape(*batch, *np.shape(results[0][k]))
                         for k in range(len(results[0])))
        return np.stack(results).reshape(*batch, *np.shape(results[0]))
    return mapped


def outputs_of(build: Callable[..., Any], values: tuple[Array, ...], static: bool) -> list[Array]:
    """`build` over inputs with the values' static shapes (or unknown ones), checked
    and evaluated; the inferred types must fit the values."""
    inputs = [Input(TensorType(v.dtype.name, v.shape if static else (None,) * v.ndim), f"x{k}")
              for k, v in enumerate(values)]
    result = build(*inputs)
    outputs = list(result) if isinstance(result, tuple) else [result]
    check_graph(Graph(inputs, outputs))
    got = evaluate(outputs, dict(zip(inputs, values)))
    for output, value in zip(outputs, got):
        assert all(s is None or s == n for s, n in zip(output.type.shape, value.shape))
        assert output.dtype == value.dtype.name
    return got


def _solve_case(kind: str, transposed: bool, lower: bool) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def build(a: Variable, b: Variable) -> Variable:
        return pt.linalg.solve(a, b, assume_a=kind, transposed=transposed, lower=lower)

    def reference(a: Array, b: Array) -> Array:
        return np.asarray(scipy.linalg.solve(a, b, assume_a=kind, transposed=transposed, lower=lower))

    return build, reference


BAND = np.eye(4) + np.eye(4, k=1) + np.eye(4, k=-1)
SOLVE_MATRICES = {
    "gen": general(4, 4) + 3 * np.eye(4), "sym": symmetric(4) + 8 * np.eye(4), "pos": spd(4),
    "diagonal": general(4, 4) + 3 * np.eye(4), "tridiagonal": general(4, 4) + 3 * np.eye(4),
    "lower triangular": general(4, 4) + 3 * np.eye(4),
    "upper triangular": general(4, 4) + 3 * np.eye(4),
}
VALUE_CASES: list[tuple[str, Callable[..., Any], Callable[..., Any], tuple[Array, ...]]] = [
    ("lu_factor", pt.linalg.lu_factor, per_matrix(scipy.linalg.lu_factor), (general(2, 4, 4),)),
    ("lu_factor wide", pt.linalg.lu_factor, scipy.linalg.lu_factor, (general(3, 5),)),
    ("lu_factor tall", pt.linalg.lu_factor, scipy.linalg.lu_factor, (general(5, 3),)),
    ("lu", pt.linalg.lu, per_matrix(scipy.linalg.lu), (general(2, 4, 4),)),
    ("lu wide", pt.linalg.lu, scipy.linalg.lu, (general(3, 5),)),
    ("lu tall", pt.linalg.lu, scipy.linalg.lu, (general(5, 3),)),
    ("lu p_indices", lambda a: pt.linalg.lu(a, p_indices=True),
     lambda a: scipy.linalg.lu(a, p_indices=True), (general(5, 3),)),
    ("lu permute_l", lambda a: pt.linalg.lu(a, permute_l=True),
     lambda a: scipy.linalg.lu(a, permute_l=True), (general(4, 4),)),
    ("lu 1x1", pt.linalg.lu, scipy.linalg.lu, (general(1, 1),)),
    ("lu_solve", lambda a, b: pt.linalg.lu_solve(pt.linalg.lu_factor(a), b),
     per_matrix(lambda a, b: scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b)),
     (general(2, 4, 4), general(2, 4, 3))),
    ("lu_solve vector trans", lambda a, b: pt.linalg.lu_solve(pt.linalg.lu_factor(a), b, trans=1),
     lambda a, b: scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b, trans=1),
     (general(4, 4), general(4))),
    ("expm", pt.linalg.expm, per_matrix(scipy.linalg.expm), (general(3, 4, 4),)),
    ("expm large norm", pt.linalg.expm, scipy.linalg.expm, (10 * general(3, 3),)),
    ("expm 1x1", pt.linalg.expm, np.exp, (general(1, 1),)),
    ("block_diag", pt.linalg.block_diag, scipy.linalg.block_diag,
     (general(2, 3), np.array(4.0), general(3), general(0, 2), general(1, 1))),
    ("cond", pt.linalg.cond, np.linalg.cond, (general(3, 4, 4),)),
    ("cond -2", lambda a: pt.linalg.cond(a, -2), lambda a: np.linalg.cond(a, -2), (general(4, 4),)),
    ("cond 1", lambda a: pt.linalg.cond(a, 1), lambda a: np.linalg.cond(a, 1), (general(2, 4, 4),)),
    ("cond fro", lambda a: pt.linalg.cond(a, "fro"), lambda a: np.linalg.cond(a, "fro"),
     (general(4, 4),)),
    ("cond of zero", pt.linalg.cond, np.linalg.cond, (np.zeros((2, 2)),)),
    ("matrix_rank", pt.linalg.matrix_rank, np.linalg.matrix_rank,
     (np.stack([np.outer(general(4), general(3)), general(4, 3), np.zeros((4, 3))]),)),
    ("matrix_rank tol", lambda a: pt.linalg.matrix_rank(a, tol=0.5),
     lambda a: np.linalg.matrix_rank(a, tol=0.5), (general(2, 4, 3),)),
    ("matrix_rank rtol", lambda a: pt.linalg.matrix_rank(a, rtol=0.3),
     lambda a: np.linalg.matrix_rank(a, rtol=0.3), (general(2, 4, 3),)),
    ("matrix_rank vector", pt.linalg.matrix_rank, np.linalg.matrix_rank, (np.zeros(3),)),
    ("tensorinv", pt.linalg.tensorinv, np.linalg.tensorinv, (general(4, 6, 8, 3),)),
    ("tensorinv ind 1", lambda a: pt.linalg.tensorinv(a, ind=1),
     lambda a: np.linalg.tensorinv(a, ind=1), (general(6, 2, 3),)),
    ("tensorsolve", pt.linalg.tensorsolve, np.linalg.tensorsolve,
     (general(6, 4, 2, 3, 4), general(6, 4))),
    ("tensorsolve axes", lambda a, b: pt.linalg.tensorsolve(a, b, axes=(0, 2)),
     lambda a, b: np.linalg.tensorsolve(a, b, axes=(0, 2)), (general(2, 3, 6), general(2, 3))),
    ("norm stacks", lambda a: pt.linalg.norm(a, 2, axis=(-2, -1)),
     lambda a: np.linalg.norm(a, 2, axis=(-2, -1)), (general(2, 3, 4),)),
    ("norm 1-tuple axis", lambda a: pt.linalg.norm(a, 1, axis=(-1,), keepdims=True),
     lambda a: np.linalg.norm(a, 1, axis=(-1,), keepdims=True), (general(2, 3, 4),)),
    ("eigvalsh generalized", pt.linalg.eigvalsh, per_matrix(scipy.linalg.eigvalsh),
     (symmetric(4, 2), spd(4, 2))),
    *[(f"solve {kind}{' transposed' if transposed else ''}{' lower' if lower else ''}",
       *_solve_case(kind, transposed, lower), (matrix, general(4, 2)))
      for kind, matrix in SOLVE_MATRICES.items()
      for transposed in (False, True) for lower in (False, True)],
]


@pytest.mark.parametrize("static", [True, False], ids=["static", "unknown"])
@pytest.mark.parametrize(
    "build, reference, values", [c[1:] for c in VALUE_CASES], ids=[c[0] for c in VALUE_CASES]
)
def test_values_match_scipy(
    build: Callable[..., Any], reference: Callable[..., Any], values: tuple[Array, ...], static: bool
) -> None:
    got = outputs_of(build, values, static)
    expected = reference(*values)
    expected_list = list(expected) if isinstance(expected, tuple) else [expected]
    assert len(got) == len(expected_list)
    for g, e in zip(got, expected_list):
        e = np.asarray(e)
        assert g.shape == e.shape
        assert g.dtype.kind == e.dtype.kind
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-9 * max(1.0, float(np.abs(e).max(initial=0))))


def test_solve_structures_read_only_their_entries() -> None:
    """Garbage outside the diagonal, the band or the triangle changes nothing, as in SciPy."""
    a, b = general(4, 4) + 3 * np.eye(4), general(4, 2)
    noisy = a + 100 * (1 - BAND)
    for kind, clean in [("diagonal", np.diag(np.diag(a))), ("tridiagonal", a * BAND),
                        ("lower triangular", np.tril(a))]:
        (got,) = outputs_of(lambda x, y, k=kind: pt.linalg.solve(x, y, assume_a=k), (noisy if kind != "lower triangular" else np.tril(a) + np.triu(general(4, 4), 1), b), True)
        np.testing.assert_allclose(got, np.linalg.solve(clean, b), rtol=1e-10)


def test_generalized_eigh() -> None:
    a, b = symmetric(4, 2), spd(4, 2)
    for uplo, shown in [("L", np.tril(a) + np.triu(np.full((4, 4), 9.0), 1)), ("U", np.triu(a))]:
        w, v = outputs_of(lambda x, y, u=uplo: pt.linalg.eigh(x, y, UPLO=u), (shown, b), False)
        expected_w, expected_v = per_matrix(scipy.linalg.eigh)(a, b)
        np.testing.assert_allclose(w, expected_w, rtol=1e-10)
        np.testing.assert_allclose(np.abs(v), np.abs(expected_v), rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(a @ v, b @ v * w[..., None, :], atol=1e-9)
        np.testing.assert_allclose(np.swapaxes(v, -1, -2) @ b @ v, np.broadcast_to(np.eye(4), a.shape), atol=1e-10)
    (upper,) = outputs_of(lambda x: pt.linalg.eigh(x, "U")[0], (np.triu(a),), True)  # NumPy's positional UPLO
    np.testing.assert_allclose(upper, np.linalg.eigvalsh(a), rtol=1e-10)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
def test_empty_matrices(shape: tuple[int, ...]) -> None:
    value = np.zeros(shape)
    for build in (pt.linalg.expm, lambda a: pt.linalg.lu(a)[2], lambda a: pt.linalg.lu_factor(a)[0],
                  lambda a: pt.linalg.lu_solve(pt.linalg.lu_factor(a), a)):
        (got,) = outputs_of(build, (value,), False)
        assert got.shape == shape


def test_block_diag_of_stacks_and_static_shape() -> None:
    a, b = general(3, 2, 2), general(1, 3, 1)
    (got,) = outputs_of(pt.linalg.block_diag, (a, b), True)
    for k in range(3):
        np.testing.assert_array_equal(got[k], scipy.linalg.block_diag(a[k], b[0]))
    constant = pt.linalg.block_diag(pt.constant(np.ones((2, 3))), pt.constant(np.arange(4)))
    assert constant.type == TensorType("float64", (3, 7))
    assert pt.linalg.block_diag().type.shape == (1, 0)


# --- derivatives -----------------------------------------------------------------------
def _squared(x: Variable) -> Variable:
    return x * x  # sign-invariant function of eigenvectors


GRADIENT_CASES: list[tuple[str, Callable[..., Variable], tuple[Array, ...]]] = [
    ("lu_factor", lambda a: pt.linalg.lu_factor(a)[0], (general(2, 4, 4),)),
    ("lu l", lambda a: pt.linalg.lu(a)[1], (general(4, 4),)),
    ("lu u", lambda a: pt.linalg.lu(a)[2], (general(2, 3, 3),)),
    ("lu permute_l", lambda a: pt.linalg.lu(a, permute_l=True)[0], (general(3, 3),)),
    ("lu_solve", lambda a, b: pt.linalg.lu_solve(pt.linalg.lu_factor(a), b), (general(4, 4), general(4, 2))),
    ("lu_solve trans", lambda a, b: pt.linalg.lu_solve(pt.linalg.lu_factor(a), b, trans=1),
     (general(2, 3, 3), general(2, 3, 2))),
    ("expm", pt.linalg.expm, (general(2, 3, 3),)),
    ("expm scaled", pt.linalg.expm, (3 * general(4, 4),)),
    ("block_diag", lambda a, b: pt.linalg.block_diag(a, b), (general(2, 3), general(2, 2))),
    ("cond", pt.linalg.cond, (general(3, 3),)),
    ("cond 1", lambda a: pt.linalg.cond(a, 1), (general(3, 3) + 3 * np.eye(3),)),
    ("tensorinv", pt.linalg.tensorinv, (general(2, 3, 6) + np.eye(6).reshape(2, 3, 6),)),
    ("tensorsolve", pt.linalg.tensorsolve, (general(2, 3, 6) + np.eye(6).reshape(2, 3, 6), general(2, 3))),
    *[(f"solve {kind}", lambda a, b, k=kind: pt.linalg.solve(a, b, assume_a=k, transposed=True),
       (matrix, general(4, 2))) for kind, matrix in SOLVE_MATRICES.items() if kind != "pos"],
    ("eigh generalized values", lambda a, b: pt.linalg.eigvalsh(a, b), (symmetric(3), spd(3))),
    ("eigh generalized vectors", lambda a, b: _squared(pt.linalg.eigh(a, b)[1]), (symmetric(3), spd(3))),
    ("norm stacks", lambda a: pt.linalg.norm(a, -2, axis=(-2, -1)), (general(2, 3, 4),)),
    ("qr wide q", lambda a: pt.linalg.qr(a)[0], (general(3, 5),)),
    ("qr wide r", lambda a: pt.linalg.qr(a)[1], (general(2, 3, 5),)),
    ("qr wide complete", lambda a: pt.sum(pt.linalg.qr(a, mode="complete")[0]) * pt.linalg.qr(a)[1],
     (general(2, 4),)),
    ("qr 1 row", lambda a: pt.linalg.qr(a, mode="r"), (general(1, 3),)),
]


def _static(build: Callable[..., Variable], values: tuple[Array, ...]) -> Callable[..., Variable]:
    """`build` over inputs re-declared with the values' static shapes (QR's derivative
    reads whether a matrix is wide from its type)."""
    def with_shapes(*variables: Variable) -> Variable:
        return build(*(pt.specify_shape(v, value.shape) for v, value in zip(variables, values)))
    return with_shapes


@pytest.mark.parametrize(
    "build, values", [c[1:] for c in GRADIENT_CASES], ids=[c[0] for c in GRADIENT_CASES]
)
def test_derivatives_match_finite_differences(build: Callable[..., Variable], values: tuple[Array, ...]) -> None:
    check_pullback(_static(build, values), values, rtol=1e-5, atol=1e-6)
    check_pushforward(_static(build, values), values, rtol=1e-5, atol=1e-6)


def test_second_derivative_of_expm() -> None:
    def gradient(a: Variable) -> Variable:
        return pt.grad(pt.sum(pt.sin(pt.linalg.expm(a))), a)

    check_pullback(gradient, [general(3, 3)], rtol=1e-4, atol=1e-5)
    check_pushforward(gradient, [general(3, 3)], rtol=1e-4, atol=1e-5)


def test_refused_derivatives_say_why() -> None:
    tall = Input(TensorType("float64", (4, 3)), "tall")
    with pytest.raises(NotImplementedError, match="complete=True"):
        pt.grad(pt.sum(pt.linalg.qr(tall, mode="complete")[0]), tall)
    with pytest.raises(NotImplementedError, match="square"):
        pt.grad(pt.sum(pt.linalg.lu_factor(tall)[0]), tall)


# --- compiled ---------------------------------------------------------------------------
def _everything(a: Variable, b: Variable, tall: Variable, s: Variable) -> list[Variable]:
    lu, pivots = pt.linalg.lu_factor(a)
    w, v = pt.linalg.eigh(s, a @ pt.linalg.matrix_transpose(a) + 4 * pt.eye(4))
    outputs = [
        lu, pivots, *pt.linalg.lu(tall), pt.linalg.lu(tall, p_indices=True)[0],
        pt.linalg.lu_solve((lu, pivots), b), pt.linalg.lu_solve((lu, pivots), b, trans=1),
        pt.linalg.expm(a), pt.linalg.block_diag(a[0], tall[0]), pt.linalg.cond(a),
        pt.linalg.cond(a, 1), pt.linalg.matrix_rank(tall), pt.linalg.tensorinv(a[0], ind=1),
        pt.linalg.solve(a, b, assume_a="tridiagonal", transposed=True),
        pt.linalg.solve(a, b, assume_a="diagonal"), w, v * v,
        pt.linalg.norm(tall, "nuc", axis=(-2, -1)),
    ]
    cost = pt.sum(pt.linalg.expm(a) ** 2) + pt.sum(lu * lu) + pt.sum(pt.linalg.lu_solve((lu, pivots), b))
    return [*outputs, *pt.grad(cost, [a, b])]


@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-9), ("float32", 2e-3)])
def test_compiled_matches_evaluate(dtype: str, rtol: float) -> None:
    a, b, tall, s = (pt.tensor(name, dtype=dtype, shape=(None, None, None)) for name in "abts")
    values = [(general(3, 4, 4) + 2 * np.eye(4)).astype(dtype), general(3, 4, 2).astype(dtype),
              general(3, 5, 3).astype(dtype), symmetric(4, 3).astype(dtype)]
    outputs = _everything(a, b, tall, s)
    compiled = function([a, b, tall, s], outputs)
    got = compiled(*values)
    expected = evaluate(outputs, dict(zip([a, b, tall, s], values)))
    for number, (g, e) in enumerate(zip(got, expected)):
        assert np.asarray(g).dtype == e.dtype and np.shape(g) == e.shape, number
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * max(1.0, float(np.abs(e).max(initial=0))),
                                   err_msg=f"output {number}")


def test_bad_pivots_are_refused_naming_the_op() -> None:
    lu, pivots, b = pt.matrix("lu"), pt.tensor("piv", dtype="int32", shape=(None,)), pt.vector("b")
    x = pt.linalg.lu_solve((lu, pivots), b)
    bad = np.array([0, 5, 2], dtype=np.int32)
    with pytest.raises(ValueError, match="PivotPermutation.*outside"):
        evaluate([x], {lu: np.eye(3), pivots: bad, b: np.ones(3)})
    with pytest.raises(ValueError, match="PivotPermutation of piv.*outside"):
        function([lu, pivots, b], [x])(np.eye(3), bad, np.ones(3))


# --- errors -----------------------------------------------------------------------------
def test_build_errors_name_the_function() -> None:
    matrix = Input(TensorType("float64", (3, 3)), "a")
    with pytest.raises(ValueError, match="assume_a must be one of"):
        pt.linalg.solve(matrix, np.ones(3), assume_a="banded")
    with pytest.raises(ValueError, match="trans must be 0, 1 or 2"):
        pt.linalg.lu_solve(pt.linalg.lu_factor(matrix), np.ones(3), trans=3)  # type: ignore[arg-type]
    with pytest.raises(ShapeError, match=r"Expm.*square.*\(3, 4\)"):
        pt.linalg.expm(Input(TensorType("float64", (3, 4)), "w"))
    with pytest.raises(DTypeError, match="expm: float32 or float64"):
        pt.linalg.expm(Input(TensorType("complex128", (3, 3)), "c"))
    with pytest.raises(ValueError, match="tensorinv: ind must be a positive int"):
        pt.linalg.tensorinv(matrix, ind=0)
    with pytest.raises(ShapeError, match="tensorsolve: a needs more axes than b"):
        pt.linalg.tensorsolve(matrix, matrix)
    with pytest.raises(DTypeError, match="PivotPermutation.*integers"):
        pt.linalg.lu_solve((matrix, Input(TensorType("float64", (3,)), "p")), np.ones(3))
    with pytest.raises(ValueError, match="axis must be an int, or a tuple of one or two ints"):
        pt.linalg.norm(matrix, axis=(0, 1, 0))


def test_run_time_errors() -> None:
    with pytest.raises(ShapeError, match="square"):
        outputs_of(pt.linalg.tensorinv, (general(2, 3, 4),), False)
    with pytest.raises(np.linalg.LinAlgError, match="SolveTriangular.*singular"):
        outputs_of(lambda a, b: pt.linalg.solve(a, b, assume_a="diagonal"), (np.zeros((2, 2)), np.ones(2)), False)
