"""Functions whose derivative a finite-difference oracle cannot see."""
import numpy as np

import transformer as tr


def with_stop_gradient(x):
    return np.sum(x * tr.stop_gradient(x))
