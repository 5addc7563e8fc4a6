"""ADBench's and GradBench's bundle adjustment (``ba``), as a scalar: the sum of squared residuals.

``cams`` (n, 11): each camera's Rodrigues rotation, centre, focal length, principal point and two
radial distortion coefficients; ``points`` (m, 3); ``weights`` (p,), one per observation;
``features`` (p, 2) the observed image points; ``camera_of`` and ``point_of`` (p,) which camera saw
which point.  Each observation's residual is its weight times the projection's error, and each
weight adds ``1 - w**2``.  GradBench's output is the sparse Jacobian of the residuals; this scalar
form is the one a gradient-based solver's user writes, with the gradient in cams, points and
weights.  Vectorised over the observations, as NumPy users write it (one gather per array).
"""
from __future__ import annotations

import numpy as np

SIZES = {
    "small": dict(n=3, m=5, p=8),
    "ba1": dict(n=49, m=7776, p=31843),
}
WRT = (0, 1, 2)


def inputs(n, m, p, seed=0):
    rng = np.random.default_rng(seed)
    cams = np.concatenate([rng.uniform(-0.3, 0.3, (n, 3)), rng.uniform(-1.0, 1.0, (n, 3)),
                           rng.uniform(400.0, 600.0, (n, 1)), rng.uniform(-5.0, 5.0, (n, 2)),
                           rng.uniform(-1e-3, 1e-3, (n, 2))], axis=1)
    points = rng.uniform(-1.0, 1.0, (m, 3)) + np.array([0.0, 0.0, 8.0])
    weights = rng.uniform(0.5, 1.5, p)
    features = rng.uniform(-300.0, 300.0, (p, 2))
    camera_of = np.concatenate([np.arange(min(n, p)), rng.integers(0, n, p - min(n, p))])
    point_of = np.concatenate([np.arange(min(m, p)), rng.integers(0, m, p - min(m, p))])
    return cams, points, weights, features, camera_of, point_of


def rotate(rotation, x):
    """Rodrigues' rotation of each row of x by the axis-angle in the same row of ``rotation``."""
    theta = np.sqrt(np.sum(rotation ** 2, axis=1, keepdims=True))
    axis = rotation / theta
    cos, sin = np.cos(theta), np.sin(theta)
    return x * cos + np.cross(axis, x) * sin + axis * np.sum(axis * x, axis=1, keepdims=True) * (1.0 - cos)


def project(cams, x):
    seen = rotate(cams[:, 0:3], x - cams[:, 3:6])
    flat = seen[:, :2] / seen[:, 2:3]
    radius2 = np.sum(flat ** 2, axis=1, keepdims=True)
    distortion = 1.0 + cams[:, 9:10] * radius2 + cams[:, 10:11] * radius2 ** 2
    return flat * distortion * cams[:, 6:7] + cams[:, 7:9]


def objective(cams, points, weights, features, camera_of, point_of):
    residuals = weights[:, None] * (project(cams[camera_of], points[point_of]) - features)
    return np.sum(residuals ** 2) + np.sum((1.0 - weights ** 2) ** 2)
