"""Newton's method with Hessians and Hessian-vector products.

    python examples/newton.py

Minimises a smooth 10-dimensional function two ways:

* full Newton steps, solving ``H(x) dx = -g(x)`` with ``tr.hessian`` (forward
  over reverse: the generated function is the jvp of the gradient);
* Newton-CG, which never forms ``H``: conjugate gradients needs only
  products ``H v``, and ``tr.hvp`` computes each one in a few times the
  cost of the function.

Both reach the minimum in a handful of steps, where gradient descent would
need hundreds.
"""
import numpy as np

import transformer as tr


def energy(x):
    """A convex quartic bowl with coupled coordinates."""
    total = 0.0
    for i in range(len(x) - 1):
        total = total + (x[i + 1] - 0.5 * x[i]) ** 2
    return total + np.sum(x ** 4) * 0.25 + np.sum((x - 1.0) ** 2)


grad = tr.jit(tr.grad(energy))
hessian = tr.hessian(energy)
hvp = tr.hvp(energy)

x = np.zeros(10)
print(f"start: energy {energy(x):.6f}, |gradient| {np.linalg.norm(grad(x)):.2e}")
for step in range(6):
    x = x - np.linalg.solve(hessian(x), grad(x))
    print(f"Newton step {step + 1}: energy {energy(x):.10f}, |gradient| {np.linalg.norm(grad(x)):.2e}")
newton_minimum = x


def conjugate_gradient(apply, b, iterations=25, tolerance=1e-12):
    """Solve apply(v) = b for symmetric positive definite ``apply``, by products alone."""
    v = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    for _ in range(iterations):
        hp = apply(p)
        alpha = (r @ r) / (p @ hp)
        v = v + alpha * p
        r_next = r - alpha * hp
        if r_next @ r_next < tolerance:
            break
        p = r_next + (r_next @ r_next) / (r @ r) * p
        r = r_next
    return v


x = np.zeros(10)
for step in range(6):
    x = x + conjugate_gradient(lambda v: hvp(x, v), -grad(x))
print(f"Newton-CG with hvp reaches the same point: {np.allclose(x, newton_minimum, atol=1e-8)}")

symmetric = hessian(newton_minimum)
print(f"the Hessian at the minimum is symmetric: {np.allclose(symmetric, symmetric.T)}, "
      f"positive definite: {bool(np.all(np.linalg.eigvalsh(symmetric) > 0))}")

source = tr.show(hvp)
start = source.index("def ")
print("\nThe Hessian-vector product is one generated function (first lines):\n")
print("\n".join(source[start:].splitlines()[:14]))
