"""Functions jvp refuses, with a clear error naming the line."""
import numpy as np


def product(x):
    return np.prod(x) + 1.0
