"""np.linalg.cholesky, slogdet, eigh and eigvalsh in losses as users write them: values against NumPy,
derivatives against central differences in float64, under grad, jit(grad) and vmap (tests/rule_table.py
checks each rule alone).

cholesky, eigh and eigvalsh read one triangle of a matrix they assume symmetric; their derivatives are
those of its symmetric part (x + x^T) / 2, as JAX's are, so the differences here perturb that part.
slogdet reads the whole matrix, and is differenced as it is.
"""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad, central_difference_hessian

RNG = np.random.default_rng(11)


def spd(n, *stack):
    """Symmetric positive definite matrices (a stack of them with ``stack`` leading axes), eigenvalues
    apart (eigenvectors then have derivatives)."""
    m = RNG.standard_normal(stack + (n, n))
    return m @ np.swapaxes(m, -1, -2) / n + np.eye(n)


def symmetric_part(a):
    return 0.5 * (a + np.swapaxes(a, -1, -2))


def differences(f, args, argnum=0, symmetric=True):
    """d f / d args[argnum] by central differences, of the symmetric part of that argument if asked."""
    if not symmetric:
        return central_difference_grad(f, args, argnum)

    def of_symmetric_part(*a):
        return f(*a[:argnum], symmetric_part(a[argnum]), *a[argnum + 1:])
    return central_difference_grad(of_symmetric_part, args, argnum)


# ------------------------------------------------------------------ user functions
def decompositions(a):
    sign, logabsdet = np.linalg.slogdet(a)
    w, v = np.linalg.eigh(a)
    return (np.linalg.cholesky(a), sign, logabsdet, w, v, np.linalg.eigvalsh(a),
            np.linalg.eigh(a)[0], np.linalg.slogdet(a)[1])


def eigen_loss(a):
    """Eigenvalues weighted by the squared first-row entries of the eigenvectors (signs drop out)."""
    w, v = np.linalg.eigh(a)
    return np.sum(w * (v[0, :] ** 2))


def first_eigenvector_loss(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w * (v[:, 0] ** 2))


def eigenvalue_loss(a):
    return np.sum(np.linalg.eigvalsh(a) ** 3)


def determinant_from_slogdet(a):
    sign, logabsdet = np.linalg.slogdet(a)
    return sign * np.exp(logabsdet)


def gaussian_log_likelihood(x, mean, cov):
    """log N(x; mean, cov) through the Cholesky factor cov = L L^T."""
    n = x.shape[0]
    chol = np.linalg.cholesky(cov)
    z = np.linalg.solve(chol, x - mean)
    log_det = 2.0 * np.sum(np.log(np.sum(chol * np.eye(n), axis=0)))
    return -0.5 * np.sum(z * z) - 0.5 * log_det - 0.5 * n * np.log(2.0 * np.pi)


def gaussian_reference(x, mean, cov):
    """The same log-likelihood by NumPy's own slogdet and solve."""
    _, log_det = np.linalg.slogdet(cov)
    d = x - mean
    return -0.5 * d @ np.linalg.solve(cov, d) - 0.5 * log_det - 0.5 * len(x) * np.log(2.0 * np.pi)


def stacked_loss(a):
    """Every decomposition of a stack of matrices (leading axes), in one scalar."""
    sign, logabsdet = np.linalg.slogdet(a)
    w, v = np.linalg.eigh(a)
    return np.sum(np.linalg.cholesky(a) ** 2) + np.sum(sign * logabsdet) + np.sum(w * v[..., 0, :] ** 2) \
        + np.sum(np.linalg.eigvalsh(a) ** 2)


def eigenvalues_through_eigh(a):
    return np.sum(np.linalg.eigh(a)[0] ** 2)


def logabsdet_indexed(a):
    return np.linalg.slogdet(a)[1]


# ------------------------------------------------------------------ values
def _columns_signed_alike(v, like):
    """Eigenvectors are unique up to sign: each column of ``v`` signed as the one of ``like``."""
    return v * np.sign(np.sum(v * like, axis=-2, keepdims=True))


@pytest.mark.parametrize("a", [spd(4), spd(3, 2, 2), spd(4).astype(np.float32)],
                         ids=["matrix", "rank-4 stack", "float32"])
def test_values_match_numpy(a):
    want = decompositions(a)
    tol = dict(rtol=2e-5, atol=2e-6) if a.dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    for target in ("python", "cpu"):
        got = tr.jit(decompositions, target=target)(a)
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            if np.ndim(w):           # (numba gives a 0-d result as a Python float)
                assert g.dtype == w.dtype == a.dtype, (target, k, g.dtype, w.dtype)
            if k == 4:
                g = _columns_signed_alike(g, w)
            np.testing.assert_allclose(g, w, err_msg=f"{target}: result {k}", **tol)


# ------------------------------------------------------------------ first derivatives
GRADIENT_CASES = {
    "eigenvalues and eigenvectors": (eigen_loss, (spd(4),), 0, True),
    "first eigenvector": (first_eigenvector_loss, (spd(3),), 0, True),
    "eigvalsh": (eigenvalue_loss, (spd(4),), 0, True),
    "slogdet unpacked": (determinant_from_slogdet, (-spd(3),), 0, False),       # a negative determinant
    "slogdet indexed": (logabsdet_indexed, (RNG.standard_normal((3, 3)) + 3 * np.eye(3),), 0, False),
    "gaussian, covariance": (gaussian_log_likelihood, (RNG.standard_normal(3), RNG.standard_normal(3), spd(3)),
                             2, True),
    "gaussian, point": (gaussian_log_likelihood, (RNG.standard_normal(3), RNG.standard_normal(3), spd(3)),
                        0, False),
    "stack": (stacked_loss, (spd(3, 2),), 0, True),
}


@pytest.mark.parametrize("case", GRADIENT_CASES.values(), ids=GRADIENT_CASES.keys())
def test_gradient_matches_central_differences(case):
    f, args, argnum, symmetric = case
    want = differences(f, args, argnum, symmetric)
    np.testing.assert_allclose(tr.grad(f, argnums=argnum)(*args), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(tr.jit(tr.grad(f, argnums=argnum))(*args), want, rtol=1e-6, atol=1e-7)


def test_gaussian_log_likelihood_matches_numpy():
    x, mean, cov = RNG.standard_normal(4), RNG.standard_normal(4), spd(4)
    np.testing.assert_allclose(gaussian_log_likelihood(x, mean, cov), gaussian_reference(x, mean, cov), rtol=1e-12)
    np.testing.assert_allclose(tr.jit(gaussian_log_likelihood)(x, mean, cov), gaussian_reference(x, mean, cov),
                               rtol=1e-12)


def test_float32_gradients_stay_float32():
    a = spd(3).astype(np.float32)
    want = differences(stacked_loss, (a.astype(np.float64),))
    for grad in (tr.grad(stacked_loss), tr.jit(tr.grad(stacked_loss))):
        got = grad(a)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


# ------------------------------------------------------------------ vmap
def test_vmap_of_grad_matches_a_loop():
    batch = spd(3, 4)
    want = np.stack([differences(eigen_loss, (a,)) for a in batch])
    np.testing.assert_allclose(tr.vmap(tr.grad(eigen_loss))(batch), want, rtol=1e-6, atol=1e-7)
    moved = np.moveaxis(batch, 0, 1)                        # the examples along axis 1
    np.testing.assert_allclose(tr.vmap(tr.grad(eigen_loss), in_axes=1)(moved), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(tr.jit(tr.vmap(tr.grad(eigen_loss)))(batch), want, rtol=1e-6, atol=1e-7)


def test_vmap_of_grad_with_a_shared_covariance():
    """Points batched, the covariance shared (in_axes None): its gradient differs per point."""
    points, mean, cov = RNG.standard_normal((5, 3)), RNG.standard_normal(3), spd(3)
    per_point = tr.vmap(tr.grad(gaussian_log_likelihood, argnums=2), in_axes=(0, None, None))(points, mean, cov)
    want = np.stack([differences(gaussian_log_likelihood, (x, mean, cov), 2) for x in points])
    np.testing.assert_allclose(per_point, want, rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------ second order
def test_hessian_of_the_gaussian_in_the_point_is_minus_the_precision():
    x, mean, cov = RNG.standard_normal(3), RNG.standard_normal(3), spd(3)
    np.testing.assert_allclose(tr.hessian(gaussian_log_likelihood)(x, mean, cov), -np.linalg.inv(cov),
                               rtol=1e-10, atol=1e-12)


def test_hessian_through_eigh_matches_differences():
    a = spd(3)

    def of_symmetric_part(a):
        return eigen_loss(symmetric_part(a))
    np.testing.assert_allclose(tr.hessian(eigen_loss)(a), central_difference_hessian(of_symmetric_part, [a]),
                               rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ degenerate eigenvalues (JAX's convention)
def test_eigenvalues_alone_have_a_finite_gradient_at_a_repeated_eigenvalue():
    a = np.diag([2.0, 2.0, 5.0])
    # d sum(w^2) = d trace(a^2) = 2 a, whichever eigenvectors LAPACK picks in the repeated eigenspace
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_allclose(tr.grad(eigenvalues_through_eigh)(a), 2 * a, atol=1e-12)
        np.testing.assert_allclose(tr.jit(tr.grad(eigenvalues_through_eigh))(a), 2 * a, atol=1e-12)
    np.testing.assert_allclose(tr.grad(eigenvalue_loss)(a), 3 * np.diag(np.diag(a) ** 2), atol=1e-12)


def eigenvector_sum(a):
    w, v = np.linalg.eigh(a)
    return np.sum(v)


def test_eigenvectors_at_a_repeated_eigenvalue_have_no_finite_derivative():
    """The eigenvectors of a repeated eigenvalue are not unique: F_ij = 1 / (w_j - w_i) is infinite, and so
    is the derivative (JAX gives inf and nan there too), rather than a finite number that would be wrong."""
    a = np.diag([2.0, 2.0, 5.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        assert not np.all(np.isfinite(tr.grad(eigenvector_sum)(a)))


# ------------------------------------------------------------------ refusals
def eigenvalues_attribute(a):
    return np.linalg.eigh(a).eigenvalues                      # refused: attribute


def upper_triangle(a):
    return np.linalg.eigh(a, UPLO="U")[0]                     # refused: UPLO


def upper_factor(a):
    return np.linalg.cholesky(a, upper=True)                  # refused: upper


def results_in_a_loop(a):
    results = np.linalg.slogdet(a)
    total = 0.0
    for k in range(2):
        total = total + results[k]                            # refused: loop
    return total


def _line_of(marker):
    import inspect
    lines, start = inspect.getsourcelines(inspect.getmodule(_line_of))
    return next(i for i, text in enumerate(lines, 1) if f"# refused: {marker}" in text)


@pytest.mark.parametrize("f, marker, words", [
    (eigenvalues_attribute, "attribute", "attribute .eigenvalues"),
    (upper_triangle, "UPLO", "does not support the keyword UPLO="),
    (upper_factor, "upper", "does not support the keyword upper="),
    (results_in_a_loop, "loop", "position written as a number"),
])
def test_unsupported_forms_are_refused_at_the_users_line(f, marker, words):
    with pytest.raises(tr.TransformError, match=words) as info:
        tr.grad(f)(spd(3))
    assert f"test_linalg_decompositions.py:{_line_of(marker)}" in str(info.value)
