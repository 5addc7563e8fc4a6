"""ADBench's and GradBench's hand tracking (``ht``), simple form, as a scalar: the sum of squared
residuals between observed points and the hand model's posed vertices.

The model is a skeleton of 22 bones (a root, the palm, four bones to each of five fingers), each
with its parent, its rest transform relative to the parent (``base_relatives``), the inverse of its
rest transform in the world (``inverse_base_absolutes``), and a mesh of vertices in homogeneous
coordinates (``base_positions``, 4 x V) skinned to the bones by ``weights`` (bones x V).  ``theta``
(26) poses it: a global rotation (axis-angle) and translation, then one or two angles for each of
the three joints of each finger.  Posing turns the angles into a relative transform per bone,
composes them down the skeleton, blends the bone transforms at each vertex, and moves the result by
the global rotation and translation.  ``correspondences`` (c) names the vertex each observed point
(3 x c) is matched to.

GradBench's output is the Jacobian of the 3c residuals with respect to theta; this scalar form is
the one a gradient-based fit minimises.  The model here is made deterministically (``model``) with
ADBench's numbers of bones and vertices, where ADBench reads a hand scan from files; the point counts
are ADBench's ``hand1`` (100) and ``hand9`` (12800).

Written as a NumPy user writes it: small helpers per step, a loop over the bones (each depends on
its parent), in-place writes into the pose and the transforms, and the axis-angle rotation's early
return at a zero angle.
"""
from __future__ import annotations

import numpy as np

BONES = 22
SIZES = {
    "small": dict(points=12, vertices=40),
    "hand1": dict(points=100, vertices=544),
    "hand9": dict(points=12800, vertices=544),
}
WRT = (0,)


def angle_axis_to_rotation_matrix(angle_axis):
    angle = np.sqrt(np.sum(angle_axis ** 2))
    if angle < 1e-4:
        return np.eye(3)
    x, y, z = angle_axis / angle
    s, c = np.sin(angle), np.cos(angle)
    return np.array([[x * x + (1.0 - x * x) * c, x * y * (1.0 - c) - z * s, x * z * (1.0 - c) + y * s],
                     [x * y * (1.0 - c) + z * s, y * y + (1.0 - y * y) * c, y * z * (1.0 - c) - x * s],
                     [x * z * (1.0 - c) - y * s, z * y * (1.0 - c) + x * s, z * z + (1.0 - z * z) * c]])


def euler_angles_to_rotation_matrix(xzy):
    tx, ty, tz = xzy[0], xzy[2], xzy[1]
    rx = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(tx), -np.sin(tx)], [0.0, np.sin(tx), np.cos(tx)]])
    ry = np.array([[np.cos(ty), 0.0, np.sin(ty)], [0.0, 1.0, 0.0], [-np.sin(ty), 0.0, np.cos(ty)]])
    rz = np.array([[np.cos(tz), -np.sin(tz), 0.0], [np.sin(tz), np.cos(tz), 0.0], [0.0, 0.0, 1.0]])
    return rz @ ry @ rx


def to_pose_params(theta):
    """One row of three angles per bone after three global rows (rotation, scale, translation):
    each finger's first joint bends and spreads, the next two bend, its tip bone does not move."""
    pose = np.zeros((BONES + 3, 3))
    pose[0] = theta[0:3]
    pose[1] = 1.0
    pose[2] = theta[3:6]
    k, row = 6, 5
    for finger in range(5):
        for joint in range(3):
            pose[row, 0] = theta[k]
            k += 1
            if joint == 0:
                pose[row, 1] = theta[k]
                k += 1
            row += 1
        row += 1
    return pose


def posed_relatives(base_relatives, pose):
    relatives = np.zeros_like(base_relatives)
    for bone in range(BONES):
        turn = np.eye(4)
        turn[:3, :3] = euler_angles_to_rotation_matrix(pose[bone + 3])
        relatives[bone] = base_relatives[bone] @ turn
    return relatives


def relatives_to_absolutes(relatives, parents):
    absolutes = np.zeros_like(relatives)
    for bone in range(BONES):
        if parents[bone] == -1:
            absolutes[bone] = relatives[bone]
        else:
            absolutes[bone] = absolutes[parents[bone]] @ relatives[bone]
    return absolutes


def posed_vertices(pose, parents, base_relatives, inverse_base_absolutes, base_positions, weights, mirror):
    absolutes = relatives_to_absolutes(posed_relatives(base_relatives, pose), parents)
    transforms = absolutes @ inverse_base_absolutes
    moved = transforms @ base_positions                                 # (bones, 4, vertices)
    skinned = np.sum(weights[:, None, :] * moved[:, :3, :], axis=0) * mirror[:, None]
    rotation = angle_axis_to_rotation_matrix(pose[0]) * pose[1]
    return rotation @ skinned + pose[2][:, None]


def objective(theta, points, correspondences, parents, base_relatives, inverse_base_absolutes, base_positions,
              weights, mirror):
    vertices = posed_vertices(to_pose_params(theta), parents, base_relatives, inverse_base_absolutes,
                              base_positions, weights, mirror)
    return np.sum((points - vertices[:, correspondences]) ** 2)


def model(vertices, rng):
    """A hand: 22 bones (root, palm, five fingers of four), rest transforms a few centimetres apart,
    and ``vertices`` mesh points each skinned to its bone and that bone's parent."""
    parents = np.array([-1, 0] + [parent for finger in range(5) for parent in (1, 2 + 4 * finger,
                                                                                 3 + 4 * finger, 4 + 4 * finger)])
    base_relatives = np.zeros((BONES, 4, 4))
    for bone in range(BONES):
        base_relatives[bone, :3, :3] = euler_angles_to_rotation_matrix(rng.uniform(-0.3, 0.3, 3))
        base_relatives[bone, :3, 3] = np.array([0.0, 0.03, 0.0]) + rng.uniform(-0.01, 0.01, 3)
        base_relatives[bone, 3, 3] = 1.0
    base_absolutes = relatives_to_absolutes(base_relatives, parents)
    inverse_base_absolutes = np.linalg.inv(base_absolutes)
    owner = np.concatenate([np.arange(BONES), rng.integers(0, BONES, vertices - BONES)])
    local = np.concatenate([rng.uniform(-0.01, 0.01, (vertices, 3)), np.ones((vertices, 1))], axis=1)
    base_positions = np.einsum("vij,vj->iv", base_absolutes[owner], local)
    weights = np.zeros((BONES, vertices))
    share = rng.uniform(0.6, 1.0, vertices)
    weights[owner, np.arange(vertices)] = share
    weights[np.maximum(parents[owner], 0), np.arange(vertices)] += 1.0 - share
    return parents, base_relatives, inverse_base_absolutes, base_positions, weights, np.array([-1.0, 1.0, 1.0])


def inputs(points, vertices, seed=0):
    rng = np.random.default_rng(seed)
    hand = model(vertices, rng)
    theta = np.concatenate([rng.uniform(-0.5, 0.5, 3), rng.uniform(-0.1, 0.1, 3), rng.uniform(-0.4, 0.4, 20)])
    correspondences = rng.integers(0, vertices, points)
    truth = theta + rng.uniform(-0.05, 0.05, theta.shape)
    observed = posed_vertices(to_pose_params(truth), *hand)[:, correspondences]
    return (theta, observed + rng.normal(0.0, 1e-3, observed.shape), correspondences, *hand)


def jax_replacements(jax, scope):
    """JAX writes the pose and the transforms functionally (``.at[...].set``), and chooses with
    ``where`` where NumPy code branches on a value (a traced value has none yet)."""
    jnp = jax.numpy
    euler = scope["euler_angles_to_rotation_matrix"]

    def angle_axis_to_rotation_matrix(angle_axis):
        angle = jnp.sqrt(jnp.sum(angle_axis ** 2))
        safe = jnp.where(angle < 1e-4, 1.0, angle)
        x, y, z = angle_axis / safe
        s, c = jnp.sin(safe), jnp.cos(safe)
        turned = jnp.array([[x * x + (1.0 - x * x) * c, x * y * (1.0 - c) - z * s, x * z * (1.0 - c) + y * s],
                            [x * y * (1.0 - c) + z * s, y * y + (1.0 - y * y) * c, y * z * (1.0 - c) - x * s],
                            [x * z * (1.0 - c) - y * s, z * y * (1.0 - c) + x * s, z * z + (1.0 - z * z) * c]])
        return jnp.where(angle < 1e-4, jnp.eye(3), turned)

    def to_pose_params(theta):
        pose = jnp.zeros((BONES + 3, 3)).at[0].set(theta[0:3]).at[1].set(1.0).at[2].set(theta[3:6])
        k, row = 6, 5
        for finger in range(5):
            for joint in range(3):
                pose = pose.at[row, 0].set(theta[k])
                k += 1
                if joint == 0:
                    pose = pose.at[row, 1].set(theta[k])
                    k += 1
                row += 1
            row += 1
        return pose

    def posed_relatives(base_relatives, pose):
        turns = jnp.stack([jnp.eye(4).at[:3, :3].set(euler(pose[bone + 3])) for bone in range(BONES)])
        return base_relatives @ turns

    def relatives_to_absolutes(relatives, parents):
        absolutes = jnp.zeros_like(relatives)
        for bone in range(BONES):
            chained = absolutes[parents[bone]] @ relatives[bone]
            absolutes = absolutes.at[bone].set(jnp.where(parents[bone] == -1, relatives[bone], chained))
        return absolutes

    return {"angle_axis_to_rotation_matrix": angle_axis_to_rotation_matrix, "to_pose_params": to_pose_params,
            "posed_relatives": posed_relatives, "relatives_to_absolutes": relatives_to_absolutes}
