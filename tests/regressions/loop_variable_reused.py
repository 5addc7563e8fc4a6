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
