"""Rule-table rows of the misc family: np.nan_to_num, scipy.special.ndtr and log_ndtr (primitives),
np.gradient, np.average, np.vander and np.interp (definitions), Python's sum and lax.switch (written
definitions), and the first and second derivatives of np.prod and np.cumprod where entries are zero
(templates/misc.py)."""
import builtins

import numpy as np
import scipy.special

import transformer
from rule_table import F32, SECOND_ORDER, Row, U, no

# ------------------------------------------------------------------ nan_to_num
def nan_to_num_(x, y):
    # (the default posinf and neginf, the largest floats, would make differences of sums overflow)
    return np.nan_to_num(x, nan=0.5, posinf=2.0, neginf=-2.0) * y, np.nan_to_num(x, posinf=3.0, neginf=-3.0) + y


def not_finite(r):
    """Values with a NaN, +inf and -inf among them (their derivative is 0), and a finite factor."""
    x = U(r, 3, 4, lo=-1.0, hi=1.0)
    x.reshape(-1)[[1, 6, 10]] = [np.nan, np.inf, -np.inf]
    return x, U(r, 3, 4, lo=0.5, hi=1.5)


# ------------------------------------------------------------- ndtr, log_ndtr
def ndtr_(x): return scipy.special.ndtr(x), scipy.special.log_ndtr(x)          # noqa: E704


# ------------------------------------------------------------- multigammaln
def multigammaln_(a): return scipy.special.multigammaln(a, 3) * scipy.special.multigammaln(a + 0.5, 1)   # noqa: E704


# ------------------------------------------------------------------------ fmod
def fmod_(x, y): return np.fmod(x, y), np.fmod(x, 0.75) * y                     # noqa: E704


def mixed_signs(r):
    """x of both signs; y of both signs, away from zero (fmod's jumps, where x / y is whole, are rare)."""
    return U(r, 3, 4, lo=-3.0, hi=3.0), np.where(U(r, 3, 4) > 0.5, 1.0, -1.0) * U(r, 3, 4, lo=0.6, hi=1.4)


# ---------------------------------------------------------------- definitions
def gradient_(f): return np.gradient(f), np.gradient(f, 0.5)                   # noqa: E704
def gradient_axis(m): return np.gradient(m, axis=1), np.gradient(m, 0.25, axis=0)   # noqa: E704


def average_(a, w, v):
    return (np.average(a), np.average(a, axis=1), np.average(a, weights=w),
            np.average(a, axis=0, weights=v))


def vander_(x): return np.vander(x), np.vander(x, 3, increasing=True), np.vander(x, N=2)   # noqa: E704
def interp_(x, xp, fp): return np.interp(x, xp, fp)                              # noqa: E704


def interp_points(r):
    """Points inside and on both sides of the knots (never on one: a kink), the knots increasing."""
    xp = np.cumsum(U(r, 5, lo=0.2, hi=0.6))
    x = np.array([xp[0] - 0.3, xp[-1] + 0.2, *(xp[:-1] + U(r, 4, lo=0.05, hi=0.15))])
    return np.reshape(x, (2, 3)), xp, U(r, 5, lo=-1.0, hi=1.0)


# ------------------------------------------------------ products with zeros
def prod_axes(x): return np.prod(x, axis=1), np.prod(x, axis=0), np.prod(x)    # noqa: E704
def cumprod_axes(x): return np.cumprod(x, axis=1), np.cumprod(x)              # noqa: E704
def products_f32(x): return np.prod(x, axis=-1), np.cumprod(x, axis=0)        # noqa: E704
def cumprod_rows(y): return np.cumprod(y, axis=0)                              # noqa: E704


def cumprod_tangent_(x, t):
    """cumprod's tangent as a function of x and t: its derivatives are cumprod's second ones,
    including the tangent of the tangent (rt.cumprod_jvp_jvp), which grad and hessian never make."""
    return transformer.jvp(cumprod_rows, (x,), (t,))[1]


THIRD_PRODUCT = no(SECOND_ORDER + ("hessian",), "third derivatives of np.prod and np.cumprod are not written")


def zeros_in_rows(r):
    """Two zeros in the first row, one in the second, none in the third."""
    x = U(r, 3, 4, lo=0.5, hi=1.5)
    x[0, 1] = x[0, 2] = x[1, 0] = 0.0
    return (x,)


def sum_of_a_generator(x):
    # Python's sum over a generator expression: unrolled, one addition per entry
    return builtins.sum(np.sin(x[k]) * x[k] for k in range(3)) + sum((x[0], x[1] * 2.0))


def sum_of_rows(x):
    # Python's sum over an array's rows: a loop adding rows, as Python runs it
    return builtins.sum(x, np.zeros(np.shape(x)[1])) * x[0]


def switched(i, x):
    # lax.switch: the index picks the branch, clamped to the branches
    return transformer.lax.switch(i, [np.sin, lambda v: v * v, lambda v: np.exp(v) - v], x) * x


def rows():
    return [
        Row("nan_to_num_", nan_to_num_, not_finite),
        Row("fmod_", fmod_, mixed_signs),
        Row("fmod_f32", fmod_, lambda r: tuple(np.float32(v) for v in mixed_signs(r))),
        Row("python_sum_generator", sum_of_a_generator, lambda r: (U(r, 3, 4),)),
        Row("python_sum_rows", sum_of_rows, lambda r: (U(r, 3, 4),), skip={"jax": "not a jax.numpy function"}),
        # the chosen branch is recorded for the backward sweep: reverse over reverse runs through that tape
        Row("switch_branches", switched, lambda r: (1, U(r, 3, 4)), skip={"jax": "lax.switch is jax.lax's"}),
        Row("switch_clamped", switched, lambda r: (7, U(r, 4)), skip={"jax": "lax.switch is jax.lax's"}),
        Row("ndtr_", ndtr_, lambda r: (U(r, 3, 4, lo=-3.0, hi=3.0),)),
        Row("multigammaln_", multigammaln_, lambda r: (U(r, 3, 4, lo=1.2, hi=4.0),)),
        Row("ndtr_left_tail", ndtr_, lambda r: (U(r, 3, 4, lo=-40.0, hi=-21.0),)),
        Row("ndtr_f32", ndtr_, lambda r: (F32(r, 3, 4, lo=-3.0, hi=3.0),)),
        Row("gradient_", gradient_, lambda r: (U(r, 6, lo=-1.0, hi=1.0),)),
        Row("gradient_axis", gradient_axis, lambda r: (U(r, 3, 4, lo=-1.0, hi=1.0),)),
        Row("average_", average_, lambda r: (U(r, 3, 4), U(r, 3, 4, lo=0.5, hi=1.5), U(r, 3, lo=0.5, hi=1.5))),
        Row("vander_", vander_, lambda r: (np.array([0.0, *U(r, 3, lo=-1.0, hi=1.0)]),),
            skip={"jax": "jnp.vander's derivative of the column x ** 0 at x == 0 is NaN (0 * 0 ** -1); ours is "
                         "0, as differences say"}),
        Row("interp_", interp_, interp_points),
        Row("prod_zeros_axes", prod_axes, zeros_in_rows),
        Row("cumprod_zeros_axes", cumprod_axes, zeros_in_rows),
        Row("products_f32", products_f32, lambda r: (F32(r, 3, 4, lo=0.5, hi=1.5),)),
        Row("cumprod_tangent_zeros", cumprod_tangent_, lambda r: (*zeros_in_rows(r), U(r, 3, 4)),
            refuses=THIRD_PRODUCT, skip={"jax": "a transform inside the row"}),
    ]
