"""Special functions for compiled code: numba has no `scipy.special`, so these are
written here as scalar float64 functions that element loops call and LLVM inlines.

The algorithms are the classical ones (Abramowitz & Stegun, Numerical Recipes,
DiDonato & Morris): recurrences into the range of an asymptotic expansion, power
series with all-positive terms, continued fractions, and Newton or Halley steps for
inverses. libm's `lgamma`, `erf` and `erfc` are used where they exist. Each function's
accuracy against SciPy is tested (`tests/numba_backend/test_special_functions.py`) to
the bound its docstring states, edges included (poles, zeros, infinities, nan).
"""

from __future__ import annotations

import math

import numpy as np

from numba_backend.bessel_functions import jv as jv
from numba_backend.bessel_functions import kv as kv
from numba_backend.bessel_functions import kve as kve
from numba_backend.library import library_function
from ops import betainc_derivative

_PI = math.pi
_SQRT_PI = math.sqrt(math.pi)
_LOG_2PI_HALF = 0.5 * math.log(2 * math.pi)
_BERNOULLI_OVER_2K = (  # B_2k / (2k), k = 1..8: the asymptotic series of digamma
    1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12, -3617 / 8160,
)
_ZETA_TERMS = (  # B_2j / (2j)!, j = 1..12: Euler-Maclaurin corrections of Hurwitz zeta
    1 / 6 / 2, -1 / 30 / 24, 1 / 42 / 720, -1 / 30 / 40320, 5 / 66 / 3628800,
    -691 / 2730 / 479001600, 7 / 6 / 87178291200, -3617 / 510 / 20922789888000,
    43867 / 798 / 6402373705728000, -174611 / 330 / 2432902008176640000,
    854513 / 138 / 1.1240007277776077e21, -236364091 / 2730 / 6.204484017332394e23,
)
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360)
"""Coefficients of the correction w(x) = lgamma(x) - Stirling's formula, in 1/x^(2k-1)."""


def _borwein_weights(n: int) -> tuple[float, ...]:
    """(d_k - d_n) / d_n, k = 0..n-1, of Borwein's alternating series for eta(s):
    d_k = n sum over i <= k of (n + i - 1)! 4^i / ((n - i)! (2i)!)."""
    d = [n * sum(math.factorial(n + i - 1) * 4**i / (math.factorial(n - i) * math.factorial(2 * i))
                 for i in range(k + 1)) for k in range(n + 1)]
    return tuple((d[k] - d[n]) / d[n] for k in range(n))


_BORWEIN = _borwein_weights(40)
"""Error below 3 / (3 + sqrt 8)^40 (1e-30) times |eta| for real s >= 0."""
_GAUSS_NODES, _GAUSS_WEIGHTS = (tuple(float(v) for v in part)
                                for part in np.polynomial.legendre.leggauss(40))
"""40-point Gauss-Legendre rule on [-1, 1], for Owen's T."""



@library_function
def gammaln(x: float) -> float:
    """log|Gamma(x)|: libm's lgamma (within a few ulps of SciPy; +inf at the poles, and
    SciPy's -inf at -inf)."""
    if x == -math.inf:
        return x
    return math.lgamma(x)


@library_function
def digamma(x: float) -> float:
    """psi(x) = d log Gamma / dx: reflection below 0, recurrence up to 10, then the
    asymptotic series. Relative error <= 1e-13, absolute <= 1e-15 near the positive
    root 1.4616...; -inf at 0, +inf at -0, nan at negative integers, as SciPy."""
    if math.isnan(x) or x == math.inf:
        return x
    if x == -math.inf:
        return math.nan
    if x == 0:
        return -math.inf if math.copysign(1.0, x) > 0 else math.inf
    shift = 0.0
    if x < 0:
        if x == math.floor(x):
            return math.nan
        # psi(x) = psi(1 - x) - pi / tan(pi x); tan has period 1, and x minus its
        # nearest integer is exact, where x - floor(x) would round near 1.
        reduced = x - math.floor(x + 0.5)
        shift = -_PI / math.tan(_PI * reduced)
        x = 1 - x
    while x < 10:
        shift -= 1 / x
        x += 1
    inverse_square = 1 / (x * x)
    series = 0.0
    for j in range(len(_BERNOULLI_OVER_2K) - 1, -1, -1):
        series = series * inverse_square + _BERNOULLI_OVER_2K[j]
    return shift + math.log(x) - 0.5 / x - series * inverse_square


@library_function
def hurwitz_zeta(s: float, q: float) -> float:
    """zeta(s, q) = sum over k >= 0 of (q + k)^-s for s > 1, by Euler-Maclaurin after
    summing until q + k > 9 (SciPy's conventions: inf at non-positive integer q)."""
    if q <= 0:
        if q == math.floor(q):
            return math.inf
        if s != math.floor(s):
            return math.nan
    total = 0.0
    k = 0
    a = q
    while k < 9 or a <= 9:
        total += math.pow(a, -s)
        k += 1
        a = q + k
    total += math.pow(a, 1 - s) / (s - 1) + 0.5 * math.pow(a, -s)
    factor = s * math.pow(a, -s - 1)  # s (s+1) ... (s+2j-2) a^(-s-2j+1) for j = 1
    for j in range(len(_ZETA_TERMS)):
        term = _ZETA_TERMS[j] * factor
        total += term
        if abs(term) < 1e-17 * abs(total):
            break
        factor *= (s + 2 * j + 1) * (s + 2 * j + 2) / (a * a)
    return total


@library_function
def polygamma(n: float, x: float) -> float:
    """psi^(n)(x): digamma for n = 0, else (-1)^(n+1) n! zeta(n + 1, x). Relative
    error <= 1e-12; nan for a negative or fractional order, as SciPy."""
    if n != math.floor(n) or n < 0 or math.isnan(n):
        return math.nan
    if n == 0:
        return digamma(x)
    sign = 1.0 if int(n) % 2 == 1 else -1.0
    return sign * math.exp(math.lgamma(n + 1)) * hurwitz_zeta(n + 1, x)


@library_function
def _log_prefactor(a: float, x: float) -> float:
    """log(x^a e^-x / Gamma(a)), the factor both incomplete-gamma expansions share."""
    return a * math.log(x) - x - math.lgamma(a)


@library_function
def _lower_series_sum(a: float, x: float) -> float:
    """P(a, x) / (x^a e^-x / Gamma(a)) by its power series (fast for x < a + 1)."""
    term = 1 / a
    total = term
    k = 1.0
    while abs(term) > 1e-17 * total:
        term *= x / (a + k)
        total += term
        k += 1
    return total


@library_function
def _lower_series(a: float, x: float) -> float:
    """P(a, x) by its power series (converges fast for x < a + 1)."""
    return _lower_series_sum(a, x) * math.exp(_log_prefactor(a, x))


@library_function
def _log_gammainc(a: float, x: float) -> float:
    """log P(a, x) for a, x > 0, finite where P underflows (the series in logs)."""
    if x < a + 1:
        return math.log(_lower_series_sum(a, x)) + _log_prefactor(a, x)
    return math.log1p(-_upper_fraction(a, x))


@library_function
def _upper_fraction(a: float, x: float) -> float:
    """Q(a, x) by Legendre's continued fraction, evaluated by modified Lentz (fast for
    x > a + 1)."""
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        if abs(d) < tiny:
            d = tiny
        c = b + an / c
        if abs(c) < tiny:
            c = tiny
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    return h * math.exp(_log_prefactor(a, x))


@library_function
def _incomplete_gamma(a: float, x: float, upper: bool) -> float:
    """Q(a, x) with `upper`, else P(a, x): the one of the two that is small is computed
    directly (P's series below x = a + 1, Q's continued fraction above), the other as
    one minus it. SciPy's nan for a < 0, x < 0 or a = x = 0."""
    if math.isnan(a) or math.isnan(x) or a < 0 or x < 0 or (a == 0 and x == 0):
        return math.nan
    if a == 0 or x == math.inf:
        lower = 1.0
    elif x == 0:
        lower = 0.0
    elif x < a + 1:
        lower = _lower_series(a, x)
        return 1 - lower if upper else lower
    else:
        complement = _upper_fraction(a, x)
        return complement if upper else 1 - complement
    return 1 - lower if upper else lower


@library_function
def gammainc(a: float, x: float) -> float:
    """The regularized lower incomplete gamma P(a, x). Relative error <= 1e-12 for
    a <= 1e3 where the value exceeds 1e-300 (the shared prefactor loses about
    a * 1e-16); SciPy's nan for a < 0, x < 0 or a = x = 0."""
    return _incomplete_gamma(a, x, False)


@library_function
def gammaincc(a: float, x: float) -> float:
    """The regularized upper incomplete gamma Q(a, x) = 1 - P(a, x), computed directly
    where it is small; bounds as `gammainc`."""
    return _incomplete_gamma(a, x, True)


@library_function
def gammainc_der_a(a: float, x: float) -> float:
    """d P(a, x) / da = sum over k of t_k (log x - psi(a + k + 1)), t_k the terms of
    P's series (x^(a+k) e^-x / Gamma(a + k + 1)); psi advances by its recurrence. The
    terms cancel where P is close to 1 (x well above a): relative error <= 1e-8 for
    x <= a + 10 sqrt(a) + 10, absolute <= 1e-12 beyond."""
    if math.isnan(a) or math.isnan(x) or a <= 0 or x < 0:
        return math.nan
    if x == 0 or x == math.inf:
        return 0.0
    log_x = math.log(x)
    log_term = a * log_x - x - math.lgamma(a + 1)
    psi = digamma(a + 1)
    total = 0.0
    k = 0
    limit = 50 + 2 * x + 10 * math.sqrt(x)
    while k < limit:
        term = math.exp(log_term)
        contribution = term * (log_x - psi)
        total += contribution
        if k > x and abs(contribution) < 1e-17 * abs(total):
            break
        psi += 1 / (a + k + 1)
        log_term += log_x - math.log(a + k + 1)
        k += 1
    return total


@library_function
def _stirling_correction(x: float) -> float:
    """w(x) = lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2), for x >= 10."""
    inverse = 1 / x
    inverse_square = inverse * inverse
    series = 0.0
    for j in range(len(_STIRLING) - 1, -1, -1):
        series = series * inverse_square + _STIRLING[j]
    return series * inverse


@library_function
def betaln(a: float, b: float) -> float:
    """log|B(a, b)|. Large arguments use Stirling's formula with the differences of logs
    written as log1p, where lgamma(a) + lgamma(b) - lgamma(a + b) would cancel;
    relative error <= 1e-13 (absolute near the zeros of the result)."""
    if a > b:
        a, b = b, a
    if a <= 0 or b < 10:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    total = a + b
    correction = _stirling_correction(b) - _stirling_correction(total)
    if a < 10:
        # lgamma(b) - lgamma(a + b) by Stirling, then lgamma(a) as it is.
        difference = -(b - 0.5) * math.log1p(a / b) - a * math.log(total) + a + correction
        return math.lgamma(a) + difference
    return (_LOG_2PI_HALF - 0.5 * math.log(b) + (a - 0.5) * math.log(a / total)
            + b * math.log1p(-a / total) + _stirling_correction(a) + correction)


@library_function
def erfcx(x: float) -> float:
    """exp(x^2) erfc(x): x^2 split exactly so exp's argument carries no rounding, and
    the asymptotic series above 25 where erfc underflows. Relative error <= 1e-13."""
    if math.isnan(x):
        return x
    if x < 0:
        if x < -26.7:
            return math.inf
        return 2 * _exp_square(-x) - erfcx(-x)
    if x < 25:
        return _exp_square(x) * math.erfc(x)
    inverse = 1 / (2 * x * x)
    term = 1.0
    total = 1.0
    k = 1
    while abs(term) > 1e-17:
        term *= -(2 * k - 1) * inverse
        total += term
        k += 1
    return total / (x * _SQRT_PI)


@library_function
def _exp_square(x: float) -> float:
    """exp(x^2) with x^2 = high + low exactly (Veltkamp's split), exp(high) (1 + low)."""
    high = x * x
    split = 134217729.0 * x
    head = split - (split - x)
    tail = x - head
    low = ((head * head - high) + 2 * head * tail) + tail * tail
    return math.exp(high) * (1 + low)


@library_function
def _erfc_inverse_guess(z: float) -> float:
    """Winitzki's approximation of erfcinv(z) for 0 < z < 1 (relative error ~2e-3),
    written in log(z (2 - z)) so that it holds down to the smallest z."""
    a = 0.147
    log_term = math.log(z) + math.log(2 - z)
    first = 2 / (_PI * a) + 0.5 * log_term
    return math.sqrt(math.sqrt(first * first - log_term / a) - first)


@library_function
def _erfcinv_tail(z: float) -> float:
    """erfcinv(z) for 0 < z < 1/2: Newton steps on log(erfcx(x)) - x^2 = log(z) from
    Winitzki's guess, so that the smallest z stay in range."""
    x = _erfc_inverse_guess(z)
    target = math.log(z)
    for _ in range(4):
        scaled = erfcx(x)
        residual = math.log(scaled) - x * x - target
        # d/dx log(erfc x) = -2 / (sqrt(pi) erfcx(x))
        x += residual * scaled * _SQRT_PI / 2
    return x


@library_function
def _erfinv_center(y: float) -> float:
    """erfinv(y) for |y| <= 1/2: Halley steps on erf from Winitzki's guess."""
    if y == 0:
        return y
    x = math.copysign(_erfc_inverse_guess(1 - abs(y)), y)
    for _ in range(3):
        residual = math.erf(x) - y
        slope = 2 / _SQRT_PI * math.exp(-x * x)
        x -= residual / (slope + x * residual)
    return x


@library_function
def erfcinv(z: float) -> float:
    """The inverse of erfc on (0, 2): the Newton tail below 1/2 (and, by symmetry,
    above 3/2), erfinv(1 - z) between, where 1 - z is exact. Relative error <= 1e-13."""
    if math.isnan(z) or z < 0 or z > 2:
        return math.nan
    if z == 0:
        return math.inf
    if z == 2:
        return -math.inf
    if z < 0.5:
        return _erfcinv_tail(z)
    if z > 1.5:
        return -_erfcinv_tail(2 - z)
    return _erfinv_center(1 - z)


@library_function
def erfinv(y: float) -> float:
    """The inverse of erf on (-1, 1): Halley steps on erf near 0, the erfc tail
    (1 - |y| exact) beyond 1/2. Relative error <= 1e-13."""
    if math.isnan(y) or y < -1 or y > 1:
        return math.nan
    if abs(y) == 1:
        return math.copysign(math.inf, y)
    if abs(y) <= 0.5:
        return _erfinv_center(y)
    return math.copysign(_erfcinv_tail(1 - abs(y)), y)


@library_function
def _ive_series(v: float, x: float) -> float:
    """I_v(x) e^-x by the power series sum (x/2)^(2k+v) / (k! Gamma(k+v+1)): the terms
    relative to the first are built by their ratio and summed with a running scale
    (the sum can exceed the float range where the result does not). The first term
    multiplies in directly where it and e^-x are normal floats; through logs it would
    lose |log| * eps of relative accuracy, which only large x need to risk."""
    quarter_square = 0.25 * x * x
    term = 1.0
    total = 1.0
    rescaled = 0
    k = 0
    while True:
        k += 1
        term *= quarter_square / (k * (k + v))
        total += term
        if abs(total) > 1e290:
            total *= 1e-290
            term *= 1e-290
            rescaled += 1
        if k > v and abs(term) <= 1e-17 * abs(total):
            break
    if total == 0:
        return 0.0
    power = math.pow(0.5 * x, v) / math.gamma(v + 1) if v < 170 else 0.0
    if rescaled == 0 and x < 700 and 1e-300 < abs(power) < 1e300:
        return power * total * math.exp(-x)
    sign = 1.0 if total > 0 else -1.0
    if v + 1 < 0 and math.floor(-(v + 1)) % 2 == 0:
        sign = -sign  # Gamma(v + 1) < 0
    log_value = (v * math.log(0.5 * x) - x - math.lgamma(v + 1) + rescaled * 290 * math.log(10.0)
                 + math.log(abs(total)))
    return sign * math.exp(log_value)


@library_function
def _ive_asymptotic(v: float, x: float) -> float:
    """I_v(x) e^-x ~ (2 pi x)^-1/2 sum (-1)^k a_k(v) / x^k for large x (Hankel)."""
    mu = 4 * v * v
    term = 1.0
    total = 1.0
    k = 1
    while k < 60:
        term *= -(mu - (2 * k - 1) ** 2) / (8 * k * x)
        total += term
        if abs(term) < 1e-17 * abs(total):
            break
        k += 1
    return total / math.sqrt(2 * _PI * x)


@library_function
def ive(v: float, x: float) -> float:
    """I_v(x) e^-|x| for real v and x (negative x for integer v only, else nan, as
    SciPy). The series below x = 30 + v^2 / 2, Hankel's expansion above it. Relative
    error <= 1e-11 for v in [-20, 50] and x in [0, 1e3]."""
    if math.isnan(v) or math.isnan(x):
        return math.nan
    integer = v == math.floor(v)
    if x < 0:
        if not integer:
            return math.nan
        value = ive(v, -x)
        return -value if int(abs(v)) % 2 == 1 else value
    if integer and v < 0:
        v = -v
    if x == 0:
        if v == 0:
            return 1.0
        return 0.0 if v > 0 else math.nan
    if x == math.inf:
        return math.nan  # SciPy's value (the limit is 0), so evaluate and compiled agree
    if x > 30 + 0.5 * v * v:
        return _ive_asymptotic(v, x)
    return _ive_series(v, x)


@library_function
def i0(x: float) -> float:
    """I_0(x) = ive(0, x) e^|x| (inf beyond about 713). Relative error <= 1e-14."""
    return ive(0.0, x) * math.exp(abs(x))


@library_function
def i1(x: float) -> float:
    """I_1(x) = ive(1, x) e^|x| (odd in x). Relative error <= 1e-14."""
    return ive(1.0, x) * math.exp(abs(x))


@library_function
def gamma(x: float) -> float:
    """Gamma(x), libm's tgamma with SciPy's edges: +-inf at +-0, nan at the negative
    integers and -inf, inf beyond 171.62. Relative error <= 1e-14 (tested)."""
    if x == 0:
        return math.copysign(math.inf, x)
    if x < 0 and x == math.floor(x):
        return math.nan
    if x > 171.7:
        return math.inf
    return math.gamma(x)


@library_function
def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) (Numerical Recipes' `betacf`, modified
    Lentz), fast for x < (a + 1) / (a + b + 2)."""
    tiny = 1e-300
    qab = a + b
    qap = a + 1
    qam = a - 1
    c = 1.0
    d = 1 - qab * x / qap
    if abs(d) < tiny:
        d = tiny
    d = 1 / d
    h = d
    for m in range(1, 100000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1 / d
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 + aa * d
        if abs(d) < tiny:
            d = tiny
        c = 1 + aa / c
        if abs(c) < tiny:
            c = tiny
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    return h


@library_function
def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta I_x(a, b): the continued fraction of I or of
    1 - I_{1-x}(b, a), whichever converges fast. SciPy's edges: 1 for a = 0 < b, 0 for
    b = 0 < a, nan for a = b = 0, negative a or b, or x outside [0, 1]. Relative error
    <= 1e-12 for a, b in [0.1, 1e3] where the value exceeds 1e-300 (tested)."""
    if math.isnan(a) or math.isnan(b) or math.isnan(x) or a < 0 or b < 0 or x < 0 or x > 1:
        return math.nan
    if a == 0 or b == 0:
        if a == b:
            return math.nan
        return 1.0 if a == 0 else 0.0
    if x == 0 or x == 1:
        return x
    log_front = a * math.log(x) + b * math.log1p(-x) - betaln(a, b)
    # The fraction's factor goes into the exponent: e^log_front alone may be subnormal.
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front + math.log(_beta_fraction(a, b, x) / a))
    return 1 - math.exp(log_front + math.log(_beta_fraction(b, a, 1 - x) / b))


_betainc_der = library_function(betainc_derivative.betainc_der)


@library_function
def betainc_der_a(a: float, b: float, x: float) -> float:
    """d I_x(a, b) / da (`ops.betainc_derivative`, compiled)."""
    return _betainc_der(a, b, x, True, betaln(a, b), digamma(a), digamma(b), digamma(a + b))


@library_function
def betainc_der_b(a: float, b: float, x: float) -> float:
    """d I_x(a, b) / db (`ops.betainc_derivative`, compiled)."""
    return _betainc_der(a, b, x, False, betaln(a, b), digamma(a), digamma(b), digamma(a + b))


@library_function
def gammaincinv(a: float, p: float) -> float:
    """The x with P(a, x) = p: Numerical Recipes' `invgammp` guess, then Halley steps
    on (1 - p) - Q(a, x) above p = 1/2 (1 - p is exact there, so the upper tail keeps
    its digits), Newton on log P(a, x) - log p in log x below. 0 at p = 0, inf at p = 1, nan for a <= 0 or p outside
    [0, 1] (SciPy's edges). Relative error <= 1e-12 where a in [0.01, 1e3] (tested)."""
    if math.isnan(a) or math.isnan(p) or a <= 0 or p < 0 or p > 1:
        return math.nan
    if p == 0:
        return 0.0
    if p == 1:
        return math.inf
    a1 = a - 1
    log_gamma = math.lgamma(a)
    if a > 1:
        tail = p if p < 0.5 else 1 - p
        t = math.sqrt(-2 * math.log(tail))
        z = (2.30753 + t * 0.27061) / (1 + t * (0.99229 + t * 0.04481)) - t
        if p < 0.5:
            z = -z
        x = max(1e-3, a * (1 - 1 / (9 * a) - z / (3 * math.sqrt(a))) ** 3)
    else:
        t = 1 - a * (0.253 + a * 0.12)
        x = (p / t) ** (1 / a) if p < t else 1 - math.log(1 - (p - t) / (1 - t))
    if p < 0.5:
        # Newton on log P(a, x) = log p in log x, which converges from any guess (deep
        # in the lower tail x is tiny, where steps in x would only halve it).
        log_p = math.log(p)
        log_x = min(math.log(x), (log_p + math.lgamma(a + 1)) / a)
        for _ in range(100):
            x = math.exp(log_x)
            log_lower = _log_gammainc(a, x)
            # d log P / d log x = x^a e^-x / (Gamma(a) P)
            slope = math.exp(a * log_x - x - log_gamma - log_lower)
            step = (log_lower - log_p) / slope
            log_x -= step
            if abs(step) <= 1e-15:
                break
        return math.exp(log_x)
    for _ in range(100):
        if x <= 0:
            return 0.0
        error = (1 - p) - gammaincc(a, x)
        density = math.exp(-x + a1 * math.log(x) - log_gamma)
        if density == 0:
            break
        u = error / density
        step = u / (1 - 0.5 * min(1.0, u * (a1 / x - 1)))
        x -= step
        if x <= 0:
            x = 0.5 * (x + step)
        if abs(step) <= 1e-15 * x:
            break
    return x


@library_function
def _sinpi(v: float) -> float:
    """sin(pi v), exactly 0 at integers."""
    reduced = v - 2 * math.floor(0.5 * v)
    if reduced == math.floor(reduced):
        return 0.0
    return math.sin(_PI * reduced)


@library_function
def zeta(s: float) -> float:
    """The Riemann zeta function (SciPy's `zeta(x)`): the Hurwitz sum at q = 1 above
    s = 1, Borwein's series for the eta function on [0, 1) (zeta = eta / (1 - 2^(1-s)),
    the denominator by expm1), and the reflection formula below 0 (exact zeros at the
    negative even integers). inf at 1. Relative error <= 1e-13 (tested)."""
    if math.isnan(s):
        return s
    if s == 1:
        return math.inf
    if s == math.inf:
        return 1.0
    if s > 1:
        return hurwitz_zeta(s, 1.0)
    if s >= 0:
        eta = 0.0
        for k in range(len(_BORWEIN)):
            term = _BORWEIN[k] / math.pow(k + 1, s)
            eta += -term if k % 2 == 0 else term
        return eta / -math.expm1((1 - s) * math.log(2.0))
    if s == -math.inf:
        return math.nan
    sine = _sinpi(0.5 * s)
    if sine == 0:
        return 0.0
    log_magnitude = s * math.log(2.0) + (s - 1) * math.log(_PI) + math.lgamma(1 - s)
    return sine * math.exp(log_magnitude) * hurwitz_zeta(1 - s, 1.0)


@library_function
def hurwitz_zeta_scipy(s: float, q: float) -> float:
    """zeta(s, q) with SciPy's edges (`zeta(x, q)`): inf at s = 1, nan below it."""
    if math.isnan(s) or math.isnan(q):
        return math.nan
    if s == 1:
        return math.inf
    if s < 1:
        return math.nan
    return hurwitz_zeta(s, q)


@library_function
def _normal_upper(h: float) -> float:
    """Q(h) = P(Z > h) for a standard normal Z."""
    return 0.5 * math.erfc(h * 0.7071067811865476)


@library_function
def _owens_t_quadrature(h: float, a: float) -> float:
    """T(h, a) for h >= 0, 0 <= a <= 1: Gauss-Legendre on
    (1 / 2 pi) e^(-h^2/2) integral over [0, a] of e^(-h^2 t^2 / 2) / (1 + t^2) dt, cut
    where the Gaussian factor is below e^-40 (t > 9 / h)."""
    upper = a if h * a <= 9 else 9 / h
    half = 0.5 * upper
    total = 0.0
    for i in range(len(_GAUSS_NODES)):
        t = half * (1 + _GAUSS_NODES[i])
        total += _GAUSS_WEIGHTS[i] * math.exp(-0.5 * h * h * t * t) / (1 + t * t)
    return math.exp(-0.5 * h * h) * half * total / (2 * _PI)


@library_function
def owens_t(h: float, a: float) -> float:
    """Owen's T function T(h, a) (SciPy's `owens_t`): even in h, odd in a; quadrature
    for |a| <= 1 and, above, T(h, a) = Q(h)/2 + Q(ah)/2 - Q(h) Q(ah) - T(ah, 1/a)
    (h >= 0, Q the normal upper tail, in which the terms keep their digits).
    Absolute error <= 1e-16, relative <= 1e-13 where T > 1e-300 (tested)."""
    if math.isnan(h) or math.isnan(a):
        return math.nan
    sign = 1.0 if a >= 0 else -1.0
    a = abs(a)
    h = abs(h)
    if h == math.inf:
        return 0.0
    if a <= 1:
        return sign * _owens_t_quadrature(h, a)
    if a == math.inf:
        return sign * (0.25 if h == 0 else 0.5 * _normal_upper(h))
    upper_h = _normal_upper(h)
    upper_ah = _normal_upper(a * h)
    return sign * (0.5 * upper_h + 0.5 * upper_ah - upper_h * upper_ah
                   - _owens_t_quadrature(a * h, 1 / a))
