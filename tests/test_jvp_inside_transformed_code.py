"""tr.jvp and tr.vjp called inside transformed code (``tr.jvp(f, (x,), (v,))`` in a loss, or
``out, vjp_fn = tr.vjp(f, x)`` and ``vjp_fn(u)``) are inlined as their generated code, as tr.grad is:
they walked into transformer's own source before and were refused at a line of forward.py or
differentiate.py.  The transforms transformed code cannot apply are refused by name, at the user's
line."""
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


@pytest.mark.parametrize("fn, line, name", [(case.jacfwd_inside, 62, r"tr\.jacfwd"),
                                            (case.linearize_inside, 81, r"tr\.linearize\(\.\.\.\)")])
def test_transforms_code_cannot_apply_are_refused_by_name(fn, line, name):
    with pytest.raises(tr.TransformError, match=rf"transformed_lambda_cases\.py:{line}:\d+: {name} is not supported "
                                                rf"in transformed functions; call it outside"):
        tr.jit(fn)(X)
