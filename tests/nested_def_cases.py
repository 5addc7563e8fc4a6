"""User code for tests/test_nested_defs.py: defs written inside a transformed function, as JAX
programs write their scan bodies and branches (transforms read source)."""
from __future__ import annotations

import numpy as np

import transformer as tr
from transformer import lax


def rnn(params, xs):
    """A scan body that reads the enclosing function's parameters (a dict)."""
    h0 = np.zeros(3)

    def step(h, x):
        h = np.tanh(params["w"] @ h + x * params["b"])
        return h, np.sum(h * h)
    h, energies = lax.scan(step, h0, xs)
    return np.sum(h) + np.sum(energies)


def rnn_written_out(params, xs):
    h = np.zeros(3)
    total = 0.0
    for x in xs:
        h = np.tanh(params["w"] @ h + x * params["b"])
        total = total + np.sum(h * h)
    return np.sum(h) + total


def rebound_after_def(x):
    """Python reads an enclosing variable when the def is called, its default where it is written."""
    s = 2.0

    def scaled(v, k=s):
        return v * s + k
    s = 3.0
    return np.sum(scaled(x) ** 2)


def rebound_after_def_written_out(x):
    return np.sum((x * 3.0 + 2.0) ** 2)


def own_variables(x):
    """The def's assignments are its own: the enclosing h is not changed by them."""
    h = x * 2.0

    def g(v):
        h = v + 1.0
        return h * h
    y = g(x) + g(h)
    return np.sum(y * h)


def own_variables_written_out(x):
    h = x * 2.0
    return np.sum(((x + 1.0) ** 2 + (h + 1.0) ** 2) * h)


def writes_into_enclosing_array(x):
    """A write into an array of the enclosing function changes that array, as in Python."""
    squares = np.zeros(3)

    def put(i, v):
        squares[i] = v * v
    for i in range(3):
        put(i, x[i])
    return np.sum(squares * x)


def writes_written_out(x):
    return np.sum(x ** 3)


def def_inside_def(x):
    """A def inside a def, each reading its own enclosing variables; called twice."""
    def outer(v):
        def inner(u):
            return np.sin(u) * v
        return inner(v) + inner(2.0 * v)
    return np.sum(outer(x) + outer(x * 0.5))


def def_inside_def_written_out(x):
    def term(v):
        return np.sin(v) * v + np.sin(2.0 * v) * v
    return np.sum(term(x) + term(x * 0.5))


def early_return(x):
    def clip(v):
        if np.sum(v) > 1.0:
            return v * 0.5
        return v
    return np.sum(clip(x) ** 2 + clip(x - 3.0))


def early_return_written_out(x):
    def clip(v):
        return v * 0.5 if np.sum(v) > 1.0 else v
    return np.sum(clip(x) ** 2 + clip(x - 3.0))


def branches_and_loops(x):
    """lax.fori_loop and lax.cond with their functions written inside."""
    def body(i, c):
        return c * 0.9 + np.sin(c) * i

    def grow(v):
        return v * 2.0

    def flip(v):
        return -v
    y = lax.fori_loop(0, 3, body, x)
    return np.sum(lax.cond(np.sum(y) > 0.0, grow, flip, y))


def branches_and_loops_written_out(x):
    for i in range(3):
        x = x * 0.9 + np.sin(x) * i
    return np.sum(x * 2.0 if np.sum(x) > 0.0 else -x)


def grad_of_inner(x):
    """tr.grad of a def written inside, which reads an enclosing variable (a constant to it)."""
    scale = np.sum(x)

    def energy(p):
        return np.sum(p ** 3) * scale
    g = tr.grad(energy)(x)
    return np.sum(g * x)


def grad_of_inner_written_out(x):
    return np.sum(3.0 * x ** 3) * np.sum(x)


def make_step(rate):
    """A helper returning a def (a closure): the rate is the helper's, fixed as it returns."""
    def step(v):
        return v - rate * np.sin(v)
    return step


def closure_from_helper(x):
    step = make_step(0.1)
    for _ in range(3):
        x = step(x)
    return np.sum(x ** 2)


def closure_from_helper_written_out(x):
    for _ in range(3):
        x = x - 0.1 * np.sin(x)
    return np.sum(x ** 2)


def scan_over_pairs(x):
    """lax.scan over a tuple of arrays: each step is given the tuple of their rows."""
    def step(c, pair):
        a, b = pair
        return c + a * b, c
    c, history = lax.scan(step, 0.0, (x, np.cos(x)))
    return c + np.sum(history)


def scan_over_pairs_written_out(x):
    c, total = 0.0, 0.0
    for a, b in zip(x, np.cos(x)):
        total = total + c
        c = c + a * b
    return c + total


def tree_map_over_a_dict(params):
    scaled = tr.tree_util.tree_map(lambda leaf: leaf * 2.0, params)
    return np.sum(scaled["a"] ** 2) + np.sum(scaled["b"] * 3.0)


def tree_map_over_a_dict_written_out(params):
    return np.sum((params["a"] * 2.0) ** 2) + np.sum(params["b"] * 2.0 * 3.0)


def recursive(x):
    def power(n):
        return x if n == 0 else power(n - 1) * x  # REFUSED
    return np.sum(power(3))


def read_before_bound(x):
    def g(v):
        return v * later
    y = g(x)  # REFUSED
    later = 2.0
    return y


def def_as_a_value(x):
    def g(v):
        return v
    return x + g  # REFUSED


def nonlocal_write(x):
    total = 0.0

    def add(v):
        nonlocal total  # REFUSED
        total = total + v
    add(1.0)
    return x * total


def doubling_with_a_count(x):
    """lax.while_loop with a tuple carry: under vmap each example runs its own passes."""
    def unfinished(state):
        count, v, passed = state
        return v < 10.0

    def double(state):
        count, v, passed = state
        return count + 1, v * 2.0, passed + v
    count, v, passed = lax.while_loop(unfinished, double, (0, x, 0.0))
    return v + count + 0.5 * passed


def doubling_written_out(x):
    count, v, passed = 0, x, 0.0
    while v < 10.0:
        count, v, passed = count + 1, v * 2.0, passed + v
    return v + count + 0.5 * passed


def mlp(p, x):
    h = np.tanh(x @ p["w1"] + p["b1"])
    return h @ p["w2"] + p["b2"]


def train(params, xs, ys, rate):
    """A JAX training loop with only the imports changed: lax.scan carries the parameters (a dict),
    each step takes tr.value_and_grad of a def written beside it, and tree_map updates them."""
    def loss_of(p, x, y):
        return np.mean((mlp(p, x) - y) ** 2)

    def step(p, batch):
        x, y = batch
        loss, g = tr.value_and_grad(loss_of)(p, x, y)
        p = tr.tree_util.tree_map(lambda leaf, d: leaf - rate * d, p, g)
        return p, loss
    params, losses = lax.scan(step, params, (xs, ys))
    return params, losses


def summed_losses(rate, params, xs, ys):
    return np.sum(train(params, xs, ys, rate)[1])
