"""GradBench's ``particle``: aim a charged particle, with a derivative inside the objective.

A particle starts at (0, 8) moving right, and is pulled by two charges, one of them at height
``10 - w``: its acceleration is minus the gradient of the potential (a ``tr.grad`` inside the
objective).  Euler steps run until it falls below y = 0 (``while True`` with a ``return``); the
objective is the square of where it lands, and its derivative in ``w`` is a derivative of a
function that takes a derivative (Siskind and Pearlmutter's test of perturbation confusion).
"""
from __future__ import annotations

import numpy as np

import transformer as tr

SIZES = {
    "small": dict(w=0.2),
    "w0": dict(w=0.0),
}
WRT = (0,)


def inputs(w):
    return (w,)


def potential(x, w):
    charges = np.array([[10.0, 10.0 - w], [10.0, 0.0]])
    return np.sum(1.0 / np.sqrt(np.sum((x - charges) ** 2, axis=1)))


def objective(w):
    x = np.array([0.0, 8.0])
    velocity = np.array([0.75, 0.0])
    dt = 0.1
    while True:
        acceleration = -tr.grad(potential)(x, w)
        moved = x + dt * velocity
        if moved[1] < 0.0:
            landing = x + (-x[1] / velocity[1]) * velocity
            return landing[0] ** 2
        velocity = velocity + dt * acceleration
        x = moved


JAX_DERIVATIVE = "jacfwd"    # JAX cannot reverse-differentiate lax.while_loop: its route is forward mode


def jax_replacements(jax, scope):
    """JAX's loop with an exit is ``lax.while_loop``; its inner derivative is ``jax.grad``."""
    jnp = jax.numpy
    potential = scope["potential"]

    def objective(w):
        def falling(state):
            x, velocity = state
            return x[1] + 0.1 * velocity[1] >= 0.0

        def step(state):
            x, velocity = state
            acceleration = -jax.grad(potential)(x, w)
            return x + 0.1 * velocity, velocity + 0.1 * acceleration
        x, velocity = jax.lax.while_loop(falling, step, (jnp.array([0.0, 8.0]), jnp.array([0.75, 0.0])))
        landing = x + (-x[1] / velocity[1]) * velocity
        return landing[0] ** 2
    return {"objective": objective}
