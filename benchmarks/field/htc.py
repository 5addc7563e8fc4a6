"""ADBench's and GradBench's hand tracking, complicated form: each observed point is matched to a
place on a triangle of the mesh rather than to a vertex.  Besides the pose ``theta``, each point has
two barycentric coordinates ``us`` (c x 2), and its model point is ``u * a + v * b + (1 - u - v) * c``
of its triangle's posed corners.  The gradient is taken in theta and us (GradBench's Jacobian has a
column for each).  The hand, its posing and the sizes are ht.py's; the mesh's triangles are made
deterministically here (ADBench reads its scan's 1084).
"""
from __future__ import annotations

import numpy as np

# (all of ht's helpers: the JAX version rebinds each with np = jax.numpy, see run.jax_version)
from ht import (BONES, SIZES, angle_axis_to_rotation_matrix, euler_angles_to_rotation_matrix,  # noqa: F401
                jax_replacements, model, posed_relatives, posed_vertices, relatives_to_absolutes, to_pose_params)

WRT = (0, 1)


def objective(theta, us, points, triangle_of, triangles, parents, base_relatives, inverse_base_absolutes,
              base_positions, weights, mirror):
    vertices = posed_vertices(to_pose_params(theta), parents, base_relatives, inverse_base_absolutes,
                              base_positions, weights, mirror)
    corners = triangles[triangle_of]                                   # (c, 3) vertex numbers
    u, v = us[:, 0], us[:, 1]
    matched = u * vertices[:, corners[:, 0]] + v * vertices[:, corners[:, 1]] \
        + (1.0 - u - v) * vertices[:, corners[:, 2]]
    return np.sum((points - matched) ** 2)


def inputs(points, vertices, seed=0):
    rng = np.random.default_rng(seed)
    hand = model(vertices, rng)
    theta = np.concatenate([rng.uniform(-0.5, 0.5, 3), rng.uniform(-0.1, 0.1, 3), rng.uniform(-0.4, 0.4, 20)])
    triangles = np.stack([rng.permutation(vertices)[:3] for _ in range(2 * vertices)])
    triangle_of = rng.integers(0, triangles.shape[0], points)
    us = rng.uniform(0.05, 0.45, (points, 2))
    truth = posed_vertices(to_pose_params(theta + rng.uniform(-0.05, 0.05, theta.shape)), *hand)
    corners = triangles[triangle_of]
    observed = (0.3 * truth[:, corners[:, 0]] + 0.3 * truth[:, corners[:, 1]] + 0.4 * truth[:, corners[:, 2]])
    return (theta, us, observed + rng.normal(0.0, 1e-3, observed.shape), triangle_of, triangles, *hand)
