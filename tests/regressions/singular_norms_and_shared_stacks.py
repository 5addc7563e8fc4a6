"""Functions of the regressions in test_singular_norms_and_shared_stacks.py (a file of their own:
transformer reads a function's source from its module)."""
import numpy as np


def spectral(a):
    return np.linalg.norm(a, 2)


def smallest(a):
    return np.linalg.norm(a, -2)


def nuclear(a):
    return np.linalg.norm(a, "nuc")


def nuclear_over_axes(a):
    return np.sum(np.linalg.norm(a, "nuc", axis=(2, 0)))


def stack_times_shared(x, y):
    return np.sum(np.tanh(x @ y) * x[..., :1])
