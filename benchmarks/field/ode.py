"""GradBench's ``ode``: fourth-order Runge-Kutta on a chain ``y'[0] = x[0]``, ``y'[i] = x[i] y[i-1]``.

``x`` (n,) are the rates; ``s`` steps of RK4 over [0, 1] from y = 0.  GradBench asks for the
Jacobian of the final state; the scalar here is its last entry, with the gradient in x.  The
right-hand side writes its slice in place, as a NumPy user does.
"""
from __future__ import annotations

import numpy as np

SIZES = {
    "small": dict(n=4, s=5),
    "n10000": dict(n=10000, s=10),
}
WRT = (0,)
STATIC = (1,)        # the step count (JAX: a static argument)


def inputs(n, s, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, n), s


def rates(x, y):
    z = np.empty_like(y)
    z[0] = x[0]
    z[1:] = x[1:] * y[:-1]
    return z


def objective(x, s):
    h = 1.0 / s
    y = np.zeros_like(x)
    for _ in range(s):
        k1 = rates(x, y)
        k2 = rates(x, y + 0.5 * h * k1)
        k3 = rates(x, y + 0.5 * h * k2)
        k4 = rates(x, y + h * k3)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return y[-1]


def jax_replacements(jax, scope):
    """JAX writes the right-hand side as one new array."""
    def rates(x, y):
        return jax.numpy.concatenate((x[:1], x[1:] * y[:-1]))
    return {"rates": rates}
