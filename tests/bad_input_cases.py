"""User functions that no transform may accept (tests/test_bad_inputs.py).

The offending line of each carries a ``# refused: NAME`` marker, so the test
can check that the error names this file and that line.
"""
import math

import numpy as np

SETTINGS = {"scale": 2.0}          # a config dict: read when transformed, as JAX reads it when tracing
REGISTRY = {"scale": 2.0, "seen": []}   # a dict holding a list: mutable state
HISTORY = [1.0, 2.0]
COUNTER = np.zeros(3)              # not mutable-by-rebinding, but an array: allowed as a constant


def with_try(x):
    try:                                          # refused: try
        return np.sin(x)
    except ValueError:
        return x


def with_raise(x):
    if np.sum(x) > 1e9:
        raise ValueError("too big")               # refused: raise
    return np.sum(x)


def with_yield(x):
    yield np.sin(x)                               # refused: yield


def with_with(x):
    with open("log.txt") as handle:               # refused: with
        handle.write("x")
    return np.sum(x)


def with_global(x):
    global COUNTER                                # refused: global
    return np.sum(x)


def with_del(x):
    y = x * 2.0
    del y                                         # refused: del
    return np.sum(x)


def with_class(x):
    class Box:                                    # refused: class
        pass
    return np.sum(x)


def with_star_args(x, *rest):                     # refused: star_args
    return np.sum(x)


def with_kwargs(x, **options):                    # refused: kwargs
    return np.sum(x)


def with_set_literal(x):
    s = {1.0, 2.0}                                # refused: set
    return np.sum(x) + len(s)


def with_list_comprehension(x):
    parts = [np.sin(v) for v in x]                # refused: comprehension
    return np.sum(x)


def with_string_method(x):
    name = "abc".upper()                          # refused: string_method
    return np.sum(x)


def recursive(x, n):
    if n == 0:
        return np.sum(x)
    return recursive(x * 0.5, n - 1)              # refused: recursion


def ping(x, n):
    return pong(x, n)


def pong(x, n):
    return ping(x, n)                             # refused: mutual_recursion


def calls_print(x):
    print(x)                                      # refused: print
    return np.sum(x)


def calls_open(x):
    open("data.bin")                              # refused: open
    return np.sum(x)


def calls_unknown_numpy(x):
    return np.sum(np.fft.fft(x).real)             # refused: fft


def calls_unknown_math(x):
    return math.gamma(x)                          # refused: gamma


def calls_undefined(x):
    return np.sum(not_defined_anywhere(x))        # refused: undefined  # noqa: F821


def reads_config_dict(x):
    return np.sum(x) * SETTINGS["scale"]          # read when transformed


def reads_mutable_dict(x):
    return np.sum(x) * REGISTRY["scale"]          # refused: global_dict


def reads_mutable_list(x):
    return np.sum(x) * HISTORY[0]                 # refused: global_list


def appends(x):
    out = []
    out.append(np.sum(x))                         # refused: append
    return out[0]


def make_closure_over_list():
    seen = [1.0]

    def inner(x):
        return np.sum(x) * seen[0]                # refused: closure_list
    return inner


def make_closure_over_dict():
    config = {"scale": 3.0, "history": [1.0]}

    def inner(x):
        return np.sum(x) * config["scale"]        # refused: closure_dict
    return inner


def make_closure_over_config_dict():
    config = {"scale": 3.0}

    def inner(x):
        return np.sum(x) * config["scale"]        # read when transformed
    return inner


def vector_out(x):
    return np.sin(x)


def tuple_out(x):
    return np.sum(x), np.sum(x * x)


def two_args(x, n):
    return np.sum(x) * n


def three_args(x, y, z):
    return np.sum(x * y) + np.sum(z)


def pair_out(x):
    return (np.sin(x), np.cos(x))


def elementwise(x, y):
    return np.sin(x) * y


def plain_sum(x):
    return np.sum(x * x)


def walrus(x):
    if (y := np.sum(x)) > 0:                      # refused: walrus
        return y
    return -y


def with_lambda_inside(x):
    square = lambda v: v * v                      # noqa: E731
    if np.sum(x) > 100.0:
        square = lambda v: v * v * v              # refused: lambda (rebound in a branch)  # noqa: E731
    return np.sum(square(x))


def with_assert(x):
    assert np.all(x > -10.0)                      # refused: assert
    return np.sum(x)


def with_fstring(x):
    label = f"{x}"                                # refused: fstring
    return np.sum(x)


def with_dict_update(x):
    d = {"a": 1.0}
    d["b"] = 2.0                                  # refused: dict_write
    return np.sum(x) * d["a"]


def with_import(x):
    import scipy                                  # refused: import
    return np.sum(x)


def with_nonlocal_maker():
    total = 0.0

    def inner(x):
        nonlocal total                            # refused: nonlocal
        total = total + 1.0
        return np.sum(x)
    return inner


def sums_a_list_of_arrays(x):
    parts = [x[:1], x[1:]]
    total = 0.0
    for part in parts:                            # unrolled: the list's length is known when specialised
        total += np.sum(part ** 2)
    return total


def reversed_enumerate(x):
    s = 0.0
    for i, v in reversed(enumerate(x)):           # refused: reversed_enumerate
        s += v * i
    return s


def reversed_stepped_range(x):
    s = 0.0
    for i in reversed(range(0, len(x), 2)):       # refused: reversed_step
        s += x[i]
    return s


def where_of_a_condition_alone(x):
    return np.where(x > 0.5)[0].shape[0] * 1.0         # refused: where_alone
