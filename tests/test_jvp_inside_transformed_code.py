"""tr.jvp and tr.vjp called inside transformed code (``tr.jvp(f, (x,), (v,))`` in a loss, or
``out, vjp_fn = tr.vjp(f, x)`` and ``vjp_fn(u)``) are inlined as their generated code, as tr.grad is:
they walked into transformer's own source before and were refused at a line of forward.py or
differentiate.py.  So are jacfwd's and linearize's functions, which were refused by name."""
import numpy as np
import pytest

import transformed_lambda_cases as case
import transformer as tr
from oracles import central_difference_grad, central_difference_hessian

X = np.array([0.3, -0.6, 1.1])


@pytest.mark.parametrize("fn, args", [(case.jvp_inside, (X,)), (case.hessian_vector_product_inside, (X, 1.5)),
                                      (case.vjp_inside, (X,)), (case.vjp_of_two_primals_inside, (X, 0.5 - X))])
@pytest.mark.parametrize("target", ["python", "cpu"])
def test_jvp_inside_is_inlined(fn, args, target):
    np.testing.assert_allclose(tr.jit(fn, target=target)(*args), fn(*args), rtol=1e-12)
    np.testing.assert_allclose(tr.jit(tr.grad(fn), target=target)(*args), central_difference_grad(fn, args),
                               rtol=1e-6, atol=1e-9)


def test_second_order_through_vjp_inside():
    # vjp_inside is f plus the sum of f's gradient: its Hessian holds f's third derivatives
    np.testing.assert_allclose(tr.hessian(case.vjp_inside)(X), central_difference_hessian(case.vjp_inside, (X,)),
                               rtol=1e-5, atol=1e-6)


def test_per_example_gradients_through_jvp_inside():
    batch = np.stack([X, 0.5 * X, -X])
    np.testing.assert_allclose(tr.vmap(tr.grad(case.jvp_inside))(batch),
                               [central_difference_grad(case.jvp_inside, (x,)) for x in batch], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_jacfwd_and_linearize_inside(target):
    # jacfwd's and linearize's functions applied in the code (refused by name before): their code
    # form is inlined, so the outer gradient differentiates them too
    for fn in (case.jacfwd_inside, case.linearize_inside):
        np.testing.assert_allclose(tr.jit(fn, target=target)(X), fn(X), rtol=1e-12)
        np.testing.assert_allclose(tr.jit(tr.grad(fn), target=target)(X), central_difference_grad(fn, (X,)),
                                   rtol=1e-6, atol=1e-9)
