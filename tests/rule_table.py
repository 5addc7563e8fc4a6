"""The rule table: one row per primitive and parameter variant (tests/test_rule_table.py checks them).

A row is a small user function applying the primitive, its argument
generator (``rng -> args``: a fresh tuple each call, so the checks may write
into them) and what does not apply to it, with the reason.  The generators
choose hard cases on purpose: repeated and negative indices, index pairs,
boolean masks, the endpoints of linspace and arange, zeros in products, ties
in max, arguments written in place, float32 and integer arguments.

The checks (see the test module): ``python`` and ``cpu`` (jit against NumPy),
``vjp``, ``jvp`` (against central differences), ``transpose`` (<u, J v> =
<J^T u, v>), ``jvp_of_grad`` and ``vjp_of_grad`` (second order against
finite differences), ``vmap0``, ``vmap1``, ``vmap_none`` (against a Python
loop), ``jit_grad`` and ``jit_jvp`` (numba), ``hessian`` (only where a row
asks for it) and ``jax`` (jax.numpy as a second oracle, where installed).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.special

import transformer as tr

FIRST_ORDER = ("vjp", "jvp", "transpose", "jit_grad", "jit_jvp")
SECOND_ORDER = ("jvp_of_grad", "vjp_of_grad")
DERIVATIVES = FIRST_ORDER + SECOND_ORDER
VMAPS = ("vmap0", "vmap1", "vmap_none")
CHECKS = ("python", "cpu") + DERIVATIVES + VMAPS + ("hessian", "jax")


@dataclass(frozen=True, eq=False)   # rows hash by identity (caches key on them)
class Row:
    name: str
    fn: Callable
    args: Callable                      # rng -> argument tuple (fresh arrays each call)
    skip: dict = field(default_factory=dict)     # check -> why it does not apply
    refuses: dict = field(default_factory=dict)  # check -> words the documented TransformError must contain
    wrt: tuple | None = None            # argument positions differentiated (default: the float ones)
    tol: float | None = None            # relative/absolute tolerance for derivatives (default by dtype)
    oracle: Callable | None = None      # args -> the function finite differences see (default: fn)
    helpers: tuple = ()                 # functions the row maps with tr.vmap inside it (their core forms count)
    hessian: int | None = None          # an argument to check tr.hessian for (helpers only it generates)

    def __repr__(self):
        return self.name


def no(checks, why):
    return {c: why for c in checks}


NO_DERIVATIVE = lambda why: no(DERIVATIVES, why)         # noqa: E731
NO_SECOND = lambda why: no(SECOND_ORDER, why)            # noqa: E731
NOT_BATCHED = lambda why: no(VMAPS, why)                 # noqa: E731
BOOLEAN = "its output is boolean or integer: there is no derivative to check"
ONE_ARG = "one argument: in_axes=None would leave nothing to map"
PER_EXAMPLE_MASK = no(("vmap0", "vmap1"), "x[mask] with a boolean mask that differs between examples")
NO_JAX_INPLACE = "jax arrays are immutable (x[i] = v is written x.at[i].set(v) there)"


# ------------------------------------------------------------------ generators
def U(rng, *shape, lo=0.1, hi=0.9, dtype=np.float64):
    """Uniform values; shape () gives a Python float (a float64) as users pass them."""
    if not shape:
        return float(rng.uniform(lo, hi)) if dtype == np.float64 else dtype(rng.uniform(lo, hi))
    return rng.uniform(lo, hi, shape).astype(dtype)


def F32(rng, *shape, lo=0.1, hi=0.9):
    return U(rng, *shape, lo=lo, hi=hi, dtype=np.float32)


def away_from_zero(rng, *shape, dtype=np.float64):
    """Values in +-(0.2, 0.9): both signs, never near a kink at zero."""
    return (U(rng, *shape, lo=0.2, hi=0.9, dtype=dtype) * rng.choice([-1, 1], shape)).astype(dtype)


def with_ties(rng, *shape):
    """Values whose largest and whose smallest entries are each tied between exactly two places
    (a two-way tie: each coordinate's central difference is 1/2, JAX's equal split)."""
    x = U(rng, *shape)
    flat = x.reshape(-1)
    flat[1] = flat[-1] = flat.max() + 0.05
    flat[0] = flat[-2] = flat.min() - 0.05
    return x


def with_zeros(rng, *shape, zeros=1):
    x = U(rng, *shape, lo=0.5, hi=1.5)
    x.reshape(-1)[[1, 5][:zeros]] = 0.0
    return x


def spd(rng, n):
    """A well-conditioned matrix (solve, inv, det)."""
    return U(rng, n, n) + n * np.eye(n)


def symmetric(m):
    """The symmetric part of a matrix or a stack of them: cholesky's, eigh's and eigvalsh's argument
    (spd's is then positive definite, its eigenvalues apart, so that eigenvectors are differentiable)."""
    return 0.5 * (m + np.swapaxes(m, -1, -2))


def of_symmetric_part(fn, position=0):
    """The oracle of a row whose rules assume a symmetric matrix argument (cholesky, eigh and eigvalsh
    read one triangle of it): central differences perturb that argument symmetrically, seeing
    fn((a + a^T) / 2), whose derivative JAX's rules and ours give."""
    def oracle(args):
        def symmetrized(*a):
            return fn(*a[:position], symmetric(np.asarray(a[position])), *a[position + 1:])
        return symmetrized
    return oracle


# ------------------------------------------------------------------ elementwise
UNARY_DOMAINS = {  # name -> generator of an argument inside the function's domain, off its kinks
    "arccosh": lambda r: U(r, 3, 4, lo=1.1, hi=1.9),
    "abs": lambda r: away_from_zero(r, 3, 4),
    "fabs": lambda r: away_from_zero(r, 3, 4),
    "sign": lambda r: away_from_zero(r, 3, 4),
    "cbrt": lambda r: away_from_zero(r, 3, 4),
}
UNARY = ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
         "arctanh", "exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "square",
         "reciprocal", "abs", "fabs", "deg2rad", "rad2deg", "negative", "positive"]
STEP_FUNCTIONS = ["sign", "floor", "ceil", "rint", "trunc"]   # derivative zero almost everywhere


def sin(x): return np.sin(x)                       # noqa: E704  (one-line rows read as a table)
def cos(x): return np.cos(x)                       # noqa: E704
def tan(x): return np.tan(x)                       # noqa: E704
def arcsin(x): return np.arcsin(x)                 # noqa: E704
def arccos(x): return np.arccos(x)                 # noqa: E704
def arctan(x): return np.arctan(x)                 # noqa: E704
def sinh(x): return np.sinh(x)                     # noqa: E704
def cosh(x): return np.cosh(x)                     # noqa: E704
def tanh(x): return np.tanh(x)                     # noqa: E704
def arcsinh(x): return np.arcsinh(x)               # noqa: E704
def arccosh(x): return np.arccosh(x)               # noqa: E704
def arctanh(x): return np.arctanh(x)               # noqa: E704
def exp(x): return np.exp(x)                       # noqa: E704
def expm1(x): return np.expm1(x)                   # noqa: E704
def exp2(x): return np.exp2(x)                     # noqa: E704
def log(x): return np.log(x)                       # noqa: E704
def log1p(x): return np.log1p(x)                   # noqa: E704
def log2(x): return np.log2(x)                     # noqa: E704
def log10(x): return np.log10(x)                   # noqa: E704
def sqrt(x): return np.sqrt(x)                     # noqa: E704
def cbrt(x): return np.cbrt(x)                     # noqa: E704
def square(x): return np.square(x)                 # noqa: E704
def reciprocal(x): return np.reciprocal(x)         # noqa: E704
def abs_(x): return np.abs(x)                      # noqa: E704
def fabs(x): return np.fabs(x)                     # noqa: E704
def deg2rad(x): return np.deg2rad(x)               # noqa: E704
def rad2deg(x): return np.rad2deg(x)               # noqa: E704
def negative(x): return -x                         # noqa: E704
def positive(x): return +x                         # noqa: E704
def sign(x): return np.sign(x) * x                 # noqa: E704
def floor(x): return np.floor(x) * x               # noqa: E704
def ceil(x): return np.ceil(x) * x                 # noqa: E704
def rint(x): return np.rint(x) * x                 # noqa: E704
def trunc(x): return np.trunc(x) * x               # noqa: E704
def round_(x): return np.round(x, 1) * x           # noqa: E704
def abs_builtin(x): return abs(x)                  # noqa: E704


# scipy.special's error and gamma functions (lax.erf, lax.lgamma... in core form)
def erf(x): return scipy.special.erf(x)             # noqa: E704
def erfc(x): return scipy.special.erfc(x)           # noqa: E704
def erfinv(x): return scipy.special.erfinv(x)       # noqa: E704
def gammaln(x): return scipy.special.gammaln(x)     # noqa: E704
def digamma(x): return scipy.special.digamma(x)     # noqa: E704
def polygamma(x): return scipy.special.polygamma(1, x) * scipy.special.polygamma(2, x)   # noqa: E704


def special_math_scalars(s):
    """math's erf, erfc and lgamma: the same primitives as scipy.special's."""
    return math.erf(s) * math.erfc(s) + math.lgamma(s)


def negative_non_integers(rng, *shape):
    """Values in (k + 0.2, k + 0.8) for k = -4..-1: left of zero, away from the poles at the integers."""
    return np.floor(U(rng, *shape, lo=-4.0, hi=0.0)) + U(rng, *shape, lo=0.2, hi=0.8)


def math_scalars(s):
    """A Python float through math.*: the same primitives."""
    return math.sin(s) * math.exp(s) + math.log(s) * math.sqrt(s) + math.atan2(s, 2.0) + math.pow(s, 3.0)


def one_tuple(x): return (np.log(x),)                # noqa: E704  (a 1-tuple's cotangent is a 1-tuple)


def is_checks(x):
    return np.isnan(x), np.isinf(x), np.isfinite(x / x)


def logical_unary(x):
    big = x > 0.5
    return np.logical_not(big), ~big, np.invert(big), not (x[0, 0] > 0.5)


# ------------------------------------------------------------------ binary
def add(x, y): return x + y                        # noqa: E704
def subtract(x, y): return x - y                   # noqa: E704
def multiply(x, y): return x * y                   # noqa: E704
def divide(x, y): return x / y                     # noqa: E704
def floor_divide(x, y): return (x // y) * x        # noqa: E704
def mod(x, y): return x % y                        # noqa: E704
def power(x, y): return x ** y                     # noqa: E704
def maximum(x, y): return np.maximum(x, y)         # noqa: E704
def minimum(x, y): return np.minimum(x, y)         # noqa: E704
def fmax(x, y): return np.fmax(x, y)               # noqa: E704
def fmin(x, y): return np.fmin(x, y)               # noqa: E704
def arctan2(x, y): return np.arctan2(x, y)         # noqa: E704
def hypot(x, y): return np.hypot(x, y)             # noqa: E704
def logaddexp(x, y): return np.logaddexp(x, y)     # noqa: E704
def copysign(x, y): return np.copysign(x, y)       # noqa: E704
def power_int(x, n): return x ** n                 # noqa: E704
def power_literal(x): return x ** 3                # noqa: E704
def relu_literal(x): return np.maximum(x, 0.0) * x   # noqa: E704
def max_builtin(s, t): return max(s, t) * min(s, t)  # noqa: E704
def scalar_times_array(s, x): return s * x + 2.0 * x  # noqa: E704


def comparisons(x, y):
    return x < y, x <= y, x > y, x >= y, x == y, x != y


def logical_binary(x, y):
    a, b = x > 0.5, y < 0.5
    return np.logical_and(a, b), np.logical_or(a, b), np.logical_xor(a, b)


def bitwise_masks(x, y):
    a, b = x > 0.5, y < 0.5
    return a & b, a | b, a ^ b, np.bitwise_and(a, ~b)


def bitwise_integers(i, j):
    return i & j, i | j, i ^ j, np.bitwise_or(i, 4)


def where_combined_masks(x, y):
    keep = (x > 0.3) & (y < 0.7) | ~(x > y) ^ (y > 0.9)
    keep &= x < 0.95
    return np.where(keep, x * y, np.sin(y))


def where(x, y): return np.where(x > y, x, y)                 # noqa: E704
def where_scalar(x): return np.where(x > 0.5, x, 0.0)         # noqa: E704
def where_mask(c, x, y): return np.where(c, x * y, y)         # noqa: E704
def clip(x): return np.clip(x, 0.2, 0.7)                      # noqa: E704
def clip_arrays(x, lo): return np.clip(x, lo, 0.9)            # noqa: E704
def clip_no_lower(x): return np.clip(x, None, 0.5)            # noqa: E704
def clip_no_upper(x): return np.clip(x, 0.3, None)            # noqa: E704
def clip_method(x): return x.clip(0.3, 0.6)                   # noqa: E704


# ------------------------------------------------------------------ reductions
def sum_all(x): return np.sum(x)                              # noqa: E704
def sum_axis0(x): return np.sum(x, axis=0)                    # noqa: E704
def sum_neg_keep(x): return np.sum(x, axis=-1, keepdims=True)  # noqa: E704
def sum_tuple(x): return np.sum(x, axis=(0, 2))               # noqa: E704
def sum_int(a, x): return np.sum(a, axis=0) * x               # noqa: E704
def mean_all(x): return np.mean(x)                            # noqa: E704
def mean_axis1(x): return np.mean(x, axis=1)                  # noqa: E704
def mean_neg_keep(x): return np.mean(x, axis=-2, keepdims=True)  # noqa: E704
def mean_tuple(x): return np.mean(x, axis=(0, 1))             # noqa: E704
def prod_all(x): return np.prod(x)                            # noqa: E704
def prod_axis1(x): return np.prod(x, axis=1)                  # noqa: E704
def prod_keep(x): return np.prod(x, axis=0, keepdims=True)    # noqa: E704
def max_all(x): return np.max(x)                              # noqa: E704
def max_axis(x): return np.max(x, axis=-1)                    # noqa: E704
def max_keep(x): return np.max(x, axis=0, keepdims=True)      # noqa: E704
def max_tuple(x): return np.amax(x, axis=(1, 2))              # noqa: E704
def min_all(x): return np.min(x)                              # noqa: E704
def min_axis(x): return np.min(x, axis=0)                     # noqa: E704
def min_tuple_keep(x): return np.min(x, axis=(0, 1), keepdims=True)  # noqa: E704
def std_all(x): return np.std(x)                              # noqa: E704
def std_axis_ddof(x): return np.std(x, axis=-1, ddof=1)       # noqa: E704
def var_all(x): return np.var(x, ddof=1)                      # noqa: E704
def var_tuple_keep(x): return np.var(x, axis=(0, 2), keepdims=True)  # noqa: E704
def std_negative_tuple(x): return np.std(x, axis=(-1, -3), ddof=1)      # noqa: E704
def mean_keep_all(x): return np.mean(x, keepdims=True) * x - np.max(x, keepdims=True)  # noqa: E704
def cumsum_all(x): return np.cumsum(x)                        # noqa: E704
def cumsum_axis(x): return np.cumsum(x, axis=1)               # noqa: E704
def cumsum_neg(x): return np.cumsum(x, axis=-1)               # noqa: E704
def cumprod_all(x): return np.cumprod(x)                      # noqa: E704
def cumprod_axis(x): return np.cumprod(x, axis=0)             # noqa: E704


def any_all(x):
    return np.any(x > 0.5), np.any(x > 0.5, axis=-1), np.all(x > 0.1, axis=(0, 1)), np.all(x > 0.2, keepdims=True)


def arg_extrema(x):
    return np.argmax(x), np.argmax(x, axis=-1), np.argmin(x, axis=0), np.argmin(x)


def norm_2(x): return np.linalg.norm(x)                              # noqa: E704
def norm_axis(x): return np.linalg.norm(x, axis=1)                   # noqa: E704
def norm_keep(x): return np.linalg.norm(x, axis=-1, keepdims=True)   # noqa: E704
def norm_fro(x): return np.linalg.norm(x, axis=(0, 1))               # noqa: E704
def norm_1(v): return np.linalg.norm(v, 1)                           # noqa: E704
def norm_inf(v): return np.linalg.norm(v, np.inf)                    # noqa: E704
def norm_1_axis(x): return np.linalg.norm(x, ord=1, axis=0)          # noqa: E704
def norm_inf_axis(x): return np.linalg.norm(x, ord=np.inf, axis=1)   # noqa: E704
def norm_spectral(x): return np.linalg.norm(x, 2)                   # noqa: E704
def norm_smallest(x): return np.linalg.norm(x, -2)                   # noqa: E704
def norm_nuclear(x): return np.linalg.norm(x, "nuc")                 # noqa: E704
def norm_nuclear_axes(x): return np.linalg.norm(x, "nuc", axis=(2, 0))   # noqa: E704


# ------------------------------------------------------------------ linear algebra
def dot(x, y): return np.dot(x, y)                 # noqa: E704
def matmul(x, y): return x @ y                     # noqa: E704
def matmul_shared_right(y, x): return x @ y                        # noqa: E704  (vmap_none: y shared)
def matmul_fn(x, y): return np.matmul(x, y)        # noqa: E704
def dot_method(x, y): return x.dot(y)              # noqa: E704
def outer(x, y): return np.outer(x, y)             # noqa: E704
def inner(x, y): return np.inner(x, y)             # noqa: E704
def vdot(x, y): return np.vdot(x, y)               # noqa: E704
def trace(x): return np.trace(x)                   # noqa: E704
def inv(a): return np.linalg.inv(a)                # noqa: E704
def solve(a, b): return np.linalg.solve(a, b)      # noqa: E704
def det(a): return np.linalg.det(a)                # noqa: E704
def quadratic(w, x): return np.sum((w @ x) ** 2)   # noqa: E704
def cholesky(a): return np.linalg.cholesky(a)      # noqa: E704
def cholesky_shared(b, a): return np.linalg.cholesky(a) @ b   # noqa: E704  (vmap_none: b shared)
def slogdet_logabsdet(a): return np.linalg.slogdet(a)[1]       # noqa: E704  (a tuple result indexed)
def eigh_values(a): return np.linalg.eigh(a)[0]    # noqa: E704
def eigvalsh(a): return np.linalg.eigvalsh(a)      # noqa: E704


def slogdet(a):
    sign, logabsdet = np.linalg.slogdet(a)          # a tuple result unpacked
    return sign, logabsdet


def slogdet_shared(b, a):
    sign, logabsdet = np.linalg.slogdet(a)
    return sign * b + logabsdet


def eigh(a):
    w, v = np.linalg.eigh(a)
    return w, v


def eigh_shared(b, a):
    w, v = np.linalg.eigh(a)
    return w * b, v @ b


# ------------------------------------------------------------------ shapes
def reshape(x): return np.reshape(x, (6, 4))                 # noqa: E704
def reshape_neg(x): return x.reshape((-1, 2))                # noqa: E704
def transpose(x): return np.transpose(x)                     # noqa: E704
def transpose_axes(x): return np.transpose(x, (1, 0, 2))     # noqa: E704
def transpose_method(x): return x.T * x.T                    # noqa: E704
def swapaxes(x): return np.swapaxes(x, 0, -1)                # noqa: E704
def moveaxis(x): return np.moveaxis(x, 0, -1)                # noqa: E704
def expand_dims(x): return np.expand_dims(x, -1)             # noqa: E704
def squeeze(x): return np.squeeze(x, axis=1)                 # noqa: E704
def ravel(x): return np.ravel(x)                             # noqa: E704
def broadcast_to(x): return np.broadcast_to(x, (5, 3, 4))    # noqa: E704
def flip_all(x): return np.flip(x)                           # noqa: E704
def flip_axis(x): return np.flip(x, axis=-1)                 # noqa: E704
def concatenate(x, y): return np.concatenate((x, y))         # noqa: E704
def concatenate_axis(x, y): return np.concatenate([x, y], axis=-1)   # noqa: E704
def concatenate_none(x, y): return np.concatenate((x, y), axis=None)  # noqa: E704
def stack(x, y): return np.stack((x, y))                     # noqa: E704
def stack_axis(x, y): return np.stack([x, y], axis=-1)       # noqa: E704
def hstack(x, y): return np.hstack((x, y))                   # noqa: E704
def vstack(x, y): return np.vstack((x, y))                   # noqa: E704
def vstack_vectors(x, y): return np.vstack((x, y))           # noqa: E704
def hstack_vectors(x, y): return np.hstack((x, y * y))       # noqa: E704
def copy(x): return np.copy(x) * x                           # noqa: E704
def asarray(x): return np.asarray(x) * 2.0                   # noqa: E704
def asarray_f32(x): return np.asarray(x, dtype=np.float32)   # noqa: E704


def array_display(a, b):
    """np.array of a nested list holding values (a 2-D display, and a flat one carried through a
    loop): each element's cotangent is its own entry ([0][1] for b), and the flat one is an array."""
    m = np.array([[1.0, 10.0 - b], [a * b, 3.0]])
    v = np.array([a, 0.5])
    for _ in range(2):
        v = v + 0.1 * np.sin(v * b)
    return m @ v
def astype_f32(x): return x.astype(np.float32) * 2.0         # noqa: E704
def astype_int(x): return x.astype(np.int64) * x             # noqa: E704


def queries(x):
    n, m = np.shape(x)
    return x * (n + np.ndim(x)) + np.size(x) * x / len(x) + x.shape[-1]


# ------------------------------------------------------------------ creation
def zeros_ones(x):
    n = x.shape[0]
    return np.zeros((n, 4)) + x, np.ones(4) * x, np.zeros(3, dtype=np.float32)


def likes(x):
    e = np.empty_like(x)
    e[:] = 2.0 * x
    return np.zeros_like(x) + x, np.ones_like(x) * x, e


def ones_like_int(x):
    return np.ones_like(x, dtype=np.int32), np.full(3, 7, dtype=np.int32), np.ones((2, 3), dtype=np.int64)


def empty(x):
    e = np.empty((3, 4))
    e[...] = x
    return e * x


def full(s): return np.full((2, 3), s)                      # noqa: E704
def full_like(x, s): return np.full_like(x, s) * x          # noqa: E704
def arange(x): return x * np.arange(4)                      # noqa: E704
def arange_endpoints(x): return x * np.arange(0.0, 1.0, 0.25)  # noqa: E704
def linspace(a, b): return np.linspace(a, b, 5)             # noqa: E704
def linspace_times(x, b): return np.linspace(0.0, b, 4) * x  # noqa: E704
def eye(x): return np.eye(3) @ x + np.eye(3, dtype=np.float32)[0]   # noqa: E704


def casts(x):
    return float(x[0, 0]) * x + int(x[1, 1] * 10.0) * x + bool(x[0, 1] > 0.5) * x


# ------------------------------------------------------------------ indexing
def basic_slices(x):
    return x[0], x[-1, 2], x[1:3], x[::-1], x[:, 1], x[..., 0], x[None, 0], x[1:, ::2]


def gather_repeated(x): return x[np.array([0, 2, 2])]             # noqa: E704
def gather_negative(x): return x[np.array([-1, 0, -1])]           # noqa: E704
def gather_arg(x, i): return x[i]                                 # noqa: E704
def gather_cols(x): return x[:, np.array([1, 1, 0])]              # noqa: E704
def gather_pairs(x, i, j): return x[i, j]                         # noqa: E704
def gather_arange(x): return x[np.arange(2)]                      # noqa: E704
def mask_read(x): return x[x > 0.5]                               # noqa: E704
def mask_sum(x): return np.sum(x[x > 0.5] ** 2)                   # noqa: E704


def setitem_local(x):
    y = np.zeros_like(x)
    y[0] = x[1]
    y[1:3, ::2] = 7.0
    y[-1, -1] = x[0, 0] ** 2
    return y


def setitem_repeated(x, v):
    y = x * 1.0
    y[np.array([0, 2, 2])] = v
    return y


def setitem_mask(x):
    y = x * 2.0
    y[x > 0.5] = 0.0
    return y


def add_into_slice(x, y):
    z = x * y
    z[1:3] += x[0:2] ** 2
    return z


def writes_argument(x):
    x[0] = x[1] * 2.0
    return x * x


def writes_argument_augmented(x, y):
    x += y
    return np.sin(x)


# ------------------------------------------------------------------ control flow (tapes)
def loop(x, y):
    for i in range(3):
        x = np.sin(x) * y
    return x


def loop_rows(x):
    total = 0.0
    for row in x:
        total = total + np.sum(row ** 2) * row[0]
    return total


# ------------------------------------------------------------------ special
def stop_gradient(x): return tr.stop_gradient(x) * x        # noqa: E704


def stop_gradient_oracle(x0):
    fixed = x0[0].copy()
    return lambda x: fixed * x


@tr.custom_vjp
def _square(x):
    return x * x


def _square_fwd(x):
    return x * x, x


def _square_bwd(x, g):
    return (2.0 * x * g,)        # the true derivative, so that differences can check the rule's use


_square.defvjp(_square_fwd, _square_bwd)


def custom_vjp(x): return _square(x) * 3.0                   # noqa: E704


@tr.custom_jvp
def _log1pexp(x):
    return np.log1p(np.exp(x))


@_log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return _log1pexp(x), x_dot / (1.0 + np.exp(-x))


def custom_jvp(x): return _log1pexp(x) * x                   # noqa: E704


def nn_functions(x):
    return tr.nn.relu(x), tr.nn.softmax(x, axis=-1), tr.nn.logsumexp(x, axis=0)


# definitions (templates/definitions.py): NumPy and scipy functions written with primitives
def roll_flat(x): return np.roll(x, 2)                           # noqa: E704
def roll_axis(x): return np.roll(x, -1, axis=1)                  # noqa: E704
def diff_(x): return np.diff(x), np.diff(x, 2, axis=0)           # noqa: E704
def flips(x): return np.fliplr(x) * 2.0, np.flipud(x)            # noqa: E704
def rot90_(x): return np.rot90(x), np.rot90(x, 2), np.rot90(x, -1, axes=(1, 0))   # noqa: E704
def triangles(x): return np.tril(x), np.triu(x, 1), np.tril(x, -1)   # noqa: E704
def delete_(x): return np.delete(x, 1), np.delete(x, 0, axis=1), np.delete(x, np.array([0, -1]), axis=0)   # noqa: E704
def cross_(a, b): return np.cross(a, b)                          # noqa: E704
def logaddexp2_(x, y): return np.logaddexp2(x, y)                # noqa: E704
def sinc_(x): return np.sinc(x)                                  # noqa: E704
def heaviside_(x, y): return np.heaviside(x - 0.5, y)            # noqa: E704
def closeness(x, y): return np.isclose(x, y), np.allclose(x, x), np.count_nonzero(x > 0.5, axis=0)   # noqa: E704
def ptp_(x): return np.ptp(x), np.ptp(x, axis=0), np.ptp(x, axis=1, keepdims=True)   # noqa: E704
def nan_reductions(x): return np.nansum(x), np.nanmean(x, axis=0), np.nanmax(x, axis=1), np.nanmin(x)   # noqa: E704
def trapezoid_(y, x): return np.trapezoid(y), np.trapezoid(y, x[0], axis=-1), np.trapezoid(y, dx=0.5, axis=0)   # noqa: E704
def polyval_(p, x): return np.polyval(p, x)                      # noqa: E704
def cov_(x): return np.cov(x), np.cov(x, rowvar=False, bias=True), np.cov(x, ddof=0)   # noqa: E704
def corrcoef_(x): return np.corrcoef(x)                          # noqa: E704
def convolve_(a, v): return np.convolve(a, v), np.convolve(a, v, mode="same"), np.convolve(v, a, mode="valid")   # noqa: E704
def correlate_(a, v): return np.correlate(a, v), np.correlate(a, v, mode="full")   # noqa: E704
def logsumexp_(x): return scipy.special.logsumexp(x), scipy.special.logsumexp(x, axis=1), scipy.special.logsumexp(x, axis=0, keepdims=True)   # noqa: E704
def logsumexp_weighted(x, b): return scipy.special.logsumexp(x, axis=-1, b=b)   # noqa: E704
def expit_logit(x): return scipy.special.expit(x), scipy.special.logit(x), scipy.special.expit(-30.0 * x)   # noqa: E704
def xlogy_(x, y): return scipy.special.xlogy(x, y), scipy.special.xlog1py(x, y)   # noqa: E704
def softmaxes(x): return scipy.special.softmax(x), scipy.special.softmax(x, axis=0), scipy.special.log_softmax(x, axis=1)   # noqa: E704


# collectives: each row maps its function over the leading axis with a named axis
def _psum(x): return x / tr.lax.psum(x * x, "i")             # noqa: E704
def _pmean(x): return x - tr.lax.pmean(x, "i")               # noqa: E704
def _pmax(x): return x * tr.lax.pmax(x, "i")                 # noqa: E704
def _pmin(x): return x * tr.lax.pmin(x, "i")                 # noqa: E704
def _all_gather(x): return tr.lax.all_gather(x, "i") * x     # noqa: E704
def _axis_index(x): return x * tr.lax.axis_index("i")        # noqa: E704
def _ppermute(x): return tr.lax.ppermute(x, "i", ((0, 1), (1, 2), (2, 0))) * x   # noqa: E704
def psum(x): return tr.vmap(_psum, axis_name="i")(x)         # noqa: E704
def pmean(x): return tr.vmap(_pmean, axis_name="i")(x)       # noqa: E704
def pmax(x): return tr.vmap(_pmax, axis_name="i")(x)         # noqa: E704
def pmin(x): return tr.vmap(_pmin, axis_name="i")(x)         # noqa: E704
def all_gather(x): return tr.vmap(_all_gather, axis_name="i")(x)   # noqa: E704
def axis_index(x): return tr.vmap(_axis_index, axis_name="i")(x)   # noqa: E704
def ppermute(x): return tr.vmap(_ppermute, axis_name="i")(x)       # noqa: E704


# np.dot with one factor the same for every example: one product for the whole batch
def _dot_rows(x, w): return np.dot(x, w)                                   # noqa: E704
def _dot_sin_rows(x, w): return np.dot(np.sin(x), w)                       # noqa: E704
def _dot_loss(x, w): return np.sum(np.tanh(np.dot(x, w)))                  # noqa: E704
def _dot_loss_of_sin(x, w): return np.sum(np.tanh(np.dot(np.sin(x), w)))   # noqa: E704
def dot_rows(x, w): return tr.vmap(_dot_rows, in_axes=(0, None))(x, w)     # noqa: E704
def dot_batched(x, w): return tr.vmap(_dot_sin_rows, in_axes=(0, None))(x, w)   # noqa: E704
def _matmul_sin_rows(x, w): return np.sin(x) @ w                           # noqa: E704
def matmul_batched(x, w): return tr.vmap(_matmul_sin_rows, in_axes=(0, None))(x, w)   # noqa: E704
def dot_shared_left(x, w): return tr.vmap(_dot_rows, in_axes=(None, 0))(x, w)   # noqa: E704
def _matmul_loss(x, w): return np.sum(np.tanh(x @ w))                     # noqa: E704
_dot_loss_w = tr.grad(_dot_loss, argnums=1)
_dot_loss_of_sin_w = tr.grad(_dot_loss_of_sin, argnums=1)
_dot_loss_of_sin_x = tr.grad(_dot_loss_of_sin)
_matmul_loss_w = tr.grad(_matmul_loss, argnums=1)


def matmul_grads_batched(x, w):
    return tr.vmap(_matmul_loss_w, in_axes=(0, None))(x, w)


def dot_grads_batched(x, w):
    gw = tr.vmap(_dot_loss_w, in_axes=(0, None))(x, w) + tr.vmap(_dot_loss_of_sin_w, in_axes=(0, None))(x, w)
    return gw, tr.vmap(_dot_loss_of_sin_x, in_axes=(0, None))(x, w)


# ------------------------------------------------------------------ the rows
def _rows():
    rows = []
    add_ = rows.append
    one = lambda r: (U(r, 3, 4),)                               # noqa: E731
    two = lambda r: (U(r, 3, 4), U(r, 3, 4, lo=0.2, hi=1.2))     # noqa: E731
    g = globals()
    for name in UNARY:
        fn = g.get(name) or g[name + "_"]
        add_(Row(name, fn, lambda r, name=name: (UNARY_DOMAINS.get(name, lambda r: U(r, 3, 4))(r),)))
    for name in ["sin", "exp", "log", "sqrt", "tanh", "abs"]:
        fn = g.get(name) or g[name + "_"]
        gen = UNARY_DOMAINS.get(name, lambda r: U(r, 3, 4))
        add_(Row(name + "_f32", fn, lambda r, gen=gen: (gen(r).astype(np.float32),)))
    add_(Row("sin_size1", sin, lambda r: (U(r, 1, 3),)))
    add_(Row("exp_scalar", exp, lambda r: (U(r),)))
    add_(Row("abs_builtin", abs_builtin, lambda r: (away_from_zero(r, 3, 4),)))
    add_(Row("math_scalars", math_scalars, lambda r: (U(r),)))
    add_(Row("erf", erf, lambda r: (U(r, 3, 4, lo=-2.0, hi=2.0),)))
    add_(Row("erfc", erfc, lambda r: (U(r, 3, 4, lo=-2.0, hi=2.0),)))
    add_(Row("erfinv", erfinv, lambda r: (U(r, 3, 4, lo=-0.9, hi=0.9),)))
    add_(Row("gammaln", gammaln, lambda r: (U(r, 3, 4, lo=0.2, hi=6.0),)))
    add_(Row("digamma", digamma, lambda r: (U(r, 3, 4, lo=0.2, hi=6.0),)))
    add_(Row("polygamma", polygamma, lambda r: (U(r, 3, 4, lo=0.2, hi=6.0),)))
    add_(Row("gammaln_negative", gammaln, lambda r: (negative_non_integers(r, 3, 4),)))
    add_(Row("digamma_negative", digamma, lambda r: (negative_non_integers(r, 3, 4),)))
    for name, gen in [("erf", lambda r: F32(r, 3, 4, lo=-2.0, hi=2.0)), ("erfinv", lambda r: F32(r, 3, 4, lo=-0.9, hi=0.9)),
                      ("gammaln", lambda r: F32(r, 3, 4, lo=0.2, hi=6.0)), ("digamma", lambda r: F32(r, 3, 4, lo=0.2, hi=6.0))]:
        add_(Row(name + "_f32", g[name], lambda r, gen=gen: (gen(r),)))
    add_(Row("special_math_scalars", special_math_scalars, lambda r: (U(r, lo=0.2, hi=0.9),)))
    for name in STEP_FUNCTIONS:
        add_(Row(name, g[name], lambda r: (U(r, 3, 4, lo=-1.9, hi=1.9) + 0.05,)))
    add_(Row("round_decimals", round_, lambda r: (U(r, 3, 4) + 0.013,)))
    add_(Row("one_tuple", one_tuple, one))
    add_(Row("is_checks", is_checks, one, skip=NO_DERIVATIVE(BOOLEAN)))
    add_(Row("logical_unary", logical_unary, one, skip={**NO_DERIVATIVE(BOOLEAN),
                                                        **NOT_BATCHED("`not` of a per-example value is a "
                                                                      "Python truth value: vmap refuses it")}))
    # binary: same shapes, broadcasting, size-1 dims, scalars, float32, ties
    for name in ["add", "subtract", "multiply", "divide", "mod", "maximum", "minimum", "fmax", "fmin",
                 "arctan2", "hypot", "logaddexp"]:
        add_(Row(name, g[name], two))
    add_(Row("floor_divide", floor_divide, lambda r: (U(r, 3, 4, lo=0.1, hi=2.0), U(r, 3, 4, lo=0.3, hi=0.7))))
    add_(Row("power", power, lambda r: (U(r, 3, 4), U(r, 3, 4, lo=0.5, hi=2.5))))
    add_(Row("copysign", copysign, lambda r: (away_from_zero(r, 3, 4), away_from_zero(r, 3, 4))))
    add_(Row("add_broadcast_row", add, lambda r: (U(r, 3, 4), U(r, 4))))
    add_(Row("multiply_size1", multiply, lambda r: (U(r, 3, 1), U(r, 1, 4))))
    add_(Row("divide_column", divide, lambda r: (U(r, 3, 4), U(r, 3, 1, lo=0.5))))
    add_(Row("subtract_scalar", subtract, lambda r: (U(r), U(r, 3, 4))))
    add_(Row("scalar_times_array", scalar_times_array, lambda r: (U(r), U(r, 3, 4)),
             ))
    add_(Row("multiply_f32", multiply, lambda r: (F32(r, 3, 4), F32(r, 3, 4))))
    add_(Row("add_f32_f64", add, lambda r: (F32(r, 3, 4), U(r, 3, 4))))
    add_(Row("multiply_int", multiply, lambda r: (r.integers(-3, 4, (3, 4)), U(r, 3, 4)), wrt=(1,)))
    add_(Row("power_int", power_int, lambda r: (U(r, 3, 4), 3), wrt=(0,)))
    add_(Row("power_int_f32", power_int, lambda r: (F32(r, 3, 4), 3), wrt=(0,),
             skip={"jax": "batched, the exponent is an int64 array: NumPy (and so transformer) promotes a float32 "
                          "array ** an int64 array to float64, JAX to float32"}))
    add_(Row("power_literal", power_literal, one))
    add_(Row("power_literal_f32", power_literal, lambda r: (F32(r, 3, 4),)))
    add_(Row("maximum_ties", maximum, lambda r: (lambda x: (x, np.where(x > 0.5, x, 1.0 - x)))(U(r, 3, 4)),
             skip={"jvp": "not differentiable at a tie: the equal split is checked by vjp (coordinate-wise "
                          "differences see it), and the rest by transpose",
                   **NO_SECOND("at a tie the gradient jumps: differences of it say nothing")}))
    add_(Row("relu_literal_f32", relu_literal, lambda r: (F32(r, 3, 4, lo=-0.9, hi=0.9),)))
    add_(Row("relu_literal", relu_literal, lambda r: (away_from_zero(r, 3, 4),)))
    add_(Row("max_builtin", max_builtin, lambda r: (U(r), U(r)), ))
    add_(Row("comparisons", comparisons, two, skip=NO_DERIVATIVE(BOOLEAN)))
    add_(Row("logical_binary", logical_binary, two, skip=NO_DERIVATIVE(BOOLEAN)))
    add_(Row("bitwise_masks", bitwise_masks, two, skip=NO_DERIVATIVE(BOOLEAN)))
    add_(Row("bitwise_integers", bitwise_integers, lambda r: (r.integers(0, 16, (3, 4)), r.integers(0, 16, (3, 4))),
             skip=NO_DERIVATIVE(BOOLEAN)))
    add_(Row("where_combined_masks", where_combined_masks, two))
    add_(Row("where", where, two))
    add_(Row("where_scalar", where_scalar, one))
    add_(Row("where_mask", where_mask, lambda r: (U(r, 3, 4) > 0.5, U(r, 3, 4), U(r, 3, 4)), wrt=(1, 2)))
    add_(Row("clip", clip, one))
    add_(Row("clip_arrays", clip_arrays, lambda r: (U(r, 3, 4), U(r, 3, 4, lo=0.3, hi=0.5))))
    add_(Row("clip_no_lower", clip_no_lower, one))
    add_(Row("clip_no_upper", clip_no_upper, one))
    add_(Row("clip_method_f32", clip_method, lambda r: (F32(r, 3, 4),)))
    # reductions: axis None, int, negative, tuple, keepdims, float32, integers, zeros, ties
    three = lambda r: (U(r, 2, 3, 4),)                             # noqa: E731
    for name, gen in [("sum_all", one), ("sum_axis0", one), ("sum_neg_keep", three), ("sum_tuple", three),
                      ("mean_all", one), ("mean_axis1", one), ("mean_neg_keep", three), ("mean_tuple", three),
                      ("std_all", one), ("std_axis_ddof", one), ("var_all", one), ("var_tuple_keep", three),
                      ("max_all", one), ("max_axis", one), ("max_keep", one), ("max_tuple", three),
                      ("min_all", one), ("min_axis", one), ("min_tuple_keep", three),
                      ("cumsum_all", one), ("cumsum_axis", one), ("cumsum_neg", three),
                      ("std_negative_tuple", three), ("mean_keep_all", three)]:
        add_(Row(name, g[name], gen))
    add_(Row("sum_f32", sum_axis0, lambda r: (F32(r, 3, 4),)))
    add_(Row("mean_f32", mean_all, lambda r: (F32(r, 3, 4),)))
    add_(Row("max_f32", max_axis, lambda r: (F32(r, 3, 4),)))
    add_(Row("std_f32", std_all, lambda r: (F32(r, 3, 4),)))
    add_(Row("sum_int", sum_int, lambda r: (r.integers(-3, 4, (3, 4)), U(r, 4)), wrt=(1,)))
    tie_skip = {"jvp": "not differentiable at a tie: the equal split is checked by vjp (coordinate-wise "
                       "differences see it), and the rest by transpose", **NO_SECOND("at a tie the gradient jumps: differences of it say nothing")}
    add_(Row("max_ties", max_all, lambda r: (with_ties(r, 3, 4),), skip=tie_skip))
    add_(Row("max_axis_ties", max_axis, lambda r: (with_ties(r, 3, 4),), skip=tie_skip))
    add_(Row("min_ties", min_all, lambda r: (with_ties(r, 3, 4),), skip=tie_skip))
    # exact where entries are zero, one or two in a line, to second order (templates/misc.py)
    add_(Row("prod_all", prod_all, lambda r: (U(r, 2, 3, lo=0.5, hi=1.5),)))
    add_(Row("prod_axis1", prod_axis1, one))
    add_(Row("prod_keep_zeros", prod_keep, lambda r: (with_zeros(r, 2, 3, zeros=2),)))
    add_(Row("prod_zero", prod_all, lambda r: (with_zeros(r, 2, 3),)))
    add_(Row("cumprod_all", cumprod_all, lambda r: (U(r, 2, 3, lo=0.5, hi=1.5),)))
    add_(Row("cumprod_zeros", cumprod_axis, lambda r: (with_zeros(r, 3, 2, zeros=2),)))
    add_(Row("any_all", any_all, one, skip=NO_DERIVATIVE(BOOLEAN)))
    add_(Row("arg_extrema", arg_extrema, one, skip=NO_DERIVATIVE(BOOLEAN)))
    add_(Row("arg_extrema_ties", arg_extrema, lambda r: (with_ties(r, 3, 4),), skip=NO_DERIVATIVE(BOOLEAN)))
    for name, gen in [("norm_2", one), ("norm_axis", one), ("norm_keep", one), ("norm_fro", one),
                      ("norm_1", lambda r: (away_from_zero(r, 5),)), ("norm_inf", lambda r: (U(r, 5),)),
                      ("norm_1_axis", lambda r: (away_from_zero(r, 3, 4),)), ("norm_inf_axis", one)]:
        add_(Row(name, g[name], gen))
    add_(Row("norm_f32", norm_axis, lambda r: (F32(r, 3, 4),)))
    # the singular-value norms: distinct singular values (uniform entries give them), so both orders exist
    add_(Row("norm_spectral", norm_spectral, lambda r: (U(r, 3, 4),)))
    add_(Row("norm_smallest", norm_smallest, lambda r: (U(r, 4, 3),)))
    add_(Row("norm_nuclear", norm_nuclear, lambda r: (U(r, 3, 4),)))
    add_(Row("norm_nuclear_axes", norm_nuclear_axes, lambda r: (U(r, 3, 2, 4),)))
    # linear algebra
    add_(Row("dot_vectors", dot, lambda r: (U(r, 4), U(r, 4))))
    add_(Row("dot_matrices", dot, lambda r: (U(r, 3, 4), U(r, 4, 2))))
    add_(Row("dot_matrix_vector", dot, lambda r: (U(r, 3, 4), U(r, 4))))
    add_(Row("dot_vector_matrix", dot_method, lambda r: (U(r, 3), U(r, 3, 4))))
    add_(Row("dot_scalar", dot, lambda r: (U(r, 4), U(r))))
    add_(Row("matmul", matmul, lambda r: (U(r, 3, 4), U(r, 4, 2))))
    one_factor = {"vmap1": "the row maps over axis 0 itself", "vmap_none": "the row maps with in_axes=(0, None) itself"}
    for name in ["dot_rows", "dot_batched", "matmul_batched"]:
        add_(Row(name, g[name], lambda r: (U(r, 5, 4), U(r, 4, 3)), skip=one_factor))
    add_(Row("dot_grads_batched", dot_grads_batched, lambda r: (U(r, 5, 4), U(r, 4, 3)),
             skip={**one_factor, "jax": "its helpers are tr.grad objects, which the jax translation cannot read"}))
    add_(Row("dot_shared_left", dot_shared_left, lambda r: (U(r, 3, 4), U(r, 5, 4)), skip=one_factor))
    add_(Row("matmul_grads_batched", matmul_grads_batched, lambda r: (U(r, 5, 4), U(r, 4, 3)),
             skip={**one_factor, "jax": "its helper is a tr.grad object, which the jax translation cannot read"}))
    add_(Row("matmul_vector", matmul_fn, lambda r: (U(r, 4), U(r, 4, 2))))
    add_(Row("matmul_rank3", matmul, lambda r: (U(r, 2, 3, 4), U(r, 2, 4, 2))))
    add_(Row("matmul_rank3_by_2", matmul, lambda r: (U(r, 2, 3, 4), U(r, 4, 2))))
    # a stack times a shared factor under vmap_none: vmap's one-product helpers past two dimensions
    add_(Row("matmul_rank3_shared", matmul_shared_right, lambda r: (U(r, 2, 4, 2), U(r, 2, 3, 4))))
    add_(Row("matmul_stack_by_vector_shared", matmul_shared_right, lambda r: (U(r, 4), U(r, 2, 3, 4))))
    add_(Row("matmul_vector_by_stack_shared", matmul_shared_right, lambda r: (U(r, 2, 3, 4), U(r, 3))))
    add_(Row("matmul_f32", matmul, lambda r: (F32(r, 3, 4), F32(r, 4, 2))))
    add_(Row("quadratic_hessian", quadratic, lambda r: (U(r, 3, 16), U(r, 16)), hessian=1))
    add_(Row("outer", outer, lambda r: (U(r, 3), U(r, 4))))
    add_(Row("inner_vectors", inner, lambda r: (U(r, 4), U(r, 4))))
    add_(Row("inner_matrices", inner, lambda r: (U(r, 3, 4), U(r, 2, 4))))
    add_(Row("vdot", vdot, lambda r: (U(r, 3, 2), U(r, 3, 2))))
    add_(Row("trace", trace, lambda r: (U(r, 3, 3),)))
    add_(Row("inv", inv, lambda r: (spd(r, 3),)))
    add_(Row("solve", solve, lambda r: (spd(r, 3), U(r, 3))))
    add_(Row("solve_matrix", solve, lambda r: (spd(r, 3), U(r, 3, 2))))
    # a stack of matrices: a vector b is solved against each matrix (NumPy 2's rule), with as many
    # matrices as rows too (where a product a_dot @ z that misreads the pairing still has a shape)
    add_(Row("solve_stack_vector", solve, lambda r: (U(r, 2, 3, 3) + 3 * np.eye(3), U(r, 3))))
    add_(Row("solve_stack_vector_square", solve, lambda r: (U(r, 3, 3, 3) + 3 * np.eye(3), U(r, 3))))
    add_(Row("solve_stack_matrix", solve, lambda r: (U(r, 2, 3, 3) + 3 * np.eye(3), U(r, 2, 3, 2))))
    add_(Row("solve_stack_broadcast", solve, lambda r: (spd(r, 3), U(r, 2, 3, 2))))
    add_(Row("det", det, lambda r: (spd(r, 3),)))
    # decompositions; cholesky, eigh and eigvalsh take a symmetric matrix, perturbed symmetrically
    # (of_symmetric_part), slogdet any well-conditioned one; stacks are NumPy's leading axes
    symmetric_spd = lambda r: (symmetric(spd(r, 3)),)                                  # noqa: E731
    symmetric_stack = lambda r: (np.stack([symmetric(spd(r, 3)) for _ in range(2)]),)  # noqa: E731
    symmetric_f32 = lambda r: (symmetric(spd(r, 3)).astype(np.float32),)               # noqa: E731
    shared_and_symmetric = lambda r: (U(r, 3), symmetric(spd(r, 3)))                   # noqa: E731
    for name, fn, gen in [("cholesky", cholesky, symmetric_spd), ("cholesky_stack", cholesky, symmetric_stack),
                          ("cholesky_f32", cholesky, symmetric_f32),
                          ("eigh", eigh, symmetric_spd), ("eigh_stack", eigh, symmetric_stack),
                          ("eigh_f32", eigh, symmetric_f32), ("eigh_values", eigh_values, symmetric_spd),
                          ("eigvalsh", eigvalsh, symmetric_spd), ("eigvalsh_stack", eigvalsh, symmetric_stack),
                          ("eigvalsh_f32", eigvalsh, symmetric_f32)]:
        add_(Row(name, fn, gen, oracle=of_symmetric_part(fn)))
    for name, fn in [("cholesky_shared", cholesky_shared), ("eigh_shared", eigh_shared)]:
        add_(Row(name, fn, shared_and_symmetric, oracle=of_symmetric_part(fn, position=1)))
    add_(Row("slogdet", slogdet, lambda r: (spd(r, 3),)))
    add_(Row("slogdet_logabsdet", slogdet_logabsdet, lambda r: (spd(r, 3),)))
    add_(Row("slogdet_stack", slogdet, lambda r: (np.stack([spd(r, 3), -spd(r, 3)]),)))   # a negative sign too
    add_(Row("slogdet_f32", slogdet, lambda r: (spd(r, 3).astype(np.float32),)))
    add_(Row("slogdet_shared", slogdet_shared, lambda r: (U(r, 3), spd(r, 3))))
    # shapes
    for name, gen in [("reshape", three), ("reshape_neg", three), ("transpose", three),
                      ("transpose_axes", three), ("swapaxes", three), ("moveaxis", three), ("expand_dims", one),
                      ("squeeze", lambda r: (U(r, 3, 1, 4),)), ("ravel", three), ("broadcast_to", one),
                      ("flip_all", three), ("flip_axis", one), ("asarray", one), ("asarray_f32", one),
                      ("astype_f32", one)]:
        add_(Row(name, g[name], gen))
    add_(Row("array_display", array_display, lambda r: (U(r), U(r))))
    add_(Row("transpose_method", transpose_method, one))
    add_(Row("copy", copy, one))
    add_(Row("astype_int", astype_int, lambda r: (U(r, 3, 4, lo=0.1, hi=3.9),)))
    for name in ["concatenate", "concatenate_axis", "stack", "stack_axis", "hstack", "vstack"]:
        add_(Row(name, g[name], two))      # adjoints that slice and index: every order, every transform
    add_(Row("concatenate_none", g["concatenate_none"], two))
    add_(Row("vstack_vectors", vstack_vectors, lambda r: (U(r, 4), U(r, 4))))
    add_(Row("hstack_vectors", hstack_vectors, lambda r: (U(r, 4), U(r, 3))))
    add_(Row("queries", queries, one))
    # creation
    add_(Row("zeros_ones", zeros_ones, one))
    add_(Row("likes", likes, one, skip={"jax": NO_JAX_INPLACE}))
    add_(Row("empty", empty, one, skip={"jax": NO_JAX_INPLACE}))
    add_(Row("ones_like_int", ones_like_int, one, skip=NO_DERIVATIVE(BOOLEAN)))
    add_(Row("full", full, lambda r: (U(r),)))
    add_(Row("full_like", full_like, lambda r: (U(r, 3, 4), U(r))))
    add_(Row("arange", arange, one))
    add_(Row("arange_endpoints", arange_endpoints, one))
    add_(Row("linspace", linspace, lambda r: (U(r), U(r, lo=1.0, hi=2.0))))
    add_(Row("linspace_times", linspace_times, lambda r: (U(r, 4), U(r, lo=1.0, hi=2.0))))
    add_(Row("eye", eye, lambda r: (U(r, 3),)))
    add_(Row("casts", casts, one))
    # indexing
    idx = lambda r: r.permutation([0, 2, 2, -1])                # noqa: E731
    add_(Row("basic_slices", basic_slices, one))
    add_(Row("gather_repeated", gather_repeated, lambda r: (U(r, 4),)))
    add_(Row("gather_repeated_rows", gather_repeated, one))
    add_(Row("gather_negative", gather_negative, lambda r: (U(r, 4),)))
    add_(Row("gather_arg", gather_arg, lambda r: (U(r, 4, 3), idx(r))))
    add_(Row("gather_cols", gather_cols, one))
    add_(Row("gather_pairs", gather_pairs, lambda r: (U(r, 3, 4), np.array([0, 2, 2, -1]), r.permutation([1, 1, 3, -1])),
))
    add_(Row("gather_arange", gather_arange, one))
    mask_shape = NOT_BATCHED("the output's shape depends on the values (a boolean mask): vmap cannot batch it")
    add_(Row("mask_read", mask_read, one, skip={**mask_shape}))
    add_(Row("mask_sum", mask_sum, one, refuses=PER_EXAMPLE_MASK))
    add_(Row("setitem_local", setitem_local, one, skip={"jax": NO_JAX_INPLACE}))
    add_(Row("setitem_repeated", setitem_repeated, lambda r: (U(r, 4, 3), U(r, 3, 3)), skip={"jax": NO_JAX_INPLACE}))
    add_(Row("setitem_mask", setitem_mask, one, skip={"jax": NO_JAX_INPLACE}))
    add_(Row("add_into_slice", add_into_slice, two, skip={"jax": NO_JAX_INPLACE}))
    add_(Row("writes_argument", writes_argument, one, skip={"jax": NO_JAX_INPLACE}))
    add_(Row("writes_argument_augmented", writes_argument_augmented, two, skip={"jax": NO_JAX_INPLACE}))
    # loops: the tapes of reverse mode
    add_(Row("loop", loop, two, skip={"jax": "jax would unroll the same loop; nothing new to compare"}))
    add_(Row("loop_rows", loop_rows, one, skip={"jax": "iterating over a jax array's rows is the same loop"}))
    # special
    add_(Row("stop_gradient", stop_gradient, one, oracle=stop_gradient_oracle))
    no_jax = {"jax": "uses transformer's own custom rule objects, which jax cannot call"}
    no_forward = "forward mode of a custom_vjp function has no rule to follow"
    add_(Row("custom_vjp", custom_vjp, one, skip=no_jax, refuses=no(("jvp", "jit_jvp", "transpose"), no_forward)))
    add_(Row("custom_jvp", custom_jvp, one, skip=no_jax))
    add_(Row("nn_functions", nn_functions, lambda r: (U(r, 3, 4, lo=-2.0, hi=2.0),)))
    # definitions
    square = lambda r: (U(r, 3, 3),)                            # noqa: E731
    comparable = lambda r: (U(r, 3, 4), np.where(r.uniform(size=(3, 4)) < 0.5, 0.0, U(r, 3, 4)))   # noqa: E731
    for name, gen in [("roll_flat", one), ("roll_axis", one), ("diff_", one), ("flips", one), ("rot90_", square),
                      ("triangles", one), ("delete_", one), ("cross_", lambda r: (U(r, 3, 3), U(r, 3))), ("logaddexp2_", two),
                      ("sinc_", lambda r: (U(r, 3, 4, lo=-1.5, hi=1.5),)), ("ptp_", one), ("nan_reductions", one),
                      ("trapezoid_", lambda r: (U(r, 3, 4), U(r, 2, 4))),
                      ("convolve_", lambda r: (U(r, 5), U(r, 3))),
                      ("correlate_", lambda r: (U(r, 5), U(r, 3))), ("logsumexp_", one),
                      ("logsumexp_weighted", two), ("expit_logit", one),
                      ("xlogy_", lambda r: (np.where(r.uniform(size=4) < 0.5, 0.0, U(r, 4)), U(r, 4))),
                      ("softmaxes", one)]:
        add_(Row(name, g[name], gen))
    add_(Row("cov_", cov_, one))
    add_(Row("corrcoef_", corrcoef_, one))
    add_(Row("polyval_", polyval_, lambda r: (U(r, 4), U(r, 3))))   # Horner's loop over p
    add_(Row("heaviside_", heaviside_, lambda r: (np.array([0.5, 0.2, 0.9, 0.5]), U(r, 4)), wrt=(1,)))
    add_(Row("closeness", closeness, comparable, skip=NO_DERIVATIVE(BOOLEAN)))
    collective = {"vmap1": "the row maps over axis 0 itself; vmap1 would map a different axis than its collective",
                  "vmap_none": ONE_ARG}
    for name in ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "ppermute"]:
        add_(Row(name, g[name], lambda r: (U(r, 3, 4),), skip=collective, helpers=(g["_" + name],)))
    return rows


def _family_rows() -> list:
    """The rows kept beside a family of primitives: ``tests/rule_rows_<family>.py``, each with a
    ``rows()`` returning its list (written with this module's Row and generators)."""
    import importlib
    from pathlib import Path
    found = []
    for path in sorted(Path(__file__).parent.glob("rule_rows_*.py")):
        found += importlib.import_module(path.stem).rows()
    return found


ROWS = _rows() + _family_rows()
BY_NAME = {row.name: row for row in ROWS}
assert len(BY_NAME) == len(ROWS), "row names must be unique"
