"""Sorting for numba: the forms of np.sort and its kin that numba lacks.

numba sorts a 1-D array (its ``np.sort(x)`` of more dimensions sorts the last axis), has
``np.argsort`` and ``np.argpartition`` of 1-D arrays only, and takes no ``axis=`` in np.sort,
np.argsort or np.partition.  Each helper here moves the axis last (a contiguous copy), runs numba's
1-D function on every row, and moves the axis back; ``axis=None`` sorts the flattened array, as
NumPy does.  argsort is always stable in compiled code (numba's mergesort): NumPy's default
'quicksort' orders ties as it likes, and the derivative rules ask for kind="stable".  np.partition's
order on each side of ``kth`` is unspecified (NumPy's and numba's differ): only the partition holds.

``rt.add_along_axis`` (take_along_axis's adjoint) is a loop over the rows too.
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from .. import runtime as rt


def _is_none(t) -> bool:
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


@register_jitable
def _last_rows(x, axis):
    """``x`` with ``axis`` swapped last, as a C-contiguous (rows, n) array and the swapped shape."""
    moved = np.ascontiguousarray(np.swapaxes(x, axis, x.ndim - 1))
    n = moved.shape[-1]
    return moved.reshape((moved.size // max(n, 1), n)), moved.shape


@register_jitable
def _back(rows, shape, axis):
    moved = rows.reshape(shape)
    return np.ascontiguousarray(np.swapaxes(moved, axis, moved.ndim - 1))


def sort_axis(x, axis):
    return np.sort(x, axis=axis)


@overload(sort_axis)
def _sort_axis(x, axis):
    if _is_none(axis):
        return lambda x, axis: np.sort(np.ascontiguousarray(x).reshape(-1))

    def along(x, axis):
        k = axis % x.ndim
        rows, shape = _last_rows(x, k)
        out = np.empty_like(rows)
        for r in range(rows.shape[0]):
            out[r] = np.sort(rows[r])
        return _back(out, shape, k)
    return along


def argsort_axis(x, axis, kind):
    return np.argsort(x, axis=axis, kind=kind)


@overload(argsort_axis)
def _argsort_axis(x, axis, kind):
    if _is_none(axis):
        return lambda x, axis, kind: np.argsort(np.ascontiguousarray(x).reshape(-1), kind="mergesort")

    def along(x, axis, kind):
        k = axis % x.ndim
        rows, shape = _last_rows(x, k)
        out = np.empty(rows.shape, dtype=np.int64)
        for r in range(rows.shape[0]):
            out[r] = np.argsort(rows[r], kind="mergesort")
        return _back(out, shape, k)
    return along


def partition_axis(x, kth, axis):
    return np.partition(x, kth, axis=axis)


@overload(partition_axis)
def _partition_axis(x, kth, axis):
    if _is_none(axis):
        return lambda x, kth, axis: np.partition(np.ascontiguousarray(x).reshape(-1), kth)

    def along(x, kth, axis):
        k = axis % x.ndim
        rows, shape = _last_rows(x, k)
        out = np.empty_like(rows)
        for r in range(rows.shape[0]):
            out[r] = np.partition(rows[r], kth)
        return _back(out, shape, k)
    return along


def argpartition_axis(x, kth, axis):
    return np.argpartition(x, kth, axis=axis)


@overload(argpartition_axis)
def _argpartition_axis(x, kth, axis):
    if _is_none(axis):
        return lambda x, kth, axis: np.argpartition(np.ascontiguousarray(x).reshape(-1), kth)

    def along(x, kth, axis):
        k = axis % x.ndim
        rows, shape = _last_rows(x, k)
        out = np.empty(rows.shape, dtype=np.int64)
        for r in range(rows.shape[0]):
            out[r] = np.argpartition(rows[r], kth)
        return _back(out, shape, k)
    return along


def take_along_axis(x, indices, axis):
    return np.take_along_axis(x, indices, axis=axis)


@overload(take_along_axis)
def _take_along_axis(x, indices, axis):
    if _is_none(axis):       # the flattened array (indices 1-D)
        return lambda x, indices, axis: np.ascontiguousarray(x).reshape(-1)[indices]
    return lambda x, indices, axis: np.take_along_axis(x, indices, axis)


@overload(rt.add_along_axis)
def _add_along_axis(g, indices, values, axis):
    if _is_none(axis):
        def flat(g, indices, values, axis):
            out = np.ascontiguousarray(g).reshape(-1).copy()
            v = np.ascontiguousarray(np.broadcast_to(values, indices.shape)).reshape(-1)
            n = out.shape[0]
            for j, i in enumerate(np.ascontiguousarray(indices).reshape(-1)):
                out[i + n if i < 0 else i] += v[j]
            return out.reshape(g.shape)
        return flat
    ndim = g.ndim
    dtype = np.result_type(as_dtype(g.dtype), as_dtype(values.dtype))

    def along(g, indices, values, axis):
        k = axis % ndim
        # room shaped like values, with g's length along the axis; summed to g's shape at the end
        shape = np.array(values.shape)
        shape[k] = g.shape[k]
        big = np.zeros(to_fixed_tuple(shape, ndim), dtype=dtype)
        rows, moved_shape = _last_rows(big, k)
        index_rows, _ = _last_rows(np.broadcast_to(indices, values.shape), k)
        value_rows, _ = _last_rows(values, k)
        n = rows.shape[1]
        for r in range(rows.shape[0]):
            for j in range(index_rows.shape[1]):
                i = index_rows[r, j]
                rows[r, i + n if i < 0 else i] += value_rows[r, j]
        return g + rt.unbroadcast(_back(rows, moved_shape, k), g)
    return along
