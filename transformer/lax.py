"""Primitives that have no NumPy spelling, used inside transformed functions."""
from __future__ import annotations

import builtins

import numpy as np

from . import tree_util


def stop_gradient(x):
    """Return ``x`` unchanged; derivatives do not flow through it."""
    return x


# ------------------------------------------------------------- named axes
# Collectives over a mapped axis (``vmap(f, axis_name="i")``, ``pmap``).  The
# transforms rewrite these calls; run outside any mapped axis they have no
# axis to reduce over, as in JAX.
def _unbound(axis_name):
    return NameError(f"unbound axis name: {axis_name!r} (call this inside vmap or pmap with axis_name={axis_name!r})")


def psum(x, axis_name):
    """The sum of ``x`` over every example along ``axis_name``."""
    raise _unbound(axis_name)


def pmean(x, axis_name):
    """The mean of ``x`` over every example along ``axis_name``."""
    raise _unbound(axis_name)


def pmax(x, axis_name):
    """The maximum of ``x`` over every example along ``axis_name``."""
    raise _unbound(axis_name)


def pmin(x, axis_name):
    """The minimum of ``x`` over every example along ``axis_name``."""
    raise _unbound(axis_name)


def all_gather(x, axis_name):
    """Every example's ``x`` stacked along a new leading axis."""
    raise _unbound(axis_name)


def axis_index(axis_name):
    """This example's position along ``axis_name``."""
    raise _unbound(axis_name)


def ppermute(x, axis_name, perm, *, inverse=False):
    """``x`` sent along ``axis_name`` by ``perm``, a sequence of (source, destination)
    pairs; a device no pair names as destination receives zeros (JAX's meaning).

    ``inverse=True`` reads the pairs the other way round, (destination, source):
    the adjoint of a ppermute is the ppermute with the inverted permutation, and
    a flag keeps the permutation a static literal in generated code."""
    raise NameError(f"lax.ppermute over {axis_name!r} runs only inside transformed code that maps that axis: "
                    f"pmap(..., axis_name={axis_name!r}) or vmap(..., axis_name={axis_name!r})")


# ----------------------------------------------------------- special functions
# scipy.special's (and math's erf, erfc, lgamma) under JAX's lax names, which generated code
# spells.  scipy.special is imported on the first call, not with transformer (it takes about as
# long to import as transformer itself).  Each keeps float32 as float32.
def erf(x):
    """The error function, elementwise (scipy.special.erf, math.erf)."""
    from scipy import special
    return special.erf(x)


def erfc(x):
    """1 - erf(x) without the cancellation (scipy.special.erfc, math.erfc)."""
    from scipy import special
    return special.erfc(x)


def erf_inv(x):
    """The inverse of erf on (-1, 1) (scipy.special.erfinv)."""
    from scipy import special
    return special.erfinv(x)


def lgamma(x):
    """log |Gamma(x)| (scipy.special.gammaln, math.lgamma)."""
    from scipy import special
    return special.gammaln(x)


def digamma(x):
    """Gamma'(x) / Gamma(x), the derivative of lgamma (scipy.special.digamma, scipy.special.psi)."""
    from scipy import special
    return special.digamma(x)


def polygamma(n, x):
    """The n-th derivative of digamma (scipy.special.polygamma), in x's precision: scipy computes
    it in float64 whatever x is (and answers scalars with 0-d arrays, made scalars here)."""
    from scipy import special
    result = special.polygamma(n, x)
    return result.astype(np.result_type(x, 1.0), copy=False)[()]


# ------------------------------------------------------------- control flow
# JAX's structured control flow, written as the Python loops and branches they stand for.  The
# normalizer inlines these like a user's helper, and the function arguments with them, so every
# transform sees plain loops and branches: reverse mode differentiates a while_loop here, which
# JAX refuses.
def fori_loop(lower, upper, body_fun, init_val):
    """``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)``, from ``init_val``."""
    val = init_val
    for i in range(lower, upper):
        val = body_fun(i, val)
    return val


def while_loop(cond_fun, body_fun, init_val):
    """``val = body_fun(val)`` while ``cond_fun(val)``, from ``init_val``."""
    val = init_val
    while cond_fun(val):
        val = body_fun(val)
    return val


def cond(pred, true_fun, false_fun, operand):
    """``true_fun(operand)`` if ``pred`` else ``false_fun(operand)`` (one operand: pass a tuple for several)."""
    if pred:
        out = true_fun(operand)
    else:
        out = false_fun(operand)
    return out


def switch(index, branches, *operands):
    """``branches[index](*operands)``, with ``index`` clamped to the branches (JAX's meaning).  Inside
    transformed code it is an if/elif chain over the branches (templates/definitions.py), so each
    transform sees a plain branch."""
    chosen = builtins.min(builtins.max(int(index), 0), len(branches) - 1)   # (lax.max is elementwise)
    return branches[chosen](*operands)


def select(pred, on_true, on_false):
    """Elementwise choice, ``np.where(pred, on_true, on_false)``."""
    return np.where(pred, on_true, on_false)


def scan(f, init, xs, length=None, reverse=False):
    """``carry, y = f(carry, x)`` for each row ``x`` of ``xs`` (or ``length`` times with ``xs=None``),
    from ``init``; returns the last carry and the ``y`` stacked.  ``xs`` and ``y`` may be tuples,
    lists or dicts of arrays (pytrees, as in JAX): ``x`` is then the same structure of rows, and each
    of ``y``'s arrays is stacked on its own.  Derivatives of a scan with such a ``y`` are refused (the
    rows are written into arrays a tuple holds); of one array ``y``, taken."""
    n = _rows_in(xs, length)
    first = n - 1 if reverse else 0
    carry, y = f(init, _row_of(xs, first))
    ys = tree_util.tree_map(lambda leaf: _stack_of(n, leaf), y)
    tree_util.tree_map(lambda stack, leaf: _put_row(stack, first, leaf), ys, y)
    for step in range(1, n):
        i = n - 1 - step if reverse else step
        carry, y = f(carry, _row_of(xs, i))
        tree_util.tree_map(lambda stack, leaf: _put_row(stack, i, leaf), ys, y)
    return carry, ys


def map(f, xs):
    """``f`` applied to each row of ``xs``, the results stacked (as ``np.stack([f(x) for x in xs])``);
    a result that is a pytree of arrays is stacked array by array, as in JAX."""
    n = len(xs)
    y = f(xs[0])
    ys = tree_util.tree_map(lambda leaf: _stack_of(n, leaf), y)
    tree_util.tree_map(lambda stack, leaf: _put_row(stack, 0, leaf), ys, y)
    for i in range(1, n):
        tree_util.tree_map(lambda stack, leaf: _put_row(stack, i, leaf), ys, f(xs[i]))
    return ys


def _rows_in(xs, length):
    """The rows of ``xs`` (of its first array, for a pytree of them), or ``length`` with ``xs=None``."""
    if xs is None:
        return length
    return len(tree_util.tree_leaves(xs)[0])


def _row_of(xs, i):
    """Row ``i`` of each array of ``xs``, in its structure (None for ``xs=None``)."""
    if xs is None:
        return None
    return tree_util.tree_map(lambda leaf: leaf[i], xs)


def _stack_of(n, leaf):
    """Zeros for ``n`` rows shaped like ``leaf``."""
    return np.zeros((n,) + np.shape(leaf))


def _put_row(stack, i, leaf):
    """Row ``i`` of ``stack`` set to ``leaf``, in place (``leaf`` returned: tree_map's result is not used)."""
    stack[i] = leaf
    return leaf


# ---------------------------------------------------- normal distribution
def ndtr(x):
    """The standard normal distribution function, elementwise (scipy.special.ndtr)."""
    from scipy import special
    return special.ndtr(x)


def log_ndtr(x):
    """log(ndtr(x)), accurate far into the left tail (scipy.special.log_ndtr)."""
    from scipy import special
    return special.log_ndtr(x)


# ------------------------------------------------------- elementwise names
# JAX's lax spells NumPy's elementwise functions its own way; each is the NumPy call (whose
# derivatives and batching are the primitives' own), so a JAX program keeps its lax calls.
# lax.div is left out: it rounds integer quotients toward zero, and x / y does not.
def abs(x):
    return np.abs(x)


def neg(x):
    return -x


def sign(x):
    return np.sign(x)


def add(x, y):
    return x + y


def sub(x, y):
    return x - y


def mul(x, y):
    return x * y


def rem(x, y):
    """The remainder with the dividend's sign, as C's fmod (np.remainder takes the divisor's)."""
    return np.fmod(x, y)


def pow(x, y):
    return np.power(x, y)


def integer_pow(x, y):
    return x ** y


def square(x):
    return np.square(x)


def sqrt(x):
    return np.sqrt(x)


def rsqrt(x):
    return 1.0 / np.sqrt(x)


def cbrt(x):
    return np.cbrt(x)


def exp(x):
    return np.exp(x)


def exp2(x):
    return np.exp2(x)


def expm1(x):
    return np.expm1(x)


def log(x):
    return np.log(x)


def log1p(x):
    return np.log1p(x)


def logistic(x):
    """1 / (1 + exp(-x)), jax.nn.sigmoid, written so that exp never overflows: as 1 / (1 + exp(-x))
    its derivative below x = -709 was inf * 0, NaN, where JAX's s (1 - s) is 0."""
    decay = np.exp(np.where(x >= 0, -x, x))     # exp(-|x|), with -|x|'s derivative everywhere
    return np.where(x >= 0, 1.0 / (1.0 + decay), decay / (1.0 + decay))


def sin(x):
    return np.sin(x)


def cos(x):
    return np.cos(x)


def tan(x):
    return np.tan(x)


def asin(x):
    return np.arcsin(x)


def acos(x):
    return np.arccos(x)


def atan(x):
    return np.arctan(x)


def atan2(x, y):
    return np.arctan2(x, y)


def sinh(x):
    return np.sinh(x)


def cosh(x):
    return np.cosh(x)


def tanh(x):
    return np.tanh(x)


def asinh(x):
    return np.arcsinh(x)


def acosh(x):
    return np.arccosh(x)


def atanh(x):
    return np.arctanh(x)


def floor(x):
    return np.floor(x)


def ceil(x):
    return np.ceil(x)


def round(x, rounding_method=0):
    """Halves away from zero (JAX's default, ``rounding_method=0``), or to even (``1``, np.rint).
    ``x - trunc(x)`` is exact, so a value just below a half is not taken for one."""
    if rounding_method == 1:
        return np.rint(x)
    whole = np.trunc(x)
    return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)


def is_finite(x):
    return np.isfinite(x)


def max(x, y):
    return np.maximum(x, y)


def min(x, y):
    return np.minimum(x, y)


def clamp(min, x, max):
    """``x`` clipped to [min, max] (JAX's argument order: the bounds either side)."""
    return np.clip(x, min, max)


def eq(x, y):
    return x == y


def ne(x, y):
    return x != y


def lt(x, y):
    return x < y


def le(x, y):
    return x <= y


def gt(x, y):
    return x > y


def ge(x, y):
    return x >= y


def sort(operand, dimension=-1):
    """One array sorted along ``dimension`` (JAX's several-operand form is not here)."""
    return np.sort(operand, axis=dimension)


def __getattr__(name):
    # a JAX name transformer lacks: say what to use instead (jax_names.py)
    from .jax_names import missing
    raise missing("lax", name)
