"""User functions for tests/test_numerics.py."""
import numpy as np


def exp_affine(x):
    return np.exp(x) * 2.0 + x


def exp_affine_sum(x):
    return np.sum(np.exp(x) * 2.0 + x)


def scaled_tanh(x, w):
    y = np.tanh(x * w) + 0.5 * x
    return y * y


def int_poly(k, n):
    total = 0
    for i in range(n):
        total = total + k * i + 1
    return total * 2 - k // 3


def int_poly_array(k, n):
    total = k * 0
    for i in range(n):
        total = total + k * i + 1
    return total * 2 - k // 3


def scaled_tanh_sum(x, w):
    return np.sum(scaled_tanh(x, w))


def integer_remainders_and_powers(a, s, x):
    # numba's np.fmod of integers took the divisor's sign, and its integer power of a negative
    # exponent was 0 (2 ** -7): NumPy's fmod takes the dividend's, and NumPy refuses the power
    return np.fmod(a, 3), np.fmod(a, -4), np.fmod(s, 3), 2 ** np.abs(s), x ** -1, 2 ** x


def negative_integer_power(s):
    return 2 ** s


import transformer as tr  # noqa: E402  (here, below, so that the lines tests name above stay put)


def summed_logaddexp(x, y):
    return np.sum(np.logaddexp(x, y))


def softplus_and_log_sigmoid(x):
    return np.sum(tr.nn.softplus(x) + tr.nn.log_sigmoid(x))
