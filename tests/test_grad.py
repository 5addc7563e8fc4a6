"""Reverse mode over the corpus, checked against central differences."""
import numpy as np
import pytest

import transformer as tr
from corpus_grad import CASES
from oracles import central_difference_grad


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
