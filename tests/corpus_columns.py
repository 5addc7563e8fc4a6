"""Functions whose Hessians test what transforms/columns.py may move out of its loop."""
import numpy as np


def reassigned(x):
    # the first a is read by the tangent sweep after the second a is computed from invariant values:
    # hoisting the second assignment would hand the sweep the wrong a
    a = np.sin(x)
    b = np.sum(a * a)
    a = np.cos(x) * b
    return np.sum(a * x) + b


def filled_in_a_loop(x, y):
    # z is written in place inside a loop, with values from both arguments
    z = np.zeros_like(x)
    for i in range(x.shape[0]):
        z[i] = np.tanh(x[i] * y[i]) + x[i] ** 3
    return np.sum(z * z) + np.sum(x * y)


def centred_spread(x):
    # a reduction over all axes with keepdims=True has no batched form (vmap asks for the axes), and
    # the tangent of the mean is one: hessian sweeps it with the columns loop whatever the size
    centred = x - np.mean(x, keepdims=True)
    return np.sum(centred ** 2 * np.sin(x))


def quartic_sine(x):
    # elementwise, of any shape: its Hessian is the diagonal 3 x^2 - sin(x), whatever the rank
    return np.sum(x ** 4) / 4.0 + np.sum(np.sin(x))
