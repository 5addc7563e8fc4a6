"""Rule-table rows of the random family (templates/random.py): tr.random's keys and samplers called
inside transformed code.

A key is the first argument, a raw uint32[2] drawn by the generator (so vmap's examples hold keys
of their own, and in_axes=None shares one).  Keys and draws are constants to derivatives: the rows
multiply them into float arguments, so every derivative check has a derivative to compare and
reads a draw made under the transform.  uniform's bounds, and the arrays permutation and choice
move, are differentiated themselves.  Where the rows say nothing of jax: tr.random's numbers are
compared with jax.random's in tests/test_random.py.
"""
from __future__ import annotations

import numpy as np

from rule_table import F32, Row, U
from transformer import random

NOT_JAX = {"jax": "tr.random's numbers are compared with jax.random's in tests/test_random.py"}


def a_key(r):
    return r.integers(0, 2 ** 32, 2, dtype=np.uint64).astype(np.uint32)


# ------------------------------------------------------------------ keys
def keys_(k, x):
    k1, k2 = random.split(k)
    k3 = random.fold_in(k2, 7)
    grid = random.split(k3, (2, 2))
    seeded = random.fold_in(random.PRNGKey(5), 1)
    bits = random.bits(random.key_data(grid[1, 0]), (3,), np.uint32) / 2.0 ** 32
    return x * random.normal(k1, (3,)) + bits, x * random.uniform(seeded, (3,)) + random.normal(random.key(6))


# ------------------------------------------------------------------ samplers
def samplers(k, x, p, logits):
    k1, k2, k3, k4 = random.split(k, 4)
    kept = np.where(random.bernoulli(k1, p), x, -x)
    noisy = x * random.gumbel(k2, (3,)) + random.randint(k3, (3,), 0, 10)
    picked = random.categorical(k4, logits)[:, None] + random.categorical(k4, logits, axis=0, shape=(2, 3))
    return kept + noisy, picked * x + random.bernoulli(k1, 0.3, (3,)) * x


def samplers_f32(k, x):
    k1, k2 = random.split(k)
    return x * random.normal(k1, (2, 3), dtype=np.float32) + random.uniform(k2, (3,), np.float32)


def more_samplers(k, x):
    k1, k2, k3, k4 = random.split(k, 4)
    return (x * random.exponential(k1, (3,)) + random.laplace(k2, (3,)) * x ** 2,
            random.logistic(k3, (2, 3), np.float32) * x + random.rademacher(k4, (3,)) * x)


def normal_shapes(k, x):
    return x * random.normal(k, 3) + random.normal(k), random.normal(k, ()) * x[0]


# ------------------------------------------------------------------ uniform's bounds
def uniform_bounds(k, lo, hi):
    return random.uniform(k, (2, 3), minval=lo, maxval=hi), np.sin(random.uniform(k, (3,), np.float64, lo, 2.0 * hi))


def uniform_bounds_f32(k, lo, hi):
    # float32 whatever the bounds' type, so central differences step past its rounding
    return random.uniform(k, (2, 3), np.float32, lo, hi) * np.float32(3.0)


def uniform_reversed(k, lo, hi):
    # maxval below minval: every draw is minval (JAX's max(minval, ...))
    return random.uniform(k, (4,), minval=hi + 1.0, maxval=lo) * hi


# ------------------------------------------------------------------ permutation and choice
def permutation_(k, x):
    return (random.permutation(k, x) ** 2, random.permutation(k, x, axis=1) * x,
            random.permutation(k, x, 1, True) + random.permutation(k, 4)[:, None] * x)


def choice_(k, a, p):
    return (random.choice(k, a, (5,)) ** 2, random.choice(k, a, (2,), replace=False, axis=1),
            random.choice(k, a[0], (2, 2), p=p) * a[1, 0], random.choice(k, 3, (2,)) * a[2, 1])


def rows():
    return [
        Row("random_keys", keys_, lambda r: (a_key(r), U(r, 3)), skip=NOT_JAX),
        Row("random_samplers", samplers, lambda r: (a_key(r), U(r, 3), U(r, 3), U(r, 2, 3, lo=-1.0, hi=1.0)),
            skip=NOT_JAX),
        Row("random_samplers_f32", samplers_f32, lambda r: (a_key(r), F32(r, 3)), skip=NOT_JAX),
        Row("random_more_samplers", more_samplers, lambda r: (a_key(r), U(r, 3)), skip=NOT_JAX),
        Row("random_normal_shapes", normal_shapes, lambda r: (a_key(r), U(r, 3)), skip=NOT_JAX),
        Row("random_uniform_bounds", uniform_bounds, lambda r: (a_key(r), U(r, 3, lo=-1.0, hi=0.0), U(r)),
            skip=NOT_JAX, hessian=1),
        Row("random_uniform_bounds_f32", uniform_bounds_f32,
            lambda r: (a_key(r), F32(r, 3, lo=-1.0, hi=0.0), F32(r, lo=1.0, hi=2.0)), skip=NOT_JAX),
        Row("random_uniform_reversed", uniform_reversed, lambda r: (a_key(r), U(r, 4), U(r)), skip=NOT_JAX),
        Row("random_permutation", permutation_, lambda r: (a_key(r), U(r, 4, 3)), skip=NOT_JAX, hessian=1),
        Row("random_choice", choice_, lambda r: (a_key(r), U(r, 3, 4), np.array([0.1, 0.2, 0.3, 0.4])),
            skip=NOT_JAX, wrt=(1,)),
    ]
