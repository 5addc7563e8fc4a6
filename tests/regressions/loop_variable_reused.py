"""Fuzz finding: two loops share the loop variable ``i``; the second one's
trip count differs per example (a batched ``break``)."""
import numpy as np


def f(x0, n):
    v0 = x0[0] * 0.0
    for i in range(len(x0)):
        v0 = v0 + x0[i]
    for i in range(n):
        if np.sum(x0) > 2.0:
            break
    return v0


def g(x0, n):
    """The per-example loop reads its own index."""
    v0 = x0[0] * 0.0
    for i in range(len(x0)):
        v0 = v0 + x0[i]
    for i in range(n):
        v0 = v0 + i
        if np.sum(x0) + i > 2.0:
            break
    return v0
