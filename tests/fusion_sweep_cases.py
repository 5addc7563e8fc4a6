"""User functions for tests/test_sweep_fusion.py: loops whose backward sweep can or cannot
run inside the loop itself."""
import numpy as np


# ------------------------------------------------------------ fused
def rosenbrock(x):
    s = 0.0
    for i in range(len(x) - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def least_squares(w, b, x, y):
    loss = 0.0
    for i in range(len(x)):
        r = w * x[i] + b - y[i]
        loss += r * r
    return loss


def from_one(x):
    s = 0.0
    for i in range(1, len(x)):
        s = s + np.sin(x[i]) * x[i - 1]
    return s


def no_iteration(x):
    s = 0.0
    for i in range(len(x) - len(x)):
        s = s + x[i] * x[i]
    return s + np.sum(x)


def array_output(x):
    s = np.zeros(3)
    for i in range(len(x)):
        s = s + x[i]
    return s


def array_output_no_iteration(x):
    s = np.zeros(3)
    for i in range(len(x) - len(x)):
        s = s + x[i]
    return s


# ------------------------------------------------------------ not fused
def product(x):
    p = 1.0
    for i in range(len(x)):
        p = p * x[i]               # each iteration's cotangent needs the later ones
    return p


def log_of_sum(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] ** 2
    return np.log(s)               # the loop's cotangent is known only after it


def writes_in_place(x):
    y = np.zeros_like(x)
    s = 0.0
    for i in range(len(x)):
        y[i] = x[i] * 2.0
        s = s + y[i] * x[i]
    return s


def with_break(x):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0.9:
            break
        s = s + x[i] * x[i]
    return s


def stepping_by_two(x):
    s = 0.0
    for i in range(0, len(x), 2):
        s = s + x[i] ** 3
    return s
