"""User functions of tests/test_transformed_lambdas.py (transforms read source): transforms applied
to lambdas inside transformed code, the lambdas reading variables of the code around them."""
import numpy as np

import transformer as tr


def descent_on_a_potential(p, k):
    # a force from a potential, the everyday JAX way: grad of a lambda that closes over k
    for i in range(3):
        force = tr.grad(lambda q: np.sum(np.sin(q) * q * k))(p)
        p = p - 0.1 * force
    return np.sum(p ** 2)


def named_lambda_and_value_and_grad(p, k):
    energy = lambda q: np.sum(np.cos(q * k)) + k * np.sum(q ** 2)    # noqa: E731
    g = tr.grad(energy)(p)
    e, g2 = tr.value_and_grad(lambda q: np.sum(np.sin(q) * k))(p * 2.0)
    return np.sum(g * g) + e + np.sum(g2)


def jitted_lambda(p, k):
    return np.sum(tr.jit(lambda q: q * k + 1.0)(p))


def rows_of_a_batch(P, k):
    rows = tr.vmap(lambda q: np.sum(np.sin(q) * k))(P)
    return np.sum(rows ** 2)


def gradient_in_the_second_argument(p, k):
    return np.sum(tr.grad(lambda a, b: np.sum(a * b * k), argnums=1)(p, p * 2.0))


def unsupported_method_inside(p, k):
    return np.sum(tr.grad(lambda q: np.sum(q.frobnicate() * k))(p))


def checkpoint_of_a_closure(p, k):
    return np.sum(tr.checkpoint(lambda q: np.sin(q) * k)(p))


V = np.array([0.2, -0.4, 0.9])


def potential(x):
    return np.sum(np.sin(x) * x) + np.sum(x) ** 2


def jvp_inside(x):
    out, tangent = tr.jvp(potential, (x,), (V,))
    return tangent + out


def hessian_vector_product_inside(x, k):
    # forward over reverse inside the code: the jvp of a lambda that takes a gradient and reads k
    return np.sum(tr.jvp(lambda q: tr.grad(potential)(q) * k, (x,), (V,))[1] ** 2)


def jacfwd_inside(x):
    return np.sum(tr.jacfwd(potential)(x))


def vjp_inside(x):
    out, pull = tr.vjp(potential, x)
    return np.sum(pull(1.0)[0]) + out


def vector_field(x, y):
    return np.sin(x) * y + x * x


def vjp_of_two_primals_inside(x, y):
    out, pull = tr.vjp(vector_field, x, y)
    x_bar, y_bar = pull(np.cos(out))
    return np.sum(x_bar * y_bar) + np.sum(out)


def linearize_inside(x):
    out, tangent_fn = tr.linearize(potential, x)
    return tangent_fn(V)
