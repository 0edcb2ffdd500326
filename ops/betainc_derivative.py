"""The derivatives of the regularized incomplete beta I_x(a, b) in a and in b, which
have no closed form: Boik & Robison-Cox's continued fraction (J. Stat. Software 3(1),
1998), the derivative of I's own continued fraction term by term, as PyTensor's
`betainc_grad`.

Written with `math` only, in one function, so that the reference evaluator calls it
as it is and the numba backend compiles the same source
(`numba_backend.special_functions.betainc_der`): one implementation of the series.
The digammas it needs come from the caller (SciPy's in `evaluate`, the backend's in
compiled code), since `math` has none.
"""

from __future__ import annotations

import math

_MAX_TERMS = 2000
_TOLERANCE = 1e-15


def betainc_der(
    a: float, b: float, x: float, wrt_a: bool, log_beta: float, psi_a: float, psi_b: float,
    psi_ab: float,
) -> float:
    """d I_x(a, b) / da (with `wrt_a`) or / db, given log B(a, b), psi(a), psi(b) and
    psi(a + b). Above x = a / (a + b) the fraction of 1 - I_{1-x}(b, a) is used, where
    the other one converges slowly. 0 at x = 0 and 1 (I is 0 or 1 there for every a,
    b); nan outside a, b > 0, 0 <= x <= 1 and where the fraction has not converged in
    2000 terms (relative change <= 1e-15)."""
    if not (a > 0 and b > 0 and 0 <= x <= 1):
        return math.nan
    if x == 0 or x == 1:
        return 0.0
    p, q, y, wrt_p, psi_p, psi_q, sign = a, b, x, wrt_a, psi_a, psi_b, 1.0
    if x > a / (a + b):
        p, q, y, wrt_p, psi_p, psi_q, sign = b, a, 1 - x, not wrt_a, psi_b, psi_a, -1.0
    f = q * y / (p * (1 - y))
    k = math.exp(p * math.log(y) + (q - 1) * math.log1p(-y) - math.log(p) - log_beta)
    if wrt_p:
        dk = math.log(y) - 1 / p + psi_ab - psi_p
    else:
        dk = math.log1p(-y) + psi_ab - psi_q
    a_2, a_1, b_2, b_1 = 1.0, 1.0, 0.0, 1.0
    da_2, da_1, db_2, db_1 = 0.0, 0.0, 0.0, 0.0
    derivative = 0.0
    for n in range(1, _MAX_TERMS + 1):
        p2n = p + 2 * n
        if n == 1:
            a_n = p * f * (q - 1) / (q * (p + 1))
            da_n = -p * f * (q - 1) / (q * (p + 1) ** 2) if wrt_p else p * f / (q * (p + 1))
        else:
            a_n = (p * p * f * f * (n - 1) / (q * q) * (p + q + n - 2) * (p + n - 1) * (q - n)
                   / ((p2n - 3) * (p2n - 2) ** 2 * (p2n - 1)))
            if wrt_p:
                pp = p * p
                ppp = pp * p
                polynomial = ((-8 + 8 * p + 8 * q) * n**3
                              + (16 * pp + (-44 + 20 * q) * p + 26 - 24 * q) * n**2
                              + (10 * ppp + (14 * q - 46) * pp + (-40 * q + 66) * p - 28 + 24 * q) * n
                              + 2 * pp * pp + (-13 + 3 * q) * ppp + (-14 * q + 30) * pp
                              + (-29 + 19 * q) * p + 10 - 8 * q)
                da_n = (-(n - 1) * f * f * pp * (q - n) / (q * q * (p2n - 3) ** 2) * polynomial
                        / ((p2n - 2) ** 3 * (p2n - 1) ** 2))
            else:
                da_n = (p * p * f * f / (q * q) * (n - 1) * (p + n - 1) * (2 * q + p - 2)
                        / ((p2n - 3) * (p2n - 2) ** 2 * (p2n - 1)))
        b_n = (2 * (p * f + 2 * q) * n * (n + p - 1) + p * q * (p - 2 - p * f)) / (q * (p2n - 2) * p2n)
        if wrt_p:
            db_n = (p * f / q * ((-4 * p - 4 * q + 4) * n * n + (4 * p - 4 + 4 * q - 2 * p * p) * n
                                 + p * p * q) / ((p2n - 2) ** 2 * p2n * p2n))
        else:
            db_n = -(p * p * f) / (q * (p2n - 2) * p2n)
        numerator = a_n * a_2 + b_n * a_1
        denominator = a_n * b_2 + b_n * b_1
        d_numerator = da_n * a_2 + a_n * da_2 + db_n * a_1 + b_n * da_1
        d_denominator = da_n * b_2 + a_n * db_2 + db_n * b_1 + b_n * db_1
        a_2, a_1, b_2, b_1 = a_1, numerator, b_1, denominator
        da_2, da_1, db_2, db_1 = da_1, d_numerator, db_1, d_denominator
        ratio = numerator / denominator
        new = k * (ratio * dk + (d_numerator - ratio * d_denominator) / denominator)
        if n >= 3 and abs(new - derivative) <= _TOLERANCE * abs(new):
            return sign * new
        derivative = new
        if abs(a_1) > 1e200 or abs(b_1) > 1e200:  # the convergents are ratios: rescale
            scale = 1e-200
            a_2, a_1, b_2, b_1 = a_2 * scale, a_1 * scale, b_2 * scale, b_1 * scale
            da_2, da_1, db_2, db_1 = da_2 * scale, da_1 * scale, db_2 * scale, db_1 * scale
    return math.nan
