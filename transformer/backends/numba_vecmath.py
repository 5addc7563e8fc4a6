"""exp, expm1, tanh, sin, cos and log as arithmetic that LLVM turns into SIMD code.

numba compiles ``np.exp(x)`` over an array to one libm call per element:
its vectorised path (Intel SVML) needs an LLVM that the pip wheels lack, and
LLVM cannot vectorise a loop around an opaque call.  The functions here use
only additions, multiplications, fused multiply-adds, comparisons and bit
casts, so the loop around them becomes vector instructions (4 doubles at a
time in the 256-bit registers LLVM prefers on this AVX-512 machine).

Each is the textbook method, without branches so every lane does the same
work:

- ``exp(x) = 2**k * exp(r)`` with ``k = round(x / ln 2)`` and
  ``r = x - k ln 2`` (|r| <= ln 2 / 2), ``ln 2`` split in two parts so that
  ``k * LN2_HI`` is exact; ``exp(r)`` is its Taylor polynomial to degree 13
  (the first term left out is below 2**-57), summed as ``(1 + r) + r**2 q``
  with the rounding error of ``1 + r`` carried; ``2**k`` is built from its bits
  in two halves, so that results near overflow round once and subnormal
  ones are NumPy's to an ulp.
- ``expm1`` the same way, as ``(2**k - 1) + 2**k r + 2**k r**2 q`` with the
  rounding error of the first sum carried, which keeps the small results that
  ``exp(x) - 1`` would cancel away.
- ``tanh(|x|) = t / (t + 2)`` with ``t = expm1(2|x|)``, the sign put back with
  ``copysign`` (so ``tanh(-0.0)`` is ``-0.0``); above 20, where tanh is 1.0 in
  float64, |x| is clamped so that ``t`` stays finite.  The quotient is ``t``
  times the one reciprocal computed; one Newton step on it, with the rounding
  errors of ``t + 2`` and of the product computed exactly, keeps the result
  within 2 ulp (3 without it).
- ``sin(x)`` and ``cos(x)`` from ``x = k pi/2 + r`` with ``k = round(x * 2/pi)``,
  ``pi/2`` in three parts (the first two short enough that ``k`` times them
  is exact) and ``r`` kept in two words, as ``x`` may lie close to a multiple
  of ``pi/2``.  Both Taylor polynomials are computed (sin's to degree 17,
  cos's to 16) and the quadrant ``k mod 4`` picks one and its sign by a
  select and a sign-bit xor.  The reduction is exact enough up to
  ``|x| = 2e5`` (measured, see ``_TRIG_BOUND``); on an array, the loop notes
  whether any element lies beyond, and a second pass, run only then, redoes
  those with libm.  Within 1 ulp of NumPy (glibc) in every sample tried.
- ``log(x) = e ln 2 + log(m)`` with ``x = m * 2**e``, ``m`` in
  ``[sqrt(0.5), sqrt(2))``, taken apart by bit casts (a subnormal ``x`` is
  first scaled by ``2**54``); ``log(m)`` is ``2 atanh(s)``, ``s = f / (2 + f)``,
  ``f = m - 1``, summed so that the rounded ``s`` only enters a small term;
  ``ln 2`` in the same two parts as for exp.  0, negative numbers, inf and
  NaN by selects at the end.  Within 1 ulp of NumPy.

The polynomials are evaluated by Estrin's scheme in fused multiply-adds
(``_fma``): pairs of terms, then pairs of pairs, joined by powers of the
argument.  Horner's rule, with numba's separate multiplications and
additions, made exp of each element one chain of 25 dependent operations,
and the loop waited on their latency; Estrin's takes three more
multiplications (the powers) for a chain of 7.  The constant term is added
last, by one Horner step: inside Estrin's pairs it would be rounded four
times at its own magnitude, which raised the largest errors of sin and
expm1 (against the exact result, in the samples tried) by 0.09 and 0.18 ulp.

float32 is computed in float64 and rounded once at the end: every float32
result is then within one ulp (usually exact), at half the lanes per vector.
Integers and complex numbers use numba's own functions.

The generated code calls them as ``vm.exp(x)``.  On an array each runs a
loop of its own over the elements in memory order: LLVM vectorises that loop
when it compiles it alone, which it was seen not to do reliably for numba's
array-expression loops once inlined into a large generated function.  The
argument's own expression (``vm.exp(scores - m)``) is still one fused pass.
A single float takes the same arithmetic where that pays (exp, tanh, expm1, sin,
cos) and libm where it does not (log).  The python target keeps ``np.exp``.

Measured on 1e6 float64 (this AVX-512 machine, best of 15, two runs, the
machine shared with other work), against numba's own ``np.f(x)``: exp 4.2x
to 4.4x faster, expm1 8.6x to 9.9x, tanh 7.4x to 10x, sin 11x to 12x, cos
12x, log 3.3x to 3.5x (on [-10, 10], log on (0, 100)); with Horner's rule
each took 1.2x (sin, cos) to 1.6x (exp) its time.  NumPy's own loops,
vectorised by hand, are still faster for exp (0.75 ms against 1.4 ms),
expm1, tanh and log, not for sin and cos (26 ms: libm per element).  On
elements all beyond ``_TRIG_BOUND``, sin takes libm's time and 4% to 5% more.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload, register_jitable


# ---------------------------------------------------------------- bit casts
@intrinsic
def _bits_to_float(typingctx, bits):
    """The float64 whose IEEE bits are the int64 ``bits`` (LLVM bitcast: no instruction)."""
    if bits != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@intrinsic
def _float_to_bits(typingctx, value):
    """The IEEE bits of a float64, as an int64."""
    if value != types.float64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _fma(typingctx, a, b, c):
    """a * b + c rounded once (LLVM's fma intrinsic: one instruction where the CPU has FMA)."""
    if not (a == b == c == types.float64):
        return None

    def codegen(context, builder, signature, args):
        return builder.fma(*args)
    return types.float64(types.float64, types.float64, types.float64), codegen


# ------------------------------------------------------------ range reduction
_LOG2_E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01      # 0x3fe62e42fee00000: 21 trailing zero bits, k * _LN2_HI exact
_LN2_LO = 1.90821492927058770002e-10      # ln 2 - _LN2_HI
_ROUNDER = 6755399441055744.0             # 1.5 * 2**52: adding it rounds to an integer in the low bits
_ROUNDER_BITS = 0x4338000000000000
_EXPONENT_BIAS = 1023
# exp overflows above 709.78 and is 0 below -745.13; clamping a little beyond
# both keeps k in the range where the two halves of 2**k are normal numbers,
# while the products still overflow to inf and underflow to 0 as they should.
_EXP_HIGH = 710.0
_EXP_LOW = -746.0


@register_jitable
def _reduce(x):
    """(k, r) with x = k ln 2 + r, |r| <= ln 2 / 2; x already clamped (a NaN passes through)."""
    # fused, k is x / ln 2 rounded once instead of twice: any nearest integer will do
    shifted = _fma(x, _LOG2_E, _ROUNDER)
    k = _float_to_bits(shifted) - _ROUNDER_BITS         # round(x / ln 2) without a float-to-int conversion
    kf = shifted - _ROUNDER
    # x - k * _LN2_HI is exact (the product is, and x is within a factor 2 of
    # it), so the fma returns that same difference; the second fma rounds
    # once where a product and a difference rounded twice
    r = _fma(-kf, _LN2_LO, _fma(-kf, _LN2_HI, x))
    return k, r


@register_jitable
def _power_of_two(k):
    """2.0 ** k for -1022 <= k <= 1023, from its exponent bits."""
    return _bits_to_float((k + _EXPONENT_BIAS) << 52)


@register_jitable
def _scaled(value, k):
    """value * 2**k rounded once, for |k| up to twice the exponent range."""
    half = k >> 1
    return value * _power_of_two(half) * _power_of_two(k - half)


@register_jitable
def _expm1_series(r):
    """(r**2, q) with exp(r) - 1 = r + r**2 q for |r| <= ln 2 / 2:
    q = 1/2! + r/3! + ... + r**11/13!, all but its 1/2 by Estrin's scheme."""
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    p01 = _fma(1.0 / 24.0, r, 1.0 / 6.0)
    p23 = _fma(1.0 / 720.0, r, 1.0 / 120.0)
    p45 = _fma(1.0 / 40320.0, r, 1.0 / 5040.0)
    p67 = _fma(1.0 / 3628800.0, r, 1.0 / 362880.0)
    p89 = _fma(1.0 / 479001600.0, r, 1.0 / 39916800.0)
    p03 = _fma(p23, r2, p01)
    p47 = _fma(p67, r2, p45)
    p810 = _fma(1.0 / 6227020800.0, r2, p89)
    tail = _fma(p810, r8, _fma(p47, r4, p03))
    return r2, _fma(r, tail, 0.5)


@register_jitable
def _exp_reduced(r):
    """exp(r) for |r| <= ln 2 / 2, as (1 + r) + r**2 q with the rounding error of
    1 + r added to the small term: 1 + expm1(r), rounded twice, was up to 0.95 ulp
    from the exact result, this up to 0.77 (NumPy's: 0.69)."""
    r2, q = _expm1_series(r)
    head = 1.0 + r
    head_error = (1.0 - head) + r                       # exact: 1 >= |r|
    return head + _fma(r2, q, head_error)


@register_jitable
def _clamp(x, low, high):
    # written so that a NaN compares false both times and passes through
    x = high if x > high else x
    return low if x < low else x


# ------------------------------------------------------- sin and cos: quadrants
_TWO_OVER_PI = 0.6366197723675814
# pi/2 in three parts.  The first two end in zero bits (31 and 32 significant
# bits), so k times either is exact while |k| <= 2**21; the third is a full
# double, whose product with k only feeds the low word.
_PIO2_1 = 1.5707963267341256              # 0x3ff921fb54400000
_PIO2_2 = 6.077100506303966e-11           # 0x3dd0b4611a600000
_PIO2_3 = 2.0222662487959506e-21          # 0x3ba3198a2e037073
# What the three leave out of pi/2, 1.0e-37, times k is the error that grows
# with x.  It matters at the doubles nearest a multiple of pi/2, where sin or
# cos is tiny: there it stays below a quarter ulp of the result up to
# |x| = 2.2e5, passes one ulp at 3.2e5 and was measured at 10 ulp at 1.7e6
# (the doubles nearest every multiple of pi/2 up to 2**21 were tried).  Above
# _TRIG_BOUND the array helpers hand the element to libm, whose reduction
# takes as many bits of 2/pi as the argument needs.
_TRIG_BOUND = 2e5


@register_jitable
def _two_sum(a, b):
    """(s, t) with s = a + b rounded and s + t = a + b exactly, whichever of the two is larger."""
    s = a + b
    b_part = s - a
    return s, (a - (s - b_part)) + (b - b_part)


@register_jitable
def _reduce_quarter_turns(x):
    """(k, hi, lo) with x = k pi/2 + hi + lo, |hi| about pi/4 at most and lo below
    an ulp of hi, to well within an ulp of the result while |x| <= _TRIG_BOUND."""
    shifted = _fma(x, _TWO_OVER_PI, _ROUNDER)             # k rounded once: any nearest integer will do
    k = _float_to_bits(shifted) - _ROUNDER_BITS
    kf = shifted - _ROUNDER
    # exact: k * _PIO2_1 is, and x is within a unit of it, on the same grid of
    # 2**-53; the fma returns that exact difference too
    r = _fma(-kf, _PIO2_1, x)
    # x may lie within 1e-10 of a multiple of pi/2, so the rest is kept in two words
    hi, lo = _two_sum(r, -(kf * _PIO2_2))
    hi, lo = _two_sum(hi, _fma(-kf, _PIO2_3, lo))
    return k, hi, lo


@register_jitable
def _sin_reduced(hi, lo):
    """sin(hi + lo) for |hi| <= pi/4 and lo tiny: Taylor to degree 17 (the first term
    left out is below 2**-62 of the result), lo entering through its derivative cos(hi)."""
    z = hi * hi
    z2 = z * z
    z4 = z2 * z2
    p01 = _fma(-1.0 / 5040.0, z, 1.0 / 120.0)
    p23 = _fma(-1.0 / 39916800.0, z, 1.0 / 362880.0)
    p45 = _fma(-1.0 / 1307674368000.0, z, 1.0 / 6227020800.0)
    tail = _fma(_fma(1.0 / 355687428096000.0, z2, p45), z4, _fma(p23, z2, p01))
    q = _fma(z, tail, -1.0 / 6.0)
    # lo is below an ulp of hi: of cos(hi), its factor, 1 - z/2 is all that shows
    return hi + _fma(hi * z, q, _fma(-0.5 * z, lo, lo))


@register_jitable
def _cos_reduced(hi, lo):
    """cos(hi + lo) for |hi| <= pi/4 and lo tiny: Taylor to degree 16 (the first term
    left out is below 2**-58 of the result).  1 - hi**2 / 2, most of the result, is
    carried exactly (an fma for the square's rounding error, a two-sum for the
    difference): rounded as it goes, a quarter of the results on [0, pi/4] were an
    ulp off NumPy's, against 0.3% this way."""
    z = hi * hi
    z_error = _fma(hi, hi, -z)                          # hi**2 = z + z_error
    half = 0.5 * z
    head = 1.0 - half
    head_error = (1.0 - head) - half                    # exact: 1 >= half
    z2 = z * z
    z4 = z2 * z2
    p01 = _fma(-1.0 / 720.0, z, 1.0 / 24.0)
    p23 = _fma(-1.0 / 3628800.0, z, 1.0 / 40320.0)
    p46 = _fma(1.0 / 20922789888000.0, z2, _fma(-1.0 / 87178291200.0, z, 1.0 / 479001600.0))
    q = _fma(p46, z4, _fma(p23, z2, p01))
    # the three small terms first, below an ulp of the result, then z**2 q
    small = _fma(-hi, lo, _fma(-0.5, z_error, head_error))
    return head + _fma(z2, q, small)


@register_jitable
def _sin_of_quadrant(k, hi, lo):
    """sin(k pi/2 + hi + lo): k's low bit picks the sine or the cosine of the
    remainder and its second bit the sign, as selects and a sign-bit xor, so
    every lane does the same work."""
    s = _sin_reduced(hi, lo)
    c = _cos_reduced(hi, lo)
    value = c if (k & 1) != 0 else s
    return _bits_to_float(_float_to_bits(value) ^ ((k & 2) << 62))


# ----------------------------------------------------------- log: the mantissa
_SQRT_HALF_BITS = 0x3fe6a09e667f3bcd      # sqrt(0.5): mantissas are taken in [sqrt(0.5), sqrt(2))
_MANTISSA_MASK = (1 << 52) - 1
_SMALLEST_NORMAL = 2.2250738585072014e-308
_TWO_TO_54 = 18014398509481984.0


@register_jitable
def _log1p_reduced(f):
    """log(1 + f) less f, for 1 + f in [sqrt(0.5), sqrt(2)).

    With s = f / (2 + f), log(1 + f) = 2 atanh(s) = 2s + s R, where
    R = 2 (s**2/3 + s**4/5 + ...) to s**20 (s**2 <= 0.0295: the first term left
    out is below 2**-60 of the result).  As 2s = f - s f and s f = h - s h with
    h = f**2 / 2, the result is f - (h - s (h + R)): s, rounded twice, only
    enters a term a twentieth of the result, and f is exact."""
    s = f / (2.0 + f)
    z = s * s
    z2 = z * z
    z4 = z2 * z2
    z8 = z4 * z4
    p01 = _fma(2.0 / 5.0, z, 2.0 / 3.0)
    p23 = _fma(2.0 / 9.0, z, 2.0 / 7.0)
    p45 = _fma(2.0 / 13.0, z, 2.0 / 11.0)
    p67 = _fma(2.0 / 17.0, z, 2.0 / 15.0)
    p89 = _fma(2.0 / 21.0, z, 2.0 / 19.0)
    q = _fma(p89, z8, _fma(_fma(p67, z2, p45), z4, _fma(p23, z2, p01)))
    half_square = 0.5 * f * f
    return _fma(s, _fma(z, q, half_square), -half_square)


# ------------------------------------------------------------ float64 kernels
@register_jitable
def exp64(x):
    k, r = _reduce(_clamp(x, _EXP_LOW, _EXP_HIGH))
    return _scaled(_exp_reduced(r), k)


@register_jitable
def expm1_64(x):
    # below -40 expm1 is -1.0 in float64; above 710 it overflows either way
    k, r = _reduce(_clamp(x, -40.0, _EXP_HIGH))
    r2, q = _expm1_series(r)
    e = _fma(r2, q, r)
    # 2**k (1 + expm1(r)) - 1 = (2**k - 1) + 2**k r + 2**k r**2 q: while k <= 52,
    # 2**k - 1 is exact (beyond, the - 1 no longer matters) and 2**k is normal
    # (k >= -58), so multiplying by it is exact.  The first two terms are summed
    # with their rounding error (a fast two-sum, as |2**k - 1| >= |2**k r| for
    # k != 0; the fma sees the exact difference and product) before the small
    # third joins: rounding expm1(r) first was up to 1.9 ulp from the exact
    # result, this up to 1.4
    power = _power_of_two(k)
    less_one = power - 1.0
    head = _fma(power, r, less_one)
    head_error = _fma(power, r, less_one - head)
    moderate = head + _fma(power * r2, q, head_error)
    large = _scaled(1.0 + e, k) - 1.0
    result = e if k == 0 else (moderate if k <= 52 else large)
    return x if x == 0.0 else result                    # -0.0 stays -0.0


@register_jitable
def tanh64(x):
    magnitude = _clamp(abs(x), 0.0, 20.0)               # tanh(20) is 1.0 in float64; keeps t finite
    t = expm1_64(2.0 * magnitude)
    # q = t / (t + 2), then one Newton step with the rounding errors of the
    # sum and the quotient computed exactly (two-sum, fused multiply-add):
    # without it the two roundings add up to 3 ulp.  The one division is the
    # reciprocal, which both the quotient and the step's correction multiply:
    # a second division cost 13% of the loop's time (128x256 elements), and
    # the largest error, against tanh in 80-bit long double, stayed 1.67 ulp
    total = t + 2.0
    total_error = (2.0 - (total - t)) + (t - (total - (total - t)))
    reciprocal = 1.0 / total
    q = t * reciprocal
    # the fma rounds t - q * total once, an error some 2**-53 times the
    # correction's own size, far below q's last bit
    residual = _fma(-q, total_error, _fma(-q, total, t))
    return math.copysign(q + residual * reciprocal, x)


@register_jitable
def sin64(x):
    k, hi, lo = _reduce_quarter_turns(x)
    result = _sin_of_quadrant(k, hi, lo)
    # inf and nan come out nan (inf - inf in the reduction)
    return x if x == 0.0 else result                    # -0.0 stays -0.0


@register_jitable
def cos64(x):
    k, hi, lo = _reduce_quarter_turns(x)
    return _sin_of_quadrant(k + 1, hi, lo)              # cos(x) = sin(x + pi/2)


@register_jitable
def log64(x):
    # subnormals scaled up by 2**54 first, so that the exponent field holds all of e
    tiny = x < _SMALLEST_NORMAL
    scaled = x * _TWO_TO_54 if tiny else x
    # x = m * 2**e, m in [sqrt(0.5), sqrt(2)): measured from sqrt(0.5)'s bits, the
    # bits above the mantissa are e (an arithmetic shift floors) and the rest m's offset
    offset = _float_to_bits(scaled) - _SQRT_HALF_BITS
    e = (offset >> 52) - (54 if tiny else 0)
    f = _bits_to_float((offset & _MANTISSA_MASK) + _SQRT_HALF_BITS) - 1.0   # exact
    ef = _bits_to_float(e + _ROUNDER_BITS) - _ROUNDER   # e as a float, without an int-to-float conversion
    # e * _LN2_HI is exact; the small terms are summed before they meet it
    result = _fma(ef, _LN2_HI, _fma(ef, _LN2_LO, _log1p_reduced(f)) + f)
    result = result if x < np.inf else x               # inf and nan are their own log
    result = -np.inf if x == 0.0 else result
    return np.nan if x < 0.0 else result


# ------------------------------------------- the helpers generated code calls
# Each is its NumPy meaning in plain Python plus the overload numba compiles.
def exp(x):
    return np.exp(x)


def expm1(x):
    return np.expm1(x)


def tanh(x):
    return np.tanh(x)


def sin(x):
    return np.sin(x)


def cos(x):
    return np.cos(x)


def log(x):
    return np.log(x)


def _over_elements(kernel):
    """An njit function applying a float64 kernel to every element of an array.

    It is a function of its own, so LLVM vectorises its loop when it is
    compiled alone, before any inlining into a large generated function
    (where numba's array-expression loops were seen to stay scalar).  The
    loop runs over the elements in memory order: one stride, no broadcasting
    checks.
    """
    # error_model="numpy": no ZeroDivisionError check around tanh's divisions
    # (its divisor is at least 2), whose branch would keep the loop scalar
    @njit(error_model="numpy")
    def over_elements(x, dtype):
        out = np.empty(x.shape, dtype)
        # a copy only for a strided view (and a 0-d array, which it makes 1-d)
        source, target = np.ascontiguousarray(x).reshape(-1), out.reshape(-1)
        for i in range(source.size):
            target[i] = kernel(np.float64(source[i]))
        return out
    return over_elements


def _over_own_elements(kernel):
    """An njit function applying a float64 kernel to every element of a C-ordered float array
    nothing else holds (an array expression's result), in place: no second array."""
    @njit(error_model="numpy")
    def over_own_elements(x):
        flat = x.reshape(-1)
        for i in range(flat.size):
            flat[i] = kernel(np.float64(flat[i]))
        return x
    return over_own_elements


def _over_elements_within(kernel, bound):
    """As _over_elements, for a kernel exact enough only up to ``bound`` in
    magnitude: the loop also says whether any element lies beyond (an
    or-reduction, which vectorises with the rest), so that the pass redoing
    those elements runs only when there are some."""
    @njit(error_model="numpy")
    def over_elements(x, dtype):
        out = np.empty(x.shape, dtype)
        source, target = np.ascontiguousarray(x).reshape(-1), out.reshape(-1)
        beyond = False
        for i in range(source.size):
            value = np.float64(source[i])
            target[i] = kernel(value)
            beyond |= abs(value) > bound
        return out, beyond
    return over_elements


def _libm_beyond(libm_function, bound):
    """An njit function redoing with libm the elements above ``bound`` in magnitude.

    It is a second pass over the output, so that the kernel's loop keeps no
    branch and stays vectorised; for most elements it costs a comparison.
    """
    @njit
    def libm_beyond(x, computed):
        out, beyond = computed
        if beyond:
            source, target = np.ascontiguousarray(x).reshape(-1), out.reshape(-1)
            for i in range(source.size):
                value = np.float64(source[i])
                if abs(value) > bound:                  # inf too, nan either way
                    target[i] = libm_function(value)
        return out
    return libm_beyond


# by the helper's name (vm.exp: "exp"), the compiled loops over elements (their machine code is
# checked for vector instructions)
LOOPS: dict = {}


def _overload_for(helper, kernel, numba_function, kernel_for_scalars, exact_up_to=None):
    """float64 arrays through the kernel; float32 ones through it in float64,
    rounded once; integers and complex numbers to numba's own function (its
    result dtypes).  A single float goes to the kernel only where that was
    measured to pay: alone, with nothing to vectorise, libm's log is faster
    than this one (1.3x in a scalar loop), its exp, tanh, expm1, sin and cos
    slower (0.9x, 0.6x, 0.55x, 0.4x, 0.45x; exp was 1.5x before its polynomial
    was evaluated by Estrin's scheme in fmas).  A kernel exact only up to
    ``exact_up_to`` leaves larger arguments to numba's function (libm).  The
    loop over elements is kept in ``LOOPS``."""
    if exact_up_to is None:
        over_elements, libm_beyond = _over_elements(kernel), None
    else:
        over_elements = _over_elements_within(kernel, exact_up_to)
        libm_beyond = _libm_beyond(numba_function, exact_up_to)

    @overload(helper)
    def typed(x):
        value = x.dtype if isinstance(x, types.Array) else x
        if not isinstance(value, types.Float):
            return lambda x: numba_function(x)
        single = value.bitwidth == 32
        if isinstance(x, types.Array):
            dtype = np.float32 if single else np.float64
            if libm_beyond is not None:
                return lambda x: libm_beyond(x, over_elements(x, dtype))
            return lambda x: over_elements(x, dtype)
        if not kernel_for_scalars:
            return lambda x: numba_function(x)
        if exact_up_to is not None:
            if single:
                return lambda x: np.float32(kernel(np.float64(x)) if abs(x) <= exact_up_to
                                            else numba_function(np.float64(x)))
            return lambda x: kernel(x) if abs(x) <= exact_up_to else numba_function(x)
        if single:
            return lambda x: np.float32(kernel(np.float64(x)))
        return lambda x: kernel(x)
    LOOPS[helper.__name__] = over_elements


def _of_temporary_overload(helper, whole):
    """``helper(x)``, for an ``x`` that is an array expression's new array: the kernel writes over it
    where it is a C-ordered float array of at least one dimension (the result's dtype is then its
    own), else ``whole`` (the helper above) computes it.  The argument's values are not needed
    after: no pass redoes elements beyond a bound, as sin's and cos's would."""
    kernel = {exp: exp64, expm1: expm1_64, tanh: tanh64, log: log64}[whole]
    over_own_elements = _over_own_elements(kernel)

    @overload(helper)
    def typed(x):
        if isinstance(x, types.Array) and isinstance(x.dtype, types.Float) and x.layout == "C" and x.ndim >= 1:
            return lambda x: over_own_elements(x)
        return lambda x: whole(x)


def exp_of_temporary(x):
    return np.exp(x)


def expm1_of_temporary(x):
    return np.expm1(x)


def tanh_of_temporary(x):
    return np.tanh(x)


def log_of_temporary(x):
    return np.log(x)


_overload_for(exp, exp64, np.exp, kernel_for_scalars=True)
_overload_for(expm1, expm1_64, np.expm1, kernel_for_scalars=True)
_overload_for(tanh, tanh64, np.tanh, kernel_for_scalars=True)
_overload_for(sin, sin64, np.sin, kernel_for_scalars=True, exact_up_to=_TRIG_BOUND)
_overload_for(cos, cos64, np.cos, kernel_for_scalars=True, exact_up_to=_TRIG_BOUND)
_overload_for(log, log64, np.log, kernel_for_scalars=False)
for _helper, _whole in ((exp_of_temporary, exp), (expm1_of_temporary, expm1), (tanh_of_temporary, tanh),
                        (log_of_temporary, log)):
    _of_temporary_overload(_helper, _whole)


# ----------------------------------------- sin and cos for vmap's SIMD lanes
# A loop over lanes (cpu_lanes.py) vectorises only without calls in its body,
# so it cannot take the scalar sin's libm branch for |x| > _TRIG_BOUND.  It
# calls the kernel for every lane instead and notes, beside it, whether any
# active lane's argument was beyond the bound (an or-reduction, vectorised
# with the rest); a group of lanes that saw one is computed again, one
# example at a time, by the scalar path.  Within the bound the two paths are
# the same arithmetic, so the results agree to the bit.
def sin_in_range(x):
    return np.sin(x)


def cos_in_range(x):
    return np.cos(x)


def trig_beyond_range(x):
    """Whether sin_in_range / cos_in_range at ``x`` differs from sin / cos (NaN: no)."""
    return abs(x) > _TRIG_BOUND


def _in_range_overload(helper, kernel, numba_function):
    # the types as the scalar overloads above take them: floats to the kernel
    # (float32 through float64, rounded once), anything else to numba's function
    @overload(helper)
    def typed(x):
        if not isinstance(x, types.Float):
            return lambda x: numba_function(x)
        if x.bitwidth == 32:
            return lambda x: np.float32(kernel(np.float64(x)))
        return lambda x: kernel(x)


_in_range_overload(sin_in_range, sin64, np.sin)
_in_range_overload(cos_in_range, cos64, np.cos)


@overload(trig_beyond_range)
def _trig_beyond_range(x):
    return lambda x: abs(x) > _TRIG_BOUND
