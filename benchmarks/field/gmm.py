"""Gaussian mixture model with a Wishart prior: ADBench's and GradBench's ``gmm``.

Parameters: ``alphas`` (k,) mixture weights before the
softmax, ``means`` (k, d), ``icf`` (k, d(d+1)/2): for each component the logarithms of the
diagonal of the inverse covariance's Cholesky factor Q, then its strictly lower triangle column by
column.  ``x`` (n, d) are the points; the Wishart prior has ``gamma`` and ``m``.  The gradient is
taken in alphas, means and icf.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special

SIZES = {
    "small": dict(d=3, k=4, n=12),
    "d10-k25": dict(d=10, k=25, n=1000),
    "d64-k100": dict(d=64, k=100, n=1000),
}
WRT = (0, 1, 2)


def inputs(d, k, n, seed=0):
    rng = np.random.default_rng(seed)
    alphas = rng.normal(size=k)
    means = rng.uniform(size=(k, d))
    icf = rng.normal(scale=0.3, size=(k, d * (d + 1) // 2))
    x = rng.normal(size=(n, d))
    return alphas, means, icf, x, 1.0, 0


def logsumexp(a, axis=None):
    top = np.max(a, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(a - top), axis=axis)) + np.squeeze(top, axis=axis) if axis is not None \
        else np.log(np.sum(np.exp(a - top))) + np.max(a)


def lower_triangles(entries, k, d):
    """The strictly lower triangles of k d-by-d matrices, filled column by column from ``entries``:
    (j, i) of the upper triangle's row-major order."""
    upper_rows, upper_cols = np.triu_indices(d, 1)
    lower = np.zeros((k, d, d))
    lower[:, upper_cols, upper_rows] = entries
    return lower


def jax_replacements(jax, scope):
    """JAX writes the triangles functionally (``.at[...].set``)."""
    def lower_triangles(entries, k, d):
        upper_rows, upper_cols = jax.numpy.triu_indices(d, 1)
        return jax.numpy.zeros((k, d, d)).at[:, upper_cols, upper_rows].set(entries)
    return {"lower_triangles": lower_triangles}


def objective(alphas, means, icf, x, gamma, m):
    """The log-likelihood of x under the mixture plus the log of the Wishart prior (ADBench's sign)."""
    n, d = x.shape
    k = alphas.shape[0]
    log_diag = icf[:, :d]
    q = lower_triangles(icf[:, d:], k, d) + np.exp(log_diag)[:, :, None] * np.eye(d)
    centered = x[:, None, :] - means[None, :, :]
    mahalanobis = np.einsum("kij,nkj->nki", q, centered)
    per_point = alphas + np.sum(log_diag, axis=1) - 0.5 * np.sum(mahalanobis ** 2, axis=2)
    likelihood = np.sum(logsumexp(per_point, axis=1)) - n * logsumexp(alphas)
    dof = d + m + 1
    prior = (0.5 * gamma ** 2 * (np.sum(np.exp(log_diag) ** 2) + np.sum(icf[:, d:] ** 2)) - m * np.sum(log_diag)
             - k * (dof * d * (np.log(gamma) - 0.5 * np.log(2.0)) - scipy.special.multigammaln(0.5 * dof, d)))
    return -0.5 * n * d * math.log(2.0 * math.pi) + likelihood + prior
