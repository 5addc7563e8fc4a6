"""User-style functions that exercise every registered primitive.

Each function applies many primitives and returns all the results as one
tuple, so one compile covers many primitives.  tests/test_primitives.py runs
each under ``tr.jit`` (numba) and ``tr.jit(target="python")`` and compares
with calling the function itself, which is plain NumPy.
"""
import math

import numpy as np
import scipy.special

import transformer as tr


# ------------------------------------------------------------------ elementwise
def unary_math(x):
    """x in (0.1, 0.9): inside every domain below."""
    return (np.sin(x), np.cos(x), np.tan(x), np.arcsin(x), np.arccos(x), np.arctan(x),
            np.sinh(x), np.cosh(x), np.tanh(x), np.arcsinh(x), np.arccosh(x + 1.0), np.arctanh(x),
            np.exp(x), np.expm1(x), np.exp2(x), np.log(x), np.log1p(x), np.log2(x), np.log10(x),
            np.sqrt(x), np.cbrt(x), np.square(x), np.reciprocal(x), np.abs(x - 0.5), np.absolute(x),
            np.sign(x - 0.5), np.floor(x * 4.0), np.ceil(x * 4.0), np.rint(x * 4.0), np.trunc(x * 4.0),
            np.fabs(x - 0.5), np.deg2rad(x), np.rad2deg(x), np.radians(x), np.degrees(x),
            np.round(x * 4.0), np.round(x, 2), np.around(x, decimals=1), -x, +x, np.negative(x),
            np.isnan(x), np.isinf(x), np.isfinite(x / x))


def scalar_math(s):
    """A Python float through math.* and builtins, which mean the same primitives."""
    return (math.sin(s), math.cos(s), math.tan(s), math.asin(s), math.acos(s), math.atan(s),
            math.sinh(s), math.cosh(s), math.tanh(s), math.asinh(s), math.acosh(s + 1.0), math.atanh(s),
            math.exp(s), math.expm1(s), math.log(s), math.log1p(s), math.log2(s), math.log10(s),
            math.sqrt(s), abs(s - 1.0), math.floor(s * 4.0), math.ceil(s * 4.0), math.trunc(s * 4.0),
            math.fabs(-s), math.radians(s), math.degrees(s), math.isnan(s), math.isinf(s), math.isfinite(s),
            math.pow(s, 3.0), math.atan2(s, 2.0), math.hypot(s, 2.0), math.copysign(s, -1.0),
            max(s, 0.5), min(s, 0.5), not (s > 0.5), s ** 2, s // 0.25, s % 0.25, math.fmod(s - 0.5, 0.3))


def special_functions(x):
    """x in (0.1, 0.9): scipy.special's error and gamma functions, tr.lax's names for them, math's twins.
    polygamma is tr.lax's: scipy.special.polygamma of float32 is float64, where transformer keeps float32."""
    s = float(x[0, 0])
    return (scipy.special.erf(x), scipy.special.erfc(x), scipy.special.erfinv(x - 0.5), scipy.special.gammaln(x),
            scipy.special.digamma(x), scipy.special.psi(x - 1.0), tr.lax.polygamma(1, x), tr.lax.polygamma(3, x),
            tr.lax.erf_inv(x), tr.lax.lgamma(x), math.erf(s), math.erfc(s), math.lgamma(s),
            scipy.special.ndtr(x - 0.5), scipy.special.log_ndtr(x - 0.5), np.nan_to_num(x / (x - x[0, 0])))


def binary_math(x, y):
    return (x + y, x - y, x * y, x / y, x // y, x % y, x ** y, np.add(x, y), np.subtract(x, y),
            np.multiply(x, y), np.divide(x, y), np.true_divide(x, y), np.floor_divide(x, y),
            np.mod(x, y), np.remainder(x, y), np.power(x, y), np.maximum(x, y), np.minimum(x, y),
            np.fmax(x, y), np.fmin(x, y), np.arctan2(x, y), np.hypot(x, y), np.logaddexp(x, y),
            np.copysign(x, y - 0.5), np.fmod(x - 0.5, y), np.fmod(x, 0.3))


def with_literals(x):
    """Python number literals are weak (NEP 50): float32 arrays stay float32."""
    return (x * 2.0, 2.0 * x, x + 1, x - 0.5, 1.0 / (1.0 + x), x ** 2, x ** 0.5, x // 2, x % 3,
            np.maximum(x, 0.0), np.minimum(1.0, x), np.where(x > 0.5, x, 0.0), np.clip(x, 0.2, 0.7),
            np.power(x, 2), np.arctan2(x, 1.0), np.logaddexp(x, 0.0))


def comparisons(x, y):
    big = x > 0.5
    small = y < 0.5
    return (x < y, x <= y, x > y, x >= y, x == y, x != y, np.less(x, y), np.less_equal(x, y),
            np.greater(x, y), np.greater_equal(x, y), np.equal(x, x), np.not_equal(x, y),
            np.logical_and(big, small), np.logical_or(big, small), np.logical_xor(big, small),
            ~big, np.invert(big), np.bitwise_not(small), np.logical_not(big),
            big & small, big | small, big ^ small)


def integer_math(a, b):
    """Integer arrays keep their dtype where NumPy keeps it."""
    return (a + b, a - b, a * b, a // b, a % b, a ** 2, a * 3, -a, np.abs(a - 3), np.sign(a - 3),
            np.maximum(a, b), np.minimum(a, 4), np.square(a), a / b, np.sqrt(a), np.where(a > 2, a, b),
            np.clip(a, 1, 4), np.sum(a), np.sum(a, axis=0), np.prod(a, axis=1), np.max(a, axis=-1),
            np.mean(a, axis=0), np.cumsum(a, axis=1), np.dot(a, b.T), a @ b.T, np.trace(a[:, :2]),
            np.argmax(a, axis=1), np.any(a > 3, axis=0), np.all(a > 0, axis=1), np.linalg.norm(a, axis=1))


# ------------------------------------------------------------------ reductions
def reductions(x):
    """x is 3-D: every axis form, negative axes, keepdims, tuples of axes."""
    return (np.sum(x), np.sum(x, axis=0), np.sum(x, axis=-1, keepdims=True), np.sum(x, axis=(0, 2)),
            np.mean(x, axis=1), np.mean(x, axis=-2, keepdims=True), np.mean(x),
            np.prod(x, axis=2), np.prod(x, keepdims=True),
            np.max(x), np.max(x, axis=-1), np.max(x, axis=-1, keepdims=True), np.amax(x, axis=(1, 2)),
            np.min(x, axis=0), np.min(x, axis=(0, 1), keepdims=True), np.amin(x),
            np.std(x), np.std(x, axis=1), np.std(x, axis=-1, ddof=1), np.var(x, axis=(0, 2), keepdims=True),
            np.var(x, ddof=1), np.any(x > 0.5, axis=-1), np.all(x > 0.1, axis=(0, 1)), np.any(x > 0.5),
            np.all(x > 0.01), np.argmax(x), np.argmax(x, axis=-1), np.argmin(x, axis=0), np.argmin(x),
            np.cumsum(x), np.cumsum(x, axis=1), np.cumsum(x, axis=-1), np.cumprod(x, axis=0), np.cumprod(x))


def reduction_dtypes(x):
    """float32 stays float32, integer sums stay integers, integer means become float64."""
    return (np.sum(x, axis=0), np.mean(x, axis=-1, keepdims=True), np.max(x, axis=1), np.var(x, axis=0),
            np.cumprod(x, axis=1), np.linalg.norm(x, axis=1))


def reductions_as_methods(x):
    """x is 2-D; methods become the same primitives."""
    return (x.sum(), x.sum(axis=1), x.sum(0), x.mean(axis=-1, keepdims=True), x.max(1), x.min(axis=0),
            x.prod(axis=1), x.std(axis=0), x.var(axis=1), x.argmax(axis=0), x.argmin(axis=-1),
            x.cumsum(axis=0), x.cumprod(axis=-1), (x > 0.5).any(axis=1), (x > 0.1).all(axis=0))


def norms(x):
    return (np.linalg.norm(x), np.linalg.norm(x, axis=1), np.linalg.norm(x, axis=-1, keepdims=True),
            np.linalg.norm(x, axis=(0, 1)), np.linalg.norm(x[0]), np.linalg.norm(x[0], ord=1),
            np.linalg.norm(x, ord=1, axis=0), np.linalg.norm(x, ord=np.inf, axis=1))


# ----------------------------------------------------------------- linear algebra
def products(a, b, v):
    """a: (n, k), b: (k, m), v: (k,)."""
    return (np.dot(a, b), a @ b, np.matmul(a, b), np.dot(a, v), np.dot(v, v), np.dot(v, 2.0),
            a.dot(b), np.outer(v, v), np.inner(v, v), np.inner(a, a), np.vdot(v, v),
            np.trace(a @ b), (a @ b).trace(), np.dot(a.T, a), v @ b)


def batched_matmul(x, y):
    """x: (h, n, k), y: (h, k, m)."""
    return x @ y, np.matmul(x, y[0]), x @ np.swapaxes(x, 1, 2)


def solves(a, b):
    """a: (n, n) well conditioned, b: (n,)."""
    return np.linalg.inv(a), np.linalg.solve(a, b), np.linalg.det(a), np.linalg.inv(a.T)


def decompositions(a, stack):
    """a: (n, n) symmetric positive definite, stack: (2, 2, n, n) of them (numba decomposes one matrix
    at a time); eigenvectors by their absolute values (LAPACKs may sign them differently)."""
    sign, logabsdet = np.linalg.slogdet(stack)
    w, v = np.linalg.eigh(a)
    return (np.linalg.cholesky(a), np.linalg.cholesky(stack), np.linalg.slogdet(a)[1], sign, logabsdet,
            w, np.abs(v), np.abs(np.linalg.eigh(stack)[1]), np.linalg.eigvalsh(a), np.linalg.eigvalsh(stack),
            np.linalg.inv(stack), np.linalg.det(stack))


def more_decompositions(a, b):
    """a: (4, 3), b: (4,); singular vectors by their absolute values (LAPACKs may sign them differently)."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    q, r = np.linalg.qr(a)
    solution, residuals, rank, singular = np.linalg.lstsq(a, b, rcond=None)
    return (np.abs(u), s, np.abs(vh), np.linalg.svd(a, compute_uv=False), np.abs(np.linalg.svd(a)[0]),
            np.linalg.pinv(a), np.abs(q), np.abs(r), solution, residuals, singular)


def sorting(x):
    """x: (3, 4) with distinct values; a partition's two sides by their sums (their order is unspecified)."""
    order = np.argsort(x, axis=1)
    parted = np.partition(x, 2, axis=1)
    rows, columns = np.triu_indices(3, 1)
    lower = np.tril_indices(3)
    return (np.sort(x), np.sort(x, axis=0), order, np.take_along_axis(x, order, axis=1), parted[:, 2],
            np.sum(parted[:, :2], axis=1), np.sort(np.argpartition(x, 1, axis=1)[:, :1], axis=1),
            np.searchsorted(np.sort(x[0]), x[1]), x[rows, columns], x[lower[0], lower[1]])


# ----------------------------------------------------------------- shapes
def shapes(x):
    """x is (2, 3, 4)."""
    flat = np.reshape(x, (-1,))
    return (np.reshape(x, (6, 4)), np.reshape(x, (-1, 2)), x.reshape(4, 6), x.reshape((3, -1)),
            np.reshape(np.transpose(x), (4, 6)), np.reshape(flat, 24), x.T, np.transpose(x),
            np.transpose(x, (1, 0, 2)), x.transpose(2, 0, 1), np.swapaxes(x, 0, -1), x.swapaxes(1, 2),
            np.expand_dims(x, 0), np.expand_dims(x, -1), np.expand_dims(x, axis=1), np.moveaxis(x, 0, -1),
            np.squeeze(x[:1], axis=0), np.squeeze(x[:, :1], axis=-2), np.squeeze(x[:1, :, :1], axis=(0, 2)),
            x[:1].squeeze(0), np.ravel(x), x.ravel(), x.flatten(), np.broadcast_to(x[0], (5, 3, 4)),
            np.flip(x), np.flip(x, axis=1), np.flip(x, axis=-1), np.flip(x, axis=(0, 2)), np.copy(x), x.copy())


def joins(x, y):
    """x, y are (3, 4)."""
    return (np.concatenate((x, y)), np.concatenate((x, y), axis=1), np.concatenate([x, y], axis=-1),
            np.stack((x, y)), np.stack((x, y), axis=1), np.stack([x, y], axis=-1),
            np.hstack((x, y)), np.vstack((x, y)))


def casts(x):
    """Dtype keywords and conversions."""
    return (np.asarray(x), np.asarray(x, dtype=np.float32), np.array(x), x.astype(np.float32),
            x.astype(np.int64), np.float32(x), np.int32(x * 10.0), float(x[0, 0]), int(x[0, 0] * 10.0),
            bool(x[0, 0] > 0.5), np.float64(x[1, 1]))


# ------------------------------------------------------------------ creation
def creation(x):
    n = x.shape[0]
    return (np.zeros(3), np.zeros((n, 2)), np.zeros((2, 2), dtype=np.float32), np.ones(n),
            np.ones((2, n), dtype=np.int64), np.shape(np.empty((n, 3))), np.zeros_like(x), np.ones_like(x),
            np.ones_like(x, dtype=np.int32), np.shape(np.empty_like(x)), np.full((2, n), 1.5),
            np.full(3, 7, dtype=np.int32), np.full_like(x, 2.5), np.arange(5), np.arange(1, n),
            np.arange(0.0, 1.0, 0.25), np.arange(0, 6, 2, dtype=np.float32), np.linspace(0.0, 1.0, 5),
            np.eye(3), np.eye(n, dtype=np.float32))


def queries(x):
    return (np.shape(x), x.shape, x.shape[-1], np.ndim(x), x.ndim, np.size(x), x.size, len(x))


# ------------------------------------------------------------------ indexing
def indexing(x):
    """x is (4, 5)."""
    y = np.zeros_like(x)
    y[0] = x[1]
    y[1:3, ::2] = 7.0
    y[-1, -1] = x[0, 0]
    return (x[0], x[-1, 2], x[1:3], x[::-1], x[:, 1], x[..., 0], x[None, 0], x[:, None], x[1:, ::2],
            x[np.arange(2)], y)


# ------------------------------------------------------------------- special
def selections(x, y):
    return (np.where(x > y, x, y), np.where(x > 0.5, 1.0, 0.0), np.where(x > 0.5, x, -1.0),
            np.clip(x, 0.2, 0.8), np.clip(x, y, 0.9), x.clip(0.3, 0.6), np.clip(x[0, 0], 0.4, 0.6),
            np.where(x[0, 0] > 0.5, 1.0, 2.0), tr.stop_gradient(x) * 2.0, tr.lax.stop_gradient(y))


# ------------------------------------------------------------------ nn, attention
def nn_functions(x):
    return (tr.nn.relu(x), tr.nn.sigmoid(x), tr.nn.softplus(x), tr.nn.tanh(x), tr.nn.gelu(x),
            tr.nn.logsumexp(x), tr.nn.logsumexp(x, axis=0), tr.nn.softmax(x), tr.nn.softmax(x, axis=0),
            tr.nn.log_softmax(x), tr.nn.log_softmax(x, axis=-2))


def scaled_dot_product(q, k, v):
    d = q.shape[-1]
    scores = np.dot(q, k.T) / np.sqrt(d)
    weights = tr.nn.softmax(scores, axis=-1)
    return np.dot(weights, v)


# --------------------------------------------------- not compilable by numba
def random_draws(key, x):
    """tr.random's keys and samplers: compiled, the numbers NumPy draws outside."""
    k1, k2 = tr.random.split(key)
    keys = tr.random.split(tr.random.fold_in(k2, 3), 4)
    return (tr.random.PRNGKey(7), tr.random.key(8), tr.random.key_data(k1), keys,
            tr.random.bits(k1, (3,), np.uint32), tr.random.uniform(keys[0], (2, 3), minval=-1.0, maxval=x[0, 0]),
            tr.random.normal(keys[1], (4,)), tr.random.gumbel(keys[2], (2,), np.float32),
            tr.random.bernoulli(keys[3], 0.3, (5,)), tr.random.categorical(k1, x), tr.random.randint(k2, (3,), 0, 7),
            tr.random.permutation(k1, x), tr.random.permutation(k2, 5), tr.random.choice(k1, x, (2,), replace=False),
            tr.random.choice(k2, 4, (3,), p=np.array([0.1, 0.2, 0.3, 0.4])),
            tr.random.exponential(keys[0], (2,)), tr.random.laplace(keys[1], (2,), np.float32),
            tr.random.logistic(keys[2], (3,)), tr.random.rademacher(keys[3], (4,)))


def squeeze_without_axis(x):
    return np.squeeze(x)


def dot_of_3d(x):
    return np.dot(x, x)
