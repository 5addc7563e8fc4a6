"""Rule-table rows of the sorting family (templates/sorting.py): np.sort, np.argsort, np.partition,
np.argpartition, np.take_along_axis, np.searchsorted, np.triu_indices / np.tril_indices, and the
definitions on them (np.take, np.median, np.percentile, np.quantile).

Generators draw distinct values (uniform draws), where sorting is differentiable; rows with ties
skip central differences, which average the two one-sided derivatives there, and keep jax's
comparison, whose (stable) convention ours is.  np.partition orders each side of kth as it likes
(NumPy's, numba's and jax's orders differ), so its rows read what a partition fixes: the kth entry,
and order-free sums of each side.
"""
from __future__ import annotations

import numpy as np

from rule_table import BOOLEAN, NO_DERIVATIVE, NO_SECOND, Row


# ------------------------------------------------------------------ np.sort
def sort_last(x): return np.sort(x)                              # noqa: E704
def sort_axis0(x): return np.sort(x, axis=0)                     # noqa: E704
def sort_positional(x): return np.sort(x, 1) * 2.0               # noqa: E704
def sort_none(x): return np.sort(x, axis=None)                   # noqa: E704
def sort_kind(x): return np.sin(np.sort(x, axis=-2, kind="stable"))   # noqa: E704
def sort_weighted(x, w): return np.sum(np.sort(x) * w)          # noqa: E704


# ------------------------------------------------------------------ integer results
def argsort_last(x): return np.argsort(x)                        # noqa: E704
def argsort_axis0(x): return np.argsort(x, axis=0)               # noqa: E704
def argsort_none(x): return np.argsort(x, axis=None, kind="stable")    # noqa: E704
def argpartition_kth(x): return np.sort(np.argpartition(x, 2)[..., :2]).astype(np.float64)   # noqa: E704
def searchsorted_left(a, v): return np.searchsorted(a, v) * 1.0  # noqa: E704  (jax counts in int32)
def searchsorted_right(a, v): return np.searchsorted(a, v, side="right") * 1.0  # noqa: E704


def argsort_gather(x):
    order = np.argsort(x, axis=0)
    return x[order[0]] * 2.0


# ------------------------------------------------------------------ np.partition
def partition_axis0(x):
    z = np.partition(x, 2, axis=0)
    return z[2], np.sum(z[:2] ** 2, axis=0), np.sum(np.sin(z[3:]), axis=0)


def partition_last(x):
    z = np.partition(x, 1)
    return z[..., 1] * 3.0, np.sum(z[..., 2:] ** 2, axis=-1)


def partition_none(x):
    z = np.partition(x, 4, axis=None)
    return z[4], np.sum(z[:4] ** 3), np.sum(np.exp(z[5:]))


# ------------------------------------------------------------------ gathers
def take_flat(x, i): return np.take(x, i)                        # noqa: E704
def take_axis1(x, i): return np.take(x, i, axis=1)               # noqa: E704
def take_axis_neg(x, i): return np.take(x, i, axis=-1) ** 2      # noqa: E704
def take_axis0(x, i): return np.take(x, i, axis=0)               # noqa: E704
def take_along_axis0(x, i): return np.take_along_axis(x, i, axis=0)     # noqa: E704
def take_along_last(x, i): return np.take_along_axis(x, i, -1) * x[..., :1]   # noqa: E704
def take_along_none(x, i): return np.take_along_axis(x, i, axis=None)   # noqa: E704


def take_along_sorted(x):
    order = np.argsort(x, axis=1)
    return np.take_along_axis(x, order, axis=1) * np.arange(1.0, 5.0)


# ------------------------------------------------------------------ order statistics
def median_all(x): return np.median(x)                           # noqa: E704
def median_axis(x): return np.median(x, axis=1)                  # noqa: E704
def median_axis0(x): return np.median(x, axis=0)                 # noqa: E704
def median_keep(x): return np.median(x, axis=-1, keepdims=True)  # noqa: E704
def quantile_all(x): return np.quantile(x, 0.3)                  # noqa: E704
def quantile_axis(x): return np.quantile(x, 0.75, axis=0)        # noqa: E704
def quantile_ends(x): return np.quantile(x, 0.0, axis=1) + np.quantile(x, 1.0, axis=1)   # noqa: E704
def quantile_keep(x): return np.quantile(x, 0.4, axis=1, keepdims=True)   # noqa: E704
def quantile_none_keep(x): return np.quantile(x, 0.6, keepdims=True)      # noqa: E704
def quantile_array(x): return np.quantile(x, np.array([0.1, 0.5, 0.9]), axis=1)   # noqa: E704
def percentile_axis(x): return np.percentile(x, 30.0, axis=0)    # noqa: E704
def percentile_array(x): return np.percentile(x, np.array([25.0, 60.0]))    # noqa: E704


# ------------------------------------------------------------------ triangle indices
def triu_read(x): return x[np.triu_indices(3)]                   # noqa: E704


def triu_named(x):
    iu = np.triu_indices(4, 1)
    return x[iu] * 2.0


def tril_unpacked(x):
    rows, columns = np.tril_indices(3, -1, 4)
    return x[rows, columns] ** 2


def tril_write(x):
    il = np.tril_indices(3)
    y = np.zeros((3, 3))
    y[il] = x[il]
    return y * x


def triu_count(x):
    iu = np.triu_indices(3, 0, 4)
    return np.sum(x[iu]) + iu[0].shape[0]


# ------------------------------------------------------------------ generators
def _apart(rng, *shape, dtype=np.float64):
    """Distinct values in (0.1, 0.9), any two at least 0.4 / size apart: a difference step never
    crosses a tie, which would reorder the sort (uniform draws come close enough for that)."""
    size = int(np.prod(shape))
    spaced = 0.1 + 0.8 * (rng.permutation(size) + 0.25 + 0.5 * rng.uniform(size=size)) / size
    return spaced.reshape(shape).astype(dtype)


def _ties(rng, *shape):
    """Uniform values with ties along the last axis: entries 0 and 2 of each row are equal."""
    x = _apart(rng, *shape)
    x[..., 2] = x[..., 0]
    return x


def _sorted(rng, n):
    return np.sort(_apart(rng, n))


def rows() -> list:
    one = lambda r: (_apart(r, 3, 4),)                                   # noqa: E731
    odd = lambda r: (_apart(r, 5, 3),)                                   # noqa: E731
    stack = lambda r: (_apart(r, 2, 3, 4),)                              # noqa: E731
    ties = {"vjp": "at a tie central differences average the one-sided derivatives; jax checks the "
                   "stable convention", "jvp": "at a tie central differences average the one-sided "
                   "derivatives; jax checks the stable convention", **NO_SECOND("at a tie the gradient jumps")}
    integers = NO_DERIVATIVE(BOOLEAN)
    no_kind = {"jax": "jax.numpy's sort and argsort take no kind= (they are stable)"}
    repeated = lambda r: np.array([0, 2, 2, -1])                   # noqa: E731
    out = [
        Row("sort_last", sort_last, one),
        Row("sort_axis0", sort_axis0, one),
        Row("sort_positional", sort_positional, one),
        Row("sort_none", sort_none, stack),
        Row("sort_stack", sort_kind, stack, skip=no_kind),
        Row("sort_1d", sort_last, lambda r: (_apart(r, 7),)),
        Row("sort_f32", sort_axis0, lambda r: (_apart(r, 3, 4, dtype=np.float32),)),
        Row("sort_weighted", sort_weighted, lambda r: (_apart(r, 3, 4), _apart(r, 4))),
        Row("sort_ties", sort_last, lambda r: (_ties(r, 3, 4),), skip=ties),
        Row("argsort_last", argsort_last, one, skip=integers),
        Row("argsort_axis0", argsort_axis0, one, skip=integers),
        Row("argsort_none", argsort_none, stack, skip={**integers, **no_kind}),
        Row("argsort_gather", argsort_gather, one),
        Row("argpartition_kth", argpartition_kth, lambda r: (_apart(r, 3, 6),), skip=integers),
        Row("searchsorted_left", searchsorted_left, lambda r: (_sorted(r, 6), _apart(r, 3, 4)), skip=integers),
        Row("searchsorted_right", searchsorted_right,
            lambda r: (np.array([0.1, 0.3, 0.3, 0.5, 0.8]), np.array([0.3, 0.05, 0.9, 0.5])), skip=integers),
        Row("partition_axis0", partition_axis0, lambda r: (_apart(r, 6, 3),)),
        Row("partition_last", partition_last, lambda r: (_apart(r, 3, 5),)),
        Row("partition_none", partition_none, stack,
            skip={"jax": "jax.numpy's partition takes no axis=None"}),
        Row("take_flat", take_flat, lambda r: (_apart(r, 3, 4), np.array([0, 5, 5, -1, 11]))),
        Row("take_axis1", take_axis1, lambda r: (_apart(r, 3, 4), repeated(r))),
        Row("take_axis_neg", take_axis_neg, lambda r: (_apart(r, 2, 3, 4), np.array([[1, 1], [3, 0]]))),
        Row("take_axis0", take_axis0, lambda r: (_apart(r, 3, 4), np.array(2))),
        Row("take_along_axis0", take_along_axis0,
            lambda r: (_apart(r, 3, 4), r.integers(0, 3, (5, 4)))),          # repeated rows: a scatter-add
        Row("take_along_last", take_along_last, lambda r: (_apart(r, 3, 4), r.integers(-4, 4, (3, 6)))),
        Row("take_along_broadcast", take_along_axis0, lambda r: (_apart(r, 3, 1), r.integers(0, 3, (2, 4)))),
        Row("take_along_none", take_along_none, lambda r: (_apart(r, 3, 4), np.array([0, 7, 7, 11, -2]))),
        Row("take_along_sorted", take_along_sorted, one),
        Row("median_all", median_all, one),
        Row("median_axis", median_axis, one),             # an even count: the middle two, 1/2 each
        Row("median_axis0", median_axis0, odd),           # an odd count: the middle one
        Row("median_keep", median_keep, stack),
        Row("median_f32", median_axis, lambda r: (_apart(r, 3, 5, dtype=np.float32),)),
        Row("median_ties", median_axis, lambda r: (_ties(r, 3, 4),), skip=ties),
        Row("quantile_all", quantile_all, one),
        Row("quantile_axis", quantile_axis, odd),
        Row("quantile_ends", quantile_ends, one),
        Row("quantile_keep", quantile_keep, stack),
        Row("quantile_none_keep", quantile_none_keep, one),
        Row("quantile_array", quantile_array, lambda r: (_apart(r, 2, 6),)),
        Row("percentile_axis", percentile_axis, odd),
        Row("percentile_array", percentile_array, stack),
        Row("triu_read", triu_read, lambda r: (_apart(r, 3, 3),)),
        Row("triu_named", triu_named, lambda r: (_apart(r, 4, 4),)),
        Row("tril_unpacked", tril_unpacked, lambda r: (_apart(r, 3, 4),)),
        Row("tril_write", tril_write, lambda r: (_apart(r, 3, 3),),
            skip={"jax": "jax arrays are immutable (x[i] = v is written x.at[i].set(v) there)"}),
        Row("triu_count", triu_count, lambda r: (_apart(r, 3, 4),)),
    ]
    return out
