"""NumPy and scipy functions that transformer defines with its primitives.

A call to ``np.roll`` in user code is inlined as ``roll`` below, the way a user's
own helper is inlined (``primitives.define`` maps the name to the definition).
Every transform then handles it with the rules of the primitives it calls, so
a definition needs no rules of its own, and its derivatives are right wherever
those primitives' are; jax.numpy defines most of these functions the same way.
``transformer show`` prints the inlined lines with this file's line numbers.

Each definition is written in the subset transformer reads: one ``return``, at
the end.  A branch on a parameter (``if axis is None``, ``if mode == "same"``)
is decided when the caller is specialized, so the parameter must be given a
literal, or left at its default.  Definitions take the keywords of NumPy's
signature that they implement; any other keyword is refused at the user's line.
"""
import numpy as np

from transformer import lax
from transformer.primitives import define

_LN2 = 0.6931471805599453


# ------------------------------------------------------------------ shape and layout
@define("np.roll")
def roll(a, shift, axis=None):
    """Entries shifted ``shift`` places along ``axis`` (the flattened array when None), wrapping
    around; ``shift`` is an int.  A gather, whose derivative scatters back."""
    if axis is None:
        flat = np.ravel(a)
        rolled = np.reshape(flat[(np.arange(flat.shape[0]) - shift) % flat.shape[0]], np.shape(a))
    else:
        moved = np.moveaxis(a, axis, 0)
        rolled = np.moveaxis(moved[(np.arange(moved.shape[0]) - shift) % moved.shape[0]], 0, axis)
    return rolled


@define("np.diff")
def diff(a, n=1, axis=-1):
    """The ``n``-th forward difference along ``axis`` (``n`` a literal: the first two are written
    out, so reverse over reverse needs no tape; a loop takes the rest)."""
    difference = np.moveaxis(a, axis, -1)
    if n >= 1:
        difference = difference[..., 1:] - difference[..., :-1]
    if n >= 2:
        difference = difference[..., 1:] - difference[..., :-1]
    if n > 2:
        for _ in range(n - 2):
            difference = difference[..., 1:] - difference[..., :-1]
    return np.moveaxis(difference, -1, axis)


@define("np.fliplr")
def fliplr(m):
    return np.flip(m, axis=1)


@define("np.flipud")
def flipud(m):
    return np.flip(m, axis=0)


@define("np.rot90")
def rot90(m, k=1, axes=(0, 1)):
    """``m`` turned by ``k`` quarter turns (a literal int) from the first of ``axes`` towards the
    second: one turn flips the second axis and swaps the two, as NumPy's does."""
    if k % 4 == 1:
        rotated = np.swapaxes(np.flip(m, axis=axes[1]), axes[0], axes[1])
    elif k % 4 == 2:
        rotated = np.flip(np.flip(m, axis=axes[0]), axis=axes[1])
    elif k % 4 == 3:
        rotated = np.flip(np.swapaxes(m, axes[0], axes[1]), axis=axes[1])
    else:
        rotated = m
    return rotated


@define("np.tril")
def tril(m, k=0):
    """The entries on and below the ``k``-th diagonal of the last two axes; zeros above."""
    below = np.arange(m.shape[-2])[:, None] + k >= np.arange(m.shape[-1])[None, :]
    return np.where(below, m, np.zeros_like(m))


@define("np.triu")
def triu(m, k=0):
    """The entries on and above the ``k``-th diagonal of the last two axes; zeros below."""
    above = np.arange(m.shape[-2])[:, None] + k <= np.arange(m.shape[-1])[None, :]
    return np.where(above, m, np.zeros_like(m))


@define("np.cross")
def cross(a, b):
    """The cross product of 3-vectors along the last axis, broadcasting the others.  Each component
    is placed by a 0/1 unit vector, not by np.stack, whose derivative's pieces vmap cannot batch."""
    first = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    second = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    third = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    component = np.arange(3)
    return np.expand_dims(first, -1) * (component == 0) + np.expand_dims(second, -1) * (component == 1) + \
        np.expand_dims(third, -1) * (component == 2)


# ------------------------------------------------------------------ elementwise
@define("np.logaddexp2")
def logaddexp2(x1, x2):
    """log2(2**x1 + 2**x2), through np.logaddexp in natural units (no overflow)."""
    return np.logaddexp(x1 * _LN2, x2 * _LN2) / _LN2


@define("np.sinc")
def sinc(x):
    """sin(pi x) / (pi x), 1 at 0.  Near 0 it is its Maclaurin series, whose derivatives of every
    order are right at 0 (where sin(pi x) / (pi x) would divide 0 by 0)."""
    near_zero = np.abs(x) < 1e-3
    safe = np.where(near_zero, 1.0, x) * np.pi
    squared = (x * np.pi) ** 2
    series = 1.0 - squared / 6.0 + squared * squared / 120.0
    return np.where(near_zero, series, np.sin(safe) / safe)


@define("np.heaviside")
def heaviside(x1, x2):
    """0 below 0, 1 above, ``x2`` at 0; no derivative in ``x1``."""
    return np.where(x1 < 0, 0.0, np.where(x1 > 0, 1.0, x2))


@define("np.isclose")
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    close = np.logical_or(a == b, np.abs(a - b) <= atol + rtol * np.abs(b))
    if equal_nan:
        close = np.logical_or(close, np.logical_and(np.isnan(a), np.isnan(b)))
    return close


@define("np.allclose")
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return np.all(isclose(a, b, rtol, atol, equal_nan))


# ------------------------------------------------------------------ reductions
@define("np.count_nonzero")
def count_nonzero(a, axis=None, keepdims=False):
    return np.sum(a != 0, axis=axis, keepdims=keepdims)


@define("np.ptp")
def ptp(a, axis=None, keepdims=False):
    """The range, max - min (each extremum's derivative as np.max's: split between ties)."""
    return np.max(a, axis=axis, keepdims=keepdims) - np.min(a, axis=axis, keepdims=keepdims)


@define("np.nansum")
def nansum(a, axis=None, keepdims=False):
    """The sum of the entries that are not NaN; NaNs get a zero derivative."""
    return np.sum(np.where(np.isnan(a), 0.0, a), axis=axis, keepdims=keepdims)


@define("np.nanmean")
def nanmean(a, axis=None, keepdims=False):
    counted = np.sum(np.logical_not(np.isnan(a)), axis=axis, keepdims=keepdims)
    return nansum(a, axis, keepdims) / counted


@define("np.nanmax")
def nanmax(a, axis=None, keepdims=False):
    """The largest entry that is not NaN (-inf where every entry is NaN, where NumPy warns and
    returns NaN)."""
    return np.max(np.where(np.isnan(a), -np.inf, a), axis=axis, keepdims=keepdims)


@define("np.nanmin")
def nanmin(a, axis=None, keepdims=False):
    """The smallest entry that is not NaN (inf where every entry is NaN, where NumPy warns and
    returns NaN)."""
    return np.min(np.where(np.isnan(a), np.inf, a), axis=axis, keepdims=keepdims)


def trapezoid_sampled(y, x, dx=1.0, axis=-1):
    """np.trapezoid with sample points ``x``: 1-D, or shaped as ``y``."""
    moved = np.moveaxis(y, axis, -1)
    pairs = (moved[..., 1:] + moved[..., :-1]) / 2.0
    # a 1-D x along any axis (moving a 1-D array's axis 0 to -1 changes nothing), or y's shape
    spacing = x if axis == -1 else np.moveaxis(x, axis, -1)
    return np.sum(pairs * (spacing[..., 1:] - spacing[..., :-1]), axis=-1)


@define("np.trapezoid", "np.trapz", when_given={"x": trapezoid_sampled})
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The trapezoidal rule along ``axis`` with a constant spacing ``dx`` (trapezoid_sampled when
    the call gives sample points ``x``)."""
    moved = np.moveaxis(y, axis, -1)
    return np.sum((moved[..., 1:] + moved[..., :-1]) / 2.0, axis=-1) * dx


@define("np.polyval")
def polyval(p, x):
    """p[0] x**(n-1) + ... + p[n-1], by Horner's rule (p's derivative too: it is a loop over p)."""
    value = np.zeros_like(x * p[0])
    for coefficient in p:
        value = value * x + coefficient
    return value


# ------------------------------------------------------------------ statistics
def _observations(m, rowvar):
    """``m`` as a 2-D array of variables by observations, as np.cov reads it."""
    if rowvar:
        table = np.reshape(m, (-1, m.shape[-1]))
    else:
        table = np.transpose(np.reshape(m, (m.shape[0], -1)))
    return table


def _variables(m, rowvar):
    """The shape of ``m``'s variables axis: () for a 1-D ``m``, (k,) for k variables."""
    return np.shape(m)[:-1] if rowvar else np.shape(m)[1:]


def _covariance(m, rowvar, bias, ddof):
    table = _observations(m, rowvar)
    centred = table - np.mean(table, axis=1, keepdims=True)
    correction = (0 if bias else 1) if ddof is None else ddof
    return (centred @ np.transpose(centred)) / (table.shape[1] - correction)


@define("np.cov")
def cov(m, rowvar=True, bias=False, ddof=None):
    """The covariance matrix of the rows (the columns if not ``rowvar``) of ``m``.  A 1-D ``m`` is
    one variable and gives a 0-d result, as in NumPy.  NumPy also squeezes a 2-D ``m`` holding one
    variable to 0-d; here it stays 1 x 1, because the result's rank must follow from ``m``'s rank
    alone (numba and vmap fix it before seeing a shape)."""
    return np.reshape(_covariance(m, rowvar, bias, ddof), _variables(m, rowvar) + _variables(m, rowvar))


@define("np.corrcoef")
def corrcoef(x, rowvar=True):
    """Pearson correlation coefficients, clipped to [-1, 1] as NumPy's are (shaped as cov's)."""
    covariance = _covariance(x, rowvar, False, None)
    index = np.arange(covariance.shape[0])
    scale = np.sqrt(covariance[index, index])
    correlation = np.clip(covariance / scale[:, None] / scale[None, :], -1.0, 1.0)
    return np.reshape(correlation, _variables(x, rowvar) + _variables(x, rowvar))


# ------------------------------------------------------------------ convolution
@define("np.convolve")
def convolve(a, v, mode="full"):
    """The discrete linear convolution of two 1-D arrays: entry i of the full result is
    sum_k a[i - k] v[k], a gather of ``a`` into an (n + m - 1) x m matrix times ``v`` (no loop, so
    derivatives of every order need no tape)."""
    n = a.shape[0]
    m = v.shape[0]
    shift = np.arange(n + m - 1)[:, None] - np.arange(m)[None, :]
    inside = np.logical_and(shift >= 0, shift < n)
    gathered = np.reshape(a[np.ravel(np.clip(shift, 0, n - 1))], (n + m - 1, m))
    full = np.where(inside, gathered, np.zeros_like(gathered)) @ v
    if mode == "full":
        out = full
    elif mode == "same":
        start = (min(n, m) - 1) // 2
        out = full[start:start + max(n, m)]
    else:   # "valid"
        out = full[min(n, m) - 1:max(n, m)]
    return out


@define("np.correlate")
def correlate(a, v, mode="valid"):
    """The cross-correlation of two real 1-D arrays: the convolution with ``v`` reversed."""
    return convolve(a, v[::-1], mode)


# ------------------------------------------------------------------ scipy.special
def _logsumexp(a, axis, b, keepdims):
    """log(sum(b * exp(a))); the unweighted form passes b = 1.0."""
    if axis is None:
        peak = lax.stop_gradient(np.max(a))
        peak = np.where(np.isfinite(peak), peak, 0.0)
        result = np.log(np.sum(b * np.exp(a - peak), keepdims=keepdims)) + peak
    else:
        peak = lax.stop_gradient(np.max(a, axis=axis, keepdims=True))
        peak = np.where(np.isfinite(peak), peak, 0.0)
        result = np.log(np.sum(b * np.exp(a - peak), axis=axis, keepdims=True)) + peak
        if not keepdims:
            result = np.squeeze(result, axis=axis)
    return result


def logsumexp_weighted(a, axis=None, b=None, keepdims=False):
    """scipy.special.logsumexp with weights ``b`` (which may be negative only where the weighted sum
    stays positive: the sign is not returned)."""
    return _logsumexp(a, axis, b, keepdims)


@define("scipy.special.logsumexp", when_given={"b": logsumexp_weighted})
def logsumexp(a, axis=None, b=None, keepdims=False):
    """log(sum(exp(a))) over ``axis``, shifted by the (non-differentiated) maximum so that exp never
    overflows: the shift cancels, so the derivative is exactly softmax's."""
    return _logsumexp(a, axis, 1.0, keepdims)


@define("scipy.special.expit")
def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x)), written so that exp never overflows."""
    decay = np.exp(np.where(x >= 0, -x, x))     # exp(-|x|), with -|x|'s derivative everywhere
    return np.where(x >= 0, 1.0 / (1.0 + decay), decay / (1.0 + decay))


@define("scipy.special.logit")
def logit(p):
    return np.log(p) - np.log1p(-p)


@define("scipy.special.xlogy")
def xlogy(x, y):
    """x * log(y), 0 where x == 0 (even where y == 0); its x-derivative at x == 0 is log(y)."""
    return x * np.log(np.where(np.logical_and(x == 0, y == 0), 1.0, y))


@define("scipy.special.xlog1py")
def xlog1py(x, y):
    """x * log1p(y), 0 where x == 0 (even where y == -1)."""
    return x * np.log1p(np.where(np.logical_and(x == 0, y == -1), 0.0, y))


@define("scipy.special.softmax")
def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) over ``axis`` (every entry when None, as scipy's)."""
    if axis is None:
        shifted = np.exp(x - lax.stop_gradient(np.max(x)))
        result = shifted / np.sum(shifted)
    else:
        shifted = np.exp(x - lax.stop_gradient(np.max(x, axis=axis, keepdims=True)))
        result = shifted / np.sum(shifted, axis=axis, keepdims=True)
    return result


@define("scipy.special.log_softmax")
def log_softmax(x, axis=None):
    if axis is None:
        shifted = x - lax.stop_gradient(np.max(x))
        result = shifted - np.log(np.sum(np.exp(shifted)))
    else:
        shifted = x - lax.stop_gradient(np.max(x, axis=axis, keepdims=True))
        result = shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    return result


# ------------------------------------------------------------------ linalg2
from transformer import runtime as rt  # noqa: E402  (rt.svd: the reduced decomposition's primitive)

@define("np.linalg.svd")
def svd(a, full_matrices=True, compute_uv=True):
    """NumPy's svd by its literal keywords: the singular values alone (compute_uv=False:
    np.linalg.svdvals), the reduced decomposition (full_matrices=False: rt.svd, which has
    derivatives) or the complete one (rt.svd_complete: no derivative, as in JAX).  ``hermitian`` is
    not implemented (refused as an unknown keyword)."""
    if not compute_uv:
        result = np.linalg.svdvals(a)
    elif not full_matrices:
        result = rt.svd(a)
    else:
        result = rt.svd_complete(a)
    return result


def _power(base, p):
    """base @ base ... (p >= 1 factors, p a literal int) by repeated squaring, written out for the bits
    of p below 2**8 (no loop: reverse over reverse needs no tape); a loop multiplies on past that."""
    square = base
    if p % 2 == 1:
        result = square
    if p >= 2:
        square = square @ square
    if p // 2 % 2 == 1:
        if p % 2 > 0:
            result = result @ square
        else:
            result = square
    if p >= 4:
        square = square @ square
    if p // 4 % 2 == 1:
        if p % 4 > 0:
            result = result @ square
        else:
            result = square
    if p >= 8:
        square = square @ square
    if p // 8 % 2 == 1:
        if p % 8 > 0:
            result = result @ square
        else:
            result = square
    if p >= 16:
        square = square @ square
    if p // 16 % 2 == 1:
        if p % 16 > 0:
            result = result @ square
        else:
            result = square
    if p >= 32:
        square = square @ square
    if p // 32 % 2 == 1:
        if p % 32 > 0:
            result = result @ square
        else:
            result = square
    if p >= 64:
        square = square @ square
    if p // 64 % 2 == 1:
        if p % 64 > 0:
            result = result @ square
        else:
            result = square
    if p >= 128:
        square = square @ square
    if p // 128 % 2 == 1:
        if p % 128 > 0:
            result = result @ square
        else:
            result = square
    if p >= 256:
        high = square @ square
        for _ in range(p // 256 - 1):
            high = high @ (square @ square)
        if p % 256 > 0:
            result = result @ high
        else:
            result = high
    return result


@define("np.linalg.matrix_power")
def matrix_power(a, n):
    """a to the literal int power ``n`` (a matrix or a stack): the identity for 0, repeated squaring of
    a for n > 0 and of np.linalg.inv(a) for n < 0."""
    if n == 0:
        rows = np.arange(np.shape(a)[-1])
        result = np.zeros_like(a) + (np.expand_dims(rows, -1) == rows)
    elif n > 0:
        result = _power(a, n)
    else:
        result = _power(np.linalg.inv(a), 0 - n)
    return result
