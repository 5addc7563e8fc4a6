"""User functions for composition tests (grad of grad, jvp of grad, hessian...).

Scalar-valued, with second derivatives that exist at the test points; each
exercises something the composition must carry: a loop that tapes values,
a branch, a while loop, in-place writes, norm and solve, a custom_jvp call.
"""
import math

import numpy as np

import transformer as tr

W = np.linspace(-1.0, 1.0, 12).reshape(3, 4)


def vec(n=4, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, n)


# ------------------------------------------------------------ scalar of scalar
def wave(t):
    return math.sin(t) * t ** 2 + math.exp(-t)


def damped(t):
    # no branch: a variable assigned in two branches is taped by grad, and
    # grad of grad stops at a tape (tested as a refusal)
    y = math.exp(-t) * math.cos(3.0 * t) + math.log1p(t * t)
    return y * math.sqrt(1.0 + t * t) + math.tanh(t) ** 3


# --------------------------------------------------------------- of an array
def tanh_quartic(x):
    return np.sum(np.tanh(W @ x + 0.2)) + 0.25 * np.sum(x ** 4)


def taped_loop(x):
    s = 0.3
    for i in range(x.shape[0]):
        s = np.sin(s + x[i]) * 1.1      # s is overwritten: grad tapes it
    return s * s


def branchy(x):
    if np.sum(x) > 0.0:
        y = np.sum(x ** 3) + x[0] * x[1]
    else:
        y = np.sum(np.exp(x)) * x[0]
    return y


def until_large(x):
    s = 0.5
    while s < 4.0:
        s = s * 1.7 + np.sum(x * x)
    return s * np.sum(np.cos(x))


def written_in_place(x):
    y = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        y[i] = x[i] * x[i - 1] + np.sin(y[i - 1])
    return np.sum(y * y)


def early_exit(x):
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.8:
            break
        total = total + np.exp(x[i]) * x[i]
    return total


def norm_and_solve(a, x):
    y = np.linalg.solve(a + 4.0 * np.eye(3), x)
    return np.linalg.norm(x) ** 3 + np.sum(y * x)


@tr.custom_jvp
def softplus(x):
    return np.log(1.0 + np.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return softplus(x), x_dot / (1.0 + np.exp(-x))


def uses_softplus(x):
    return np.sum(softplus(x) * x)


def vector_valued(x):
    return np.sin(x) * np.sum(x ** 2)


def summed_rows(x):
    # grad of a vmap written inside the code: tanh_quartic of each row of x, summed
    rows = tr.vmap(tanh_quartic)(x)
    return np.sum(rows)


def summed_branchy_rows(x):
    rows = tr.vmap(branchy)(x)
    return np.sum(rows)


# (function, args): the array functions differentiate their first argument
SCALAR_CASES = [(wave, (0.7,)), (damped, (0.4,)), (damped, (-0.6,))]
ARRAY_CASES = [
    (tanh_quartic, (vec(),)),
    (taped_loop, (vec(),)),
    (branchy, (vec(seed=1) + 0.5,)),
    (branchy, (vec(seed=1) - 0.5,)),
    (until_large, (vec(),)),
    (written_in_place, (vec(5),)),
    (early_exit, (np.array([0.1, -0.4, 0.3, 0.9, 0.2]),)),
    (norm_and_solve, (np.random.default_rng(3).uniform(-1, 1, (3, 3)), vec(3))),
    (uses_softplus, (vec(),)),
]
