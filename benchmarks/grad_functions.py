"""User functions the reverse-mode benchmarks differentiate, and hand-written rivals."""
import numpy as np
from numba import njit


def mlp_loss(params, x, y):
    """Two-layer tanh MLP with a mean squared error."""
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return np.mean((out - y) ** 2)


def rosenbrock(x):
    """Rosenbrock as a scalar Python loop."""
    s = 0.0
    for i in range(len(x) - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def numpy_mlp_value_and_grad(params, x, y):
    """Backpropagation written by hand in NumPy."""
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    diff = out - y
    loss = np.mean(diff ** 2)
    d_out = 2.0 * diff / diff.size
    d_w2 = h.T @ d_out
    d_b2 = d_out.sum(axis=0)
    d_pre = (d_out @ w2.T) * (1.0 - h * h)
    d_w1 = x.T @ d_pre
    d_b1 = d_pre.sum(axis=0)
    return loss, (d_w1, d_b1, d_w2, d_b2)


@njit(cache=True)
def rosenbrock_two_sweeps(x):
    """The textbook adjoint: a forward loop, then a reverse loop that recomputes."""
    n = len(x)
    s = 0.0
    for i in range(n - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    g = np.zeros(n)
    for i in range(n - 2, -1, -1):
        a = x[i + 1] - x[i] ** 2
        b = 1 - x[i]
        g[i + 1] += 200.0 * a
        g[i] += -400.0 * a * x[i] - 2.0 * b
    return s, g


@njit(cache=True)
def rosenbrock_fused(x):
    """The fastest hand adjoint: value and gradient in one loop."""
    n = len(x)
    s = 0.0
    g = np.zeros(n)
    for i in range(n - 1):
        a = x[i + 1] - x[i] ** 2
        b = 1 - x[i]
        s += 100.0 * a * a + b * b
        g[i + 1] += 200.0 * a
        g[i] += -400.0 * a * x[i] - 2.0 * b
    return s, g
