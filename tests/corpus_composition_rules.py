"""A custom_jvp whose rule deliberately differs from its body's derivative,
so a test can tell which one a transform used."""
import numpy as np

import transformer as tr


@tr.custom_jvp
def halved_sin(x):
    return np.sin(x)


@halved_sin.defjvp
def halved_sin_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return np.sin(x), 0.5 * np.cos(x) * x_dot


def halved_sin_user(x):
    return np.sum(halved_sin(x))
