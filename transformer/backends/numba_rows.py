"""Whole-row kernels for numba: softmax, and a sum of squares, along the last axis, one row at a time.

Written as NumPy, ``softmax`` is five passes over its array, each with an
array of its own: a scale (attention's ``/ np.sqrt(d)``), the row maxima, the
shifted exponentials, the row sums and the division.  On a 256x256 array
those passes cost 19, 25, 124, 28 and 49 us with numba (the broadcasting of
``(n, 1)`` operands is most of the last and some of the exp), where one loop
over rows doing all five on a row while it sits in the L1 cache costs about a
third of that.  ``numba_fusion.fuse_rows`` finds the five statements in the
generated code and calls ``softmax_last_axis`` here instead.

The kernel keeps the unfused code's operations and order (the same row max,
the same vectorised exp, NumPy's pairwise row sum), except that it multiplies
by the reciprocal of the divisor and of the row sum instead of dividing: a
result moves by an ulp at most.  It takes float arrays (a strided view is
copied first) with no divisor or a scalar one that keeps the dtype; anything
else goes through the five passes, as if never fused.  An empty last axis
raises NumPy's error for the max of one.

``sum_of_squares`` is ``np.sum(x ** 2, axis=-1)``: a squared distance, a
Mahalanobis term.  The two statements write the squares out, an array as
large as ``x``, and read them back.  The kernel squares each element as its
row's vector loop loads it and adds the squares in the pairwise order the
compiled sum of the written squares used (NumPy's, for contiguous rows): the
result is the same, bit for bit (``x ** 2`` is ``x * x`` in NumPy and in
numba).  It takes float arrays of two or more dimensions summed along the
last axis without keepdims; anything else is the two statements.  A stack of
contiguous rows in another order than C's (GMM's ``np.einsum`` result, a
transposed view) is read in the order its rows lie in memory, not copied
first: 85 us for GMM's 25000 rows of 10, against 145 with the copy.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple
from numba.np.numpy_support import as_dtype

from .numba_arrays import scalar_like
from .numba_reductions import (_PAIRWISE_BLOCK, _pairwise_block_of_squares, _pairwise_halves, _row_max, _row_sum,
                               constant_bool, max_axis, sum_axis)
from .numba_vecmath import exp as vector_exp
from .numba_vecmath import exp64


def softmax_last_axis(x, divisor):
    """The softmax of ``x / divisor`` (of ``x`` for a divisor of None) along the last axis."""
    scaled = x if divisor is None else x / divisor
    shifted = np.exp(scaled - np.max(scaled, axis=-1, keepdims=True))
    return shifted / np.sum(shifted, axis=-1, keepdims=True)


# Each loop over a row is an njit function of its own: compiled alone, LLVM
# vectorises it (the exp inlined into the loop over rows stayed scalar code,
# 190 us where this is 100).
@njit(error_model="numpy")
def _scaled_row(source, factor, target):
    for j in range(source.size):
        target[j] = source[j] * factor


@njit(error_model="numpy")
def _shifted_exp_row(source, peak, target):
    for j in range(source.size):
        target[j] = exp64(np.float64(source[j] - peak))


# in place, one array: passed the same array twice, the loops above would
# run their scalar versions (LLVM checks the two for overlap at run time)
@njit(error_model="numpy")
def _shifted_exp_in_place(row, peak):
    for j in range(row.size):
        row[j] = exp64(np.float64(row[j] - peak))


@njit(error_model="numpy")
def _scaled_in_place(row, factor):
    for j in range(row.size):
        row[j] = row[j] * factor


def _softmax_kernel(divided: bool):
    """An njit loop over the rows of a 2-D C-contiguous array, writing ``out``.

    ``divided`` is a constant of the closure, so numba compiles only the
    branch taken.  Divisions are multiplications by the reciprocal: a
    division costs as much as the rest of a row's work together (vdivpd,
    about 2 cycles a float), and the reciprocal's rounding moves a result by
    an ulp at most.  The exp runs in float64 and is rounded once into a
    float32 row, as ``vm.exp`` does.
    """
    @njit(error_model="numpy")
    def softmax_rows(rows, divisor, out):
        factor = 1.0 / divisor
        for r in range(rows.shape[0]):
            source, target = rows[r], out[r]
            if divided:
                _scaled_row(source, factor, target)
                _shifted_exp_in_place(target, _row_max(target, 0))
            else:
                _shifted_exp_row(source, _row_max(source, 0), target)
            _scaled_in_place(target, 1.0 / _row_sum(target, 0))
        return out
    return softmax_rows


_SOFTMAX_ROWS = _softmax_kernel(divided=False)
_SOFTMAX_ROWS_DIVIDED = _softmax_kernel(divided=True)


# the unfused statements, for what the kernel does not take
@njit
def _softmax_passes(x):
    shifted = vector_exp(x - max_axis(x, -1, True))
    return shifted / sum_axis(shifted, -1, True)


@njit
def _softmax_passes_divided(x, divisor):
    return _softmax_passes(x / divisor)


_EMPTY_AXIS = "zero-size array to reduction operation maximum which has no identity"


def _is_none(t) -> bool:
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def _kernel_takes(x, divisor) -> bool:
    if not (isinstance(x, types.Array) and x.ndim >= 1 and isinstance(x.dtype, types.Float)):
        return False
    if _is_none(divisor):
        return True
    # a scalar divisor whose division keeps x's dtype (a float64 one makes a
    # float32 array float64: the five passes say how)
    return (isinstance(divisor, (types.Float, types.Integer))
            and np.result_type(as_dtype(x.dtype), as_dtype(divisor)) == as_dtype(x.dtype))


@overload(softmax_last_axis)
def _softmax_last_axis(x, divisor):
    undivided = _is_none(divisor)
    if not _kernel_takes(x, divisor):
        if undivided:
            return lambda x, divisor: _softmax_passes(x)
        return lambda x, divisor: _softmax_passes_divided(x, divisor)
    kernel = _SOFTMAX_ROWS if undivided else _SOFTMAX_ROWS_DIVIDED
    divisor_value = njit((lambda divisor: 1.0) if undivided else (lambda divisor: divisor))

    def impl(x, divisor):
        n = x.shape[-1]
        if n == 0:
            raise ValueError(_EMPTY_AXIS)   # NumPy's np.max of an empty axis, whatever the other axes
        source = np.ascontiguousarray(x)           # a copy only for a strided view
        rows = source.reshape(-1, n)
        out = np.empty(x.shape, x.dtype)
        kernel(rows, divisor_value(divisor), out.reshape(-1, n))
        return out
    return impl


# ------------------------------------------------------------ sum of squares
def sum_of_squares(x, axis, keepdims):
    """``np.sum(x ** 2, axis=axis, keepdims=keepdims)``, as its two statements compute it."""
    return sum_axis(x ** scalar_like(x, 2), axis, keepdims)


@njit
def _squared_row_sums(flat, n, out):
    """``out[r]`` = the sum of row ``r``'s squares (``flat`` holds rows of ``n``), in NumPy's pairwise
    order (numba_reductions' own).  A row of up to 128 is squared as it is loaded, in the same vector
    loop that adds it; a longer row is squared into a buffer first, then summed by halves."""
    squares = np.empty(n if n > _PAIRWISE_BLOCK else 0, flat.dtype)
    zero = np.intp(0)
    for r in range(out.size):
        start = r * n
        if n <= _PAIRWISE_BLOCK:
            total = _pairwise_block_of_squares(flat, start, n)
        else:
            for j in range(n):
                squares[j] = flat[start + j] * flat[start + j]
            total = _pairwise_halves(squares, zero, n)
        out[r] = flat.dtype.type(0) + total      # NumPy adds the row to 0.0, as reduce_spans does


@njit
def _squares_summed(x, axis, keepdims):
    """The two statements, for what the kernel does not take."""
    return sum_axis(x ** scalar_like(x, 2), axis, keepdims)


@overload(sum_of_squares)
def _sum_of_squares(x, axis, keepdims):
    two_passes = _squares_summed
    if not (isinstance(x, types.Array) and x.ndim >= 2 and isinstance(x.dtype, types.Float)
            and isinstance(axis, types.Integer) and constant_bool(keepdims, "keepdims") is False):
        return lambda x, axis, keepdims: two_passes(x, axis, keepdims)
    last, ndim = x.ndim - 1, x.ndim

    def impl(x, axis, keepdims):
        n = x.shape[-1]
        if (axis != last and axis != -1) or n == 0:
            return two_passes(x, axis, keepdims)
        rows = np.ascontiguousarray(x)            # a copy only for a strided view
        out = np.empty(rows.size // n, x.dtype)
        _squared_row_sums(rows.reshape(-1), n, out)
        return out.reshape(x.shape[:-1])

    if x.ndim < 3 or x.layout == "C":
        return impl
    copied = register_jitable(impl)

    def stacked(x, axis, keepdims):
        # a stack of contiguous rows in another order than C's (np.transpose(m, (1, 0, 2)),
        # np.einsum's result): the rows are read in the order they lie in memory, with no copy
        # where nothing lies between them, and each sum is written in its place
        n = x.shape[-1]
        if (axis != last and axis != -1) or n == 0 or x.strides[-1] != x.itemsize or x.flags.c_contiguous:
            return copied(x, axis, keepdims)
        order = _memory_order(x)
        in_memory = np.ascontiguousarray(np.transpose(x, to_fixed_tuple(order, ndim)))
        sums = np.empty(in_memory.size // n, x.dtype)
        _squared_row_sums(in_memory.reshape(-1), n, sums)
        out = np.empty(x.shape[:-1], x.dtype)
        np.transpose(out, to_fixed_tuple(order[:-1], last))[...] = sums.reshape(in_memory.shape[:-1])
        return out
    return stacked


@njit
def _memory_order(x):
    """x's axes with its leading ones sorted by stride, largest first (the order they lie in memory
    for a transposed view), and the last axis kept last."""
    order = np.empty(x.ndim, np.intp)
    order[:-1] = np.argsort(-np.array(x.strides)[:-1], kind="mergesort")
    order[-1] = x.ndim - 1
    return order
