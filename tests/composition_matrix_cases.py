"""User functions of tests/test_composition_matrix.py (transforms read source): one function, and each
transform applied to it inside a function of its own, which the matrix's outer transform transforms."""
import numpy as np

import transformer as tr

W = np.array([0.7, -1.2, 0.4])
A = np.array([0.5, 0.3, -0.8])
V = np.array([0.2, -0.4, 0.9])


def f(x):
    return np.sum(W * np.sin(x)) + np.dot(A, x) ** 3 / 6.0


def inner_jit(x):
    return tr.jit(f)(x)


def inner_grad(x):
    return tr.grad(f)(x)


def inner_vjp(x):
    out, pull = tr.vjp(f, x)
    return pull(1.0)[0]


def inner_jvp(x):
    return tr.jvp(f, (x,), (V,))[1]


def inner_vmap(x):
    return tr.vmap(f)(x)


def inner_pmap(x):
    return tr.pmap(f)(x)


def inner_jacfwd(x):
    return tr.jacfwd(f)(x)


def inner_jacrev(x):
    return tr.jacrev(f)(x)


def inner_hessian(x):
    return tr.hessian(f)(x)


def inner_linearize(x):
    out, lin = tr.linearize(f, x)
    return lin(V)


def summed_over_rows(xs):
    return np.sum(tr.vmap(f)(xs))


def inner_jvp_of_grad(x):
    return tr.jvp(tr.grad(f), (x,), (V,))[1]
