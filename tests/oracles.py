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
