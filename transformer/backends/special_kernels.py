"""The special functions of ``transformer.lax`` on one float64, for the compiled targets.

The python target runs scipy.special itself.  numba has ``math.erf``,
``math.erfc`` and ``math.lgamma`` but no digamma, polygamma or inverse error
function, and numba-cuda has the same ``math`` functions; so these are written
here once, in plain Python on scalars, with ``register_jitable`` so that CPU
code (``numba_special``) and CUDA device code (``cuda_lax``) both compile
them.  Each agrees with scipy.special to about 1e-15 relative
(tests/test_special_functions.py measures it), and takes scipy's values at the
poles and edges (digamma(-0.0) = +inf, polygamma(2, 0) = -inf, erf_inv(1) = inf).
"""
from __future__ import annotations

import math

from numba.extending import register_jitable

_TWO_OVER_SQRT_PI = 1.1283791670955126         # erf'(0)


@register_jitable
def erf(x):
    return math.erf(x)


@register_jitable
def erfc(x):
    return math.erfc(x)


@register_jitable
def lgamma(x):
    return math.lgamma(x)


@register_jitable
def erf_inv(x):
    """y with erf(y) = x: Giles's single-precision approximation ("Approximating the erfinv
    function", GPU Computing Gems, 2011), then Halley steps on erf, or on erfc where |x| > 0.5:
    there 1 - |x| is exact and erfc keeps its relative accuracy out in the tail, where erf(y) - |x|
    would be the difference of two numbers close to 1."""
    if not (-1.0 < x < 1.0):
        if x == 1.0:
            return math.inf
        if x == -1.0:
            return -math.inf
        return math.nan                                     # |x| > 1, NaN
    if x == 0.0:
        return x                                            # erf_inv(-0.0) = -0.0
    w = -math.log((1.0 - x) * (1.0 + x))
    if w < 5.0:
        w -= 2.5
        p = 2.81022636e-08
        p = 3.43273939e-07 + p * w
        p = -3.5233877e-06 + p * w
        p = -4.39150654e-06 + p * w
        p = 0.00021858087 + p * w
        p = -0.00125372503 + p * w
        p = -0.00417768164 + p * w
        p = 0.246640727 + p * w
        p = 1.50140941 + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        p = 0.000100950558 + p * w
        p = 0.00134934322 + p * w
        p = -0.00367342844 + p * w
        p = 0.00573950773 + p * w
        p = -0.0076224613 + p * w
        p = 0.00943887047 + p * w
        p = 1.00167406 + p * w
        p = 2.83297682 + p * w
    a = abs(x)
    y = p * a
    # Halley's step for f(y) = erf(y) - a, f' = 2/sqrt(pi) exp(-y^2), f'' = -2 y f': y -= d / (1 + y d)
    # with d = f / f'.  The start is good to ~1e-7 (to ~10% as 1 - |x| nears 1e-16, where Giles's
    # float fit is extrapolated); each step about cubes the error, so after a step below 1e-8 of y
    # the error is below rounding: two steps, seven at most (1 - |x| = 2^-53).
    for _ in range(10):
        if a <= 0.5:
            residual = math.erf(y) - a
        else:
            residual = (1.0 - a) - math.erfc(y)
        d = residual / (_TWO_OVER_SQRT_PI * math.exp(-y * y))
        step = d / (1.0 + y * d)
        y -= step
        if abs(step) <= 1e-8 * y:
            break
    return math.copysign(y, x)


# psi(x) near its positive root x0, where psi(x + n) - (1/x + ... + 1/(x + n - 1)) would lose
# its leading digits: psi(x0) (at x0 rounded to a double) and the Taylor coefficients
# psi^(k)(x0) / k! = (-1)^(k+1) zeta(k + 1, x0), k = 1..16 (from mpmath, 50 digits)
_DIGAMMA_ROOT = 1.4616321449683622
_DIGAMMA_AT_ROOT = -9.2412655217294275e-17
_DIGAMMA_TAYLOR_AT_ROOT = (
    0.9676722454476212, -0.4427631689835922, 0.2584997609556511, -0.16394270544240658,
    0.10782405069126241, -0.07219956125645474, 0.04880428816414313, -0.033161126474847376,
    0.022597648232218118, -0.01542476590494897, 0.010538791616612184, -0.007204534386356875,
    0.004926781395729858, -0.0033698016554393312, 0.00230512632673493, -0.001576936771430199,
)
_NEAR_ROOT = 0.1        # |x - x0| below which the Taylor series is used (its 17th term is < 1e-17 there)


@register_jitable
def digamma(x):
    """psi(x) = Gamma'(x) / Gamma(x): reflection for x < 0 (psi(x) = psi(1 - x) - pi cot(pi x)),
    the Taylor series near the positive root, else the recurrence psi(x) = psi(x + 1) - 1/x up
    to x >= 10 and the asymptotic series there."""
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == 0.0:
        return math.copysign(math.inf, -x)                  # scipy: psi(+0) = -inf, psi(-0) = +inf
    reflection = 0.0
    if x < 0.0:
        nearest = math.floor(x)
        if x == nearest:
            return math.nan                                 # a pole
        if x - nearest > 0.5:
            nearest += 1.0
        # cot(pi x) has period 1: r = x - (the nearest integer) is exact and |r| <= 1/2, so pi * r
        # keeps x's digits (x - floor(x) would round away those of a tiny x)
        r = x - nearest
        reflection = -math.pi / math.tan(math.pi * r)
        x = 1.0 - x
    if abs(x - _DIGAMMA_ROOT) < _NEAR_ROOT:
        t = x - _DIGAMMA_ROOT                               # exact (Sterbenz)
        series = 0.0
        for k in range(len(_DIGAMMA_TAYLOR_AT_ROOT) - 1, -1, -1):
            series = (series + _DIGAMMA_TAYLOR_AT_ROOT[k]) * t
        return reflection + (_DIGAMMA_AT_ROOT + series)
    shifted = 0.0
    while x < 10.0:
        shifted -= 1.0 / x
        x += 1.0
    if x == math.inf:
        return math.inf
    # log x - 1/(2x) - sum B_2k / (2k x^2k), k = 1..8: the ninth term is below 1e-18 for x >= 10
    z = 1.0 / (x * x)
    tail = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (
        1.0 / 132 - z * (691.0 / 32760 - z * (1.0 / 12 - z * (3617.0 / 8160))))))))
    return reflection + (shifted + (math.log(x) - 0.5 / x - tail))


# B_2j / (2j)!, j = 1..10: the Euler-Maclaurin tail of the Hurwitz zeta function
_ZETA_TAIL = (
    1.0 / 12, -1.0 / 720, 1.0 / 30240, -1.0 / 1209600, 1.0 / 47900160, -691.0 / 1307674368000,
    1.0 / 74724249600, -3617.0 / 10670622842880000, 43867.0 / 5109094217170944000,
    -174611.0 / 802857662698291200000,
)


@register_jitable
def polygamma(n, x):
    """The n-th derivative of digamma: psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1, the
    Hurwitz zeta function summed directly up to x + k >= 10 + n and by Euler-Maclaurin past it.
    The direct terms 1/(x + k)^(n+1) need no reflection for x < 0 (an integer power of a
    negative number is defined).  NaN for an order that is not a whole number >= 0, as scipy."""
    if n < 0 or n != math.floor(n) or math.isnan(x):
        return math.nan
    if n == 0:
        return digamma(x)
    s = n + 1.0
    sign = 1.0 if n % 2 == 1 else -1.0                      # (-1)^(n+1)
    if x == -math.inf or (x <= 0.0 and x == math.floor(x)):
        return sign * math.inf                              # a pole (scipy's value at -inf too)
    factorial = math.exp(math.lgamma(s))                    # n!
    if factorial == math.inf:
        return sign * math.inf
    # zeta(s, x) = sum_{k<N} (x + k)^-s + a^(1-s)/(s-1) + a^-s/2 + sum_j B_2j/(2j)! (s)_(2j-1) a^(1-s-2j), a = x + N
    start = 10.0 + n
    terms = 0 if x >= start else int(math.ceil(start - x))
    a = x + terms
    if a == math.inf:
        return sign * 0.0
    power = a ** -s                                         # a^-s, then a^(1-s-2j) as j grows
    inverse_square = 1.0 / (a * a)
    rising = s                                              # (s)(s+1)...(s+2j-2)
    correction = 0.0
    term = power * a                                        # a^(1-s)
    for j in range(len(_ZETA_TAIL)):
        term *= inverse_square
        correction += _ZETA_TAIL[j] * rising * term
        rising *= (s + 2 * j + 1) * (s + 2 * j + 2)
    zeta = power * a / (s - 1.0) + 0.5 * power + correction
    for k in range(terms - 1, -1, -1):                      # the smallest terms first
        zeta += (x + k) ** -s
    return sign * factorial * zeta


# ---------------------------------------------------------------------- misc
_SQRT_HALF = 0.7071067811865476
_HALF_LOG_TWO_PI = 0.9189385332046728


@register_jitable
def ndtr(x):
    """The standard normal distribution function, as scipy's: erf near 0, erfc in the tails."""
    t = x * _SQRT_HALF
    if abs(t) < _SQRT_HALF:
        return 0.5 + 0.5 * math.erf(t)
    tail = 0.5 * math.erfc(abs(t))
    return 1.0 - tail if t > 0.0 else tail


@register_jitable
def log_ndtr(x):
    """log(ndtr(x)): log1p of the small upper tail on the right, the log of erfc in the middle, and
    past x = -20 (where ndtr nears underflow) the asymptotic series of the Mills ratio,
    log ndtr(x) = -x^2/2 - log(-x) - log(2 pi)/2 + log(1 - 1/x^2 + 3/x^4 - 15/x^6 + ...)."""
    if x > -1.0:
        return math.log1p(-0.5 * math.erfc(x * _SQRT_HALF))
    if x > -20.0:
        return math.log(0.5 * math.erfc(-x * _SQRT_HALF))
    inverse_square = 1.0 / (x * x)
    term = 1.0
    series = 1.0
    for k in range(1, 13):
        term *= -(2 * k - 1) * inverse_square
        series += term
    return -0.5 * x * x - math.log(-x) - _HALF_LOG_TWO_PI + math.log(series)
