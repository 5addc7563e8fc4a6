"""Per-example code with loops, for vmap's compiled per-example strategy on the CPU
(the data-dependent ODE ``while`` is corpus_vmap.ode_steps)."""
import numpy as np


def collatz_steps(n, cap):
    steps = 0
    while n != 1 and steps < cap:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps, n


def row_power_sum(row, k):
    total = 0.0
    for i in range(k):
        total = total + np.sum(row ** i)
    return total


def taped_loop(x):
    s = x
    for i in range(4):
        s = np.sin(s) * x + 0.1 * i
    return s


def straight_line(x, w):
    return np.tanh(x * w) + 1.0


def inverse_steps(x):
    total = 0.0
    for i in range(3):
        total = total + 1.0 / (x * i + x)
    return total
