"""Regression: a transform applied to the function jacfwd, jacrev or hessian returns transformed the
user's function itself, silently.  tr.vmap(tr.jacrev(f))(xs) gave f's values, not a Jacobian per
example; tr.jvp(tr.hessian(f), ...) gave f's jvp; tr.jit(tr.jacfwd(f))(x) gave f(x).  These functions
are assembled in Python from calls of generated code, so adding a step to their chain is no
transform of them.  They were refused for a while; now a transform takes their code form
(transformer/derived_code.py), checked here against closed forms and differences."""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad, central_difference_jvp

X = np.array([0.3, -0.6, 1.1])


def f(x):
    return np.sum(np.sin(x) * x) + np.sum(x) ** 3


def test_vmap_of_jacrev_and_jacfwd_gives_a_jacobian_per_example():
    batch = np.stack([X, 0.5 * X, -X])
    want = np.stack([central_difference_grad(f, (x,)) for x in batch])
    np.testing.assert_allclose(tr.vmap(tr.jacrev(f))(batch), want, rtol=1e-7)
    np.testing.assert_allclose(tr.vmap(tr.jacfwd(f))(batch), want, rtol=1e-7)
    np.testing.assert_allclose(tr.vmap(tr.hessian(f))(batch), [hessian(x) for x in batch], rtol=1e-12)


def gradient(x):
    return np.cos(x) * x + np.sin(x) + 3 * np.sum(x) ** 2


def hessian(x):
    return np.diag(2 * np.cos(x) - np.sin(x) * x) + 6 * np.sum(x)


def test_jit_of_jacfwd_is_the_gradient():
    np.testing.assert_allclose(tr.jit(tr.jacfwd(f))(X), gradient(X), rtol=1e-12)
    np.testing.assert_allclose(tr.jit(tr.jacfwd(f), target="python")(X), gradient(X), rtol=1e-12)


def test_jvp_of_jacobians_against_differences():
    direction = np.array([0.2, 1.0, -0.7])
    np.testing.assert_allclose(tr.jvp(tr.jacrev(f), (X,), (direction,))[1], hessian(X) @ direction, rtol=1e-12)
    third = central_difference_jvp(hessian, (X,), (direction,))
    np.testing.assert_allclose(tr.jvp(tr.hessian(f), (X,), (direction,))[1], third, rtol=1e-7, atol=1e-8)


def test_jacrev_of_jacfwd_and_pmap_of_jacrev():
    np.testing.assert_allclose(tr.jacrev(tr.jacfwd(f))(X), hessian(X), rtol=1e-12)
    np.testing.assert_allclose(tr.pmap(tr.jacrev(f))(np.stack([X])), [gradient(X)], rtol=1e-12)


def test_grad_of_a_jacobian_is_refused_as_jax_refuses_it():
    with pytest.raises(TypeError, match="grad requires a scalar output"):
        tr.grad(tr.jacfwd(f))(X)
