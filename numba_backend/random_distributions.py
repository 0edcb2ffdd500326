"""NumPy's distributions beyond the basic draws, in compiled code: each is NumPy's
`distributions.c` (NumPy 2.4) step for step on top of `random_streams`' basic draws, so
the numbers are NumPy's bit for bit. Transcendental functions are libm's (`math`), as
NumPy's C code calls them, not `vecmath`'s (whose last bit can differ).

None of them checks its parameters: the `RandomDraw` kernel makes NumPy's checks, as
each distribution in `ops.random_draw` declares them, before it calls them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from numba_backend.library import library_function
from numba_backend.random_streams import (
    _interval,
    binomial,
    gamma,
    next_double,
    poisson,
    standard_exponential,
    standard_gamma,
    standard_normal,
)

Array = np.ndarray[Any, np.dtype[Any]]


@library_function
def lognormal(s: Array, mean: float, sigma: float) -> float:
    """`exp(mean + sigma * z)`, NumPy's `random_lognormal`."""
    return math.exp(mean + sigma * standard_normal(s))


@library_function
def laplace(s: Array, loc: float, scale: float) -> float:
    """Inversion of one uniform, rejecting 0, NumPy's `random_laplace`."""
    while True:
        u = next_double(s)
        if u >= 0.5:
            return loc - scale * math.log(2.0 - u - u)
        if u > 0.0:
            return loc + scale * math.log(u + u)


@library_function
def logistic(s: Array, loc: float, scale: float) -> float:
    """`loc + scale * log(u / (1 - u))` for a uniform u > 0, NumPy's `random_logistic`."""
    while True:
        u = next_double(s)
        if u > 0.0:
            return loc + scale * math.log(u / (1.0 - u))


@library_function
def gumbel(s: Array, loc: float, scale: float) -> float:
    """`loc - scale * log(-log(u))` for u = 1 - uniform < 1, NumPy's `random_gumbel`."""
    while True:
        u = 1.0 - next_double(s)
        if u < 1.0:
            return loc - scale * math.log(-math.log(u))


@library_function
def cauchy(s: Array) -> float:
    """A ratio of two standard normals, NumPy's `random_standard_cauchy`."""
    numerator = standard_normal(s)
    denominator = standard_normal(s)
    return numerator / denominator


@library_function
def student_t(s: Array, df: float) -> float:
    """A standard normal over the root of a gamma, NumPy's `random_standard_t`."""
    numerator = standard_normal(s)
    denominator = standard_gamma(s, df / 2)
    return math.sqrt(df / 2) * numerator / math.sqrt(denominator)


@library_function
def chisquare(s: Array, df: float) -> float:
    """`2 * standard_gamma(df / 2)`, NumPy's `random_chisquare`."""
    return 2.0 * standard_gamma(s, df / 2.0)


@library_function
def weibull(s: Array, a: float) -> float:
    """A power of a standard exponential (0 for a = 0), NumPy's `random_weibull`."""
    if a == 0.0:
        return 0.0
    return math.pow(standard_exponential(s), 1.0 / a)


@library_function
def pareto(s: Array, a: float) -> float:
    """`expm1(e / a)` of a standard exponential e, NumPy's `random_pareto`."""
    return math.expm1(standard_exponential(s) / a)


@library_function
def wald(s: Array, mean: float, scale: float) -> float:
    """Michael, Schucany and Haas's transformation of a normal with a uniform to choose
    between the two roots, NumPy's `random_wald`."""
    y = standard_normal(s)
    y = mean * y * y
    d = 1 + math.sqrt(1 + 4 * scale / y)
    x = mean * (1 - 2 / d)
    u = next_double(s)
    if u <= mean / (mean + x):
        return x
    return mean * mean / x


@library_function
def vonmises(s: Array, mu: float, kappa: float) -> float:
    """Best and Fisher's rejection, a uniform for kappa < 1e-8 and a wrapped normal above
    1e6, NumPy's `random_vonmises`."""
    if np.isnan(kappa):
        return np.nan
    if kappa < 1e-8:
        return math.pi * (2 * next_double(s) - 1)
    if kappa < 1e-5:
        r_s = 1.0 / kappa + kappa
    elif kappa <= 1e6:
        r = 1 + math.sqrt(1 + 4 * kappa * kappa)
        rho = (r - math.sqrt(2 * r)) / (2 * kappa)
        r_s = (1 + rho * rho) / (2 * rho)
    else:
        result = mu + math.sqrt(1.0 / kappa) * standard_normal(s)
        if result < -math.pi:
            result += 2 * math.pi
        if result > math.pi:
            result -= 2 * math.pi
        return result
    while True:
        u = next_double(s)
        z = math.cos(math.pi * u)
        w = (1 + r_s * z) / (r_s + z)
        y = kappa * (r_s - w)
        v = next_double(s)
        if (y * (2 - y) - v >= 0) or (math.log(y / v) + 1 - y >= 0):
            break
    u = next_double(s)
    result = math.acos(w)
    if u < 0.5:
        result = -result
    result += mu
    negative = result < 0
    mod = float(np.fmod(abs(result) + math.pi, 2 * math.pi)) - math.pi
    if negative:
        mod *= -1
    return mod


_INT64_MAX_AS_DOUBLE = 9.223372036854776e18
"""The smallest double above INT64_MAX."""


@library_function
def geometric(s: Array, p: float) -> int:
    """A search over the cumulative probabilities from p = 1/3, inversion of a standard
    exponential below (saturating at INT64_MAX), NumPy's `random_geometric`."""
    if p >= 0.333333333333333333333333:
        x = 1
        total = product = p
        q = 1.0 - p
        u = next_double(s)
        while u > total:
            product *= q
            total += product
            x += 1
        return x
    z = np.ceil(-standard_exponential(s) / math.log1p(-p))  # a float (math.ceil: an int)
    if z >= _INT64_MAX_AS_DOUBLE:
        return 9223372036854775807
    return int(z)


@library_function
def negative_binomial(s: Array, n: float, p: float) -> int:
    """A Poisson draw of a gamma(n, (1 - p) / p) mean, NumPy's `random_negative_binomial`."""
    return poisson(s, gamma(s, n, (1 - p) / p))


_LOGFACTORIAL = np.array([
    0, 0, 0.69314718055994529, 1.791759469228055, 3.1780538303479458, 4.7874917427820458,
    6.5792512120101012, 8.5251613610654147, 10.604602902745251, 12.801827480081469,
    15.104412573075516, 17.502307845873887, 19.987214495661885, 22.552163853123425,
    25.19122118273868, 27.89927138384089, 30.671860106080672, 33.505073450136891,
    36.395445208033053, 39.339884187199495, 42.335616460753485, 45.380138898476908,
    48.471181351835227, 51.606675567764377, 54.784729398112319, 58.003605222980518,
    61.261701761002001, 64.557538627006338, 67.88974313718154, 71.257038967168015,
    74.658236348830158, 78.092223553315307, 81.557959456115043, 85.054467017581516,
    88.580827542197682, 92.136175603687093, 95.719694542143202, 99.330612454787428,
    102.96819861451381, 106.63176026064346, 110.32063971475739, 114.03421178146171,
    117.77188139974507, 121.53308151543864, 125.3172711493569, 129.12393363912722,
    132.95257503561632, 136.80272263732635, 140.67392364823425, 144.5657439463449,
    148.47776695177302, 152.40959258449735, 156.3608363030788, 160.3311282166309,
    164.32011226319517, 168.32744544842765, 172.35279713916279, 176.39584840699735,
    180.45629141754378, 184.53382886144948, 188.6281734236716, 192.7390472878449,
    196.86618167289001, 201.00931639928152, 205.1681994826412, 209.34258675253685,
    213.53224149456327, 217.73693411395422, 221.95644181913033, 226.1905483237276,
    230.43904356577696, 234.70172344281826, 238.97838956183432, 243.26884900298271,
    247.57291409618688, 251.89040220972319, 256.22113555000954, 260.56494097186322,
    264.92164979855278, 269.29109765101981, 273.67312428569369, 278.06757344036612,
    282.4742926876304, 286.89313329542699, 291.32395009427029, 295.76660135076065,
    300.22094864701415, 304.68685676566872, 309.1641935801469, 313.65282994987905,
    318.1526396202093, 322.66349912672615, 327.1852877037752, 331.71788719692847,
    336.26118197919845, 340.81505887079902, 345.37940706226686, 349.95411804077025,
    354.53908551944079, 359.1342053695754, 363.73937555556347, 368.35449607240474,
    372.97946888568902, 377.61419787391867, 382.25858877306001, 386.91254912321756,
    391.57598821732961, 396.24881705179155, 400.93094827891576, 405.6222961611449,
    410.32277652693733, 415.03230672824964, 419.75080559954472, 424.47819341825709,
    429.21439186665157, 433.95932399501481, 438.71291418612117, 443.47508812091894,
    448.24577274538461, 453.02489623849613, 457.81238798127816, 462.60817852687489,
    467.4121995716082, 472.22438392698058, 477.04466549258564, 481.87297922988796,
])
"""log(k!) for k < 126, NumPy's table (`logfactorial.c`)."""


@library_function
def _logfactorial(k: int) -> float:
    """NumPy's `logfactorial`: the table, then Stirling's series to the 1/k^3 term."""
    if k < 126:
        return float(_LOGFACTORIAL[k])
    return (k + 0.5) * math.log(float(k)) - k + (0.9189385332046728 + (1.0 / k) * (1 / 12.0 - 1 / (360.0 * k * k)))


@library_function
def _hypergeometric_sample(s: Array, good: int, bad: int, sample: int) -> int:
    """Draw items one at a time (or the complement when more than half are drawn)."""
    total = good + bad
    computed = total - sample if sample > total // 2 else sample
    remaining_total = total
    remaining_good = good
    while computed > 0 and remaining_good > 0 and remaining_total > remaining_good:
        remaining_total -= 1
        if int(_interval(s, np.uint64(remaining_total))) < remaining_good:
            remaining_good -= 1
        computed -= 1
    if remaining_total == remaining_good:
        remaining_good -= computed
    if sample > total // 2:
        return remaining_good
    return good - remaining_good


@library_function
def _hypergeometric_hrua(s: Array, good: int, bad: int, sample: int) -> int:
    """Stadlober's ratio of uniforms (HRUA), in NumPy's variables and order."""
    popsize = good + bad
    computed = min(sample, popsize - sample)
    fewer = min(good, bad)
    more = max(good, bad)
    p = float(fewer) / popsize
    q = float(more) / popsize
    mu = computed * p
    a = mu + 0.5
    var = float(popsize - computed) * computed * p * q / (popsize - 1)
    c = math.sqrt(var + 0.5)
    h = 1.7155277699214135 * c + 0.8989161620588988
    m = int(math.floor(float(computed + 1) * (fewer + 1) / (popsize + 2)))
    g = (_logfactorial(m) + _logfactorial(fewer - m) + _logfactorial(computed - m)
         + _logfactorial(more - computed + m))
    b = min(float(min(computed, fewer) + 1), math.floor(a + 16 * c))
    while True:
        u = next_double(s)
        v = next_double(s)
        x = a + h * (v - 0.5) / u
        if x < 0.0 or x >= b:
            continue
        k = int(math.floor(x))
        gp = (_logfactorial(k) + _logfactorial(fewer - k) + _logfactorial(computed - k)
              + _logfactorial(more - computed + k))
        t = g - gp
        if u * (4.0 - u) - 3.0 <= t:
            break
        if u * (u - t) >= 1:
            continue
        if 2.0 * math.log(u) <= t:
            break
    if good > bad:
        k = computed - k
    if computed < sample:
        k = good - k
    return k


@library_function
def hypergeometric(s: Array, good: int, bad: int, sample: int) -> int:
    """HRUA when at least 10 items are drawn and at least 10 left, else item by item,
    NumPy's `random_hypergeometric`."""
    if sample >= 10 and sample <= good + bad - 10:
        return _hypergeometric_hrua(s, good, bad, sample)
    return _hypergeometric_sample(s, good, bad, sample)


@library_function
def multinomial_into(s: Array, n: int, pvals: Array, out: Array) -> None:
    """One multinomial draw into `out`: a binomial per category of what is left, NumPy's
    `random_multinomial` (categories after the trials run out stay 0)."""
    d = pvals.shape[0]
    for j in range(d):
        out[j] = 0
    remaining_p = 1.0
    left = n
    for j in range(d - 1):
        out[j] = binomial(s, left, pvals[j] / remaining_p)
        left -= out[j]
        if left <= 0:
            break
        remaining_p -= pvals[j]
    if left > 0:
        out[d - 1] = left
