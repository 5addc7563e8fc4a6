"""A tuple of tuples, picked twice (``h[0][0]``), as a Hessian's result of several arguments is read.

Reverse mode gave its gradient as zeros: the inner tuples were displays, not names, so their
cotangents were dropped (``grad`` of ``sum(tr.hessian(g, argnums=(0, 1))(a, b)[0][0])`` was 0).
vmap moved the batch axis of an inner tuple as if it were one array, stacking its arrays.  The
oracle is the closed form and central differences."""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad

A = np.array([0.3, -0.6, 1.1])
B = np.array([0.2, 0.1, -0.5])


def pairs(a):
    return ((a * a, 2 * a), (3 * a, a))


def picked_from_a_helper(a):
    h = pairs(a)
    return np.sum(h[0][0]) + np.sum(h[1][0])


def picked_from_a_display(a):
    h = ((a * a, 2 * a), (3 * a, a))
    return np.sum(h[0][0]) + np.sum(h[1][0])


def picked_in_two_steps(a):
    h = pairs(a)
    row = h[1]
    return np.sum(h[0][0]) + np.sum(row[0])


def g(a, b):
    return np.sum(np.sin(a) * b * b) + np.dot(a, b) ** 3 / 6.0


def hessian_block(a, b):
    h = tr.hessian(g, argnums=(0, 1))(a, b)
    return np.sum(h[0][0] * h[1][1])


@pytest.mark.parametrize("fn", [picked_from_a_helper, picked_from_a_display, picked_in_two_steps])
@pytest.mark.parametrize("how", ["grad", "jit_grad", "jvp"])
def test_the_gradient_through_a_tuple_of_tuples(fn, how):
    want = 2 * A + 3
    if how == "grad":
        got = tr.grad(fn)(A)
    elif how == "jit_grad":
        got = tr.jit(tr.grad(fn))(A)
    else:
        got = np.array([tr.jvp(fn, (A,), (e,))[1] for e in np.eye(3)])
    np.testing.assert_allclose(got, want, rtol=1e-12)


def hessian_block_closed_form(a, b):
    """hessian_block in NumPy: g's d2/da2 and d2/db2 from its formula."""
    s = np.dot(a, b)
    haa = np.diag(-np.sin(a) * b * b) + np.outer(b, b) * s
    hbb = np.diag(2 * np.sin(a)) + np.outer(a, a) * s
    return np.sum(haa * hbb)


def test_the_gradient_of_a_hessian_block_of_two_arguments():
    want = central_difference_grad(hessian_block_closed_form, (A, B))
    np.testing.assert_allclose(tr.grad(hessian_block)(A, B), want, rtol=1e-6, atol=1e-8)
    assert np.max(np.abs(want)) > 0.1       # the zeros it gave would not pass


def test_vmap_keeps_a_tuple_of_tuples():
    batch = np.stack([A, B])
    got = tr.vmap(pairs)(batch)
    want = [pairs(x) for x in batch]
    assert isinstance(got, tuple) and all(isinstance(row, tuple) for row in got)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(got[i][j], np.stack([w[i][j] for w in want]), rtol=1e-15)
