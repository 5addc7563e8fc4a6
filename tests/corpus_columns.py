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


def sums_over_each_axis(x):
    # an axis known only at run time (a loop variable) has no batched form: vmap needs a literal
    # axis, so hessian sweeps this with the columns loop whatever the size
    m = np.reshape(x, (4, 5))
    total = 0.0
    for k in range(2):
        total = total + np.sum(np.sum(np.sin(m) * m, axis=k) ** 2)
    return total


def quartic_sine(x):
    # elementwise, of any shape: its Hessian is the diagonal 3 x^2 - sin(x), whatever the rank
    return np.sum(x ** 4) / 4.0 + np.sum(np.sin(x))
