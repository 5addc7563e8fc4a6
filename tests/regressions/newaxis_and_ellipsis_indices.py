"""User functions of tests/regressions/test_compiled_reverse_mode_indices.py (transforms read source)."""
import numpy as np
def basic_slices(x):
    a = x[None, 0]
    b = x[1:, None, 2]
    c = x[None, 1:3, None]
    return np.sum(a * a) + np.sum(np.sin(b)) + np.sum(c ** 3) + np.sum(x[..., 0]) * np.sum(x[0])


def fill_by_ellipsis(x):
    e = np.empty((3, 4))
    e[...] = x
    return np.sum(e * x)


def take_by_a_matrix_of_indices(x, i):
    return np.sum(np.take(x, i, axis=-1) ** 2) + np.sum(np.sin(x[..., i]))


def take_at_a_0d_index(x, i):
    return np.sum(np.take(x, i, axis=0) * np.cos(x[i]))
