"""Reverse mode gave wrong numbers that looked right (the issue "No wrong numbers").

Each function here was differentiated wrongly before the fix named in its
test; every check is against central differences in float64, which need
nothing of ours.
"""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad

X = np.array([0.7, 1.3])


def assert_grad(f, g, *args, argnum=0):
    expected = central_difference_grad(f, args, argnum)
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------- arrays written in place
# A value read from an array (``s[0]``, a view) and taped or read by the
# backward sweep saw later writes into that array: the writes were dropped
# from the backward sweep as dead, since nothing seemed to read the array.

def rows_carried(x):
    s = np.ones((2, 2))
    for t in range(3):
        h = s[0] * x
        s[0] = np.tanh(h)
        s[1] = s[1] * s[0]
    return np.sum(s)


def rows_once(x):
    s = np.ones((2, 2)) * x
    h = s[0] * x
    s[0] = np.tanh(h)
    return np.sum(s) + np.sum(h)


def column_carried(x):
    s = np.ones((2, 2)) * x
    for t in range(3):
        s[:, 1] = np.sin(s[:, 0] * s[:, 1])
    return np.sum(s)


def augmented_row_carried(x):
    s = np.ones((2, 2)) * x
    for t in range(3):
        s[0] += np.sin(s[1]) * s[0]
    return np.sum(s)


def slice_carried(x):
    s = np.ones((3, 2)) * x
    for t in range(3):
        u = s[1:] * x
        s[:2] = np.cos(u) * s[:2]
    return np.sum(s * s)


# Writes of constants into an array a rule reads were not undone at all.
def constant_written_after_read(x):
    s = np.ones(2)
    y = np.sum(s * x)
    s[0] = 3.0
    return y + np.sum(s)


def constant_written_in_loop(x):
    s = np.ones(2)
    y = 0.0
    for t in range(3):
        y = y + np.sum(s * x)
        s[0] = s[0] + 1.0
    return y


def lstm_rows_in_place(w, xs):
    """An LSTM whose state rows are written in place, H[t] = ..., C[t] = ...; at t = 0 it
    reads the zeros in H[-1] and C[-1], the rows the last step writes."""
    n = 3
    H = np.zeros((xs.shape[0], n))
    C = np.zeros((xs.shape[0], n))
    for t in range(xs.shape[0]):
        z = np.dot(w, np.concatenate((xs[t], H[t - 1])))
        i = 1.0 / (1.0 + np.exp(-z[:n]))
        f = 1.0 / (1.0 + np.exp(-z[n:2 * n]))
        o = 1.0 / (1.0 + np.exp(-z[2 * n:3 * n]))
        g = np.tanh(z[3 * n:])
        C[t] = f * C[t - 1] + i * g
        H[t] = o * np.tanh(C[t])
    return np.sum(H ** 2) + np.sum(C)


IN_PLACE = [rows_carried, rows_once, column_carried, augmented_row_carried, slice_carried,
            constant_written_after_read, constant_written_in_loop]


@pytest.mark.parametrize("f", IN_PLACE, ids=lambda f: f.__name__)
def test_grad_of_arrays_written_in_place(f):
    assert_grad(f, tr.grad(f)(X), X)


@pytest.mark.parametrize("f", IN_PLACE, ids=lambda f: f.__name__)
def test_vmap_grad_of_arrays_written_in_place(f):
    xs = np.stack([X, 0.8 * X, -X])
    got = tr.vmap(tr.grad(f))(xs)
    for x, g in zip(xs, got):
        assert_grad(f, g, x)


def test_grad_of_lstm_with_rows_in_place():
    rng = np.random.default_rng(0)
    w, xs = rng.normal(size=(12, 5)) * 0.5, rng.normal(size=(4, 2))
    assert_grad(lstm_rows_in_place, tr.grad(lstm_rows_in_place)(w, xs), w, xs)
    assert_grad(lstm_rows_in_place, tr.grad(lstm_rows_in_place, argnums=1)(w, xs), w, xs, argnum=1)


def test_jit_grad_of_rows_carried_and_lstm():
    assert_grad(rows_carried, tr.jit(tr.grad(rows_carried))(X), X)
    np.testing.assert_allclose(tr.grad(rows_carried)(X), [1.38238687, 1.33195424], rtol=1e-7)
    rng = np.random.default_rng(1)
    w, xs = rng.normal(size=(12, 5)) * 0.5, rng.normal(size=(3, 2))
    assert_grad(lstm_rows_in_place, tr.jit(tr.grad(lstm_rows_in_place))(w, xs), w, xs)


# ------------------------------------------------------ values set in a branch
# An assignment that does not depend on the inputs, to a variable that does
# elsewhere, left the old value's cotangent standing: the old value got the
# new one's gradient too (fuzz finding, test_grad_matches_central_differences).

def constant_set_in_a_branch(x0, x1):
    v4 = np.sin(x0)
    if np.sum(x1) > 0.0:
        v4 = np.sin(x1)
    return np.sum(x0 + v4)


def constant_set_in_a_loop(x):
    y = 0.0
    v = x * 2.0
    for i in range(3):
        y = y + np.sum(v * x)
        v = np.ones(2) * i
    return y


def test_grad_of_a_constant_set_in_a_branch():
    x0, x1 = np.array([0.3, 0.7, -0.2]), np.array([0.5, 0.1, 0.9])
    assert_grad(constant_set_in_a_branch, tr.grad(constant_set_in_a_branch)(x0, x1), x0, x1)
    assert_grad(constant_set_in_a_branch, tr.grad(constant_set_in_a_branch)(x0, -x1), x0, -x1)
    assert_grad(constant_set_in_a_loop, tr.grad(constant_set_in_a_loop)(X), X)


# ------------------------------------------------------------ early returns
# A function's output set only inside a loop (a return from ``while True``,
# left as ``_result = ...`` by transformer/exits.py) had its cotangent start at
# zero inside the loop, after grad's seed was added: the gradient was zero.

def while_true_return(x):
    y = x
    i = 0
    while True:
        y = y * 0.9 + np.sin(y)
        i += 1
        if i >= 5:
            return np.sum(y ** 2)


def output_set_in_loop(x):
    for i in range(3):
        y = np.sum(np.sin(x) * i)
    return y


def return_from_nested_loops(x):
    y = x
    for i in range(4):
        for j in range(3):
            y = np.sin(y) * 1.1
            if j == 1 and i == 2:
                return np.sum(y)
    return np.sum(y * y)


def return_from_nested_branches(x):
    y = x
    for i in range(5):
        if i == 3:
            if y[0] > -10:
                return np.sum(y * x)
        y = np.cos(y) + x
    return np.sum(y)


def return_after_inner_while_true_break(x):
    y = x
    i = 0
    while i < 10:
        j = 0
        while True:
            y = np.sin(y) + 0.5 * x
            j += 1
            if j > 2:
                break
        i += 1
        if i == 3:
            return np.sum(y ** 2)
    return np.sum(y)


def potential(p):
    return 0.5 * np.sum(p ** 2) + np.sum(np.cos(p))


def particles_while_true(x):
    """Euler steps of particles in a potential, forces by grad, until a step count."""
    p = x
    v = x * 0.0
    i = 0
    while True:
        force = tr.grad(potential)(p)
        v = v - 0.1 * force
        p = p + 0.1 * v
        i += 1
        if i >= 4:
            return np.sum(p ** 2)


EARLY_RETURNS = [while_true_return, output_set_in_loop, return_from_nested_loops,
                 return_from_nested_branches, return_after_inner_while_true_break, particles_while_true]


@pytest.mark.parametrize("f", EARLY_RETURNS, ids=lambda f: f.__name__)
def test_grad_of_early_returns(f):
    assert_grad(f, tr.grad(f)(X), X)


@pytest.mark.parametrize("f", [while_true_return, output_set_in_loop, return_from_nested_loops,
                               return_after_inner_while_true_break, particles_while_true],
                         ids=lambda f: f.__name__)
def test_vmap_grad_of_early_returns(f):
    xs = np.stack([X, 0.8 * X, 1.1 * X])
    got = tr.vmap(tr.grad(f))(xs)
    for x, g in zip(xs, got):
        assert_grad(f, g, x)


def test_jit_grad_of_while_true_returns():
    assert_grad(while_true_return, tr.jit(tr.grad(while_true_return))(X), X)
    assert_grad(particles_while_true, tr.jit(tr.grad(particles_while_true))(X), X)


# ---------------------------------------------------- writes into a new array
# A write into an array made in its block and read by nothing since overwrites values nobody
# read: reverse mode no longer keeps them (a NumPy right-hand side written into np.empty_like
# copied each slice twice).  Where the array was read before the write, they are still kept.

def right_hand_side_into_empty(x):
    y = np.zeros_like(x)
    for _ in range(3):
        z = np.empty_like(y)
        z[0] = x[0]
        z[1:] = x[1:] * (y[:-1] + 1.0)
        y = y + 0.25 * z * z
    return np.sum(y * y)


def written_after_a_read(x):
    z = np.ones(2)
    w = np.sin(z * x)          # reads the ones the write below overwrites
    z[0] = 5.0
    return np.sum(w * z)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_writes_into_an_unread_new_array_keep_nothing_and_differentiate(target):
    x = np.array([0.7, 1.3, -0.4])
    g = tr.jit(tr.grad(right_hand_side_into_empty)) if target == "cpu" else tr.grad(right_hand_side_into_empty)
    assert "overwritten" not in tr.show(g, x)
    assert_grad(right_hand_side_into_empty, g(x), x)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_write_after_a_read_still_puts_back_what_it_overwrote(target):
    g = tr.jit(tr.grad(written_after_a_read)) if target == "cpu" else tr.grad(written_after_a_read)
    assert "overwritten" in tr.show(g, X)
    assert_grad(written_after_a_read, g(X), X)


# The cotangent such a write reads is then left as it is, read as a view with no copy and not
# zeroed: nothing later reads that region of it.  Not so where an earlier write into the array
# overlaps this one (its adjoint would read what this write overwrote), nor where the array's
# creation reads its cotangent (np.full's fill value gets the sum of what was not overwritten).

def overlapping_writes_into_a_new_array(x):
    z = np.zeros_like(x)
    z[1:] = x[1:] * 2.0
    z[:2] = np.sin(x[:2])          # overwrites z[1], which the write before made
    return np.sum(z * z)


def a_write_into_a_filled_array(x):
    z = np.full(3, x[0] * x[1])
    z[0] = np.cos(x[2])            # this element of the fill gets no share of the cotangent
    return np.sum(z * z)


def columns_apart(x):
    z = np.empty((2, 3))
    z[:, 0] = x[:2]
    z[:, 1:] = x[1:] * x[0]
    return np.sum(np.tanh(z))


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_write_s_cotangent_is_zeroed_only_where_something_reads_it_again(target):
    x = np.array([0.7, 1.3, -0.4])
    for f, copies in [(right_hand_side_into_empty, False), (columns_apart, False),
                      (overlapping_writes_into_a_new_array, True), (a_write_into_a_filled_array, True)]:
        g = tr.jit(tr.grad(f)) if target == "cpu" else tr.grad(f)
        assert_grad(f, g(x), x)
        assert ("rt.copy(" in tr.show(g, x)) == copies, f.__name__


# ---------------------------------------------------- a shape a loop changes
# A value the backward sweep reads only for its shape (rt.unbroadcast(g, s) in an add's rule)
# was not taped: a loop that made a number into an array (s = s + w) had its first pass summed
# to the array's shape, not the number's, and the gradient of a number came back an array.

def number_grown_in_a_loop(x, w):
    s = x
    for i in range(3):
        s = s + w
    return np.sum(s)


def number_scaled_and_grown(x, w):
    s = x
    for i in range(3):
        s = s * 1.5 + w
    return np.sum(s)


def number_grown_in_a_while(x, w):
    s = x
    while np.sum(s) < 10.0:
        s = s * 1.5 + w
    return np.sum(s)


def stepped_right_hand_side(x, steps):
    # k is only scaled by a number: its rule reads its shape, which never changes (no tape)
    y = np.zeros_like(x)
    h = 1.0 / steps
    for _ in range(steps):
        k = np.empty_like(y)
        k[0] = x[0]
        k[1:] = x[1:] * y[:-1]
        y = y + h * k
    return np.sum(y * y)


def term_sliced_by_the_pass(x, w):
    # w[:2 * i + 1] * x is computed again in the backward sweep, for its shape only: that
    # statement was dropped as unread, and every pass took the last pass's shape
    s = 0.0
    for i in range(2):
        s = s * x + w[: 2 * i + 1] * x
    return np.sum(s)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_shape_a_loop_changes_is_taped_for_the_backward_sweep(target):
    w = np.array([0.5, 1.0, 2.0])
    for f in (number_grown_in_a_loop, number_scaled_and_grown, number_grown_in_a_while, term_sliced_by_the_pass):
        if target == "cpu" and f is term_sliced_by_the_pass:
            continue        # (its s starts a number and becomes an array, which numba refuses)
        g = tr.jit(tr.grad(f), target=target)
        if target == "python":      # (numba refuses a variable that is a number, then an array)
            got = g(0.7, w)
            assert np.shape(got) == (), f.__name__
            assert_grad(f, got, 0.7, w)
        assert_grad(f, g(np.array([0.7, 0.1, 0.2]), w), np.array([0.7, 0.1, 0.2]), w)
        assert_grad(f, g(np.array([[0.7], [0.2]]), w), np.array([[0.7], [0.2]]), w)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_value_read_for_a_shape_that_never_changes_is_not_taped(target):
    x = np.array([0.7, 1.3, -0.4, 0.9])
    g = tr.jit(tr.grad(stepped_right_hand_side), target=target)
    assert_grad(lambda v: stepped_right_hand_side(v, 4), g(x, 4), x)
    code = g.source(x, 4)
    assert "k_stack" not in code and "y_stack" in code, code


# ---------------------------------------------------- a cotangent started in a loop
# A cotangent written in place in the backward sweep (``y_bar[:-1] += c``) starts as zeros at the
# top of each backward pass, shaped like its value.  A taped value was read there before its tape
# was: the zeros took the shape of the pass run last, and a value that grows in the loop failed
# to broadcast (this pass's contribution against the last pass's zeros).

def grown_right_hand_side(y):
    z = np.empty_like(y)
    z[0] = 1.0
    z[1:] = y[:-1] * y[1:]
    return z


def right_hand_side_of_a_growing_state(x):
    y = x[:1] * 1.0
    total = 0.0
    for i in range(2, x.shape[0] + 1):
        y = np.concatenate((y, x[i - 1:i])) * 1.5
        k = grown_right_hand_side(y + 0.5 * y)
        total = total + np.sum(k * k)
    return total


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_cotangent_started_in_a_loop_takes_this_pass_s_shape(target):
    x = np.array([0.7, 1.3, -0.4, 0.9, 0.2])
    g = tr.jit(tr.grad(right_hand_side_of_a_growing_state), target=target)
    assert_grad(right_hand_side_of_a_growing_state, g(x), x)
