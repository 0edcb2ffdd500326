"""Bessel functions of real order for compiled code: J_v (`jv`), K_v (`kv`) and its
scaled form (`kve`), written after Numerical Recipes' `besseljy` / `bessik` (Temme's
series below x = 2, Steed's continued fractions above, recurrences in the order), with
Hankel's expansion for J_v above x = 25 + v^2 / 10, where the continued fraction (about x steps) loses digits.

Temme's series needs 1/Gamma(1 +- mu) for |mu| <= 1/2 in the forms gam1, gam2 below;
their Taylor coefficients (mpmath, 40 digits) replace Numerical Recipes' Chebyshev ones.
Accuracy against SciPy is tested in `tests/numba_backend/test_special_functions.py`.
"""

from __future__ import annotations

import math

from numba_backend.library import library_function

_PI = math.pi
_EPS = 1e-16
_FPMIN = 1e-300
_MAX_STEPS = 100000
_HANKEL_FROM = 25.0
_RGAMMA_TAYLOR = (  # 1/Gamma(1 + mu) = sum of t_k mu^k
    1.0, 0.5772156649015329, -0.6558780715202539, -0.04200263503409524, 0.16653861138229148,
    -0.04219773455554433, -0.009621971527876973, 0.0072189432466631, -0.0011651675918590652,
    -0.00021524167411495098, 0.0001280502823881162, -2.013485478078824e-05,
    -1.2504934821426706e-06, 1.133027231981696e-06, -2.056338416977607e-07,
    6.116095104481416e-09, 5.002007644469223e-09, -1.18127457048702e-09,
    1.0434267116911005e-10, 7.782263439905071e-12, -3.696805618642206e-12,
    5.100370287454476e-13, -2.0583260535665066e-14,
)


@library_function
def _temme_gammas(mu: float) -> tuple[float, float]:
    """gam1 = (1/Gamma(1 - mu) - 1/Gamma(1 + mu)) / (2 mu) and
    gam2 = (1/Gamma(1 - mu) + 1/Gamma(1 + mu)) / 2, from the odd and even Taylor terms."""
    square = mu * mu
    odd = 0.0
    even = 0.0
    for k in range(len(_RGAMMA_TAYLOR) - 1, -1, -1):
        if k % 2 == 1:
            odd = odd * square + _RGAMMA_TAYLOR[k]
        else:
            even = even * square + _RGAMMA_TAYLOR[k]
    return -odd, even


@library_function
def _temme_start(
    xmu: float, x: float
) -> tuple[float, float, float, float, float, float, float, float, float, float]:
    """The quantities Temme's series for J, Y (`_jy`) and K (`_k_scaled`) both start
    from at x < 2: x/2, pi mu, pi mu / sin(pi mu), -log(x/2), mu d, sinh(e) / e, the
    two Temme gammas, and 1/Gamma(1 + mu), 1/Gamma(1 - mu)."""
    x2 = 0.5 * x
    pimu = _PI * xmu
    fact = 1.0 if abs(pimu) < _EPS else pimu / math.sin(pimu)
    d = -math.log(x2)
    e = xmu * d
    fact2 = 1.0 if abs(e) < _EPS else math.sinh(e) / e
    gam1, gam2 = _temme_gammas(xmu)
    return x2, pimu, fact, d, e, fact2, gam1, gam2, gam2 - xmu * gam1, gam2 + xmu * gam1


@library_function
def _cospi(v: float) -> float:
    """cos(pi v), exactly 0 at half-integers and +-1 at integers."""
    reduced = v - 2 * math.floor(0.5 * v)  # in [0, 2)
    if reduced == 0.5 or reduced == 1.5:
        return 0.0
    return math.cos(_PI * reduced)


@library_function
def _sinpi(v: float) -> float:
    """sin(pi v), exactly 0 at integers."""
    reduced = v - 2 * math.floor(0.5 * v)
    if reduced == math.floor(reduced):
        return 0.0
    return math.sin(_PI * reduced)


@library_function
def _jy_hankel(v: float, x: float) -> tuple[float, float]:
    """J_v(x), Y_v(x) for large x by Hankel's expansion; cos and sin of x - (v/2 + 1/4) pi
    by the addition theorem, so that x is reduced by libm, not by a rounded subtraction."""
    mu = 4 * v * v
    p = 1.0
    q = 0.0
    term = 1.0
    k = 1
    while k < 60:
        term *= (mu - (2 * k - 1) ** 2) / (8 * k * x)
        if abs(term) < 1e-17:
            break
        if k % 2 == 1:
            q += term if (k // 2) % 2 == 0 else -term
        else:
            p += -term if (k // 2) % 2 == 1 else term
        k += 1
    phase = 0.5 * v + 0.25
    cos_phase, sin_phase = _cospi(phase), _sinpi(phase)
    cos_x, sin_x = math.cos(x), math.sin(x)
    cos_chi = cos_x * cos_phase + sin_x * sin_phase
    sin_chi = sin_x * cos_phase - cos_x * sin_phase
    scale = math.sqrt(2 / (_PI * x))
    return scale * (p * cos_chi - q * sin_chi), scale * (p * sin_chi + q * cos_chi)


@library_function
def _jy(nu: float, x: float) -> tuple[float, float]:
    """J_nu(x), Y_nu(x) for nu >= 0, x > 0 (Numerical Recipes' `besseljy`)."""
    if x > _HANKEL_FROM + 0.1 * nu * nu:
        return _jy_hankel(nu, x)
    nl = int(nu + 0.5) if x < 2 else max(0, int(nu - x + 1.5))
    xmu = nu - nl
    xmu2 = xmu * xmu
    xi = 1 / x
    xi2 = 2 * xi
    w = xi2 / _PI
    isign = 1.0
    h = max(nu * xi, _FPMIN)
    b = xi2 * nu
    d = 0.0
    c = h
    for _ in range(_MAX_STEPS):
        b += xi2
        d = b - d
        if abs(d) < _FPMIN:
            d = _FPMIN
        c = b - 1 / c
        if abs(c) < _FPMIN:
            c = _FPMIN
        d = 1 / d
        delta = c * d
        h *= delta
        if d < 0:
            isign = -isign
        if abs(delta - 1) <= _EPS:
            break
    rjl = isign * _FPMIN
    rjpl = h * rjl
    rjl1 = rjl
    rjp1 = rjpl
    fact = nu * xi
    for _ in range(nl):
        rjtemp = fact * rjl + rjpl
        fact -= xi
        rjpl = fact * rjtemp - rjl
        rjl = rjtemp
        if abs(rjl) > 1e250:  # J_nu underflows against J_mu: keep the ratio finite
            rjl *= 1e-250
            rjpl *= 1e-250
            rjl1 *= 1e-250
            rjp1 *= 1e-250
    if rjl == 0:
        rjl = _EPS
    f = rjpl / rjl
    if x < 2:
        x2, pimu, fact, d, e, fact2, gam1, gam2, gampl, gammi = _temme_start(xmu, x)
        ff = 2 / _PI * fact * (gam1 * math.cosh(e) + gam2 * fact2 * d)
        e = math.exp(e)
        p = e / (gampl * _PI)
        q = 1 / (e * _PI * gammi)
        pimu2 = 0.5 * pimu
        fact3 = 1.0 if abs(pimu2) < _EPS else math.sin(pimu2) / pimu2
        r = _PI * pimu2 * fact3 * fact3
        c = 1.0
        d = -x2 * x2
        total = ff + r * q
        total1 = p
        for i in range(1, _MAX_STEPS):
            ff = (i * ff + p + q) / (i * i - xmu2)
            c *= d / i
            p /= i - xmu
            q /= i + xmu
            delta = c * (ff + r * q)
            total += delta
            total1 += c * p - i * delta
            if abs(delta) < (1 + abs(total)) * _EPS:
                break
        rymu = -total
        ry1 = -total1 * xi2
        rymup = xmu * xi * rymu - ry1
        rjmu = w / (rymup - f * rymu)
    else:
        a = 0.25 - xmu2
        p = -0.5 * xi
        q = 1.0
        br = 2 * x
        bi = 2.0
        fact = a * xi / (p * p + q * q)
        cr = br + q * fact
        ci = bi + p * fact
        den = br * br + bi * bi
        dr = br / den
        di = -bi / den
        dlr = cr * dr - ci * di
        dli = cr * di + ci * dr
        temp = p * dlr - q * dli
        q = p * dli + q * dlr
        p = temp
        for i in range(1, _MAX_STEPS):
            a += 2 * i
            bi += 2
            dr = a * dr + br
            di = a * di + bi
            if abs(dr) + abs(di) < _FPMIN:
                dr = _FPMIN
            fact = a / (cr * cr + ci * ci)
            cr = br + cr * fact
            ci = bi - ci * fact
            if abs(cr) + abs(ci) < _FPMIN:
                cr = _FPMIN
            den = dr * dr + di * di
            dr /= den
            di /= -den
            dlr = cr * dr - ci * di
            dli = cr * di + ci * dr
            temp = p * dlr - q * dli
            q = p * dli + q * dlr
            p = temp
            if abs(dlr - 1) + abs(dli) <= _EPS:
                break
        gam = (p - f) / q
        rjmu = math.copysign(math.sqrt(w / ((p - f) * gam + q)), rjl)
        rymu = rjmu * gam
        rymup = rymu * (p + q / gam)
        ry1 = xmu * xi * rymu - rymup
    scale = rjmu / rjl
    j = rjl1 * scale
    for i in range(1, nl + 1):
        rytemp = (xmu + i) * xi2 * ry1 - rymu
        rymu = ry1
        ry1 = rytemp
    return j, rymu


@library_function
def jv(v: float, x: float) -> float:
    """J_v(x), the Bessel function of the first kind of real order (SciPy's `jv`):
    J_-v = cos(pi v) J_v - sin(pi v) Y_v for negative order; negative x for integer
    order only (J_n(-x) = (-1)^n J_n(x)), else nan. Hankel's expansion above
    x = 25 + v^2 / 10. Error <= 1e-12 times max(|J|, min(1, sqrt(2 / (pi x)))) (the
    envelope: relative where J is not near a zero) for v in [-20, 50], x <= 1e4."""
    if math.isnan(v) or math.isnan(x):
        return math.nan
    integer = v == math.floor(v)
    if x < 0:
        if not integer:
            return math.nan
        value = jv(v, -x)
        return -value if int(abs(v)) % 2 == 1 else value
    if x == math.inf:
        return math.nan  # SciPy's value (the limit is 0), so evaluate and compiled agree
    if integer and v < 0:
        value = jv(-v, x)
        return -value if int(-v) % 2 == 1 else value
    if x == 0:
        if v == 0:
            return 1.0
        if v > 0:
            return 0.0
        # J_v ~ (x/2)^v / Gamma(v + 1): the sign of Gamma(v + 1), negative where
        # floor(v + 1) is odd.
        return -math.inf if math.floor(v + 1) % 2 == 1 else math.inf
    if v >= 0:
        return _jy(v, x)[0]
    j, y = _jy(-v, x)
    return _cospi(v) * j + _sinpi(v) * y


@library_function
def _k_scaled(nu: float, x: float) -> float:
    """K_nu(x) e^x for nu >= 0, x > 0 (Numerical Recipes' `bessik`, K part only)."""
    nl = int(nu + 0.5)
    xmu = nu - nl
    xmu2 = xmu * xmu
    xi = 1 / x
    xi2 = 2 * xi
    if x < 2:
        x2, pimu, fact, d, e, fact2, gam1, gam2, gampl, gammi = _temme_start(xmu, x)
        ff = fact * (gam1 * math.cosh(e) + gam2 * fact2 * d)
        total = ff
        e = math.exp(e)
        p = 0.5 * e / gampl
        q = 0.5 / (e * gammi)
        c = 1.0
        d = x2 * x2
        total1 = p
        for i in range(1, _MAX_STEPS):
            ff = (i * ff + p + q) / (i * i - xmu2)
            c *= d / i
            p /= i - xmu
            q /= i + xmu
            delta = c * ff
            total += delta
            total1 += c * (p - i * ff)
            if abs(delta) < abs(total) * _EPS:
                break
        scaling = math.exp(x)
        rkmu = total * scaling
        rk1 = total1 * xi2 * scaling
    else:
        b = 2 * (1 + x)
        d = 1 / b
        h = d
        delh = d
        q1 = 0.0
        q2 = 1.0
        a1 = 0.25 - xmu2
        q = a1
        c = a1
        a = -a1
        s = 1 + q * delh
        for i in range(1, _MAX_STEPS):
            a -= 2 * i
            c = -a * c / (i + 1.0)
            qnew = (q1 - b * q2) / a
            q1 = q2
            q2 = qnew
            q += c * qnew
            b += 2
            d = 1 / (b + a * d)
            delh = (b * d - 1) * delh
            h += delh
            dels = q * delh
            s += dels
            if abs(dels / s) < _EPS:
                break
        h = a1 * h
        rkmu = math.sqrt(_PI / (2 * x)) / s
        rk1 = rkmu * (xmu + x + 0.5 - h) * xi
    for i in range(1, nl + 1):
        rktemp = (xmu + i) * xi2 * rk1 + rkmu
        rkmu = rk1
        rk1 = rktemp
    return rkmu


@library_function
def kve(v: float, x: float) -> float:
    """K_v(x) e^x, the scaled modified Bessel function of the second kind of real order
    (SciPy's `kve`; K_-v = K_v): inf at x = 0, nan for x < 0 and at x = inf. Relative
    error <= 1e-12 for v in [-20, 50], x in [1e-3, 1e4] (tested)."""
    if math.isnan(v) or math.isnan(x) or x < 0:
        return math.nan
    if x == 0:
        return math.inf
    if x == math.inf:
        return math.nan  # SciPy's value, so evaluate and compiled agree
    return _k_scaled(abs(v), x)


@library_function
def kv(v: float, x: float) -> float:
    """K_v(x) of real order (SciPy's `kv`): kve(v, x) e^-x, underflowing to 0."""
    if x == math.inf:
        return 0.0
    return kve(v, x) * math.exp(-x)
