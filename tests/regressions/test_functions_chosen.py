"""Regression (issue 18's point 4, lambdas in any expression position): a function chosen by a
conditional expression (``act = np.tanh if c else (lambda v: v)``) was refused as "the function
np.tanh used as a value".  The choice is now made where the expression is, and each call of the
chosen function is written as an if statement with either call in its branch."""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad
from regressions import functions_chosen as case

X = np.array([0.3, -0.4, 0.9])


@pytest.mark.parametrize("deep", [1.0, 0.0])
@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_function_chosen_by_a_flag(deep, target):
    fn = case.activation_chosen_by_a_flag
    assert tr.jit(fn, target=target)(X, deep) == pytest.approx(fn(X, deep))
    np.testing.assert_allclose(tr.jit(tr.grad(fn), target=target)(X, deep),
                               central_difference_grad(fn, (X, deep)), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_choice_called_in_place_inside_a_loop(target):
    fn = case.chosen_in_place
    assert tr.jit(fn, target=target)(X) == pytest.approx(fn(X))
    np.testing.assert_allclose(tr.jit(tr.grad(fn), target=target)(X), central_difference_grad(fn, (X,)),
                               rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("c", [-1.0, 0.5, 2.0])
def test_a_nested_choice_passed_to_a_helper(c):
    fn = case.three_way_choice_in_a_helper
    np.testing.assert_allclose(tr.grad(fn)(X, c), central_difference_grad(fn, (X, c)), rtol=1e-7, atol=1e-9)
    _, tangent = tr.jvp(fn, (X, c), (np.ones(3), 0.0))
    assert tangent == pytest.approx(float(np.sum(central_difference_grad(fn, (X, c)))), rel=1e-7)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_chosen_functions_returning_pairs(sign):
    fn = case.choice_of_pairs
    x = sign * np.abs(X) + np.array([0.0, 0.1, 0.2])
    np.testing.assert_allclose(tr.grad(fn)(x), central_difference_grad(fn, (x,)), rtol=1e-7, atol=1e-9)
    batch = np.stack([x, -x, 0.5 * x])
    np.testing.assert_allclose(tr.vmap(tr.grad(fn))(batch), np.stack([tr.grad(fn)(row) for row in batch]))


def test_a_chosen_function_returned_is_refused_at_its_line():
    with pytest.raises(tr.TransformError, match=r"functions_chosen\.py:35.*the function .act. used as a value"):
        tr.grad(case.choice_used_as_a_value)(X)
