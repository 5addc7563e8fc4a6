"""Rules of np.sort and its kin: every transform's, side by side.

Sorting moves values and does no arithmetic, so its derivatives are those of a gather: ``np.sort(x)``
is ``np.take_along_axis(x, p, axis)`` with ``p = np.argsort(x, kind="stable")``.  Its tangent gathers
the tangent through ``p``; its adjoint scatters the cotangent back through ``p`` with
``rt.add_along_axis`` (take_along_axis's adjoint, a scatter-ADD: an index read twice gets both
cotangents).  Both are written with primitives that have rules of their own, so second derivatives
(and vmap of them) follow from the same rules.

Ties: the permutation is the stable argsort's, so the k-th equal entry (in order of position) gets
the k-th cotangent, as JAX's sort (a stable ``lax.sort`` of the operand with an iota) gives.  At a
tie the sort is not differentiable; this is JAX's convention there.

argsort, argpartition, searchsorted and the triangle indices are integers: no derivative.
np.take, np.median, np.percentile and np.quantile are definitions written with these
(templates/definitions.py).
"""
import numpy as np

from transformer import runtime as rt
from transformer.rules import machinery, rule, zero_derivative

zero_derivative("argsort", "argpartition", "searchsorted", "triu_indices", "tril_indices")


# ------------------------------------------------------------------ reverse mode
@rule("adjoint", "sort", wrt=("x",))
def sort(z_bar, z, x, axis=-1, kind=None):
    # the cotangent of the k-th smallest goes back to where it was: a scatter through the stable argsort
    return rt.add_along_axis(rt.zeros_like(x), np.argsort(x, axis=axis, kind="stable"), z_bar, axis)


@rule("adjoint", "partition", wrt=("x",))
def partition(z_bar, z, x, kth, axis=-1):
    """np.partition's order on each side of ``kth`` is NumPy's (unspecified) choice, so the cotangent
    goes through sorted order: entry i of z is the rank-r entry of sort(x) for r its rank in z (stable
    ranks: equal values pair up in order of position, the convention of sort's ties)."""
    in_sorted_order = np.take_along_axis(z_bar, np.argsort(z, axis=axis, kind="stable"), axis=axis)
    return rt.add_along_axis(rt.zeros_like(x), np.argsort(x, axis=axis, kind="stable"), in_sorted_order, axis)


@rule("adjoint", "take_along_axis", wrt=("x",))
def take_along_axis(z_bar, z, x, indices, axis=-1):
    return rt.add_along_axis(rt.zeros_like(x), indices, z_bar, axis)    # an index read twice gets both


@rule("adjoint", "rt.add_along_axis", wrt=("g", "values"))
def add_along_axis(z_bar, z, g, indices, values, axis):
    # linear: g passes through, each value gets the cotangent of the position it was added at
    return rt.unbroadcast(z_bar, g), rt.unbroadcast(np.take_along_axis(z_bar, indices, axis=axis), values)


# ------------------------------------------------------------------ forward mode
@rule("tangent", "argsort", "argpartition", "searchsorted", "triu_indices", "tril_indices", nondifferentiable=True)
def integer_results():
    """Integer results (positions): the derivative is zero, so none carries a tangent."""


@rule("tangent", "sort")
def sort_tangent(x, x_dot, axis=-1, kind=None):
    return np.take_along_axis(x_dot, np.argsort(x, axis=axis, kind="stable"), axis=axis)


@rule("tangent", "partition")
def partition_tangent(x, z, x_dot, kth, axis=-1):
    sorted_dot = np.take_along_axis(x_dot, np.argsort(x, axis=axis, kind="stable"), axis=axis)
    rank = np.argsort(np.argsort(z, axis=axis, kind="stable"), axis=axis, kind="stable")
    return np.take_along_axis(sorted_dot, rank, axis=axis)


@rule("tangent", "take_along_axis")
def take_along_axis_tangent(indices, x_dot, axis=-1):
    return np.take_along_axis(x_dot, indices, axis=axis)


@rule("tangent", "rt.add_along_axis")
def add_along_axis_tangent(g, indices, axis, g_dot, values_dot):
    # linear in both
    return g_dot + rt.add_along_axis(rt.zeros_like(g), indices, values_dot, axis)


# ------------------------------------------------------------------ vmap
# Each example sorts (searches, gathers) along its own axis: one call per example, batch axis first.
machinery("batching", "sort", "partition", "argsort", "argpartition", "take_along_axis", "searchsorted",
          "rt.add_along_axis", strategy="loop")
machinery("batching", "triu_indices", "tril_indices", strategy="create")
