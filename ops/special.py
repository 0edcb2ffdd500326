"""Special functions of `scipy.special` that statistical models need, as elementwise ops
(they fuse with their neighbours like any scalar op) with their derivatives.

The reference implementations are SciPy's; the compiled ones are numba functions
written for fgraph (`numba_backend/special_functions.py`, accuracy bounds stated and
tested there). Functions that are short formulas over existing ops (`xlogy`,
`xlog1py`, `logit`, `log_sigmoid`, `softsign`, and `expit`, which is `sigmoid`) are
written as those formulas, so they need no kernel of their own and differentiate
through their parts.

Orders (`polygamma`'s n, `ive`'s v) are not differentiated: their partial is None
(zero), as for any integer input; an order is a constant in the models these serve.
"""

from __future__ import annotations

import math
from typing import ClassVar

import attrs
import numpy as np
from fgraph import Variable
from fgraph.op import Array
from fgraph.operators import TensorLike
from ops import elemwise as ew
from ops.convert import as_tensor
from ops.scalar import Partials, ScalarOp
from ops.elemwise import sigmoid as expit  # one op for the logistic function

__all__ = [
    "betaln", "digamma", "erfcinv", "erfcx", "erfinv", "expit", "gammainc", "gammaincc",
    "gammaln", "i0", "i1", "ive", "log1mexp", "log_sigmoid", "logit", "polygamma", "psi",
    "softsign", "xlog1py", "xlogy",
]

log1mexp = ew.log1mexp


class _SciPyOp(ScalarOp):
    """A scalar op whose reference is the `scipy.special` function `scipy_name`
    (imported when first used: `scipy.special` costs every `import ops` 40 ms)."""

    __slots__ = ()
    scipy_name: ClassVar[str]

    def impl(self, *inputs: Array) -> Array:
        import scipy.special

        return np.asarray(getattr(scipy.special, self.scipy_name)(*inputs))


@attrs.frozen
class GammaLn(_SciPyOp):
    """log|Gamma(x)|."""

    nin = 1
    scipy_name = "gammaln"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (digamma(inputs[0]),)


@attrs.frozen
class Digamma(_SciPyOp):
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
        import scipy.special

        return np.asarray(scipy.special.polygamma(*inputs))

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        n, x = inputs
        return (None, polygamma(n + 1, x))


def _gammainc_density(a: Variable, x: Variable) -> Variable:
    """d P(a, x) / dx = x^(a-1) e^-x / Gamma(a), through logs (no overflow)."""
    return ew.exp((a - 1) * ew.log(x) - x - gammaln(a))


@attrs.frozen
class GammaInc(_SciPyOp):
    """The regularized lower incomplete gamma function P(a, x)."""

    nin = 2
    scipy_name = "gammainc"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        a, x = inputs
        return (ew.elemwise(GammaIncDerA(), a, x), _gammainc_density(a, x))


@attrs.frozen
class GammaIncC(_SciPyOp):
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
    import scipy.special

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
class BetaLn(_SciPyOp):
    """log|B(a, b)| = log|Gamma(a) Gamma(b) / Gamma(a + b)|."""

    nin = 2
    scipy_name = "betaln"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        a, b = inputs
        both = digamma(a + b)
        return (digamma(a) - both, digamma(b) - both)


@attrs.frozen
class ErfInv(_SciPyOp):
    """The inverse of erf on (-1, 1)."""

    nin = 1
    scipy_name = "erfinv"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return ((math.sqrt(math.pi) / 2) * ew.exp(ew.square(output)),)


@attrs.frozen
class ErfcInv(_SciPyOp):
    """The inverse of erfc on (0, 2)."""

    nin = 1
    scipy_name = "erfcinv"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return ((-math.sqrt(math.pi) / 2) * ew.exp(ew.square(output)),)


@attrs.frozen
class Erfcx(_SciPyOp):
    """The scaled complementary error function exp(x^2) erfc(x)."""

    nin = 1
    scipy_name = "erfcx"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (2 * inputs[0] * output - 2 / math.sqrt(math.pi),)


@attrs.frozen
class I0(_SciPyOp):
    """The modified Bessel function of the first kind, order 0."""

    nin = 1
    scipy_name = "i0"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        return (i1(inputs[0]),)


@attrs.frozen
class I1(_SciPyOp):
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
class Ive(_SciPyOp):
    """The exponentially scaled modified Bessel function I_v(x) e^-|x| of real order."""

    nin = 2
    scipy_name = "ive"

    def partials(self, inputs: tuple[Variable, ...], output: Variable) -> Partials:
        v, x = inputs
        neighbours = (ive(v - 1, x) + ive(v + 1, x)) / 2
        return (None, neighbours - ew.sign(x) * output)


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

