"""Reductions along axes, for numba.

numba compiles ``np.sum(x)`` and ``np.max(x)`` over a whole array, and
``np.sum(x, axis=k)``, but not ``np.max(x, axis=k)``, ``keepdims=``, tuples of
axes or ``ddof=``.  Each function here is the NumPy meaning, written as plain
NumPy (so a generated module still runs without numba), plus an ``overload``
that numba compiles instead.

Every overload works the same way: move the reduced axes to the end
(``np.transpose``, a view) where they are not adjacent, make the array
contiguous and view it as ``(outer, reduced, inner)`` blocks, reduce each
row ``blocks[o, :, i]``, and give the result the shape NumPy would.  Rows
are reduced by numba's own whole-array functions, except that max, min, sum
and mean have loops of their own that LLVM vectorises (below), and reduce a
non-last axis (``inner > 1``) whole contiguous rows at a time.  The number
of output dimensions depends only on ``x.ndim``, the *number* of reduced
axes and ``keepdims`` — all known when numba types the call — so the axis
values themselves may be run-time integers; ``keepdims`` must be a constant.
"""
from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core.errors import TypingError
from numba.extending import intrinsic, overload, register_jitable
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


# ------------------------------------ max, min and sum in a form LLVM vectorises
# numba's np.max(row) is a scalar loop (the running maximum is one chain of
# dependent compares, and it tests every element for NaN by a branch) and its
# np.sum(row) one chain of dependent adds: IEEE order forbids LLVM to split
# either into vector lanes.  The max and min loops below give LLVM that
# freedom on the running value only, through fast-math flags on just those
# instructions (numba's fastmath= flags a whole function, which would fold
# the NaN test ``a != a`` below to False); the sum is NumPy's own pairwise
# sum, whose 8 partial sums are one vector.  Measured with numba 0.68
# (LLVM 22) on an AVX-512 Xeon shared with other work (so +-30%), best of
# 200 calls of an njit function calling the helper, float64:
#                           before    after
#   max (256, 256) axis -1   89 us    14 us   (vmaxpd and vcmpunordpd, 4 ymm registers)
#   max (256, 256) axis 0    91 us    12 us   (whole rows at a time, below)
#   max (1000,) axis None   1.9 us   0.5 us   (0.35 us of it the loop, the rest shapes)
#   sum (256, 256) axis -1   34 us    24 us   (NumPy's 21 us, to the bit)
#   sum (256, 256) axis 0    76 us     8 us
#   sum (1000,) axis None   1.0 us   0.6 us
# min as max, mean as sum.
def _picker(op):
    """An intrinsic ``pick(m, a)``: ``m if m op a else a`` as one compare and one select.

    For floats both instructions carry ``nnan nsz``: with them LLVM turns the
    loop-carried select into a vector max (min) reduction.  They let LLVM
    give any value, even poison, once ``m`` or ``a`` is a NaN, and either
    zero for ``max(-0.0, 0.0)``; the callers test for NaN themselves and
    never return such a pick.  Integers and bools need no flags.
    """
    @intrinsic
    def pick(typingctx, m, a):
        if m != a or not isinstance(m, (types.Float, types.Integer, types.Boolean)):
            return None

        def codegen(context, builder, signature, args):
            m, a = args
            if isinstance(signature.args[0], types.Float):
                keep = builder.fcmp_ordered(op, m, a, flags=("nnan", "nsz"))
                return builder.select(keep, m, a, flags=("nnan", "nsz"))
            signed = isinstance(signature.args[0], types.Integer) and signature.args[0].signed
            keep = (builder.icmp_signed if signed else builder.icmp_unsigned)(op, m, a)
            return builder.select(keep, m, a)
        return m(m, a), codegen
    return pick


_pick_larger = _picker(">")
_pick_smaller = _picker("<")


# NumPy sums a contiguous row pairwise (pairwise_sum in its loops_utils.h.src):
# a row of up to 128 in 8 running partial sums, element k into sum k % 8,
# added as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the last
# n % 8 in order; a longer row as the sums of two halves (the first a
# multiple of 8).  The 8 partial sums are the 8 lanes of one vector, which
# changes no rounding, so this is NumPy's sum to the bit, near NumPy's speed.
# (Flagging the adds of a running sum ``reassoc`` instead lets LLVM choose
# its own 16 partial sums: 3x faster still, but not NumPy's result, and
# gradients that cancel to exactly 0 in NumPy then do not under jit.)
_PAIRWISE_BLOCK = 128
_LANES = 8


def _lane_summer(squared: bool):
    """The 8 partial sums of ``a[start:start + 8 * blocks]`` (``blocks >= 1``), added as NumPy adds them;
    of the elements' squares (``x * x``, each rounded as NumPy's ``x ** 2``) where ``squared``.

    numba runs no SLP vectoriser, which would turn 8 scalar running sums
    into one vector; so the loop is written here as a vector loop.
    """
    @intrinsic
    def lane_sums(typingctx, a, start, blocks):
        if not (isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" and isinstance(a.dtype, types.Float)):
            return None

        def codegen(context, builder, signature, args):
            array_type = signature.args[0]
            data = context.make_array(array_type)(context, builder, args[0]).data
            element = context.get_value_type(array_type.dtype)
            lanes_type = ir.VectorType(element, _LANES)
            i64 = ir.IntType(64)
            start, blocks = args[1], args[2]
            one = ir.Constant(i64, 1)

            def load(index):   # 8 elements from a[index], aligned as one element is (squared, where asked)
                pointer = builder.bitcast(builder.gep(data, [index]), lanes_type.as_pointer())
                lanes = builder.load(pointer, align=context.get_abi_sizeof(element))
                return builder.fmul(lanes, lanes) if squared else lanes

            first = load(start)
            entry = builder.block
            loop = builder.append_basic_block("lane_sums.loop")
            done = builder.append_basic_block("lane_sums.done")
            builder.cbranch(builder.icmp_signed(">", blocks, one), loop, done)

            builder.position_at_end(loop)
            block = builder.phi(i64)
            running = builder.phi(lanes_type)
            added = builder.fadd(running, load(builder.add(start, builder.mul(block, ir.Constant(i64, _LANES)))))
            following = builder.add(block, one)
            block.add_incoming(one, entry)
            block.add_incoming(following, loop)
            running.add_incoming(first, entry)
            running.add_incoming(added, loop)
            builder.cbranch(builder.icmp_signed("<", following, blocks), loop, done)

            builder.position_at_end(done)
            sums = builder.phi(lanes_type)
            sums.add_incoming(first, entry)
            sums.add_incoming(added, loop)
            r = [builder.extract_element(sums, ir.Constant(ir.IntType(32), k)) for k in range(_LANES)]
            add = builder.fadd
            return add(add(add(r[0], r[1]), add(r[2], r[3])), add(add(r[4], r[5]), add(r[6], r[7])))
        return a.dtype(a, types.int64, types.int64), codegen
    return lane_sums


_lane_sums = _lane_summer(squared=False)
_lane_sums_of_squares = _lane_summer(squared=True)


def _block_summer(squared: bool):
    lane_sums = _lane_sums_of_squares if squared else _lane_sums

    @njit
    def pairwise_block(a, start, n):
        """NumPy's sum of ``a[start:start + n]`` (of their squares, where ``squared``), ``n <= 128``."""
        if n < _LANES:
            total = a.dtype.type(0)
            for i in range(start, start + n):
                total += a[i] * a[i] if squared else a[i]
            return total
        blocks = n // _LANES
        total = lane_sums(a, start, blocks)
        for i in range(start + _LANES * blocks, start + n):
            total += a[i] * a[i] if squared else a[i]
        return total
    return pairwise_block


_pairwise_block = _block_summer(squared=False)
_pairwise_block_of_squares = _block_summer(squared=True)


@njit
def _pairwise_halves(a, start, n):
    """NumPy's sum of ``a[start:start + n]``, ``n > 128``: the sums of two halves."""
    half = n // 2
    half -= half % _LANES
    # a half of up to 128 is one block: no further level of recursion, which numba cannot inline
    left = _pairwise_block(a, start, half) if half <= _PAIRWISE_BLOCK else _pairwise_halves(a, start, half)
    rest = n - half
    right = _pairwise_block(a, start + half, rest) if rest <= _PAIRWISE_BLOCK else _pairwise_halves(a, start + half, rest)
    return left + right


def _extreme_of_row(pick):
    """The max (min) of a non-empty contiguous row, NaN if it holds one, as np.max (np.min)."""
    # the overloads below return these implementations themselves, not njit
    # functions wrapped in a call: each njit layer is one more numba and LLVM
    # compile of every generated function that reduces
    def extreme(row, unused):
        m = row[0]
        seen_nan = False
        for j in range(row.size):
            a = row[j]
            m = pick(m, a)
            seen_nan |= a != a     # an or-reduction beside the max, vectorised with it
        if seen_nan:
            for a in row:          # the first NaN, as NumPy returns for short rows
                if a != a:
                    return a
        return m
    return extreme


_max_of_row = _extreme_of_row(_pick_larger)
_min_of_row = _extreme_of_row(_pick_smaller)


@njit
def _pairwise_sum(row):
    n, start = row.size, np.intp(0)    # not a literal 0, for which numba would compile both again
    total = _pairwise_block(row, start, n) if n <= _PAIRWISE_BLOCK else _pairwise_halves(row, start, n)
    return row.dtype.type(0) + total    # NumPy adds the row to 0.0: a sum of -0.0s is 0.0


def _sum_of_row(row, unused):
    return _pairwise_sum(row)


def _mean_of_row(row, unused):
    # np.mean of an empty row is NaN (with a warning), not a ZeroDivisionError
    return _pairwise_sum(row) / row.size if row.size else np.nan


def _row_max(row, unused):
    return np.max(row)


def _row_min(row, unused):
    return np.min(row)


def _row_sum(row, unused):
    return np.sum(row)


def _row_mean(row, unused):
    return np.mean(row)


def _vectorisable(row) -> bool:
    # complex numbers keep numba's own functions (its lexicographic order for max)
    return isinstance(row, types.Array) and isinstance(row.dtype, (types.Float, types.Integer, types.Boolean))


def _is_float_row(row) -> bool:
    # integer adds reassociate anyway (numba's np.sum over ints vectorises), and
    # np.mean adds integers as float64
    return isinstance(row, types.Array) and row.layout == "C" and isinstance(row.dtype, types.Float)


def _overload_row(helper, loop, takes, numba_function):
    """``helper(row, unused)`` compiled as ``loop`` for rows it ``takes``, else as numba's function."""
    @overload(helper)
    def typed(row, unused):
        return loop if takes(row) else (lambda row, unused: numba_function(row))
    return typed


for _helper, _loop, _takes, _numba_function in ((_row_max, _max_of_row, _vectorisable, np.max),
                                                (_row_min, _min_of_row, _vectorisable, np.min),
                                                (_row_sum, _sum_of_row, _is_float_row, np.sum),
                                                (_row_mean, _mean_of_row, _is_float_row, np.mean)):
    _overload_row(_helper, _loop, _takes, _numba_function)


# ------------------------------------------- a non-last axis: whole rows at a time
# Reducing axis 1 of (outer, n, inner) blocks with inner > 1 one column
# blocks[o, :, i] at a time strides through memory; combining whole rows
# out[o, :] with blocks[o, j, :] reads it in order, and the loop over a row has
# no carried dependency, so LLVM vectorises it without any fast-math flag.
# This is also NumPy's own order for such axes, so max, min and sum match it
# exactly, signed zeros included.
def _one_column_at_a_time(reduce_row):
    """The columns reducer for any row reducer: each blocks[o, :, i] on its own (a Python function, for njit)."""
    def reduce_columns(blocks, param, out_type):
        outer, n, inner = blocks.shape
        out = np.empty(outer * inner, out_type)
        for o in range(outer):
            for i in range(inner):
                out[o * inner + i] = reduce_row(blocks[o, :, i], param)
        return out
    return reduce_columns


def _columns_extreme(keeps, reduce_row):
    """The columns reducer of max (min), for ``keeps`` operator.gt (operator.lt)."""
    def whole_rows(blocks, param, out_type):
        outer, n, inner = blocks.shape
        out = np.empty(outer * inner, out_type)    # flat: a 2-D out and its ravel() cost compile time
        for o in range(outer):
            first, at = blocks[o, 0], o * inner
            for i in range(inner):      # not out[...] = first: its shape check costs a second of compile
                out[at + i] = first[i]
            for j in range(1, n):
                row = blocks[o, j]
                for i in range(inner):
                    m, a = out[at + i], row[i]
                    # np.maximum(m, a): a NaN in either gives NaN, a tie gives a
                    out[at + i] = m if (keeps(m, a) or m != m) else a
        return out

    one_at_a_time = _one_column_at_a_time(reduce_row)

    def reduce_columns(blocks, param, out_type):
        return one_at_a_time(blocks, param, out_type)

    @overload(reduce_columns)
    def reduce_columns_numba(blocks, param, out_type):
        return whole_rows if _vectorisable(blocks) else one_at_a_time
    return reduce_columns


@njit
def _sum_columns(blocks, param, out_type):
    outer, n, inner = blocks.shape
    out = np.zeros(outer * inner, out_type)
    for o in range(outer):
        at = o * inner
        for j in range(n):
            row = blocks[o, j]
            for i in range(inner):
                out[at + i] += out_type(row[i])
    return out


@njit
def _mean_columns(blocks, param, out_type):
    out = _sum_columns(blocks, param, out_type)
    n = blocks.shape[1]
    for k in range(out.size):
        out[k] = out[k] / n if n else np.nan
    return out


# --------------------------------------------------- one row at a time, in numba
@njit
def _row_prod(row, unused):
    return np.prod(row)


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


def _reduction(reduce_row, numpy_result_dtype, reduce_columns=None, operation=None, pairwise=None):
    """An overload typer for ``helper(x, axis, keepdims[, param])``.

    ``reduce_columns(blocks, param, out_type)``, where given, reduces blocks
    with ``inner > 1`` whole rows at a time; ``operation`` is the ufunc of a
    reduction without an identity (np.maximum, np.minimum), which NumPy refuses
    over an empty axis even when there is nothing to reduce; ``pairwise`` the
    reduction (np.sum or np.mean) whose float rows NumPy adds in pairwise order.
    """
    # reduce_row and reduce_columns are closure constants, not arguments:
    # numba cannot cache code that receives a function as an argument
    if reduce_columns is None:
        reduce_columns = njit(_one_column_at_a_time(reduce_row))
    has_no_identity = operation is not None
    empty_message = (f"zero-size array to reduction operation {operation.__name__} which has no identity"
                     if has_no_identity else "")

    @njit
    def reduce_blocks(blocks, param, out_type):
        outer, n, inner = blocks.shape
        if has_no_identity and n == 0:
            raise ValueError(empty_message)
        if inner != 1:
            return reduce_columns(blocks, param, out_type)
        # blocks[o, :, 0] would be typed 'A' (any layout), which keeps numba's
        # loops over it scalar; rows of the 2-D reshape are typed contiguous
        rows = blocks.reshape((outer, n))
        out = np.empty(outer, out_type)
        for o in range(outer):
            out[o] = reduce_row(rows[o], param)
        return out

    # The sum (mean) of each contiguous float row read in place, flat[o * n:(o + 1) * n], in NumPy's
    # pairwise order.  A slice per row costs numba an array structure each, and so does a call per row
    # (numba's inline="always" too): for short rows (k-means' distances over d = 8 coordinates,
    # 500,000 rows) either was 4-10x the adds themselves.
    mean = pairwise is np.mean

    @njit
    def reduce_spans(blocks, param, out_type):
        outer, n, inner = blocks.shape
        if inner != 1:
            return reduce_columns(blocks, param, out_type)
        flat = blocks.reshape(-1)
        out = np.empty(outer, out_type)
        for o in range(outer):
            start = o * n
            total = _pairwise_block(flat, start, n) if n <= _PAIRWISE_BLOCK else _pairwise_halves(flat, start, n)
            total = flat.dtype.type(0) + total            # NumPy adds the row to 0.0: a sum of -0.0s is 0.0
            out[o] = (total / n if n else np.nan) if mean else total
        return out

    def typer(x, axis, keepdims, param=0):
        if isinstance(x, (types.Number, types.Boolean)) and _is_none(axis) and not constant_bool(keepdims, "keepdims"):
            # np.sum(3.0): the reduction of a one-element array, a scalar as NumPy's
            scalar_type = numpy_result_dtype(as_dtype(x)).type
            return lambda x, axis, keepdims, param=0: reduce_blocks(np.full((1, 1, 1), x), param, scalar_type)[0]
        if not isinstance(x, types.Array):
            return None
        reduce = reduce_spans if pairwise is not None and isinstance(x.dtype, types.Float) else reduce_blocks
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
            out = reduce(blocks, param, out_type)
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


_ROWS = {   # helper: (row reducer, result dtype[, columns reducer, ufunc without identity, pairwise rows])
    sum_axis: (_row_sum, _dtype_of(np.sum), _sum_columns, None, np.sum),
    mean_axis: (_row_mean, _dtype_of(np.mean), _mean_columns, None, np.mean),
    prod_axis: (_row_prod, _dtype_of(np.prod)),
    max_axis: (_row_max, _dtype_of(np.max), _columns_extreme(operator.gt, _row_max), np.maximum),
    min_axis: (_row_min, _dtype_of(np.min), _columns_extreme(operator.lt, _row_min), np.minimum),
    any_axis: (_row_any, _dtype_of(np.any)),
    all_axis: (_row_all, _dtype_of(np.all)),
    std_axis: (_row_std, _dtype_of(np.std)),
    var_axis: (_row_var, _dtype_of(np.var)),
}
for _helper, _how in _ROWS.items():
    overload(_helper, prefer_literal=True)(_reduction(*_how))


_two_norm = _reduction(_row_two_norm, _dtype_of(np.linalg.norm))
_ord_norm = _reduction(_row_norm, _dtype_of(np.linalg.norm))


@overload(norm_axis, prefer_literal=True)
def _norm_axis(x, axis, keepdims, param=0):  # param: ord (numba wants the typer's names on the impl)
    if isinstance(param, (types.NoneType, types.Omitted)) or param is None:
        return _two_norm(x, axis, keepdims, param)   # 2-norm of vectors, Frobenius of matrices
    if isinstance(param, types.StringLiteral) and param.literal_value == "fro":
        return _two_norm(x, axis, keepdims, None)    # Frobenius: the 2-norm of all the entries
    if _is_none(axis) and isinstance(x, types.Array) and x.ndim == 2:
        return _matrix_norm(x, keepdims, param)
    if isinstance(axis, types.BaseTuple) and len(axis) == 2 and isinstance(x, types.Array):
        return _matrix_norms_over(x, axis, keepdims, param)
    if isinstance(param, (types.StringLiteral, types.UnicodeType)) or isinstance(axis, types.BaseTuple) \
            or (_is_none(axis) and x.ndim != 1):
        raise TypingError("np.linalg.norm under jit: matrix norms other than 'fro' take a 2-D array and no axis")
    return _ord_norm(x, axis, keepdims, param)


def _matrix_norm_kernel(x, ord):
    """``(cls, value_of)``: the result's scalar type, and a jitted ``value_of(a, ord)``, the norm of one
    2-D array: 'nuc', ord 1, -1, inf, -inf (column or row sums of magnitudes), 2 and -2 (largest and
    smallest singular values)."""
    cls = np.result_type(as_dtype(x.dtype), np.float32).type if as_dtype(x.dtype).kind == "f" else np.float64
    nuclear = isinstance(ord, types.StringLiteral)
    if nuclear and ord.literal_value != "nuc":
        raise TypingError(f"np.linalg.norm: ord={ord.literal_value!r} is not a matrix norm")

    @register_jitable
    def value_of(a, param):
        if nuclear or param == 2 or param == -2:
            singular = np.linalg.svd(a)[1]
            return np.sum(singular) if nuclear else (np.max(singular) if param == 2 else np.min(singular))
        if param == 1 or param == -1:
            columns = np.sum(np.abs(a), axis=0)
            return np.max(columns) if param == 1 else np.min(columns)
        if param == np.inf or param == -np.inf:
            rows = np.sum(np.abs(a), axis=1)
            return np.max(rows) if param == np.inf else np.min(rows)
        raise ValueError("np.linalg.norm: invalid norm order for matrices")
    return cls, value_of


def _literal_keepdims(keepdims) -> bool:
    if not isinstance(keepdims, (types.BooleanLiteral, types.NoneType, types.Omitted)) and keepdims is not None:
        raise TypingError("np.linalg.norm under jit: keepdims must be a literal True or False")
    return bool(getattr(keepdims, "literal_value", False))


def _matrix_norm(x, keepdims, ord):
    """NumPy's matrix norms of a 2-D array (``_matrix_norm_kernel``)."""
    cls, value_of = _matrix_norm_kernel(x, ord)
    keep = _literal_keepdims(keepdims)

    def norm_of_matrix(x, axis, keepdims, param=0):
        value = value_of(np.asarray(x).astype(cls), param)
        if keep:
            out = np.empty((1, 1), cls)
            out[0, 0] = value
            return out
        return cls(value)
    return norm_of_matrix


def _matrix_norms_over(x, axis, keepdims, ord):
    """NumPy's matrix norms over a literal pair of axes of an n-D array: the two axes are moved last
    (in the pair's order, which decides rows and columns), and each matrix of the stack is normed."""
    if not all(isinstance(a, types.IntegerLiteral) for a in axis):
        raise TypingError("np.linalg.norm under jit: a matrix norm's axis pair must be literal integers")
    ndim = x.ndim
    rows, columns = (a.literal_value % ndim for a in axis)
    if rows == columns:
        raise TypingError("np.linalg.norm: the two axes of a matrix norm must differ")
    kept = tuple(a for a in range(ndim) if a not in (rows, columns))
    permutation = kept + (rows, columns)
    cls, value_of = _matrix_norm_kernel(x, ord)
    keep = _literal_keepdims(keepdims)
    n_kept = len(kept)
    out_ndim = ndim if keep else n_kept

    def norms_over(x, axis, keepdims, param=0):
        moved = np.ascontiguousarray(np.transpose(np.asarray(x), permutation)).astype(cls)
        shape = np.array(moved.shape)
        m, n = shape[-2], shape[-1]
        count = 1
        for k in range(n_kept):
            count *= shape[k]
        stack = moved.reshape((count, m, n))
        out = np.empty(count, cls)
        for b in range(count):
            out[b] = value_of(stack[b], param)
        out_shape = np.array(x.shape)
        if keep:
            out_shape[rows] = 1
            out_shape[columns] = 1
        else:
            out_shape = shape[:n_kept]
        return _shaped(out, to_fixed_tuple(out_shape, out_ndim))
    return norms_over


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
