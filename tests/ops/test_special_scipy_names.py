"""The `pt.special` names of issue 21: values against SciPy (evaluate and compiled, with
SciPy's edges), derivatives against finite differences (in a and b for betainc, through
the implicit function for gammaincinv), the derivatives that are not implemented raise
naming the argument, SciPy's signatures of logsumexp / softmax / log_softmax, lengths
0 and 1 and unknown / static shapes."""

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
from tests.ops.checks import check_pullback, check_pushforward

Array = np.ndarray[Any, np.dtype[Any]]
RNG = np.random.default_rng(21)
UNIT = np.array([0.0, 1e-10, 0.1, 0.5, 0.9, 1.0])
POSITIVE = np.array([0.3, 1.0, 2.5, 7.0, 30.0])

# name, fgraph function, SciPy function, argument values (edges included)
VALUES: list[tuple[str, Callable[..., Variable], Callable[..., Array], tuple[Array, ...]]] = [
    ("gamma", special.gamma, sc.gamma,
     (np.array([0.0, -0.0, -1.0, -2.5, 0.5, 5.0, 171.0, 172.0, np.inf, -np.inf, np.nan]),)),
    ("beta", special.beta, sc.beta,
     (np.array([0.5, 2.0, 30.0, -0.5, 1e3]), np.array([0.5, 3.0, 40.0, 2.0, 1e3]))),
    ("poch", special.poch, sc.poch,
     (np.array([0.5, 2.0, 3.5, -0.5, 1.0]), np.array([0.0, 3.0, -1.5, 2.0, -2.0]))),
    ("factorial", special.factorial, sc.factorial, (np.array([-1.0, 0.0, 1.0, 3.5, 10.0, 170.0]),)),
    ("multigammaln", lambda a: special.multigammaln(a, 3), lambda a: np.array([sc.multigammaln(v, 3) for v in a]),
     (np.array([1.5, 2.0, 10.0, 100.0]),)),
    ("betainc", special.betainc, sc.betainc,
     (np.array([0.5, 2.0, 30.0, 0.0, 1.0, 0.0, -1.0, 2.0]), np.array([0.5, 3.0, 5.0, 1.0, 0.0, 0.0, 1.0, 2.0]),
      np.array([0.3, 0.5, 0.9, 0.5, 0.5, 0.5, 0.5, 1.5]))),
    ("gammaincinv", special.gammaincinv, sc.gammaincinv,
     (np.array([0.5, 2.0, 30.0, 1.0, 1.0, 0.0, 2.0]), np.array([0.3, 1e-200, 1 - 1e-12, 0.0, 1.0, 0.5, 1.5]))),
    ("ndtr", special.ndtr, sc.ndtr, (np.array([-40.0, -5.0, 0.0, 1e-3, 5.0, np.inf, -np.inf]),)),
    ("ndtri", special.ndtri, sc.ndtri, (np.array([0.0, 1e-300, 0.025, 0.5, 0.975, 1.0, 1.5]),)),
    ("log_ndtr", special.log_ndtr, sc.log_ndtr,
     (np.array([-1e5, -40.0, -1.0, -0.5, 0.0, 5.0, 40.0, np.inf, -np.inf]),)),
    ("zeta", special.zeta, sc.zeta, (np.array([-7.0, -2.0, 0.0, 0.5, 1.0, 1.5, 10.0, np.inf]),)),
    ("hurwitz zeta", special.zeta, sc.zeta,
     (np.array([2.0, 1.5, 0.5, 1.0, 4.0]), np.array([1.0, 0.25, 1.0, 2.0, -1.5]))),
    ("owens_t", special.owens_t, sc.owens_t,
     (np.array([0.0, 1.0, -1.0, 3.0, 0.5, 2.0]), np.array([1.0, -1.0, 0.5, 10.0, np.inf, 1e-3]))),
    ("jv", special.jv, sc.jv,
     (np.array([0.0, 1.0, -0.5, 2.5, 3.0, 40.0, 0.0]), np.array([0.0, 3.0, 0.0, 7.0, -2.0, 60.0, 1e4]))),
    ("j0", special.j0, sc.j0, (np.array([0.0, 2.0, 5.0, -7.0, 1e3]),)),
    ("j1", special.j1, sc.j1, (np.array([0.0, 0.5, 5.0, -7.0, 1e3]),)),
    ("kv", special.kv, sc.kv, (np.array([0.0, 0.5, -2.5, 10.0, 1.0]), np.array([1.0, 0.0, 3.0, 0.1, 800.0]))),
    ("kve", special.kve, sc.kve, (np.array([0.0, 0.5, -2.5, 10.0, 1.0]), np.array([1.0, 0.0, 3.0, 0.1, 800.0]))),
    ("iv", special.iv, sc.iv, (np.array([0.0, 0.5, 2.0, 1.5]), np.array([1.0, 0.0, -3.0, 700.0]))),
    ("erf", special.erf, sc.erf, (np.array([-3.0, 0.0, 0.5]),)),
    ("erfc", special.erfc, sc.erfc, (np.array([-3.0, 0.0, 10.0]),)),
]


def _inputs(values: tuple[Array, ...], static: bool) -> list[Variable]:
    return [pt.tensor(f"x{i}", dtype=str(v.dtype), shape=(v.shape if static else (None,) * v.ndim))
            for i, v in enumerate(values)]


@pytest.mark.parametrize("static", [False, True], ids=["unknown shape", "static shape"])
@pytest.mark.parametrize("build, reference, values", [c[1:] for c in VALUES], ids=[c[0] for c in VALUES])
def test_values_match_scipy_evaluated_and_compiled(
    build: Callable[..., Variable], reference: Callable[..., Array], values: tuple[Array, ...], static: bool
) -> None:
    inputs = _inputs(values, static)
    output = build(*inputs)
    with np.errstate(all="ignore"):
        expected = reference(*values)
        (evaluated,) = evaluate([output], dict(zip(inputs, values)))
    compiled = function(inputs, output)(*values)
    np.testing.assert_allclose(evaluated, expected, rtol=1e-12, atol=0)
    np.testing.assert_allclose(compiled, expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("length", [0, 1])
def test_edge_lengths(length: int) -> None:
    a, x = pt.vector("a"), pt.vector("x")
    outputs = [special.betainc(a, a, x), special.jv(a, x), special.gammaincinv(a, x), special.owens_t(a, x)]
    values = (np.full(length, 2.0), np.full(length, 0.25))
    compiled = function([a, x], outputs)(*values)
    expected = [sc.betainc(values[0], values[0], values[1]), sc.jv(*values), sc.gammaincinv(*values),
                sc.owens_t(*values)]
    for got, want in zip(compiled, expected):
        assert got.shape == (length,)
        np.testing.assert_allclose(got, want, rtol=1e-13)


def test_float32_keeps_scipy_dtypes() -> None:
    v, x = pt.vector("v", dtype="float32"), pt.vector("x", dtype="float32")
    outputs = [special.jv(v, x), special.kv(v, x), special.gamma(x), special.betainc(v, v, x / 4),
               special.owens_t(v, x), special.gammaincinv(v, x / 4), special.j0(x)]
    values = (np.array([0.5, 2.0], dtype=np.float32), np.array([1.5, 3.0], dtype=np.float32))
    expected = [sc.jv(*values), sc.kv(*values), sc.gamma(values[1]),
                sc.betainc(values[0], values[0], values[1] / 4), sc.owens_t(*values),
                sc.gammaincinv(values[0], values[1] / 4), sc.j0(values[1])]
    for got, want in zip(function([v, x], outputs)(*values), expected):
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


GRADIENTS: list[tuple[str, Callable[..., Variable], tuple[Array, ...]]] = [
    ("gamma", special.gamma, (np.array([-2.5, 0.5, 3.0, 6.0]),)),
    ("beta", special.beta, (POSITIVE, POSITIVE[::-1].copy())),
    ("poch", special.poch, (np.array([0.3, 1.0, 2.5, 7.0]), np.array([0.5, -0.2, 2.0, 1.0]))),
    ("factorial", special.factorial, (np.array([0.5, 2.0, 4.5]),)),
    ("multigammaln", lambda a: special.multigammaln(a, 4), (np.array([2.0, 5.0, 20.0]),)),
    ("betainc", special.betainc, (np.array([0.5, 2.0, 30.0, 3.0]), np.array([0.7, 3.0, 5.0, 200.0]),
                                  np.array([0.3, 0.5, 0.9, 0.01]))),
    ("gammaincinv", special.gammaincinv, (np.array([0.5, 2.0, 30.0]), np.array([0.3, 0.7, 0.05]))),
    ("ndtr", special.ndtr, (np.array([-5.0, 0.0, 2.0]),)),
    ("ndtri", special.ndtri, (np.array([0.01, 0.5, 0.9]),)),
    ("log_ndtr", special.log_ndtr, (np.array([-30.0, -1.5, -0.5, 0.0, 3.0]),)),
    ("hurwitz zeta in q", lambda q: special.zeta(3.0, q), (np.array([0.5, 1.0, 4.0]),)),
    ("owens_t", special.owens_t, (np.array([-1.0, 0.5, 2.0]), np.array([0.3, -2.0, 5.0]))),
    ("jv in x", lambda x: special.jv(2.5, x), (np.array([0.5, 3.0, 40.0]),)),
    ("j0", special.j0, (np.array([0.5, 3.0, 40.0]),)),
    ("j1", special.j1, (np.array([0.5, 3.0, 40.0]),)),
    ("kv in x", lambda x: special.kv(1.5, x), (np.array([0.5, 3.0, 40.0]),)),
    ("kve in x", lambda x: special.kve(0.3, x), (np.array([0.5, 3.0, 40.0]),)),
    ("iv in x", lambda x: special.iv(2.0, x), (np.array([-2.0, 0.5, 3.0]),)),
]


@pytest.mark.parametrize("build, values", [c[1:] for c in GRADIENTS], ids=[c[0] for c in GRADIENTS])
def test_derivatives_match_finite_differences(build: Callable[..., Variable], values: tuple[Array, ...]) -> None:
    check_pullback(build, values, rtol=1e-6, atol=1e-7)
    check_pushforward(build, values, rtol=1e-6, atol=1e-7)


def test_betainc_derivatives_in_a_and_b_compiled_match_mpmath() -> None:
    """mpmath.diff of the regularized incomplete beta (40 digits)."""
    a, b, x = pt.vector("a"), pt.vector("b"), pt.vector("x")
    cost = pt.sum(special.betainc(a, b, x))
    gradients = pt.grad(cost, [a, b])
    values = (np.array([2.0, 0.5]), np.array([3.0, 4.0]), np.array([0.4, 0.8]))
    expected = [[-0.2408693760875565718, -0.0015171738462614725368],
                [0.15634433641359877544, 0.00082249276500698477495]]
    for got in (function([a, b, x], gradients)(*values), evaluate(gradients, dict(zip((a, b, x), values)))):
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)


@pytest.mark.parametrize(
    "build, name",
    [(special.jv, "jv: the derivative in the order v"), (special.kv, "kv: the derivative in the order v"),
     (special.kve, "kve: the derivative in the order v"), (special.iv, "ive: the derivative in the order v"),
     (lambda v, x: special.zeta(v, x), "zeta: the derivative in x")],
    ids=["jv", "kv", "kve", "iv", "zeta"],
)
def test_derivatives_in_orders_raise_naming_them(build: Callable[..., Variable], name: str) -> None:
    v, x = pt.vector("v"), pt.vector("x")
    cost = pt.sum(build(v, x))
    with pytest.raises(NotImplementedError, match=name):
        pt.grad(cost, v)
    with pytest.raises(NotImplementedError, match=name):
        pt.jvp([build(v, x)], [v], [pt.ones_like(v)])
    # the other argument differentiates while the order is a variable too
    (derivative,) = evaluate([pt.grad(cost, x)], {v: np.array([1.0]), x: np.array([2.0])})
    assert np.isfinite(derivative).all()


def test_riemann_zeta_derivative_raises() -> None:
    s = pt.scalar("s")
    with pytest.raises(NotImplementedError, match="zeta: the derivative in x is not implemented"):
        pt.grad(special.zeta(s), s)


def test_multigammaln_needs_an_int_dimension() -> None:
    with pytest.raises(TypeError, match="multigammaln: d must be a Python int >= 1, got 2.5"):
        special.multigammaln(pt.vector("a"), 2.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got 0"):
        special.multigammaln(pt.vector("a"), 0)


def test_bad_input_names_the_variable() -> None:
    with pytest.raises(TypeError, match="ndtr x"):
        special.ndtr("a string")  # type: ignore[arg-type]


X = RNG.normal(size=(3, 4)) * 10
B = RNG.uniform(-1, 2, size=(3, 4))


@pytest.mark.parametrize(
    "kwargs", [{}, {"axis": 0}, {"axis": 1, "keepdims": True}, {"b": B}, {"axis": 1, "b": B[0]},
               {"axis": (0, 1), "b": np.abs(B)}],
    ids=["all", "axis 0", "keepdims", "b", "b broadcast", "axes tuple"],
)
def test_logsumexp_has_scipys_signature(kwargs: dict[str, Any]) -> None:
    x = pt.matrix("x")
    with np.errstate(invalid="ignore"):
        expected = sc.logsumexp(X, **kwargs)
    output = special.logsumexp(x, **kwargs)
    (evaluated,) = evaluate([output], {x: X})
    np.testing.assert_allclose(evaluated, expected, rtol=1e-13)
    np.testing.assert_allclose(function([x], output)(X), expected, rtol=1e-13)


def test_logsumexp_return_sign_and_zero_weights() -> None:
    x = pt.vector("x")
    values, weights = np.array([1.0, 2.0, np.inf]), np.array([1.0, -3.0, 0.0])
    result, sign = special.logsumexp(x, b=weights, return_sign=True)
    want_result, want_sign = sc.logsumexp(values, b=weights, return_sign=True)
    got_result, got_sign = function([x], [result, sign])(values)
    np.testing.assert_allclose(got_result, want_result, rtol=1e-14)
    assert got_sign == want_sign
    check_pullback(lambda v: special.logsumexp(v, b=np.abs(weights[:2])), (values[:2],), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_softmax_defaults_to_all_axes_as_scipy(name: str, axis: Any) -> None:
    x = pt.matrix("x")
    output = getattr(special, name)(x, axis=axis) if axis is not None else getattr(special, name)(x)
    expected = getattr(sc, name)(X, axis=axis)
    np.testing.assert_allclose(function([x], output)(X), expected, rtol=1e-13)


def test_names_in_the_special_namespace() -> None:
    for name in ["betainc", "gammaincinv", "ndtr", "ndtri", "log_ndtr", "multigammaln", "gamma", "beta",
                 "factorial", "poch", "kv", "kve", "iv", "jv", "j0", "j1", "zeta", "owens_t", "erf",
                 "erfc", "logsumexp", "softmax", "log_softmax"]:
        assert name in special.__all__ and getattr(pt.special, name).__doc__
    assert pt.special.erf is pt.erf
