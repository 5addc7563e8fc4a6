"""Defs written inside a transformed function (a scan's body, a branch, a helper called twice):
each call is inlined where it is called, reading the enclosing variables as Python does when it is
called.  Oracles: the same function written out without the def, in plain NumPy, and central
differences."""
from __future__ import annotations

import re

import numpy as np
import pytest

import nested_def_cases as cases
import transformer as tr
from oracles import central_difference_grad

RNG = np.random.default_rng(3)
X = RNG.normal(size=3)

# (function, its written-out oracle)
PAIRS = [
    (cases.rebound_after_def, cases.rebound_after_def_written_out),
    (cases.own_variables, cases.own_variables_written_out),
    (cases.writes_into_enclosing_array, cases.writes_written_out),
    (cases.def_inside_def, cases.def_inside_def_written_out),
    (cases.early_return, cases.early_return_written_out),
    (cases.branches_and_loops, cases.branches_and_loops_written_out),
    (cases.grad_of_inner, cases.grad_of_inner_written_out),
    (cases.closure_from_helper, cases.closure_from_helper_written_out),
    (cases.scan_over_pairs, cases.scan_over_pairs_written_out),
]


@pytest.mark.parametrize("fn, written_out", PAIRS, ids=[fn.__name__ for fn, _ in PAIRS])
def test_value_and_gradient(fn, written_out):
    for x in (X, X + 1.5):          # (both branches of early_return's and branches_and_loops' tests)
        np.testing.assert_allclose(tr.jit(fn)(x), written_out(x), rtol=1e-12)
        np.testing.assert_allclose(tr.grad(fn)(x), central_difference_grad(written_out, (x,)),
                                   rtol=1e-6, atol=1e-8)


def test_scan_body_reading_enclosing_parameters():
    params = {"w": RNG.normal(size=(3, 3)) * 0.5, "b": RNG.normal(size=3)}
    xs = RNG.normal(size=(5, 3))
    np.testing.assert_allclose(tr.jit(cases.rnn)(params, xs), cases.rnn_written_out(params, xs), rtol=1e-12)
    grads = tr.grad(cases.rnn)(params, xs)
    for key in params:
        def in_key(leaf, key=key):
            return cases.rnn_written_out({**params, key: leaf}, xs)
        np.testing.assert_allclose(grads[key], central_difference_grad(in_key, (params[key],)), rtol=1e-6, atol=1e-8)
    # batched over sequences: the def reads the enclosing parameters, shared by every example
    batch = np.stack([xs, 0.5 * xs])
    np.testing.assert_allclose(tr.vmap(cases.rnn, in_axes=(None, 0))(params, batch),
                               [cases.rnn_written_out(params, seq) for seq in batch], rtol=1e-12)


def test_tree_map_over_a_dict():
    params = {"b": RNG.normal(size=2), "a": RNG.normal(size=3)}
    np.testing.assert_allclose(tr.jit(cases.tree_map_over_a_dict)(params),
                               cases.tree_map_over_a_dict_written_out(params), rtol=1e-12)
    grads = tr.grad(cases.tree_map_over_a_dict)(params)
    np.testing.assert_allclose(grads["a"], 8.0 * params["a"])
    np.testing.assert_allclose(grads["b"], np.full(2, 6.0))


REFUSED = {
    cases.recursive: "recursion",
    cases.read_before_bound: "reads 'later' of the function around it",
    cases.def_as_a_value: "used as a value",
    cases.nonlocal_write: "nonlocal",
}


@pytest.mark.parametrize("fn", list(REFUSED), ids=[fn.__name__ for fn in REFUSED])
def test_refused_at_the_users_line(fn):
    with open(cases.__file__) as handle:
        line = next(k for k, text in enumerate(handle, 1)
                    if "# REFUSED" in text and k > fn.__code__.co_firstlineno)
    with pytest.raises(tr.TransformError) as err:
        tr.jit(fn)(X)
    assert re.search(rf"nested_def_cases\.py:{line}\b", str(err.value)), str(err.value)
    assert REFUSED[fn] in str(err.value)


def test_while_loop_with_a_tuple_carry_under_vmap():
    xs = np.array([1.0, 3.0, 0.5, 12.0])
    np.testing.assert_allclose(tr.vmap(cases.doubling_with_a_count)(xs),
                               [cases.doubling_written_out(x) for x in xs], rtol=1e-12)
    np.testing.assert_allclose(tr.vmap(tr.grad(cases.doubling_with_a_count))(xs),
                               [central_difference_grad(cases.doubling_written_out, (x,)) for x in xs], rtol=1e-6)


def _train_written_out(params, xs, ys, rate):
    """The training loop in NumPy, each gradient by central differences."""
    def loss_of(p, x, y):
        return np.mean((cases.mlp(p, x) - y) ** 2)
    p = {key: value.copy() for key, value in params.items()}
    losses = []
    for x, y in zip(xs, ys):
        losses.append(loss_of(p, x, y))
        g = {key: central_difference_grad(lambda leaf, key=key: loss_of({**p, key: leaf}, x, y), (p[key],))
             for key in p}
        p = {key: p[key] - rate * g[key] for key in p}
    return p, np.array(losses)


def test_a_jax_training_loop_with_its_step_written_inside():
    rng = np.random.default_rng(5)
    params = {"w1": rng.normal(size=(2, 4)) * 0.5, "b1": np.zeros(4), "w2": rng.normal(size=(4, 1)) * 0.5,
              "b2": np.zeros(1)}
    xs, ys = rng.normal(size=(4, 5, 2)), rng.normal(size=(4, 5, 1))
    trained, losses = tr.jit(cases.train)(params, xs, ys, 0.1)
    expected, expected_losses = _train_written_out(params, xs, ys, 0.1)
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-7)
    for key in params:
        np.testing.assert_allclose(trained[key], expected[key], rtol=1e-6, atol=1e-9)
    # the derivative of the summed losses in the learning rate, through every step's gradient
    step = 1e-4
    by_differences = (np.sum(_train_written_out(params, xs, ys, 0.1 + step)[1])
                      - np.sum(_train_written_out(params, xs, ys, 0.1 - step)[1])) / (2 * step)
    np.testing.assert_allclose(tr.grad(cases.summed_losses)(0.1, params, xs, ys), by_differences, rtol=1e-5)
