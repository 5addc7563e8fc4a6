"""Regressions (the open points of the rule table, 2026-12-03):

* Second derivatives of ``np.linalg.norm`` with ord 2, -2 and 'nuc' raised a ValueError at run
  time (not a TransformError at the user's line): they now differentiate the singular vectors.
  ``jit(grad)`` of these matrix norms did not compile, nor did ``jit`` of one over an axis pair.
* ``vmap`` of ``x @ y`` with examples of ``x`` of rank 3 and ``y`` shared (``in_axes=(0, None)``)
  raised np.dot's "at most two dimensions per example" ValueError: @ of stacks under vmap now has
  helpers of its own, also for its adjoints (vmap of grad).
"""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_hessian
from regressions import singular_norms_and_shared_stacks as case


@pytest.mark.parametrize("fn, shape", [(case.spectral, (3, 4)), (case.smallest, (4, 3)),
                                       (case.nuclear, (3, 4)), (case.nuclear_over_axes, (3, 2, 4))])
def test_second_derivatives_of_singular_value_norms(fn, shape):
    rng = np.random.default_rng(0)
    a, v = rng.uniform(0.1, 0.9, shape), rng.normal(size=shape)
    want = central_difference_hessian(fn, [a]).reshape(a.size, a.size) @ v.ravel()
    _, forward = tr.jvp(tr.grad(fn), (a,), (v,))
    _, back = tr.vjp(tr.grad(fn), a)
    np.testing.assert_allclose(forward.ravel(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(back(v)[0].ravel(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tr.jit(tr.grad(fn))(a), tr.grad(fn)(a), rtol=1e-12, atol=1e-12)


def test_vmap_of_a_stack_times_a_shared_stack():
    rng = np.random.default_rng(1)
    xs, y = rng.normal(size=(5, 2, 3, 4)), rng.normal(size=(2, 4, 3))
    loop = np.stack([case.stack_times_shared(x, y) for x in xs])
    np.testing.assert_allclose(tr.vmap(case.stack_times_shared, in_axes=(0, None))(xs, y), loop)
    for argnum in (0, 1):
        per_example = np.stack([tr.grad(case.stack_times_shared, argnums=argnum)(x, y) for x in xs])
        batched = tr.vmap(tr.grad(case.stack_times_shared, argnums=argnum), in_axes=(0, None))
        np.testing.assert_allclose(batched(xs, y), per_example, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(tr.jit(batched)(xs, y), per_example, rtol=1e-12, atol=1e-12)
