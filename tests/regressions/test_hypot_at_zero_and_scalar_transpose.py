"""Regressions (long differential fuzzing, 2026-12-03):

* ``jvp`` of ``np.hypot(v, v)`` with ``v = x - x`` gave NaN where central differences give the
  tangent of the rest: hypot's rules divided by ``z = 0``.  At x = y = 0 hypot has no derivative;
  the rules now follow JAX's convention there (each argument gets 1/2), and stay x / z elsewhere.
* ``jit(grad)`` of ``np.array(s).T.T`` for a number ``s`` did not compile: numba has no
  ``np.transpose`` of a scalar, which ``rt.transpose_vjp`` called on the scalar cotangent.
"""
import numpy as np

import transformer as tr
from oracles import central_difference_grad, central_difference_jvp
from regressions import hypot_and_scalar_transpose as case


def test_jvp_of_hypot_of_zeros_is_the_tangent_of_the_rest():
    x, t = np.array([0.3, -0.8, 1.1]), np.array([0.5, 0.25, -1.0])
    _, tangent = tr.jvp(case.hypot_of_a_difference, (x,), (t,))
    np.testing.assert_allclose(tangent, central_difference_jvp(case.hypot_of_a_difference, [x], [t]), rtol=1e-6)


def test_hypot_at_zero_follows_jax():
    x, y = np.array([0.0, 3.0, -1.0]), np.array([0.0, 4.0, 0.0])
    gx, gy = tr.grad(case.hypot_sum, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, [0.5, 0.6, -1.0])          # jax.grad(jnp.hypot) at (0, 0): (0.5, 0.5)
    np.testing.assert_allclose(gy, [0.5, 0.8, 0.0])
    _, tangent = tr.jvp(case.hypot_sum, (x, y), (np.ones(3), np.ones(3)))
    np.testing.assert_allclose(tangent, 1.0 + 1.4 - 1.0)      # jax.jvp at (0, 0) along (1, 1): 1
    np.testing.assert_allclose(tr.jit(tr.grad(case.hypot_sum))(x, y), gx)


def test_jit_grad_of_a_transposed_number():
    expected = central_difference_grad(case.transposed_twice, (0.27,), 0)
    np.testing.assert_allclose(tr.jit(tr.grad(case.transposed_twice))(0.27), expected, rtol=1e-7)
    np.testing.assert_allclose(tr.grad(case.transposed_twice)(0.27), expected, rtol=1e-7)
