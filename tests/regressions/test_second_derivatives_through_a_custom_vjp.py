"""Second derivatives of a function that calls a custom_vjp function.

A custom rule is spent on the derivative it is written for.  The gradient's code computes the output
with the rule's fwd function and the input cotangent with its bwd function, and a second transform
differentiates those two as they are written, as JAX's nested transforms do.  Before, the gradient's
code kept the custom marker on the forward value, so the outer grad applied the rule a second time,
where fwd's own derivative belongs: grad of grad gave [4.8, 3.6] at x = [0.3, 0.7], where JAX (jax
0.10.2, checked by hand) and the closed form below give [4.8, 4.4].  Forward over reverse (hessian)
was refused: "forward mode of a custom_vjp function needs its custom_jvp rule".

The rule clips the slope, so it is not the derivative of x * x: the two readings differ.
"""
import numpy as np
import pytest

import transformer as tr


@tr.custom_vjp
def clipped_square(x):
    return x * x


clipped_square.defvjp(lambda x: (x * x, x), lambda x, g: (np.clip(2.0 * x, -1.0, 1.0) * g,))


def scaled_by_the_sum(x):
    a = np.sum(x)
    return np.sum(clipped_square(x) * a)


def closed_form_hessian(x):
    """d/dx_j of the gradient g_i = clip(2 x_i) a + sum(x * x) (a = sum(x)): the bwd rule's slope
    2 where |2 x_i| < 1, times a, on the diagonal; clip(2 x_i) from a; 2 x_j from fwd's x * x."""
    a = np.sum(x)
    inside = (np.abs(2.0 * x) < 1.0).astype(float)
    return np.diag(2.0 * inside * a) + np.clip(2.0 * x, -1.0, 1.0)[:, None] + 2.0 * x[None, :]


POINTS = [np.array([0.3, 0.7]), np.array([0.3, 0.2]), np.array([-0.8, 0.1, 0.45])]


@pytest.mark.parametrize("x", POINTS, ids=lambda x: str(x.tolist()))
def test_reverse_over_reverse(x):
    second = tr.grad(lambda y: np.sum(tr.grad(scaled_by_the_sum)(y)))
    np.testing.assert_allclose(second(x), closed_form_hessian(x).sum(axis=0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tr.jacrev(tr.grad(scaled_by_the_sum))(x), closed_form_hessian(x),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x", POINTS, ids=lambda x: str(x.tolist()))
def test_forward_over_reverse(x):
    np.testing.assert_allclose(tr.hessian(scaled_by_the_sum)(x), closed_form_hessian(x), rtol=1e-12, atol=1e-12)
    v = np.linspace(0.5, 1.5, x.size)
    np.testing.assert_allclose(tr.hvp(scaled_by_the_sum)(x, v), closed_form_hessian(x) @ v, rtol=1e-12, atol=1e-12)


def test_the_first_derivative_still_uses_the_rule():
    x = POINTS[0]
    want = np.clip(2.0 * x, -1.0, 1.0) * np.sum(x) + np.sum(x * x)
    np.testing.assert_allclose(tr.grad(scaled_by_the_sum)(x), want, rtol=1e-12)
    np.testing.assert_allclose(tr.jit(tr.grad(scaled_by_the_sum))(x), want, rtol=1e-12)
