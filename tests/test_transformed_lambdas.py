"""Transforms of lambdas inside transformed code (``tr.grad(lambda q: ...)(p)`` in a loop body),
which were refused ("transforms inside transformed code take a function name").  The variables a
lambda reads from the code around it are passed to its transformed code after its own arguments:
not differentiated and not batched by the inner transform, as JAX treats a closure's values, but
differentiated by an outer transform like any other value."""
import numpy as np
import pytest

import transformed_lambda_cases as case
import transformer as tr
from oracles import central_difference_grad, central_difference_hessian

P = np.array([0.3, -0.5, 0.9])
K = 1.5


@pytest.mark.parametrize("fn", [case.descent_on_a_potential, case.named_lambda_and_value_and_grad,
                                case.jitted_lambda, case.gradient_in_the_second_argument])
@pytest.mark.parametrize("target", ["python", "cpu"])
def test_values_and_gradients(fn, target):
    assert tr.jit(fn, target=target)(P, K) == pytest.approx(fn(P, K), rel=1e-12)
    np.testing.assert_allclose(tr.jit(tr.grad(fn), target=target)(P, K), central_difference_grad(fn, (P, K)),
                               rtol=1e-6, atol=1e-9)


def test_the_captured_variable_is_differentiated_by_an_outer_grad():
    fn = case.descent_on_a_potential
    assert tr.grad(fn, argnums=1)(P, K) == pytest.approx(float(central_difference_grad(fn, (P, K), 1)), rel=1e-6)
    np.testing.assert_allclose(tr.hessian(fn)(P, K), central_difference_hessian(fn, (P, K)), rtol=1e-5, atol=1e-6)


def test_per_example_gradients_of_code_that_transforms_a_lambda():
    fn = case.named_lambda_and_value_and_grad
    batch = np.stack([P, 0.5 * P, -P])
    np.testing.assert_allclose(tr.vmap(tr.grad(fn), in_axes=(0, None))(batch, K),
                               [central_difference_grad(fn, (p, K)) for p in batch], rtol=1e-6, atol=1e-9)


def test_vmap_of_a_lambda_maps_only_its_own_arguments():
    rows = np.random.default_rng(0).normal(size=(4, 3))
    fn = case.rows_of_a_batch
    assert tr.jit(fn)(rows, K) == pytest.approx(fn(rows, K), rel=1e-12)
    np.testing.assert_allclose(tr.grad(fn)(rows, K), central_difference_grad(fn, (rows, K)), rtol=1e-6, atol=1e-9)


def test_an_unsupported_form_inside_the_lambda_is_refused_at_its_line():
    with pytest.raises(tr.TransformError, match=r"transformed_lambda_cases\.py:37:.*\.frobnicate\(\)"):
        tr.grad(case.unsupported_method_inside)(P, K)


def test_checkpoint_of_a_closure_is_refused_with_advice():
    with pytest.raises(tr.TransformError, match=r"transformed_lambda_cases\.py:41:.*reads variables of the code "
                                                 r"around it; pass them to the lambda as arguments"):
        tr.grad(case.checkpoint_of_a_closure)(P, K)
