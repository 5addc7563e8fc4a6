"""The runtime helpers of reverse mode, for numba.

Generated gradient code calls the helpers in ``transformer.runtime``
(``rt.unbroadcast``, ``rt.pop``...).  They are plain NumPy; here each one
gets an ``overload`` that numba compiles instead, chosen by the argument
*types* (scalar or array, and the array's ``ndim``), which numba knows when
it compiles: the Python helpers ask ``isinstance``/``np.ndim`` at run time,
these overloads ask once, at compile time, and keep only the code that case
needs.

One helper cannot be an overload: the tape.  ``rt.stack()`` is an empty list
whose item type numba can only learn from the first value pushed, and numba
learns it only from a method call on the list itself.  So ``numba_lowering.lower_tapes`` rewrites
``h_stack = rt.stack()`` into ``h_stack = []`` and ``h_stack = rt.push(h_stack, h)`` into
``h_stack.append(h)``.  The list is numba's own, made inside the compiled function, whose
operations compile inline; a ``numba.typed.List`` calls into its C implementation for each one:
60,000 pushes, tops and pops of 14-float arrays took 12.5 ms that way and 5.8 ms this way (of
floats, 5.3 and 0.35 ms), and the LSTM benchmark's gradient went from 17.0 to 10.2 ms.

Reductions and broadcasts in any number of dimensions share one walk: the
big array (``x`` of ``expand_to``, ``g`` of ``unbroadcast``) is visited in C
order while an offset follows the element of the small array it broadcasts
from (stride 0 along the broadcast dimensions).  A walk costs one add per
element; no index arrays are built except where an element's group is
walked twice (``prod_vjp``).  One case has a loop of its own: a cotangent
summed over leading rows (a bias's), the same additions in the same order.
"""
from __future__ import annotations

import numpy as np
from numba import njit, typeof, types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.cpython.listobj import ListInstance
from numba.extending import intrinsic, overload, register_jitable
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from .. import runtime as rt
from .numba_arrays import dot as _dot     # np.dot with NumPy's dtype promotion (integers too)
from .numba_arrays import extremum_vjp_added, unbroadcast_product
from .numba_arrays import matmul as _matmul   # @ of stacks of matrices


# ------------------------------------------------------------- typing helpers
def _is_array(t) -> bool:
    return isinstance(t, types.Array) and t.ndim > 0


def _is_none(t) -> bool:
    # an argument left out reaches an overload as its Python default (None) itself
    return t is None or isinstance(t, types.NoneType) or (isinstance(t, types.Omitted) and t.value is None)


def _float_class(t):
    """The NumPy scalar class of the floating dtype a cotangent of ``t`` has (ints -> float64)."""
    dtype = t.dtype if isinstance(t, types.Array) else t
    if isinstance(dtype, (types.Float, types.Complex)):
        return as_dtype(dtype).type
    return np.float64


def _axis_kind(axis) -> str:
    """What ``axis`` names: "none" (every axis), "one" (an int) or "tuple" (of ints)."""
    if _is_none(axis):
        return "none"
    if isinstance(axis, types.Omitted):
        axis = typeof(axis.value)
    if isinstance(axis, types.Integer):
        return "one"
    if isinstance(axis, types.BaseTuple) and all(isinstance(a, types.Integer) for a in axis):
        return "tuple"
    raise TypingError(f"axis must be None, an int or a tuple of ints, not {axis}")


# --------------------------------------------------- the broadcast walk (njit)
@njit(cache=True)
def _shape_array(shape):
    """A tuple shape as an intp array (``()`` -> ``[1]``: a scalar is walked as one element)."""
    out = np.ones(max(len(shape), 1), np.intp)
    for d in range(len(shape)):
        out[d] = shape[d]
    return out


@njit(cache=True)
def _strides_over(big, small):
    """C strides (in elements) of an array of shape ``small`` laid over ``big`` dim by dim, 0 where it broadcasts."""
    strides = np.zeros(big.size, np.intp)
    step = 1
    for d in range(big.size - 1, -1, -1):
        if small[d] != 1:
            strides[d] = step
            step *= small[d]
    return strides


@njit(cache=True)
def _trailing(big, small_shape):
    """``small_shape`` aligned to the last dims of ``big`` (NumPy broadcasting): its size per big dim."""
    small = np.ones(big.size, np.intp)
    lead = big.size - len(small_shape)
    for d in range(len(small_shape)):
        small[lead + d] = small_shape[d]
    return small


@njit(cache=True)
def _without_axes(big, small_shape, reduced):
    """The sizes of a reduction's result, which lost the ``reduced`` dims of ``big``, per big dim."""
    small = np.ones(big.size, np.intp)
    j = 0
    for d in range(big.size):
        if not reduced[d]:
            small[d] = small_shape[j]
            j += 1
    return small


@njit(cache=True)
def _advance(index, offset, big, strides):
    """Step the odometer ``index`` over all dims but the last; return the small array's new offset."""
    d = big.size - 2
    while d >= 0:
        index[d] += 1
        offset += strides[d]
        if index[d] < big[d]:
            return offset
        offset -= strides[d] * big[d]
        index[d] = 0
        d -= 1
    return offset


# The walks below go over ``big`` a row (its last dim) at a time, through a 2-D
# view of the flat array: numba indexes ``rows[r, j]`` with less work than
# ``flat[base + j]``, and a row that reads one element of ``small`` (step 0)
# fills, or sums in a register.  Expanding a (5000, 100) cotangent over
# (5000, 100, 8) took 2.5 ms with flat indices, 0.9 ms so (a view per row
# was worse: 6 ms, an array structure per 8 elements).
@njit(cache=True)
def _rows(flat, big, strides):
    """The flat array (shape ``big``) as rows of its last dim, the small array's step along a row,
    and the odometer ``_advance`` steps from row to row (no rows where the last dim is empty)."""
    inner = big[big.size - 1]
    rows = flat.reshape((0, 0)) if inner == 0 else flat.reshape((flat.size // inner, inner))
    return rows, strides[big.size - 1], np.zeros(big.size, np.intp)


@njit(cache=True)
def _gather(small, strides, big, out):
    """``out`` (flat, shape ``big``) = the flat ``small`` broadcast over it."""
    rows, step, index = _rows(out, big, strides)
    offset = 0
    for r in range(rows.shape[0]):
        if step == 0:
            value = small[offset]
            for j in range(rows.shape[1]):
                rows[r, j] = value
        else:
            for j in range(rows.shape[1]):
                rows[r, j] = small[offset + j * step]
        offset = _advance(index, offset, big, strides)


@njit(cache=True)
def _scatter_add(values, strides, big, small):
    """``small`` (flat) += the flat ``values`` (shape ``big``) summed over the dims ``small`` broadcasts along."""
    rows, step, index = _rows(values, big, strides)
    offset = 0
    for r in range(rows.shape[0]):
        if step == 0:             # the same additions in the same order, in a register
            total = small[offset]
            for j in range(rows.shape[1]):
                total += rows[r, j]
            small[offset] = total
        else:
            for j in range(rows.shape[1]):
                small[offset + j * step] += rows[r, j]
        offset = _advance(index, offset, big, strides)


def _flat(v):
    """``v`` as a flat C-order array (a view when it already is one); a scalar as one element."""
    return np.ravel(v)


@overload(_flat)
def _flat_numba(v):
    if isinstance(v, types.Array):
        return lambda v: v.ravel()   # a view for C-layout arrays, a copy otherwise
    return lambda v: np.full(1, v)


def _small_sizes(big, small, axis, keepdims):
    """Per dim of ``big`` (a shape array), the size the reduced value ``small`` has there."""


@overload(_small_sizes)
def _small_sizes_numba(big, small, axis, keepdims):
    if not _is_array(small):
        return lambda big, small, axis, keepdims: np.ones(big.size, np.intp)
    kind = _axis_kind(axis)
    if kind == "none":
        return lambda big, small, axis, keepdims: _trailing(big, small.shape)
    if kind == "one":
        def one_axis(big, small, axis, keepdims):
            if keepdims:
                return _trailing(big, small.shape)
            reduced = np.zeros(big.size, np.bool_)
            reduced[axis % big.size] = True
            return _without_axes(big, small.shape, reduced)
        return one_axis

    def many_axes(big, small, axis, keepdims):
        if keepdims:
            return _trailing(big, small.shape)
        reduced = np.zeros(big.size, np.bool_)
        for a in axis:
            reduced[a % big.size] = True
        return _without_axes(big, small.shape, reduced)
    return many_axes


# ------------------------------------------------------------ cotangent basics
@overload(rt.zeros_like)
def zeros_like(x):
    cls = _float_class(x)
    if _is_array(x):
        return lambda x: np.zeros(x.shape, cls)
    return lambda x: cls(0)


@overload(rt.scalar_seed)
def scalar_seed(out):
    cls = _float_class(out)
    if _is_array(out):
        message = (f"grad requires a scalar output, but the function returned a {out.ndim}-D array; "
                   f"use vjp or jacrev for non-scalar outputs")

        def refuse(out):
            # A condition numba cannot fold away: the seed keeps a scalar
            # type, so the rest of the function still compiles.
            if out.size >= 0:
                raise TypeError(message)
            return cls(1)
        return refuse
    return lambda out: cls(1)


@overload(rt.copy)
def copy(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    return lambda x: x


@overload(rt.has_cotangent)
def has_cotangent(x):
    floating = isinstance(x.dtype if isinstance(x, types.Array) else x, (types.Float, types.Complex))
    return lambda x: floating


@overload(rt.align_batch)
def align_batch(x):
    if _is_array(x):
        return lambda x: np.expand_dims(x, -1)
    return lambda x: x


@overload(rt.unbroadcast)
def unbroadcast(g, x):
    if not _is_array(g):
        if not _is_array(x):
            return lambda g, x: g
        return lambda g, x: np.full(x.shape, g)
    if not _is_array(x):
        return lambda g, x: g.sum()
    if g.ndim < x.ndim:       # g broadcasts up to x
        return lambda g, x: rt.expand_to(g, x)

    def reduce(g, x):
        if g.ndim == x.ndim and g.shape == x.shape:
            return g         # the common case: nothing was broadcast, so no copy
        big = _shape_array(g.shape)
        small = _trailing(big, x.shape)
        if _broadcast_rows(big, small):
            return _row_sum(_flat(g), x.size).reshape(x.shape)
        out = np.zeros(x.shape, g.dtype)
        _scatter_add(_flat(g), _strides_over(big, small), big, out.reshape(-1))
        return out
    return reduce


@njit(cache=True)
def _broadcast_rows(big, small):
    """Whether ``small`` (sizes per dim of ``big``) is 1 along some leading dims and equal to
    ``big`` along the rest: ``big`` is then rows of ``small``'s elements, as a bias's
    cotangent is."""
    d = 0
    while d < big.size and small[d] == 1:
        d += 1
    while d < big.size and small[d] == big[d]:
        d += 1
    return d == big.size


@njit(cache=True)
def _row_sum(values, width):
    """The sum of the rows of the flat ``values``, ``width`` elements each.

    The same additions, in the same order, as ``_scatter_add`` makes for this
    case, in 5 us against the general walk's 30 us for a 128x256 cotangent.
    Each row is a view indexed by the inner loop's own counter: indexed as
    ``values[start + j]`` the loop took 16 us (both forms compile to vector
    adds; the computed index keeps numba's negative-index checks around them)."""
    row_sum = np.zeros(width, values.dtype)
    if width == 0:                # no elements, no rows to step over
        return row_sum
    for start in range(0, values.size, width):
        row = values[start:start + width]
        for j in range(width):
            row_sum[j] += row[j]
    return row_sum


@overload(unbroadcast_product)
def _unbroadcast_product(a, b, like, then=None):
    chained = not _is_none(then)
    target = then if chained else like
    if not (_is_array(a) and _is_array(b) and _is_array(like) and _is_array(target)
            and isinstance(a.dtype, types.Float) and a.dtype == b.dtype and a.layout == b.layout == "C"
            and min(a.ndim, b.ndim, target.ndim) > 0 and like.ndim <= max(a.ndim, b.ndim)
            and target.ndim <= like.ndim):
        if chained:
            return lambda a, b, like, then=None: rt.unbroadcast(rt.unbroadcast(a * b, like), then)
        return lambda a, b, like, then=None: rt.unbroadcast(a * b, like)
    # All of it is one kernel cached on disk, compiled once per dtype and ranks, which takes each
    # operand flat with its shape: a function that calls it compiles nothing else for it (the
    # product and its unbroadcasts written here were 4 s of k-means' compile, measured).
    if chained:
        return lambda a, b, like, then=None: _product_summed(
            a.ravel(), a.shape, b.ravel(), b.shape, like.shape, then.shape).reshape(then.shape)
    return lambda a, b, like, then=None: _product_summed(
        a.ravel(), a.shape, b.ravel(), b.shape, like.shape, like.shape).reshape(like.shape)


@njit(cache=True)
def _product_summed(a, a_shape, b, b_shape, like_shape, target_shape):
    """``unbroadcast(unbroadcast(a * b, like), target)``, flat, for ``a`` and ``b`` flat of shapes
    ``a_shape`` and ``b_shape``.  One walk with each product added as it is computed where the
    product has the larger operand's shape, ``like`` is that shape or the target's, and the sum
    is over leading axes: _row_sum's case, whose adds the walk makes in the same order.  Anything
    else is the product written out, then summed as rt.unbroadcast sums it."""
    big, small = _shape_array(a_shape), _shape_array(b_shape)
    big_values, small_values = a, b
    # the operand of the product's shape: the one of more dims, or of more elements at the same
    # rank (the other broadcasts into it; a * b is b * a to the bit)
    if len(b_shape) > len(a_shape) or (len(b_shape) == len(a_shape) and b.size > a.size):
        big, small, big_values, small_values = small, big, b, a
    small = _trailing(big, small)
    like, target = _shape_array(like_shape), _shape_array(target_shape)
    wanted = _trailing(big, target)
    if (big[big.size - 1] > 0 and _fits_inside(small, big) and _broadcast_rows(big, wanted)
            and wanted[wanted.size - 1] == big[big.size - 1] and (_same_sizes(like, big) or _same_sizes(like, target))):
        out = np.zeros(np.prod(wanted), big_values.dtype)
        _add_product_rows(big_values, small_values, _strides_over(big, small), big, out)
        return out
    # else the product written out over the shape it broadcasts to, then each sum as
    # rt.unbroadcast takes it: the same helpers, the same adds
    a_sizes, b_sizes = _trailing(big, _shape_array(a_shape)), _trailing(big, _shape_array(b_shape))
    product_shape = np.where(a_sizes == 1, b_sizes, a_sizes)     # (a dim of 0 meets 1 as 0)
    product = np.empty(np.prod(product_shape), a.dtype)
    factor = np.empty(product.size, a.dtype)
    _gather(a, _strides_over(product_shape, a_sizes), product_shape, product)
    _gather(b, _strides_over(product_shape, b_sizes), product_shape, factor)
    product *= factor
    return _summed_to(_summed_to(product, product_shape, like), like, target)


@njit(cache=True)
def _summed_to(values, big, small_shape):
    """rt.unbroadcast of the flat ``values`` (shape ``big``) to ``small_shape``, flat."""
    if _same_sizes(small_shape, big):            # the same shape: the values themselves
        return values
    small = _trailing(big, small_shape)
    if _broadcast_rows(big, small):
        return _row_sum(values, np.prod(small))
    out = np.zeros(np.prod(small), values.dtype)
    _scatter_add(values, _strides_over(big, small), big, out)
    return out


@njit(cache=True)
def _same_sizes(one, other):
    """Whether two shapes (as arrays) are the same, rank included."""
    return one.size == other.size and np.all(one == other)


@njit(cache=True)
def _fits_inside(small, big):
    """Whether an array of sizes ``small`` per dim of ``big`` broadcasts into ``big`` without growing it."""
    for d in range(big.size):
        if small[d] != 1 and small[d] != big[d]:
            return False
    return True


@njit(cache=True)
def _add_product_rows(values, factors, strides, big, out):
    """``out`` (flat, ``w`` elements) += each row of ``w`` elements of ``values * factors`` (flat,
    shape ``big``; ``factors`` broadcast over it by ``strides``), row after row: the adds
    ``_row_sum`` makes on the written product, in the same order."""
    rows, step, index = _rows(values, big, strides)
    width, length = out.size, rows.shape[1]
    one_per_row = step == 0 and factors.size == rows.shape[0]   # a factor per row of big's last dim
    base = 0          # where the row's elements go in out: rows of big's last dim tile out's w
    offset = 0
    for r in range(rows.shape[0]):
        if one_per_row:
            factor = factors[r]
            for j in range(length):
                out[base + j] += rows[r, j] * factor
        else:
            if step == 0:
                factor = factors[offset]
                for j in range(length):
                    out[base + j] += rows[r, j] * factor
            else:
                for j in range(length):
                    out[base + j] += rows[r, j] * factors[offset + j * step]
            offset = _advance(index, offset, big, strides)
        base += length
        if base == width:
            base = 0


@overload(rt.expand_to)
def expand_to(g, x, axis=None, keepdims=False):
    cls = _float_class(g)
    if not _is_array(x):
        if _is_array(g):
            return lambda g, x, axis=None, keepdims=False: cls(g.ravel()[0])
        return lambda g, x, axis=None, keepdims=False: cls(g)
    if not _is_array(g):
        def fill(g, x, axis=None, keepdims=False):
            out = np.empty(x.shape, cls)
            out.fill(g)
            return out
        return fill

    if g.ndim > x.ndim:
        raise TypingError(f"expand_to: a {g.ndim}-D cotangent cannot expand to a {x.ndim}-D value")

    def expand(g, x, axis=None, keepdims=False):
        if g.ndim == x.ndim and g.shape == x.shape:
            return g.astype(cls)   # a fresh array: callers may write into it
        big = _shape_array(x.shape)
        out = np.empty(x.shape, cls)
        _gather(_flat(g), _strides_over(big, _small_sizes(big, g, axis, keepdims)), big, out.reshape(-1))
        return out
    return expand


# ------------------------------------------------------------------ the tape
@intrinsic
def _take_last(typingctx, tape):
    """The last entry of a list, removed: its references move to the caller.  numba's own
    ``list.pop`` increfs each array in the entry and then decrefs it again as it clears the
    slot, and a tape entry is a tuple of up to dozens of arrays (vjp.py pushes what one
    statement block needs as one tuple), so a backward sweep spent most of its time there:
    2046 pops of a 22-array entry took 1.5 ms against 0.35 ms this way.  The slot is zeroed (the
    list's destructor decrefs every slot up to its size, and the size drops below it anyway)
    and the storage is not shrunk: a tape is emptied once, by the sweep that reads it, and is
    freed with it."""
    if not isinstance(tape, types.List):
        return None

    def codegen(context, builder, signature, args):
        entries = ListInstance(context, builder, signature.args[0], args[0])
        cgutils.guard_zero(context, builder, entries.size, (IndexError, "pop from an empty tape"))
        last = builder.sub(entries.size, entries.size.type(1))
        entry = entries.getitem(last)
        entries.zfill(last, entries.size)
        entries.size = last
        return entry
    return tape.dtype(tape), codegen


@overload(rt.pop)
def pop(tape):
    if isinstance(tape, types.List) and not tape.reflected:
        return lambda tape: _take_last(tape)
    return lambda tape: tape.pop()


@overload(rt.top)
def top(tape):
    return lambda tape: tape[-1]


@overload(rt.add_to_top)
def add_to_top(tape, value):
    def add(tape, value):
        tape[-1] = tape[-1] + value
        return tape
    return add


# ------------------------------------------------------ adjoints of products
@overload(rt.dot_vjp_x)
def dot_vjp_x(g, x, y):
    if not _is_array(x):
        return (lambda g, x, y: np.sum(g * y)) if _is_array(y) else (lambda g, x, y: g * y)
    if not _is_array(y) or (x.ndim == 1 and y.ndim == 1):
        return lambda g, x, y: g * y
    _check_dot(x, y)
    if y.ndim == 1:
        return lambda g, x, y: np.outer(g, y)
    if x.ndim == 1:       # g y^T as y g: BLAS reads y as stored, no transposed view
        return lambda g, x, y: np.dot(y, g)
    return lambda g, x, y: np.dot(g, np.transpose(y))


@overload(rt.dot_vjp_y)
def dot_vjp_y(g, x, y):
    if not _is_array(y):
        return (lambda g, x, y: np.sum(g * x)) if _is_array(x) else (lambda g, x, y: g * x)
    if not _is_array(x) or (x.ndim == 1 and y.ndim == 1):
        return lambda g, x, y: g * x
    _check_dot(x, y)
    if x.ndim == 1:
        return lambda g, x, y: np.outer(x, g)
    if y.ndim == 1:       # x^T g as g x: BLAS reads x as stored, no transposed view
        return lambda g, x, y: np.dot(g, x)
    return lambda g, x, y: np.dot(np.transpose(x), g)


def _swapped(a):
    """``np.swapaxes(a, -1, -2)``."""
    return np.swapaxes(a, -1, -2)


@overload(_swapped)
def _swapped_numba(a):
    ndim = a.ndim

    def swap_last_two(a):
        order = np.arange(ndim)
        order[-1], order[-2] = ndim - 2, ndim - 1
        # a view: nl.matmul hands BLAS each matrix of a 3-D stack as it lies (and copies deeper stacks)
        return np.transpose(a, to_fixed_tuple(order, ndim))
    return swap_last_two


def _with_axis(g, at):
    """``g`` with a new axis of length 1 at position ``at`` (-1 or -2)."""
    return np.expand_dims(g, at)


@overload(_with_axis)
def _with_axis_numba(g, at):
    ndim = g.ndim + 1

    def reshaped(g, at):
        shape = np.ones(ndim, np.intp)
        shape[:at] = np.array(g.shape)[:ndim + at]
        if at == -2:
            shape[-1] = g.shape[-1]
        return np.ascontiguousarray(g).reshape(to_fixed_tuple(shape, ndim))
    return reshaped


@overload(rt.matmul_vjp_x)
def matmul_vjp_x(g, x, y):
    if x.ndim <= 2 and y.ndim <= 2:
        return lambda g, x, y: rt.dot_vjp_x(g, x, y)
    # a 1-D operand as a row (x) or a column (y), g with the axis it lost, then stacks of matrices
    if x.ndim == 1:
        return lambda g, x, y: rt.unbroadcast(_matmul(_with_axis(g, -2), _swapped(y)),
                                              x.reshape((1, x.size))).reshape(x.shape)
    if y.ndim == 1:
        return lambda g, x, y: _with_axis(g, -1) * y
    return lambda g, x, y: rt.unbroadcast(_matmul(g, _swapped(y)), x)


@overload(rt.matmul_vjp_y)
def matmul_vjp_y(g, x, y):
    if x.ndim <= 2 and y.ndim <= 2:
        return lambda g, x, y: rt.dot_vjp_y(g, x, y)
    if x.ndim == 1:
        return lambda g, x, y: rt.unbroadcast(_with_axis(x, -1) * _with_axis(g, -2), y)
    if y.ndim == 1:
        return lambda g, x, y: rt.unbroadcast(_matmul(_swapped(x), _with_axis(g, -1)),
                                              y.reshape((y.size, 1))).reshape(y.shape)
    return lambda g, x, y: rt.unbroadcast(_matmul(_swapped(x), g), y)


@njit(cache=True)
def _rows_of(a):
    """``a`` as a C-order matrix: a row per entry but its last axis (np.inner's contracted one)."""
    return np.ascontiguousarray(a).reshape((-1, a.shape[-1]))


@overload(rt.inner_vjp_x)
def inner_vjp_x(g, x, y):
    if not _is_array(x):
        return (lambda g, x, y: np.sum(g * y)) if _is_array(y) else (lambda g, x, y: g * y)
    if not _is_array(y):
        return lambda g, x, y: g * y

    def contracted(g, x, y):
        rows = np.ascontiguousarray(g).reshape((x.size // x.shape[-1], y.size // y.shape[-1]))
        return _dot(rows, _rows_of(y)).reshape(x.shape)
    return contracted


@overload(rt.inner_vjp_y)
def inner_vjp_y(g, x, y):
    if not _is_array(y):
        return (lambda g, x, y: np.sum(g * x)) if _is_array(x) else (lambda g, x, y: g * x)
    if not _is_array(x):
        return lambda g, x, y: g * x

    def contracted(g, x, y):
        rows = np.ascontiguousarray(g).reshape((x.size // x.shape[-1], y.size // y.shape[-1]))
        return _dot(np.ascontiguousarray(rows.T), _rows_of(x)).reshape(y.shape)
    return contracted


# ------------------------------------ products with one batched operand (vmap)
# The batch axis is last; an example's rank is the batched operand's ndim - 1,
# which numba knows here.  A 2-D example loops over its leading axis (a few
# rows), never over the examples.
def _check_example_rank(batched):
    if batched.ndim > 3:
        raise TypingError("np.dot under vmap supports examples of rank 0, 1 and 2")


def _check_factor(unbatched):
    if unbatched.ndim > 2:
        raise TypingError("np.dot gradients support 1-D and 2-D operands")


@overload(rt.dot_batched_x)
def dot_batched_x(x, y):
    _check_example_rank(x)
    if x.ndim == 1:
        return (lambda x, y: np.expand_dims(y, -1) * x) if _is_array(y) else (lambda x, y: x * y)
    if not _is_array(y):
        return lambda x, y: x * y
    _check_factor(y)
    if x.ndim == 2:         # examples (n,) as the columns of x: one product
        return lambda x, y: np.dot(np.transpose(y), x)

    def rows(x, y):          # examples (m, n): one product per row i, all examples at once
        first = np.dot(np.transpose(y), x[0])
        out = np.empty((x.shape[0],) + first.shape, first.dtype)
        out[0] = first
        for i in range(1, x.shape[0]):
            out[i] = np.dot(np.transpose(y), x[i])
        return out
    return rows


# @ with one batched factor: np.dot's products where an example and the other factor have at most
# two dimensions (there @ is np.dot); past that, @ of each example (numba has no broadcasting @ of
# stacks but numba_arrays.matmul, which these call once per example)
def _per_example(product, batched_at):
    """A jitted ``f(a, b, c)`` stacking ``product`` of each example (batch axis last) of argument
    ``batched_at`` (0 or 1; "both" for arguments 0 and 1 together), the others passed whole."""
    if batched_at == 0:
        def example(a, b, k):
            return a[..., k], b
    elif batched_at == 1:
        def example(a, b, k):
            return a, b[..., k]
    else:
        def example(a, b, k):
            return a[..., k], b[..., k]
    example = register_jitable(example)
    count_from = 1 if batched_at == 1 else 0

    def per_example(a, b, c):
        n = (a, b)[count_from].shape[-1]
        first_a, first_b = example(a, b, 0)
        first = product(first_a, first_b, c)
        out = np.empty(first.shape + (n,), first.dtype)
        out[..., 0] = first
        for k in range(1, n):
            a_k, b_k = example(a, b, k)
            out[..., k] = product(a_k, b_k, c)
        return out
    return per_example


@register_jitable
def _matmul_of(x, y, unused):
    return _matmul(x, y)


@overload(rt.matmul_batched_x)
def matmul_batched_x(x, y):
    if max(x.ndim - 1, getattr(y, "ndim", 0)) <= 2:
        return lambda x, y: rt.dot_batched_x(x, y)
    stacked = register_jitable(_per_example(_matmul_of, 0))
    return lambda x, y: stacked(x, y, 0)


@overload(rt.matmul_batched_y)
def matmul_batched_y(x, y):
    if max(getattr(x, "ndim", 0), y.ndim - 1) <= 2:
        return lambda x, y: rt.dot_batched_y(x, y)
    stacked = register_jitable(_per_example(_matmul_of, 1))
    return lambda x, y: stacked(x, y, 0)


def _matmul_vjp_batched(helper, dot_helper, product, batched_at):
    """The overload of one of @'s adjoint helpers under vmap: np.dot's ``dot_helper`` where an
    example and ``y`` have at most two dimensions, else ``product`` of each example."""
    def typer(g, x, y):
        example_rank = x.ndim - 1 if batched_at == "both" else getattr(x, "ndim", 0)
        if example_rank <= 2 and getattr(y, "ndim", 0) <= 2:
            return lambda g, x, y: dot_helper(g, x, y)
        stacked = register_jitable(_per_example(product, batched_at))
        return lambda g, x, y: stacked(g, x, y)
    overload(helper)(typer)


_matmul_vjp_batched(rt.matmul_vjp_x_batched_g, rt.dot_vjp_x_batched_g, rt.matmul_vjp_x, 0)
_matmul_vjp_batched(rt.matmul_vjp_y_batched_g, rt.dot_vjp_y_batched_g, rt.matmul_vjp_y, 0)
_matmul_vjp_batched(rt.matmul_vjp_y_batched_gx, rt.dot_vjp_y_batched_gx, rt.matmul_vjp_y, "both")


@overload(rt.dot_batched_y)
def dot_batched_y(x, y):
    _check_example_rank(y)
    if y.ndim == 1:
        return (lambda x, y: np.expand_dims(x, -1) * y) if _is_array(x) else (lambda x, y: x * y)
    if not _is_array(x):
        return lambda x, y: x * y
    _check_factor(x)

    def columns(x, y):       # every example's columns side by side: one product
        flat = np.dot(x, np.ascontiguousarray(y).reshape((y.shape[0], -1)))
        return flat.reshape(x.shape[:-1] + y.shape[1:])
    return columns


@overload(rt.dot_vjp_x_batched_g)
def dot_vjp_x_batched_g(g, x, y):
    if not _is_array(x):
        if not _is_array(y):
            return lambda g, x, y: g * y
        return lambda g, x, y: np.dot(np.ascontiguousarray(y).ravel(),
                                      np.ascontiguousarray(g).reshape((y.size, -1)))
    if not _is_array(y):
        return lambda g, x, y: g * y
    _check_dot(x, y)
    if y.ndim == 1 and x.ndim == 1:
        return lambda g, x, y: np.outer(y, g)
    if y.ndim == 1:
        return lambda g, x, y: np.expand_dims(g, -2) * np.expand_dims(y, -1)
    if x.ndim == 1:
        return lambda g, x, y: np.dot(y, g)

    def rows(g, x, y):
        out = np.empty((g.shape[0], y.shape[0], g.shape[-1]), g.dtype)
        for i in range(g.shape[0]):
            out[i] = np.dot(y, g[i])
        return out
    return rows


@overload(rt.dot_vjp_y_batched_g)
def dot_vjp_y_batched_g(g, x, y):
    if not _is_array(y):
        if not _is_array(x):
            return lambda g, x, y: g * x
        return lambda g, x, y: np.dot(np.ascontiguousarray(x).ravel(),
                                      np.ascontiguousarray(g).reshape((x.size, -1)))
    if not _is_array(x):
        return lambda g, x, y: g * x
    _check_dot(x, y)
    if x.ndim == 1:
        return lambda g, x, y: np.outer(x, np.ascontiguousarray(g).ravel()).reshape(x.shape + g.shape)

    def columns(g, x, y):    # x^T g for every example at once: g's examples side by side
        flat = np.dot(np.transpose(x), np.ascontiguousarray(g).reshape((x.shape[0], -1)))
        return flat.reshape(y.shape + g.shape[-1:])
    return columns


@overload(rt.dot_vjp_y_batched_gx)
def dot_vjp_y_batched_gx(g, x, y):
    _check_example_rank(x)
    if not _is_array(y):
        if x.ndim == 1:
            return lambda g, x, y: g * x
        return lambda g, x, y: np.sum(np.ascontiguousarray(g * x).reshape((-1, x.shape[-1])), axis=0)
    if x.ndim == 1 or (x.ndim == 2 and y.ndim == 1):
        return lambda g, x, y: g * x
    if x.ndim == 2:
        return lambda g, x, y: np.expand_dims(x, 1) * np.expand_dims(g, 0)

    def per_example(g, x, y):    # examples (m, n): one product x^T g each (numba has no batched product)
        out = np.empty(y.shape + (x.shape[-1],), g.dtype)
        for b in range(x.shape[-1]):
            out[..., b] = rt.dot_vjp_y(np.ascontiguousarray(g[..., b]), np.ascontiguousarray(x[..., b]), y)
        return out
    return per_example


@overload(rt.dot_identity_y)
def dot_identity_y(x, basis):
    if not _is_array(x):
        return lambda x, basis: x * basis

    def columns_of_the_identity(x, basis):
        if x.shape[-1] != basis.shape[0]:
            raise ValueError("np.dot: shapes not aligned")
        return np.copy(x)
    return columns_of_the_identity


@overload(rt.dot_rows_x)
def dot_rows_x(x_rows, y):
    _check_example_rank(x_rows)
    if x_rows.ndim == 2 and _is_array(y):
        _check_factor(y)
        if y.ndim == 1:      # examples (n,) as the rows: one matrix-vector product, (B,) is batch-last
            return lambda x_rows, y: np.dot(x_rows, y)
        # (k, B) = y^T x_rows^T: BLAS reads both transposes in place
        return lambda x_rows, y: np.dot(np.transpose(y), np.transpose(x_rows))
    return lambda x_rows, y: rt.dot_batched_x(np.ascontiguousarray(np.moveaxis(x_rows, 0, -1)), y)


@overload(rt.dot_vjp_y_rows_gx)
def dot_vjp_y_rows_gx(g, x_rows, y):
    _check_example_rank(x_rows)
    if x_rows.ndim == 2 and _is_array(g) and g.ndim == 1 and _is_array(y) and y.ndim == 1:
        # examples (n,) dotted with y (n,): each example's cotangent is g_b * x_b, written
        # row by row; its transpose is batch-last
        return lambda g, x_rows, y: np.transpose(np.expand_dims(g, 1) * x_rows)
    return lambda g, x_rows, y: rt.dot_vjp_y_batched_gx(g, np.ascontiguousarray(np.moveaxis(x_rows, 0, -1)), y)


def _check_dot(x, y):
    if x.ndim > 2 or y.ndim > 2:
        raise TypingError("np.dot gradients support 1-D and 2-D operands")


@overload(rt.extremum_vjp)
def extremum_vjp(g, x, peak, axis=None, keepdims=False):
    cls = _float_class(x)
    if not _is_array(x):
        return lambda g, x, peak, axis=None, keepdims=False: cls(g)

    def split_among_ties(g, x, peak, axis=None, keepdims=False):
        # Two walks over x and no temporaries of its size: the ties of each
        # peak are counted, then each element takes its peak's share where it
        # ties (times 0 elsewhere, as a mask of ones and zeros would give).
        out = np.empty(x.shape, cls)
        _split_among_ties(g, x, peak, axis, keepdims, None, out.reshape(-1))
        return out
    return split_among_ties


@overload(extremum_vjp_added)
def _extremum_vjp_added(base, g, x, peak, axis=None, keepdims=False):
    def added_after(base, g, x, peak, axis=None, keepdims=False):
        return base + rt.extremum_vjp(g, x, peak, axis, keepdims)
    if not (_is_array(x) and _is_array(base) and base.ndim == x.ndim
            and as_dtype(base.dtype).type is _float_class(x)):
        return added_after
    cls = _float_class(x)

    def added_in_the_same_walk(base, g, x, peak, axis=None, keepdims=False):
        if base.shape != x.shape:             # base broadcasts: the add does that
            return base + rt.extremum_vjp(g, x, peak, axis, keepdims)
        out = np.empty(x.shape, cls)
        _split_among_ties(g, x, peak, axis, keepdims, np.ravel(base), out.reshape(-1))
        return out
    return added_in_the_same_walk


@register_jitable
def _split_among_ties(g, x, peak, axis, keepdims, base, out):
    """``out`` (flat, x's shape) = each element's share of its peak's cotangent ``g`` where it ties
    (0 elsewhere), plus ``base`` (flat, x's shape) where that is not None."""
    big = _shape_array(x.shape)
    strides = _strides_over(big, _small_sizes(big, peak, axis, keepdims))
    xs = _flat(x)
    peaks = _flat(peak)
    counts = np.zeros(peaks.size, out.dtype)
    _count_ties(xs, peaks, strides, big, counts)
    share = _flat(g) / counts
    if base is None:
        _share_among_ties(xs, peaks, share, strides, big, out, out)    # (out stands for the unread base)
    else:
        _share_among_ties_added(xs, peaks, share, strides, big, out, base)


@njit(cache=True)
def _count_ties(xs, peaks, strides, big, counts):
    """``counts`` (flat) += how many elements of the flat ``xs`` (shape ``big``) equal their peak."""
    rows, step, index = _rows(xs, big, strides)
    offset = 0
    for r in range(rows.shape[0]):
        if step == 0:             # one peak for the whole row: count in a register, which vectorises
            peak = peaks[offset]
            ties = 0
            for j in range(rows.shape[1]):
                ties += rows[r, j] == peak
            counts[offset] += ties
        else:
            for j in range(rows.shape[1]):
                counts[offset + j * step] += rows[r, j] == peaks[offset + j * step]
        offset = _advance(index, offset, big, strides)


def _tie_sharer(added: bool):
    """The walk that writes ``out`` (flat, shape ``big``): each element's peak's share where it
    equals the peak, times 0 elsewhere; plus ``base``'s element (flat, shape ``big``) where
    ``added``.  (A constant of the closure: a branch per element would keep the loop scalar.)"""
    @njit(cache=True)
    def share_among_ties(xs, peaks, share, strides, big, out, base):
        rows, step, index = _rows(xs, big, strides)
        out_rows, _, _ = _rows(out, big, strides)
        base_rows, _, _ = _rows(base, big, strides)
        offset = 0
        for r in range(rows.shape[0]):
            if step == 0:
                peak = peaks[offset]
                part = share[offset]
                for j in range(rows.shape[1]):
                    tie_share = part * (rows[r, j] == peak)
                    out_rows[r, j] = base_rows[r, j] + tie_share if added else tie_share
            else:
                for j in range(rows.shape[1]):
                    k = offset + j * step
                    tie_share = share[k] * (rows[r, j] == peaks[k])
                    out_rows[r, j] = base_rows[r, j] + tie_share if added else tie_share
            offset = _advance(index, offset, big, strides)
    return share_among_ties


_share_among_ties = _tie_sharer(added=False)
_share_among_ties_added = _tie_sharer(added=True)


@overload(rt.prod_vjp)
def prod_vjp(g, x, axis=None, keepdims=False):
    cls = _float_class(x)
    if not _is_array(x):
        return lambda g, x, axis=None, keepdims=False: cls(g)

    def product_of_others(g, x, axis=None, keepdims=False):
        # Each element's cotangent is (product before it) * (product after it)
        # within its group: exact with zeros, no division.  The group of each
        # element is walked forwards and backwards, so its offsets are kept.
        big = _shape_array(x.shape)
        gs = _flat(g)
        group = np.empty(x.size, np.intp)
        _gather(np.arange(gs.size), _strides_over(big, _small_sizes(big, g, axis, keepdims)), big, group)
        xs = _flat(x)
        others = np.empty(x.size, cls)
        running = np.ones(gs.size, cls)
        for k in range(x.size):
            others[k] = running[group[k]]
            running[group[k]] *= xs[k]
        running[:] = 1
        for k in range(x.size - 1, -1, -1):
            others[k] *= running[group[k]]
            running[group[k]] *= xs[k]
        for k in range(x.size):
            others[k] = gs[group[k]] * others[k]
        return others.reshape(x.shape)
    return product_of_others


@njit(cache=True)
def _along(shape, axis):
    """``shape`` as (outer, n, inner) around ``axis``: a C-order array viewed so the axis is the middle one."""
    axis = axis % len(shape)
    outer = 1
    inner = 1
    for d in range(axis):
        outer *= shape[d]
    for d in range(axis + 1, len(shape)):
        inner *= shape[d]
    return outer, shape[axis], inner


@overload(rt.cumsum_vjp)
def cumsum_vjp(g, x, axis=None):
    if not _is_array(x):
        return lambda g, x, axis=None: _flat(g)[0]
    cls = _float_class(g)

    def reversed_cumsum(g, x, axis=None):
        # x_bar[i] = sum of g[j] for j >= i along the axis (flattened when None)
        outer, n, inner = (1, g.size, 1) if axis is None else _along(g.shape, axis)
        gs = np.ascontiguousarray(g).reshape((outer, n, inner))
        out = np.empty((outer, n, inner), cls)
        for a in range(outer):
            for c in range(inner):
                total = cls(0)
                for i in range(n - 1, -1, -1):
                    total += gs[a, i, c]
                    out[a, i, c] = total
        return out.reshape(x.shape)
    return reversed_cumsum


@overload(rt.cumprod_vjp)
def cumprod_vjp(g, x, products, axis=None):
    if not _is_array(x):
        return lambda g, x, products, axis=None: _flat(g)[0]
    cls = _float_class(x)

    def through_products(g, x, products, axis=None):
        # x_bar[i] = sum_{j >= i} g[j] * prod_{k <= j, k != i} x[k], in O(n) per line.
        # With z = products: before the first zero p of a line, prod_{k<=j, k!=i} x[k] = z[j] / x[i]
        # (and terms with j >= p vanish); at p, the running product skips x[p];
        # after p every term holds x[p] = 0.
        outer, n, inner = (1, x.size, 1) if axis is None else _along(x.shape, axis)
        xs = np.ascontiguousarray(x).reshape((outer, n, inner))
        gs = np.ascontiguousarray(g).reshape((outer, n, inner))
        zs = np.ascontiguousarray(products).reshape((outer, n, inner))
        out = np.zeros((outer, n, inner), cls)
        for a in range(outer):
            for c in range(inner):
                p = 0
                while p < n and xs[a, p, c] != 0:
                    p += 1
                if p < n:
                    running = cls(1) if p == 0 else zs[a, p - 1, c]
                    total = gs[a, p, c] * running
                    for j in range(p + 1, n):
                        running *= xs[a, j, c]
                        total += gs[a, j, c] * running
                    out[a, p, c] = total
                tail = cls(0)
                for i in range(p - 1, -1, -1):
                    tail += gs[a, i, c] * zs[a, i, c]
                    out[a, i, c] = tail / xs[a, i, c]
        return out.reshape(x.shape)
    return through_products



# The second derivatives of np.prod and np.cumprod (runtime.py says what each computes).  All three
# walk each line once per entry m with m left out of the products; they differ in what they keep.
LAST_ENTRY, RUNNING_FORWARD, RUNNING_BACK = 0, 1, 2


@njit(cache=True)
def _products_but_two(x, direction, weights, axis, keep, cls_zero):
    """Per line of ``x`` (along ``axis``, the flattened array when None) and entry m, cumprod_jvp's
    recurrence for ``direction`` with entry m left out of every product (x[m] read as 1, its
    direction as 0: exact with zeros), then: LAST_ENTRY keeps its last value (prod_vjp_jvp);
    RUNNING_FORWARD adds weights[m] times its values from m on into those entries
    (cumprod_jvp_jvp); RUNNING_BACK keeps the sum of weights times its values from m on
    (cumprod_vjp_jvp).  (outer, n, inner) are C-order views of the lines."""
    outer, n, inner = (1, x.size, 1) if axis is None else _along(x.shape, axis)
    xs = np.ascontiguousarray(x).reshape((outer, n, inner))
    ds = np.ascontiguousarray(direction).reshape((outer, n, inner))
    ws = np.ascontiguousarray(weights).reshape((outer, n, inner))
    out = np.zeros((outer, n, inner), type(cls_zero))
    line = np.empty(n, type(cls_zero))
    for a in range(outer):
        for c in range(inner):
            for m in range(n):
                running = cls_zero + 1
                tangent = cls_zero
                for j in range(n):
                    if j != m:
                        tangent = tangent * xs[a, j, c] + running * ds[a, j, c]
                        running = running * xs[a, j, c]
                    line[j] = tangent
                if keep == LAST_ENTRY:
                    out[a, m, c] = line[n - 1]
                elif keep == RUNNING_FORWARD:
                    for i in range(m, n):
                        out[a, i, c] += ws[a, m, c] * line[i]
                else:
                    total = cls_zero
                    for i in range(m, n):
                        total += ws[a, i, c] * line[i]
                    out[a, m, c] = total
    return out


@overload(rt.prod_vjp_jvp)
def prod_vjp_jvp(g, x, v, axis=None, keepdims=False):
    cls = _float_class(x)
    if not _is_array(x):
        return lambda g, x, v, axis=None, keepdims=False: cls(0)

    def products_but_two(g, x, v, axis=None, keepdims=False):
        out = _products_but_two(x, v, v, axis, LAST_ENTRY, cls(0))
        return rt.expand_to(g, x, axis, keepdims) * out.reshape(x.shape)
    return products_but_two


@overload(rt.cumprod_jvp_jvp)
def cumprod_jvp_jvp(t, v, x, axis=None):
    cls = _float_class(x)
    if not _is_array(x):
        return lambda t, v, x, axis=None: np.zeros(1, cls)

    def flat(t, v, x, axis=None):           # np.cumprod without an axis is flat
        return _products_but_two(x, t, v, axis, RUNNING_FORWARD, cls(0)).reshape((x.size,))

    def along_axis(t, v, x, axis=None):
        return _products_but_two(x, t, v, axis, RUNNING_FORWARD, cls(0)).reshape(x.shape)
    return flat if _is_none(axis) else along_axis


@overload(rt.cumprod_vjp_jvp)
def cumprod_vjp_jvp(g, v, x, axis=None):
    cls = _float_class(x)
    if not _is_array(x):
        return lambda g, v, x, axis=None: cls(0)

    def running_products_but_two(g, v, x, axis=None):
        return _products_but_two(x, v, g, axis, RUNNING_BACK, cls(0)).reshape(x.shape)
    return running_products_but_two


@overload(rt.norm_vjp)
def norm_vjp(g, x, norm, axis=None, keepdims=False):
    return lambda g, x, norm, axis=None, keepdims=False: rt.expand_to(g / norm, x, axis, keepdims) * x


def _matrix_weights_kernel(x, ord):
    """A jitted ``weights_of(a, norm, ord)``: d norm / d a of one 2-D array's matrix norm, with
    rt.norm_ord_weights's conventions (ties share; slope +1 of |a| at 0)."""
    cls = _float_class(x)
    if isinstance(ord, types.UnicodeType) and not isinstance(ord, types.StringLiteral):
        raise TypingError("np.linalg.norm under jit: a string ord must be a literal ('fro' or 'nuc')")
    name = ord.literal_value if isinstance(ord, types.StringLiteral) else None
    if name not in (None, "fro", "f", "nuc"):
        raise TypingError(f"np.linalg.norm: ord={name!r} is not a matrix norm")
    frobenius, nuclear = name in ("fro", "f"), name == "nuc"

    @register_jitable
    def shares(hits):
        out = np.zeros(hits.shape, cls)
        count = 0
        for i in range(hits.size):
            count += hits[i]
        for i in range(hits.size):
            if hits[i]:
                out[i] = cls(1) / count
        return out

    @register_jitable
    def weights_of(a, norm, param):
        slope = np.where(a >= 0, cls(1), cls(-1))
        if frobenius:
            return a / norm
        if nuclear or param == 2 or param == -2:
            u, s, vh = np.linalg.svd(a, full_matrices=False)
            if nuclear:
                w = np.ones(s.size, cls)
            else:
                w = shares(s == (np.max(s) if param == 2 else np.min(s)))
            return (u * w.reshape((1, s.size))) @ vh
        if param == 1 or param == -1:
            columns = np.sum(np.abs(a), axis=0)
            return slope * shares(columns == norm).reshape((1, a.shape[1]))
        rows = np.sum(np.abs(a), axis=1)
        return slope * shares(rows == norm).reshape((a.shape[0], 1))
    return weights_of


def _matrix_norm_weights(x, norm, ord, axis, keepdims):
    """rt.norm_ord_weights of a matrix norm: a 2-D ``x`` with no axis, or a literal pair of axes (each
    matrix of the stack moved last, weighed, and moved back)."""
    cls = _float_class(x)
    weights_of = _matrix_weights_kernel(x, ord)
    if _is_none(axis):
        return lambda x, norm, ord, axis=None, keepdims=False: weights_of(
            np.asarray(x).astype(cls), cls(_flat(norm)[0]), ord)
    if not all(isinstance(a, types.IntegerLiteral) for a in axis):
        raise TypingError("the derivative of np.linalg.norm under jit: a matrix norm's axis pair must be "
                          "literal integers")
    ndim = x.ndim
    rows, columns = (a.literal_value % ndim for a in axis)
    kept = tuple(a for a in range(ndim) if a not in (rows, columns))
    permutation = kept + (rows, columns)
    inverse = tuple(permutation.index(a) for a in range(ndim))
    n_kept = len(kept)

    def stacked_weights(x, norm, ord, axis=None, keepdims=False):
        moved = np.ascontiguousarray(np.transpose(np.asarray(x), permutation)).astype(cls)
        shape = moved.shape
        count = 1
        for k in range(n_kept):
            count *= shape[k]
        stack = moved.reshape((count, shape[ndim - 2], shape[ndim - 1]))
        norms = _flat(norm)
        out = np.empty_like(stack)
        for b in range(count):
            out[b] = weights_of(stack[b], cls(norms[b]), ord)
        return np.ascontiguousarray(np.transpose(out.reshape(shape), inverse))
    return stacked_weights


@overload(rt.norm_ord_weights, prefer_literal=True)   # ord='fro' / 'nuc' decide the code
def norm_ord_weights(x, norm, ord, axis=None, keepdims=False):
    # the norms the CPU target's np.linalg.norm with ord= computes (numba_reductions.norm_axis)
    if not _is_array(x):
        raise TypingError("the derivative of np.linalg.norm with ord= under jit needs an array")
    if (_is_none(axis) and x.ndim == 2) or (isinstance(axis, types.BaseTuple) and len(axis) == 2):
        return _matrix_norm_weights(x, norm, ord, axis, keepdims)
    if isinstance(axis, types.BaseTuple) or (_is_none(axis) and x.ndim != 1):
        raise TypingError("the derivative of np.linalg.norm with ord= under jit needs a vector norm "
                          "(one axis), or a matrix norm over two axes")
    cls = _float_class(x)

    def vector_weights(x, norm, ord, axis=None, keepdims=False):
        # per line of x along the axis: d norm / d x (JAX's conventions: slope +1 of |x| at 0,
        # ties of a max/min share equally)
        outer, n, inner = (1, x.size, 1) if axis is None else _along(x.shape, axis)
        xs = np.ascontiguousarray(x).reshape((outer, n, inner))
        norms = _flat(norm)
        out = np.zeros((outer, n, inner), cls)
        for a in range(outer):
            for c in range(inner):
                peak = cls(norms[a * inner + c])
                ties = 0
                for i in range(n):
                    ties += abs(xs[a, i, c]) == peak
                for i in range(n):
                    v = cls(xs[a, i, c])
                    slope = cls(1) if v >= 0 else cls(-1)
                    if ord == np.inf or ord == -np.inf:
                        out[a, i, c] = slope / ties if abs(v) == peak else cls(0)
                    elif ord == 1:
                        out[a, i, c] = slope
                    elif ord != 0:
                        out[a, i, c] = slope * (abs(v) / peak) ** cls(ord - 1)
        return out.reshape(x.shape)
    return vector_weights


@overload(rt.transpose_vjp)
def transpose_vjp(g, axes=None):
    if not _is_array(g):                  # a 0-d array's transpose: its cotangent is a number (numba has
        return lambda g, axes=None: g     # no np.transpose of a scalar)
    if _is_none(axes):
        return lambda g, axes=None: np.transpose(g)
    ndim = g.ndim

    def inverse_permutation(g, axes=None):
        inverse = np.empty(ndim, np.intp)
        for i in range(ndim):
            inverse[axes[i] % ndim] = i
        return np.transpose(g, to_fixed_tuple(inverse, ndim))
    return inverse_permutation


@overload(rt.trace_vjp)
def trace_vjp(g, x):
    cls = _float_class(x)

    def diagonal(g, x):
        out = np.zeros(x.shape, cls)
        for i in range(min(x.shape[0], x.shape[1])):
            out[i, i] = g
        return out
    return diagonal


# ------------------------------------------------------------------- linalg
@overload(rt.solve_columns)
def solve_columns(x, b):
    if _is_array(b) and b.ndim == 1:
        return lambda x, b: np.expand_dims(x, -1)
    return lambda x, b: x


@overload(rt.solve_uncolumns)
def solve_uncolumns(x, b):
    if _is_array(b) and b.ndim == 1:
        return lambda x, b: x[..., 0]
    return lambda x, b: x


# ------------------------------------------------- one number per example (vmap)
def _refuse_unless_one_axis(shape, error, message):
    """rt.number_per_example and rt.truth_value_per_example: the shape's length is known when numba
    compiles, so a shape of one axis compiles to nothing; another raises when the line runs (not
    when it compiles: a branch never taken must not refuse)."""
    if isinstance(shape, types.BaseTuple) and len(shape) == 1:
        return lambda shape: None

    def refuse(shape):
        if len(shape) >= 0:             # a condition numba cannot fold away
            raise error(message)
        return None
    return refuse


@overload(rt.number_per_example)
def number_per_example(shape):
    return _refuse_unless_one_axis(shape, TypeError, "only 0-dimensional arrays can be converted to Python "
                                   "scalars (under vmap, each example's value here is an array)")


@overload(rt.truth_value_per_example)
def truth_value_per_example(shape):
    return _refuse_unless_one_axis(shape, ValueError, "The truth value of an array with more than one element "
                                   "is ambiguous (under vmap, each example's condition here is an array)")


# -------------------------------------------------------------------- casts
@overload(rt.cast_like)
def cast_like(g, x):
    cls = _float_class(x)
    if isinstance(g, types.Array):
        return lambda g, x: g.astype(cls)
    return lambda g, x: cls(g)


def _cast_class(dtype):
    """The NumPy scalar type a dtype argument (np.float32, float, int, bool) names."""
    if isinstance(dtype, types.NumberClass):
        return as_dtype(dtype.instance_type).type
    if isinstance(dtype, types.Function) and dtype.typing_key in (float, int, bool):
        return {float: np.float64, int: np.int64, bool: np.bool_}[dtype.typing_key]
    raise TypingError(f"astype needs a NumPy scalar type such as np.float32, not {dtype}")


@overload(rt.cast_derivative)
def cast_derivative(g, like, to):
    cls = _float_class(like)
    scale = 1.0 if np.issubdtype(_cast_class(to), np.floating) else 0.0
    if isinstance(g, types.Array):
        return lambda g, like, to: g.astype(cls) * cls(scale)
    return lambda g, like, to: cls(g) * cls(scale)


@overload(rt.astype)
def astype(x, dtype):
    cls = _cast_class(dtype)
    if isinstance(x, types.Array):
        return lambda x, dtype: x.astype(cls)
    return lambda x, dtype: dtype(x)


# ------------------------------------------------------------- custom rules
@overload(rt.custom_vjp_call)
def custom_vjp_call(out, inputs, residuals, rule):
    return lambda out, inputs, residuals, rule: out


@overload(rt.custom_jvp_call)
def custom_jvp_call(out, inputs, rule):
    # only forward mode gives the call a meaning (it applies ``rule``); running it is the identity
    return lambda out, inputs, rule: out


# ------------------------------------------------------------- layout
# The index arrays of np.tile, np.repeat, np.pad, np.diag, np.diagonal and np.rollaxis (runtime.py
# computes them with NumPy itself, which numba lacks for most of them).  Each is a "separable" gather:
# an output cell's flat source position is a sum over the output's axes of a table entry per axis
# (its coordinate's contribution, the input stride included; -1 where np.pad fills a constant), so
# one walk serves every function.  The output's rank follows from the argument types alone; it is
# read here, when numba compiles, and fixed in the reshape.
def _rank(shape) -> int:
    if not isinstance(shape, types.BaseTuple):
        raise TypingError(f"a shape must be a tuple, not {shape}")
    return len(shape)


@register_jitable
def _no_dims(shape):
    return np.empty(0, np.int64)


@register_jitable
def _dims_of(shape):
    out = np.empty(len(shape), np.int64)
    for d in range(len(shape)):
        out[d] = shape[d]
    return out


def _shape_reader(shape):
    return _dims_of if _rank(shape) else _no_dims


@register_jitable
def _c_strides(dims):
    strides = np.ones(dims.size, np.int64)
    for d in range(dims.size - 2, -1, -1):
        strides[d] = strides[d + 1] * dims[d + 1]
    return strides


@register_jitable
def _offsets(out_dims):
    offsets = np.zeros(out_dims.size + 1, np.int64)
    for d in range(out_dims.size):
        offsets[d + 1] = offsets[d] + out_dims[d]
    return offsets


@register_jitable
def _separable_gather(out_dims, tables, offsets, base):
    """Flat source positions of every output cell in C order: base + sum_d tables[offsets[d] + c_d]."""
    total = 1
    for d in range(out_dims.size):
        total *= out_dims[d]
    out = np.empty(total, np.int64)
    coord = np.zeros(out_dims.size, np.int64)
    for p in range(total):
        flat = base
        for d in range(out_dims.size):
            part = tables[offsets[d] + coord[d]]
            if part < 0 or flat < 0:
                flat = -1
            else:
                flat += part
        out[p] = flat
        d = out_dims.size - 1
        while d >= 0:
            coord[d] += 1
            if coord[d] < out_dims[d]:
                break
            coord[d] = 0
            d -= 1
    return out


@overload(rt.tile_index)
def tile_index(shape, reps):
    n, read = _rank(shape), _shape_reader(shape)
    if isinstance(reps, types.Integer):
        m, read_reps = 1, register_jitable(lambda reps: np.full(1, reps, np.int64))
    else:
        m, read_reps = _rank(reps), _shape_reader(reps)
    rank = max(n, m)

    def impl(shape, reps):
        dims = np.ones(rank, np.int64)
        dims[rank - n:] = read(shape)
        counts = np.ones(rank, np.int64)
        counts[rank - m:] = read_reps(reps)
        out_dims = dims * counts
        strides = _c_strides(dims)
        offsets = _offsets(out_dims)
        tables = np.empty(offsets[rank], np.int64)
        for d in range(rank):
            for c in range(out_dims[d]):
                tables[offsets[d] + c] = (c % dims[d]) * strides[d]
        return _separable_gather(out_dims, tables, offsets, 0).reshape(to_fixed_tuple(out_dims, rank))
    return impl


@overload(rt.kron_index)
def kron_index(shape_a, shape_b, which):
    n, read_a = _rank(shape_a), _shape_reader(shape_a)
    m, read_b = _rank(shape_b), _shape_reader(shape_b)
    rank = max(n, m)

    def impl(shape_a, shape_b, which):
        dims_a = np.ones(rank, np.int64)
        dims_a[rank - n:] = read_a(shape_a)
        dims_b = np.ones(rank, np.int64)
        dims_b[rank - m:] = read_b(shape_b)
        out_dims = dims_a * dims_b
        strides = _c_strides(dims_a if which == 0 else dims_b)
        offsets = _offsets(out_dims)
        tables = np.empty(offsets[rank], np.int64)
        for d in range(rank):
            for c in range(out_dims[d]):     # coordinate c of the result: c // b's length in a, c % it in b
                tables[offsets[d] + c] = (c // dims_b[d] if which == 0 else c % dims_b[d]) * strides[d]
        return _separable_gather(out_dims, tables, offsets, 0).reshape(to_fixed_tuple(out_dims, rank))
    return impl


@register_jitable
def _repeat_table(length, counts, stride):
    if counts.size == 1 and length != 1:
        counts = np.full(length, counts[0], np.int64)
    if counts.size != length:
        raise ValueError("np.repeat: repeats does not match the axis's length")
    table = np.empty(counts.sum(), np.int64)
    at = 0
    for i in range(length):
        if counts[i] < 0:
            raise ValueError("np.repeat: negative repeats")
        for _ in range(counts[i]):
            table[at] = i * stride
            at += 1
    return table


def _counts_reader(repeats):
    if isinstance(repeats, types.Integer):
        return register_jitable(lambda repeats: np.full(1, repeats, np.int64))

    @register_jitable
    def read(repeats):
        out = np.empty(len(repeats), np.int64)
        for i in range(len(repeats)):
            out[i] = repeats[i]
        return out
    return read


@overload(rt.repeat_index)
def repeat_index(shape, repeats, axis=None):
    n, read = _rank(shape), _shape_reader(shape)
    counts_of = _counts_reader(repeats)
    if _is_none(axis):
        def flat(shape, repeats, axis=None):
            dims = read(shape)
            size = 1
            for d in range(dims.size):
                size *= dims[d]
            return _repeat_table(size, counts_of(repeats), 1)
        return flat

    def along(shape, repeats, axis=None):
        dims = read(shape)
        k = axis % n
        strides = _c_strides(dims)
        table = _repeat_table(dims[k], counts_of(repeats), strides[k])
        out_dims = dims.copy()
        out_dims[k] = table.size
        offsets = _offsets(out_dims)
        tables = np.empty(offsets[n], np.int64)
        for d in range(n):
            for c in range(out_dims[d]):
                tables[offsets[d] + c] = table[c] if d == k else c * strides[d]
        return _separable_gather(out_dims, tables, offsets, 0).reshape(to_fixed_tuple(out_dims, n))
    return along


def _widths_reader(pad_width, n):
    """(before, after) arrays of one per axis from an int, a pair, a 1-tuple or a pair per axis."""
    if isinstance(pad_width, types.Integer):
        return register_jitable(lambda w: (np.full(n, w, np.int64), np.full(n, w, np.int64)))
    if not isinstance(pad_width, types.BaseTuple) or len(pad_width) == 0:
        raise TypingError(f"np.pad's pad_width must be an int, a pair or a pair per axis, not {pad_width}")
    if all(isinstance(t, types.Integer) for t in pad_width):
        if len(pad_width) == 1:
            return register_jitable(lambda w: (np.full(n, w[0], np.int64), np.full(n, w[0], np.int64)))
        return register_jitable(lambda w: (np.full(n, w[0], np.int64), np.full(n, w[1], np.int64)))
    if len(pad_width) == 1:
        return register_jitable(lambda w: (np.full(n, w[0][0], np.int64), np.full(n, w[0][len(w[0]) - 1], np.int64)))
    if len(pad_width) != n:
        raise TypingError(f"np.pad's pad_width has {len(pad_width)} pairs for {n} axes")

    @register_jitable
    def per_axis(w):
        before = np.empty(n, np.int64)
        after = np.empty(n, np.int64)
        for d in range(n):
            before[d] = w[d][0]
            after[d] = w[d][len(w[d]) - 1]
        return before, after
    return per_axis


@register_jitable
def _padded_coordinate(j, length, code):
    """The source coordinate of padded coordinate ``j`` (0 at the first original cell), -1 for a constant."""
    if 0 <= j < length:
        return j
    if code == 0:
        return -1
    if code == 1:
        return 0 if j < 0 else length - 1
    if code == 2:
        if length == 1:
            return 0
        period = 2 * (length - 1)
        j = j % period
        return j if j < length else period - j
    if code == 3:
        j = j % (2 * length)
        return j if j < length else 2 * length - 1 - j
    return j % length


@overload(rt.pad_index)
def pad_index(shape, pad_width, mode):
    n, read = _rank(shape), _shape_reader(shape)
    widths = _widths_reader(pad_width, n)

    def impl(shape, pad_width, mode):
        if mode == "constant":
            code = 0
        elif mode == "edge":
            code = 1
        elif mode == "reflect":
            code = 2
        elif mode == "symmetric":
            code = 3
        elif mode == "wrap":
            code = 4
        else:
            raise ValueError("np.pad: only the modes constant, edge, reflect, symmetric and wrap are supported")
        dims = read(shape)
        before, after = widths(pad_width)
        out_dims = dims + before + after
        strides = _c_strides(dims)
        offsets = _offsets(out_dims)
        tables = np.empty(offsets[n], np.int64)
        for d in range(n):
            for c in range(out_dims[d]):
                j = _padded_coordinate(c - before[d], dims[d], code)
                tables[offsets[d] + c] = -1 if j < 0 else j * strides[d]
        return _separable_gather(out_dims, tables, offsets, 0).reshape(to_fixed_tuple(out_dims, n))
    return impl


@overload(rt.diag_index)
def diag_index(shape, k=0):
    n = _rank(shape)
    if n == 1:
        def on_diagonal(shape, k=0):
            length = shape[0]
            size = length + abs(k)
            out = np.full((size, size), -1, np.int64)
            for i in range(length):
                if k >= 0:
                    out[i, i + k] = i
                else:
                    out[i - k, i] = i
            return out
        return on_diagonal
    if n != 2:
        raise TypingError("np.diag takes a 1-D or a 2-D array")

    def of_matrix(shape, k=0):
        rows, cols = shape[0], shape[1]
        length = max(0, min(rows, cols - k)) if k >= 0 else max(0, min(rows + k, cols))
        out = np.empty(length, np.int64)
        for i in range(length):
            out[i] = (i + max(-k, 0)) * cols + i + max(k, 0)
        return out
    return of_matrix


@overload(rt.diagonal_index)
def diagonal_index(shape, offset=0, axis1=0, axis2=1):
    n, read = _rank(shape), _shape_reader(shape)
    if n < 2:
        raise TypingError("np.diagonal takes an array of at least 2 dimensions")
    rank = n - 1

    def impl(shape, offset=0, axis1=0, axis2=1):
        dims = read(shape)
        a, b = axis1 % n, axis2 % n
        if a == b:
            raise ValueError("np.diagonal: axis1 and axis2 cannot be the same")
        strides = _c_strides(dims)
        if offset >= 0:
            length = max(0, min(dims[a], dims[b] - offset))
        else:
            length = max(0, min(dims[a] + offset, dims[b]))
        out_dims = np.empty(n - 1, np.int64)
        steps = np.empty(n - 1, np.int64)
        at = 0
        for d in range(n):
            if d != a and d != b:
                out_dims[at] = dims[d]
                steps[at] = strides[d]
                at += 1
        out_dims[n - 2] = length
        steps[n - 2] = strides[a] + strides[b]
        offsets = _offsets(out_dims)
        tables = np.empty(offsets[rank], np.int64)
        for d in range(rank):
            for c in range(out_dims[d]):
                tables[offsets[d] + c] = c * steps[d]
        base = max(-offset, 0) * strides[a] + max(offset, 0) * strides[b]
        return _separable_gather(out_dims, tables, offsets, base).reshape(to_fixed_tuple(out_dims, rank))
    return impl


@overload(rt.split_bounds)
def split_bounds(length, sections, equal=True):
    def impl(length, sections, equal=True):
        if equal and length % sections:
            raise ValueError("array split does not result in an equal division")
        size, extra = length // sections, length % sections
        bounds = np.empty(sections + 1, np.int64)
        for k in range(sections + 1):
            bounds[k] = k * size + min(k, extra)
        return bounds
    return impl


@overload(rt.concatenate_bounds)
def concatenate_bounds(sizes):
    count = len(sizes)

    def impl(sizes):
        bounds = np.zeros(count + 1, np.int64)
        for k in range(count):
            bounds[k + 1] = bounds[k] + sizes[k]
        return bounds
    return impl


@overload(rt.rollaxis_index)
def rollaxis_index(shape, axis, start=0):
    n, read = _rank(shape), _shape_reader(shape)

    def impl(shape, axis, start=0):
        dims = read(shape)
        k = axis % n
        to = start + n if start < 0 else start
        if to < 0 or to > n:
            raise ValueError("np.rollaxis: start out of range")
        if k < to:
            to -= 1
        order = np.empty(n, np.int64)
        at = 0
        for d in range(n):
            if at == to:
                at += 1
            if d != k:
                order[at] = d
                at += 1
        order[to] = k
        strides = _c_strides(dims)
        out_dims = dims[order]
        offsets = _offsets(out_dims)
        tables = np.empty(offsets[n], np.int64)
        for d in range(n):
            for c in range(out_dims[d]):
                tables[offsets[d] + c] = c * strides[order[d]]
        return _separable_gather(out_dims, tables, offsets, 0).reshape(to_fixed_tuple(out_dims, n))
    return impl


@overload(rt.hsplit_shape)
def hsplit_shape(shape, width):
    n = _rank(shape)
    if n == 1:
        return lambda shape, width: (width,)
    if n == 2:
        return lambda shape, width: (shape[0], width)
    return lambda shape, width: (shape[0], width) + shape[2:]


@overload(rt.kept_dims_shape)
def kept_dims_shape(shape):
    n = _rank(shape)
    return lambda shape: (1,) * (n - 1) + (shape[n - 1],)


@overload(rt.atleast_1d_shape)
def atleast_1d_shape(shape):
    if _rank(shape) == 0:
        return lambda shape: (1,)
    return lambda shape: shape


@overload(rt.atleast_2d_shape)
def atleast_2d_shape(shape):
    n = _rank(shape)
    if n == 0:
        return lambda shape: (1, 1)
    if n == 1:
        return lambda shape: (1, shape[0])
    return lambda shape: shape


@overload(rt.atleast_3d_shape)
def atleast_3d_shape(shape):
    n = _rank(shape)
    if n == 0:
        return lambda shape: (1, 1, 1)
    if n == 1:
        return lambda shape: (1, shape[0], 1)
    if n == 2:
        return lambda shape: (shape[0], shape[1], 1)
    return lambda shape: shape


@overload(rt.broadcast_shape)
def broadcast_shape(a, b, c=None):
    if _is_none(c):
        return lambda a, b, c=None: np.broadcast_shapes(a, b)
    return lambda a, b, c=None: np.broadcast_shapes(a, b, c)


@overload(rt.squeezed_shape)
def squeezed_shape(shape):
    raise TypingError("np.squeeze(x) needs axis= under jit (the result's ndim depends on which axes have "
                      "length 1, which numba's types do not say); write np.squeeze(x, axis=k)")


# ---------------------------------------------------------------------- misc
@overload(rt.cumprod_jvp)
def cumprod_jvp(t, x, axis=None):
    cls = _float_class(x)
    if not _is_array(x):
        return lambda t, x, axis=None: np.full(1, t, cls)

    def forward_products(t, x, axis=None):
        # z_dot[j] = z_dot[j - 1] * x[j] + z[j - 1] * t[j] along the axis: exact with zeros
        outer, n, inner = (1, x.size, 1) if axis is None else _along(x.shape, axis)
        xs = np.ascontiguousarray(x).reshape((outer, n, inner))
        ts = np.ascontiguousarray(t).reshape((outer, n, inner))
        out = np.empty((outer, n, inner), cls)
        for a in range(outer):
            for c in range(inner):
                running = cls(1)
                tangent = cls(0)
                for j in range(n):
                    tangent = tangent * xs[a, j, c] + running * ts[a, j, c]
                    running = running * xs[a, j, c]
                    out[a, j, c] = tangent
        return out.reshape((x.size,)) if axis is None else out.reshape(x.shape)
    return forward_products
