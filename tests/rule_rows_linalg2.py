"""Rule-table rows of the linalg2 family (templates/linalg2.py, the svd and matrix_power definitions):
np.linalg.svd (reduced, complete, compute_uv=False), np.linalg.svdvals, pinv, qr and matrix_power.

U and Vh are returned sign-normalized (each column of U times its first entry, each row of Vh times
its first entry): LAPACK may flip a singular vector's sign between NumPy, numba and jax, and the
products are what every one of them agrees on.  Matrices are well conditioned with distinct singular
values (random entries), where every derivative exists.
"""
import numpy as np

from rule_table import BOOLEAN, DERIVATIVES, F32, NO_DERIVATIVE, SECOND_ORDER, Row, U, no

COMPLETE = "full_matrices=True"


def signed(u, vh):
    return u * u[..., :1, :], vh * vh[..., :, :1]


def svd(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    u_signed, vh_signed = signed(u, vh)
    return u_signed, s, vh_signed


def svd_values_only(a):
    """A loss of S alone through the full decomposition: U's and Vh's cotangents are zero."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(s ** 2) + s[..., 0]


def svd_polar(a):
    """U Vh: the polar factor, which no sign choice changes."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return u @ vh


def svd_shared(b, a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    u_signed, vh_signed = signed(u, vh)
    return s * b[..., :1], u_signed @ b


def svd_complete(a):
    u, s, vh = np.linalg.svd(a)
    u_signed, vh_signed = signed(u, vh)
    return u_signed, s, vh_signed


def svd_complete_keyword(a):
    u, s, vh = np.linalg.svd(a, full_matrices=True)
    return s, np.abs(vh[..., :1, :])


def svd_no_uv(a): return np.linalg.svd(a, compute_uv=False)                            # noqa: E704
def svd_no_uv_reduced(a): return np.linalg.svd(a, False, False)                        # noqa: E704
def svdvals(a): return np.linalg.svdvals(a)                                            # noqa: E704
def svdvals_shared(b, a): return np.linalg.svdvals(a) * b                              # noqa: E704
def pinv(a): return np.linalg.pinv(a)                                                  # noqa: E704
def pinv_shared(b, a): return np.linalg.pinv(a) @ b                                    # noqa: E704


def qr(a):
    q, r = np.linalg.qr(a)
    k = r.shape[-2]
    sign = np.sign(np.sum(r[..., :k] * np.eye(k), axis=-1))   # each R row's diagonal sign, fixed
    return q * np.expand_dims(sign, -2), r * np.expand_dims(sign, -1)


def qr_r(a): return np.linalg.qr(a)[1] ** 2                                            # noqa: E704


def qr_shared(b, a):
    q, r = np.linalg.qr(a)
    return (q ** 2) @ b


def power_0(a): return np.linalg.matrix_power(a, 0)                                    # noqa: E704
def power_1(a): return np.linalg.matrix_power(a, 1)                                    # noqa: E704
def power_2(a): return np.linalg.matrix_power(a, 2)                                    # noqa: E704
def power_5(a): return np.linalg.matrix_power(a, 5)                                    # noqa: E704
def power_13(a): return np.linalg.matrix_power(a, 13)                                  # noqa: E704
def power_260(a): return np.linalg.matrix_power(a, 260)                                # noqa: E704
def power_minus_1(a): return np.linalg.matrix_power(a, -1)                             # noqa: E704
def power_minus_3(a): return np.linalg.matrix_power(a, -3)                             # noqa: E704
def power_shared(b, a): return np.linalg.matrix_power(a, 3) @ b                        # noqa: E704


def lstsq(a, b): return np.linalg.lstsq(a, b, rcond=None)[0]                         # noqa: E704
def lstsq_default(a, b): return np.linalg.lstsq(a, b)[0]                               # noqa: E704
def lstsq_rank(a, b): return np.linalg.lstsq(a, b, rcond=None)[2]                      # noqa: E704


def lstsq_all(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=None)
    return x, residuals, s


def near_identity(rng, *shape, scale=0.3, dtype=np.float64):
    """I plus small entries (powers neither blow up nor vanish); a stack for a longer shape."""
    return (np.eye(shape[-1]) + scale * U(rng, *shape, lo=-0.5, hi=0.5)).astype(dtype)


def rows():
    found = []
    complete = no(DERIVATIVES, COMPLETE)
    tall, wide = (lambda r: (U(r, 4, 3),)), (lambda r: (U(r, 3, 4),))
    stack, stack_wide = (lambda r: (U(r, 2, 4, 3),)), (lambda r: (U(r, 2, 3, 4),))
    square, f32 = (lambda r: (U(r, 3, 3),)), (lambda r: (F32(r, 4, 3),))
    shared = lambda r: (U(r, 3), U(r, 4, 3))        # noqa: E731
    # the reduced decomposition
    for name, gen in [("svd", tall), ("svd_wide", wide), ("svd_square", square), ("svd_stack", stack),
                      ("svd_stack_wide", stack_wide), ("svd_f32", f32)]:
        found.append(Row(name, svd, gen))
    found.append(Row("svd_values_only", svd_values_only, tall))
    found.append(Row("svd_values_only_stack", svd_values_only, stack_wide))
    found.append(Row("svd_polar", svd_polar, square))
    found.append(Row("svd_polar_tall", svd_polar, tall))
    found.append(Row("svd_shared", svd_shared, shared))
    # the complete decomposition (NumPy's default): values only, derivatives refused as in JAX
    for name, gen in [("svd_complete", tall), ("svd_complete_wide", wide), ("svd_complete_square", square),
                      ("svd_complete_stack", stack)]:
        found.append(Row(name, svd_complete, gen, refuses=complete))
    found.append(Row("svd_complete_keyword", svd_complete_keyword, stack_wide, refuses=complete))
    # the singular values alone
    for name, fn, gen in [("svd_no_uv", svd_no_uv, tall), ("svd_no_uv_positional", svd_no_uv_reduced, wide),
                          ("svd_no_uv_stack", svd_no_uv, stack), ("svdvals", svdvals, wide),
                          ("svdvals_stack", svdvals, stack_wide), ("svdvals_f32", svdvals, f32)]:
        found.append(Row(name, fn, gen))
    found.append(Row("svdvals_shared", svdvals_shared, shared))
    # the pseudo-inverse of full-rank matrices
    # (singular values away from 0: pinv's second derivatives grow as 1 / s^3, beyond central differences)
    conditioned = lambda *shape: lambda r: (U(r, *shape) + np.eye(*shape[-2:]),)      # noqa: E731
    for name, gen in [("pinv", conditioned(4, 3)), ("pinv_wide", conditioned(3, 4)), ("pinv_square", conditioned(3, 3)),
                      ("pinv_stack", conditioned(2, 4, 3)), ("pinv_stack_wide", conditioned(2, 3, 4)),
                      ("pinv_f32", lambda r: ((U(r, 4, 3) + np.eye(4, 3)).astype(np.float32),))]:
        found.append(Row(name, pinv, gen))
    found.append(Row("pinv_shared", pinv_shared, lambda r: (U(r, 4), U(r, 4, 3) + np.eye(4, 3))))
    # qr, reduced, m >= n (a wide matrix has no derivative: R is not square, as in JAX)
    for name, gen in [("qr", tall), ("qr_square", square), ("qr_stack", stack), ("qr_f32", f32)]:
        found.append(Row(name, qr, gen))
    found.append(Row("qr_r", qr_r, tall))
    found.append(Row("qr_wide", qr, wide, skip=no(DERIVATIVES, "a wide matrix's R is not square: qr has no "
                                                                "derivative there (JAX raises NotImplementedError)")))
    found.append(Row("qr_shared", qr_shared, shared))
    # lstsq of one matrix (NumPy has no stacks of it: vmap solves each example's); residuals only
    # for a tall full-rank a
    tall_b, tall_bs = (lambda r: (U(r, 5, 3) + np.eye(5, 3), U(r, 5))), (lambda r: (U(r, 5, 3) + np.eye(5, 3), U(r, 5, 2)))
    wide_b = lambda r: (U(r, 3, 5) + np.eye(3, 5), U(r, 3))       # noqa: E731
    for name, fn, gen in [("lstsq", lstsq, tall_b), ("lstsq_columns", lstsq, tall_bs), ("lstsq_wide", lstsq, wide_b),
                          ("lstsq_default", lstsq_default, tall_b), ("lstsq_all", lstsq_all, tall_b),
                          ("lstsq_all_columns", lstsq_all, tall_bs), ("lstsq_all_wide", lstsq_all, wide_b),
                          ("lstsq_f32", lstsq, lambda r: ((U(r, 5, 3) + np.eye(5, 3)).astype(np.float32), F32(r, 5)))]:
        skip = {"jax": "jax gives a wide matrix's residuals (shape (1,)) where NumPy gives none"} \
            if name == "lstsq_all_wide" else {}
        found.append(Row(name, fn, gen, skip=skip))
    found.append(Row("lstsq_rank", lstsq_rank, tall_b,
                     skip={**NO_DERIVATIVE(BOOLEAN), "jax": "jax's rank is an int64, NumPy's (and ours) an int32"}))
    # matrix_power, n a literal int: repeated squaring written out, a loop past 2**8, inv for n < 0
    three = lambda r: (near_identity(r, 3, 3),)          # noqa: E731
    for name, fn in [("matrix_power_0", power_0), ("matrix_power_1", power_1), ("matrix_power_2", power_2),
                     ("matrix_power_5", power_5), ("matrix_power_13", power_13), ("matrix_power_minus_1", power_minus_1),
                     ("matrix_power_minus_3", power_minus_3)]:
        found.append(Row(name, fn, three))
    found.append(Row("matrix_power_260", power_260, lambda r: (0.98 * near_identity(r, 3, 3, scale=0.004),),
                     skip=no(SECOND_ORDER, "second derivatives of order n^2 = 67600 are beyond the table's central "
                                           "differences' accuracy; matrix_power_13 checks the same squarings at second "
                                           "order, and tests/regressions/test_reverse_over_reverse_through_tapes.py this "
                                           "one with a finer step")))
    found.append(Row("matrix_power_stack", power_5, lambda r: (near_identity(r, 2, 3, 3),)))
    found.append(Row("matrix_power_f32", power_5, lambda r: (near_identity(r, 3, 3, dtype=np.float32),)))
    found.append(Row("matrix_power_shared", power_shared, lambda r: (U(r, 3), near_identity(r, 3, 3))))
    return found
