"""exp, expm1 and tanh as arithmetic that LLVM turns into SIMD code.

numba compiles ``np.exp(x)`` over an array to one libm call per element:
its vectorised path (Intel SVML) needs an LLVM that the pip wheels lack, and
LLVM cannot vectorise a loop around an opaque call.  The functions here use
only additions, multiplications, comparisons and bit casts, so the loop
around them becomes vector instructions (4 doubles at a time in the 256-bit
registers LLVM prefers on this AVX-512 machine).

Each is the textbook method, without branches so every lane does the same
work:

- ``exp(x) = 2**k * exp(r)`` with ``k = round(x / ln 2)`` and
  ``r = x - k ln 2`` (|r| <= ln 2 / 2), ``ln 2`` split in two parts so that
  ``k * LN2_HI`` is exact; ``exp(r)`` is its Taylor polynomial to degree 13
  (the first term left out is below 2**-57); ``2**k`` is built from its bits
  in two halves, so that results near overflow round once and subnormal
  ones are NumPy's to an ulp.
- ``expm1`` the same way, as ``2**k * expm1(r) + (2**k - 1)``, which keeps the
  small results that ``exp(x) - 1`` would cancel away.
- ``tanh(|x|) = t / (t + 2)`` with ``t = expm1(2|x|)``, the sign put back with
  ``copysign`` (so ``tanh(-0.0)`` is ``-0.0``); above 20, where tanh is 1.0 in
  float64, |x| is clamped so that ``t`` stays finite.  One Newton step on
  the quotient, with the rounding errors of ``t + 2`` and of the division
  computed exactly, keeps the result within 2 ulp (3 without it).

float32 is computed in float64 and rounded once at the end: every float32
result is then within one ulp (usually exact), at half the lanes per vector.
Integers and complex numbers use numba's own functions.

The generated code calls them as ``vm.exp(x)``.  On an array each runs a
loop of its own over the elements in memory order: LLVM vectorises that loop
when it compiles it alone, which it was seen not to do reliably for numba's
array-expression loops once inlined into a large generated function.  The
argument's own expression (``vm.exp(scores - m)``) is still one fused pass.
A single float takes the same arithmetic where that pays (tanh, expm1) and
libm where it does not (exp).  The python target keeps ``np.exp``.
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
    shifted = x * _LOG2_E + _ROUNDER
    k = _float_to_bits(shifted) - _ROUNDER_BITS         # round(x / ln 2) without a float-to-int conversion
    kf = shifted - _ROUNDER
    r = (x - kf * _LN2_HI) - kf * _LN2_LO
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
def _expm1_reduced(r):
    """exp(r) - 1 for |r| <= ln 2 / 2: r + r**2 * (1/2! + r/3! + ... + r**11/13!), by Horner."""
    q = 1.0 / 6227020800.0
    q = q * r + 1.0 / 479001600.0
    q = q * r + 1.0 / 39916800.0
    q = q * r + 1.0 / 3628800.0
    q = q * r + 1.0 / 362880.0
    q = q * r + 1.0 / 40320.0
    q = q * r + 1.0 / 5040.0
    q = q * r + 1.0 / 720.0
    q = q * r + 1.0 / 120.0
    q = q * r + 1.0 / 24.0
    q = q * r + 1.0 / 6.0
    q = q * r + 0.5
    return r + r * r * q


@register_jitable
def _clamp(x, low, high):
    # written so that a NaN compares false both times and passes through
    x = high if x > high else x
    return low if x < low else x


# ------------------------------------------------------------ float64 kernels
@register_jitable
def exp64(x):
    k, r = _reduce(_clamp(x, _EXP_LOW, _EXP_HIGH))
    return _scaled(1.0 + _expm1_reduced(r), k)


@register_jitable
def expm1_64(x):
    # below -40 expm1 is -1.0 in float64; above 710 it overflows either way
    k, r = _reduce(_clamp(x, -40.0, _EXP_HIGH))
    e = _expm1_reduced(r)
    # 2**k * (1 + e) - 1 = 2**k * e + (2**k - 1), exact but for one rounding while
    # 2**k - 1 is exact (k <= 52); beyond, the - 1 no longer matters
    moderate = _scaled(e, k) + (_scaled(1.0, k) - 1.0)
    large = _scaled(1.0 + e, k) - 1.0
    result = e if k == 0 else (moderate if k <= 52 else large)
    return x if x == 0.0 else result                    # -0.0 stays -0.0


@register_jitable
def tanh64(x):
    magnitude = _clamp(abs(x), 0.0, 20.0)               # tanh(20) is 1.0 in float64; keeps t finite
    t = expm1_64(2.0 * magnitude)
    # q = t / (t + 2), then one Newton step with the rounding errors of the
    # sum and the quotient computed exactly (two-sum, fused multiply-add):
    # without it the two roundings add up to 3 ulp
    total = t + 2.0
    total_error = (2.0 - (total - t)) + (t - (total - (total - t)))
    q = t / total
    residual = _fma(-q, total, t) - q * total_error
    return math.copysign(q + residual / total, x)


# ------------------------------------------- the helpers generated code calls
# Each is its NumPy meaning in plain Python plus the overload numba compiles.
def exp(x):
    return np.exp(x)


def expm1(x):
    return np.expm1(x)


def tanh(x):
    return np.tanh(x)


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


def _overload_for(helper, kernel, numba_function, kernel_for_scalars):
    """float64 arrays through the kernel; float32 ones through it in float64,
    rounded once; integers and complex numbers to numba's own function (its
    result dtypes).  A single float goes to the kernel only where that was
    measured to pay: alone, with nothing to vectorise, libm's exp is faster
    than this one (1.4x in a scalar loop), its tanh and expm1 slower (0.86x, 0.70x)."""
    over_elements = _over_elements(kernel)

    @overload(helper)
    def typed(x):
        value = x.dtype if isinstance(x, types.Array) else x
        if not isinstance(value, types.Float):
            return lambda x: numba_function(x)
        single = value.bitwidth == 32
        if isinstance(x, types.Array):
            dtype = np.float32 if single else np.float64
            return lambda x: over_elements(x, dtype)
        if not kernel_for_scalars:
            return lambda x: numba_function(x)
        if single:
            return lambda x: np.float32(kernel(np.float64(x)))
        return lambda x: kernel(x)
    return over_elements


# by name, the compiled loops (their machine code is checked for vector instructions)
LOOPS = {"exp": _overload_for(exp, exp64, np.exp, kernel_for_scalars=False),
         "expm1": _overload_for(expm1, expm1_64, np.expm1, kernel_for_scalars=True),
         "tanh": _overload_for(tanh, tanh64, np.tanh, kernel_for_scalars=True)}
