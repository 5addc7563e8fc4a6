"""Functions whose backward sweep pops what its forward sweep taped: a data-dependent while, a
break, an Euler loop, rows written in place across iterations, a loop that may run no passes,
and a matrix power by repeated squaring (tests/regressions/test_reverse_over_reverse_through_tapes.py)."""
import numpy as np


def until_large(x):
    s = x * 1.0
    while np.sum(s) < 10.0:
        s = s * 1.5 + np.sin(s)
    return np.sum(s ** 2)


def with_a_break(x):
    s = x * 1.0
    for i in range(20):
        s = np.tanh(s) * 1.3 + 0.2 * x
        if np.max(s) > 1.2:
            break
    return np.sum(s * s * x)


def euler(x):
    y = x * 1.0
    for i in range(6):
        y = y + 0.1 * np.tanh(y) * x
    return np.sum(y * y)


def rows_in_place(x):
    s = np.ones((2, 3))
    for t in range(3):
        h = s[0] * x
        s[0] = np.tanh(h)
        s[1] = s[1] * s[0]
    return np.sum(s * s)


def steps(x, n):
    y = x * 1.0
    for i in range(n):
        y = np.sin(y) * x
    return np.sum(y * x)


def power_260(a):
    return np.sum(np.linalg.matrix_power(a, 260) * np.arange(1.0, 10.0).reshape(3, 3))
