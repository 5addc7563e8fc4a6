"""GradBench's ``kmeans``: the sum over points of the squared distance to the nearest centroid.

``centroids`` (k, d), ``points`` (n, d); the gradient is in the centroids (GradBench also takes the
Hessian's diagonal, for a Newton step).  Vectorised: every point against every centroid at once.
"""
from __future__ import annotations

import numpy as np

SIZES = {
    "small": dict(k=3, n=10, d=2),
    "k100-n5000": dict(k=100, n=5000, d=8),
}
WRT = (0,)


def inputs(k, n, d, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(k, d)), rng.normal(size=(n, d))


def objective(centroids, points):
    distances = np.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=2)
    return np.sum(np.min(distances, axis=1))
