"""Rules of tr.random's keys and samplers: every transform's, side by side.

A key is integers, and a draw depends on nothing but its key and its static shape: constants to
every derivative.  Three samplers also take values a derivative can flow through:

* ``uniform(key, shape, minval=lo, maxval=hi)`` is ``lo + (hi - lo) * u`` for the unit draw ``u`` of
  the same key (the same bits, so the rule recomputes ``u`` exactly): linear in ``lo`` and ``hi``.
  Where ``hi < lo`` every draw is ``lo`` (JAX's ``max(minval, ...)``), so all of it goes to ``lo``.
* ``permutation(key, x)`` moves ``x``'s entries, and ``choice(key, a, ...)`` gathers ``a``'s (a
  position may be chosen twice): both linear in the array.  Their tangent is the same call on the
  tangent; their adjoint sends each cotangent back to the entry it came from.  Which entry that
  was is the same call on the entries' own flat positions (``np.arange(np.size(x))`` in ``x``'s
  shape): the shuffle and the choice depend only on the key and the shapes, never the values.

vmap: a batch of keys draws once per key, in a loop (JAX's per-key numbers); a key shared by the
batch draws once for all.
"""
import numpy as np

from transformer import random
from transformer import runtime as rt
from transformer.rules import machinery, rule, zero_derivative

_CONSTANTS = ("random.PRNGKey", "random.key", "random.key_data", "random.split", "random.fold_in", "random.bits",
              "random.normal", "random.gumbel", "random.bernoulli", "random.categorical", "random.randint",
              "random.exponential", "random.laplace", "random.logistic", "random.rademacher")
zero_derivative(*_CONSTANTS)


# ------------------------------------------------------------------ reverse mode
@rule("adjoint", "random.uniform", wrt=("minval", "maxval"))
def uniform(z_bar, z, key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    unit = random.uniform(key, shape=shape, dtype=dtype) * (maxval >= minval)
    return rt.unbroadcast(z_bar * (1.0 - unit), minval), rt.unbroadcast(z_bar * unit, maxval)


@rule("adjoint", "random.permutation", wrt=("x",))
def permutation(z_bar, z, key, x, axis=0, independent=False):
    came_from = random.permutation(key, np.reshape(np.arange(np.size(x)), np.shape(x)), axis=axis,
                                   independent=independent)
    # a permutation's adjoint is its inverse: entry came_from[i] of x gets z_bar[i]
    return np.reshape(np.ravel(z_bar)[np.argsort(np.ravel(came_from))], np.shape(x))


@rule("adjoint", "random.choice", wrt=("a",))
def choice(z_bar, z, key, a, shape=(), replace=True, p=None, axis=0):
    came_from = random.choice(key, np.reshape(np.arange(np.size(a)), np.shape(a)), shape=shape, replace=replace,
                              p=p, axis=axis)
    # an entry chosen twice gets both cotangents: a scatter-add
    return np.reshape(rt.add_at(rt.zeros_like(np.ravel(a)), (np.ravel(came_from),), np.ravel(z_bar)), np.shape(a))


# ------------------------------------------------------------------ forward mode
@rule("tangent", *_CONSTANTS, nondifferentiable=True)
def constants():
    """Keys and draws of a key: their derivative is zero, so none carries a tangent."""


@rule("tangent", "random.uniform")
def uniform_tangent(key, minval_dot, maxval_dot, shape=(), dtype=None, minval=0.0, maxval=1.0):
    unit = random.uniform(key, shape=shape, dtype=dtype) * (maxval >= minval)
    return minval_dot + (maxval_dot - minval_dot) * unit


@rule("tangent", "random.permutation")
def permutation_tangent(key, x_dot, axis=0, independent=False):
    return random.permutation(key, x_dot, axis=axis, independent=independent)


@rule("tangent", "random.choice")
def choice_tangent(key, a_dot, shape=(), replace=True, p=None, axis=0):
    return random.choice(key, a_dot, shape=shape, replace=replace, p=p, axis=axis)


# ------------------------------------------------------------------ vmap
# One draw per example's key (or per example's minval, x or p), batch axis first.
machinery("batching", *_CONSTANTS, "random.uniform", "random.permutation", "random.choice", strategy="loop",
          keywords_per_example=True)
