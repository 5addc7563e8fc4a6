"""User functions for the jit and cache tests, decorated at import time."""
import numpy as np

import transformer as tr


@tr.jit
def decorated_cpu(x, y):
    z = np.sin(x) * y
    return z + 1.0


@tr.jit(target="python")
def decorated_python(x):
    return np.cos(x) * 2.0


def power_sum(x, n):
    total = 0.0
    for i in range(n):
        total += np.sum(x ** i)
    return total


def keywords(x, scale=2.0, shift=0.0):
    return x * scale + shift


def adds_text(x):
    y = x * 2.0
    return y + "text"  # numba cannot add a string to a number


def elementwise(x):
    return np.exp(-x) * 3.0


def first_doubled(x):
    # an array's first element, or a tuple's first item: one function, two generated modules
    return x[0] * 2.0


# ---------------------------------------- derivatives held in a closure (cache keys)
def sine_times(x, y):
    return np.sin(x) * y


def calling_a_jacobian(argnums):
    """A function of one source whose closure holds jacrev at ``argnums``: each is another function."""
    jacobian = tr.jacrev(sine_times, argnums=argnums)

    def call(x, y):
        return jacobian(x, y)
    return call


def calling_a_linearization(x0):
    """A function of one source whose closure holds the jvp linearized at ``x0``."""
    _, pushforward = tr.linearize(lambda x: np.sin(x) * x, x0)

    def call(t):
        return pushforward(t)
    return call


def sine_times_with_aux(x, y):
    z = np.sin(x) * y
    return z, np.sum(z)
