"""Branch-free elementary functions that LLVM can SIMD-vectorize inside numba loops.

Numba lowers `math.exp`, `np.sin`, ... to scalar libm calls, which stop the loop
vectorizer: an element loop over them runs at one libm call per element. The functions
here use only arithmetic, integer bit manipulation and `select` instructions, so a loop
calling them is vectorized by LLVM.

Each public function (`exp_f64`, ..., `cos_f32`) is a numba intrinsic: called from
jitted code, it writes its LLVM IR straight into the caller, from a Python function
over `_V`, a value of the IR being built whose operators emit the IEEE instructions
numba would emit for the same source (no fast-math flags). They are not callable from
Python. This is for compile time: as `@njit` functions (earlier versions), each one,
and each helper it called, was a numba dispatcher run through numba's whole pipeline
(type inference of every arithmetic operation alone is about 0.1 ms; then LLVM
optimization, machine code, Python and C wrappers, a cache entry), which with an empty
numba cache cost about 0.7 s for a loop over sin_f64 and 0.2 s for exp_f64. Now nothing
is compiled or cached apart from the caller, where the code ends up in any case (inlined
so that the loop vectorizes): cold and warm first calls are alike, a few tens of ms
above an empty loop (`benchmarks/bench_vecmath.py --compile`).

Accuracy: results are within 1 ulp of NumPy's float64 functions (2 ulp allowed by the
tests); float32 results within 1 ulp of NumPy's float64 result rounded to float32.
Special values (nan, infinities, overflow, underflow to subnormals and zero, signed
zeros) match NumPy. exp, log and log1p have float32 versions in float32 arithmetic
(twice the lanes of float64, about 2x faster); expm1, sin and cos in float32 compute
in float64 with float32-specific shortcuts (fewer terms, one reduction).

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
  exact operations. The two are an `if` over plain arithmetic and table loads (the
  tables are constant globals of the caller's module), which the loop vectorizer
  if-converts (both computed, one selected) while scalar code runs only one. Both
  reductions are accurate on the hardest inputs (the doubles closest to multiples of
  pi/2, |r| ~ 2^-61). The kernels are fdlibm's __kernel_sin /
  __kernel_cos (degree 13 / 14 minimax on [-pi/4, pi/4], error < 2^-58), both
  evaluated and selected by the quadrant q mod 4. The float32 versions reduce every
  input with Payne-Hanek and a two-double table row (82 bits of 2/pi), in float64.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

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
# 1/n! for the Taylor polynomials of exp and expm1 (n! is exact in a double up to 18).
_INVERSE_FACTORIALS = tuple(1.0 / math.factorial(n) for n in range(15))

# exp_f32: the exp scheme in float32 arithmetic; Taylor degree 7 (truncation < 0.1 ulp).
_ROUND_SHIFT_F32 = float(np.float32(12582912.0))  # 1.5 * 2^23
_INV_LN2_F32 = float(np.float32(_INV_LN2))
_LN2_HI_F32 = float(np.float32(0.6931471805599453))
_LN2_LO_F32 = float(np.float32(0.6931471805599453 - float(np.float32(0.6931471805599453))))
_EXP_MIN_F32 = float(np.float32(-104.0))
_EXP_MAX_F32 = float(np.float32(89.0))
_ONE_F32 = float(np.float32(1.0))
_INVERSE_FACTORIALS_F32 = tuple(float(np.float32(c)) for c in _INVERSE_FACTORIALS)

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
_LN2_HI_LOG_F32 = float(np.float32(6.9313812256e-01))
_LN2_LO_LOG_F32 = float(np.float32(9.0580006145e-06))
_LG1_F32 = float(np.float32(0.66666662693))
_LG2_F32 = float(np.float32(0.40000972152))
_LG3_F32 = float(np.float32(0.28498786688))
_LG4_F32 = float(np.float32(0.24279078841))
_HALF_F32 = float(np.float32(0.5))
_TWO_F32 = float(np.float32(2.0))
_TWO25_F32 = float(np.float32(33554432.0))
_MIN_NORMAL_F32 = float(np.float32(1.17549435e-38))
_ZERO_F32 = float(np.float32(0.0))
_INF_F32 = float(np.float32(math.inf))
_NAN_F32 = float(np.float32(math.nan))

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


class _V:
    """A float or integer value in the LLVM IR being built, with Python's operators
    emitting the IEEE instructions numba would (no fast-math flags): + - * / and unary -
    (fadd, fsub, fmul, fdiv; integer add, sub, mul), < <= > >= (ordered compares), & |
    >> << (integers and booleans; >> is arithmetic). Equality is `eq` and `ne` (`ne` is
    unordered, true for nan, like numba's `!=`). Python numbers mixed in become constants
    of the value's type."""

    __slots__ = ("b", "v")

    def __init__(self, b: ir.IRBuilder, v: ir.Value) -> None:
        self.b = b
        self.v = v

    def const(self, c: float) -> _V:
        """The constant c with this value's type."""
        return _V(self.b, ir.Constant(self.v.type, c))

    def _o(self, other: _V | float) -> ir.Value:
        return other.v if isinstance(other, _V) else ir.Constant(self.v.type, other)

    def _is_float(self) -> bool:
        return isinstance(self.v.type, (ir.DoubleType, ir.FloatType))

    def _arithmetic(
        self,
        o: _V | float,
        on_floats: Callable[[ir.Value, ir.Value], ir.Value],
        on_integers: Callable[[ir.Value, ir.Value], ir.Value],
        reflected: bool = False,
    ) -> _V:
        operation = on_floats if self._is_float() else on_integers
        left, right = (self._o(o), self.v) if reflected else (self.v, self._o(o))
        return _V(self.b, operation(left, right))

    def __add__(self, o: _V | float) -> _V:
        return self._arithmetic(o, self.b.fadd, self.b.add)

    def __radd__(self, o: float) -> _V:
        return self._arithmetic(o, self.b.fadd, self.b.add, reflected=True)

    def __sub__(self, o: _V | float) -> _V:
        return self._arithmetic(o, self.b.fsub, self.b.sub)

    def __rsub__(self, o: float) -> _V:
        return self._arithmetic(o, self.b.fsub, self.b.sub, reflected=True)

    def __mul__(self, o: _V | float) -> _V:
        return self._arithmetic(o, self.b.fmul, self.b.mul)

    def __rmul__(self, o: float) -> _V:
        return self._arithmetic(o, self.b.fmul, self.b.mul, reflected=True)

    def __truediv__(self, o: _V | float) -> _V:
        return _V(self.b, self.b.fdiv(self.v, self._o(o)))

    def __neg__(self) -> _V:
        if self._is_float():
            return _V(self.b, self.b.fsub(self._o(-0.0), self.v))
        return _V(self.b, self.b.sub(self._o(0), self.v))

    def _cmp(self, op: str, o: _V | float) -> _V:
        if self._is_float():
            return _V(self.b, self.b.fcmp_ordered(op, self.v, self._o(o)))
        return _V(self.b, self.b.icmp_signed(op, self.v, self._o(o)))

    def __lt__(self, o: _V | float) -> _V:
        return self._cmp("<", o)

    def __le__(self, o: _V | float) -> _V:
        return self._cmp("<=", o)

    def __gt__(self, o: _V | float) -> _V:
        return self._cmp(">", o)

    def __ge__(self, o: _V | float) -> _V:
        return self._cmp(">=", o)

    def eq(self, o: _V | float) -> _V:
        return self._cmp("==", o)

    def ne(self, o: _V | float) -> _V:
        if self._is_float():
            return _V(self.b, self.b.fcmp_unordered("!=", self.v, self._o(o)))
        return self._cmp("!=", o)

    def __and__(self, o: _V | int) -> _V:
        return _V(self.b, self.b.and_(self.v, self._o(o)))

    def __or__(self, o: _V | int) -> _V:
        return _V(self.b, self.b.or_(self.v, self._o(o)))

    def __rshift__(self, o: int) -> _V:
        return _V(self.b, self.b.ashr(self.v, self._o(o)))

    def __lshift__(self, o: int) -> _V:
        return _V(self.b, self.b.shl(self.v, self._o(o)))


def _select(c: _V, a: _V | float, b: _V | float) -> _V:
    """`a if c else b` as an LLVM `select` (no branch: both are computed)."""
    like = a if isinstance(a, _V) else b
    assert isinstance(like, _V)
    return _V(c.b, c.b.select(c.v, like._o(a), like._o(b)))


def _fma(a: _V | float, b: _V | float, c: _V | float) -> _V:
    """a * b + c rounded once (llvm.fma, one instruction on FMA hardware)."""
    like = a if isinstance(a, _V) else b if isinstance(b, _V) else c
    assert isinstance(like, _V)
    return _V(like.b, like.b.fma(like._o(a), like._o(b), like._o(c)))


def _fabs(x: _V) -> _V:
    fabs = x.b.module.declare_intrinsic("llvm.fabs", [x.v.type])
    return _V(x.b, x.b.call(fabs, [x.v]))


def _bits(x: _V) -> _V:
    """The IEEE bit pattern of a float64 (float32) as int64 (int32)."""
    width = 64 if isinstance(x.v.type, ir.DoubleType) else 32
    return _V(x.b, x.b.bitcast(x.v, ir.IntType(width)))


def _from_bits(i: _V) -> _V:
    """The float64 (float32) with IEEE bit pattern `i`, an int64 (int32)."""
    width = i.v.type.width if isinstance(i.v.type, ir.IntType) else 0
    return _V(i.b, i.b.bitcast(i.v, ir.DoubleType() if width == 64 else ir.FloatType()))


def _to_int(x: _V, width: int = 64) -> _V:
    """x truncated toward zero to an integer (fptosi, as numba's np.int64(x))."""
    return _V(x.b, x.b.fptosi(x.v, ir.IntType(width)))


def _to_float(i: _V, double: bool = True) -> _V:
    """The integer i as a float64 (or float32), sitofp."""
    return _V(i.b, i.b.sitofp(i.v, ir.DoubleType() if double else ir.FloatType()))


def _to_f64(x: _V) -> _V:
    return _V(x.b, x.b.fpext(x.v, ir.DoubleType()))


def _to_f32(x: _V) -> _V:
    return _V(x.b, x.b.fptrunc(x.v, ir.FloatType()))


def _widen(i: _V) -> _V:
    """An int32 sign-extended to int64."""
    return _V(i.b, i.b.sext(i.v, ir.IntType(64)))


_FORMATTED_TABLES: dict[str, str] = {}


def _load(table: npt.NDArray[np.float64], name: str, row: _V, column: int) -> _V:
    """table[row, column], from a constant global of the module being built (added at
    the first use in the module; `row` is an int64 inside the table)."""
    b = row.b
    module = b.module
    try:
        glob = module.get_global(name)
    except KeyError:
        array_type = ir.ArrayType(ir.DoubleType(), table.size)
        if name not in _FORMATTED_TABLES:  # formatting the doubles takes ~10 ms
            constant = ir.Constant(array_type, [float(v) for v in table.ravel()])
            _FORMATTED_TABLES[name] = constant.get_reference()
        glob = ir.GlobalVariable(module, array_type, name)
        glob.global_constant = True
        glob.linkage = "internal"
        glob.initializer = ir.FormattedConstant(array_type, _FORMATTED_TABLES[name])
    index = row * table.shape[1] + column
    pointer = b.gep(glob, [ir.Constant(ir.IntType(64), 0), index.v], inbounds=True)
    return _V(b, b.load(pointer))


def _branch(
    c: _V, then: Callable[[], tuple[_V, ...]], otherwise: Callable[[], tuple[_V, ...]]
) -> tuple[_V, ...]:
    """The values of `then()` if c else of `otherwise()`, as an `if` in the IR: the
    loop vectorizer if-converts it (both computed, one selected), while scalar code
    runs only one."""
    with c.b.if_else(c.v) as (then_block, else_block):
        with then_block:
            a = then()
            a_end = c.b.block
        with else_block:
            o = otherwise()
            o_end = c.b.block
    merged: list[_V] = []
    for u, w in zip(a, o):
        phi = c.b.phi(u.v.type)
        phi.add_incoming(u.v, a_end)
        phi.add_incoming(w.v, o_end)
        merged.append(_V(c.b, phi))
    return tuple(merged)


def _elementwise(body: Callable[[_V], _V], dtype: types.Float, name: str) -> Callable[..., Any]:
    """A numba intrinsic computing `body` on one argument converted to `dtype`: called
    from jitted code, it emits body's IR in place (no dispatcher, nothing to compile or
    cache apart from the caller). Not callable from Python."""

    def typer(typingctx: object, x: types.Type) -> tuple[object, _Codegen] | None:
        def codegen(
            context: object, builder: ir.IRBuilder, sig: object, args: Sequence[ir.Value]
        ) -> ir.Value:
            return body(_V(builder, args[0])).v

        if not isinstance(x, (types.Float, types.Integer)):
            return None
        return dtype(dtype), codegen

    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = body.__doc__
    return intrinsic(typer)


def _horner(r: _V, coefficients: Sequence[float]) -> _V:
    """c0 + r (c1 + r (c2 + ... + r c_n)) for `coefficients` c0..c_n, evaluated from the
    innermost bracket out (Horner's scheme)."""
    p = coefficients[-2] + r * coefficients[-1]
    for coefficient in reversed(coefficients[:-2]):
        p = coefficient + r * p
    return p


def _exp_f64(x: _V) -> _V:
    """e^x for float64."""
    xc = _select(x > _EXP_MIN, x, _EXP_MIN)
    xc = _select(xc < _EXP_MAX, xc, _EXP_MAX)
    kf = (xc * _INV_LN2 + _ROUND_SHIFT) - _ROUND_SHIFT  # round to nearest
    r = _fma(-kf, _LN2_LO, xc - kf * _LN2_HI)
    p = _horner(r, _INVERSE_FACTORIALS[2:14])
    e = 1.0 + (r + r * r * p)
    # 2^k as 2^(k//2) * 2^(k - k//2) from exponent bits: each factor is normal for k
    # in [-1076, 1024].
    k = _to_int(kf)
    k1 = k >> 1
    y = e * _from_bits((k1 + 1023) << 52) * _from_bits((k - k1 + 1023) << 52)
    return _select(x.ne(x), x, y)


def _expm1_f64(x: _V) -> _V:
    """e^x - 1 for float64."""
    xc = _select(x > _EXPM1_MIN, x, _EXPM1_MIN)
    xc = _select(xc < _EXP_MAX, xc, _EXP_MAX)
    kf = (xc * _INV_LN2 + _ROUND_SHIFT) - _ROUND_SHIFT
    # r + rl = xc - k ln2 to about 2^-100 (the cancellation in the sum below needs it).
    hi = xc - kf * _LN2_HI
    t = kf * _LN2_LO
    r = hi - t
    rl = ((hi - r) - t) - _fma(kf, _LN2_LO, -t)
    p = _horner(r, _INVERSE_FACTORIALS[2:15])
    # expm1(r + rl) = em + eml, as a double-double.
    q = r * r * p
    em = r + q
    eml = ((r - em) + q) + rl * (1.0 + r)
    k = _to_int(kf)
    # k < 56: 2^k (em + eml) + (2^k - 1) summed exactly but for the last rounding;
    # 2^k - 1 is exact for k >= -53 and rounds to -1 below.
    # k >= 56: (em + 1) 2^k = e^x, the -1 is below its ulp.
    two_k = _from_bits((_select(k < 56, k, 56) + 1023) << 52)
    a = two_k - 1.0
    b = two_k * em
    s = a + b  # s + e = a + b exactly (two-sum)
    v = s - a
    e = (a - (s - v)) + (b - v)
    small = s + (e + two_k * eml)
    k1 = k >> 1
    big = (em + 1.0) * _from_bits((k1 + 1023) << 52) * _from_bits((k - k1 + 1023) << 52)
    y = _select(k < 56, small, big)
    # x == 0 keeps the sign of zero; nan propagates.
    return _select(x.ne(x) | x.eq(0.0), x, y)


def _log_f64(x: _V) -> _V:
    """Natural logarithm for float64."""
    sub = x < _MIN_NORMAL
    xs = _select(sub, x * _TWO54, x)
    t = _bits(xs) - _SQRT_HALF_BITS
    dk = _to_float((t >> 52) - _select(sub, t.const(54), 0))
    f = _from_bits(_bits(xs) - ((t >> 52) << 52)) - 1.0
    # log(2^k (1+f) + c) for 1+f in [sqrt(1/2), sqrt(2)) and a small correction c
    # (fdlibm's log1p formula, c = 0 here).
    hfsq = 0.5 * f * f
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (_LG2 + w * (_LG4 + w * _LG6))
    t2 = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7)))
    y = s * (hfsq + t1 + t2) + (dk * _LN2_LO + 0.0) - hfsq + f + dk * _LN2_HI
    y = _select(x < _INF, y, x)
    y = _select(x > 0.0, y, _select(x.eq(0.0), x.const(-_INF), _NAN))
    return _select(x.ne(x), x, y)


def _log1p_f64(x: _V) -> _V:
    """log(1 + x) for float64."""
    u = 1.0 + x
    t = _bits(u) - _SQRT_HALF_BITS
    k = t >> 52
    m = _from_bits(_bits(u) - (k << 52))
    # c: the rounding error of u = 1 + x, relative to u (fdlibm).
    c = _select(k >= 2, 1.0 - (u - x), x - (u - 1.0)) / u
    f = _select(k.eq(0), x, m - 1.0)
    c = _select(k.eq(0), 0.0, c)
    dk = _to_float(k)
    hfsq = 0.5 * f * f
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (_LG2 + w * (_LG4 + w * _LG6))
    t2 = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7)))
    y = s * (hfsq + t1 + t2) + (dk * _LN2_LO + c) - hfsq + f + dk * _LN2_HI
    y = _select(x < _INF, y, x)
    y = _select(x > -1.0, y, _select(x.eq(-1.0), x.const(-_INF), _NAN))
    return _select(x.ne(x) | x.eq(0.0), x, y)


def _cody_waite(x: _V) -> tuple[_V, _V, _V]:
    """(rh, rl, q) with x = q pi/2 + rh + rl, |rh + rl| <~ pi/4, for |x| < TRIG_LIMIT."""
    qh = _to_float(_to_int(x * _TWO_OVER_PI_2M24)) * _TWO24
    ql = (_fma(x, _TWO_OVER_PI, -qh) + _ROUND_SHIFT) - _ROUND_SHIFT
    # qh, ql have at most 21 and 25 significant bits: every product below is exact.
    # sh + sl accumulates x - (qh + ql) pi/2 with error-free two-sums.
    sh, sl = _two_sum(_fma(-qh, _PIO2_A, x), -ql * _PIO2_A)
    for part in (-qh * _PIO2_B, -ql * _PIO2_B, -qh * _PIO2_C, -ql * _PIO2_C, -qh * _PIO2_D):
        sh, e = _two_sum(sh, part)
        sl += e
    sh, e = _two_sum(sh, -ql * _PIO2_D)
    sl += e - (qh + ql) * _PIO2_E
    rh = sh + sl
    rl = (sh - rh) + sl
    return rh, rl, _to_int(ql)


def _two_sum(a: _V, b: _V) -> tuple[_V, _V]:
    """s + e = a + b exactly, s = fl(a + b) (Knuth)."""
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


def _mod4(v: _V) -> _V:
    """v minus the nearest multiple of 4, in [-2, 2] (exact), for |v| < 2^62."""
    w = v * 0.25
    t = _to_float(_to_int(w))
    d = w - t
    k = t + _select(d > 0.5, 1.0, _select(d < -0.5, v.const(-1.0), 0.0))
    return v - 4.0 * k


def _payne_hanek(x: _V) -> tuple[_V, _V, _V]:
    """(rh, rl, q) with x = q pi/2 + rh + rl (mod 2 pi), |rh + rl| <~ pi/4, for finite
    |x| >= TRIG_LIMIT (any input is safe, others give meaningless results).

    With x = M 2^E: M T0 = h0 + l0 exactly (fma); M T1 = h1 + l1; then integer parts
    are removed with exact operations, and the fraction kept as a double-double."""
    bits = _bits(_fabs(x))
    row = (bits >> 52) - (1075 + _PH_MIN_E)
    row = _select(row > 0, row, 0)
    row = _select(row < _PH_MAX_E - _PH_MIN_E, row, _PH_MAX_E - _PH_MIN_E)
    m = _to_float((bits & _MANTISSA_MASK) | 0x0010000000000000)
    t0 = _load(_PH_TABLE, "vecmath.ph_table", row, 0)
    t1 = _load(_PH_TABLE, "vecmath.ph_table", row, 1)
    t2 = _load(_PH_TABLE, "vecmath.ph_table", row, 2)
    h0 = m * t0
    l0 = _fma(m, t0, -h0)
    h1 = m * t1
    l1 = _fma(m, t1, -h1)
    h2 = m * t2
    tail = _fma(m, t2, -h2) + m * _load(_PH_TABLE, "vecmath.ph_table", row, 3)
    # h0 mod 4 in [-2, 2] and l0 are multiples of 2^-51, so their sum is exact.
    c, ce = _two_sum(_mod4(h0) + l0, h1)
    c = _mod4(c)
    q = (c + _ROUND_SHIFT) - _ROUND_SHIFT
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
    qi = _to_int(q)
    return _select(neg, -rh, rh), _select(neg, -rl, rl), _select(neg, -qi, qi)


def _kernels(x: _V, y: _V | float) -> tuple[_V, _V]:
    """(sin, cos) of x + y for |x + y| <= pi/4, y a tail of x (fdlibm __kernel_sin and
    __kernel_cos)."""
    z = x * x
    w = z * z
    r = _S2 + z * (_S3 + z * _S4) + z * w * (_S5 + z * _S6)
    v = z * x
    s = x - ((z * (0.5 * y - v * r) - y) - v * _S1)
    r = z * (_C1 + z * (_C2 + z * _C3)) + w * w * (_C4 + z * (_C5 + z * _C6))
    hz = 0.5 * z
    v = 1.0 - hz
    c = v + (((1.0 - v) - hz) + (z * r - x * y))
    return s, c


def _quadrant(s: _V, c: _V, q: _V) -> _V:
    """sin(x) from sin and cos of its reduced argument and its quadrant q mod 4."""
    y = _select((q & 1).eq(0), s, c)
    return _select((q & 2).eq(0), y, -y)


def _sin_f64(x: _V) -> _V:
    """Sine for float64."""
    rh, rl, q = _branch(_fabs(x) < TRIG_LIMIT, lambda: _cody_waite(x), lambda: _payne_hanek(x))
    s, c = _kernels(rh, rl)
    y = _select(_fabs(x) < _INF, _quadrant(s, c, q), x - x)
    return _select(x.eq(0.0), x, y)


def _cos_f64(x: _V) -> _V:
    """Cosine for float64."""
    rh, rl, q = _branch(_fabs(x) < TRIG_LIMIT, lambda: _cody_waite(x), lambda: _payne_hanek(x))
    s, c = _kernels(rh, rl)
    return _select(_fabs(x) < _INF, _quadrant(s, c, q + 1), x - x)


def _exp_f32(x: _V) -> _V:
    """e^x for float32, in float32 arithmetic (twice the lanes of float64)."""
    xc = _select(x > _EXP_MIN_F32, x, _EXP_MIN_F32)
    xc = _select(xc < _EXP_MAX_F32, xc, _EXP_MAX_F32)
    kf = (xc * _INV_LN2_F32 + _ROUND_SHIFT_F32) - _ROUND_SHIFT_F32
    r = _fma(-kf, _LN2_LO_F32, _fma(-kf, _LN2_HI_F32, xc))
    p = _horner(r, _INVERSE_FACTORIALS_F32[2:8])
    e = _ONE_F32 + (r + r * r * p)
    k = _to_int(kf, 32)
    k1 = k >> 1
    y = e * _from_bits((k1 + 127) << 23) * _from_bits((k - k1 + 127) << 23)
    return _select(x.ne(x), x, y)


def _expm1_f32(x: _V) -> _V:
    """e^x - 1 for float32, in float64 without expm1_f64's double-doubles: Taylor
    degree 8 (truncation < 2^-32) and 2^k expm1(r) + (2^k - 1) are good to about 1/200
    of a float32 ulp before the final rounding."""
    xd = _to_f64(x)
    xc = _select(xd > _EXPM1_MIN_F32, xd, _EXPM1_MIN_F32)
    xc = _select(xc < _EXPM1_MAX_F32, xc, _EXPM1_MAX_F32)
    kf = (xc * _INV_LN2 + _ROUND_SHIFT) - _ROUND_SHIFT
    r = _fma(-kf, _LN2_LO, xc - kf * _LN2_HI)
    p = _horner(r, _INVERSE_FACTORIALS[2:9])
    two_k = _from_bits((_to_int(kf) + 1023) << 52)
    y = _to_f32(two_k * (r + r * r * p) + (two_k - 1.0))
    return _select(x.ne(x) | x.eq(0.0), x, y)


def _log_f32(x: _V) -> _V:
    """Natural logarithm for float32, in float32 arithmetic (musl logf)."""
    sub = x < _MIN_NORMAL_F32
    xs = _select(sub, x * _TWO25_F32, x)
    t = _bits(xs) - _SQRT_HALF_BITS_F32
    dk = _to_float((t >> 23) - _select(sub, t.const(25), 0), double=False)
    f = _from_bits(_bits(xs) - ((t >> 23) << 23)) - _ONE_F32
    hfsq = _HALF_F32 * f * f
    s = f / (_TWO_F32 + f)
    z = s * s
    w = z * z
    r = z * (_LG1_F32 + w * _LG3_F32) + w * (_LG2_F32 + w * _LG4_F32)
    y = s * (hfsq + r) + (dk * _LN2_LO_LOG_F32 + _ZERO_F32) - hfsq + f + dk * _LN2_HI_LOG_F32
    y = _select(x < _INF_F32, y, x)
    y = _select(x > _ZERO_F32, y, _select(x.eq(_ZERO_F32), x.const(-_INF_F32), _NAN_F32))
    return _select(x.ne(x), x, y)


def _log1p_f32(x: _V) -> _V:
    """log(1 + x) for float32, in float32 arithmetic (musl log1pf)."""
    u = _ONE_F32 + x
    t = _bits(u) - _SQRT_HALF_BITS_F32
    k = t >> 23
    m = _from_bits(_bits(u) - (k << 23))
    c = _select(k >= 2, _ONE_F32 - (u - x), x - (u - _ONE_F32)) / u
    f = _select(k.eq(0), x, m - _ONE_F32)
    c = _select(k.eq(0), _ZERO_F32, c)
    dk = _to_float(k, double=False)
    hfsq = _HALF_F32 * f * f
    s = f / (_TWO_F32 + f)
    z = s * s
    w = z * z
    r = z * (_LG1_F32 + w * _LG3_F32) + w * (_LG2_F32 + w * _LG4_F32)
    y = s * (hfsq + r) + (dk * _LN2_LO_LOG_F32 + c) - hfsq + f + dk * _LN2_HI_LOG_F32
    y = _select(x < _INF_F32, y, x)
    y = _select(x > -_ONE_F32, y, _select(x.eq(-_ONE_F32), x.const(-_INF_F32), _NAN_F32))
    return _select(x.ne(x) | x.eq(_ZERO_F32), x, y)


def _reduce_f32(x: _V) -> tuple[_V, _V]:
    """(r, q) with x = q pi/2 + r (mod 2 pi), |r| <~ pi/4, to float64 precision, for
    every finite float32 (Payne-Hanek with a two-double row; meaningless for inf, nan)."""
    bits = _widen(_bits(_fabs(x)))
    biased = bits >> 23
    mantissa = bits & _MANTISSA_MASK_F32
    m = _to_float(_select(biased.eq(0), mantissa, mantissa | 0x800000))
    row = _select(biased > 0, biased, 1) - (150 + _PH32_MIN_E)
    row = _select(row < _PH32_MAX_E - _PH32_MIN_E, row, _PH32_MAX_E - _PH32_MIN_E)
    t1 = _load(_PH32_TABLE, "vecmath.ph32_table", row, 1)
    h1 = m * t1
    c, ce = _two_sum(_mod4(m * _load(_PH32_TABLE, "vecmath.ph32_table", row, 0)), h1)
    c = _mod4(c)
    q = (c + _ROUND_SHIFT) - _ROUND_SHIFT
    f = (c - q) + (ce + _fma(m, t1, -h1))
    r = f * _PIO2_HI
    neg = x < _ZERO_F32
    qi = _to_int(q)
    return _select(neg, -r, r), _select(neg, -qi, qi)


def _sin_f32(x: _V) -> _V:
    """Sine for float32: float32-specific reduction, fdlibm kernels in float64."""
    r, q = _reduce_f32(x)
    s, c = _kernels(r, 0.0)
    y = _select(_fabs(x) < _INF_F32, _to_f32(_quadrant(s, c, q)), x - x)
    return _select(x.eq(_ZERO_F32), x, y)


def _cos_f32(x: _V) -> _V:
    """Cosine for float32: float32-specific reduction, fdlibm kernels in float64."""
    r, q = _reduce_f32(x)
    s, c = _kernels(r, 0.0)
    return _select(_fabs(x) < _INF_F32, _to_f32(_quadrant(s, c, q + 1)), x - x)


exp_f64 = _elementwise(_exp_f64, types.float64, "exp_f64")
expm1_f64 = _elementwise(_expm1_f64, types.float64, "expm1_f64")
log_f64 = _elementwise(_log_f64, types.float64, "log_f64")
log1p_f64 = _elementwise(_log1p_f64, types.float64, "log1p_f64")
sin_f64 = _elementwise(_sin_f64, types.float64, "sin_f64")
cos_f64 = _elementwise(_cos_f64, types.float64, "cos_f64")
exp_f32 = _elementwise(_exp_f32, types.float32, "exp_f32")
expm1_f32 = _elementwise(_expm1_f32, types.float32, "expm1_f32")
log_f32 = _elementwise(_log_f32, types.float32, "log_f32")
log1p_f32 = _elementwise(_log1p_f32, types.float32, "log1p_f32")
sin_f32 = _elementwise(_sin_f32, types.float32, "sin_f32")
cos_f32 = _elementwise(_cos_f32, types.float32, "cos_f32")

VECTORIZED_MIN_LENGTH = 16
"""The fewest steps of a loop LLVM's loop vectorizer vectorizes (its tiny trip count
threshold). A shorter loop runs one element at a time, where the functions here lose to
libm's (`LIBM_EQUIVALENTS`): the backend calls libm's in loops of a static length below
it (`body.runs_one_at_a_time`) and, in loops of unknown length likely to be short,
chooses at run time (`nest_lowering`). The 3-state HMM with its gradient: 140 -> 84 us
with its states declared, 161 -> 112 us with every length unknown."""

LIBM_EQUIVALENTS: dict[Any, Any] = {
    exp_f64: np.exp, expm1_f64: np.expm1, log_f64: np.log, log1p_f64: np.log1p,
    sin_f64: np.sin, cos_f64: np.cos, exp_f32: np.exp, expm1_f32: np.expm1,
    log_f32: np.log, log1p_f32: np.log1p, sin_f32: np.sin, cos_f32: np.cos,
}
"""Each function's libm counterpart (NumPy's name, which numba lowers to libm for a
float of the same dtype): faster one element at a time, since it branches on the
argument, where the branch-free polynomial only pays when a loop vectorizes it."""
