"""`ops.special`: values against SciPy (the formulas `xlogy`, `logit`, ... included, at
their edges), derivatives against finite differences (second order for gammaln,
digamma and betaln), compiled parity with SciPy's output dtypes, and fusion."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.special as sc

import ops as pt
from fgraph import Variable, evaluate
from numba_backend import function
from ops import special
from tests.ops.checks import check_pullback, check_pushforward, run

Array = np.ndarray[Any, np.dtype[Any]]
POSITIVE = np.array([0.3, 1.0, 2.5, 7.0, 30.0])


FORMULAS: list[tuple[str, Callable[..., Variable], Callable[..., Array], tuple[Array, ...]]] = [
    ("xlogy", special.xlogy, sc.xlogy, (np.array([0.0, 0.0, 1.5, -2.0, 3.0]), np.array([0.0, 2.0, 0.5, 3.0, np.inf]))),
    ("xlog1py", special.xlog1py, sc.xlog1py, (np.array([0.0, 0.0, 1.5, 2.0]), np.array([-1.0, 2.0, 1e-20, 3.0]))),
    ("logit", special.logit, sc.logit, (np.array([0.0, 1e-300, 0.25, 0.5, 0.999, 1.0]),)),
    ("log_sigmoid", special.log_sigmoid, sc.log_expit, (np.array([-1000.0, -3.0, 0.0, 3.0, 1000.0]),)),
    ("expit", special.expit, sc.expit, (np.array([-1000.0, -3.0, 0.0, 3.0, 1000.0]),)),
    ("softsign", special.softsign, lambda x: x / (1 + np.abs(x)), (np.array([-5.0, 0.0, 0.5]),)),
]


@pytest.mark.parametrize("build, reference, values", [c[1:] for c in FORMULAS], ids=[c[0] for c in FORMULAS])
def test_formulas_match_scipy(build: Callable[..., Variable], reference: Callable[..., Array],
                              values: tuple[Array, ...]) -> None:
    with np.errstate(divide="ignore"):
        expected = reference(*values)
    np.testing.assert_allclose(run(build, values), expected, rtol=1e-15, atol=0)


GRADIENTS: list[tuple[str, Callable[..., Variable], tuple[Array, ...]]] = [
    ("gammaln", special.gammaln, (POSITIVE,)),
    ("digamma", special.digamma, (POSITIVE,)),
    ("polygamma", lambda x: special.polygamma(2, x), (POSITIVE,)),
    ("gammainc", special.gammainc, (np.array([0.5, 2.0, 10.0]), np.array([0.3, 1.5, 8.0]))),
    ("gammaincc", special.gammaincc, (np.array([0.5, 2.0, 10.0]), np.array([0.3, 1.5, 8.0]))),
    ("betaln", special.betaln, (POSITIVE, POSITIVE[::-1].copy())),
    ("erfinv", special.erfinv, (np.array([-0.9, -0.2, 0.0, 0.5, 0.95]),)),
    ("erfcinv", special.erfcinv, (np.array([0.05, 0.5, 1.0, 1.7]),)),
    ("erfcx", special.erfcx, (np.array([-2.0, 0.0, 1.0, 30.0]),)),
    ("i0", special.i0, (np.array([-3.0, 0.0, 0.5, 10.0]),)),
    ("i1", special.i1, (np.array([-3.0, 0.2, 0.5, 10.0]),)),
    ("ive", lambda x: special.ive(1.5, x), (np.array([0.2, 0.5, 10.0, 50.0]),)),
    ("xlogy", special.xlogy, (np.array([0.5, 2.0]), np.array([1.5, 0.3]))),
    ("xlog1py", special.xlog1py, (np.array([0.5, 2.0]), np.array([1.5, 0.3]))),
    ("logit", special.logit, (np.array([0.1, 0.5, 0.9]),)),
    ("log_sigmoid", special.log_sigmoid, (np.array([-5.0, 0.0, 5.0]),)),
    ("softsign", special.softsign, (np.array([-5.0, 0.3, 5.0]),)),
]


@pytest.mark.parametrize("build, values", [c[1:] for c in GRADIENTS], ids=[c[0] for c in GRADIENTS])
def test_derivatives_match_finite_differences(build: Callable[..., Variable], values: tuple[Array, ...]) -> None:
    check_pullback(build, values, rtol=1e-6, atol=1e-7)
    check_pushforward(build, values, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(
    "cost, values",
    [(lambda x: pt.sum(special.gammaln(x)), (POSITIVE,)),
     (lambda x: pt.sum(special.digamma(x)), (POSITIVE,)),
     (lambda a, b: pt.sum(special.betaln(a, b)), (POSITIVE, POSITIVE[::-1].copy()))],
    ids=["gammaln", "digamma", "betaln"],
)
def test_second_derivatives(cost: Callable[..., Variable], values: tuple[Array, ...]) -> None:
    def gradient(*variables: Variable) -> Variable:
        return pt.grad(cost(*variables), variables[0])

    check_pullback(gradient, values, rtol=1e-5, atol=1e-6)


def test_derivative_in_a_of_the_incomplete_gamma() -> None:
    """The reference series against mpmath's derivative (40 digits)."""
    a, x = pt.vector("a"), pt.vector("x")
    gradient = pt.grad(pt.sum(special.gammainc(a, x)), a)
    (value,) = evaluate([gradient], {a: np.array([0.5, 10.0, 30.0]), x: np.array([0.3, 8.0, 35.0])})
    np.testing.assert_allclose(value, [-0.77057035137535191706, -0.11260572310818614123,
                                       -0.046407022028344249122], rtol=1e-8)


def test_orders_are_not_differentiated_and_must_be_integers() -> None:
    with pytest.raises(TypeError, match="polygamma: the order n must be an integer"):
        special.polygamma(1.5, pt.vector("x"))


ONE_ARGUMENT = [special.gammaln, special.digamma, special.erfinv, special.erfcinv, special.erfcx,
                special.i0, special.i1]
ONE_ARGUMENT_SCIPY = [sc.gammaln, sc.digamma, sc.erfinv, sc.erfcinv, sc.erfcx, sc.i0, sc.i1]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_compiled_matches_scipy_and_its_dtypes(dtype: str) -> None:
    x = pt.vector("x", dtype=dtype)
    a = pt.vector("a", dtype=dtype)
    outputs = [f(x) for f in ONE_ARGUMENT] + [
        special.polygamma(2, x), special.gammainc(a, x), special.gammaincc(a, x),
        special.betaln(a, x), special.ive(a, x),
    ]
    compiled = function([x, a], outputs)
    values = np.array([0.25, 0.5, 1.5, 3.0], dtype=dtype)
    orders = np.array([0.5, 1.0, 2.0, 7.5], dtype=dtype)
    expected = [f(values) for f in ONE_ARGUMENT_SCIPY] + [
        sc.polygamma(2, values), sc.gammainc(orders, values), sc.gammaincc(orders, values),
        sc.betaln(orders, values), sc.ive(orders, values),
    ]
    got = compiled(values, orders)
    tolerance = 1e-12 if dtype == "float64" else 1e-6
    for value, want in zip(got, expected):
        assert value.dtype == want.dtype
        np.testing.assert_allclose(value, want, rtol=tolerance)


def test_special_functions_fuse() -> None:
    x = pt.vector("x")
    compiled = function([x], special.gammaln(x) * 2 + special.digamma(x) + 1)
    assert [type(node.op).__name__ for node in compiled.graph.nodes] == ["Fused"]
    values = np.array([0.5, 2.0, 9.0])
    np.testing.assert_allclose(compiled(values), sc.gammaln(values) * 2 + sc.digamma(values) + 1,
                               rtol=1e-14)


def test_top_level_names() -> None:
    assert pt.gammaln is special.gammaln and pt.betaln is special.betaln
    assert pt.psi is special.digamma and pt.expit is pt.sigmoid
