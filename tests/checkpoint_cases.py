"""User code for tests/test_checkpoint.py (transforms read source)."""
import numpy as np

import transformer as tr


def euler_step(h, w):
    # one outer step: ten explicit Euler substeps of dh/dt = tanh(w @ h), whose states reverse mode
    # would tape without the checkpoint
    for _ in range(10):
        h = h + 0.05 * np.tanh(w @ h)
    return h


checkpointed_step = tr.checkpoint(euler_step)


def trajectory(h, w):
    for _ in range(20):
        h = euler_step(h, w)
    return np.sum(h * h)


def checkpointed_trajectory(h, w):
    for _ in range(20):
        h = checkpointed_step(h, w)
    return np.sum(h * h)


def inline_checkpoint(h, w):
    for _ in range(20):
        h = tr.checkpoint(euler_step)(h, w)
    return np.sum(h * h)


@tr.remat
def two_outputs(h, t):
    return h * np.cos(h * t), np.sin(h) * t


def with_int_and_pair(h):
    total = 0.0
    for t in range(3):
        h, s = two_outputs(h, t)
        total = total + np.sum(s)
    return total + np.sum(h * h)


def with_int_and_pair_plain(h):
    total = 0.0
    for t in range(3):
        h, s = h * np.cos(h * t), np.sin(h) * t
        total = total + np.sum(s)
    return total + np.sum(h * h)
