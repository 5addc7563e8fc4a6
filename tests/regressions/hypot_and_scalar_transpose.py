"""User functions of tests/regressions/test_hypot_at_zero_and_scalar_transpose.py (transforms read source)."""
import numpy as np


def hypot_of_a_difference(x0):
    v2 = x0 - x0                          # zero, and so is its tangent
    return np.hypot(v2, v2) + 0.1 + 0.5 * np.sin(x0)


def hypot_sum(x, y):
    return np.sum(np.hypot(x, y))


def transposed_twice(x0):
    v0 = np.array(x0 + x0).T.T            # a 0-d array's transpose
    return np.sum(v0) + 0.5 * np.sum(np.sin(x0))
