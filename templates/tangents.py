"""Tangent rules: how forward mode (``jvp``) differentiates each primitive.

A rule is a plain Python function that returns the tangent of the result.
Its parameters name what it needs, and the jvp transform binds them:

* a primitive parameter (``x``, ``y``, ``condition``, ``shape``...) or
  keyword (``axis``, ``keepdims``...) -> the operand the call was given
  (a missing keyword gets the rule's default);
* ``z`` -> the result of the call;
* ``x_dot`` -> the tangent of operand ``x``.  Every rule is linear in its
  tangents.  When an operand carries no tangent, its ``_dot`` is zero and the
  transform folds it away: a product, a quotient's numerator, or a linear
  call of a zero is zero, a sum drops it, and a primitive whose rule
  says it is ``linear_in`` several operands (``np.where``, ``np.linspace``)
  gets a literal ``0.0`` for the inactive one.  Write rules so this holds.

Prefer ``z`` to recomputing the primitive (``exp``: ``z * x_dot``).

Three kinds of entry besides ordinary rules:

* ``nondifferentiable=True``: integer-valued or piecewise-constant results;
  they never carry a tangent.
* ``by_transform=True``: getitem and setitem, whose index is not an atom a
  template could take; the transform writes ``z_dot = x_dot[index]`` and
  ``y_dot[index] = v_dot`` itself.
* ``rules.unsupported(...)``: a clear refusal with the reason.
"""
import numpy as np

from transformer import lax
from transformer import runtime as rt
from transformer.rules import rule, unsupported

from .adjoints import logaddexp_weight
from transformer.templates import adjoints

# ------------------------------------------------------------------ unary math


@rule("tangent", "sin")
def sin_tangent(x, x_dot):
    return np.cos(x) * x_dot


@rule("tangent", "cos")
def cos_tangent(x, x_dot):
    return -np.sin(x) * x_dot


@rule("tangent", "tan")
def tan_tangent(z, x_dot):
    return (1.0 + z * z) * x_dot


@rule("tangent", "arcsin")
def arcsin_tangent(x, x_dot):
    return x_dot / np.sqrt(1.0 - x * x)


@rule("tangent", "arccos")
def arccos_tangent(x, x_dot):
    return -x_dot / np.sqrt(1.0 - x * x)


@rule("tangent", "arctan")
def arctan_tangent(x, x_dot):
    return x_dot / (1.0 + x * x)


@rule("tangent", "sinh")
def sinh_tangent(x, x_dot):
    return np.cosh(x) * x_dot


@rule("tangent", "cosh")
def cosh_tangent(x, x_dot):
    return np.sinh(x) * x_dot


@rule("tangent", "tanh")
def tanh_tangent(z, x_dot):
    return (1.0 - z * z) * x_dot


@rule("tangent", "arcsinh")
def arcsinh_tangent(x, x_dot):
    return x_dot / np.sqrt(x * x + 1.0)


@rule("tangent", "arccosh")
def arccosh_tangent(x, x_dot):
    return x_dot / np.sqrt(x * x - 1.0)


@rule("tangent", "arctanh")
def arctanh_tangent(x, x_dot):
    return x_dot / (1.0 - x * x)


@rule("tangent", "exp")
def exp_tangent(z, x_dot):
    return z * x_dot


@rule("tangent", "expm1")
def expm1_tangent(z, x_dot):
    return (z + 1.0) * x_dot


@rule("tangent", "exp2")
def exp2_tangent(z, x_dot):
    return z * 0.6931471805599453 * x_dot          # ln 2


@rule("tangent", "log")
def log_tangent(x, x_dot):
    return x_dot / x


@rule("tangent", "log1p")
def log1p_tangent(x, x_dot):
    return x_dot / (1.0 + x)


@rule("tangent", "log2")
def log2_tangent(x, x_dot):
    return x_dot / (x * 0.6931471805599453)        # ln 2


@rule("tangent", "log10")
def log10_tangent(x, x_dot):
    return x_dot / (x * 2.302585092994046)         # ln 10


@rule("tangent", "sqrt")
def sqrt_tangent(z, x_dot):
    return x_dot / (2.0 * z)


@rule("tangent", "cbrt")
def cbrt_tangent(z, x_dot):
    return x_dot / (3.0 * z * z)


@rule("tangent", "square")
def square_tangent(x, x_dot):
    return 2.0 * x * x_dot


@rule("tangent", "reciprocal")
def reciprocal_tangent(z, x_dot):
    return -(z * z) * x_dot


@rule("tangent", "abs", "fabs")
def abs_tangent(x, x_dot):
    return np.sign(x) * x_dot


@rule("tangent", "deg2rad")
def deg2rad_tangent(x_dot):
    return 0.017453292519943295 * x_dot            # pi / 180


@rule("tangent", "rad2deg")
def rad2deg_tangent(x_dot):
    return 57.29577951308232 * x_dot               # 180 / pi


@rule("tangent", "erf")
def erf_tangent(x, x_dot):
    return 1.1283791670955126 * np.exp(-x * x) * x_dot          # 2 / sqrt(pi)


@rule("tangent", "erfc")
def erfc_tangent(x, x_dot):
    return -1.1283791670955126 * np.exp(-x * x) * x_dot


@rule("tangent", "erfinv")
def erfinv_tangent(z, x_dot):
    return 0.886226925452758 * np.exp(z * z) * x_dot            # sqrt(pi) / 2: 1 / erf'(z)


@rule("tangent", "gammaln")
def gammaln_tangent(x, x_dot):
    return lax.digamma(x) * x_dot


@rule("tangent", "digamma")
def digamma_tangent(x, x_dot):
    return lax.polygamma(1, x) * x_dot


@rule("tangent", "polygamma")
def polygamma_tangent(n, x, x_dot):
    # the order n is a whole number: it carries no tangent
    return lax.polygamma(n + 1, x) * x_dot


@rule("tangent", "negative")
def negative_tangent(x_dot):
    return -x_dot


# +x and np.copy(x) are new arrays: so are their tangents, or a write into one tangent in place
# (y[1] = 0.0 after prev = y.copy()) would reach the other
@rule("tangent", "positive")
def positive_tangent(x_dot):
    return +x_dot


@rule("tangent", "copy")
def copy_tangent(x_dot):
    return rt.copy(x_dot)


@rule("tangent", "sign", "floor", "ceil", "rint", "trunc", "round", "isnan", "isinf", "isfinite",
      "not", "logical_not", "invert", "less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
      "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
      "floor_divide", "any", "all", "argmax", "argmin", "shape", "ndim", "size", "len", "zeros", "ones", "empty", "zeros_like", "ones_like", "empty_like",
      "eye", "int", "bool", "stop_gradient", nondifferentiable=True)
def no_tangent():
    """Integer-valued, boolean or piecewise constant (or, for stop_gradient,
    declared constant): the derivative is zero, so the result never carries a tangent."""


# ----------------------------------------------------------- binary arithmetic


@rule("tangent", "add")
def add_tangent(x_dot, y_dot):
    return x_dot + y_dot


@rule("tangent", "subtract")
def subtract_tangent(x_dot, y_dot):
    return x_dot - y_dot


@rule("tangent", "multiply")
def multiply_tangent(x, y, x_dot, y_dot):
    return x_dot * y + x * y_dot


@rule("tangent", "divide")
def divide_tangent(y, z, x_dot, y_dot):
    return x_dot / y - z * y_dot / y


@rule("tangent", "mod")
def mod_tangent(x, y, x_dot, y_dot):
    # x % y == x - y * floor(x / y), and floor is piecewise constant
    return x_dot - np.floor_divide(x, y) * y_dot


@rule("tangent", "power")
def power_tangent(x, y, z, x_dot, y_dot):
    # y * x ** (y - 1) is written without dividing by x, so x == 0 is fine; log(1) where x == 0,
    # as JAX does (0 ** y is 0 for y > 0).  With an integer y, y_dot is zero and the term folds away.
    return y * x ** (y - 1) * x_dot + z * np.log(np.where(x != 0, x, 1)) * y_dot


@rule("tangent", "maximum", "fmax")
def maximum_tangent(x, y, x_dot, y_dot):
    # ties split evenly, as in JAX and as the adjoint rule splits the cotangent (so <u, J v> and
    # <J^T u, v> agree there too)
    return x_dot * (x > y) + 0.5 * x_dot * (x == y) + y_dot * (x < y) + 0.5 * y_dot * (x == y)


@rule("tangent", "minimum", "fmin")
def minimum_tangent(x, y, x_dot, y_dot):
    return x_dot * (x < y) + 0.5 * x_dot * (x == y) + y_dot * (x > y) + 0.5 * y_dot * (x == y)


@rule("tangent", "arctan2")
def arctan2_tangent(x, y, x_dot, y_dot):
    # np.arctan2(x, y) is the angle of the point (y, x)
    return (y * x_dot - x * y_dot) / (x * x + y * y)


@rule("tangent", "hypot")
def hypot_tangent(x, y, z, x_dot, y_dot):
    """JAX's convention at x = y = 0, as the adjoint: half of each tangent."""
    at_zero = z == 0
    return np.where(at_zero, 0.5 * (x_dot + y_dot), (x * x_dot + y * y_dot) / np.where(at_zero, 1.0, z))


@rule("tangent", "logaddexp")
def logaddexp_tangent(x, y, z, x_dot, y_dot):
    weight = logaddexp_weight(x, y, z)    # (its limits at infinite x or y: templates/adjoints.py)
    return x_dot * weight + y_dot * (1.0 - weight)


@rule("tangent", "copysign")
def copysign_tangent(x, z, x_dot):
    return np.sign(x) * np.sign(z) * x_dot


# linear_in: the operands in which the primitive is linear, so where its tangent rule's own call of it
# (np.where(condition, x_dot, y_dot)) reads an inactive tangent, jvp passes a literal 0.0 there
@rule("tangent", "where", linear_in=("x", "y"))
def where_tangent(condition, x_dot, y_dot):
    return np.where(condition, x_dot, y_dot)


@rule("tangent", "clip")
def clip_tangent(x, z, x_dot, lo_dot, hi_dot):
    # read from the result, so a bound left out (None) is never compared
    return x_dot * (z == x) + lo_dot * (z > x) + hi_dot * (z < x)


# ------------------------------------------------------------------ reductions


@rule("tangent", "sum")
def sum_tangent(x_dot, axis=None, keepdims=False):
    return np.sum(x_dot, axis=axis, keepdims=keepdims)


@rule("tangent", "mean")
def mean_tangent(x_dot, axis=None, keepdims=False):
    return np.mean(x_dot, axis=axis, keepdims=keepdims)


@rule("tangent", "cumsum")
def cumsum_tangent(x_dot, axis=None):
    return np.cumsum(x_dot, axis=axis)


@rule("tangent", "max", whole_array="extremum_tangent")
def max_tangent(x, x_dot, axis=None, keepdims=False):
    # the tangent at the largest entries, averaged over ties (as JAX does)
    at_peak = x == np.max(x, axis=axis, keepdims=True)
    count = rt.cast_like(np.sum(at_peak, axis=axis, keepdims=keepdims), x_dot)   # an int64 count widens float32
    return np.sum(x_dot * at_peak, axis=axis, keepdims=keepdims) / count


@rule("tangent", "min", whole_array="extremum_tangent")
def min_tangent(x, x_dot, axis=None, keepdims=False):
    at_peak = x == np.min(x, axis=axis, keepdims=True)
    count = rt.cast_like(np.sum(at_peak, axis=axis, keepdims=keepdims), x_dot)   # an int64 count widens float32
    return np.sum(x_dot * at_peak, axis=axis, keepdims=keepdims) / count


def extremum_tangent(x, z, x_dot):
    """``max``/``min`` of a whole array (no ``axis``): compare with the scalar ``z``."""
    at_peak = x == z
    return np.sum(x_dot * at_peak) / rt.cast_like(np.sum(at_peak), x_dot)


@rule("tangent", "var", whole_array="var_all_tangent")
def var_tangent(x, x_dot, axis=None, keepdims=False, ddof=0):
    centered = x - np.mean(x, axis=axis, keepdims=True)
    count = np.size(x) / np.size(np.sum(centered, axis=axis))
    return 2.0 * np.sum(centered * x_dot, axis=axis, keepdims=keepdims) / (count - ddof)


def var_all_tangent(x, x_dot, ddof=0):
    """``var`` of a whole array (no ``axis``)."""
    centered = x - np.mean(x)
    return 2.0 * np.sum(centered * x_dot) / (np.size(x) - ddof)


@rule("tangent", "std", whole_array="std_all_tangent")
def std_tangent(x, z, x_dot, axis=None, keepdims=False, ddof=0):
    centered = x - np.mean(x, axis=axis, keepdims=True)
    count = np.size(x) / np.size(np.sum(centered, axis=axis))
    return np.sum(centered * x_dot, axis=axis, keepdims=keepdims) / ((count - ddof) * z)


def std_all_tangent(x, z, x_dot, ddof=0):
    """``std`` of a whole array (no ``axis``)."""
    centered = x - np.mean(x)
    return np.sum(centered * x_dot) / ((np.size(x) - ddof) * z)


@rule("tangent", "norm", when_given={"ord": "norm_with_ord_tangent"})
def norm_tangent(x, z, x_dot, axis=None, keepdims=False):
    # the 2-norm (ord=None)
    return np.sum(x * x_dot, axis=axis, keepdims=keepdims) / z


def norm_with_ord_tangent(x, z, x_dot, ord=None, axis=None, keepdims=False):
    """Any other ``ord``: d norm / d x (JAX's conventions at zeros and ties) against the tangent,
    summed over the reduced axes (all of them when ``axis`` is None)."""
    return np.sum(rt.norm_ord_weights(x, z, ord, axis, keepdims) * x_dot, axis=axis, keepdims=keepdims)


# prod's and cumprod's tangents (exact where entries are zero) are in templates/misc.py


# ---------------------------------------------------------------------- linalg


@rule("tangent", "matmul")
def matmul_tangent(x, y, x_dot, y_dot):
    return x_dot @ y + x @ y_dot


@rule("tangent", "dot")
def dot_tangent(x, y, x_dot, y_dot):
    return np.dot(x_dot, y) + np.dot(x, y_dot)


@rule("tangent", "outer")
def outer_tangent(x, y, x_dot, y_dot):
    return np.outer(x_dot, y) + np.outer(x, y_dot)


@rule("tangent", "inner")
def inner_tangent(x, y, x_dot, y_dot):
    return np.inner(x_dot, y) + np.inner(x, y_dot)


@rule("tangent", "vdot")
def vdot_tangent(x, y, x_dot, y_dot):
    return np.vdot(x_dot, y) + np.vdot(x, y_dot)


@rule("tangent", "trace")
def trace_tangent(x_dot):
    return np.trace(x_dot)


@rule("tangent", "inv")
def inv_tangent(z, x_dot):
    return -(z @ x_dot @ z)


@rule("tangent", "solve")
def solve_tangent(a, b, z, a_dot, b_dot):
    # a z = b  =>  a z_dot = b_dot - a_dot z, the product taken as solve pairs a with b (a vector b
    # is one vector for every matrix of a stack: as columns, a_dot @ z is a product of matrices)
    columns = rt.solve_columns(b_dot, b) - a_dot @ rt.solve_columns(z, b)
    return rt.solve_uncolumns(np.linalg.solve(a, columns), b)


@rule("tangent", "det")
def det_tangent(x, z, x_dot):
    # z trace(inv(x) x_dot), for each matrix of a stack
    return z * np.sum(np.swapaxes(np.linalg.inv(x), -1, -2) * x_dot, axis=(-2, -1))


# The decompositions assume a symmetric x and differentiate the symmetrized (x + x^T) / 2, as JAX does
# (the adjoint rules' conventions, helpers shared with them).
@rule("tangent", "cholesky")
def cholesky_tangent(z, x_dot):
    # L_dot = L Phi(L^-1 x_dot L^-T) (Murray 2016; JAX), per matrix of a stack
    l_inverse = np.linalg.inv(z)
    inner = l_inverse @ (0.5 * (x_dot + np.swapaxes(x_dot, -1, -2))) @ np.swapaxes(l_inverse, -1, -2)
    return z @ (inner * adjoints.lower_triangle_half_diagonal(z))


@rule("tangent", "slogdet")
def slogdet_tangent(x, z, x_dot):
    # the sign's tangent is zero; logabsdet's is trace(inv(x) x_dot), per matrix of a stack
    sign, logabsdet = z
    return sign * 0.0, np.sum(np.swapaxes(np.linalg.inv(x), -1, -2) * x_dot, axis=(-2, -1))


@rule("tangent", "eigvalsh")
def eigvalsh_tangent(x, x_dot):
    # w_dot_k = v_k^T x_dot v_k (the diagonal of V^T x_dot V: x_dot and its transpose give the same)
    w, v = np.linalg.eigh(x)
    return np.sum(v * (x_dot @ v), axis=-2)


@rule("tangent", "eigh")
def eigh_tangent(z, x_dot):
    # JAX's rule: with S = V^T sym(x_dot) V, w_dot = diag(S) and V_dot = V (F * S), F_ij = 1 / (w_j - w_i);
    # degenerate eigenvalues give V_dot inf or nan, as the adjoint rule's docstring says
    w, v = z
    v_t = np.swapaxes(v, -1, -2)
    inner = v_t @ (0.5 * (x_dot + np.swapaxes(x_dot, -1, -2))) @ v
    eye = rt.cast_like(np.eye(np.shape(w)[-1]), w)
    return np.sum(inner * eye, axis=-1), v @ adjoints.reciprocal_gaps(w, inner, eye)


# ------------------------------------------------- shapes: linear, so the same op


@rule("tangent", "reshape")
def reshape_tangent(x_dot, shape):
    return np.reshape(x_dot, shape)


@rule("tangent", "transpose")
def transpose_tangent(x_dot, axes=None):
    return np.transpose(x_dot, axes=axes)


@rule("tangent", "swapaxes")
def swapaxes_tangent(x_dot, axis1, axis2):
    return np.swapaxes(x_dot, axis1, axis2)


@rule("tangent", "expand_dims")
def expand_dims_tangent(x_dot, axis):
    return np.expand_dims(x_dot, axis)


@rule("tangent", "squeeze")
def squeeze_tangent(x_dot, axis=None):
    return np.squeeze(x_dot, axis=axis)


@rule("tangent", "ravel")
def ravel_tangent(x_dot):
    return np.ravel(x_dot)


@rule("tangent", "broadcast_to")
def broadcast_to_tangent(x_dot, shape):
    return np.broadcast_to(x_dot, shape)


@rule("tangent", "flip")
def flip_tangent(x_dot, axis=None):
    return np.flip(x_dot, axis=axis)


@rule("tangent", "concatenate")
def concatenate_tangent(arrays_dot, axis=0):
    return np.concatenate(arrays_dot, axis=axis)


@rule("tangent", "stack")
def stack_tangent(arrays_dot, axis=0):
    return np.stack(arrays_dot, axis=axis)


@rule("tangent", "hstack")
def hstack_tangent(arrays_dot):
    return np.hstack(arrays_dot)


@rule("tangent", "vstack")
def vstack_tangent(arrays_dot):
    return np.vstack(arrays_dot)


@rule("tangent", "asarray")
def asarray_tangent(x_dot, dtype=None):
    return np.asarray(x_dot, dtype=dtype)


@rule("tangent", "astype")
def astype_tangent(x_dot, z, dtype):
    return rt.cast_derivative(x_dot, z, dtype)     # zero through a cast to an integer type


@rule("tangent", "float")
def float_tangent(x_dot):
    return float(x_dot)


# -------------------------------------------------------------------- creation


@rule("tangent", "full", "full_like")
def full_tangent(z, fill_value_dot):
    return np.full_like(z, fill_value_dot)


@rule("tangent", "arange")
def arange_tangent(z, start_dot, step_dot):
    # z[k] = start + k * step; the number of points is piecewise constant
    return start_dot * np.ones_like(z) + step_dot * np.arange(np.size(z))


@rule("tangent", "linspace", linear_in=("start", "stop"))
def linspace_tangent(num, start_dot, stop_dot, endpoint=True):
    return np.linspace(start_dot, stop_dot, num, endpoint=endpoint)


# -------------------------------------------------------------------- indexing


@rule("tangent", "getitem", "setitem", by_transform=True)
def index_tangent():
    """``z = x[index]`` gets ``z_dot = x_dot[index]``; ``y[index] = v`` gets
    ``y_dot[index] = v_dot``.  The index is not an atom, so the transform
    writes these statements itself."""


# ----------------------------------------------------- named-axis collectives


@rule("tangent", "moveaxis")
def moveaxis_tangent(x_dot, source, destination):
    return np.moveaxis(x_dot, source, destination)


@rule("tangent", "psum")
def psum_tangent(x_dot, axis_name):
    return lax.psum(x_dot, axis_name)


@rule("tangent", "pmean")
def pmean_tangent(x_dot, axis_name):
    return lax.pmean(x_dot, axis_name)


@rule("tangent", "all_gather")
def all_gather_tangent(x_dot, axis_name):
    return lax.all_gather(x_dot, axis_name)


@rule("tangent", "ppermute")
def ppermute_tangent(x_dot, axis_name, perm, inverse=False):
    return lax.ppermute(x_dot, axis_name, perm, inverse=inverse)


@rule("tangent", "pmax", "pmin")
def pextremum_tangent(x, z, x_dot, axis_name):
    # the tangent of the examples (devices) that attain it, averaged over ties (as max's is)
    hits = rt.cast_like(x == z, x_dot)
    return lax.psum(x_dot * hits, axis_name) / lax.psum(hits, axis_name)


# ------------------------------------------- runtime helpers of reverse mode
# jvp of grad's generated code (forward over reverse) meets these.


@rule("tangent", "rt.zeros_like", "rt.scalar_seed", "rt.number_per_example", "rt.truth_value_per_example",
      "rt.has_cotangent", "rt.index_slice", "axis_index", nondifferentiable=True)
def constant_helper_tangent():
    """Zeros, the seed 1.0 and axis positions are constants."""


@rule("tangent", "rt.add_at")
def add_at_tangent(g, index, g_dot, values_dot):
    # linear in both; a fresh array, since rt.add_at writes into its first argument
    return g_dot + rt.add_at(rt.zeros_like(g), index, values_dot)


@rule("tangent", "rt.kept_writes")
def kept_writes_tangent(index, g_dot):
    return rt.kept_writes(g_dot, index)


@rule("tangent", "rt.copy")
def rt_copy_tangent(x_dot):
    return rt.copy(x_dot)


@rule("tangent", "rt.align_batch")
def align_batch_tangent(x_dot):
    return rt.align_batch(x_dot)


@rule("tangent", "rt.unbroadcast")
def unbroadcast_tangent(g_dot, x):
    return rt.unbroadcast(g_dot, x)            # linear in g; x gives only a shape


@rule("tangent", "rt.expand_to")
def expand_to_tangent(g_dot, x, axis=None, keepdims=False):
    return rt.expand_to(g_dot, x, axis=axis, keepdims=keepdims)


@rule("tangent", "rt.cast_like")
def cast_like_tangent(g_dot, x):
    return rt.cast_like(g_dot, x)


@rule("tangent", "rt.cast_derivative")
def cast_derivative_tangent(g_dot, like, to):
    return rt.cast_derivative(g_dot, like, to)


@rule("tangent", "rt.transpose_vjp")
def transpose_vjp_tangent(g_dot, axes=None):
    return rt.transpose_vjp(g_dot, axes=axes)


@rule("tangent", "rt.trace_vjp")
def trace_vjp_tangent(g_dot, x):
    return rt.trace_vjp(g_dot, x)


@rule("tangent", "rt.cumsum_vjp")
def cumsum_vjp_tangent(g_dot, x, axis=None):
    return rt.cumsum_vjp(g_dot, x, axis=axis)


@rule("tangent", "rt.extremum_vjp")
def extremum_vjp_tangent(g_dot, x, peak, axis=None, keepdims=False):
    # which entries attain the extremum is piecewise constant in x and peak
    return rt.extremum_vjp(g_dot, x, peak, axis=axis, keepdims=keepdims)


@rule("tangent", "rt.dot_vjp_x")
def dot_vjp_x_tangent(g, x, y, g_dot, y_dot):
    return rt.dot_vjp_x(g_dot, x, y) + rt.dot_vjp_x(g, x, y_dot)


@rule("tangent", "rt.dot_vjp_y")
def dot_vjp_y_tangent(g, x, y, g_dot, x_dot):
    return rt.dot_vjp_y(g_dot, x, y) + rt.dot_vjp_y(g, x_dot, y)


@rule("tangent", "rt.matmul_vjp_x")
def matmul_vjp_x_tangent(g, x, y, g_dot, y_dot):
    return rt.matmul_vjp_x(g_dot, x, y) + rt.matmul_vjp_x(g, x, y_dot)


@rule("tangent", "rt.matmul_vjp_y")
def matmul_vjp_y_tangent(g, x, y, g_dot, x_dot):
    return rt.matmul_vjp_y(g_dot, x, y) + rt.matmul_vjp_y(g, x_dot, y)


@rule("tangent", "rt.inner_vjp_x")
def inner_vjp_x_tangent(g, x, y, g_dot, y_dot):
    return rt.inner_vjp_x(g_dot, x, y) + rt.inner_vjp_x(g, x, y_dot)


@rule("tangent", "rt.inner_vjp_y")
def inner_vjp_y_tangent(g, x, y, g_dot, x_dot):
    return rt.inner_vjp_y(g_dot, x, y) + rt.inner_vjp_y(g, x_dot, y)


# vmap's batched products are bilinear too
@rule("tangent", "rt.dot_batched_x")
def dot_batched_x_tangent(x, y, x_dot, y_dot):
    return rt.dot_batched_x(x_dot, y) + rt.dot_batched_x(x, y_dot)


@rule("tangent", "rt.dot_batched_y")
def dot_batched_y_tangent(x, y, x_dot, y_dot):
    return rt.dot_batched_y(x_dot, y) + rt.dot_batched_y(x, y_dot)


@rule("tangent", "rt.matmul_batched_x")
def matmul_batched_x_tangent(x, y, x_dot, y_dot):
    return rt.matmul_batched_x(x_dot, y) + rt.matmul_batched_x(x, y_dot)


@rule("tangent", "rt.matmul_batched_y")
def matmul_batched_y_tangent(x, y, x_dot, y_dot):
    return rt.matmul_batched_y(x_dot, y) + rt.matmul_batched_y(x, y_dot)


@rule("tangent", "rt.matmul_vjp_x_batched_g")
def matmul_vjp_x_batched_g_tangent(g, x, y, g_dot, y_dot):
    return rt.matmul_vjp_x_batched_g(g_dot, x, y) + rt.matmul_vjp_x_batched_g(g, x, y_dot)


@rule("tangent", "rt.matmul_vjp_y_batched_g")
def matmul_vjp_y_batched_g_tangent(g, x, y, g_dot, x_dot):
    return rt.matmul_vjp_y_batched_g(g_dot, x, y) + rt.matmul_vjp_y_batched_g(g, x_dot, y)


@rule("tangent", "rt.matmul_vjp_y_batched_gx")
def matmul_vjp_y_batched_gx_tangent(g, x, y, g_dot, x_dot):
    return rt.matmul_vjp_y_batched_gx(g_dot, x, y) + rt.matmul_vjp_y_batched_gx(g, x_dot, y)


@rule("tangent", "rt.dot_vjp_x_batched_g")
def dot_vjp_x_batched_g_tangent(g, x, y, g_dot, y_dot):
    return rt.dot_vjp_x_batched_g(g_dot, x, y) + rt.dot_vjp_x_batched_g(g, x, y_dot)


@rule("tangent", "rt.dot_vjp_y_batched_gx")
def dot_vjp_y_batched_gx_tangent(g, x, y, g_dot, x_dot):
    return rt.dot_vjp_y_batched_gx(g_dot, x, y) + rt.dot_vjp_y_batched_gx(g, x_dot, y)


@rule("tangent", "rt.dot_identity_y")
def dot_identity_y_tangent(x, basis, x_dot):
    return rt.dot_identity_y(x_dot, basis)


@rule("tangent", "rt.dot_rows_x")
def dot_rows_x_tangent(x_rows, y, x_rows_dot, y_dot):
    return rt.dot_rows_x(x_rows_dot, y) + rt.dot_rows_x(x_rows, y_dot)


@rule("tangent", "rt.dot_vjp_y_rows_gx")
def dot_vjp_y_rows_gx_tangent(g, x_rows, y, g_dot, x_rows_dot):
    return rt.dot_vjp_y_rows_gx(g_dot, x_rows, y) + rt.dot_vjp_y_rows_gx(g, x_rows_dot, y)


@rule("tangent", "rt.dot_vjp_y_batched_g")
def dot_vjp_y_batched_g_tangent(g, x, y, g_dot, x_dot):
    return rt.dot_vjp_y_batched_g(g_dot, x, y) + rt.dot_vjp_y_batched_g(g, x_dot, y)


# The tape: a tangent tape rides beside each primal tape.  What is pushed onto
# ``s`` has its tangent pushed onto ``s_dot`` in the same statement's place,
# and every pop of ``s`` pops ``s_dot``, so the two stay in step.  ``tape=True``
# tells the transform three things: the tangent of a tape that carries
# tangents starts as an empty tape even though ``rt.stack()`` has no operand;
# an inactive value pushed onto an active tape pushes real zeros (one type per
# tape, and never a dropped push); and pops are effects, kept even when the
# popped tangent is not used.


@rule("tangent", "rt.stack", tape=True)
def tape_stack_tangent():
    return rt.stack()


@rule("tangent", "rt.push", tape=True)
def push_tangent(tape_dot, value_dot):
    return rt.push(tape_dot, value_dot)


@rule("tangent", "rt.pop", tape=True)
def pop_tangent(tape_dot):
    return rt.pop(tape_dot)


@rule("tangent", "rt.top", tape=True)
def top_tangent(tape_dot):
    return rt.top(tape_dot)


@rule("tangent", "rt.add_to_top", tape=True)
def add_to_top_tangent(tape_dot, value_dot):
    return rt.add_to_top(tape_dot, value_dot)

@rule("tangent", "rt.custom_jvp_call", by_transform=True)
def custom_jvp_call_tangent(inputs_dot):
    """A custom_jvp function's output: its tangent is the second result of the
    user's jvp rule, which the transform inlines with the inputs and their
    tangents (real zeros for inputs that carry none)."""


unsupported("tangent", ["rt.custom_vjp_call"],
            "forward mode of a custom_vjp function has no rule to follow: its backward rule gives cotangents, "
            "not tangents, and its own code is what the rule replaces (JAX refuses it too); write the "
            "function with tr.custom_jvp for forward mode and for both modes")


@rule("tangent", "rt.norm_vjp")
def norm_vjp_tangent(g, x, norm, g_dot, x_dot, norm_dot, axis=None, keepdims=False):
    # norm_vjp is expand_to(g / norm) * x: the quotient rule, then the product rule
    scale_dot = g_dot / norm - g * norm_dot / (norm * norm)
    return rt.expand_to(scale_dot, x, axis=axis, keepdims=keepdims) * x + \
        rt.expand_to(g / norm, x, axis=axis, keepdims=keepdims) * x_dot


@rule("tangent", "rt.solve_columns")
def solve_columns_tangent(b, x_dot):
    return rt.solve_columns(x_dot, b)


@rule("tangent", "rt.solve_uncolumns")
def solve_uncolumns_tangent(b, x_dot):
    return rt.solve_uncolumns(x_dot, b)


@rule("tangent", "rt.norm_ord_weights")
def norm_ord_weights_tangent(x, norm, x_dot, norm_dot, ord, axis=None, keepdims=False):
    along_x, b = rt.norm_ord_curvature(x, norm, ord, axis, keepdims, x_dot)
    return along_x + b * rt.expand_to(norm_dot, x, axis, keepdims)


@rule("tangent", "rt.take_at")
def take_at_tangent(index, g_dot):
    return rt.take_at(g_dot, index)


unsupported("tangent", ["rt.norm_ord_curvature"],
            "third derivatives of np.linalg.norm with ord= are not written")
@rule("tangent", "rt.prod_vjp")
def prod_vjp_tangent(g, x, g_dot, x_dot, axis=None, keepdims=False):
    return rt.prod_vjp(g_dot, x, axis, keepdims) + rt.prod_vjp_jvp(g, x, x_dot, axis, keepdims)


@rule("tangent", "rt.cumprod_vjp")
def cumprod_vjp_tangent(g, x, products, g_dot, x_dot, axis=None):
    # products is np.cumprod(x): x_dot already carries its change
    return rt.cumprod_vjp(g_dot, x, products, axis) + rt.cumprod_vjp_jvp(g, x_dot, x, axis)
