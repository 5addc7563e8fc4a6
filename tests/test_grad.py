"""Reverse mode over the corpus, checked against central differences."""
import numpy as np
import pytest

import transformer as tr
from corpus_grad import CASES
from oracles import central_difference_grad, central_difference_jvp


def _check(fn, args, gradient):
    expected = central_difference_grad(fn, args, 0)
    np.testing.assert_allclose(gradient, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_python(name):
    fn, make = CASES[name]
    args = make(np.random.default_rng(len(name)))
    _check(fn, args, tr.grad(fn)(*args))


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_and_grad_python(name):
    fn, make = CASES[name]
    args = make(np.random.default_rng(len(name)))
    value, gradient = tr.value_and_grad(fn)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    _check(fn, args, gradient)


def test_stop_gradient_blocks_the_derivative():
    import corpus_extra
    x = np.array([1.0, -2.0, 3.0])
    # d/dx sum(x * stop_gradient(x)) treats the second factor as a constant
    np.testing.assert_allclose(tr.grad(corpus_extra.with_stop_gradient)(x), x)


# inputs where the loop breaks, and where it runs out and takes its else
LOOP_ELSE_INPUTS = {
    "for_else_search": [np.array([0.6, 0.7, 1.9, 0.8, 0.9, 1.0]), np.array([0.6, 0.7, 0.8, 0.9, 1.0, 1.1])],
    "while_else_product": [np.array([1.5, 2.0, 1.8, 1.2]), np.array([0.9, 1.1, 1.2, 0.8])],
    "nested_for_else": [np.array([1.7, 1.6, 0.6]), np.array([0.7, 0.8, 0.9])],
}


@pytest.mark.parametrize("name", sorted(LOOP_ELSE_INPUTS))
def test_a_loops_else_runs_exactly_when_it_did_not_break(name):
    fn = CASES[name][0]
    for x in LOOP_ELSE_INPUTS[name]:
        assert tr.jit(fn, target="python")(x) == fn(x)
        _check(fn, (x,), tr.grad(fn)(x))
        _check(fn, (x,), tr.jit(tr.grad(fn))(x))
        tangent = np.linspace(0.3, 1.0, x.size)
        np.testing.assert_allclose(tr.jvp(fn, (x,), (tangent,))[1], central_difference_jvp(fn, (x,), (tangent,)),
                                   rtol=1e-5, atol=1e-6)
    # one example that breaks and one that takes the else, in one batch
    batch = np.stack(LOOP_ELSE_INPUTS[name])
    np.testing.assert_allclose(tr.jit(tr.vmap(fn))(batch), [fn(x) for x in batch], rtol=1e-12)
