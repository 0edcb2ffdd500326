"""Branch-free elementary functions that LLVM can SIMD-vectorize inside numba loops.

Numba lowers `math.exp`, `np.sin`, ... to scalar libm calls, which stop the loop
vectorizer: an element loop over them runs at one libm call per element. The functions
here use only arithmetic, integer bit manipulation and selects (`a if c else b`, which
LLVM turns into `select` instructions), so a loop calling them is inlined and
vectorized by LLVM (numba links every called function into the caller's module).

Accuracy: results are within 1 ulp of NumPy's float64 functions (2 ulp allowed by the
tests); float32 results within 1 ulp of NumPy's float64 result rounded to float32.
Special values (nan, infinities, overflow, underflow to subnormals and zero, signed
zeros) match NumPy. exp, log and log1p have float32 versions in float32 arithmetic
(twice the lanes of float64, about 2x faster); expm1, sin and cos in float32 compute
in float64 with float32-specific shortcuts (fewer terms, one reduction).

All functions are `forceinline` (LLVM `alwaysinline`): LLVM's own inliner declines the
larger ones (expm1, sin, cos), and a loop that calls them does not vectorize.

Schemes:

* exp: x = k ln2 + r with k = round(x/ln2), |r| <= ln2/2; exp(r) by its Taylor
  polynomial of degree 13 (truncation error < 0.05 ulp); 2^k applied as two
  power-of-two factors built from exponent bits, so that 2^1024 overflows and
  results below 2^-1022 round once into subnormals.
* expm1: the same reduction, r kept as a double-double; expm1(r) = r + r^2/2 + ... to
  degree 14 as a double-double; the result is 2^k expm1(r) + (2^k - 1), summed exactly
  but for the last rounding (2^k - 1 is exact for the k where it matters).
* log, log1p: fdlibm / musl scheme: 1+f = m in [sqrt(1/2), sqrt(2)) from the exponent
  bits, log(1+f) = f - f^2/2 + s (f^2/2 + R(s^2)) with s = f/(2+f) and fdlibm's
  degree-14 minimax polynomial R (|error| < 2^-58.45); log1p adds fdlibm's correction
  c/u for the rounding of u = 1+x.
* sin, cos: x = q pi/2 + r, |r| <= pi/4, r as a double-double. For |x| < TRIG_LIMIT =
  2^45, SLEEF's Cody-Waite scheme: q split into a multiple of 2^24 and a remainder,
  pi/2 into five parts, the first four of at most 25 significant bits so that every
  product is exact, summed with error-free double-double additions. Beyond, a
  Payne-Hanek reduction: with x = M 2^E, a table row per E holds the
  212 bits of 2/pi that matter to x 2/pi mod 4, and M times it is reduced mod 4 with
  exact operations. The two are an `if` over plain arithmetic and table loads, which
  the loop vectorizer if-converts (both computed, one selected) while scalar code runs
  only one. Both reductions are accurate on the hardest inputs (the doubles
  closest to multiples of pi/2, |r| ~ 2^-61). The kernels are fdlibm's __kernel_sin /
  __kernel_cos (degree 13 / 14 minimax on [-pi/4, pi/4], error < 2^-58), both
  evaluated and selected by the quadrant q mod 4. The float32 versions reduce every
  input with Payne-Hanek and a two-double table row (82 bits of 2/pi), in float64.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numba
import numpy as np
import numpy.typing as npt
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

_Codegen = Callable[[object, ir.IRBuilder, object, Sequence[ir.Value]], ir.Value]

_INF = math.inf
_NAN = math.nan
# Adding then subtracting 1.5 * 2^52 rounds a double with |v| < 2^51 to an integer.
_ROUND_SHIFT = 6755399441055744.0

# exp / expm1 reduction: ln2 = _LN2_HI + _LN2_LO, _LN2_HI with 32 significant bits
# (fdlibm) so that k * _LN2_HI is exact for |k| < 2^21.
_INV_LN2 = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
# Inputs are clamped to [_EXP_MIN, _EXP_MAX] before the reduction: beyond them exp is
# 0 or inf anyway, and the clamp keeps k in the int64 / exponent-bit range.
_EXP_MIN = -746.0
_EXP_MAX = 710.0
# Below this, expm1(x) rounds to -1 (e^-40 < 2^-54).
_EXPM1_MIN = -40.0
# 1/n! for the Taylor polynomials of exp and expm1.
_F2 = 1.0 / 2.0
_F3 = 1.0 / 6.0
_F4 = 1.0 / 24.0
_F5 = 1.0 / 120.0
_F6 = 1.0 / 720.0
_F7 = 1.0 / 5040.0
_F8 = 1.0 / 40320.0
_F9 = 1.0 / 362880.0
_F10 = 1.0 / 3628800.0
_F11 = 1.0 / 39916800.0
_F12 = 1.0 / 479001600.0
_F13 = 1.0 / 6227020800.0
_F14 = 1.0 / 87178291200.0

# exp_f32: the exp scheme in float32 arithmetic; Taylor degree 7 (truncation < 0.1 ulp).
_ROUND_SHIFT_F32 = np.float32(12582912.0)  # 1.5 * 2^23
_INV_LN2_F32 = np.float32(_INV_LN2)
_LN2_HI_F32 = np.float32(0.6931471805599453)
_LN2_LO_F32 = np.float32(0.6931471805599453 - float(np.float32(0.6931471805599453)))
_EXP_MIN_F32 = np.float32(-104.0)
_EXP_MAX_F32 = np.float32(89.0)
_ONE_F32 = np.float32(1.0)
_F2_F32 = np.float32(_F2)
_F3_F32 = np.float32(_F3)
_F4_F32 = np.float32(_F4)
_F5_F32 = np.float32(_F5)
_F6_F32 = np.float32(_F6)
_F7_F32 = np.float32(_F7)

# expm1_f32 clamps (in float64): below -20 the float32 result is -1; above 89, inf.
_EXPM1_MIN_F32 = -20.0
_EXPM1_MAX_F32 = 89.0

# log / log1p: bit pattern of sqrt(1/2), fdlibm's Lg1..Lg7, 2^54 and the smallest
# normal double (subnormal inputs are scaled by 2^54 first).
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD
_MANTISSA_MASK = 0x000FFFFFFFFFFFFF
_LG1 = 6.666666666666735130e-01
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01
_TWO54 = 18014398509481984.0
_MIN_NORMAL = 2.2250738585072014e-308

# log_f32 / log1p_f32: the log scheme in float32 with musl logf's ln2 split and
# degree-8 minimax polynomial (|error| < 2^-34.24).
_SQRT_HALF_BITS_F32 = 0x3F3504F3
_MANTISSA_MASK_F32 = 0x007FFFFF
_LN2_HI_LOG_F32 = np.float32(6.9313812256e-01)
_LN2_LO_LOG_F32 = np.float32(9.0580006145e-06)
_LG1_F32 = np.float32(0.66666662693)
_LG2_F32 = np.float32(0.40000972152)
_LG3_F32 = np.float32(0.28498786688)
_LG4_F32 = np.float32(0.24279078841)
_HALF_F32 = np.float32(0.5)
_TWO_F32 = np.float32(2.0)
_TWO25_F32 = np.float32(33554432.0)
_MIN_NORMAL_F32 = np.float32(1.17549435e-38)
_ZERO_F32 = np.float32(0.0)
_INF_F32 = np.float32(math.inf)
_NAN_F32 = np.float32(math.nan)

# sin / cos reduction: 2/pi, 2/pi / 2^24, and pi/2 = _PIO2_A + ... + _PIO2_E to 2^-160:
# A, B, C are SLEEF's PI_A, PI_B, PI_C halved, D the next 25 bits, A..D have at most 25
# significant bits so that their products with 25-bit integers are exact.
TRIG_LIMIT = 35184372088832.0  # 2^45
_TWO_OVER_PI = 0.63661977236758134308
_TWO_OVER_PI_2M24 = 0.63661977236758134308 / 16777216.0
_TWO24 = 16777216.0
_PIO2_A = 3.1415926218032836914 / 2.0
_PIO2_B = 3.1786509424591713469e-08 / 2.0
_PIO2_C = 1.2246467864107188502e-16 / 2.0
_PIO2_D = 6.368317055225283e-25
_PIO2_E = 1.082856673921914e-32
# Payne-Hanek reduction for |x| >= TRIG_LIMIT: pi/2 as a double-double and, for each
# exponent E of x = M 2^E (M a 53-bit integer, E >= _PH_MIN_E), the 212 bits of 2/pi
# that matter to x 2/pi mod 4, as four doubles (see _payne_hanek_table).
_PIO2_HI = 1.5707963267948966
_PIO2_LO = 6.123233995736766e-17
_PH_MIN_E = -7
_PH_MAX_E = 971
_PH_BITS = 1400  # bits of 2/pi computed: beyond the last one a row uses (1181)


def _payne_hanek_table(
    min_e: int, max_e: int, widths: tuple[int, ...], from_top: bool
) -> npt.NDArray[np.float64]:
    """Row E - min_e holds T0, T1, ... with T0 + T1 + ... = 2^E 2/pi mod 4 to
    sum(widths) bits, T_i of widths[i] significant bits: x 2/pi = M (T0 + T1 + ...)
    mod 4 for x = M 2^E, since the bits of 2/pi worth 2^(2-E) and more only add
    multiples of 4. T0 starts at the bit worth 2^(1-E) (so that M T0 is a multiple of
    2^(2 - widths[0])), or with from_top at the first bit of 2/pi when that comes later
    (for small E). 2/pi comes from Machin's formula pi = 16 atan(1/5) - 4 atan(1/239)
    in integer arithmetic."""
    scale = _PH_BITS + 64

    def atan_inv(k: int) -> int:  # atan(1/k) 2^scale
        total, term, i = 0, (1 << scale) // k, 0
        while term:
            total += term // (2 * i + 1) if i % 2 == 0 else -(term // (2 * i + 1))
            term //= k * k
            i += 1
        return total

    two_over_pi = (1 << (_PH_BITS + 1 + scale)) // (16 * atan_inv(5) - 4 * atan_inv(239))
    table = np.empty((max_e - min_e + 1, len(widths)))
    for e in range(min_e, max_e + 1):
        # The bits of 2/pi are worth 2^-1, 2^-2, ...; `last` is the last one taken.
        last = (max(e - 1, 1) if from_top else e - 1) - 1
        for i, width in enumerate(widths):
            last += width
            chunk = (two_over_pi >> (_PH_BITS - last)) & ((1 << width) - 1)
            table[e - min_e, i] = math.ldexp(chunk, e - last)
    return table


_PH_TABLE = _payne_hanek_table(_PH_MIN_E, _PH_MAX_E, (53, 53, 53, 53), from_top=False)
# float32: x = M 2^E with M < 2^24 and -149 <= E <= 104; M T0 is exact with 29 bits in
# T0, and 82 bits in all are enough for float32.
_PH32_MIN_E = -149
_PH32_MAX_E = 104
_PH32_TABLE = _payne_hanek_table(_PH32_MIN_E, _PH32_MAX_E, (29, 53), from_top=True)
# fdlibm __kernel_sin and __kernel_cos coefficients.
_S1 = -1.66666666666666324348e-01
_S2 = 8.33333333332248946124e-03
_S3 = -1.98412698298579493134e-04
_S4 = 2.75573137070700676789e-06
_S5 = -2.50507602534068634195e-08
_S6 = 1.58969099521155010221e-10
_C1 = 4.16666666666666019037e-02
_C2 = -1.38888888888741095749e-03
_C3 = 2.48015872894767294178e-05
_C4 = -2.75573143513906633035e-07
_C5 = 2.08757232129817482790e-09
_C6 = -1.13596475577881948265e-11


@intrinsic
def _bits(typingctx: object, x: types.Type) -> tuple[object, _Codegen]:
    """The IEEE bit pattern of a float64, as int64."""

    def codegen(
        context: object, builder: ir.IRBuilder, sig: object, args: Sequence[ir.Value]
    ) -> ir.Value:
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx: object, i: types.Type) -> tuple[object, _Codegen]:
    """The float64 with IEEE bit pattern `i`."""

    def codegen(
        context: object, builder: ir.IRBuilder, sig: object, args: Sequence[ir.Value]
    ) -> ir.Value:
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _bits32(typingctx: object, x: types.Type) -> tuple[object, _Codegen]:
    """The IEEE bit pattern of a float32, as int32."""

    def codegen(
        context: object, builder: ir.IRBuilder, sig: object, args: Sequence[ir.Value]
    ) -> ir.Value:
        return builder.bitcast(args[0], ir.IntType(32))

    return types.int32(types.float32), codegen


@intrinsic
def _from_bits32(typingctx: object, i: types.Type) -> tuple[object, _Codegen]:
    """The float32 with IEEE bit pattern `i`."""

    def codegen(
        context: object, builder: ir.IRBuilder, sig: object, args: Sequence[ir.Value]
    ) -> ir.Value:
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


@intrinsic
def _fma(
    typingctx: object, a: types.Type, b: types.Type, c: types.Type
) -> tuple[object, _Codegen] | None:
    """a * b + c rounded once (llvm.fma, one instruction on FMA hardware), for three
    float64 or three float32."""

    def codegen(
        context: object, builder: ir.IRBuilder, sig: object, args: Sequence[ir.Value]
    ) -> ir.Value:
        return builder.fma(args[0], args[1], args[2])

    if not (isinstance(a, types.Float) and a == b == c):
        return None
    return a(a, b, c), codegen


_jit = numba.njit(cache=True, error_model="numpy", forceinline=True)


@_jit
def _pow2(k: int) -> float:
    """2^k for -1022 <= k <= 1023, from the exponent bits."""
    p: float = _from_bits((k + 1023) << 52)
    return p


@_jit
def _round(v: float) -> float:
    """v rounded to the nearest integer (ties to even), for |v| < 2^51."""
    return (v + _ROUND_SHIFT) - _ROUND_SHIFT


@_jit
def exp_f64(x: float) -> float:
    """e^x for float64."""
    xc = x if x > _EXP_MIN else _EXP_MIN
    xc = xc if xc < _EXP_MAX else _EXP_MAX
    kf = _round(xc * _INV_LN2)
    r = _fma(-kf, _LN2_LO, xc - kf * _LN2_HI)
    p = _F12 + r * _F13
    p = _F11 + r * p
    p = _F10 + r * p
    p = _F9 + r * p
    p = _F8 + r * p
    p = _F7 + r * p
    p = _F6 + r * p
    p = _F5 + r * p
    p = _F4 + r * p
    p = _F3 + r * p
    p = _F2 + r * p
    e = 1.0 + (r + r * r * p)
    # 2^k as 2^(k//2) * 2^(k - k//2): each factor is normal for k in [-1076, 1024].
    k = np.int64(kf)
    k1 = k >> 1
    y = e * _pow2(k1) * _pow2(k - k1)
    return x if x != x else y


@_jit
def _two_sum(a: float, b: float) -> tuple[float, float]:
    """s + e = a + b exactly, s = fl(a + b) (Knuth)."""
    s = a + b
    v = s - a
    e = (a - (s - v)) + (b - v)
    return s, e


@_jit
def expm1_f64(x: float) -> float:
    """e^x - 1 for float64."""
    xc = x if x > _EXPM1_MIN else _EXPM1_MIN
    xc = xc if xc < _EXP_MAX else _EXP_MAX
    kf = _round(xc * _INV_LN2)
    # r + rl = xc - k ln2 to about 2^-100 (the cancellation in the sum below needs it).
    hi = xc - kf * _LN2_HI
    t = kf * _LN2_LO
    r = hi - t
    rl = ((hi - r) - t) - _fma(kf, _LN2_LO, -t)
    p = _F13 + r * _F14
    p = _F12 + r * p
    p = _F11 + r * p
    p = _F10 + r * p
    p = _F9 + r * p
    p = _F8 + r * p
    p = _F7 + r * p
    p = _F6 + r * p
    p = _F5 + r * p
    p = _F4 + r * p
    p = _F3 + r * p
    p = _F2 + r * p
    # expm1(r + rl) = em + eml, as a double-double.
    q = r * r * p
    em = r + q
    eml = ((r - em) + q) + rl * (1.0 + r)
    k = np.int64(kf)
    # k < 56: 2^k (em + eml) + (2^k - 1) summed exactly but for the last rounding;
    # 2^k - 1 is exact for k >= -53 and rounds to -1 below.
    # k >= 56: (em + 1) 2^k = e^x, the -1 is below its ulp.
    ks = k if k < 56 else 56
    two_k = _pow2(ks)
    s, e = _two_sum(two_k - 1.0, two_k * em)
    small = s + (e + two_k * eml)
    k1 = k >> 1
    big = (em + 1.0) * _pow2(k1) * _pow2(k - k1)
    y = small if k < 56 else big
    # x == 0 keeps the sign of zero; nan propagates.
    return x if (x != x) | (x == 0.0) else y


@_jit
def _log_kernel(f: float, dk: float, c: float) -> float:
    """log(2^dk (1+f) + c) for 1+f in [sqrt(1/2), sqrt(2)) and a small correction c
    (fdlibm's log1p formula, also exact-enough for log with c = 0)."""
    hfsq = 0.5 * f * f
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (_LG2 + w * (_LG4 + w * _LG6))
    t2 = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7)))
    y: float = s * (hfsq + t1 + t2) + (dk * _LN2_LO + c) - hfsq + f + dk * _LN2_HI
    return y


@_jit
def log_f64(x: float) -> float:
    """Natural logarithm for float64."""
    sub = x < _MIN_NORMAL
    xs = x * _TWO54 if sub else x
    t = _bits(xs) - _SQRT_HALF_BITS
    k = (t >> 52) - (54 if sub else 0)
    m = _from_bits(_bits(xs) - ((t >> 52) << 52))
    y = _log_kernel(m - 1.0, np.float64(k), 0.0)
    y = y if x < _INF else x
    y = y if x > 0.0 else (-_INF if x == 0.0 else _NAN)
    return x if x != x else y


@_jit
def log1p_f64(x: float) -> float:
    """log(1 + x) for float64."""
    u = 1.0 + x
    t = _bits(u) - _SQRT_HALF_BITS
    k = t >> 52
    m = _from_bits(_bits(u) - (k << 52))
    # c: the rounding error of u = 1 + x, relative to u (fdlibm).
    c = ((1.0 - (u - x)) if k >= 2 else (x - (u - 1.0))) / u
    f = x if k == 0 else m - 1.0
    c = 0.0 if k == 0 else c
    y = _log_kernel(f, np.float64(k), c)
    y = y if x < _INF else x
    y = y if x > -1.0 else (-_INF if x == -1.0 else _NAN)
    return x if (x != x) | (x == 0.0) else y


@_jit
def _reduce_pio2(x: float) -> tuple[float, float, int]:
    """(rh, rl, q) with x = q pi/2 + rh + rl, |rh + rl| <~ pi/4, for |x| < TRIG_LIMIT."""
    qh = np.float64(np.int64(x * _TWO_OVER_PI_2M24)) * _TWO24
    ql = _round(_fma(x, _TWO_OVER_PI, -qh))
    # qh, ql have at most 21 and 25 significant bits: every product below is exact.
    sh, sl = _two_sum(_fma(-qh, _PIO2_A, x), -ql * _PIO2_A)
    sh, e = _two_sum(sh, -qh * _PIO2_B)
    sl += e
    sh, e = _two_sum(sh, -ql * _PIO2_B)
    sl += e
    sh, e = _two_sum(sh, -qh * _PIO2_C)
    sl += e
    sh, e = _two_sum(sh, -ql * _PIO2_C)
    sl += e
    sh, e = _two_sum(sh, -qh * _PIO2_D)
    sl += e
    sh, e = _two_sum(sh, -ql * _PIO2_D)
    sl += e - (qh + ql) * _PIO2_E
    rh = sh + sl
    rl = (sh - rh) + sl
    return rh, rl, int(ql)


@_jit
def _mod4(v: float) -> float:
    """v minus the nearest multiple of 4, in [-2, 2] (exact), for |v| < 2^62."""
    w = v * 0.25
    t = np.float64(np.int64(w))
    d = w - t
    k = t + (1.0 if d > 0.5 else (-1.0 if d < -0.5 else 0.0))
    return v - 4.0 * k


@_jit
def _reduce_large(x: float) -> tuple[float, float, int]:
    """(rh, rl, q) with x = q pi/2 + rh + rl (mod 2 pi), |rh + rl| <~ pi/4, for finite
    |x| >= TRIG_LIMIT (Payne-Hanek; any input is safe, others give meaningless results).

    With x = M 2^E: M T0 = h0 + l0 exactly (fma); M T1 = h1 + l1; then integer parts
    are removed with exact operations, and the fraction kept as a double-double."""
    bits = _bits(abs(x))
    e = (bits >> 52) - 1075
    row = e - _PH_MIN_E
    row = row if row > 0 else 0
    row = row if row < _PH_MAX_E - _PH_MIN_E else _PH_MAX_E - _PH_MIN_E
    m = np.float64((bits & _MANTISSA_MASK) | 0x0010000000000000)
    t0 = _PH_TABLE[row, 0]
    t1 = _PH_TABLE[row, 1]
    h0 = m * t0
    l0 = _fma(m, t0, -h0)
    h1 = m * t1
    l1 = _fma(m, t1, -h1)
    t2 = _PH_TABLE[row, 2]
    h2 = m * t2
    tail = _fma(m, t2, -h2) + m * _PH_TABLE[row, 3]
    # h0 mod 4 in [-2, 2] and l0 are multiples of 2^-51, so their sum is exact.
    c, ce = _two_sum(_mod4(h0) + l0, h1)
    c = _mod4(c)
    q = _round(c)
    f, e1 = _two_sum(c - q, ce)
    f, e2 = _two_sum(f, l1)
    f, e3 = _two_sum(f, h2)
    fl = ((e1 + e2) + e3) + tail
    # (f + fl) pi/2 as a double-double.
    ph = f * _PIO2_HI
    pl = _fma(f, _PIO2_HI, -ph) + (f * _PIO2_LO + fl * _PIO2_HI)
    rh = ph + pl
    rl = (ph - rh) + pl
    neg = x < 0.0
    return (-rh if neg else rh), (-rl if neg else rl), (-int(q) if neg else int(q))


@_jit
def _reduce(x: float) -> tuple[float, float, int]:
    """x = q pi/2 + rh + rl (mod 2 pi): Cody-Waite below TRIG_LIMIT, else Payne-Hanek.
    The branch is plain arithmetic and table loads, which the loop vectorizer if-converts
    (both computed, one selected) while scalar code skips the unneeded one. Meaningless
    for inf and nan."""
    reduced: tuple[float, float, int]
    if abs(x) < TRIG_LIMIT:
        reduced = _reduce_pio2(x)
    else:
        reduced = _reduce_large(x)
    return reduced


@_jit
def _kernel_sin(x: float, y: float) -> float:
    """sin(x + y) for |x + y| <= pi/4, y a tail of x (fdlibm __kernel_sin)."""
    z = x * x
    w = z * z
    r = _S2 + z * (_S3 + z * _S4) + z * w * (_S5 + z * _S6)
    v = z * x
    s: float = x - ((z * (0.5 * y - v * r) - y) - v * _S1)
    return s


@_jit
def _kernel_cos(x: float, y: float) -> float:
    """cos(x + y) for |x + y| <= pi/4, y a tail of x (fdlibm __kernel_cos)."""
    z = x * x
    w = z * z
    r = z * (_C1 + z * (_C2 + z * _C3)) + w * w * (_C4 + z * (_C5 + z * _C6))
    hz = 0.5 * z
    v = 1.0 - hz
    c: float = v + (((1.0 - v) - hz) + (z * r - x * y))
    return c


@_jit
def sin_f64(x: float) -> float:
    """Sine for float64."""
    rh, rl, q = _reduce(x)
    s = _kernel_sin(rh, rl)
    c = _kernel_cos(rh, rl)
    y = s if (q & 1) == 0 else c
    y = y if (q & 2) == 0 else -y
    y = y if abs(x) < _INF else x - x
    return x if x == 0.0 else y


@_jit
def cos_f64(x: float) -> float:
    """Cosine for float64."""
    rh, rl, q = _reduce(x)
    s = _kernel_sin(rh, rl)
    c = _kernel_cos(rh, rl)
    y = c if (q & 1) == 0 else s
    y = y if ((q + 1) & 2) == 0 else -y
    return y if abs(x) < _INF else x - x


@_jit
def exp_f32(x: np.float32) -> np.float32:
    """e^x for float32, in float32 arithmetic (twice the lanes of float64)."""
    xc = x if x > _EXP_MIN_F32 else _EXP_MIN_F32
    xc = xc if xc < _EXP_MAX_F32 else _EXP_MAX_F32
    kf = (xc * _INV_LN2_F32 + _ROUND_SHIFT_F32) - _ROUND_SHIFT_F32
    r = _fma(-kf, _LN2_LO_F32, _fma(-kf, _LN2_HI_F32, xc))
    p = _F6_F32 + r * _F7_F32
    p = _F5_F32 + r * p
    p = _F4_F32 + r * p
    p = _F3_F32 + r * p
    p = _F2_F32 + r * p
    e = _ONE_F32 + (r + r * r * p)
    k = np.int32(kf)
    k1 = k >> 1
    y: np.float32 = e * _from_bits32((k1 + 127) << 23) * _from_bits32((k - k1 + 127) << 23)
    return x if x != x else y


@_jit
def expm1_f32(x: np.float32) -> np.float32:
    """e^x - 1 for float32, in float64 without expm1_f64's double-doubles: Taylor
    degree 8 (truncation < 2^-32) and 2^k expm1(r) + (2^k - 1) are good to about 1/200
    of a float32 ulp before the final rounding."""
    xd = np.float64(x)
    xc = xd if xd > _EXPM1_MIN_F32 else _EXPM1_MIN_F32
    xc = xc if xc < _EXPM1_MAX_F32 else _EXPM1_MAX_F32
    kf = _round(xc * _INV_LN2)
    r = _fma(-kf, _LN2_LO, xc - kf * _LN2_HI)
    p = _F7 + r * _F8
    p = _F6 + r * p
    p = _F5 + r * p
    p = _F4 + r * p
    p = _F3 + r * p
    p = _F2 + r * p
    two_k = _pow2(np.int64(kf))
    y = np.float32(two_k * (r + r * r * p) + (two_k - 1.0))
    return x if (x != x) | (x == _ZERO_F32) else y


@_jit
def _log_kernel_f32(f: np.float32, dk: np.float32, c: np.float32) -> np.float32:
    """_log_kernel in float32 (musl logf / log1pf)."""
    hfsq = _HALF_F32 * f * f
    s = f / (_TWO_F32 + f)
    z = s * s
    w = z * z
    r = z * (_LG1_F32 + w * _LG3_F32) + w * (_LG2_F32 + w * _LG4_F32)
    y: np.float32 = s * (hfsq + r) + (dk * _LN2_LO_LOG_F32 + c) - hfsq + f + dk * _LN2_HI_LOG_F32
    return y


@_jit
def log_f32(x: np.float32) -> np.float32:
    """Natural logarithm for float32, in float32 arithmetic."""
    sub = x < _MIN_NORMAL_F32
    xs = x * _TWO25_F32 if sub else x
    t = _bits32(xs) - np.int32(_SQRT_HALF_BITS_F32)
    k = (t >> 23) - np.int32(25 if sub else 0)
    m = _from_bits32(_bits32(xs) - ((t >> 23) << 23))
    y = _log_kernel_f32(m - _ONE_F32, np.float32(k), _ZERO_F32)
    y = y if x < _INF_F32 else x
    y = y if x > _ZERO_F32 else (-_INF_F32 if x == _ZERO_F32 else _NAN_F32)
    return x if x != x else y


@_jit
def log1p_f32(x: np.float32) -> np.float32:
    """log(1 + x) for float32, in float32 arithmetic."""
    u = _ONE_F32 + x
    t = _bits32(u) - np.int32(_SQRT_HALF_BITS_F32)
    k = t >> 23
    m = _from_bits32(_bits32(u) - (k << 23))
    c = ((_ONE_F32 - (u - x)) if k >= 2 else (x - (u - _ONE_F32))) / u
    f = x if k == 0 else m - _ONE_F32
    c = _ZERO_F32 if k == 0 else c
    y = _log_kernel_f32(f, np.float32(k), c)
    y = y if x < _INF_F32 else x
    y = y if x > -_ONE_F32 else (-_INF_F32 if x == -_ONE_F32 else _NAN_F32)
    return x if (x != x) | (x == _ZERO_F32) else y


@_jit
def _reduce_f32(x: np.float32) -> tuple[float, int]:
    """(r, q) with x = q pi/2 + r (mod 2 pi), |r| <~ pi/4, to float64 precision, for
    every finite float32 (Payne-Hanek with a two-double row; meaningless for inf, nan)."""
    bits = _bits32(abs(x))
    biased = bits >> 23
    m = np.float64(bits & _MANTISSA_MASK_F32 if biased == 0 else (bits & _MANTISSA_MASK_F32) | 0x800000)
    row = (biased if biased > 0 else 1) - 150 - _PH32_MIN_E
    row = row if row < _PH32_MAX_E - _PH32_MIN_E else _PH32_MAX_E - _PH32_MIN_E
    t1 = _PH32_TABLE[row, 1]
    h1 = m * t1
    c, ce = _two_sum(_mod4(m * _PH32_TABLE[row, 0]), h1)
    c = _mod4(c)
    q = _round(c)
    f = (c - q) + (ce + _fma(m, t1, -h1))
    r = f * _PIO2_HI
    neg = x < _ZERO_F32
    return (-r if neg else r), (-int(q) if neg else int(q))


@_jit
def sin_f32(x: np.float32) -> np.float32:
    """Sine for float32: float32-specific reduction, fdlibm kernels in float64."""
    r, q = _reduce_f32(x)
    y = _kernel_sin(r, 0.0) if (q & 1) == 0 else _kernel_cos(r, 0.0)
    y = y if (q & 2) == 0 else -y
    y32: np.float32 = np.float32(y) if abs(x) < _INF_F32 else x - x
    return x if x == _ZERO_F32 else y32


@_jit
def cos_f32(x: np.float32) -> np.float32:
    """Cosine for float32: float32-specific reduction, fdlibm kernels in float64."""
    r, q = _reduce_f32(x)
    y = _kernel_cos(r, 0.0) if (q & 1) == 0 else _kernel_sin(r, 0.0)
    y = y if ((q + 1) & 2) == 0 else -y
    y32: np.float32 = np.float32(y) if abs(x) < _INF_F32 else x - x
    return y32
