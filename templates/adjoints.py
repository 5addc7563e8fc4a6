"""Adjoint rules: how a primitive's output cotangent flows back to its inputs.

Each rule is a plain Python function.  Its parameters are placeholders the
vjp transform binds to names in the generated code:

* ``z_bar`` — the cotangent of the result, ``z`` — the result itself;
* the primitive's own parameters (``x``, ``y``, ``axis``, ``keepdims``...).

It returns the contribution to each parameter named in ``wrt`` (a tuple when
there are several), already reduced to that parameter's shape.  The body is
inlined into the generated backward sweep, so it is written for a reader:
``x_bar += z_bar * np.cos(x)`` comes from ``return z_bar * np.cos(x)``.
"""
import numpy as np

from transformer import lax
from transformer import runtime as rt
from transformer.rules import rule, unsupported, zero_derivative

# ------------------------------------------------------------ no derivative
zero_derivative(
    "sign", "floor", "ceil", "rint", "trunc", "round", "isnan", "isinf", "isfinite",
    "not", "logical_not", "invert", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor",
    "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
    "floor_divide", "any", "all", "argmax", "argmin",
    "shape", "ndim", "size", "len", "int", "bool",
    "zeros", "ones", "empty", "zeros_like", "ones_like", "empty_like", "eye",
    "stop_gradient",
    "rt.zeros_like", "rt.scalar_seed", "rt.number_per_example", "rt.truth_value_per_example", "rt.stack", "rt.index_slice", "rt.has_cotangent",
)


# ------------------------------------------------------------------ unary
@rule("adjoint", "negative", wrt=("x",))
def negative(z_bar, z, x):
    return -z_bar


@rule("adjoint", "positive", "float", "copy", "asarray", "rt.copy", wrt=("x",))
def identity(z_bar, z, x):
    return z_bar


@rule("adjoint", "sin", wrt=("x",))
def sin(z_bar, z, x):
    return z_bar * np.cos(x)


@rule("adjoint", "cos", wrt=("x",))
def cos(z_bar, z, x):
    return -z_bar * np.sin(x)


@rule("adjoint", "tan", wrt=("x",))
def tan(z_bar, z, x):
    return z_bar * (1.0 + z * z)


@rule("adjoint", "arcsin", wrt=("x",))
def arcsin(z_bar, z, x):
    return z_bar / np.sqrt(1.0 - x * x)


@rule("adjoint", "arccos", wrt=("x",))
def arccos(z_bar, z, x):
    return -z_bar / np.sqrt(1.0 - x * x)


@rule("adjoint", "arctan", wrt=("x",))
def arctan(z_bar, z, x):
    return z_bar / (1.0 + x * x)


@rule("adjoint", "sinh", wrt=("x",))
def sinh(z_bar, z, x):
    return z_bar * np.cosh(x)


@rule("adjoint", "cosh", wrt=("x",))
def cosh(z_bar, z, x):
    return z_bar * np.sinh(x)


@rule("adjoint", "tanh", wrt=("x",))
def tanh(z_bar, z, x):
    return z_bar * (1.0 - z * z)


@rule("adjoint", "arcsinh", wrt=("x",))
def arcsinh(z_bar, z, x):
    return z_bar / np.sqrt(x * x + 1.0)


@rule("adjoint", "arccosh", wrt=("x",))
def arccosh(z_bar, z, x):
    return z_bar / np.sqrt(x * x - 1.0)


@rule("adjoint", "arctanh", wrt=("x",))
def arctanh(z_bar, z, x):
    return z_bar / (1.0 - x * x)


@rule("adjoint", "exp", wrt=("x",))
def exp(z_bar, z, x):
    return z_bar * z


@rule("adjoint", "expm1", wrt=("x",))
def expm1(z_bar, z, x):
    return z_bar * (z + 1.0)


@rule("adjoint", "exp2", wrt=("x",))
def exp2(z_bar, z, x):
    return z_bar * z * 0.6931471805599453


@rule("adjoint", "log", wrt=("x",))
def log(z_bar, z, x):
    return z_bar / x


@rule("adjoint", "log1p", wrt=("x",))
def log1p(z_bar, z, x):
    return z_bar / (1.0 + x)


@rule("adjoint", "log2", wrt=("x",))
def log2(z_bar, z, x):
    return z_bar / (x * 0.6931471805599453)


@rule("adjoint", "log10", wrt=("x",))
def log10(z_bar, z, x):
    return z_bar / (x * 2.302585092994046)


@rule("adjoint", "sqrt", wrt=("x",))
def sqrt(z_bar, z, x):
    return z_bar * 0.5 / z


@rule("adjoint", "cbrt", wrt=("x",))
def cbrt(z_bar, z, x):
    return z_bar / (3.0 * z * z)


@rule("adjoint", "square", wrt=("x",))
def square(z_bar, z, x):
    return z_bar * 2.0 * x


@rule("adjoint", "reciprocal", wrt=("x",))
def reciprocal(z_bar, z, x):
    return -z_bar * z * z


@rule("adjoint", "abs", "fabs", wrt=("x",))
def abs_(z_bar, z, x):
    return z_bar * np.sign(x)


@rule("adjoint", "deg2rad", wrt=("x",))
def deg2rad(z_bar, z, x):
    return z_bar * 0.017453292519943295


@rule("adjoint", "rad2deg", wrt=("x",))
def rad2deg(z_bar, z, x):
    return z_bar * 57.29577951308232


@rule("adjoint", "erf", wrt=("x",))
def erf(z_bar, z, x):
    return z_bar * 1.1283791670955126 * np.exp(-x * x)          # 2 / sqrt(pi)


@rule("adjoint", "erfc", wrt=("x",))
def erfc(z_bar, z, x):
    return -z_bar * 1.1283791670955126 * np.exp(-x * x)


@rule("adjoint", "erfinv", wrt=("x",))
def erfinv(z_bar, z, x):
    return z_bar * 0.886226925452758 * np.exp(z * z)            # sqrt(pi) / 2: 1 / erf'(z)


@rule("adjoint", "gammaln", wrt=("x",))
def gammaln(z_bar, z, x):
    return z_bar * lax.digamma(x)


@rule("adjoint", "digamma", wrt=("x",))
def digamma(z_bar, z, x):
    return z_bar * lax.polygamma(1, x)


@rule("adjoint", "polygamma", wrt=("x",))
def polygamma(z_bar, z, n, x):
    # the order n is a whole number: no derivative (scipy's polygamma is NaN between them)
    return rt.unbroadcast(z_bar * lax.polygamma(n + 1, x), x)


# ----------------------------------------------------------------- binary
@rule("adjoint", "add", wrt=("x", "y"))
def add(z_bar, z, x, y):
    return rt.unbroadcast(z_bar, x), rt.unbroadcast(z_bar, y)


@rule("adjoint", "subtract", wrt=("x", "y"))
def subtract(z_bar, z, x, y):
    # negated after the sum where y was broadcast: one pass over z_bar fewer, the same bits
    return rt.unbroadcast(z_bar, x), -rt.unbroadcast(z_bar, y)


@rule("adjoint", "multiply", wrt=("x", "y"))
def multiply(z_bar, z, x, y):
    return rt.unbroadcast(z_bar * y, x), rt.unbroadcast(z_bar * x, y)


@rule("adjoint", "divide", wrt=("x", "y"))
def divide(z_bar, z, x, y):
    return rt.unbroadcast(z_bar / y, x), rt.unbroadcast(-z_bar * z / y, y)


@rule("adjoint", "power", wrt=("x", "y"))
def power(z_bar, z, x, y):
    # the exponent's cotangent is z log x: for a float exponent only (an integer one has none, and
    # log of a negative x would warn), with log(1) where x == 0, as JAX does (0 ** y is 0 for y > 0)
    base = np.where(np.logical_and(rt.has_cotangent(y), x != 0), x, 1)
    return rt.unbroadcast(z_bar * y * x ** (y - 1), x), rt.unbroadcast(z_bar * z * np.log(base), y)


@rule("adjoint", "mod", wrt=("x", "y"))
def mod(z_bar, z, x, y):
    return rt.unbroadcast(z_bar, x), rt.unbroadcast(-z_bar * np.floor(x / y), y)


@rule("adjoint", "maximum", "fmax", wrt=("x", "y"))
def maximum(z_bar, z, x, y):
    # ties split the cotangent evenly, as JAX does; masks multiply the cotangent itself, so it
    # keeps its dtype (a float mask such as 0.5 * (x == y) is float64 and widens float32)
    x_share = z_bar * (x > y) + 0.5 * z_bar * (x == y)
    return rt.unbroadcast(x_share, x), rt.unbroadcast(z_bar - x_share, y)


@rule("adjoint", "minimum", "fmin", wrt=("x", "y"))
def minimum(z_bar, z, x, y):
    x_share = z_bar * (x < y) + 0.5 * z_bar * (x == y)
    return rt.unbroadcast(x_share, x), rt.unbroadcast(z_bar - x_share, y)


@rule("adjoint", "arctan2", wrt=("x", "y"))
def arctan2(z_bar, z, x, y):
    # z = arctan(x / y) with np.arctan2(x, y): x is the ordinate
    scale = z_bar / (x * x + y * y)
    return rt.unbroadcast(scale * y, x), rt.unbroadcast(-scale * x, y)


@rule("adjoint", "hypot", wrt=("x", "y"))
def hypot(z_bar, z, x, y):
    """At x = y = 0 there is no derivative; JAX's convention gives each argument 1/2 there (a tie of
    max(|x|, |y|), each |.| with slope +1 at 0) where x / z would be 0 / 0."""
    at_zero = z == 0
    safe_z = np.where(at_zero, 1.0, z)
    return (rt.unbroadcast(z_bar * np.where(at_zero, 0.5, x / safe_z), x),
            rt.unbroadcast(z_bar * np.where(at_zero, 0.5, y / safe_z), y))


def logaddexp_weight(x, y, z):
    """d logaddexp(x, y) / dx, exp(x - z), written as the logistic of x - y so that an infinite x or y
    gives its limit (1 for x = inf, 0 for x = -inf) where exp(x - z) was exp(inf - inf), NaN; x = y
    (both infinite too) gives 1/2.  d/dy is 1 minus it.  (x - y is computed in z's precision.)"""
    return lax.logistic(np.where(x == y, np.zeros_like(z), x - y))


@rule("adjoint", "logaddexp", wrt=("x", "y"))
def logaddexp(z_bar, z, x, y):
    weight = logaddexp_weight(x, y, z)
    return rt.unbroadcast(z_bar * weight, x), rt.unbroadcast(z_bar * (1.0 - weight), y)


@rule("adjoint", "copysign", wrt=("x",))
def copysign(z_bar, z, x, y):
    return rt.unbroadcast(z_bar * np.sign(x) * np.copysign(1.0, y), x)


@rule("adjoint", "where", wrt=("x", "y"))
def where(z_bar, z, condition, x, y):
    return rt.unbroadcast(np.where(condition, z_bar, 0.0), x), rt.unbroadcast(np.where(condition, 0.0, z_bar), y)


@rule("adjoint", "clip", wrt=("x", "lo", "hi"))
def clip(z_bar, z, x, lo, hi):
    # read from the result, so a bound left out (None) is never compared: x passes where
    # it is kept, lo where it raised x, hi where it lowered x
    return (rt.unbroadcast(z_bar * (z == x), x), rt.unbroadcast(z_bar * (z > x), lo),
            rt.unbroadcast(z_bar * (z < x), hi))


# ------------------------------------------------------------- reductions
@rule("adjoint", "sum", wrt=("x",))
def sum_(z_bar, z, x, axis=None, keepdims=False):
    return rt.expand_to(z_bar, x, axis, keepdims)


@rule("adjoint", "mean", wrt=("x",))
def mean(z_bar, z, x, axis=None, keepdims=False):
    # divided by the (integer) count averaged: a float factor would widen float32 cotangents under numba
    return rt.expand_to(z_bar, x, axis, keepdims) / (np.size(x) // np.size(z))


@rule("adjoint", "max", "min", wrt=("x",))
def extremum(z_bar, z, x, axis=None, keepdims=False):
    return rt.extremum_vjp(z_bar, x, z, axis, keepdims)


@rule("adjoint", "prod", wrt=("x",))
def prod(z_bar, z, x, axis=None, keepdims=False):
    return rt.prod_vjp(z_bar, x, axis, keepdims)


@rule("adjoint", "var", wrt=("x",))
def var(z_bar, z, x, axis=None, keepdims=False, ddof=0):
    centered = x - np.mean(x, axis=axis, keepdims=True)
    count = np.size(x) // np.size(z) - ddof   # an integer: keeps float32 cotangents float32 under numba
    return rt.expand_to(z_bar, x, axis, keepdims) * 2.0 * centered / count


@rule("adjoint", "std", wrt=("x",))
def std(z_bar, z, x, axis=None, keepdims=False, ddof=0):
    centered = x - np.mean(x, axis=axis, keepdims=True)
    count = np.size(x) // np.size(z) - ddof   # an integer: keeps float32 cotangents float32 under numba
    return rt.expand_to(z_bar / z, x, axis, keepdims) * centered / count


@rule("adjoint", "cumsum", wrt=("x",))
def cumsum(z_bar, z, x, axis=None):
    return rt.cumsum_vjp(z_bar, x, axis)


@rule("adjoint", "cumprod", wrt=("x",))
def cumprod(z_bar, z, x, axis=None):
    return rt.cumprod_vjp(z_bar, x, z, axis)


@rule("adjoint", "norm", wrt=("x",), when_given={"ord": "norm_with_ord"})
def norm(z_bar, z, x, ord=None, axis=None, keepdims=False):
    # the 2-norm (Frobenius over two axes or all of them); at x == 0 it is 0 / 0 = nan, as in JAX
    return rt.norm_vjp(z_bar, x, z, axis, keepdims)


def norm_with_ord(z_bar, z, x, ord=None, axis=None, keepdims=False):
    """Any other ``ord``: the cotangent times d norm / d x (JAX's conventions at zeros and ties:
    see ``rt.norm_ord_weights``)."""
    return rt.expand_to(z_bar, x, axis, keepdims) * rt.norm_ord_weights(x, z, ord, axis, keepdims)


# ------------------------------------------------------------------ linalg
@rule("adjoint", "dot", wrt=("x", "y"))
def dot(z_bar, z, x, y):
    return rt.dot_vjp_x(z_bar, x, y), rt.dot_vjp_y(z_bar, x, y)


@rule("adjoint", "matmul", wrt=("x", "y"))
def matmul(z_bar, z, x, y):
    # np.dot's product up to 2-D; past it, stacks of matrices (np.dot contracts other axes there)
    return rt.matmul_vjp_x(z_bar, x, y), rt.matmul_vjp_y(z_bar, x, y)


@rule("adjoint", "inner", wrt=("x", "y"))
def inner(z_bar, z, x, y):
    # np.inner contracts the LAST axes of both: not np.dot's (last of x with first of y)
    return rt.inner_vjp_x(z_bar, x, y), rt.inner_vjp_y(z_bar, x, y)


@rule("adjoint", "outer", wrt=("x", "y"))
def outer(z_bar, z, x, y):
    return np.reshape(np.dot(z_bar, np.ravel(y)), np.shape(x)), np.reshape(np.dot(np.ravel(x), z_bar), np.shape(y))


@rule("adjoint", "vdot", wrt=("x", "y"))
def vdot(z_bar, z, x, y):
    return z_bar * y, z_bar * x


@rule("adjoint", "trace", wrt=("x",))
def trace(z_bar, z, x):
    return rt.trace_vjp(z_bar, x)


@rule("adjoint", "inv", wrt=("x",))
def inv(z_bar, z, x):
    # stacks of matrices too: transpose each one, multiply with @
    zt = np.swapaxes(z, -1, -2)
    return -(zt @ z_bar @ zt)


@rule("adjoint", "det", wrt=("x",))
def det(z_bar, z, x):
    # one determinant per matrix of a stack: each scales its own matrix's inverse transpose
    return rt.expand_to(z_bar * z, x, (-2, -1), False) * np.swapaxes(np.linalg.inv(x), -1, -2)


@rule("adjoint", "solve", wrt=("a", "b"))
def solve(z_bar, z, a, b):
    # a z = b: b's cotangent solves a^T b_bar = z_bar, and a's is -b_bar z^T, per matrix of a stack
    # (as columns: see rt.solve_columns); each is summed over the stack axes it was broadcast along
    b_bar = np.linalg.solve(np.swapaxes(a, -1, -2), rt.solve_columns(z_bar, b))
    a_bar = -(b_bar @ np.swapaxes(rt.solve_columns(z, b), -1, -2))
    return rt.unbroadcast(a_bar, a), rt.unbroadcast(rt.solve_uncolumns(b_bar, b), b)


# The decompositions below assume a symmetric x (NumPy reads one triangle of it) and, as JAX does, give
# the cotangent of the symmetrized (x + x^T) / 2: a symmetric matrix.  They use only primitives
# with rules of their own (inv, @, where...), so their second derivatives come from the same rules.
def lower_triangle_half_diagonal(l):
    """Murray's Phi as a mask shaped like one matrix of ``l``: 1 below the diagonal, 1/2 on it, 0 above."""
    rows = np.arange(np.shape(l)[-1])
    below = rt.cast_like(np.expand_dims(rows, -1) > rows, l)
    return below + 0.5 * rt.cast_like(np.eye(np.shape(l)[-1]), l)


@rule("adjoint", "cholesky", wrt=("x",))
def cholesky(z_bar, z, x):
    """x = L L^T: x_bar = L^-T Phi(L^T L_bar) L^-1, symmetrized (Murray 2016, "Differentiation of the
    Cholesky decomposition", and JAX), for each matrix of a stack."""
    l_inverse = np.linalg.inv(z)
    inner = (np.swapaxes(z, -1, -2) @ z_bar) * lower_triangle_half_diagonal(z)
    x_bar = np.swapaxes(l_inverse, -1, -2) @ inner @ l_inverse
    return 0.5 * (x_bar + np.swapaxes(x_bar, -1, -2))


@rule("adjoint", "slogdet", wrt=("x",))
def slogdet(z_bar, z, x):
    # the sign is piecewise constant (no derivative); d logabsdet / d x = inv(x)^T, per matrix of a stack
    sign_bar, logabsdet_bar = z_bar
    return rt.expand_to(logabsdet_bar, x, (-2, -1), False) * np.swapaxes(np.linalg.inv(x), -1, -2)


@rule("adjoint", "eigvalsh", wrt=("x",))
def eigvalsh(z_bar, z, x):
    # d w_k = v_k^T dx v_k: x_bar = V diag(w_bar) V^T, symmetric already
    w, v = np.linalg.eigh(x)
    return (v * np.expand_dims(z_bar, -2)) @ np.swapaxes(v, -1, -2)


def reciprocal_gaps(w, inner, eye):
    """F * inner, per eigenvalue vector ``w`` (``eye`` the identity): F_ij = 1 / (w_j - w_i) off the
    diagonal and 0 on it, as in JAX, and 0 wherever ``inner`` is exactly 0 (see ``eigh``)."""
    gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1) + eye      # w_j - w_i off the diagonal, 1 on it
    return np.where(inner == 0.0, 0.0, inner / gaps) * (1.0 - eye)


@rule("adjoint", "eigh", wrt=("x",))
def eigh(z_bar, z, x):
    """x = V diag(w) V^T: x_bar = V (diag(w_bar) + F * (V^T V_bar)) V^T, symmetrized (JAX's rule
    transposed), F_ij = 1 / (w_j - w_i) off the diagonal and 0 on it.

    Degenerate eigenvalues (w_i == w_j, i != j): the eigenvectors are not unique there and F_ij is
    infinite, so the entry is +-inf, or nan for 0 / 0, as JAX gives: a loss of such eigenvectors has no
    derivative, and none is made up.  An entry of V^T V_bar that is exactly 0 contributes 0, so a loss
    of the eigenvalues alone, through np.linalg.eigh, keeps its finite gradient (as JAX's symbolic zero
    cotangents do).  The eigenvalues' own part, V diag(w_bar) V^T, is finite in any case."""
    w_bar, v_bar = z_bar
    w, v = z
    v_t = np.swapaxes(v, -1, -2)
    eye = rt.cast_like(np.eye(np.shape(w)[-1]), w)
    middle = reciprocal_gaps(w, v_t @ v_bar, eye) + eye * np.expand_dims(w_bar, -2)
    x_bar = v @ middle @ v_t
    return 0.5 * (x_bar + np.swapaxes(x_bar, -1, -2))


# ------------------------------------------------------------------- shape
@rule("adjoint", "reshape", wrt=("x",))
def reshape(z_bar, z, x, shape):
    return np.reshape(z_bar, np.shape(x))


@rule("adjoint", "ravel", wrt=("x",))
def ravel(z_bar, z, x):
    return np.reshape(z_bar, np.shape(x))


@rule("adjoint", "squeeze", "expand_dims", wrt=("x",))
def reshape_back(z_bar, z, x, axis=None):
    return np.reshape(z_bar, np.shape(x))


@rule("adjoint", "transpose", wrt=("x",))
def transpose(z_bar, z, x, axes=None):
    return rt.transpose_vjp(z_bar, axes)


@rule("adjoint", "swapaxes", wrt=("x",))
def swapaxes(z_bar, z, x, axis1, axis2):
    return np.swapaxes(z_bar, axis1, axis2)


@rule("adjoint", "broadcast_to", wrt=("x",))
def broadcast_to(z_bar, z, x, shape):
    return rt.unbroadcast(z_bar, x)


@rule("adjoint", "flip", wrt=("x",))
def flip(z_bar, z, x, axis=None):
    return np.flip(z_bar, axis)


@rule("adjoint", "concatenate", wrt=("arrays",))
def concatenate(z_bar, z, arrays, axis=0):
    # each array's cotangent is its slice of z_bar: slices and moveaxis have every transform's rules,
    # so vmap of a gradient through np.concatenate, and its second derivatives, follow from them
    if axis is None:           # the arrays were flattened first
        flat = np.ravel(z_bar)
        bounds = rt.concatenate_bounds([np.size(a) for a in arrays])
        pieces = [np.reshape(flat[bounds[k]:bounds[k + 1]], np.shape(a)) for k, a in enumerate(arrays)]
    elif axis == 0:            # decided when specialized: no axis to move
        bounds = rt.concatenate_bounds([np.shape(a)[0] for a in arrays])
        pieces = [z_bar[bounds[k]:bounds[k + 1]] for k, a in enumerate(arrays)]
    else:
        moved = np.moveaxis(z_bar, axis, 0)
        bounds = rt.concatenate_bounds([np.shape(a)[axis] for a in arrays])
        pieces = [np.moveaxis(moved[bounds[k]:bounds[k + 1]], 0, axis) for k, a in enumerate(arrays)]
    return pieces


@rule("adjoint", "stack", wrt=("arrays",))
def stack(z_bar, z, arrays, axis=0):
    # each array's cotangent is its entry of z_bar along the new axis (an index, with every rule)
    if axis == 0:              # decided when specialized: no axis to move
        pieces = [z_bar[k] for k, a in enumerate(arrays)]
    else:
        moved = np.moveaxis(z_bar, axis, 0)
        pieces = [moved[k] for k, a in enumerate(arrays)]
    return pieces


@rule("adjoint", "astype", wrt=("x",))
def astype(z_bar, z, x, dtype):
    return rt.cast_derivative(z_bar, x, dtype)     # zero through a cast to an integer type


@rule("adjoint", "full", wrt=("fill_value",))
def full(z_bar, z, shape, fill_value, dtype=None):
    return rt.unbroadcast(z_bar, fill_value)


@rule("adjoint", "arange", wrt=("start", "step"))
def arange(z_bar, z, start, stop, step=1):
    # z[k] = start + k * step; how many points there are is piecewise constant (stop: no derivative)
    return np.sum(z_bar), np.sum(z_bar * np.arange(np.size(z)))


@rule("adjoint", "linspace", wrt=("start", "stop"))
def linspace(z_bar, z, start, stop, num, endpoint=True):
    # z[k] = start + (stop - start) * t[k]: rows of z_bar weighted by 1 - t and by t
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    return rt.unbroadcast(np.dot(1.0 - t, z_bar), start), rt.unbroadcast(np.dot(t, z_bar), stop)


@rule("adjoint", "full_like", wrt=("fill_value",))
def full_like(z_bar, z, x, fill_value, dtype=None):
    return rt.unbroadcast(z_bar, fill_value)



@rule("adjoint", "hstack", wrt=("arrays",))
def hstack(z_bar, z, arrays):
    # arrays of rank 0 and 1 were joined end to end, others along axis 1: seen as at least 3-D
    # ((1, n, 1) for a 1-D result, (rows, n, 1) for a 2-D one), every case joins along axis 1, and
    # each array's cotangent is its slice of z_bar there (slices and reshapes have every rule)
    lines = np.reshape(z_bar, rt.atleast_3d_shape(np.shape(z)))
    bounds = rt.concatenate_bounds([rt.atleast_3d_shape(np.shape(a))[1] for a in arrays])
    pieces = [np.reshape(lines[:, bounds[k]:bounds[k + 1]], np.shape(a)) for k, a in enumerate(arrays)]
    return pieces


@rule("adjoint", "vstack", wrt=("arrays",))
def vstack(z_bar, z, arrays):
    # each array was made at least 2-D (a 1-D one is one row) and joined along axis 0: its cotangent
    # is its rows of z_bar, in its own shape
    bounds = rt.concatenate_bounds([rt.atleast_2d_shape(np.shape(a))[0] for a in arrays])
    pieces = [np.reshape(z_bar[bounds[k]:bounds[k + 1]], np.shape(a)) for k, a in enumerate(arrays)]
    return pieces


@rule("adjoint", "moveaxis", wrt=("x",))
def moveaxis(z_bar, z, x, source, destination):
    return np.moveaxis(z_bar, destination, source)


# -------------------------------------------------- named-axis collectives
# Over a vmapped axis: psum's output at every example is the sum of all
# examples' inputs, so each input's cotangent is the sum of all outputs'.
@rule("adjoint", "psum", wrt=("x",))
def psum(z_bar, z, x, axis_name):
    return lax.psum(z_bar, axis_name)


@rule("adjoint", "pmean", wrt=("x",))
def pmean(z_bar, z, x, axis_name):
    return lax.pmean(z_bar, axis_name)


@rule("adjoint", "pmax", "pmin", wrt=("x",))
def pextremum(z_bar, z, x, axis_name):
    hits = rt.cast_like(x == z, x)       # 1.0 where x attains it, in x's floating dtype
    return lax.psum(z_bar, axis_name) * hits / lax.psum(hits, axis_name)


@rule("adjoint", "all_gather", wrt=("x",))
def all_gather(z_bar, z, x, axis_name):
    total = lax.psum(z_bar, axis_name)
    return total[lax.axis_index(axis_name)]


zero_derivative("axis_index")


# ppermute is linear and moves each device's value to one other device: its
# adjoint sends the cotangents back, by the inverted permutation.
@rule("adjoint", "ppermute", wrt=("x",))
def ppermute(z_bar, z, x, axis_name, perm, inverse=False):
    return lax.ppermute(z_bar, axis_name, perm, inverse=not inverse)


# ----------------------------------------- runtime helpers (grad of grad)
# The helpers that backward sweeps call are linear in the cotangent they
# carry, so their own adjoints are the transposed maps.
@rule("adjoint", "rt.unbroadcast", wrt=("g",))
def unbroadcast(z_bar, z, g, x):
    return np.broadcast_to(z_bar, np.shape(g))


@rule("adjoint", "rt.align_batch", wrt=("x",))
def align_batch(z_bar, z, x):
    return np.reshape(z_bar, np.shape(x))


@rule("adjoint", "rt.expand_to", wrt=("g",))
def expand_to(z_bar, z, g, x, axis=None, keepdims=False):
    return np.sum(z_bar, axis=axis, keepdims=keepdims)


@rule("adjoint", "rt.dot_vjp_x", wrt=("g", "y"))
def dot_vjp_x(z_bar, z, g, x, y):
    # dot_vjp_x(g, x, y) is the transpose of x -> dot(x, y), applied to g
    return np.dot(z_bar, y), rt.dot_vjp_y(g, z_bar, y)


@rule("adjoint", "rt.dot_vjp_y", wrt=("g", "x"))
def dot_vjp_y(z_bar, z, g, x, y):
    return np.dot(x, z_bar), rt.dot_vjp_x(g, x, z_bar)


@rule("adjoint", "rt.matmul_vjp_x", wrt=("g", "y"))
def matmul_vjp_x(z_bar, z, g, x, y):
    return z_bar @ y, rt.matmul_vjp_y(g, z_bar, y)


@rule("adjoint", "rt.matmul_vjp_y", wrt=("g", "x"))
def matmul_vjp_y(z_bar, z, g, x, y):
    return x @ z_bar, rt.matmul_vjp_x(g, x, z_bar)


@rule("adjoint", "rt.inner_vjp_x", wrt=("g", "y"))
def inner_vjp_x(z_bar, z, g, x, y):
    # inner_vjp_x(g, x, y) is linear in g and in y
    return np.inner(z_bar, y), rt.inner_vjp_y(g, z_bar, y)


@rule("adjoint", "rt.inner_vjp_y", wrt=("g", "x"))
def inner_vjp_y(z_bar, z, g, x, y):
    return np.inner(x, z_bar), rt.inner_vjp_x(g, x, z_bar)


# vmap's products with one batched operand: per example they are np.dot and the two
# helpers above.  The cotangent of the unbatched operand sums over the examples, each a
# product of two batched factors: a loop over the examples (batch axis last).
@rule("adjoint", "rt.dot_batched_x", wrt=("x", "y"))
def dot_batched_x(z_bar, z, x, y):
    y_bar = rt.zeros_like(y)
    for b in range(np.shape(x)[-1]):
        y_bar = y_bar + rt.dot_vjp_y(z_bar[..., b], x[..., b], y)
    return rt.dot_vjp_x_batched_g(z_bar, x[..., 0], y), y_bar


@rule("adjoint", "rt.dot_batched_y", wrt=("x", "y"))
def dot_batched_y(z_bar, z, x, y):
    x_bar = rt.zeros_like(x)
    for b in range(np.shape(y)[-1]):
        x_bar = x_bar + rt.dot_vjp_x(z_bar[..., b], x, y[..., b])
    return x_bar, rt.dot_vjp_y_batched_g(z_bar, x, y[..., 0])


# @'s: the same products where an example and the other factor have at most two dimensions (the
# matmul helpers call np.dot's there), stacks of matrices past that
@rule("adjoint", "rt.matmul_batched_x", wrt=("x", "y"))
def matmul_batched_x(z_bar, z, x, y):
    y_bar = rt.zeros_like(y)
    for b in range(np.shape(x)[-1]):
        y_bar = y_bar + rt.matmul_vjp_y(z_bar[..., b], x[..., b], y)
    return rt.matmul_vjp_x_batched_g(z_bar, x[..., 0], y), y_bar


@rule("adjoint", "rt.matmul_batched_y", wrt=("x", "y"))
def matmul_batched_y(z_bar, z, x, y):
    x_bar = rt.zeros_like(x)
    for b in range(np.shape(y)[-1]):
        x_bar = x_bar + rt.matmul_vjp_x(z_bar[..., b], x, y[..., b])
    return x_bar, rt.matmul_vjp_y_batched_g(z_bar, x, y[..., 0])


@rule("adjoint", "rt.matmul_vjp_x_batched_g", wrt=("g", "y"))
def matmul_vjp_x_batched_g(z_bar, z, g, x, y):
    # linear in g: per example g_b @ y^T (summed to x's shape), whose transpose is z_bar_b @ y
    y_bar = rt.zeros_like(y)
    for b in range(np.shape(g)[-1]):
        y_bar = y_bar + rt.matmul_vjp_y(g[..., b], z_bar[..., b], y)
    return rt.matmul_batched_x(z_bar, y), y_bar


@rule("adjoint", "rt.matmul_vjp_y_batched_g", wrt=("g", "x"))
def matmul_vjp_y_batched_g(z_bar, z, g, x, y):
    x_bar = rt.zeros_like(x)
    for b in range(np.shape(g)[-1]):
        x_bar = x_bar + rt.matmul_vjp_x(g[..., b], x, z_bar[..., b])
    return rt.matmul_batched_y(x, z_bar), x_bar


@rule("adjoint", "rt.dot_vjp_x_batched_g", wrt=("g", "y"))
def dot_vjp_x_batched_g(z_bar, z, g, x, y):
    y_bar = rt.zeros_like(y)
    for b in range(np.shape(g)[-1]):
        y_bar = y_bar + rt.dot_vjp_y(g[..., b], z_bar[..., b], y)
    return rt.dot_batched_x(z_bar, y), y_bar


@rule("adjoint", "rt.dot_vjp_y_batched_g", wrt=("g", "x"))
def dot_vjp_y_batched_g(z_bar, z, g, x, y):
    x_bar = rt.zeros_like(x)
    for b in range(np.shape(g)[-1]):
        x_bar = x_bar + rt.dot_vjp_x(g[..., b], x, z_bar[..., b])
    return rt.dot_batched_y(x, z_bar), x_bar


@rule("adjoint", "rt.dot_vjp_y_batched_gx", wrt=("g", "x"))
def dot_vjp_y_batched_gx(z_bar, z, g, x, y):
    # per example, the adjoint of rt.dot_vjp_y; both factors are batched: a loop over the examples
    g_bar = rt.zeros_like(g)
    x_bar = rt.zeros_like(x)
    for b in range(np.shape(x)[-1]):
        g_bar[..., b] = np.dot(x[..., b], z_bar[..., b])
        x_bar[..., b] = rt.dot_vjp_x(g[..., b], x[..., b], z_bar[..., b])
    return g_bar, x_bar


@rule("adjoint", "rt.matmul_vjp_y_batched_gx", wrt=("g", "x"))
def matmul_vjp_y_batched_gx(z_bar, z, g, x, y):
    # per example, the adjoint of rt.matmul_vjp_y: a loop over the examples
    g_bar = rt.zeros_like(g)
    x_bar = rt.zeros_like(x)
    for b in range(np.shape(x)[-1]):
        g_bar[..., b] = np.matmul(x[..., b], z_bar[..., b])
        x_bar[..., b] = rt.matmul_vjp_x(g[..., b], x[..., b], z_bar[..., b])
    return g_bar, x_bar


# The identity's columns as the batched factor: the adjoint of dot_batched_y(x, basis).
@rule("adjoint", "rt.dot_identity_y", wrt=("x",))
def dot_identity_y(z_bar, z, x, basis):
    x_bar = rt.zeros_like(x)
    for b in range(np.shape(basis)[-1]):
        x_bar = x_bar + rt.dot_vjp_x(z_bar[..., b], x, basis[..., b])
    return x_bar


# The same two with the batched factor batch-first (its rows): x_rows[b] is example b.
@rule("adjoint", "rt.dot_rows_x", wrt=("x_rows", "y"))
def dot_rows_x(z_bar, z, x_rows, y):
    y_bar = rt.zeros_like(y)
    for b in range(np.shape(x_rows)[0]):
        y_bar = y_bar + rt.dot_vjp_y(z_bar[..., b], x_rows[b], y)
    return np.moveaxis(rt.dot_vjp_x_batched_g(z_bar, x_rows[0], y), -1, 0), y_bar


@rule("adjoint", "rt.dot_vjp_y_rows_gx", wrt=("g", "x_rows"))
def dot_vjp_y_rows_gx(z_bar, z, g, x_rows, y):
    g_bar = rt.zeros_like(g)
    x_rows_bar = rt.zeros_like(x_rows)
    for b in range(np.shape(x_rows)[0]):
        g_bar[..., b] = np.dot(x_rows[b], z_bar[..., b])
        x_rows_bar[b] = rt.dot_vjp_x(g[..., b], x_rows[b], z_bar[..., b])
    return g_bar, x_rows_bar


@rule("adjoint", "rt.extremum_vjp", wrt=("g",))
def extremum_vjp(z_bar, z, g, x, peak, axis=None, keepdims=False):
    # linear in g; its weights (1 at the peak, shared at ties) are constant where they are
    # differentiable, so x and peak get no cotangent, as in JAX
    weights = rt.extremum_vjp(np.ones_like(g), x, peak, axis, keepdims)
    return np.sum(z_bar * weights, axis=axis, keepdims=keepdims)


@rule("adjoint", "rt.prod_vjp", wrt=("g", "x"))
def prod_vjp(z_bar, z, g, x, axis=None, keepdims=False):
    # linear in g; in x, np.prod's Hessian times g, which is symmetric
    others = rt.prod_vjp(np.ones_like(g), x, axis, keepdims)
    return np.sum(z_bar * others, axis=axis, keepdims=keepdims), rt.prod_vjp_jvp(g, x, z_bar, axis, keepdims)


@rule("adjoint", "rt.cumsum_vjp", wrt=("g",))
def cumsum_vjp(z_bar, z, g, x, axis=None):
    return np.reshape(np.cumsum(z_bar, axis=axis), np.shape(g))


@rule("adjoint", "rt.norm_vjp", wrt=("g", "x", "norm"))
def norm_vjp(z_bar, z, g, x, norm, axis=None, keepdims=False):
    # z = expand(g / norm) * x
    weighted = np.sum(z_bar * x, axis=axis, keepdims=keepdims)
    return weighted / norm, rt.expand_to(g / norm, x, axis, keepdims) * z_bar, -weighted * g / (norm * norm)


@rule("adjoint", "rt.transpose_vjp", wrt=("g",))
def transpose_vjp(z_bar, z, g, axes=None):
    return np.transpose(z_bar, axes)


@rule("adjoint", "rt.trace_vjp", wrt=("g",))
def trace_vjp(z_bar, z, g, x):
    return np.trace(z_bar)


@rule("adjoint", "rt.cast_like", wrt=("g",))
def cast_like(z_bar, z, g, x):
    return rt.cast_like(z_bar, g)


@rule("adjoint", "rt.cast_derivative", wrt=("g",))
def cast_derivative(z_bar, z, g, like, to):
    return rt.cast_derivative(z_bar, g, to)


# The tape, for reverse over reverse: the cotangent of a tape is a tape of cotangents
# (``s_bar``, empty where the backward sweep starts), and it runs the other way.  A pop
# hands out the entry pushed last; in the backward sweep its cotangent is pushed onto
# ``s_bar``, and the push that made the entry, met later in the backward sweep, pops it
# back: the entries meet in the reverse order of both sweeps.  ``tape=True`` tells the
# transform three things: a tape's cotangent starts as ``rt.stack()``, not as zeros; a
# ``<operand>_bar`` parameter receives that operand's cotangent tape, and what the rule
# returns for a tape operand is that tape again (it changes in place), never a sum; a
# push onto a tape with a cotangent pops its entry even when the pushed value has none
# (a constant), so the two tapes stay in step.
@rule("adjoint", "rt.push", wrt=("value",), tape=True)
def push_adjoint(z_bar, z, tape, value):
    return rt.pop(z_bar)


@rule("adjoint", "rt.pop", wrt=("tape",), tape=True)
def pop_adjoint(z_bar, z, tape, tape_bar):
    # a copy: the popped value's cotangent may later be written into in place
    return rt.push(tape_bar, rt.copy(z_bar))


@rule("adjoint", "rt.top", wrt=("tape",), tape=True)
def top_adjoint(z_bar, z, tape, tape_bar):
    # the entry read is popped later in the same sweep, so its cotangent is on s_bar's top by now
    return rt.add_to_top(tape_bar, z_bar)


@rule("adjoint", "rt.add_to_top", wrt=("value",), tape=True)
def add_to_top_adjoint(z_bar, z, tape, value):
    # (third order) the value added gets the cotangent of the entry it was added to
    return rt.top(z_bar)
@rule("adjoint", "rt.cumprod_vjp", wrt=("g", "x"))
def cumprod_vjp(z_bar, z, g, x, products, axis=None):
    # linear in g: its transpose is cumprod's tangent; in x, symmetric (see rt.cumprod_vjp_jvp).
    # products is np.cumprod(x), kept for speed: x's cotangent already counts what it depends on.
    return rt.cumprod_jvp(z_bar, x, axis), rt.cumprod_vjp_jvp(g, z_bar, x, axis)


@rule("adjoint", "rt.solve_columns", wrt=("x",))
def solve_columns(z_bar, z, x, b):
    return rt.solve_uncolumns(z_bar, b)


@rule("adjoint", "rt.solve_uncolumns", wrt=("x",))
def solve_uncolumns(z_bar, z, x, b):
    return rt.solve_columns(z_bar, b)
@rule("adjoint", "rt.add_at", wrt=("g", "values"))
def add_at(z_bar, z, g, index, values):
    # linear: g passes through, and each value gets the cotangent of the position it was added at
    return z_bar, rt.unbroadcast(rt.take_at(z_bar, index), values)


@rule("adjoint", "rt.take_at", wrt=("g",))
def take_at(z_bar, z, g, index):
    return rt.add_at(rt.zeros_like(g), index, z_bar)    # a position taken twice gets both


@rule("adjoint", "rt.kept_writes", wrt=("g",))
def kept_writes(z_bar, z, g, index):
    # linear: z = g[index] with the overwritten positions zeroed, so only the kept ones flow back
    kept = rt.kept_writes(np.ones_like(g), index)
    return rt.add_at(rt.zeros_like(g), index, z_bar * kept)


@rule("adjoint", "rt.norm_ord_weights", wrt=("x", "norm"))
def norm_ord_weights(z_bar, z, x, norm, ord, axis=None, keepdims=False):
    # d weights = H dx + b * d norm (spread over the reduced axes): its transpose, H symmetric
    along_x, b = rt.norm_ord_curvature(x, norm, ord, axis, keepdims, z_bar)   # symmetric in x
    return along_x, np.sum(b * z_bar, axis=axis, keepdims=keepdims)


unsupported("adjoint", ["rt.norm_ord_curvature"],
            "third derivatives of np.linalg.norm with ord= are not implemented")
unsupported("adjoint", ["rt.custom_vjp_call"], "a custom_vjp rule is not itself differentiable")


@rule("adjoint", "rt.custom_jvp_call", by_transform=True)
def custom_jvp_call_adjoint(z_bar, z, out, inputs, rule):
    """A custom_jvp function's output: the cotangents of its inputs are the user's jvp rule
    transposed (custom.transposed_rule), which the transform inlines as it inlines a custom_vjp's
    backward rule; none flows through the function's own code."""
