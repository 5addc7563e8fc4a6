"""User functions for the frontend and core-form golden tests.

Golden outputs carry this file's line numbers in their origin comments: after
editing it, regenerate with ``UPDATE_GOLDEN=1 pytest tests/test_normalize_golden.py``
and read the diff.
"""
import math
from math import sin as math_sin

import numpy
import numpy as np
import numpy as xp
from numpy import sin

import transformer as tr

SCALE = 2.5
OFFSETS = (1.0, -1.0)
WEIGHTS = np.array([0.5, 1.5, -2.0])


# ------------------------------------------------------------------ arithmetic
def arithmetic_nesting(x, y):
    return (x * 2 + y) / (1 - x ** 2) - np.exp(-x)


def unary_and_power(x):
    return -x ** 2 + +x - (-1.5)


# --------------------------------------------------------------------- methods
def methods_to_functions(x):
    rows = x.shape[0]
    total = x.sum(axis=1)
    flipped = x.T
    flat = x.reshape(rows * x.shape[1], 1)
    return total, flipped, flat, x.mean()


def reductions_keepdims(x):
    peak = np.max(x, axis=-1, keepdims=True)
    return np.sum(np.exp(x - peak), axis=-1)


def casts_and_constants(x):
    y = x.astype(np.float32)
    return np.float64(y) * np.pi + math.e


# ------------------------------------------------------------------ assignment
def augmented_assignment(x, y):
    z = x.copy()
    z += y
    z[0] *= 2.0
    z[1:3] -= y[0]
    z[-1] **= 2
    return z


def tuple_unpacking(x, y):
    a, b = x, y
    a, b = b, a
    pair = (a * 2, b)
    first, second = pair
    return first - second


# ----------------------------------------------------------------- conditions
def chained_comparison(x, lo, hi):
    if lo < x < hi:
        return x
    return lo


def short_circuit(x, y):
    both = x > 0 and y > 0
    either = x > 0 or y > 0
    return both, either


def ternary(x):
    return x if x > 0 else -x


def if_elif_else(x):
    if x > 1:
        y = x * 2
    elif x > 0:
        y = x + 1
    else:
        y = 0.0
    return y


def early_return(x):
    if x < 0:
        return 0.0
    y = x * 3
    return y


# ----------------------------------------------------------------------- loops
def for_range(x, n):
    total = 0.0
    for i in range(1, n, 2):
        total += x[i]
    return total


def for_rows(m, w):
    out = 0.0
    for row in m:
        out += row @ w
    return out


def for_enumerate(x):
    total = 0.0
    for i, v in enumerate(x):
        total += i * v
    return total


def for_zip(x, y):
    total = 0.0
    for a, b in zip(x, y):
        total += a * b
    return total


def while_continue(x, n):
    i = 0
    total = 0.0
    while i < n and total < 100.0:
        i += 1
        if i % 2 == 0:
            continue
        total += x * i
    return total


def for_break(x):
    total = 0.0
    for i in range(10):
        if total > 5.0:
            break
        total += x
    return total


# --------------------------------------------------------------------- helpers
def _scaled(v, factor=2.0, shift=0.0):
    out = v * factor
    return out + shift


def helper_defaults_keywords(x):
    return _scaled(x) + _scaled(x, shift=1.0) + _scaled(x, 3.0)


def _inner_helper(v):
    return np.sin(v) * 2


def _outer_helper(v):
    w = _inner_helper(v) + 1
    return _inner_helper(w)


def nested_helpers(x):
    return _outer_helper(x)


# --------------------------------------------------------------- name lookups
def aliases(x):
    return xp.sin(x) + numpy.sin(x) + sin(x) + np.sin(x)


def math_functions(x):
    return math.sin(x) + math_sin(x) + math.sqrt(x) + math.pi


def module_constants(x):
    return x * SCALE + OFFSETS[0] + np.sum(WEIGHTS * x)


def make_closure(power):
    shift = 1.5

    def closure(x):
        return x ** power + shift
    return closure


closure = make_closure(3)

lambda_square = lambda x: x * x + 1  # noqa: E731


def nn_functions(x):
    return tr.nn.softmax(x) + tr.nn.relu(x)


def loop_rebinds_sequence(x):
    total = 0.0
    for v in x:
        x = x * 2.0
        total += v
    return total + np.sum(x)


def swap_in_loop(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


# ------------------------------------------------------------------- frontend
def make_nested(offset):
    """A nested def that calls a sibling helper through a closure cell."""
    import numpy as jnp   # an alias only the closure can see

    def sibling(v):
        return jnp.cos(v) + offset

    def nested(x):
        return sibling(x) * 2.0
    return nested


nested_with_sibling = make_nested(0.5)

two_lambdas = (lambda x: x + 1, lambda x: x - 1)  # two on one line: told apart by column

multiline_lambda = tr.jit(
    lambda x: np.sin(x) * 2.0,
    target="python")

lambda_with_default = lambda x, k=3.0: x * k  # noqa: E731


@tr.jit
def decorated(x):
    return np.tanh(x) + 1.0


@tr.jit(target="python", static_argnums=(1,))
def decorated_with_options(x, n):
    return x * n


def with_default(x, scale=2.0):
    return x * scale


def make_decorated_inside():
    @tr.jit(target="python")
    def inner(x):
        return x - SCALE
    return inner


decorated_inside = make_decorated_inside()


class Holder:
    @staticmethod
    def static_method(x):
        return x * 4.0

    def method(self, x):
        return x


def logged(fn):
    """A user decorator that keeps __wrapped__ (functools.wraps)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)
    return wrapper


@logged
def wrapped_by_user_decorator(x):
    return x * 3.0


def calls_decorated(x):
    return decorated(x) * 2.0


# ------------------------------------------- bodies written on their header's line
def one_line_def(x): return np.sin(x) * 2.0


def one_line_bodies(x):
    s = 0.0
    for i in range(len(x)): s += x[i] ** 2
    if s > 1.0: s = s * 2.0
    else: s = s + 1.0
    while s > 100.0: s = s / 2.0; s = s - 1.0
    return s


def one_line_body_refused(x):
    s = 0.0
    for i in range(len(x)): s += x[i]; del i
    return s


def one_line_loop_refused(x):
    s = 0.0
    for i in 2.5: s += x
    return s


# ------------------------------------------------------------ type annotations
def annotated(x: np.ndarray, scale: float = 2.0) -> float:
    total: float = 0.0
    count: int
    for i in range(x.shape[0]):
        total += scale * x[i] ** 2
    return total


# ------------------------------------------------- helpers with keyword-only parameters
def scaled_power(x, *, power=3, scale=1.0):
    return scale * x ** power


def calls_keyword_only_helper(x):
    return np.sum(scaled_power(x, power=2, scale=0.5)) + np.sum(scaled_power(x))


def passes_keyword_only_by_position(x):
    return np.sum(scaled_power(x, 2))
