"""Rules of the second family of linear algebra: np.linalg.svd (``svd``: the reduced decomposition,
``svd_complete``: full_matrices=True, ``svdvals``: compute_uv=False), ``pinv`` and ``qr``.

Every rule is written with primitives that have rules of their own (``@``, ``np.swapaxes``,
``np.where``, ``np.linalg.inv``, ``rt.svd``), so second derivatives follow from the same rules, and
each works on a matrix or a stack of them (the last two axes), as NumPy's functions do.  Real
arrays only, as the rest of transformer.
"""
import numpy as np

from transformer import runtime as rt
from transformer.rules import machinery, rule, unsupported
from transformer.templates import adjoints

COMPLETE = ("np.linalg.svd with full_matrices=True (NumPy's default) has no derivative here, as in JAX "
            "(the extra columns of U or rows of Vh are not determined by the matrix); pass "
            "full_matrices=False, or compute_uv=False for the singular values alone")
unsupported("adjoint", ["svd_complete"], COMPLETE)
unsupported("tangent", ["svd_complete"], COMPLETE)


def transposed(m):
    return np.swapaxes(m, -1, -2)


def quotient_or_zero(numerator, denominator):
    """numerator / denominator, and exactly 0 wherever the numerator is exactly 0 (a cotangent or
    tangent that is zero there: no 0 / 0 from a zero singular value it does not reach)."""
    zero = numerator == 0.0
    return np.where(zero, 0.0, numerator / np.where(zero, 1.0, denominator))


def projection_weight(u):
    """1 where the columns of ``u`` (m x k) do not span its whole space (m > k), else 0: then
    I - U U^T is 0 exactly, and its rounding error divided by a singular value is not added."""
    return np.shape(u)[-2] > np.shape(u)[-1]


# ------------------------------------------------------------------------ svd
@rule("adjoint", "svd", wrt=("x",))
def svd(z_bar, z, x):
    """x = U diag(s) Vh, reduced (U m x k, Vh k x n, k = min(m, n)), for each matrix of a stack:

    x_bar = U (F * (U^T U_bar - U_bar^T U) S + diag(s_bar) + S F * (V^T V_bar - V_bar^T V)) Vh
            + (I - U U^T) U_bar S^-1 Vh + U S^-1 V_bar^T (I - V V^T)

    with F_ij = 1 / (s_j^2 - s_i^2) off the diagonal and 0 on it: JAX's jvp rule transposed (Townsend
    2016, "Differentiating the singular value decomposition").  Repeated singular values (s_i == s_j,
    i != j) leave U and V undetermined: F_ij is infinite and a loss of U or Vh gets inf or nan, as in
    JAX; an entry that is exactly 0 contributes 0, so a loss of the singular values alone stays finite
    there (diag(s_bar) is always finite).  A zero singular value of a non-square matrix makes the
    projection terms inf or nan for a loss of U or Vh (JAX divides by it too)."""
    u_bar, s_bar, vh_bar = z_bar
    u, s, vh = z
    eye = rt.cast_like(np.eye(np.shape(s)[-1]), s)
    u_inner = transposed(u) @ u_bar
    v_inner = vh @ transposed(vh_bar)
    squares = s * s
    middle = adjoints.reciprocal_gaps(squares, u_inner - transposed(u_inner), eye) * np.expand_dims(s, -2) \
        + eye * np.expand_dims(s_bar, -2) \
        + np.expand_dims(s, -1) * adjoints.reciprocal_gaps(squares, v_inner - transposed(v_inner), eye)
    u_rest = quotient_or_zero((u_bar - u @ u_inner) * projection_weight(u), np.expand_dims(s, -2))
    vh_rest = quotient_or_zero((vh_bar - transposed(v_inner) @ vh) * projection_weight(transposed(vh)),
                               np.expand_dims(s, -1))
    return u @ middle @ vh + u_rest @ vh + u @ vh_rest


@rule("tangent", "svd")
def svd_tangent(z, x_dot):
    """JAX's svd jvp (real matrices): with dS = U^T x_dot V, s_dot = diag(dS),
    U_dot = U (F * (dS S + S dS^T)) + (I - U U^T) x_dot V S^-1 and
    V_dot = V (F * (S dS + dS^T S)) + (I - V V^T) x_dot^T U S^-1, F_ij = 1 / (s_j^2 - s_i^2); the
    adjoint rule's docstring says what happens at repeated or zero singular values."""
    u, s, vh = z
    v = transposed(vh)
    eye = rt.cast_like(np.eye(np.shape(s)[-1]), s)
    x_dot_v = x_dot @ v
    x_dot_t_u = transposed(x_dot) @ u
    inner = transposed(u) @ x_dot_v
    squares = s * s
    scaled_columns = inner * np.expand_dims(s, -2)
    scaled_rows = np.expand_dims(s, -1) * inner
    u_dot = u @ adjoints.reciprocal_gaps(squares, scaled_columns + transposed(scaled_columns), eye) \
        + quotient_or_zero((x_dot_v - u @ inner) * projection_weight(u), np.expand_dims(s, -2))
    v_dot = v @ adjoints.reciprocal_gaps(squares, scaled_rows + transposed(scaled_rows), eye) \
        + quotient_or_zero((x_dot_t_u - v @ transposed(inner)) * projection_weight(v), np.expand_dims(s, -2))
    return u_dot, np.sum(inner * eye, axis=-1), transposed(v_dot)


@rule("adjoint", "svdvals", wrt=("x",))
def svdvals(z_bar, z, x):
    """d s_k = u_k^T dx v_k: x_bar = U diag(s_bar) Vh.  At repeated singular values a loss symmetric
    in them (their sum, a norm) gets its derivative; at a zero singular value of a non-square matrix
    (where s_k = |.| has a kink) this is JAX's choice, u_k v_k^T."""
    u, s, vh = rt.svd(x)
    return (u * np.expand_dims(z_bar, -2)) @ vh


@rule("tangent", "svdvals")
def svdvals_tangent(x, x_dot):
    u, s, vh = rt.svd(x)
    return np.sum(u * (x_dot @ transposed(vh)), axis=-2)


# ----------------------------------------------------------------------- pinv
@rule("adjoint", "pinv", wrt=("x",))
def pinv(z_bar, z, x):
    """The tangent rule transposed: x_bar = -P^T Z P^T + (I - x P) Z^T P P^T + P^T P Z^T (I - P x),
    P = pinv(x), Z = z_bar (Golub and Pereyra 1973).  Exact where the rank of x is constant near it
    (full rank in particular); pinv is not continuous where the rank changes, and there this is the
    derivative along perturbations that keep the rank, with NumPy's rcond deciding which rank."""
    p_t = transposed(z)
    z_bar_t = transposed(z_bar)
    return -(p_t @ z_bar @ p_t) + (z_bar_t - x @ (z @ z_bar_t)) @ z @ p_t \
        + p_t @ z @ (z_bar_t - (z_bar_t @ z) @ x)


@rule("tangent", "pinv")
def pinv_tangent(x, z, x_dot):
    """P_dot = -P x_dot P + P P^T x_dot^T (I - x P) + (I - P x) x_dot^T P^T P (see the adjoint rule)."""
    p_t = transposed(z)
    x_dot_t = transposed(x_dot)
    return -(z @ x_dot @ z) + z @ p_t @ (x_dot_t - (x_dot_t @ x) @ z) + (x_dot_t - z @ (x @ x_dot_t)) @ p_t @ z


# ------------------------------------------------------------------------- qr
def strictly_lower(m):
    """A 0/1 mask shaped like one matrix of ``m`` (square): 1 below the diagonal."""
    rows = np.arange(np.shape(m)[-2])
    return rt.cast_like(np.expand_dims(rows, -1) > rows, m)


@rule("adjoint", "qr", wrt=("x",))
def qr(z_bar, z, x):
    """x = Q R, reduced, m >= n (R square and invertible): x_bar = (Q_bar + Q copyltu(M)) R^-T with
    M = R R_bar^T - Q_bar^T Q and copyltu(M) the symmetric matrix of M's lower triangle (JAX's qr_jvp
    transposed; Walter and Lehmann 2018).  A wide matrix (m < n) has no derivative here, as in JAX:
    R is not square, and np.linalg.inv refuses it at run time."""
    q_bar, r_bar = z_bar
    q, r = z
    m = r @ transposed(r_bar) - transposed(q_bar) @ q
    lower = m * strictly_lower(r)
    eye = rt.cast_like(np.eye(np.shape(r)[-2]), r)
    symmetric = lower + transposed(lower) + m * eye
    return (q_bar + q @ symmetric) @ transposed(np.linalg.inv(r))


@rule("tangent", "qr")
def qr_tangent(z, x_dot):
    """JAX's qr_jvp (real, m >= n): with C = Q^T x_dot R^-1 and W = tril(C, -1) - tril(C, -1)^T,
    Q_dot = Q (W - C) + x_dot R^-1 and R_dot = (C - W) R."""
    q, r = z
    x_dot_r_inverse = x_dot @ np.linalg.inv(r)
    c = transposed(q) @ x_dot_r_inverse
    lower = c * strictly_lower(r)
    w = lower - transposed(lower)
    return q @ (w - c) + x_dot_r_inverse, (c - w) @ r


# ------------------------------------------------------------- vmap: NumPy's stacks
# Each decomposes every matrix of a stack: the batch axis goes first, then back last.
@rule("batching", "svd", strategy="batched")
def svd_batched(x):
    u, s, vh = rt.svd(np.moveaxis(x, -1, 0))
    return np.moveaxis(u, 0, -1), np.moveaxis(s, 0, -1), np.moveaxis(vh, 0, -1)


@rule("batching", "svd_complete", strategy="batched")
def svd_complete_batched(x):
    u, s, vh = rt.svd_complete(np.moveaxis(x, -1, 0))
    return np.moveaxis(u, 0, -1), np.moveaxis(s, 0, -1), np.moveaxis(vh, 0, -1)


@rule("batching", "svdvals", strategy="batched")
def svdvals_batched(x):
    return np.moveaxis(np.linalg.svdvals(np.moveaxis(x, -1, 0)), 0, -1)


@rule("batching", "pinv", strategy="batched")
def pinv_batched(x):
    return np.moveaxis(np.linalg.pinv(np.moveaxis(x, -1, 0)), 0, -1)


@rule("batching", "qr", strategy="batched")
def qr_batched(x):
    q, r = np.linalg.qr(np.moveaxis(x, -1, 0))
    return np.moveaxis(q, 0, -1), np.moveaxis(r, 0, -1)


# ---------------------------------------------------------------------- lstsq
# NumPy's lstsq takes one matrix (no stacked form): vmap solves each example's system in turn
machinery("batching", "lstsq", strategy="loop")


@rule("adjoint", "lstsq", wrt=("a", "b"))
def lstsq(z_bar, z, a, b, rcond=None):
    """x = pinv(a) b (NumPy's least-squares, minimum-norm solution), so the solution's cotangent is
    the pinv rule's applied to b: with P = pinv(a) and r = b - a x,
    a_bar = -P^T x_bar x^T + r (P P^T x_bar)^T + P^T x (x_bar - a^T P^T x_bar)^T and b_bar = P^T x_bar.
    The residuals (|r|^2 per column, given only for a tall full-rank a) add 2 r res_bar to b_bar and
    -2 (r res_bar) x^T to a_bar (a^T r = 0 at the solution); the singular values add U diag(s_bar) Vh
    (the svdvals rule); the rank is an integer.  Exact where the rank of a is constant near it (full
    rank in particular); where it changes, lstsq is not continuous."""
    x_bar, residuals_bar, rank_bar, s_bar = z_bar
    x, residuals, rank, s = z
    p = np.linalg.pinv(a)
    p_t = transposed(p)
    n = np.shape(a)[-1]
    x_columns = np.reshape(x, (n, -1))
    x_bar_columns = np.reshape(x_bar, (n, -1))
    r = np.reshape(b, (np.shape(a)[-2], -1)) - a @ x_columns
    residual_weights = np.sum(np.reshape(residuals_bar, (-1, np.shape(x_columns)[-1])), axis=0)
    b_bar = p_t @ x_bar_columns + 2.0 * r * residual_weights
    a_bar = -((p_t @ x_bar_columns) @ transposed(x_columns)) + r @ transposed(p @ (p_t @ x_bar_columns)) \
        + (p_t @ x_columns) @ transposed(x_bar_columns - transposed(a) @ (p_t @ x_bar_columns)) \
        - 2.0 * (r * residual_weights) @ transposed(x_columns)
    u, singular, vh = rt.svd(a)
    return a_bar + (u * s_bar) @ vh, np.reshape(b_bar, np.shape(b))


@rule("tangent", "lstsq")
def lstsq_tangent(a, b, z, a_dot, b_dot, rcond=None):
    """The adjoint rule's derivative, forward: x_dot = P (b_dot - a_dot x) + P P^T a_dot^T r
    + (I - P a) a_dot^T P^T x; residuals_dot = 2 r^T (b_dot - a_dot x) per column (where NumPy gives
    residuals); s_dot = diag(U^T a_dot V); the rank's tangent is 0."""
    x, residuals, rank, s = z
    p = np.linalg.pinv(a)
    p_t = transposed(p)
    m = np.shape(a)[-2]
    x_columns = np.reshape(x, (np.shape(a)[-1], -1))
    r = np.reshape(b, (m, -1)) - a @ x_columns
    change = np.reshape(b_dot, (m, -1)) - a_dot @ x_columns
    back = transposed(a_dot) @ (p_t @ x_columns)
    x_dot = p @ change + p @ (p_t @ (transposed(a_dot) @ r)) + back - p @ (a @ back)
    residuals_dot = np.sum(2.0 * r * change, axis=0)
    u, singular, vh = rt.svd(a)
    return np.reshape(x_dot, np.shape(x)), residuals_dot[:np.shape(residuals)[0]], rank * 0.0, \
        np.sum(u * (a_dot @ transposed(vh)), axis=-2)
