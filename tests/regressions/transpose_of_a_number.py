"""User function of tests/regressions/test_jit_transpose_of_a_number.py (transforms read source)."""
import numpy as np


def f(x0, n):
    v0 = (x0 + x0).sum(axis=0).T              # the sum of a vector is a number: .T of it is itself
    m = np.transpose(x0[None, :] * 2.0, axes=(1, 0))
    return v0 + 0.5 * np.sin(x0) + np.sum(m.T) + np.sum(np.transpose(np.ones((2, 3, 4)), (2, 0, 1))[0])
