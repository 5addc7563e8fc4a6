"""Regression: a transform applied to the function jacfwd, jacrev or hessian returns transformed the
user's function itself, silently.  tr.vmap(tr.jacrev(f))(xs) gave f's values, not a Jacobian per
example; tr.jvp(tr.hessian(f), ...) gave f's jvp; tr.jit(tr.jacfwd(f))(x) gave f(x).  These functions
are assembled in Python from calls of generated code, so adding a step to their chain is no
transform of them: vmap now maps them by a Python loop, and the other transforms refuse them."""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad

X = np.array([0.3, -0.6, 1.1])


def f(x):
    return np.sum(np.sin(x) * x) + np.sum(x) ** 3


def test_vmap_of_jacrev_and_jacfwd_gives_a_jacobian_per_example():
    batch = np.stack([X, 0.5 * X, -X])
    want = np.stack([central_difference_grad(f, (x,)) for x in batch])
    np.testing.assert_allclose(tr.vmap(tr.jacrev(f))(batch), want, rtol=1e-7)
    np.testing.assert_allclose(tr.vmap(tr.jacfwd(f))(batch), want, rtol=1e-7)
    assert tr.vmap(tr.hessian(f))(batch).shape == (3, 3, 3)


@pytest.mark.parametrize("apply", [lambda: tr.jit(tr.jacfwd(f))(X), lambda: tr.jvp(tr.hessian(f), (X,), (X,)),
                                   lambda: tr.jvp(tr.jacrev(f), (X,), (X,)), lambda: tr.grad(tr.jacfwd(f))(X),
                                   lambda: tr.pmap(tr.jacrev(f))(np.stack([X]))])
def test_other_transforms_refuse_them(apply):
    with pytest.raises(tr.TransformError, match="cannot be transformed again"):
        apply()
