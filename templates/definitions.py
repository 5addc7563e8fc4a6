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
from transformer import runtime as rt
from transformer.primitives import define, define_written

_LN2 = 0.6931471805599453


# ------------------------------------------------------------------ shape and layout
@define("np.roll")
def roll(a, shift, axis=None):
    """Entries shifted ``shift`` places along ``axis`` (the flattened array when None), wrapping
    around.  Along axes, ``shift`` and ``axis`` are ints or tuples paired as NumPy pairs them (an int
    with every entry of the other; the shifts of a repeated axis add up).  A gather, whose derivative
    scatters back: the positions it reads are integer arithmetic on flat indices, one pass per pair,
    so that an int and a tuple take the same code (which of the two a call gives is known only when
    numba compiles it)."""
    if axis is None:
        flat = np.ravel(a)
        rolled = np.reshape(flat[(np.arange(flat.shape[0]) - shift) % flat.shape[0]], np.shape(a))
    else:
        shifts, axes = np.broadcast_arrays(np.ravel(np.asarray(shift)), np.ravel(np.asarray(axis)))
        shape = np.asarray(np.shape(a))
        source = np.arange(np.size(a))          # the flat index in ``a`` that each entry is read from
        for k in range(shifts.shape[0]):
            along = axes[k] % np.ndim(a)
            stride = np.prod(shape[along + 1:])
            position = source // stride % shape[along]
            source = source + ((position - shifts[k]) % shape[along] - position) * stride
        rolled = np.reshape(np.ravel(a)[source], np.shape(a))
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


@define("np.delete")
def delete(arr, obj, axis=None):
    """``arr`` without the entries ``obj`` (an int, or an array of ints) names along ``axis`` (of the
    flattened array when None): a gather of the positions kept, whose derivative scatters back."""
    if axis is None:
        moved = np.ravel(arr)
    else:
        moved = np.moveaxis(arr, axis, 0)
    kept = np.ones(moved.shape[0], dtype=np.bool_)
    kept[obj] = False
    rest = moved[np.arange(moved.shape[0])[kept]]
    if axis is not None:
        rest = np.moveaxis(rest, 0, axis)
    return rest


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
    is placed by a 0/1 unit vector, not by np.stack, whose derivative's pieces vmap cannot batch; the
    components are sliced (``a[..., 1:2]``), not indexed, so that 1-D vectors give arrays to place.
    NumPy's 2-vectors (deprecated since NumPy 2.0) are refused when the call runs: two of them give
    the z component alone, a result of another rank, and a vector's length is known only then."""
    # a reshape that keeps the shape of 3-vectors, and raises ValueError for any other length
    a = np.reshape(a, np.shape(a)[:-1] + (3,))
    b = np.reshape(b, np.shape(b)[:-1] + (3,))
    first = a[..., 1:2] * b[..., 2:3] - a[..., 2:3] * b[..., 1:2]
    second = a[..., 2:3] * b[..., 0:1] - a[..., 0:1] * b[..., 2:3]
    third = a[..., 0:1] * b[..., 1:2] - a[..., 1:2] * b[..., 0:1]
    component = np.arange(3)
    return first * (component == 0) + second * (component == 1) + third * (component == 2)


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
    """NumPy's test: equal, or within the tolerance of a finite ``b`` (an infinite ``b`` is close only
    to itself: |a - b| <= rtol |b| would hold for any ``a`` there)."""
    within = np.logical_and(np.isfinite(b), np.abs(a - b) <= atol + rtol * np.abs(b))
    close = np.logical_or(a == b, within)
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
    # a 1-D x lies along y's axis whatever its number (NumPy's), an x of y's shape along ``axis``:
    # the same axis of x for axis -1 or 0; for another, which of the two a call gives is known only
    # when numba compiles it, so that axis of x is chosen at run time (vmap, whose moveaxis takes
    # literal axes, then refuses a batched x)
    if axis == -1:
        spacing = x
    elif axis == 0:
        spacing = np.moveaxis(x, 0, -1)
    else:
        spacing = np.moveaxis(x, axis if np.ndim(x) > 1 else -1, -1)
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
    """The cross-correlation of two real 1-D arrays: the convolution with ``v`` reversed.  NumPy
    correlates the longer array with the shorter and reverses the result, which puts mode="same"'s
    window one place over for an even shorter length: so is it done here."""
    if np.shape(a)[0] < np.shape(v)[0]:
        return convolve(v, a[::-1], mode)[::-1]
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
    stays positive: the sign is not returned).  A term weighted 0 counts for nothing, however large
    its ``a``: it is left out of the shift, as SciPy and JAX leave it (else every other term's
    exponential could underflow to 0)."""
    return _logsumexp(np.where(b != 0, a, -np.inf), axis, b, keepdims)


@define("scipy.special.logsumexp", when_given={"b": logsumexp_weighted})
def logsumexp(a, axis=None, b=None, keepdims=False):
    """log(sum(exp(a))) over ``axis``, shifted by the (non-differentiated) maximum so that exp never
    overflows: the shift cancels, so the derivative is exactly softmax's."""
    return _logsumexp(a, axis, 1.0, keepdims)


@define("scipy.special.multigammaln")
def multigammaln(a, d):
    """The log of the multivariate gamma function: d(d-1)/4 log(pi) + the sum of gammaln(a - j/2)
    for j below ``d`` (a whole number).  NaN where ``a <= (d - 1) / 2``, where scipy raises."""
    total = 0.0 * a + 0.25 * d * (d - 1) * np.log(np.pi)     # a's shape from the start (numba types it once)
    for j in range(d):
        total = total + lax.lgamma(a - 0.5 * j)
    return np.where(a > 0.5 * (d - 1), total, np.nan)


@define("scipy.special.expit")
def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x)): lax.logistic, written so that exp never overflows."""
    return lax.logistic(x)


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


# ------------------------------------------------------------------ layout: tile, repeat, pad, diag...
# Each is a gather, np.ravel(x)[index] (_gathered), with an index array a runtime helper computes from x's shape
# (rt.tile_index...: integer constants to every transform, specialized on x's rank when numba
# compiles them).  The gather's derivative adds every copy's cotangent back into the cell it came
# from (np.add.at), which is what tile's, repeat's and pad's edge/reflect/wrap copies need; under vmap
# the index is the same for every example, so one gather serves the whole batch.

def _gathered(x, index):
    """``np.ravel(x)[index]`` through a 1-D index (what compiled reverse mode's scatter-add takes)."""
    return np.reshape(np.ravel(x)[np.ravel(index)], np.shape(index))


@define("np.tile")
def tile(A, reps):
    """``A`` repeated ``reps`` times along each axis (``reps`` an int or a tuple of them)."""
    return _gathered(A, rt.tile_index(np.shape(A), reps))


@define("np.kron")
def kron(a, b):
    """The Kronecker product: a block of the result for each entry of ``a``, that entry times ``b``
    (the shorter shape padded with ones in front, as NumPy pads it).  Each entry of the result is one
    entry of ``a`` times one of ``b``: two gathers through tables of their positions (rt.kron_index)."""
    return _gathered(a, rt.kron_index(np.shape(a), np.shape(b), 0)) * \
        _gathered(b, rt.kron_index(np.shape(a), np.shape(b), 1))


@define("np.repeat")
def repeat(a, repeats, axis=None):
    """Each entry repeated ``repeats`` times (an int, or one count per entry along ``axis``) along
    ``axis``, or along the flattened array when None."""
    return _gathered(a, rt.repeat_index(np.shape(a), repeats, axis))


@define("np.pad")
def pad(array, pad_width, mode="constant", constant_values=0):
    """``array`` with ``pad_width`` cells added before and after each axis (an int, a (before, after)
    pair, or one pair per axis): the scalar ``constant_values`` there (its derivative is the sum of the
    padded cells' cotangents), or copies of cells ("edge", "reflect", "symmetric", "wrap"), whose
    cotangents add back into the cells copied.  Other modes compute new values and are refused."""
    index = rt.pad_index(np.shape(array), pad_width, mode)
    if mode == "constant":
        padded = np.where(index >= 0, _gathered(array, np.maximum(index, 0)), constant_values)
    else:
        padded = _gathered(array, index)
    return padded


@define("np.diag", numpy_view=True)       # (of a 2-d v; of a 1-d one a new array)
def diag(v, k=0):
    """A 2-D ``v``'s ``k``-th diagonal, or a square matrix with the 1-D ``v`` on its ``k``-th diagonal
    (zeros elsewhere, which carry no derivative)."""
    index = rt.diag_index(np.shape(v), k)
    gathered = _gathered(v, np.maximum(index, 0))
    return np.where(index >= 0, gathered, np.zeros_like(gathered))


@define("np.diagonal", numpy_view=True)
def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal of the ``axis1``, ``axis2`` planes, as the last axis (a copy, not NumPy's
    read-only view)."""
    return _gathered(a, rt.diagonal_index(np.shape(a), offset, axis1, axis2))


@define("np.rollaxis", numpy_view=True)
def rollaxis(a, axis, start=0):
    """``axis`` moved to sit before ``start`` (a copy, not NumPy's view)."""
    return _gathered(a, rt.rollaxis_index(np.shape(a), axis, start))


@define("np.atleast_1d")
def atleast_1d(a):
    return np.reshape(a, rt.atleast_1d_shape(np.shape(a)))


@define("np.atleast_2d")
def atleast_2d(a):
    return np.reshape(a, rt.atleast_2d_shape(np.shape(a)))


@define("np.atleast_3d")
def atleast_3d(a):
    return np.reshape(a, rt.atleast_3d_shape(np.shape(a)))


@define("np.dstack")
def dstack(tup):
    # each array made at least 3-D, then joined along the third axis: a comprehension over the tuple,
    # unrolled when the caller is specialized (its length is known then)
    return np.concatenate([np.atleast_3d(a) for a in tup], axis=2)


@define("np.column_stack")
def column_stack(tup):
    # a 1-D array becomes a column and a 2-D one stays as it is: both are (rows, -1) reshaped, which
    # needs no rank (NumPy takes no other ranks either)
    return np.concatenate([np.reshape(a, (np.shape(a)[0], -1)) for a in tup], axis=1)


def broadcast_arrays3(a, b, c=None):
    shape = rt.broadcast_shape(np.shape(a), np.shape(b), np.shape(c))
    return np.broadcast_to(a, shape), np.broadcast_to(b, shape), np.broadcast_to(c, shape)


@define("np.broadcast_arrays", when_given={"c": broadcast_arrays3})
def broadcast_arrays(a, b, c=None):
    """Two (or three: broadcast_arrays3) arrays broadcast against each other: a tuple, as NumPy's."""
    shape = rt.broadcast_shape(np.shape(a), np.shape(b))
    return np.broadcast_to(a, shape), np.broadcast_to(b, shape)


def meshgrid3(x1, x2, x3=None, indexing="xy"):
    n1 = np.size(x1)
    n2 = np.size(x2)
    n3 = np.size(x3)
    if indexing == "ij":
        grids = (np.copy(np.broadcast_to(np.reshape(x1, (-1, 1, 1)), (n1, n2, n3))),
                 np.copy(np.broadcast_to(np.reshape(x2, (1, -1, 1)), (n1, n2, n3))),
                 np.copy(np.broadcast_to(np.reshape(x3, (1, 1, -1)), (n1, n2, n3))))
    else:
        grids = (np.copy(np.broadcast_to(np.reshape(x1, (1, -1, 1)), (n2, n1, n3))),
                 np.copy(np.broadcast_to(np.reshape(x2, (-1, 1, 1)), (n2, n1, n3))),
                 np.copy(np.broadcast_to(np.reshape(x3, (1, 1, -1)), (n2, n1, n3))))
    return grids


@define("np.meshgrid", when_given={"x3": meshgrid3})
def meshgrid(x1, x2, x3=None, indexing="xy"):
    """Coordinate arrays of two (or three: meshgrid3) arrays, each flattened first as NumPy does:
    "xy" puts the first along axis 1, "ij" along axis 0 (``indexing`` a literal); copies, as NumPy's
    default."""
    n1 = np.size(x1)
    n2 = np.size(x2)
    if indexing == "ij":
        grids = (np.copy(np.broadcast_to(np.reshape(x1, (-1, 1)), (n1, n2))),
                 np.copy(np.broadcast_to(np.reshape(x2, (1, -1)), (n1, n2))))
    else:
        grids = (np.copy(np.broadcast_to(np.reshape(x1, (1, -1)), (n2, n1))),
                 np.copy(np.broadcast_to(np.reshape(x2, (-1, 1)), (n2, n1))))
    return grids


# ----------------------------------------------------------------------------- misc
@define("np.gradient")
def gradient(f, spacing=1.0, axis=None):
    """NumPy's gradient with edge_order=1 and one scalar ``spacing``: central differences inside,
    one-sided ones at the two ends, each entry's neighbours gathered along the first axis (so that every order of
    derivative has rules: no concatenation).  With ``axis=None`` ``f`` must be 1-D (an n-D array,
    whose gradient NumPy gives as a list of arrays, fails to reshape); an n-D ``f`` takes
    ``axis=int``.  Coordinates (an array ``spacing``), several spacings and ``edge_order=2`` are not
    implemented (``edge_order`` is refused as a keyword; an array spacing fails to broadcast)."""
    if axis is None:
        moved = np.reshape(f, (np.shape(f)[0],))
    else:
        moved = np.moveaxis(f, axis, 0)        # a gather along the first axis (compiled reverse mode has it)
    last = np.shape(moved)[0] - 1
    place = np.arange(last + 1)
    steps = np.where(np.logical_and(place > 0, place < last), 2.0, 1.0) * spacing
    change = moved[np.minimum(place + 1, last)] - moved[np.maximum(place - 1, 0)]
    slopes = np.moveaxis(np.moveaxis(change, 0, -1) / steps, -1, 0)
    if axis is not None:
        slopes = np.moveaxis(slopes, 0, axis)
    return slopes


def average_weighted(a, axis=None, weights=None):
    """np.average with ``weights``: the array's shape when ``axis`` is None; with an int ``axis``, 1-D
    weights along it (NumPy's form; weights of the array's shape then fail to broadcast unless its
    other axes have length 1, where the two forms agree)."""
    if axis is None:
        result = np.sum(a * weights) / np.sum(weights)
    else:
        moved = np.moveaxis(a, axis, -1)
        flat_weights = np.reshape(weights, (-1,))
        result = np.sum(moved * flat_weights, axis=-1) / np.sum(flat_weights)
    return result


@define("np.average", when_given={"weights": average_weighted})
def average(a, axis=None, weights=None):
    """The mean over ``axis``; ``returned`` and ``keepdims`` are not implemented (refused as keywords)."""
    return np.mean(a, axis=axis)


@define("np.vander")
def vander(x, N=None, increasing=False):
    """The powers x**0 ... x**(N-1) of a 1-D ``x`` as columns (decreasing unless ``increasing``); ``N`` a
    literal int or left out (len(x)).  The column x**0 is ones and x**1 is x itself, so the first two
    derivatives are exact at x == 0, where jax.numpy's (x ** 0's derivative 0 * 0 ** -1) are NaN."""
    column = np.expand_dims(x, 1)
    if N is None:
        count = np.shape(x)[0]
    else:
        count = N
    power = np.arange(count)
    powers = np.where(power == 0, np.ones_like(column), np.where(power == 1, column, column ** np.maximum(power, 2)))
    if not increasing:
        powers = np.flip(powers, axis=1)
    return powers


@define("np.interp")
def interp(x, xp, fp):
    """Piecewise-linear interpolation of the points (xp, fp) at ``x`` (xp increasing), fp[0] left of
    xp[0] and fp[-1] right of xp[-1] (NumPy's left/right defaults; ``left``, ``right`` and ``period``
    are not implemented).  Written as jax.numpy's: the interval is found by counting the knots at or
    below x (a comparison against every knot, no searchsorted), so the derivative in ``fp`` is the
    interpolation weights, in ``x`` the slope of the interval [xp[i-1], xp[i]) holding x (at a knot
    the slope on its right, at xp[-1] the last interval's, 0 outside: JAX's), and in ``xp`` that of
    the formula within the interval, as JAX's."""
    count = np.sum(np.expand_dims(x, -1) >= xp, axis=-1)
    last = np.shape(xp)[0] - 1
    i = np.reshape(np.clip(count, 1, last), (-1,))          # 1-D indices: compiled reverse mode gathers those
    below = np.reshape(xp[i - 1], np.shape(x))
    run = np.reshape(xp[i], np.shape(x)) - below
    start = np.reshape(fp[i - 1], np.shape(x))
    rise = np.reshape(fp[i], np.shape(x)) - start
    flat = run == 0
    inside = np.where(flat, start, start + (x - below) / np.where(flat, 1.0, run) * rise)
    return np.where(x < xp[0], fp[0], np.where(x > xp[last], fp[last], inside))


# ------------------------------------------------------------------ sorting
# Written with np.sort and getitem, whose rules (templates/sorting.py) send derivatives to the
# entries selected or interpolated from the sorted array.
@define("np.take")
def take(a, indices, axis=None):
    """``a``'s entries at ``indices`` along ``axis`` (of the flattened array when None): a gather,
    whose adjoint adds where indices repeat.  ``axis`` a literal from -4 to 3."""
    if axis is None:
        taken = np.ravel(a)[indices]
    elif axis == 0:
        taken = a[indices]
    elif axis == 1:
        taken = a[:, indices]
    elif axis == 2:
        taken = a[:, :, indices]
    elif axis == 3:
        taken = a[:, :, :, indices]
    elif axis == -1:
        taken = a[..., indices]
    elif axis == -2:
        taken = a[..., indices, :]
    elif axis == -3:
        taken = a[..., indices, :, :]
    elif axis == -4:
        taken = a[..., indices, :, :, :]
    else:   # refused at the user's line with these words (np.sum takes no such keyword)
        taken = np.sum(a, np_take_needs_a_literal_axis_from_minus_4_to_3=axis)
    return taken


def _sorted_first(a, axis):
    """``a`` sorted along ``axis`` (every entry when None), that axis moved first (indexed by
    position there, whose adjoint compiled reverse mode has)."""
    if axis is None:
        ordered = np.sort(np.ravel(a))
    else:
        # whether ``axis`` is an int or a tuple is known only when numba compiles the call, so both
        # take one gather: a row for each place of np.sum(a, axis)'s result, holding the entries
        # reduced into it, each row then sorted
        kept = np.sum(a, axis=axis, keepdims=True)          # (for its shape)
        kept_shape = np.shape(np.sum(kept, axis=axis))
        place = np.reshape(np.arange(np.size(kept)), np.shape(kept))
        grouping = np.argsort(np.ravel(np.broadcast_to(place, np.shape(a))), kind="stable")
        group = np.reshape(np.ravel(a)[grouping], (np.size(place), -1))
        ordered = np.reshape(np.moveaxis(np.sort(group, axis=1), 1, 0), (-1,) + kept_shape)
    return ordered


@define("np.quantile")
def quantile(a, q, axis=None, keepdims=False):
    """NumPy's default ('linear') quantile: at position q (n - 1) of the sorted entries, the two
    neighbours interpolated as NumPy's _lerp does (no other method: ``method=`` is refused).  The
    derivative flows to those two sorted entries with weights 1 - t and t, as JAX's (at a whole
    position, all to one entry; ties share as sort's do).  A NaN along the axis gives NaN."""
    ordered = _sorted_first(a, axis)
    n = ordered.shape[0]
    qs = np.ravel(np.asarray(q))
    position = qs * (n - 1)
    below = np.minimum(np.floor(position), n - 1)
    t = position - below
    low = below.astype(np.int64)
    high = np.minimum(low + 1, n - 1)
    low_value = np.moveaxis(ordered[low], 0, -1)          # the quantiles' axis last: t broadcasts
    high_value = np.moveaxis(ordered[high], 0, -1)
    step = high_value - low_value
    lerp = np.where(t >= 0.5, high_value - step * (1.0 - t), low_value + step * t)
    last = np.moveaxis(ordered[n - 1:], 0, -1)             # NaN where the axis holds one (sorted last)
    result = np.moveaxis(np.where(np.isnan(last), last, lerp), -1, 0)
    if keepdims:
        shape = np.shape(q) + np.shape(np.sum(a, axis=axis, keepdims=True))
    else:
        shape = np.shape(q) + np.shape(result)[1:]
    return np.reshape(result, shape)


@define("np.percentile")
def percentile(a, q, axis=None, keepdims=False):
    """np.quantile at q / 100."""
    return quantile(a, np.asarray(q) / 100, axis, keepdims)


@define("np.median")
def median(a, axis=None, keepdims=False):
    """The mean of the middle two sorted entries (the middle one twice for an odd count), as NumPy's;
    the derivative is 1/2 to each (1 to a single middle), JAX's 'midpoint' convention.  A NaN along
    the axis gives NaN."""
    ordered = _sorted_first(a, axis)
    n = ordered.shape[0]
    # each middle entry in the mean's float type first (* 1.0: float64 for integers and booleans,
    # as NumPy's median; float32 stays float32): added as integers they could overflow
    middle = (ordered[(n - 1) // 2] * 1.0 + ordered[n // 2] * 1.0) / 2
    last = ordered[n - 1]
    result = np.where(np.isnan(last), last, middle)
    if keepdims:
        result = np.reshape(result, np.shape(np.sum(a, axis=axis, keepdims=True)))
    return result


# ------------------------------------------------------------------ linalg2

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


# ------------------------------------------------------------------ contractions
@define_written("np.einsum", literal="subscripts")
def einsum(subscripts: str, operand_count: int) -> str:
    """The source of np.einsum's definition for one subscripts string, with NumPy's meaning.

    Each operand's repeated letter becomes its diagonal (``np.diagonal``, the letter's axis last);
    letters of one operand only, which the output lacks, are summed; then the operands are contracted
    left to right, each pair as one matrix product: transposes put the letters both share and keep
    first, each side's own letters next, and the letters summed over between them, and reshapes make
    the product two- or three-dimensional.  A pair that keeps no letter of its own is multiplied
    elementwise and summed instead.  No operand is broadcast against the other, so memory stays that
    of the pairwise products, and each step is a primitive with every transform's rules."""
    if not isinstance(subscripts, str):
        raise ValueError("the subscripts must be a string; the form that interleaves operands and axis lists "
                         "is not supported")
    names = [f"x{i}" for i in range(operand_count)]
    before, subscripts, after = _ellipsis_merged(subscripts, names)
    inputs, output = _einsum_terms(subscripts, operand_count)
    body, result = _contracted(inputs, output, names)
    return (f"def einsum(subscripts, {', '.join(names)}, optimize=False):\n"
            + "".join(f"    {line}\n" for line in before + body + after(result)) + f"    return {result}\n")


def _ellipsis_merged(subscripts: str, names: list):
    """``...`` standing for axes the letters do not name (``'...ij,...jk->...ik'``, ``'i...->...'``): the
    lines that move an operand's letters written ahead of its ``...`` behind those axes, broadcast
    those axes of every operand that has them to one shape and merge them into one axis; the
    subscripts with a letter of its own for that axis; and a function writing the lines that give
    the result those axes back, where the output's ``...`` stands.  The ranks are not known when this is written, but the number of axes each
    operand names is, so the shapes are sliced where the code runs; an operand whose axes do not
    broadcast is refused there, as NumPy refuses it."""
    text = subscripts.replace(" ", "")
    if "." not in text:
        return [], subscripts, lambda result: []
    left, arrow, output = text.partition("->")
    inputs = left.split(",")
    if len(inputs) != len(names):
        raise ValueError(f"the subscripts {subscripts!r} name {len(inputs)} operands, but {len(names)} are given")
    for term in inputs + ([output] if arrow else []):
        if term.count("...") > 1 or "." in term.replace("...", ""):
            raise ValueError(f"subscripts {subscripts!r}: an operand's or the output's letters have one '...' "
                             f"at most, of three dots")
    merged = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in text)
    with_ellipsis = [k for k, term in enumerate(inputs) if "..." in term]
    if not with_ellipsis:
        raise ValueError(f"subscripts {subscripts!r}: the output has '...' but no operand has")
    lines = []
    for k in with_ellipsis:
        ahead, _, behind = inputs[k].partition("...")
        for _ in ahead:     # the letters ahead of '...' go behind its axes, one by one: every '...' then leads
            lines.append(f"{names[k]} = np.moveaxis({names[k]}, 0, {-1 - len(behind)})")
        count = len(ahead) + len(behind)
        lines += [f"leading{k} = np.shape({names[k]})" + (f"[:{-count}]" if count else ""),
                  f"named{k} = np.shape({names[k]})" + (f"[{-count}:]" if count else "[:0]")]
    shape = f"leading{with_ellipsis[0]}"
    for k in with_ellipsis[1:]:
        lines.append(f"leading = rt.broadcast_shape({shape}, leading{k})")
        shape = "leading"
    for k in with_ellipsis:
        operand = f"np.broadcast_to({names[k]}, {shape} + named{k})" if len(with_ellipsis) > 1 else names[k]
        lines.append(f"{names[k]} = np.reshape({operand}, (-1,) + named{k})")
    letters = [merged + term.replace("...", "") if "..." in term else term for term in inputs]
    out_ahead, kept, out_behind = output.partition("...")
    if arrow and kept:
        rewritten = ",".join(letters) + "->" + merged + out_ahead + out_behind
    elif arrow:
        raise ValueError(f"subscripts {subscripts!r}: an output without the '...' of its operands is not supported; "
                         f"write '...' in the output and sum those axes afterwards")
    else:       # NumPy's implicit output: the leading axes, then the letters written once, sorted
        rewritten = ",".join(letters) + "->" + merged + "".join(
            sorted(c for c in set(left) - {",", "."} if left.count(c) == 1))

    def restored(result):
        lines = [f"{result} = np.reshape({result}, {shape} + np.shape({result})[1:])"]
        for j in range(len(out_ahead) if arrow else 0):     # the output's letters ahead of its '...' go back
            lines.append(f"{result} = np.moveaxis({result}, {j - len(out_ahead) - len(out_behind)}, {j})")
        return lines
    return lines, rewritten, restored


def _contracted(inputs, output, names):
    """The lines contracting the operands ``names`` of the letters ``inputs`` into ``output``'s, and the
    name of the result (see einsum)."""
    operand_count = len(names)
    body, terms = [], []
    for name, term in zip(names, inputs):
        letters = list(term)
        while len(set(letters)) < len(letters):
            letter = next(each for each in letters if letters.count(each) > 1)
            first = letters.index(letter)
            second = letters.index(letter, first + 1)
            body.append(f"{name} = np.diagonal({name}, 0, {first}, {second})")
            letters = [each for k, each in enumerate(letters) if k not in (first, second)] + [letter]
        terms.append(letters)
    for i, name in enumerate(names):
        elsewhere = set(output).union(*(set(t) for j, t in enumerate(terms) if j != i))
        alone = [k for k, letter in enumerate(terms[i]) if letter not in elsewhere]
        if alone:
            body.append(f"{name} = np.sum({name}, axis={_tuple_text(alone)})")
            terms[i] = [letter for letter in terms[i] if letter in elsewhere]
    result, letters = names[0], terms[0]
    for i in range(1, operand_count):
        kept = set(output).union(*(set(t) for t in terms[i + 1:]))
        first, first_letters, second, second_letters = result, letters, names[i], terms[i]
        if i == operand_count - 1 and _last_letter_own(output, first_letters, second_letters):
            # the product's last axis is the right-hand operand's own letter: the output's last
            # letter should be it, so that the result is a view whose rows are contiguous
            # (``'kij,nkj->nki'``: (k, n, i) products, not (k, i, n) read across)
            first, first_letters, second, second_letters = second, second_letters, first, first_letters
        body += _contraction(first, first_letters, second, second_letters, kept, f"p{i}")
        shared = [letter for letter in first_letters if letter in second_letters]
        letters = ([letter for letter in shared if letter in kept]
                   + [letter for letter in first_letters if letter not in second_letters]
                   + [letter for letter in second_letters if letter not in first_letters])
        result = f"p{i}"
    if letters != list(output):
        body.append(f"{result} = np.transpose({result}, {_tuple_text([letters.index(c) for c in output])})")
    return body, result


@define_written("np.tensordot", literal="axes", position=2, default=2)
def tensordot(axes, operand_count: int) -> str:
    """The source of np.tensordot's definition for one literal ``axes``: the contracted axes moved last
    in ``a`` and first in ``b`` (``np.moveaxis``, for a pair of axis lists), then one matrix product of
    the two reshaped to matrices, reshaped back to ``a``'s free axes followed by ``b``'s.  The ranks
    need not be known: the shapes are sliced where the code runs."""
    if operand_count != 2:
        raise ValueError(f"takes two arrays, not {operand_count}")
    lines = []
    if isinstance(axes, int):
        count = axes
        if count < 0:
            raise ValueError("axes must be at least 0")
    else:
        try:
            of_a, of_b = ([each] if isinstance(each, int) else list(each) for each in axes)
        except (TypeError, ValueError):
            raise ValueError(f"axes={axes!r}: give an int or a pair of axis lists") from None
        if len(of_a) != len(of_b):
            raise ValueError(f"axes={axes!r} pairs {len(of_a)} axes of a with {len(of_b)} of b")
        count = len(of_a)
        for each in (of_a, of_b):
            if len(set(each)) != len(each):
                raise ValueError(f"axes={axes!r}: an axis is repeated")
            if min(each, default=0) < 0 <= max(each, default=0):
                raise ValueError(f"axes={axes!r}: give each axis list all non-negative or all negative (the "
                                 f"ranks are not known when the contraction is written)")
        # one axis at a time (vmap batches np.moveaxis of one axis): a's in order to the end, b's to
        # the front, each index where the axes already moved have left it
        for axis in _indices_when_moved(of_a, to_end=True):
            lines.append(f"a = np.moveaxis(a, {axis}, -1)")
        for k, axis in enumerate(_indices_when_moved(of_b, to_end=False)):
            lines.append(f"b = np.moveaxis(b, {axis}, {k})")
    lines.append("shape_a = np.shape(a)")
    lines.append("shape_b = np.shape(b)")
    if count:
        summed = _product_text([f"shape_a[{-k}]" for k in range(count, 0, -1)])
        lines.append(f"product = np.reshape(a, (-1, {summed})) @ np.reshape(b, ({summed}, -1))")
        lines.append(f"result = np.reshape(product, shape_a[:{-count}] + shape_b[{count}:])")
    else:
        lines.append("result = np.reshape(np.reshape(a, (-1, 1)) @ np.reshape(b, (1, -1)), shape_a + shape_b)")
    return "def tensordot(a, b, axes=2):\n" + "".join(f"    {line}\n" for line in lines) + "    return result\n"


def _indices_when_moved(axes, to_end: bool) -> list:
    """The index each of ``axes`` (all non-negative or all negative) has when its turn comes, as they
    are moved one by one to the end (``to_end``) or to the front (the k-th to position k).  Moving an
    axis to the end shifts the ones after it back by one; moving one to the front shifts the ones
    before it on by one.  Non-negative indices are counted from the front, negative ones from the
    end, so either way no rank is needed."""
    if not axes or min(axes) >= 0:
        return [axis - sum(moved < axis for moved in axes[:k]) if to_end
                else axis + sum(moved > axis for moved in axes[:k]) for k, axis in enumerate(axes)]
    tail = list(range(min(axes), 0))        # the last axes, labelled by their first negative index
    indices = []
    for axis in axes:
        at = tail.index(axis)
        indices.append(at - len(tail))
        tail.pop(at)
        if to_end:
            tail.append(axis)
    return indices


def _split_source(name: str, sections, operand_count: int, axis, equal: bool) -> str:
    """The source of one of np.split's family for a literal ``sections``: the axis moved first
    (``axis`` is the literal text of the axis, or the parameter's name), then one slice per piece,
    between bounds the sections give (``rt.split_bounds``, which refuses an uneven np.split as NumPy
    does) or the literal indices, each moved back."""
    if operand_count != 1:
        raise ValueError(f"takes one array, not {operand_count}")
    parameters = "ary, indices_or_sections" + (", axis=0" if axis == "axis" else "")
    lines = [f"moved = np.moveaxis(ary, {axis}, 0)"]
    spans = _split_spans(sections, "np.shape(moved)[0]", equal, lines)
    pieces = [f"piece{k}" for k in range(len(spans))]
    for piece, (start, stop) in zip(pieces, spans):
        lines.append(f"{piece} = np.moveaxis(moved[{start}:{stop}], 0, {axis})")
    return (f"def {name}({parameters}):\n" + "".join(f"    {line}\n" for line in lines)
            + f"    return [{', '.join(pieces)}]\n")


def _split_spans(sections, length: str, equal: bool, lines: list) -> list:
    """The (start, stop) text of each piece's slice for a literal ``sections``: between the bounds
    ``rt.split_bounds`` gives for an axis of ``length`` (a line appended to ``lines``; it refuses an
    uneven np.split as NumPy does), or between the literal indices."""
    if isinstance(sections, bool) or not isinstance(sections, (int, list, tuple)):
        raise ValueError(f"indices_or_sections={sections!r}: give a literal int or a list of indices")
    if isinstance(sections, int):
        if sections <= 0:
            raise ValueError("number sections must be larger than 0")
        lines.append(f"bounds = rt.split_bounds({length}, {sections}, {equal})")
        return [(f"bounds[{k}]", f"bounds[{k + 1}]") for k in range(sections)]
    if not all(isinstance(index, int) and not isinstance(index, bool) for index in sections):
        raise ValueError(f"indices_or_sections={sections!r}: the indices must be literal ints")
    edges = [""] + [str(index) for index in sections] + [""]
    return list(zip(edges[:-1], edges[1:]))


def _hsplit_source(sections) -> str:
    """np.hsplit splits along axis 1, or along axis 0 for a 1-D array.  Seen as at least 3-D
    ((1, n, 1) for a 1-D array, (rows, n, 1) for a 2-D one) every array splits along axis 1, a
    literal axis whatever the rank; each piece is then reshaped to the array's own rank."""
    lines = ["lines = np.reshape(ary, rt.atleast_3d_shape(np.shape(ary)))"]
    spans = _split_spans(sections, "np.shape(lines)[1]", True, lines)
    pieces = [f"piece{k}" for k in range(len(spans))]
    for piece, (start, stop) in zip(pieces, spans):
        block = piece.replace("piece", "block")
        lines += [f"{block} = lines[:, {start}:{stop}]",
                  f"{piece} = np.reshape({block}, rt.hsplit_shape(np.shape(ary), np.shape({block})[1]))"]
    return ("def hsplit(ary, indices_or_sections):\n" + "".join(f"    {line}\n" for line in lines)
            + f"    return [{', '.join(pieces)}]\n")


@define_written("np.split", literal="indices_or_sections", position=1)
def split(sections, operand_count: int) -> str:
    """np.split: equal pieces (an uneven split is refused where it runs, as NumPy refuses it), or pieces
    between literal indices.  The pieces come back as a list, as NumPy gives them."""
    return _split_source("split", sections, operand_count, "axis", equal=True)


@define_written("np.array_split", literal="indices_or_sections", position=1)
def array_split(sections, operand_count: int) -> str:
    """np.array_split: as np.split, and an uneven number of sections gives its first pieces one more."""
    return _split_source("array_split", sections, operand_count, "axis", equal=False)


@define_written("np.vsplit", literal="indices_or_sections", position=1)
def vsplit(sections, operand_count: int) -> str:
    """np.vsplit: np.split along axis 0 (of an array of two or more dimensions)."""
    return _split_source("vsplit", sections, operand_count, "0", equal=True)


@define_written("np.hsplit", literal="indices_or_sections", position=1)
def hsplit(sections, operand_count: int) -> str:
    """np.hsplit: np.split along axis 1, or along axis 0 for a 1-D array (see _hsplit_source)."""
    if operand_count != 1:
        raise ValueError(f"takes one array, not {operand_count}")
    return _hsplit_source(sections)


@define_written("np.dsplit", literal="indices_or_sections", position=1)
def dsplit(sections, operand_count: int) -> str:
    """np.dsplit: np.split along axis 2 (of an array of three or more dimensions)."""
    return _split_source("dsplit", sections, operand_count, "2", equal=True)


def _einsum_terms(subscripts: str, operand_count: int):
    """Each operand's letters and the output's (NumPy's implicit output: the letters written once, sorted)."""
    text = subscripts.replace(" ", "")
    if text.count("->") > 1:
        raise ValueError(f"subscripts {subscripts!r} have more than one '->'")
    left, arrow, output = text.partition("->")
    inputs = left.split(",")
    if len(inputs) != operand_count:
        raise ValueError(f"the subscripts {subscripts!r} name {len(inputs)} operands, but {operand_count} are given")
    for letter in left.replace(",", "") + output:
        if not ("a" <= letter <= "z" or "A" <= letter <= "Z"):
            raise ValueError(f"invalid subscript {letter!r} in {subscripts!r}")
    if not arrow:
        output = "".join(sorted(c for c in set(left) - {","} if left.count(c) == 1))
    for letter in output:
        if output.count(letter) > 1:
            raise ValueError(f"output subscript {letter!r} appears more than once")
        if letter not in left:
            raise ValueError(f"output subscript {letter!r} is not in any operand's subscripts")
    return inputs, output


def _last_letter_own(output: str, letters, other_letters) -> bool:
    """Whether the output's last letter is one of ``letters``' own, and ``other_letters`` has an own
    letter too (so that the two can trade places in a matrix product)."""
    return bool(output) and output[-1] in letters and output[-1] not in other_letters and \
        any(letter not in letters for letter in other_letters)


def _contraction(a, a_letters, b, b_letters, kept, out) -> list:
    """Lines computing ``out``, the contraction of ``a`` and ``b`` over their shared letters not in ``kept``,
    with the letters shared and kept first, then ``a``'s own, then ``b``'s own."""
    batch = [c for c in a_letters if c in b_letters and c in kept]
    summed = [c for c in a_letters if c in b_letters and c not in kept]
    left = [c for c in a_letters if c not in b_letters]
    right = [c for c in b_letters if c not in a_letters]
    lines = []

    def arranged(name, letters, order, suffix):
        if letters == order:
            return name
        lines.append(f"{out}_{suffix} = np.transpose({name}, {_tuple_text([letters.index(c) for c in order])})")
        return f"{out}_{suffix}"

    if not left and not right:            # nothing of their own: elementwise, then the sum
        a = arranged(a, a_letters, batch + summed, "a")
        b = arranged(b, b_letters, batch + summed, "b")
        lines.append(f"{out} = np.sum({a} * {b}, axis={_tuple_text(range(len(batch), len(batch) + len(summed)))})"
                     if summed else f"{out} = {a} * {b}")
        return lines
    a = arranged(a, a_letters, batch + left + summed, "a")
    b = arranged(b, b_letters, batch + summed + right, "b")
    groups = ([batch] if batch else []) + [left, summed]
    if all(len(group) == 1 for group in groups) and len(right) == 1:     # already a matrix product's operands
        lines.append(f"{out} = {a} @ {b}")
        return lines
    lines.append(f"{out}_sa = np.shape({a})")
    lines.append(f"{out}_sb = np.shape({b})")
    a_sizes = [f"{out}_sa[{k}]" for k in range(len(a_letters))]
    b_sizes = [f"{out}_sb[{k}]" for k in range(len(b_letters))]
    nb, nl, ns = len(batch), len(left), len(summed)
    batch_sizes, left_sizes, summed_sizes = a_sizes[:nb], a_sizes[nb:nb + nl], a_sizes[nb + nl:]
    right_sizes = b_sizes[nb + ns:]
    lead = [_product_text(batch_sizes)] if batch else []
    lines.append(f"{out}_a3 = np.reshape({a}, ({', '.join(lead + [_product_text(left_sizes), _product_text(summed_sizes)])}))")
    lines.append(f"{out}_b3 = np.reshape({b}, ({', '.join(lead + [_product_text(summed_sizes), _product_text(right_sizes)])}))")
    sizes = batch_sizes + left_sizes + right_sizes
    if sizes:
        lines.append(f"{out}_m = {out}_a3 @ {out}_b3")
        lines.append(f"{out} = np.reshape({out}_m, {_tuple_text(sizes)})")
    else:                                 # a number: the one element of a 1x1 product
        lines.append(f"{out} = ({out}_a3 @ {out}_b3)[0, 0]")
    return lines


def _tuple_text(items) -> str:
    items = [str(item) for item in items]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _product_text(sizes) -> str:
    return " * ".join(sizes) if sizes else "1"


# ------------------------------------------------------------------ Python builtins
@define("builtins.sum")
def python_sum(iterable, start=0):
    """Python's sum: ``start`` plus each entry in turn.  Over a structure or a comprehension (``sum(np.sum(w
    * w) for w, b in params)``) the loop is unrolled, one addition per entry; over an array it adds its
    rows, as Python does."""
    total = start
    for entry in iterable:
        total = total + entry
    return total


# ------------------------------------------------------------------ structured control flow
@define_written("transformer.lax.switch", literal="branches", position=1, measure="length")
def switch(branch_count: int, operand_count: int) -> str:
    """The source of lax.switch's definition for ``branch_count`` branches: an if/elif chain that calls
    the branch ``index`` names, clamped to the branches as JAX clamps it.  Only the chosen branch
    runs, and each transform sees a plain branch.  ``operand_count`` counts the index too."""
    operands = [f"operand{k}" for k in range(operand_count - 1)]
    arguments = ", ".join(operands)
    lines = [f"def switch(index, branches{''.join(', ' + name for name in operands)}):"]
    if branch_count == 1:
        lines.append(f"    out = branches[0]({arguments})")
    else:
        lines.append("    if index <= 0:")
        lines.append(f"        out = branches[0]({arguments})")
        for k in range(1, branch_count - 1):
            lines.append(f"    elif index == {k}:")
            lines.append(f"        out = branches[{k}]({arguments})")
        lines.append("    else:")
        lines.append(f"        out = branches[{branch_count - 1}]({arguments})")
    lines.append("    return out")
    return "\n".join(lines) + "\n"
