"""Reverse mode runs a loop's backward sweep inside the loop itself when its iterations only add
into gradients (transforms/sweep_fusion.py), and leaves two loops otherwise: both checked
against central differences on the python and cpu targets, and by the loops in the code."""
import numpy as np
import pytest

import fusion_sweep_cases as c
import transformer as tr
from oracles import central_difference_grad
from transformer.transforms.sweep_fusion import COMMENT

TARGETS = ["python", "cpu"]
X = np.random.default_rng(3).uniform(-0.8, 0.8, 9)


def _on(target, fn):
    return fn if target == "python" else tr.jit(fn)


def _loops(code) -> int:
    return sum(1 for line in code.splitlines() if line.lstrip().startswith("for "))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [c.rosenbrock, c.from_one, c.no_iteration], ids=lambda f: f.__name__)
def test_an_accumulating_loop_has_one_loop_for_both_sweeps(fn, target):
    grad = tr.grad(fn)
    np.testing.assert_allclose(_on(target, grad)(X), central_difference_grad(fn, (X,)), rtol=1e-6, atol=1e-6)
    code = tr.show(grad)
    assert COMMENT in code and _loops(code) == 1


@pytest.mark.parametrize("target", TARGETS)
def test_scalar_parameters_sum_their_gradients_in_the_fused_loop(target):
    x, y = X, 2.0 * X + 1.0
    grad = tr.grad(c.least_squares, argnums=(0, 1, 2, 3))
    got = _on(target, grad)(0.5, 0.1, x, y)
    for i in range(4):
        np.testing.assert_allclose(got[i], central_difference_grad(c.least_squares, (0.5, 0.1, x, y), i),
                                   rtol=1e-6, atol=1e-6)
    code = tr.show(grad)
    assert COMMENT in code and _loops(code) == 1 and "w_bar = w_bar + " in code


@pytest.mark.parametrize("target", TARGETS)
def test_value_and_grad_keeps_the_value(target):
    value, grad = _on(target, tr.value_and_grad(c.rosenbrock))(X)
    assert value == pytest.approx(c.rosenbrock(X), rel=1e-12)
    np.testing.assert_allclose(grad, central_difference_grad(c.rosenbrock, (X,)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [c.array_output, c.array_output_no_iteration], ids=lambda f: f.__name__)
def test_a_non_scalar_output_is_still_refused(fn, target):
    # the seed is checked in every iteration and once after the loop (for one that never runs)
    with pytest.raises(TypeError, match="scalar output"):
        _on(target, tr.grad(fn))(X)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [c.product, c.log_of_sum, c.writes_in_place, c.with_break, c.stepping_by_two],
                         ids=lambda f: f.__name__)
def test_loops_whose_iterations_depend_on_later_ones_keep_two_loops(fn, target):
    x = np.abs(X) + 0.1 if fn is c.log_of_sum else X
    grad = tr.grad(fn)
    np.testing.assert_allclose(_on(target, grad)(x), central_difference_grad(fn, (x,)), rtol=1e-6, atol=1e-6)
    code = tr.show(grad)
    assert COMMENT not in code and _loops(code) == 2


def test_the_fused_gradient_is_the_exact_gradient_up_to_rounding():
    # the iterations add into x_bar in another order than the backward loop did: only the
    # last bits may change
    x = np.random.default_rng(4).uniform(-1.0, 1.0, 1000)
    a, b = x[1:] - x[:-1] ** 2, 1.0 - x[:-1]
    exact = np.zeros_like(x)
    exact[:-1] += -400.0 * a * x[:-1] - 2.0 * b
    exact[1:] += 200.0 * a
    for grad in (tr.grad(c.rosenbrock), tr.jit(tr.grad(c.rosenbrock))):
        np.testing.assert_allclose(grad(x), exact, rtol=1e-12, atol=1e-12 * np.max(np.abs(exact)))
