"""Functions jvp refuses, with a clear error naming the line."""
import numpy as np


def complete_singular_vectors(x):
    # full_matrices=True (NumPy's default): the complete U has no derivative, as in JAX
    return np.sum(np.linalg.svd(x)[0]) + 1.0
