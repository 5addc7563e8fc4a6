"""GradBench's ``llsq``: a polynomial least-squares fit of the sign function on [-1, 1].

``coefficients`` (m,); n sample points ``t_i = -1 + 2 i / (n - 1)``; the objective is half the sum
of squared residuals ``sign(t_i) - sum_j c_j t_i**j``, with the gradient in the coefficients.
"""
from __future__ import annotations

import numpy as np

SIZES = {
    "small": dict(m=3, n=7),
    "n4096-m128": dict(m=128, n=4096),
}
WRT = (0,)
STATIC = (1,)        # the number of points (JAX: a static argument)


def inputs(m, n, seed=0):
    return np.random.default_rng(seed).normal(size=m), n


def objective(coefficients, n):
    t = np.linspace(-1.0, 1.0, n)
    powers = t[:, None] ** np.arange(coefficients.shape[0])
    residuals = np.sign(t) - powers @ coefficients
    return 0.5 * np.sum(residuals ** 2)
