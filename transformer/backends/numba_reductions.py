"""Reductions along axes, for numba.

numba compiles ``np.sum(x)`` and ``np.max(x)`` over a whole array, and
``np.sum(x, axis=k)``, but not ``np.max(x, axis=k)``, ``keepdims=``, tuples of
axes or ``ddof=``.  Each function here is the NumPy meaning, written as plain
NumPy (so a generated module still runs without numba), plus an ``overload``
that numba compiles instead.

Every overload works the same way: move the reduced axes to the end
(``np.transpose``, a view), make the array contiguous and view it as
``(kept, reduced)`` rows, reduce each row with numba's own whole-array
function, and give the result the shape NumPy would.  The number of output
dimensions depends only on ``x.ndim``, the *number* of reduced axes and
``keepdims`` — all known when numba types the call — so the axis values
themselves may be run-time integers; ``keepdims`` must be a constant.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.core.errors import TypingError
from numba.extending import overload
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple


# ------------------------------------------------ the NumPy meaning of each helper
def sum_axis(x, axis, keepdims):
    return np.sum(x, axis=axis, keepdims=keepdims)


def mean_axis(x, axis, keepdims):
    return np.mean(x, axis=axis, keepdims=keepdims)


def prod_axis(x, axis, keepdims):
    return np.prod(x, axis=axis, keepdims=keepdims)


def max_axis(x, axis, keepdims):
    return np.max(x, axis=axis, keepdims=keepdims)


def min_axis(x, axis, keepdims):
    return np.min(x, axis=axis, keepdims=keepdims)


def any_axis(x, axis, keepdims):
    return np.any(x, axis=axis, keepdims=keepdims)


def all_axis(x, axis, keepdims):
    return np.all(x, axis=axis, keepdims=keepdims)


def std_axis(x, axis, keepdims, ddof):
    return np.std(x, axis=axis, keepdims=keepdims, ddof=ddof)


def var_axis(x, axis, keepdims, ddof):
    return np.var(x, axis=axis, keepdims=keepdims, ddof=ddof)


def cumprod_axis(x, axis):
    return np.cumprod(x, axis=axis)


def norm_axis(x, axis, keepdims, ord):
    """``np.linalg.norm`` of vectors along ``axis`` (or Frobenius over two axes)."""
    return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


# --------------------------------------------------- one row at a time, in numba
@njit
def _row_sum(row, unused):
    return np.sum(row)


@njit
def _row_mean(row, unused):
    return np.mean(row)


@njit
def _row_prod(row, unused):
    return np.prod(row)


@njit
def _row_max(row, unused):
    return np.max(row)


@njit
def _row_min(row, unused):
    return np.min(row)


@njit
def _row_any(row, unused):
    return np.any(row)


@njit
def _row_all(row, unused):
    return np.all(row)


@njit
def _row_var(row, ddof):
    centred = row - np.mean(row)
    return np.sum(centred * centred) / (row.size - ddof)


@njit
def _row_std(row, ddof):
    return np.sqrt(_row_var(row, ddof))


@njit
def _row_norm(row, ord):
    return np.linalg.norm(row.astype(np.float64), ord)  # numba norms only floats


@njit
def _row_two_norm(row, unused):
    return np.sqrt(np.sum(row * row))


# ------------------------------------------------------- which axes are reduced
@njit
def _axis_index(axis, ndim):
    if axis < -ndim or axis >= ndim:
        raise ValueError("axis is out of bounds for array dimension")
    return axis + ndim if axis < 0 else axis


@njit
def _reduced_none(axis, ndim):
    return np.ones(ndim, np.bool_)


@njit
def _reduced_one(axis, ndim):
    reduced = np.zeros(ndim, np.bool_)
    reduced[_axis_index(axis, ndim)] = True
    return reduced


@njit
def _reduced_many(axes, ndim):
    reduced = np.zeros(ndim, np.bool_)
    for axis in axes:
        k = _axis_index(axis, ndim)
        if reduced[k]:
            raise ValueError("duplicate value in 'axis'")
        reduced[k] = True
    return reduced


def _axis_kind(axis, ndim):
    """(function marking the reduced axes, how many there are) for numba type ``axis``."""
    if _is_none(axis):
        return _reduced_none, ndim
    if isinstance(axis, types.Integer):
        return _reduced_one, 1
    if isinstance(axis, types.BaseTuple) and all(isinstance(t, types.Integer) for t in axis):
        return _reduced_many, len(axis)
    raise TypingError(f"axis must be None, an int or a tuple of ints, not {axis}")


def _is_none(t) -> bool:
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def constant_bool(value, what):
    """The Python value of a boolean literal type (keepdims must be known when typing)."""
    if isinstance(value, types.BooleanLiteral):
        return value.literal_value
    if _is_none(value):
        return False
    raise TypingError(f"{what} must be a constant True or False under jit")


# ----------------------------------------------------------- the shared overload
@njit
def _as_blocks(x, reduced):
    """``x`` viewed as ``(outer, n, inner)``, reducing over the middle axis.

    When the reduced axes are adjacent (one axis, all axes, ``(1, 2)``...) this
    is a reshape of ``x`` (a view when ``x`` is contiguous); otherwise the
    caller has moved the reduced axes to the end first.
    """
    shape = np.array(x.shape)
    first, last = -1, -1
    for d in range(x.ndim):
        if reduced[d]:
            last = d
            if first < 0:
                first = d
    outer, n, inner = 1, 1, 1
    for d in range(x.ndim):
        if d < first:
            outer *= shape[d]
        elif d > last:
            inner *= shape[d]
        else:
            n *= shape[d]
    return np.ascontiguousarray(x).reshape((outer, n, inner))


@njit
def _moved_to_end(x, reduced, ndim):
    order = np.concatenate((np.nonzero(~reduced)[0], np.nonzero(reduced)[0]))
    return np.transpose(x, to_fixed_tuple(order, ndim))


@njit
def _adjacent(reduced):
    seen_end = False
    for d in range(1, reduced.size):
        if reduced[d - 1] and not reduced[d]:
            seen_end = True
        elif seen_end and reduced[d]:
            return False
    return True


def _reduction(reduce_row, numpy_result_dtype):
    """An overload typer for ``helper(x, axis, keepdims[, param])``."""

    @njit
    def reduce_blocks(blocks, param, out_type):
        # reduce_row is a closure constant, not an argument: numba cannot
        # cache code that receives a function as an argument
        outer, n, inner = blocks.shape
        out = np.empty(outer * inner, out_type)
        for o in range(outer):
            for i in range(inner):
                out[o * inner + i] = reduce_row(blocks[o, :, i], param)
        return out

    def typer(x, axis, keepdims, param=0):
        if not isinstance(x, types.Array):
            return None
        ndim = x.ndim
        mark_reduced, n_reduced = _axis_kind(axis, ndim)
        keep = constant_bool(keepdims, "keepdims")
        out_ndim = ndim if keep else ndim - n_reduced
        out_type = numpy_result_dtype(as_dtype(x.dtype)).type
        may_need_moving = n_reduced > 1 and n_reduced < ndim

        def impl(x, axis, keepdims, param=0):
            reduced = mark_reduced(axis, ndim)
            if may_need_moving and not _adjacent(reduced):
                blocks = _as_blocks(_moved_to_end(x, reduced, ndim), np.sort(reduced))
            else:
                blocks = _as_blocks(x, reduced)
            out = reduce_blocks(blocks, param, out_type)
            shape = np.array(x.shape)
            out_shape = np.where(reduced, 1, shape) if keep else shape[~reduced]
            return _shaped(out, to_fixed_tuple(out_shape, out_ndim))

        return impl

    return typer


def _shaped(flat, shape):
    """``flat`` in ``shape``; a scalar for ``()``, as NumPy reduces every axis without keepdims."""
    return flat.reshape(shape) if shape else flat[0]


@overload(_shaped)
def _shaped_numba(flat, shape):
    if len(shape) == 0:
        return lambda flat, shape: flat[0]
    return lambda flat, shape: flat.reshape(shape)


def _dtype_of(numpy_fn, **kwargs):
    """NumPy's own answer to: what dtype does ``numpy_fn`` give for this input dtype?"""
    return lambda dtype: np.asarray(numpy_fn(np.ones((1, 2), dtype), axis=1, **kwargs)).dtype


_ROWS = {
    sum_axis: (_row_sum, _dtype_of(np.sum)),
    mean_axis: (_row_mean, _dtype_of(np.mean)),
    prod_axis: (_row_prod, _dtype_of(np.prod)),
    max_axis: (_row_max, _dtype_of(np.max)),
    min_axis: (_row_min, _dtype_of(np.min)),
    any_axis: (_row_any, _dtype_of(np.any)),
    all_axis: (_row_all, _dtype_of(np.all)),
    std_axis: (_row_std, _dtype_of(np.std)),
    var_axis: (_row_var, _dtype_of(np.var)),
}
for _helper, (_row, _result_dtype) in _ROWS.items():
    overload(_helper, prefer_literal=True)(_reduction(_row, _result_dtype))


_two_norm = _reduction(_row_two_norm, _dtype_of(np.linalg.norm))
_ord_norm = _reduction(_row_norm, _dtype_of(np.linalg.norm))


@overload(norm_axis, prefer_literal=True)
def _norm_axis(x, axis, keepdims, param=0):  # param: ord (numba wants the typer's names on the impl)
    if isinstance(param, (types.NoneType, types.Omitted)) or param is None:
        return _two_norm(x, axis, keepdims, param)   # 2-norm of vectors, Frobenius of matrices
    if isinstance(axis, types.BaseTuple) or (_is_none(axis) and x.ndim != 1):
        raise TypingError("np.linalg.norm with ord= under jit needs one axis (matrix norms are not supported)")
    return _ord_norm(x, axis, keepdims, param)


@overload(cumprod_axis)
def _cumprod_axis(x, axis):
    # numba has np.cumsum(x, axis) but np.cumprod(x) only
    if not isinstance(x, types.Array) or not isinstance(axis, types.Integer):
        return None
    ndim = x.ndim
    out_type = np.cumprod(np.ones(1, as_dtype(x.dtype))).dtype.type

    def impl(x, axis):
        blocks = _as_blocks(x, _reduced_one(axis, ndim))
        outer, n, inner = blocks.shape
        out = np.empty(blocks.shape, out_type)
        for o in range(outer):
            for i in range(inner):
                running = out_type(1)
                for j in range(n):
                    running *= blocks[o, j, i]
                    out[o, j, i] = running
        return out.reshape(x.shape)

    return impl
