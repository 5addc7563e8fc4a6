"""User functions of tests/regressions/test_lambdas_in_displays.py (transforms read source)."""
import numpy as np


def table_of_functions(x):
    ops = {
        "square": lambda v: v * v,
        "sine": np.sin,
        "shifted": lambda v: np.exp(v) - 1.0,
    }
    return np.sum(ops["square"](x) + ops["sine"](x) * ops["shifted"](x))


def list_of_lambdas_called_in_place(x):
    h = (lambda v: v * 3.0)(x)
    k = [lambda v: v + 1.0, lambda v: v * v][1](h)
    return np.sum(k)


def missing_key(x):
    ops = {"square": lambda v: v * v}
    return np.sum(ops["cube"](x))


def table_indexed_at_run_time(x):
    fs = (np.sin, lambda v: v * 2.0, np.tanh)
    total = 0.0
    for k in range(3):
        total = total + np.sum(fs[k](x) * fs[-1 - k](x))
    return total


def dict_indexed_at_run_time(x, k):
    ops = {0: np.sin, 1: lambda v: v * 2.0}
    return np.sum(ops[k](x))


def out_of_range(x, k):
    fs = [np.sin, np.cos]
    return np.sum(fs[k](x))
