"""Every rule of the misc family (adjoint, tangent, batching): the tangents of np.prod and
np.cumprod and their second derivatives, and the rules of the primitives this family adds (see the ``# ---- misc`` block of
transformer/primitives.py)."""
import numpy as np

from transformer import runtime as rt
from transformer.rules import machinery, rule, unsupported


# ------------------------------------------------------- products' tangents
@rule("tangent", "prod")
def prod_tangent(z, x, x_dot, axis=None, keepdims=False):
    """sum over i of x_dot[i] times the product of the other entries: the products of the others
    are reverse mode's (exclusive products from the left and from the right, no division), so it
    is exact where one or several entries are zero."""
    others = rt.prod_vjp(np.ones_like(z), x, axis, keepdims)
    return np.sum(others * x_dot, axis=axis, keepdims=keepdims)


@rule("tangent", "cumprod")
def cumprod_tangent(x, x_dot, axis=None):
    return rt.cumprod_jvp(x_dot, x, axis=axis)


@rule("adjoint", "rt.cumprod_jvp", wrt=("t", "x"))
def cumprod_jvp_adjoint(z_bar, z, t, x, axis=None):
    # linear in t: its transpose is cumprod's own adjoint; in x, see rt.cumprod_vjp_jvp
    return rt.cumprod_vjp(z_bar, x, np.cumprod(x, axis=axis), axis), rt.cumprod_vjp_jvp(z_bar, t, x, axis)


@rule("tangent", "rt.cumprod_jvp")
def cumprod_jvp_tangent(t, x, t_dot, x_dot, axis=None):
    return rt.cumprod_jvp(t_dot, x, axis) + rt.cumprod_jvp_jvp(t, x_dot, x, axis)


# The second derivatives' helpers (products of all the entries of a line but two, runtime.py)
_THIRD_ORDER = ("third derivatives of np.prod and np.cumprod are not written; write the product as a "
                "loop of multiplications")
unsupported("adjoint", ["rt.prod_vjp_jvp", "rt.cumprod_jvp_jvp", "rt.cumprod_vjp_jvp"], _THIRD_ORDER)
unsupported("tangent", ["rt.prod_vjp_jvp", "rt.cumprod_jvp_jvp", "rt.cumprod_vjp_jvp"], _THIRD_ORDER)
machinery("batching", "rt.cumprod_jvp", "rt.prod_vjp_jvp", "rt.cumprod_jvp_jvp", "rt.cumprod_vjp_jvp",
          strategy="loop")


# ------------------------------------------------------------------ nan_to_num
@rule("adjoint", "nan_to_num", wrt=("x",))
def nan_to_num_adjoint(z_bar, z, x, nan=0.0, posinf=None, neginf=None):
    """1 where x is finite, 0 where NaN or an infinity was replaced by a constant (JAX's too)."""
    return np.where(np.isfinite(x), z_bar, 0.0)


@rule("tangent", "nan_to_num")
def nan_to_num_tangent(x, x_dot, nan=0.0, posinf=None, neginf=None):
    return np.where(np.isfinite(x), x_dot, 0.0)


# ------------------------------------------------------------- ndtr, log_ndtr
@rule("adjoint", "ndtr", wrt=("x",))
def ndtr_adjoint(z_bar, z, x):
    return z_bar * 0.3989422804014327 * np.exp(-0.5 * x * x)          # 1 / sqrt(2 pi)


@rule("tangent", "ndtr")
def ndtr_tangent(x, x_dot):
    return 0.3989422804014327 * np.exp(-0.5 * x * x) * x_dot


@rule("adjoint", "log_ndtr", wrt=("x",))
def log_ndtr_adjoint(z_bar, z, x):
    """ndtr'(x) / ndtr(x) as exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi): no underflow far in the left
    tail, where the quotient nears -x."""
    return z_bar * 0.3989422804014327 * np.exp(-0.5 * x * x - z)


@rule("tangent", "log_ndtr")
def log_ndtr_tangent(x, z, x_dot):
    return 0.3989422804014327 * np.exp(-0.5 * x * x - z) * x_dot


# ------------------------------------------------------------------------ fmod
# np.fmod(x, y) = x - trunc(x / y) * y, and trunc is piecewise constant (its jumps, where x / y is
# a whole number, have no derivative; there these are the one-sided derivatives NumPy's own
# differences see on the side away from zero, as JAX's fmod rule gives)
@rule("adjoint", "fmod", wrt=("x", "y"))
def fmod_adjoint(z_bar, z, x, y):
    return rt.unbroadcast(z_bar, x), rt.unbroadcast(-z_bar * np.trunc(x / y), y)


@rule("tangent", "fmod")
def fmod_tangent(x, y, x_dot, y_dot):
    return x_dot - np.trunc(x / y) * y_dot
