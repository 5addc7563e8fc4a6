"""Per-example scalar code for vmap's SIMD lanes on the CPU (backends/cpu_lanes.py);
the ODE whose while loop runs a different number of steps per example is
corpus_vmap.ode_steps."""
import numpy as np


def halvings(x):
    # an integer counter beside a float state, two results
    count = 0
    while x > 1.0:
        x = x * 0.5
        count = count + 1
    return count, x


def spring(position, velocity):
    # two batched arguments, two loops one after the other, cos and exp
    t = 0.0
    while position > 0.0:
        velocity = velocity - 0.05 * position * np.cos(0.1 * t)
        position = position + 0.05 * velocity
        t = t + 0.05
    energy = 0.5 * velocity * velocity
    damped = energy
    while damped > 0.1:
        damped = damped * np.exp(-0.25)
    return t, damped


def count_that_becomes_a_float(x):
    # t starts as an int and the loop makes it a float: its lanes must hold floats
    t = 0
    while x > 1.0:
        x = x * 0.5
        t = t + 0.5
    return t


def halvings_then_countdown(x):
    # a few examples take far more steps than the rest: they finish alone; the second
    # loop must not run them on the values the first one left half done
    count = 0
    while x > 1.0:
        x = x * 0.99
        count = count + 1
    left = count * 1.0
    while left > 0.0:
        left = left - 7.0
    return count, left


def sin_of_large_times(t0):
    # sin's argument far beyond the lanes' exact range: those groups run one example at a time
    t = t0
    total = 0.0
    while total < 3.0:
        total = total + 1.0 + np.sin(t)
        t = t + 1.0
    return total


def scaled_by_a_count(x):
    # for a scalar example, lanes; for a row, the per-example loop
    t = 0.0
    while t < 1.0:
        t = t + 0.25
    return x * t


def uniform_read_before_and_after_its_step(x):
    # rate and t are the same in every active lane (computed once a step); x * t is
    # per lane and reads t before the step sets it again, then after; t is set twice
    rate = 0.9
    t = 0.0
    while x > 0.5:
        x = x * rate - x * t * 0.001
        t = t + 0.5
        x = x + x * t * 0.0001
        t = t * 1.0 + 0.25
    return x, t


def kept_beside_a_loop(x):
    # y is set before the loop and untouched by it; as lanes finish, the loop moves the
    # active ones to the front: every result must still be at its own example
    y = x * 2.0
    n = 0.0
    while x > 1.0:
        x = x * 0.5
        n = n + 1.0
    return y, n, x


def decay_at_a_rate(x, rate):
    # a batched argument the loop only reads: the loop moves its own copy, not the caller's
    t = 0.0
    while x > 0.01:
        x = x - rate * x
        t = t + 1.0
    return t


# --- these keep the per-example loop
def divides_by_a_variable(x):
    steps = 0.0
    while x > 0.1:
        x = x - 1.0 / (x + 10.0)
        steps = steps + 1.0
    return steps


def branches_inside(x):
    n = 0
    while x > 1.0:
        if x > 10.0:
            x = x * 0.1
        else:
            x = x - 1.0
        n = n + 1
    return n


def set_again_after_a_loop(x):
    # y is an int before the first loop and a float after it: lanes keep one type per variable
    y = 0
    while x > 1.0:
        x = x - y - 1.0
    y = 1.5
    while y < x:
        y = y * 2.0
    return y


def scaled_steps(x, scale):
    t = 0.0
    while x > 0.01:
        x = x * scale
        t = t + 1.0
    return t
