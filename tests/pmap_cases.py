"""User functions for the pmap tests (real files: transforms read source)."""
import numpy as np

import transformer as tr
from transformer import lax


def scale_shift(x, w):
    return np.tanh(x * w) + 1.0


def normalize_rows(x):
    return x / lax.psum(np.sum(x), "i")


def centered(x):
    return x - lax.pmean(x, "i")


def extremes(x):
    return lax.pmax(np.max(x), "i") - lax.pmin(np.min(x), "i")


def gather_and_index(x):
    everyone = lax.all_gather(x, "i")
    me = lax.axis_index("i")
    return everyone[me] * 2.0 + me


def collective_in_loop(x):
    total = 0.0
    for k in range(3):
        if k % 2 == 0:
            total = total + lax.psum(np.sum(x) * k, "i")
        else:
            x = x - lax.pmean(x, "i")
    while total < 100.0:
        total = total + lax.psum(1.0, "i")
    return total + np.sum(x)


def loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


def replicated_total(w, x):
    return lax.psum(np.sum(np.tanh(x * w)), "i")


def wrong_axis(x):
    return lax.psum(x, "j")


def fails_on_device_one(x):
    k = 1 // (lax.axis_index("i") - 1)      # device 1 divides by zero
    return lax.psum(x * k, "i")


def ragged(x):
    mine = x[:lax.axis_index("i") + 1]      # device d holds d + 1 elements
    return lax.psum(mine, "i")
