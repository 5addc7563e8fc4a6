"""Accumulating loops for the CPU target's split of a gradient loop (backends/numba_loops.py).

The split is made only where it was measured to pay (``SPLIT_FROM_OPERATIONS``):
the loops meant to split have adjoints of some twenty operations, as
Rosenbrock's has, and no function the second loop would compute again."""
import numpy as np


def rosenbrock(x):
    s = 0.0
    for i in range(len(x) - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def from_a_start(x, w):
    # range(start, stop), two arrays differentiated, a weight read in the sum
    s = 0.0
    for i in range(2, len(x) - 1):
        s += w[i] * x[i] ** 3 * x[i + 1] + 0.5 * w[i + 1] * x[i] ** 2 + (x[i + 1] - w[i]) ** 2
    return s


def sums_of(x):
    s = 0.0
    t = 0.0
    for i in range(len(x) - 1):
        s += x[i] * x[i + 1] * (x[i] - 2.0) ** 2
        t += (1.0 - x[i]) ** 3 * x[i]
    return s, t


def two_sums(x):
    # two carried sums (a helper's, inlined), both in the first loop
    s, t = sums_of(x)
    return s + t


def product_of_sums(x):
    # the adjoint needs the sums' final values: reverse mode's two loops, nothing to split
    s, t = sums_of(x)
    return s * t


def at_i_only(x):
    # nothing at i + 1: split, no carry
    s = 0.0
    for i in range(len(x)):
        s += 100.0 * (x[i] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 + x[i] ** 3
    return s


def at_i_minus_one(x):
    # a share at i - 1 beside one at i: the share at i is carried
    s = 0.0
    for i in range(1, len(x)):
        s += 100.0 * (x[i] - x[i - 1] ** 2) ** 2 + (1 - x[i - 1]) ** 2
    return s


def at_three_offsets(x):
    # shares at i - 1, i and i + 1: split, and the array's writes kept as they were
    s = 0.0
    for i in range(1, len(x) - 1):
        s += (x[i + 1] - 2.0 * x[i] + x[i - 1]) ** 2 * (1.0 + x[i] ** 2)
    return s


def at_i_plus_two(x):
    # an index the split does not know (i + 2): one loop, as sweep fusion wrote it
    s = 0.0
    for i in range(len(x) - 2):
        s += 100.0 * (x[i + 2] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
    return s


def few_operations(x):
    # an adjoint of 8 operations: the second pass over x costs more than vectorising saves
    s = 0.0
    for i in range(len(x) - 1):
        s += (x[i + 1] - x[i]) ** 2
    return s


def a_function_again(x):
    # the second loop would compute sin again, as much as the loop it splits saves
    s = 0.0
    for i in range(len(x) - 1):
        s += 100.0 * (x[i + 1] - np.sin(x[i]) ** 2) ** 2 + (1 - x[i]) ** 2
    return s
