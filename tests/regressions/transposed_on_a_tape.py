"""A value carried through a loop that reverse mode tapes, whose first value is a transpose
(F-ordered under numba) and whose later ones are not (tests/regressions/test_compiled_tape_layouts.py)."""
import numpy as np


def transposed_then_carried(x0):
    v3 = (x0 + x0).reshape(1).reshape(1, 1).T
    v4 = np.zeros_like(v3)
    v4[0] = np.sin(x0)
    v7 = v4 * 1.0
    i = 0
    while True:
        v7 = v7 * 0.7 + np.sin(x0)
        i += 1
        if i > 3:
            break
    return np.sum(v7 * v3)


def rebinds_its_argument(a):
    for i in range(3):
        a = np.tanh(a) * 1.5 + a.T * 0.1
    return np.sum(a * a)
