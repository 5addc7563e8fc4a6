"""User functions of tests/regressions/test_functions_as_values.py (transforms read source)."""
import numpy as np

import transformer as tr


def make_scaled(a):
    return lambda v: a * v


def make_pair(w):
    return w * 2.0, lambda v: np.sin(v) * w


def apply_pair(p):
    return p[1](p[0])


def apply_default(x, act=lambda v: v * 2.0 + 1.0):
    return act(x)


def named_function_bound(x):
    act = np.tanh
    return np.sum(act(x) * x)


def closure_from_a_helper(x):
    k = np.sum(x)
    scaled = make_scaled(k)
    k = k + 100.0               # the closure keeps make_scaled's a, the old k
    return np.sum(scaled(x)) + k


def closure_called_in_place(x):
    return np.sum(make_scaled(np.sum(x))(x))


def lambda_kept_with_values(x):
    pair = (x, lambda v: v * v)
    return np.sum(pair[1](pair[0]))


def lambda_unpacked_with_a_value(x):
    y, f = x * 2.0, lambda v: v * v
    return np.sum(f(y))


def pair_from_a_helper_unpacked(x):
    y, f = make_pair(x[0])
    return np.sum(f(x)) * y


def pair_passed_to_a_helper(x):
    return np.sum(apply_pair((x, np.sin)))


def loop_over_functions(x):
    total = 0.0
    for f in [np.sin, lambda v: v * v]:
        total = total + np.sum(f(x))
    return total


def loop_over_functions_and_weights(x):
    total = 0.0
    for f, w in zip([np.sin, np.cos], [1.0, 2.0]):
        total = total + w * np.sum(f(x))
    return total


def loop_over_pairs(x):
    ops = [(np.sin, 1.0), (lambda v: v * v, 0.5)]
    return sum(w * np.sum(f(x)) for f, w in ops)


def loop_over_a_dict_of_functions(x):
    fs = {"a": np.sin, "b": lambda v: v * 3.0}
    return sum(np.sum(fs[k](x)) for k in fs)


def loop_over_values(x):
    total = 0.0
    for c in (1.0, 2.0, 3.0):
        total = total + c * np.sum(x ** c)
    return total


def bound_in_each_branch(x):
    if x[0] > 0:
        f = np.sin
        y = f(x)
    else:
        f = np.cos
        y = f(x)
    return np.sum(y)


def lambda_default_read_where_written(x):
    a = 2.0
    f = lambda v, k=a: v * k
    a = 5.0
    return np.sum(f(x)) + a


def lambda_called_by_keyword(x):
    f = lambda v, k: v * k
    return np.sum(f(k=3.0, v=x))


def lambda_with_star_arguments(x):
    f = lambda *vs: vs[0] * vs[1]
    return np.sum(f(x, np.cos(x)))


def lambda_returning_a_lambda(x):
    f = lambda a: (lambda v: v * a)
    k = np.sum(x)
    g = f(k)
    k = 4.0                     # g keeps the a it was made with
    return np.sum(g(x)) + k


def late_binding(x):
    g = np.sin
    f = lambda v: g(v)
    g = np.cos                  # f reads g when called, as Python does
    return np.sum(f(x))


def last_function_of_a_tuple(x):
    fs = (np.sin, np.cos, np.tanh)
    return np.sum(fs[-1](x))


def helper_default_a_lambda(x):
    return np.sum(apply_default(x) * np.sin(x))


def lambdas_made_by_a_comprehension(x):
    fs = [lambda v, k=k: v ** k for k in range(1, 4)]
    return np.sum(fs[0](x) + fs[2](x))


def gradient_of_a_lambda_with_a_default(x):
    return np.sum(tr.grad(lambda q, s=2.0: np.sum(np.sin(q)) * s)(x) * x)


def loop_over_the_items_of_a_dict_of_functions(x):
    total = 0.0
    for name, f in {"sine": np.sin, "cube": lambda v: v ** 3}.items():
        total = total + np.sum(f(x))
    return total


def rebound_in_a_loop(x):
    f = np.sin
    total = 0.0
    for i in range(3):
        total = total + np.sum(f(x))
        f = np.cos
    return total


def rebound_in_a_branch(x):
    f = np.sin
    if x[0] > 0:
        f = np.cos
    return np.sum(f(x))


def value_called(x, g):
    return g(x)


def function_added(x):
    f = np.sin
    return x + f
