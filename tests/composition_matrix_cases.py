"""User functions of tests/test_composition_matrix.py (transforms read source): two functions, a
smooth one and one of loops, branches and in-place writes, and each transform applied to each inside
a function of its own, which the matrix's outer transform transforms."""
import numpy as np

import transformer as tr

W = np.array([0.7, -1.2, 0.4])
A = np.array([0.5, 0.3, -0.8])
V = np.array([0.2, -0.4, 0.9])


def f(x):
    return np.sum(W * np.sin(x)) + np.dot(A, x) ** 3 / 6.0


def f_loops(x):
    """Loops, a while loop, a branch on values and in-place writes: the sum of sin(x[k] * x[k + 1])
    around the ring of entries (the branch's other side is never taken near the points swept)."""
    y = np.zeros(3)
    for k in range(3):
        y[k] = x[k] * x[(k + 1) % 3]
    total = 0.0
    i = 0
    while i < 3:
        if y[i] > -100.0:
            total = total + np.sin(y[i])
        else:
            total = total + y[i]
        i += 1
    return total


B_TANGENT = np.array([1.0, 0.5, -0.3])


def f_tree(p):
    """A function of a tuple of two arrays, as JAX code takes its parameters."""
    a, b = p
    return f(a) + 0.5 * np.sum(np.sin(a) * b * b)


def inner_transforms(f, tangent=lambda x: V):
    """Each transform applied to ``f`` inside a function of its own, as JAX code composes them;
    ``tangent``: the jvp's and linearize's tangent (a pytree's is a tuple written in the call)."""
    """Each transform applied to ``f`` inside a function of its own, as JAX code composes them."""
    def inner_jit(x):
        return tr.jit(f)(x)

    def inner_grad(x):
        return tr.grad(f)(x)

    def inner_vjp(x):
        out, pull = tr.vjp(f, x)
        return pull(1.0)[0]

    def inner_jvp(x):
        return tr.jvp(f, (x,), (tangent(x),))[1]

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
        return lin(tangent(x))

    return {"jit": inner_jit, "grad": inner_grad, "vjp": inner_vjp, "jvp": inner_jvp, "vmap": inner_vmap,
            "pmap": inner_pmap, "jacfwd": inner_jacfwd, "jacrev": inner_jacrev, "hessian": inner_hessian,
            "linearize": inner_linearize}


def tree_tangent(x):
    return (V, B_TANGENT)


INNER = {"smooth": inner_transforms(f), "loops": inner_transforms(f_loops),
         "tree": inner_transforms(f_tree, tree_tangent)}


def summed_over_rows(xs):
    return np.sum(tr.vmap(f)(xs))


def inner_jvp_of_grad(x):
    return tr.jvp(tr.grad(f), (x,), (V,))[1]
