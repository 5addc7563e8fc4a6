"""Numerical references that need nothing of ours."""
import numpy as np


def central_difference_grad(f, args, argnum=0, eps=1e-6):
    """d f(*args) / d args[argnum] by central differences in float64 (f scalar)."""
    args = list(args)
    x = np.array(args[argnum], dtype=np.float64)
    grad = np.zeros_like(x)
    flat = x.reshape(-1)
    g = grad.reshape(-1)
    for i in range(flat.size):
        orig = flat[i]
        flat[i] = orig + eps
        args[argnum] = x.copy() if x.ndim else float(x)
        plus = f(*args)
        flat[i] = orig - eps
        args[argnum] = x.copy() if x.ndim else float(x)
        minus = f(*args)
        flat[i] = orig
        g[i] = (plus - minus) / (2 * eps)
    return grad if x.ndim else float(grad)


def central_difference_jvp(f, args, tangents, eps=1e-6):
    """d/dt f(args + t * tangents) at t = 0, for float arguments (tangent None = constant)."""
    plus = [a if t is None else np.asarray(a, dtype=np.float64) + eps * t for a, t in zip(args, tangents)]
    minus = [a if t is None else np.asarray(a, dtype=np.float64) - eps * t for a, t in zip(args, tangents)]
    return (np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * eps)


def central_difference_hessian(f, args, argnum=0, eps=1e-4):
    """d^2 f / d args[argnum]^2 (f scalar) by the four-point central difference, shape x.shape * 2.

    Error about eps**2 (truncation) plus 1e-16 |f| / eps**2 (rounding): about 1e-8 for O(1) values.
    """
    x = np.array(args[argnum], dtype=np.float64)
    n = x.size

    def at(dx):
        a = list(args)
        a[argnum] = (x.reshape(-1) + dx).reshape(x.shape) if x.ndim else float(x + dx[0])
        return f(*a)

    h = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = np.eye(n)[i] * eps, np.eye(n)[j] * eps
            h[i, j] = (at(ei + ej) - at(ei - ej) - at(-ei + ej) + at(-ei - ej)) / (4 * eps * eps)
    return h.reshape(x.shape + x.shape)


def ring_of_sines_gradient(x):
    """The gradient of the sum of sin(x[k] * x[k + 1]) around the ring of x's 3 entries, in closed
    form (the loop function the composition tests sweep)."""
    g = np.zeros(3)
    for k in range(3):
        j = (k + 1) % 3
        g[k] += np.cos(x[k] * x[j]) * x[j]
        g[j] += np.cos(x[k] * x[j]) * x[k]
    return g


def ring_of_sines_hessian(x):
    h = np.zeros((3, 3))
    for k in range(3):
        j = (k + 1) % 3
        d = np.zeros(3)
        d[k], d[j] = x[j], x[k]
        h -= np.sin(x[k] * x[j]) * np.outer(d, d)
        h[k, j] += np.cos(x[k] * x[j])
        h[j, k] += np.cos(x[k] * x[j])
    return h
