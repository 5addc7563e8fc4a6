"""User functions of tests/regressions/test_functions_chosen.py (transforms read source)."""
import numpy as np


def activation_chosen_by_a_flag(x, deep):
    act = np.tanh if deep > 0.5 else (lambda v: v)
    h = act(x * 2.0)
    deep = 0.0                      # the choice was made above, with the flag as it was then
    return np.sum(act(h) * x)


def chosen_in_place(x):
    total = 0.0
    for k in range(3):
        total = total + np.sum((np.sin if k % 2 == 0 else lambda v: v * v)(x))
    return total


def three_way_choice_in_a_helper(x, c):
    return np.sum(_apply(np.exp if c < 0.0 else (np.cos if c < 1.0 else lambda v: v ** 3), x))


def _apply(f, x):
    return f(x) + f(2.0 * x)


def choice_of_pairs(x):
    split = (lambda v: (v, v * v)) if x[0] > 0.0 else (lambda v: (v * 2.0, np.sin(v)))
    a, b = split(x)
    return np.sum(a * b)


def choice_used_as_a_value(x):
    act = np.tanh if x[0] > 0.0 else np.sin
    return act
