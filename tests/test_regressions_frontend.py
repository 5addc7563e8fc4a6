"""Valid NumPy code never meets an internal error: regressions found in the frontend
(method chains on expressions, lambdas, tuple results of helpers, identity functions,
refusals that name the user's line)."""
import numpy as np
import pytest

from oracles import central_difference_grad
import transformer as tr

A = np.linspace(-1.0, 1.5, 16)
M = np.array([[1.0, 0.5], [-0.25, 2.0]])


def check_grad_vmap_jit(f, x):
    """grad against central differences, vmap against a loop, jit against NumPy."""
    np.testing.assert_allclose(tr.grad(f)(x), central_difference_grad(f, (x,)), rtol=1e-6, atol=1e-8)
    batch = np.stack([x, 2.0 * x, -x])
    np.testing.assert_allclose(tr.vmap(f)(batch), [f(b) for b in batch], rtol=1e-12)
    np.testing.assert_allclose(tr.jit(f, target="python")(x), f(x), rtol=1e-12)


# ------------------------------------------------- 1. chains on expressions
def reshape_then_transpose(a):
    return np.sum(a.reshape(2, 8).T * np.arange(2.0))


def dot_then_transpose(a):
    return np.sum(np.dot(a, a).T * np.array([[1.0, 2.0], [3.0, 4.0]]))


def sum_then_transpose(a):
    return np.sum(a.sum(0).T ** 2)


def sum_of_transpose_twice(a):
    return np.sum((a + a * a).T.T * np.array([[1.0, 2.0], [3.0, 4.0]]))


def helper(a):
    return np.sin(a)


def call_reshape_sum(a):
    return helper(a).reshape(4, 4).T.sum(1)[1:].sum() + helper(a).reshape(4, 4).shape[0]


@pytest.mark.parametrize("f, x", [(reshape_then_transpose, A), (dot_then_transpose, M),
                                  (sum_then_transpose, M), (sum_of_transpose_twice, M),
                                  (call_reshape_sum, A)])
def test_attribute_and_method_chains_on_expressions(f, x):
    check_grad_vmap_jit(f, x)


def test_attribute_chains_compile_with_numba():
    g = tr.jit(tr.grad(dot_then_transpose))
    np.testing.assert_allclose(g(M), central_difference_grad(dot_then_transpose, (M,)), rtol=1e-6)


# ------------------------------------------- 3. a helper's tuple result, indexed
def pair(x):
    return np.sin(x), np.cos(x)


def first_of_pair(x):
    return np.sum(pair(x)[0] * pair(x)[-1])


def last_of_slice(x):
    a, = pair(x)[1:]
    return np.sum(a ** 2) + np.sum(pair(x)[::-1][0])


@pytest.mark.parametrize("f", [first_of_pair, last_of_slice])
def test_indexing_a_helpers_tuple_result(f):
    check_grad_vmap_jit(f, M)
