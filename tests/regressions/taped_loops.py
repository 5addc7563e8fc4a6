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


def return_from_nested_loops(x0):
    v3 = x0 * 1.0
    for i in range(3):
        for j in range(2):
            v3 = np.tanh(v3 + x0)
            if np.max(v3) > 0.5:
                return np.sum(v3) + 0.5 * np.sum(np.sin(x0))
    v5 = v3 * 1.0
    for i in range(3):
        v5 = v5 - 0.1 * np.sin(v5) * x0
    return np.sum(v5 * v5)


def return_then_while(x0):
    # found by the fuzzer's reverse-over-reverse property
    v0 = x0 * 1.0
    for i in range(1):
        for j in range(3):
            v0 = v0 * 0.7 + np.sin(x0)
            if j == 1:
                if np.sum(v0) > 1.0:
                    return np.sum(v0) + 0.5 * np.sum(np.sin(x0))
    v1 = x0 * 1.0
    v2 = 0
    while True:
        v1 = np.cos(v1) * v0
        v2 += 1
        if v2 >= 3:
            if np.sum(v1) > 0.0:
                return np.sum(v1) + 0.5 * np.sum(np.sin(x0))
            break
    return np.sum(v1) + 0.5 * np.sum(np.sin(x0))
