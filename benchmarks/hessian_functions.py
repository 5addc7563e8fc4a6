"""The 100-dimensional function bench_hessian.py differentiates twice."""
import numpy as np

N = 100
W = np.random.default_rng(0).standard_normal((N, N)) / np.sqrt(N)
B = np.linspace(-0.5, 0.5, N)


def tanh_quartic(x):
    return np.sum(np.tanh(W @ x + B)) + 0.25 * np.sum(x ** 4)
