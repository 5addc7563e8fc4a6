"""Fuzz finding (test_jit_vmap_cpu_matches_a_python_loop, seed 412), as found."""
import numpy as np


def f(x0, n):
    v0 = np.sum(x0, axis=-1, keepdims=True)
    v1 = x0[0] * 0.0
    for i2 in range(len(x0)):
        v1 = v1 + np.sin(x0[i2]) * (i2 + 1)
    v3 = x0 + x0
    v4 = np.dot(x0, x0)
    v5 = np.dot(v0, v0)
    v6 = np.zeros_like(v3)
    for i7 in range(3):
        v6[i7] = np.sin(v3[i7]) + v6[i7 - 1] * 0.5
    return np.sum(v6) + 0.5 * np.sum(np.sin(x0))
