"""`pt.linalg` in the reference evaluator: values against NumPy/SciPy (stacked matrices
and broadcast batch axes included), derivatives against finite differences in both
modes (second order for solve, cholesky and slogdet), and the errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.linalg

import ops as pt
from fgraph import DTypeError, Input, ShapeError, TensorType, Variable, evaluate
from tests.ops.checks import check_pullback, check_pushforward, run

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(7)


def spd(n: int, *batch: int) -> Array:
    """Well-conditioned symmetric positive-definite matrices."""
    x = RNG.normal(size=(*batch, n, n))
    return np.asarray(x @ np.swapaxes(x, -1, -2) + n * np.eye(n))


def general(*shape: int) -> Array:
    n = shape[-1]
    return np.asarray(RNG.normal(size=shape) + (2 * np.eye(n) if shape[-2] == n else 0))


def lower_triangular(n: int, *batch: int) -> Array:
    return np.asarray(np.linalg.cholesky(spd(n, *batch)))


def evaluated(build: Callable[..., Variable | tuple[Variable, ...]], *values: Array) -> list[Array]:
    inputs = [Input(TensorType(v.dtype.name, v.shape), f"in{k}") for k, v in enumerate(values)]
    result = build(*inputs)
    outputs = list(result) if isinstance(result, tuple) else [result]
    return evaluate(outputs, dict(zip(inputs, values)))


VALUE_CASES: list[tuple[str, Callable[..., Any], Callable[..., Any], tuple[Array, ...]]] = [
    ("cholesky", pt.linalg.cholesky, np.linalg.cholesky, (spd(4, 2, 3),)),
    ("cholesky upper", lambda a: pt.linalg.cholesky(a, lower=False),
     lambda a: np.swapaxes(np.linalg.cholesky(a), -1, -2), (spd(3),)),
    ("solve", pt.linalg.solve, np.linalg.solve, (general(2, 4, 4), general(2, 4, 3))),
    ("solve vector", pt.linalg.solve, np.linalg.solve, (general(4, 4), RNG.normal(size=4))),
    ("solve broadcast", pt.linalg.solve, np.linalg.solve, (general(1, 3, 3), general(5, 3, 2))),
    ("solve pos", lambda a, b: pt.linalg.solve(a, b, assume_a="pos", lower=True),
     lambda a, b: scipy.linalg.solve(a, b, assume_a="pos", lower=True), (spd(4), general(4, 2))),
    ("solve_triangular lower", lambda a, b: pt.linalg.solve_triangular(a, b, lower=True),
     lambda a, b: scipy.linalg.solve_triangular(a, b, lower=True),
     (lower_triangular(4) + np.triu(np.ones((4, 4)), 1), general(4, 2))),
    ("solve_triangular upper trans unit",
     lambda a, b: pt.linalg.solve_triangular(a, b, trans="T", unit_diagonal=True),
     lambda a, b: scipy.linalg.solve_triangular(a, b, trans="T", unit_diagonal=True),
     (general(4, 4), RNG.normal(size=4))),
    ("cho_solve", lambda c, b: pt.linalg.cho_solve((c, True), b),
     lambda c, b: scipy.linalg.cho_solve((c, True), b), (lower_triangular(4), general(4, 3))),
    ("inv", pt.linalg.inv, np.linalg.inv, (general(3, 4, 4),)),
    ("det", pt.linalg.det, np.linalg.det, (general(3, 4, 4),)),
    ("slogdet", pt.linalg.slogdet, np.linalg.slogdet, (general(3, 4, 4) - 3 * np.eye(4),)),
    ("eigvalsh", pt.linalg.eigvalsh, np.linalg.eigvalsh, (spd(4, 2),)),
    ("svd values", lambda a: pt.linalg.svd(a, compute_uv=False),
     lambda a: np.linalg.svd(a, compute_uv=False), (general(2, 5, 3),)),
    ("qr r", lambda a: pt.linalg.qr(a, mode="r"), lambda a: np.linalg.qr(a, mode="r"),
     (general(5, 3),)),
    ("qr", pt.linalg.qr, np.linalg.qr, (general(2, 5, 3),)),
    ("qr complete wide", lambda a: pt.linalg.qr(a, mode="complete"),
     lambda a: np.linalg.qr(a, mode="complete"), (general(3, 5),)),
    ("pinv", pt.linalg.pinv, np.linalg.pinv, (general(5, 3),)),
    ("pinv rank deficient", pt.linalg.pinv, np.linalg.pinv,
     (np.outer(RNG.normal(size=4), RNG.normal(size=3)),)),
    ("trace", pt.linalg.trace, lambda a: np.trace(a, axis1=-2, axis2=-1), (general(2, 3, 3),)),
    ("diagonal", lambda a: pt.linalg.diagonal(a, 1),
     lambda a: np.diagonal(a, 1, -2, -1), (general(2, 3, 4),)),
    ("top-level diagonal", pt.diagonal, np.diagonal, (general(3, 4),)),
]


@pytest.mark.parametrize(
    "build, reference, values", [case[1:] for case in VALUE_CASES], ids=[c[0] for c in VALUE_CASES]
)
def test_values_match_numpy(
    build: Callable[..., Any], reference: Callable[..., Any], values: tuple[Array, ...]
) -> None:
    got = evaluated(build, *values)
    expected = reference(*values)
    expected_list = list(expected) if isinstance(expected, tuple) else [expected]
    assert len(got) == len(expected_list)
    for g, e in zip(got, expected_list):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10)


def test_eigh_and_svd_reconstruct() -> None:
    a = spd(4, 3)
    w, v = evaluated(pt.linalg.eigh, a)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=1e-12)
    np.testing.assert_allclose(v @ (w[..., None] * np.swapaxes(v, -1, -2)), a, atol=1e-10)
    upper = evaluated(lambda x: pt.linalg.eigh(x, UPLO="U"), np.triu(a))[0]
    np.testing.assert_allclose(upper, np.linalg.eigvalsh(a), rtol=1e-12)
    for shape, full in [((2, 5, 3), True), ((3, 5), False), ((4, 4), True)]:
        b = general(*shape)
        u, s, vh = evaluated(lambda x, f=full: pt.linalg.svd(x, full_matrices=f), b)
        k = min(shape[-2:])
        np.testing.assert_allclose(s, np.linalg.svd(b, compute_uv=False), rtol=1e-12)
        np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], b, atol=1e-10)
        assert u.shape[-1] == (shape[-2] if full else k)


def test_lstsq_matches_numpy() -> None:
    a, b = general(6, 3), general(6, 2)
    x, residuals, rank, s = evaluated(pt.linalg.lstsq, a, b)
    ex, eres, erank, es = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(x, ex, rtol=1e-10)
    np.testing.assert_allclose(residuals, eres, rtol=1e-10)
    assert rank == erank and rank.dtype == np.int64
    np.testing.assert_allclose(s, es, rtol=1e-12)
    deficient = np.outer(RNG.normal(size=5), RNG.normal(size=3))
    vector = RNG.normal(size=5)
    x, _, rank, _ = evaluated(pt.linalg.lstsq, deficient, vector)
    np.testing.assert_allclose(x, np.linalg.lstsq(deficient, vector)[0], rtol=1e-8)
    assert rank == 1


@pytest.mark.parametrize("ord", [None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc"])
def test_matrix_norms(ord: Any) -> None:
    a = general(3, 4)
    np.testing.assert_allclose(evaluated(lambda x: pt.linalg.norm(x, ord), a)[0],
                               np.linalg.norm(a, ord), rtol=1e-12)
    stacked = general(2, 3, 4)
    got = evaluated(lambda x: pt.linalg.norm(x, ord, axis=(2, 1), keepdims=True), stacked)[0]
    np.testing.assert_allclose(got, np.linalg.norm(stacked, ord, axis=(2, 1), keepdims=True),
                               rtol=1e-12)


@pytest.mark.parametrize("ord", [None, 0, 1, 2, 3, 0.5, np.inf, -np.inf])
def test_vector_norms(ord: Any) -> None:
    v = RNG.normal(size=5)
    np.testing.assert_allclose(evaluated(lambda x: pt.linalg.norm(x, ord), v)[0],
                               np.linalg.norm(v, ord), rtol=1e-12)
    m = general(3, 4)
    np.testing.assert_allclose(evaluated(lambda x: pt.linalg.norm(x, ord, axis=0), m)[0],
                               np.linalg.norm(m, ord, axis=0), rtol=1e-12)


def test_dtypes() -> None:
    a32 = Input(TensorType("float32", (3, 3)), "a")
    assert pt.linalg.cholesky(a32).dtype == "float32"
    assert pt.linalg.solve(a32, Input(TensorType("float64", (3,)), "b")).dtype == "float64"
    integers = Input(TensorType("int64", (3, 3)), "i")
    assert pt.linalg.inv(integers).dtype == "float64"
    (value,) = evaluate([pt.linalg.det(integers)], {integers: np.diag([1, 2, 3])})
    assert value == pytest.approx(6.0)


def test_errors_name_the_function_and_shapes() -> None:
    with pytest.raises(ShapeError, match=r"Cholesky.*square.*\(3, 4\)"):
        pt.linalg.cholesky(Input(TensorType("float64", (3, 4)), "a"))
    with pytest.raises(ShapeError, match="differ in length"):
        pt.linalg.solve(Input(TensorType("float64", (3, 3)), "a"), Input(TensorType("float64", (4,)), "b"))
    with pytest.raises(DTypeError, match=r"inv: float32 or float64.*float16"):
        pt.linalg.inv(Input(TensorType("float16", (3, 3)), "a"))
    with pytest.raises(ShapeError, match="at least 2 axes"):
        pt.linalg.det(Input(TensorType("float64", (3,)), "v"))
    with pytest.raises(ValueError, match="UPLO"):
        pt.linalg.eigh(Input(TensorType("float64", (3, 3)), "a"), UPLO="X")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "build, value, message",
    [
        (pt.linalg.cholesky, -np.eye(3), "Cholesky.*not positive definite"),
        (pt.linalg.inv, np.ones((3, 3)), "Inv.*singular"),
        (lambda a: pt.linalg.solve(a, np.ones(3)), np.ones((3, 3)), "Solve.*singular"),
        (lambda a: pt.linalg.solve_triangular(a, np.ones(3), lower=True), np.tril(np.ones((3, 3))) - np.eye(3),
         "SolveTriangular.*singular"),
    ],
)
def test_bad_matrices_raise_naming_the_op(build: Callable[..., Variable], value: Array, message: str) -> None:
    with pytest.raises(np.linalg.LinAlgError, match=message):
        run(build, [value])


def test_run_time_shape_is_checked() -> None:
    with pytest.raises(ShapeError, match="square"):
        run(pt.linalg.det, [np.ones((2, 3))])


def test_singular_slogdet_and_det() -> None:
    sign, logdet = evaluated(pt.linalg.slogdet, np.ones((3, 3)))
    assert sign == 0 and logdet == -np.inf
    assert evaluated(pt.linalg.det, np.ones((3, 3)))[0] == 0


# --- derivatives -----------------------------------------------------------------------
def _symmetric_square(values: Variable) -> Variable:
    return values * values  # sign-invariant function of eigen/singular vectors


GRADIENT_CASES: list[tuple[str, Callable[..., Variable], tuple[Array, ...]]] = [
    ("cholesky", pt.linalg.cholesky, (spd(3, 2),)),
    ("cholesky upper", lambda a: pt.linalg.cholesky(a, lower=False), (spd(3),)),
    ("solve", pt.linalg.solve, (general(2, 3, 3), general(2, 3, 2))),
    ("solve broadcast", pt.linalg.solve, (general(1, 3, 3), general(2, 3, 2))),
    ("solve_triangular", lambda a, b: pt.linalg.solve_triangular(a, b, lower=True),
     (lower_triangular(3), general(3, 2))),
    ("solve_triangular trans unit", lambda a, b: pt.linalg.solve_triangular(
        a, b, trans=1, unit_diagonal=True), (general(3, 3), general(3, 2))),
    ("cho_solve", lambda c, b: pt.linalg.cho_solve((c, True), b), (lower_triangular(3), general(3, 2))),
    ("cho_solve upper", lambda c, b: pt.linalg.cho_solve((c, False), b),
     (np.swapaxes(lower_triangular(3), -1, -2).copy(), general(3, 2))),
    ("inv", pt.linalg.inv, (general(2, 3, 3),)),
    ("det", pt.linalg.det, (general(2, 3, 3),)),
    ("slogdet", lambda a: pt.linalg.slogdet(a)[1], (general(2, 3, 3) - 4 * np.eye(3),)),
    ("eigh values", pt.linalg.eigvalsh, (spd(3, 2),)),
    ("eigh vectors", lambda a: _symmetric_square(pt.linalg.eigh(a)[1]), (spd(3),)),
    ("eigh upper", lambda a: pt.linalg.eigh(a, UPLO="U")[0] + pt.sum(_symmetric_square(
        pt.linalg.eigh(a, UPLO="U")[1])), (spd(3),)),
    ("svd values", lambda a: pt.linalg.svd(a, compute_uv=False), (general(2, 4, 3),)),
    ("svd u tall", lambda a: _symmetric_square(pt.linalg.svd(a, full_matrices=False)[0]), (general(4, 3),)),
    ("svd vh wide", lambda a: _symmetric_square(pt.linalg.svd(a, full_matrices=False)[2]), (general(3, 4),)),
    ("svd u wide", lambda a: _symmetric_square(pt.linalg.svd(a, full_matrices=False)[0]), (general(3, 4),)),
    ("svd vh tall", lambda a: _symmetric_square(pt.linalg.svd(a, full_matrices=False)[2]), (general(4, 3),)),
    ("qr q", lambda a: pt.linalg.qr(a)[0], (general(4, 3),)),
    ("qr r", lambda a: pt.linalg.qr(a, mode="r"), (general(2, 3, 3),)),
    ("pinv", pt.linalg.pinv, (general(4, 3),)),
    ("lstsq", lambda a, b: pt.linalg.lstsq(a, b)[0], (general(5, 3), general(5, 2))),
    ("norm 2", lambda a: pt.linalg.norm(a, 2), (general(3, 3),)),
    ("norm nuc", lambda a: pt.linalg.norm(a, "nuc"), (general(3, 4),)),
]


def _static(build: Callable[..., Variable], values: tuple[Array, ...]) -> Callable[..., Variable]:
    """`build` over inputs re-declared with the values' static shapes (the SVD and QR
    derivatives read whether a matrix is tall or wide from its type)."""
    def with_shapes(*variables: Variable) -> Variable:
        return build(*(pt.specify_shape(v, value.shape) for v, value in zip(variables, values)))
    return with_shapes


@pytest.mark.parametrize(
    "build, values", [case[1:] for case in GRADIENT_CASES], ids=[c[0] for c in GRADIENT_CASES]
)
def test_pullback_matches_finite_differences(build: Callable[..., Variable], values: tuple[Array, ...]) -> None:
    check_pullback(_static(build, values), values, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "build, values", [case[1:] for case in GRADIENT_CASES], ids=[c[0] for c in GRADIENT_CASES]
)
def test_pushforward_matches_finite_differences(
    build: Callable[..., Variable], values: tuple[Array, ...]
) -> None:
    check_pushforward(_static(build, values), values, rtol=1e-5, atol=1e-6)


SECOND_ORDER: list[tuple[str, Callable[..., Variable], tuple[Array, ...]]] = [
    ("solve", lambda a, b: pt.sum(pt.linalg.solve(a, b) ** 2), (general(3, 3), general(3, 2))),
    ("cholesky", lambda a: pt.sum(pt.sin(pt.linalg.cholesky(a))), (spd(3),)),
    ("slogdet", lambda a: pt.linalg.slogdet(a)[1], (general(3, 3) + 3 * np.eye(3),)),
]


@pytest.mark.parametrize(
    "cost, values", [case[1:] for case in SECOND_ORDER], ids=[c[0] for c in SECOND_ORDER]
)
def test_second_derivatives(cost: Callable[..., Variable], values: tuple[Array, ...]) -> None:
    def gradient(*variables: Variable) -> Variable:
        return pt.grad(cost(*variables), variables[0])

    check_pullback(gradient, values, rtol=1e-4, atol=1e-5)
    check_pushforward(gradient, values, rtol=1e-4, atol=1e-5)


def test_svd_full_matrices_derivative_is_refused() -> None:
    a = Input(TensorType("float64", (3, 2)), "a")
    u = pt.linalg.svd(a)[0]
    with pytest.raises(NotImplementedError, match="full_matrices"):
        pt.grad(pt.sum(u), a)
