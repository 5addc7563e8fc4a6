"""User functions of tests/regressions/test_helpers_returning_early.py (transforms read source)."""
import numpy as np


def clipped(v):
    if v > 1.0:
        return 1.0
    elif v < -1.0:
        return -1.0 + 0.1 * (v + 1.0)
    return v


def first_large_power(v):
    for k in range(1, 6):
        if v ** k > 2.0:
            return v ** k
    return v


def searched_twice(v):
    p = v
    for i in range(3):
        for j in range(3):
            p = p * 1.1
            if p > 3.0:
                return p + i + j
        p = np.sin(p) + 1.0
    return p


def newton_sqrt(a):
    x = a
    while True:
        step = 0.5 * (x - a / x)
        x = x - step
        if abs(step) < 1e-12:
            return x


def in_the_else_of_a_loop(v):
    for k in range(3):
        if v * k > 5.0:
            break
    else:
        return v * v
    return v + 1.0


def one_line(v):
    if v < 0.0: return -v   # noqa: E701
    return np.exp(v)


def scaled_in_place(x, s):
    if s == 0.0:
        return
    x[0] = x[0] * s


def uses_clipped(x):
    return np.sum(np.array([clipped(x[0]), clipped(x[1]), clipped(x[2])]) ** 2)


def uses_first_large_power(x):
    return first_large_power(x[0]) * first_large_power(x[1]) + first_large_power(x[2])


def uses_searched_twice(x):
    return searched_twice(x[0]) + 2.0 * searched_twice(x[1]) * x[2]


def uses_newton_sqrt(x):
    return newton_sqrt(x[0] * x[0] + 1.0) * x[1] + x[2]


def uses_in_the_else_of_a_loop(x):
    return in_the_else_of_a_loop(x[0]) * in_the_else_of_a_loop(x[1] * 4.0) + x[2]


def uses_one_line(x):
    return one_line(x[0]) + one_line(-x[1]) * x[2]


def uses_a_helper_returning_nothing_early(x):
    y = x * 2.0
    scaled_in_place(y, 0.0)
    scaled_in_place(y, 3.0)
    return np.sum(y * y)


def helper_in_a_loop(x):
    total = 0.0
    for k in range(4):
        total = total + clipped(x[k % 3] * (k - 1.5))
    return total


# found by the fuzzer: a value set in a branch before a loop, and again in the loop
def settled(a, steps):
    out = a * 1.0
    if np.sum(a) > 1.5:
        return np.tanh(a)
    for i in range(steps):
        if np.sum(out * out) < 0.05:
            return out * 2.0
        out = np.tanh(out) * 0.7 + a * 0.2
    return out


def uses_settled(x, n):
    return np.sum(settled(x * 0.5, n)) + 0.5 * np.sum(np.sin(x))


def set_in_a_branch_then_in_a_loop(x, n):
    if np.sum(x) > 1.5:
        result = np.tanh(x)
    out = x * 1.0
    for i in range(n):
        if np.sum(out * out) < 0.05:
            result = out * 2.0
            break
        out = np.tanh(out) * 0.7 + x * 0.2
    else:
        result = out
    return np.sum(result)
