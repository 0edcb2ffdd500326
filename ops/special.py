"""Special functions of `scipy.special` that statistical models need, as elementwise ops
(they fuse with their neighbours like any scalar op) with their derivatives.

The reference implementations are SciPy's; the compiled ones are numba functions
written for fgraph (`numba_backend/special_functions.py`, accuracy bounds stated and
tested there), called by the expressions in `numba_backend/special.py`, which the
`Elemwise` kernel inlines. Functions that are short formulas over existing ops (`xlogy`,
`xlog1py`, `logit`, `log_sigmoid`, `softsign`, and `expit`, which is `sigmoid`) are
written as those formulas, so they need no kernel of their own and differentiate
through their parts.

`polygamma`'s integer order n is not differentiated (its partial is None, zero, as for
any integer input). The real orders of the Bessel functions (`ive`, `iv`, `jv`, `kv`,
`kve`) and the argument of `zeta` have derivatives that are not implemented:
differentiating along them raises, naming them (`ops.undefined_gradient`); in the other
arguments they differentiate as usual.

Formulas over these ops (`ndtr`, `ndtri`, `log_ndtr`, `beta`, `poch`, `factorial`,
`multigammaln`, `iv`, `j0`, `j1`, and `logsumexp`, `softmax`, `log_softmax` with
SciPy's signatures) need no kernel of their own.
"""

from __future__ import annotations

import math
from typing import Literal, overload

import attrs
import numpy as np
from fgraph import Variable
from fgraph.op import Array
from fgraph.operators import Axis, TensorLike
import ops.elementwise_functions as ew
from ops.convert import as_tensor
from ops.gradient_control import stop_gradient
from ops.scalar_ops import Partials, ScalarOp
from ops.elementwise_functions import erf, erfc
from ops.elementwise_functions import sigmoid as expit  # one op for the logistic function
from ops.reduction import Sum, finite_max_shift, keep_dims, normalize_axes, restore_axes
from ops.reduction import log_softmax as _log_softmax
from ops.reduction import logsumexp as _logsumexp
from ops.reduction import softmax as _softmax
from ops.special_bessel import SciPyOp, j0, j1, jv, kv, kve, order_not_differentiable
from ops.undefined_gradient import undefined_gradient
from ops import betainc_derivative

__all__ = [
    "beta", "betainc", "betaln", "digamma", "erf", "erfc", "erfcinv", "erfcx", "erfinv",
    "expit", "factorial", "gamma", "gammainc", "gammaincc", "gammaincinv", "gammaln", "i0",
    "i1", "iv", "ive", "j0", "j1", "jv", "kv", "kve", "log1mexp", "log_ndtr", "log_sigmoid",
    "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri", "owens_t", "poch",
    "polygamma", "psi", "softmax", "softsign", "xlog1py", "xlogy", "zeta",
]

log1mexp = ew.log1mexp


@attrs.frozen
class GammaLn(SciPyOp):
    """log|Gamma(x)|."""

    nin = 1
    scipy_name = "gammaln"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (digamma(inputs[0]),)


@attrs.frozen
class Digamma(SciPyOp):
    """psi(x), the derivative of log Gamma."""

    nin = 1
    scipy_name = "digamma"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (polygamma(1, inputs[0]),)


@attrs.frozen
class PolyGamma(ScalarOp):
    """psi^(n)(x), the n-th derivative of digamma (n a non-negative integer)."""

    nin = 2

    def impl(self, *inputs: Array) -> Array:
        import scipy.special  # here, not at import: it would slow every `import ops`

        return np.asarray(scipy.special.polygamma(*inputs))

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        n, x = inputs
        return (None, polygamma(n + 1, x))


def _gammainc_density(a: Variable, x: Variable) -> Variable:
    """d P(a, x) / dx = x^(a-1) e^-x / Gamma(a), through logs (no overflow)."""
    return ew.exp((a - 1) * ew.log(x) - x - gammaln(a))


@attrs.frozen
class GammaInc(SciPyOp):
    """The regularized lower incomplete gamma function P(a, x)."""

    nin = 2
    scipy_name = "gammainc"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        a, x = inputs
        return (ew.elemwise(GammaIncDerA(), a, x), _gammainc_density(a, x))


@attrs.frozen
class GammaIncC(SciPyOp):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""

    nin = 2
    scipy_name = "gammaincc"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        a, x = inputs
        return (-ew.elemwise(GammaIncDerA(), a, x), -_gammainc_density(a, x))


@attrs.frozen
class GammaIncDerA(ScalarOp):
    """d P(a, x) / da, which has no closed form: the series
    sum over k of t_k (log x - psi(a + k + 1)), t_k = x^(a+k) e^-x / Gamma(a + k + 1)
    (the derivative of P's power series term by term). Not differentiable itself:
    third derivatives of the incomplete gamma in `a` are not provided."""

    nin = 2

    def impl(self, *inputs: Array) -> Array:
        a, x = np.broadcast_arrays(*inputs)
        values = [_gammainc_der_a(float(p), float(q)) for p, q in zip(a.ravel(), x.ravel())]
        dtype = np.result_type(a.dtype, x.dtype, np.float16)
        return np.asarray(values, dtype=np.float64).reshape(a.shape).astype(dtype)


def _gammainc_der_a(a: float, x: float) -> float:
    """The series of `GammaIncDerA` for one pair (the compiled version is
    `numba_backend.special_functions.gammainc_der_a`)."""
    if math.isnan(a) or math.isnan(x) or a <= 0 or x < 0:
        return math.nan
    if x == 0 or x == math.inf:
        return 0.0
    log_x = math.log(x)
    log_term = a * log_x - x - math.lgamma(a + 1)
    import scipy.special  # here, not at import: it would slow every `import ops`

    psi = float(scipy.special.digamma(a + 1))
    total, k = 0.0, 0
    while k < 50 + 2 * x + 10 * math.sqrt(x):
        contribution = math.exp(log_term) * (log_x - psi)
        total += contribution
        if k > x and abs(contribution) < 1e-17 * abs(total):
            break
        psi += 1 / (a + k + 1)
        log_term += log_x - math.log(a + k + 1)
        k += 1
    return total


@attrs.frozen
class BetaLn(SciPyOp):
    """log|B(a, b)| = log|Gamma(a) Gamma(b) / Gamma(a + b)|."""

    nin = 2
    scipy_name = "betaln"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        a, b = inputs
        both = digamma(a + b)
        return (digamma(a) - both, digamma(b) - both)


@attrs.frozen
class ErfInv(SciPyOp):
    """The inverse of erf on (-1, 1)."""

    nin = 1
    scipy_name = "erfinv"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return ((math.sqrt(math.pi) / 2) * ew.exp(ew.square(output)),)


@attrs.frozen
class ErfcInv(SciPyOp):
    """The inverse of erfc on (0, 2)."""

    nin = 1
    scipy_name = "erfcinv"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return ((-math.sqrt(math.pi) / 2) * ew.exp(ew.square(output)),)


@attrs.frozen
class Erfcx(SciPyOp):
    """The scaled complementary error function exp(x^2) erfc(x)."""

    nin = 1
    scipy_name = "erfcx"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (2 * inputs[0] * output - 2 / math.sqrt(math.pi),)


@attrs.frozen
class I0(SciPyOp):
    """The modified Bessel function of the first kind, order 0."""

    nin = 1
    scipy_name = "i0"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (i1(inputs[0]),)


@attrs.frozen
class I1(SciPyOp):
    """The modified Bessel function of the first kind, order 1."""

    nin = 1
    scipy_name = "i1"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        # I1' = I0 - I1 / x, whose limit at 0 is 1/2.
        (x,) = inputs
        at_zero = ew.eq(x, 0)
        safe = ew.where(at_zero, 1, x)
        return (ew.where(at_zero, 0.5, i0(x) - output / safe),)


@attrs.frozen
class Ive(SciPyOp):
    """The exponentially scaled modified Bessel function I_v(x) e^-|x| of real order."""

    nin = 2
    scipy_name = "ive"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        v, x = inputs
        neighbours = (ive(v - 1, x) + ive(v + 1, x)) / 2
        return (order_not_differentiable("ive", v), neighbours - ew.sign(x) * output)


def gammaln(x: TensorLike) -> Variable:
    """log|Gamma(x)| (`scipy.special.gammaln`; +inf at the poles 0, -1, -2, ...)."""
    return ew.elemwise(GammaLn(), x)


def digamma(x: TensorLike) -> Variable:
    """psi(x) = d/dx log Gamma(x) (`scipy.special.digamma`)."""
    return ew.elemwise(Digamma(), x)


psi = digamma


def polygamma(n: TensorLike, x: TensorLike) -> Variable:
    """The n-th derivative of digamma (`scipy.special.polygamma`; n = 0 is digamma)."""
    order = as_tensor(n, name="polygamma n")
    if order.dtype.startswith(("float", "complex")):
        raise TypeError(f"polygamma: the order n must be an integer, got {order.type}")
    return ew.elemwise(PolyGamma(), order, x)


def gammainc(a: TensorLike, x: TensorLike) -> Variable:
    """The regularized lower incomplete gamma P(a, x) (`scipy.special.gammainc`)."""
    return ew.elemwise(GammaInc(), a, x)


def gammaincc(a: TensorLike, x: TensorLike) -> Variable:
    """The regularized upper incomplete gamma Q(a, x) (`scipy.special.gammaincc`)."""
    return ew.elemwise(GammaIncC(), a, x)


def betaln(a: TensorLike, b: TensorLike) -> Variable:
    """log|B(a, b)| (`scipy.special.betaln`), accurate for large arguments."""
    return ew.elemwise(BetaLn(), a, b)


def erfinv(x: TensorLike) -> Variable:
    """The inverse error function (`scipy.special.erfinv`)."""
    return ew.elemwise(ErfInv(), x)


def erfcinv(x: TensorLike) -> Variable:
    """The inverse complementary error function (`scipy.special.erfcinv`)."""
    return ew.elemwise(ErfcInv(), x)


def erfcx(x: TensorLike) -> Variable:
    """exp(x^2) erfc(x) (`scipy.special.erfcx`), finite where erfc underflows."""
    return ew.elemwise(Erfcx(), x)


def i0(x: TensorLike) -> Variable:
    """The modified Bessel function I_0 (`scipy.special.i0`)."""
    return ew.elemwise(I0(), x)


def i1(x: TensorLike) -> Variable:
    """The modified Bessel function I_1 (`scipy.special.i1`)."""
    return ew.elemwise(I1(), x)


def ive(v: TensorLike, x: TensorLike) -> Variable:
    """I_v(x) e^-|x| for real order v (`scipy.special.ive`)."""
    return ew.elemwise(Ive(), v, x)


def xlogy(x: TensorLike, y: TensorLike) -> Variable:
    """x log(y), 0 where x == 0 even at y == 0 (`scipy.special.xlogy`); log's argument
    is made safe there, so derivatives stay finite too."""
    x_value, y_value = as_tensor(x, name="xlogy x"), as_tensor(y, name="xlogy y")
    zero = ew.eq(x_value, 0)
    return ew.where(zero, 0, x_value * ew.log(ew.where(zero, 1, y_value)))


def xlog1py(x: TensorLike, y: TensorLike) -> Variable:
    """x log(1 + y), 0 where x == 0 (`scipy.special.xlog1py`)."""
    x_value, y_value = as_tensor(x, name="xlog1py x"), as_tensor(y, name="xlog1py y")
    zero = ew.eq(x_value, 0)
    return ew.where(zero, 0, x_value * ew.log1p(ew.where(zero, 0, y_value)))


def logit(x: TensorLike) -> Variable:
    """log(x / (1 - x)) (`scipy.special.logit`), as log(x) - log1p(-x), accurate near 0."""
    value = as_tensor(x, name="logit x")
    return ew.log(value) - ew.log1p(-value)


def log_sigmoid(x: TensorLike) -> Variable:
    """log(expit(x)) = -softplus(-x), without overflow (`scipy.special.log_expit`)."""
    return -ew.softplus(-as_tensor(x, name="log_sigmoid x"))


def softsign(x: TensorLike) -> Variable:
    """x / (1 + |x|)."""
    value = as_tensor(x, name="softsign x")
    return value / (1 + ew.abs(value))



# --- gamma and beta ----------------------------------------------------------------------
@attrs.frozen
class Gamma(SciPyOp):
    """Gamma(x)."""

    nin = 1
    scipy_name = "gamma"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (output * digamma(inputs[0]),)


def gamma(x: TensorLike) -> Variable:
    """Gamma(x) (`scipy.special.gamma`: +-inf at +-0, nan at the negative integers)."""
    return ew.elemwise(Gamma(), x)


def _gamma_sign(x: Variable) -> Variable:
    """The sign of Gamma(x): 1 for x > 0, else (-1)^floor(x); 1 at the poles (SciPy's
    +inf for poch(1, -2))."""
    down = ew.floor(x)
    positive = ew.logical_or(ew.gt(x, 0), ew.eq(down, x))
    return ew.where(ew.logical_or(positive, ew.eq(ew.mod(down, 2), 0)), 1.0, -1.0)


def beta(a: TensorLike, b: TensorLike) -> Variable:
    """B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b) (`scipy.special.beta`), as
    exp(betaln(a, b)) with the signs of the three gammas, so large arguments do not
    overflow where the result does not."""
    a_value, b_value = as_tensor(a, name="beta a"), as_tensor(b, name="beta b")
    sign = _gamma_sign(a_value) * _gamma_sign(b_value) * _gamma_sign(a_value + b_value)
    return sign * ew.exp(betaln(a_value, b_value))


def poch(z: TensorLike, m: TensorLike) -> Variable:
    """The rising factorial Gamma(z + m) / Gamma(z) (`scipy.special.poch`), through
    gammaln and the gammas' signs. At a pole of Gamma(z) (z = 0, -1, -2, ...) it is nan
    where SciPy gives the finite product z (z + 1) ... (z + m - 1)."""
    z_value, m_value = as_tensor(z, name="poch z"), as_tensor(m, name="poch m")
    total = z_value + m_value
    sign = _gamma_sign(total) * _gamma_sign(z_value)
    return sign * ew.exp(gammaln(total) - gammaln(z_value))


def factorial(n: TensorLike) -> Variable:
    """n! = Gamma(n + 1) for real n, 0 for n < 0 (`scipy.special.factorial` with
    exact=False); a float result for integer n too."""
    value = as_tensor(n, name="factorial n")
    negative = ew.lt(value, 0)
    safe = ew.where(negative, 0, value)  # no pole in the branch not taken (nor its derivative)
    return ew.where(negative, 0.0, gamma(safe + 1.0))


def multigammaln(a: TensorLike, d: int) -> Variable:
    """The log of the multivariate gamma function of dimension `d` (a Python int >= 1):
    d (d - 1) / 4 log(pi) + sum over j < d of gammaln(a - j / 2)
    (`scipy.special.multigammaln`; SciPy raises where a <= (d - 1) / 2, this gives the
    formula's value, which is inf or nan at the poles)."""
    given: object = d  # checked as any object: callers without mypy pass floats
    if isinstance(given, bool) or not isinstance(given, (int, np.integer)) or given < 1:
        raise TypeError(f"multigammaln: d must be a Python int >= 1, got {d!r}")
    value = as_tensor(a, name="multigammaln a")
    total = gammaln(value)
    for j in range(1, int(d)):
        total = total + gammaln(value - j / 2)
    return total + d * (d - 1) / 4 * math.log(math.pi)


@attrs.frozen
class Zeta(SciPyOp):
    """The Riemann zeta function zeta(s)."""

    nin = 1
    scipy_name = "zeta"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (undefined_gradient(inputs[0], "zeta: the derivative in x is not implemented"),)


@attrs.frozen
class HurwitzZeta(SciPyOp):
    """The Hurwitz zeta function zeta(s, q) = sum over k >= 0 of (k + q)^-s."""

    nin = 2
    scipy_name = "zeta"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        s, q = inputs
        missing = undefined_gradient(s, "zeta: the derivative in x is not implemented")
        return (missing, -s * zeta(s + 1, q))


def zeta(x: TensorLike, q: TensorLike | None = None) -> Variable:
    """Riemann's zeta(x) without q, Hurwitz's zeta(x, q) with it (`scipy.special.zeta`:
    inf at x = 1; the Hurwitz form is nan for x < 1). Differentiable in q only."""
    if q is None:
        return ew.elemwise(Zeta(), x)
    return ew.elemwise(HurwitzZeta(), x, q)


def iv(v: TensorLike, x: TensorLike) -> Variable:
    """I_v(x) for real order v (`scipy.special.iv`), as ive(v, x) e^|x|.
    Differentiable in x only."""
    value = as_tensor(x, name="iv x")
    return ive(v, value) * ew.exp(ew.abs(value))


# --- distributions -----------------------------------------------------------------------
@attrs.frozen
class BetaInc(SciPyOp):
    """The regularized incomplete beta function I_x(a, b)."""

    nin = 3
    scipy_name = "betainc"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        a, b, x = inputs
        density = ew.exp((a - 1) * ew.log(x) + (b - 1) * ew.log1p(-x) - betaln(a, b))
        return (ew.elemwise(BetaIncDer(True), a, b, x), ew.elemwise(BetaIncDer(False), a, b, x),
                density)


@attrs.frozen
class BetaIncDer(ScalarOp):
    """d I_x(a, b) / da (`wrt_a`) or / db: the continued fraction of
    `ops.betainc_derivative`. Not differentiable itself (third derivatives of the
    incomplete beta in a and b are not provided)."""

    wrt_a: bool
    nin = 3

    def impl(self, *inputs: Array) -> Array:
        import scipy.special as sc  # here, not at import: it would slow every `import ops`

        a, b, x = np.broadcast_arrays(*inputs)
        values = [
            betainc_derivative.betainc_der(
                float(p), float(q), float(y), self.wrt_a, float(sc.betaln(p, q)),
                float(sc.digamma(p)), float(sc.digamma(q)), float(sc.digamma(p + q)))
            for p, q, y in zip(a.ravel(), b.ravel(), x.ravel())
        ]
        dtype = np.result_type(a.dtype, b.dtype, x.dtype, np.float16)
        return np.asarray(values, dtype=np.float64).reshape(a.shape).astype(dtype)


def betainc(a: TensorLike, b: TensorLike, x: TensorLike) -> Variable:
    """The regularized incomplete beta function I_x(a, b) (`scipy.special.betainc`),
    differentiable in a, b (a continued fraction, as PyTensor) and x."""
    return ew.elemwise(BetaInc(), a, b, x)


@attrs.frozen
class GammaIncInv(SciPyOp):
    """The x with P(a, x) = y: the inverse of the regularized lower incomplete gamma."""

    nin = 2
    scipy_name = "gammaincinv"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        a, _ = inputs
        # dx/dy = 1 / P's density at x; dx/da = -(dP/da) / density (implicit function).
        inverse_density = ew.exp(output - (a - 1) * ew.log(output) + gammaln(a))
        return (-ew.elemwise(GammaIncDerA(), a, output) * inverse_density, inverse_density)


def gammaincinv(a: TensorLike, y: TensorLike) -> Variable:
    """The inverse of the regularized lower incomplete gamma in x
    (`scipy.special.gammaincinv`: 0 at y = 0, inf at y = 1), differentiable in a and y."""
    return ew.elemwise(GammaIncInv(), a, y)


def ndtr(x: TensorLike) -> Variable:
    """The standard normal CDF (`scipy.special.ndtr`), as erfc(-x / sqrt 2) / 2, which
    keeps its relative accuracy in the lower tail."""
    return 0.5 * ew.erfc(as_tensor(x, name="ndtr x") * -math.sqrt(0.5))


def ndtri(p: TensorLike) -> Variable:
    """The inverse of `ndtr` (`scipy.special.ndtri`), as -sqrt 2 erfcinv(2 p)."""
    return -math.sqrt(2) * erfcinv(2 * as_tensor(p, name="ndtri p"))


def log_ndtr(x: TensorLike) -> Variable:
    """log of the standard normal CDF (`scipy.special.log_ndtr`), finite deep in the
    lower tail: log(erfcx(-x / sqrt 2) / 2) - x^2 / 2 below x = -1, log1p(-ndtr(-x))
    above. Each branch reads x only where it is taken (so neither its value nor its
    derivative overflows where it is not)."""
    value = as_tensor(x, name="log_ndtr x")
    lower = ew.lt(value, -1)
    low = ew.where(lower, value, -1.0)
    high = ew.where(lower, -1.0, value)
    tail = ew.log(0.5 * erfcx(low * -math.sqrt(0.5))) - 0.5 * ew.square(low)
    return ew.where(lower, tail, ew.log1p(-0.5 * ew.erfc(high * math.sqrt(0.5))))


@attrs.frozen
class OwensT(SciPyOp):
    """Owen's T function T(h, a) = (1 / 2 pi) integral over [0, a] of
    exp(-h^2 (1 + t^2) / 2) / (1 + t^2) dt."""

    nin = 2
    scipy_name = "owens_t"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        h, a = inputs
        half_square = 0.5 * ew.square(h)
        d_h = -ew.exp(-half_square) * ew.erf(a * h * math.sqrt(0.5)) / (2 * math.sqrt(2 * math.pi))
        one_plus = 1 + ew.square(a)
        d_a = ew.exp(-half_square * one_plus) / (2 * math.pi * one_plus)
        return (d_h, d_a)


def owens_t(h: TensorLike, a: TensorLike) -> Variable:
    """Owen's T function (`scipy.special.owens_t`), differentiable in h and a."""
    return ew.elemwise(OwensT(), h, a)


# --- SciPy's signatures of the reductions -------------------------------------------------
@overload
def logsumexp(a: TensorLike, axis: Axis = None, b: TensorLike | None = None,
              keepdims: bool = False, return_sign: Literal[False] = False) -> Variable: ...


@overload
def logsumexp(a: TensorLike, axis: Axis = None, b: TensorLike | None = None,
              keepdims: bool = False, *, return_sign: Literal[True]) -> tuple[Variable, Variable]: ...


def logsumexp(a: TensorLike, axis: Axis = None, b: TensorLike | None = None,
              keepdims: bool = False, return_sign: bool = False) -> Variable | tuple[Variable, Variable]:
    """log(sum(b * exp(a))) over `axis` (all by default), as `scipy.special.logsumexp`:
    the maximum is shifted out; elements with b == 0 do not count (even infinite ones).
    A negative sum gives nan unless `return_sign`, which returns (log|sum|, its sign)."""
    if b is None and not return_sign:
        return _logsumexp(a, axis=axis, keepdims=keepdims)
    value = as_tensor(a, name="logsumexp a")
    if not value.dtype.startswith(("float", "complex")):
        value = ew.cast(value, "float64")
    weight = as_tensor(1.0 if b is None else b, name="logsumexp b")
    value = ew.where(ew.eq(weight, 0), -np.inf, value)
    axes = normalize_axes(axis, value.ndim, "logsumexp")
    shift = finite_max_shift(value, axes)
    total = Sum(axes)(weight * ew.exp(value - restore_axes(shift, axes, value.ndim)))
    result = keep_dims(value, ew.log(ew.abs(total) if return_sign else total) + shift, axes,
                       keepdims)
    if return_sign:
        return result, keep_dims(value, ew.sign(total), axes, keepdims)
    return result


def softmax(x: TensorLike, axis: Axis = None) -> Variable:
    """exp(x) / sum(exp(x)) over `axis` (`scipy.special.softmax`: all axes by default,
    where `pt.softmax` takes the last)."""
    return _softmax(x, axis=axis)


def log_softmax(x: TensorLike, axis: Axis = None) -> Variable:
    """log(softmax(x)) over `axis` (`scipy.special.log_softmax`: all axes by default)."""
    return _log_softmax(x, axis=axis)
