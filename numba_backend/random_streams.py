"""NumPy's `Generator(PCG64)` streams in compiled code, on an explicit state array.

A state is NumPy's PCG64 state in six uint64 words (`ops.random_draw.STATE_TYPE`:
state high and low, increment high and low, `has_uint32`, `uinteger`); `state_to_array`
and `array_to_state` convert from and to `PCG64.state` dicts. Each function advances the
array it is given in place; the kernels hand them a copy of the input state, which
becomes the draw's new state, so a state value is never changed.

The algorithms are NumPy's, step for step, so the numbers are NumPy's bit for bit:
PCG64's 128-bit LCG with the XSL-RR output, 32-bit draws served from the halves of a
64-bit one, doubles from the top 53 bits, the ziggurats for the normal and exponential
distributions (their published tables, as numba ships them), Marsaglia and Tsang's
gamma, Johnk's beta for small shapes, PTRS for Poisson, BTPE for the binomial (with the
squeeze constants of the installed NumPy, which changed them in 2.5), Lemire's bounded
integers and the masked rejection of `shuffle`.

Nothing here is float32 (NumPy's float64 paths never round through float32), and nothing
is cached between calls: NumPy keeps the binomial's setup in the generator's
`binomial_t` only to skip recomputing it, so recomputing it per draw gives the same
numbers. `_NEW_BTPE_SQUEEZE` is fixed when numba compiles; numba's on-disk cache does not
notice a NumPy upgrade across 2.5, so after one `__pycache__` here must be cleared.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba.np.random._constants import (
    fe_double,
    fi_double,
    ke_double,
    ki_double,
    we_double,
    wi_double,
    ziggurat_exp_r,
    ziggurat_nor_inv_r,
    ziggurat_nor_r,
)

from numba_backend.intrinsics import new_array
from numba_backend.library import library_function
from ops.random_draw import array_to_state as array_to_state
from ops.random_draw import state_to_array as state_to_array

Array = np.ndarray[Any, np.dtype[Any]]

_MULTIPLIER_HIGH = np.uint64(0x2360ED051FC65DA4)
_MULTIPLIER_LOW = np.uint64(0x4385DF649FCCF645)
_LOW_32 = np.uint64(0xFFFFFFFF)
_ONE, _ZERO = np.uint64(1), np.uint64(0)
_DOUBLE_UNIT = 1.0 / 9007199254740992.0
_NEW_BTPE_SQUEEZE = tuple(int(part) for part in np.__version__.split(".")[:2]) >= (2, 5)
"""NumPy 2.5 corrected a Stirling constant in BTPE's squeeze (13680 -> 13860, and two
signs); the stream follows the installed NumPy."""


@library_function
def _multiply_high(a: Any, b: Any) -> Any:
    """The high 64 bits of the 128-bit product of two uint64."""
    a_low, a_high = a & _LOW_32, a >> np.uint64(32)
    b_low, b_high = b & _LOW_32, b >> np.uint64(32)
    low_low = a_low * b_low
    high_low = a_high * b_low
    low_high = a_low * b_high
    middle = (low_low >> np.uint64(32)) + (high_low & _LOW_32) + low_high
    return a_high * b_high + (high_low >> np.uint64(32)) + (middle >> np.uint64(32))


@library_function
def next_uint64(s: Array) -> Any:
    """Step the LCG (state = state * multiplier + increment, mod 2^128), then output
    the rotated xor of the new state's halves (XSL-RR)."""
    high, low = s[0], s[1]
    product_low = low * _MULTIPLIER_LOW
    product_high = (_multiply_high(low, _MULTIPLIER_LOW) + high * _MULTIPLIER_LOW
                    + low * _MULTIPLIER_HIGH)
    new_low = product_low + s[3]
    carry = _ONE if new_low < product_low else _ZERO
    new_high = product_high + s[2] + carry
    s[0], s[1] = new_high, new_low
    rotation = new_high >> np.uint64(58)
    value = new_high ^ new_low
    return (value >> rotation) | (value << ((np.uint64(64) - rotation) & np.uint64(63)))


@library_function
def next_uint32(s: Array) -> Any:
    """The low half of a 64-bit draw, keeping the high half for the next call."""
    if s[4] != 0:
        s[4] = _ZERO
        return s[5]
    value = next_uint64(s)
    s[4] = _ONE
    s[5] = value >> np.uint64(32)
    return value & _LOW_32


@library_function
def next_double(s: Array) -> float:
    """A uniform double in [0, 1) from the top 53 bits of a 64-bit draw."""
    return float(next_uint64(s) >> np.uint64(11)) * _DOUBLE_UNIT


@library_function
def standard_normal(s: Array) -> float:
    """NumPy's ziggurat for the standard normal."""
    while True:
        r = next_uint64(s)
        index = int(r & np.uint64(0xFF))
        r = r >> np.uint64(8)
        negative = (r & _ONE) != 0
        magnitude = (r >> np.uint64(1)) & np.uint64(0x000FFFFFFFFFFFFF)
        x: float = float(magnitude) * wi_double[index]
        if negative:
            x = -x
        if magnitude < ki_double[index]:
            return x
        if index == 0:
            while True:
                xx = -ziggurat_nor_inv_r * math.log1p(-next_double(s))
                yy = -math.log1p(-next_double(s))
                if yy + yy > xx * xx:
                    tail = ziggurat_nor_r + xx
                    return -tail if ((magnitude >> np.uint64(8)) & _ONE) != 0 else tail
        else:
            height = (fi_double[index - 1] - fi_double[index]) * next_double(s) + fi_double[index]
            if height < math.exp(-0.5 * x * x):
                return x


@library_function
def standard_exponential(s: Array) -> float:
    """NumPy's ziggurat for the standard exponential."""
    while True:
        r = next_uint64(s) >> np.uint64(3)
        index = int(r & np.uint64(0xFF))
        r = r >> np.uint64(8)
        x: float = float(r) * we_double[index]
        if r < ke_double[index]:
            return x
        if index == 0:
            return float(ziggurat_exp_r) - math.log1p(-next_double(s))
        height = (fe_double[index - 1] - fe_double[index]) * next_double(s) + fe_double[index]
        if height < math.exp(-x):
            return x


@library_function
def standard_gamma(s: Array, shape: float) -> float:
    """Marsaglia and Tsang above shape 1, the exponential at 1, and NumPy's rejection
    from a power law and an exponential below 1."""
    if shape == 1.0:
        return standard_exponential(s)
    if shape == 0.0:
        return 0.0
    if shape < 1.0:
        while True:
            u = next_double(s)
            v = standard_exponential(s)
            if u <= 1.0 - shape:
                x = math.pow(u, 1.0 / shape)
                if x <= v:
                    return x
            else:
                y = -math.log((1 - u) / shape)
                x = math.pow(1.0 - shape + shape * y, 1.0 / shape)
                if x <= v + y:
                    return x
    b = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9 * b)
    while True:
        while True:
            x = standard_normal(s)
            v = 1.0 + c * x
            if v > 0.0:
                break
        v = v * v * v
        u = next_double(s)
        if u < 1.0 - 0.0331 * (x * x) * (x * x):
            return b * v
        if math.log(u) < 0.5 * x * x + b * (1.0 - v + math.log(v)):
            return b * v


@library_function
def normal(s: Array, loc: float, scale: float) -> float:
    """`loc + scale * standard_normal`, NumPy's `random_normal` (one rounding each)."""
    return loc + scale * standard_normal(s)


@library_function
def uniform(s: Array, low: float, high: float) -> float:
    """`low + (high - low) * next_double`: `Generator.uniform` computes the range
    `high - low` first and passes it on, so the sample rounds as here."""
    return low + (high - low) * next_double(s)


@library_function
def exponential(s: Array, scale: float) -> float:
    """`scale * standard_exponential`, NumPy's `random_exponential`."""
    return scale * standard_exponential(s)


@library_function
def gamma(s: Array, shape: float, scale: float) -> float:
    """`scale * standard_gamma(shape)`, NumPy's `random_gamma`."""
    return scale * standard_gamma(s, shape)


_BETA_TINY = 3e-103
"""Below this for both shapes, a beta sample is 0 or 1 but with probability ~1e-100:
NumPy then returns the Bernoulli(a / (a + b)) of one uniform."""


@library_function
def beta(s: Array, a: float, b: float) -> float:
    """Johnk's algorithm when both shapes are at most 1 (a Bernoulli draw when both are
    tiny; logarithms when a power underflows to 0), else a ratio of gammas."""
    if a <= 1.0 and b <= 1.0:
        if a < _BETA_TINY and b < _BETA_TINY:
            return 1.0 if (a + b) * next_double(s) < a else 0.0
        while True:
            u = next_double(s)
            v = next_double(s)
            x = math.pow(u, 1.0 / a)
            y = math.pow(v, 1.0 / b)
            total = x + y
            if total <= 1.0 and u + v > 0.0:
                if x > 0.0 and y > 0.0:
                    return x / total
                # x / (x + y) from the logarithms of x and y, which do not underflow
                delta = math.log(u) / a - math.log(v) / b
                if delta > 0.0:
                    return math.exp(-math.log1p(math.exp(-delta)))
                return math.exp(delta - math.log1p(math.exp(delta)))
    first = standard_gamma(s, a)
    second = standard_gamma(s, b)
    return first / (first + second)


_LOGGAM = (8.333333333333333e-02, -2.777777777777778e-03, 7.936507936507937e-04,
           -5.952380952380952e-04, 8.417508417508418e-04, -1.917526917526918e-03,
           6.410256410256410e-03, -2.955065359477124e-02, 1.796443723688307e-01,
           -1.39243221690590e+00)


@library_function
def _loggam(x: float) -> float:
    """NumPy's own log-gamma of its Poisson sampler (Stirling's series after shifting
    x up to 7), kept as NumPy computes it: the acceptance tests depend on its rounding."""
    if x == 1.0 or x == 2.0:
        return 0.0
    shift = int(7 - x) if x < 7.0 else 0
    x0 = x + shift
    x2 = (1.0 / x0) * (1.0 / x0)
    series = _LOGGAM[9]
    for k in range(8, -1, -1):
        series *= x2
        series += _LOGGAM[k]
    value = series / x0 + 0.5 * 1.8378770664093453 + (x0 - 0.5) * math.log(x0) - x0
    for _ in range(shift):
        value -= math.log(x0 - 1.0)
        x0 -= 1.0
    return value


@library_function
def poisson(s: Array, lam: float) -> int:
    """PTRS (transformed rejection) from lam = 10, products of uniforms below."""
    if lam == 0:
        return 0
    if lam < 10:
        limit = math.exp(-lam)
        count = 0
        product = 1.0
        while True:
            product *= next_double(s)
            if product > limit:
                count += 1
            else:
                return count
    root = math.sqrt(lam)
    log_lam = math.log(lam)
    b = 0.931 + 2.53 * root
    a = -0.059 + 0.02483 * b
    inverse_alpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    while True:
        u = next_double(s) - 0.5
        v = next_double(s)
        us = 0.5 - abs(u)
        k = int(math.floor((2 * a / us + b) * u + lam + 0.43))
        if us >= 0.07 and v <= vr:
            return k
        if k < 0 or (us < 0.013 and v > us):
            continue
        if (math.log(v) + math.log(inverse_alpha) - math.log(a / (us * us) + b)
                <= -lam + k * log_lam - _loggam(k + 1)):
            return k


@library_function
def _binomial_inversion(s: Array, n: int, p: float) -> int:
    q = 1.0 - p
    qn = math.exp(n * math.log(q))
    mean = n * p
    bound = min(float(n), mean + 10.0 * math.sqrt(mean * q + 1))
    x = 0
    px = qn
    u = next_double(s)
    while u > px:
        x += 1
        if x > bound:
            x = 0
            px = qn
            u = next_double(s)
        else:
            u -= px
            px = ((n - x + 1) * p * px) / (x * q)
    return x


@library_function
def _stirling_term(value: float, constant: float) -> float:
    square = value * value
    return (constant - (462.0 - (132.0 - (99.0 - 140.0 / square) / square) / square)
            / square) / value / 166320.0


@library_function
def _binomial_btpe(s: Array, n: int, r: float) -> int:
    """Kachitvichyanukul and Schmeiser's BTPE for r <= 1/2, in NumPy's order of draws."""
    q = 1.0 - r
    fm = n * r + r
    m = int(math.floor(fm))
    p1 = math.floor(2.195 * math.sqrt(n * r * q) - 4.6 * q) + 0.5
    xm = m + 0.5
    xl = xm - p1
    xr = xm + p1
    c = 0.134 + 20.5 / (15.3 + m)
    a = (fm - xl) / (fm - xl * r)
    lam_left = a * (1.0 + a / 2.0)
    a = (xr - fm) / (xr * q)
    lam_right = a * (1.0 + a / 2.0)
    p2 = p1 * (1.0 + 2.0 * c)
    p3 = p2 + c / lam_left
    p4 = p3 + c / lam_right
    nrq = n * r * q
    while True:
        u = next_double(s) * p4
        v = next_double(s)
        if u <= p1:
            return int(math.floor(xm - p1 * v + u))
        if u <= p2:
            x = xl + (u - p1) / c
            v = v * c + 1.0 - abs(m - x + 0.5) / p1
            if v > 1.0:
                continue
            y = int(math.floor(x))
        elif u <= p3:
            y = int(math.floor(xl + math.log(v) / lam_left))
            if y < 0 or v == 0.0:
                continue
            v = v * (u - p2) * lam_left
        else:
            y = int(math.floor(xr - math.log(v) / lam_right))
            if y > n or v == 0.0:
                continue
            v = v * (u - p3) * lam_right
        k = abs(y - m)
        if not (k > 20 and k < nrq / 2.0 - 1):
            ratio = r / q
            scaled = ratio * (n + 1)
            f = 1.0
            if m < y:
                for i in range(m + 1, y + 1):
                    f = f * (scaled / i - ratio)
            elif m > y:
                for i in range(y + 1, m + 1):
                    f = f / (scaled / i - ratio)
            if v > f:
                continue
            return y
        rho = (k / nrq) * ((k * (k / 3.0 + 0.625) + 0.16666666666666666) / nrq + 0.5)
        t = -k * k / (2 * nrq)
        log_v = math.log(v)
        if log_v < t - rho:
            return y
        if log_v > t + rho:
            continue
        x1 = y + 1.0
        f1 = m + 1.0
        z = n + 1.0 - m
        w = n - y + 1.0
        # one term at a time, in NumPy's left-to-right order, so the sum rounds as NumPy's
        bound = xm * math.log(f1 / x1) + (n - m + 0.5) * math.log(z / w)
        bound += (y - m) * math.log(w * r / (x1 * q))
        if _NEW_BTPE_SQUEEZE:
            bound += _stirling_term(f1, 13860.0)
            bound += _stirling_term(z, 13860.0)
            bound -= _stirling_term(x1, 13860.0)
            bound -= _stirling_term(w, 13860.0)
        else:
            bound += _stirling_term(f1, 13680.0)
            bound += _stirling_term(z, 13680.0)
            bound += _stirling_term(x1, 13680.0)
            bound += _stirling_term(w, 13680.0)
        if log_v > bound:
            continue
        return y


@library_function
def binomial(s: Array, n: int, p: float) -> int:
    """Inversion where the mean of the smaller tail is at most 30, else BTPE; for
    p > 1/2 both count failures (probability 1 - p) and return n minus them. The setup
    NumPy caches in `binomial_t` is recomputed on every call (same numbers)."""
    if n == 0 or p == 0.0:
        return 0
    if p <= 0.5:
        if p * n <= 30.0:
            return _binomial_inversion(s, n, p)
        return _binomial_btpe(s, n, p)
    q = 1.0 - p
    if q * n <= 30.0:
        return n - _binomial_inversion(s, n, q)
    return n - _binomial_btpe(s, n, q)


@library_function
def _bounded_lemire_64(s: Array, span: Any) -> Any:
    """A uniform integer in [0, span] (span < 2^64 - 1) by Lemire's multiply-shift with
    rejection, from 64-bit draws."""
    excluded = span + _ONE
    value = next_uint64(s)
    leftover = value * excluded
    if leftover < excluded:
        threshold = (np.uint64(0xFFFFFFFFFFFFFFFF) - span) % excluded
        while leftover < threshold:
            value = next_uint64(s)
            leftover = value * excluded
    return _multiply_high(value, excluded)


@library_function
def _bounded_lemire_32(s: Array, span: Any) -> Any:
    """The same from 32-bit draws, for span < 2^32 - 1."""
    excluded = span + _ONE
    product = next_uint32(s) * excluded
    leftover = product & _LOW_32
    if leftover < excluded:
        threshold = (_LOW_32 - span) % excluded
        while leftover < threshold:
            product = next_uint32(s) * excluded
            leftover = product & _LOW_32
    return product >> np.uint64(32)


@library_function
def bounded_uint64(s: Array, span: Any) -> Any:
    """A uniform integer in [0, span], as NumPy's `random_bounded_uint64` (unmasked):
    what `integers` draws, and what `Generator.choice` uses to shuffle its indices.
    `shuffle` and `permutation` do not: they call `random_interval` (`_interval`)."""
    if span == _ZERO:
        return _ZERO
    if span <= _LOW_32:
        if span == _LOW_32:
            return next_uint32(s)
        return _bounded_lemire_32(s, span)
    if span == np.uint64(0xFFFFFFFFFFFFFFFF):
        return next_uint64(s)
    return _bounded_lemire_64(s, span)


@library_function
def integers(s: Array, low: int, high: int) -> int:
    """An int64 in [low, high), as `Generator.integers(low, high, dtype=np.int64)`
    (low < high, as NumPy requires: the caller checks)."""
    span = np.uint64(high - 1) - np.uint64(low)
    return int(np.int64(np.uint64(low) + bounded_uint64(s, span)))


@library_function
def _interval(s: Array, largest: Any) -> Any:
    """A uniform integer in [0, largest] by masked rejection (NumPy's `random_interval`,
    which `shuffle` uses)."""
    if largest == _ZERO:
        return _ZERO
    mask = largest
    for shift in (1, 2, 4, 8, 16, 32):
        mask |= mask >> np.uint64(shift)
    if largest <= _LOW_32:
        value = next_uint32(s) & mask
        while value > largest:
            value = next_uint32(s) & mask
        return value
    value = next_uint64(s) & mask
    while value > largest:
        value = next_uint64(s) & mask
    return value


@library_function
def permutation_into(s: Array, out: Array) -> None:
    """`out` = `Generator.permutation(len(out))`: range(n), then Fisher-Yates swaps from
    the end, as `shuffle`."""
    n = out.shape[0]
    for i in range(n):
        out[i] = i
    for i in range(n - 1, 0, -1):
        j = int(_interval(s, np.uint64(i)))
        out[i], out[j] = out[j], out[i]


@library_function
def dirichlet_into(s: Array, alpha: Array, out: Array) -> None:
    """One Dirichlet draw into `out`, as `Generator.dirichlet`: normalized gammas, or
    stick-breaking with betas when every alpha is below 0.1 (where the gammas could all
    underflow to 0 and the normalization give 0/0)."""
    k = alpha.shape[0]
    small = k > 0  # max(alpha) < 0.1 (a nan is not small), as a loop: numba compiles
    for j in range(k):  # np.max and np.empty as overloads in every process
        small = small and alpha[j] < 0.1
    if small:
        remaining = new_array(k, np.float64)
        total = 0.0
        for j in range(k - 1, -1, -1):
            total += alpha[j]
            remaining[j] = total
        for j in range(k):
            out[j] = 0.0
        if total == 0.0:  # all alphas 0: NumPy draws nothing and leaves zeros
            return
        left = 1.0
        for j in range(k - 1):
            v = beta(s, alpha[j], remaining[j + 1])
            out[j] = left * v
            left *= 1.0 - v
            if remaining[j + 1] == 0:
                break
        out[k - 1] = left
        return
    total = 0.0
    for j in range(k):
        out[j] = standard_gamma(s, alpha[j])
        total += out[j]
    scale = 1.0 / total
    for j in range(k):
        out[j] = out[j] * scale
