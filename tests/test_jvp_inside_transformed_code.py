"""tr.jvp called inside transformed code (``tr.jvp(f, (x,), (v,))`` in a loss) is inlined as jvp's
generated code, as tr.grad is: it walked into transformer's own source before and was refused at a
line of forward.py.  The transforms transformed code cannot apply are refused by name, at the user's
line."""
import numpy as np
import pytest

import transformed_lambda_cases as case
import transformer as tr
from oracles import central_difference_grad

X = np.array([0.3, -0.6, 1.1])


@pytest.mark.parametrize("fn, args", [(case.jvp_inside, (X,)), (case.hessian_vector_product_inside, (X, 1.5))])
@pytest.mark.parametrize("target", ["python", "cpu"])
def test_jvp_inside_is_inlined(fn, args, target):
    np.testing.assert_allclose(tr.jit(fn, target=target)(*args), fn(*args), rtol=1e-12)
    np.testing.assert_allclose(tr.jit(tr.grad(fn), target=target)(*args), central_difference_grad(fn, args),
                               rtol=1e-6, atol=1e-9)


def test_per_example_gradients_through_jvp_inside():
    batch = np.stack([X, 0.5 * X, -X])
    np.testing.assert_allclose(tr.vmap(tr.grad(case.jvp_inside))(batch),
                               [central_difference_grad(case.jvp_inside, (x,)) for x in batch], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("fn, line, name", [(case.jacfwd_inside, 62, r"tr\.jacfwd"),
                                            (case.vjp_inside, 66, r"tr\.vjp\(\.\.\.\)")])
def test_transforms_code_cannot_apply_are_refused_by_name(fn, line, name):
    with pytest.raises(tr.TransformError, match=rf"transformed_lambda_cases\.py:{line}:\d+: {name} is not supported "
                                                rf"in transformed functions; call it outside"):
        tr.jit(fn)(X)
