"""Array helpers for numba: shapes, products and casts it does not compile.

As in ``numba_reductions``, each helper is the NumPy meaning in plain NumPy
plus an ``overload`` that numba compiles instead.  Helpers whose overload
simply calls numba's own function for the forms numba has exist so that a
call site needs no type information: the lowering cannot know whether
``np.dot(a, b)`` sees float matrices (numba's BLAS path) or integer ones
(a loop here).
"""
from __future__ import annotations

import numpy as np
from numba import njit, types, vectorize
from numba.core.errors import TypingError
from numba.extending import overload
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from .. import lax, runtime
from .numba_reductions import _axis_index
from .numba_small_arrays import NOT_A_NUMBER


def _is_array(t) -> bool:
    return isinstance(t, types.Array)


def _is_none(t) -> bool:
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


# ------------------------------------------------------------------- shapes
def reshape(x, shape):
    return np.reshape(x, shape)


@overload(reshape)
def _reshape(x, shape):
    # numba reshapes only contiguous arrays (a transposed one fails at run
    # time); NumPy copies in that case, and so does this.
    if _is_array(x):
        return lambda x, shape: np.ascontiguousarray(x).reshape(shape)
    return lambda x, shape: np.asarray(x).reshape(shape)


def broadcast_to(x, shape):
    return np.broadcast_to(x, shape)


@overload(broadcast_to)
def _broadcast_to(x, shape):
    # numba cannot build a 0-d broadcast (an IndexError inside its lowering);
    # the adjoint of rt.unbroadcast asks for one when a scalar was broadcast.
    # Compiled code carries 0-d values as scalars, so the value itself is it.
    if isinstance(shape, types.BaseTuple) and len(shape) == 0:
        if not _is_array(x):
            return lambda x, shape: x
        if x.ndim == 0:
            return lambda x, shape: x[()]
        raise TypingError(f"cannot broadcast a {x.ndim}-D array to shape ()")
    return lambda x, shape: np.broadcast_to(x, shape)


def transpose(x, axes=None):
    return np.transpose(x, axes)


@overload(transpose)
def _transpose(x, axes=None):
    # numba's np.transpose takes arrays only; NumPy's of a number (a 0-d result: (v.sum(0)).T) is itself
    if not _is_array(x):
        return lambda x, axes=None: x
    if _is_none(axes):
        return lambda x, axes=None: np.transpose(x)
    return lambda x, axes=None: np.transpose(x, axes)


def squeeze(x, axis):
    return np.squeeze(x, axis=axis)


@overload(squeeze, prefer_literal=True)
def _squeeze(x, axis):
    # numba has no np.squeeze.  Without axis= the result's ndim depends on
    # the run-time shape, which compiled code cannot have.
    if not _is_array(x):
        return None
    ndim = x.ndim
    if _is_none(axis):
        raise TypingError("np.squeeze(x) needs axis= under jit (the result's ndim must be known "
                          "when compiling); write np.squeeze(x, axis=k)")
    axes = (axis,) if isinstance(axis, types.Integer) else tuple(axis)
    out_ndim = ndim - len(axes)

    def impl(x, axis):
        dropped = np.zeros(ndim, np.bool_)
        for a in _as_tuple(axis):
            k = _axis_index(a, ndim)
            if x.shape[k] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
            dropped[k] = True
        shape = np.array(x.shape)[~dropped]
        return np.ascontiguousarray(x).reshape(to_fixed_tuple(shape, out_ndim))

    return impl


def _as_tuple(axis):
    return axis if isinstance(axis, tuple) else (axis,)


@overload(_as_tuple)
def _as_tuple_numba(axis):
    if isinstance(axis, types.BaseTuple):
        return lambda axis: axis
    return lambda axis: (axis,)


def flip_axis(x, axis):
    return np.flip(x, axis=axis)


@overload(flip_axis)
def _flip_axis(x, axis):
    # numba has np.flip(x) but not np.flip(x, axis); reversing the first axis
    # of a swapped view and swapping back is the same view NumPy returns.
    if _is_array(x) and isinstance(axis, types.Integer):
        return lambda x, axis: np.swapaxes(np.swapaxes(x, 0, axis)[::-1], 0, axis)
    return None


def ndim(x):
    return np.ndim(x)


@overload(ndim)
def _ndim(x):
    # numba has no np.ndim; it is a constant of the argument's type.
    n = x.ndim if _is_array(x) else len(x) if isinstance(x, types.BaseTuple) else 0
    return lambda x: n


# ---------------------------------------------------------------- creation
def linspace(start, stop, num, endpoint):
    return np.linspace(start, stop, num, endpoint=endpoint)


@overload(linspace)
def _linspace(start, stop, num, endpoint):
    # numba's np.linspace has no endpoint=; without the end point the step is (stop - start) / num
    def points(start, stop, num, endpoint):
        if endpoint:
            return np.linspace(start, stop, num)
        return start + (stop - start) * (np.arange(num) / num)
    return points


# ---------------------------------------------------------------- arithmetic
def clip(x, lo, hi):
    return np.clip(x, lo, hi)


@overload(clip)
def _clip(x, lo, hi):
    # numba's np.clip takes arrays only; NumPy also clips a scalar.
    if _is_array(x):
        float_bounds = isinstance(lo, types.Float) or isinstance(hi, types.Float)
        if isinstance(x.dtype, (types.Integer, types.Boolean)) and float_bounds:
            # NumPy clips integers and booleans between float bounds in float64; numba keeps their type
            return lambda x, lo, hi: np.clip(x.astype(np.float64), lo, hi)
        if isinstance(x.dtype, types.Boolean):
            # between integer bounds, booleans are clipped as integers (NumPy's int64)
            return lambda x, lo, hi: np.clip(x.astype(np.int64), lo, hi)
        return lambda x, lo, hi: np.clip(x, lo, hi)
    if _is_none(lo):
        return lambda x, lo, hi: min(x, hi)
    if _is_none(hi):
        return lambda x, lo, hi: max(x, lo)
    return lambda x, lo, hi: min(max(x, lo), hi)


def sign(x):
    return np.sign(x)


@overload(sign)
def _sign(x):
    # numba's np.sign reads an unsigned integer as signed: 249 as uint8 gave 255 (-1)
    dtype = x.dtype if _is_array(x) else x
    if isinstance(dtype, types.Integer) and not dtype.signed:
        if _is_array(x):
            return lambda x: (x > 0).astype(x.dtype)
        unsigned = as_dtype(dtype).type
        return lambda x: unsigned(1) if x > 0 else unsigned(0)
    return lambda x: np.sign(x)


def fmod(x, y):
    return np.fmod(x, y)


# each unsigned type before the signed one of its width: the first signature its operands cast to
# safely is taken, and uint8's was int16's (NumPy keeps uint8)
@vectorize(["uint8(uint8, uint8)", "int8(int8, int8)", "uint16(uint16, uint16)", "int16(int16, int16)",
            "uint32(uint32, uint32)", "int32(int32, int32)", "uint64(uint64, uint64)", "int64(int64, int64)"])
def _integer_fmod(a, b):
    """C's remainder, the sign of the dividend (numba's np.fmod of integers gave 7 for fmod(7, -2));
    0 for a divisor of 0, as NumPy gives (with its warning)."""
    if b == 0:
        return 0
    r = a % b                    # Python's, the sign of the divisor
    if r != 0 and (r < 0) != (a < 0):
        r -= b
    return r


def _is_integer(t) -> bool:
    return isinstance(getattr(t, "dtype", t), types.Integer)


@overload(fmod)
def _fmod(x, y):
    if _is_integer(x) and _is_integer(y):
        return lambda x, y: _integer_fmod(x, y)
    return lambda x, y: np.fmod(x, y)


def power(x, y):
    return x ** y


@overload(power)
def _power(x, y):
    # numba's integer ** negative integer is 0 (2 ** -7 came out 0): NumPy refuses it, and Python's
    # float result is no integer type compiled code can give, so it raises as NumPy does
    if not (_is_integer(x) and _is_integer(y)):
        return lambda x, y: x ** y
    if _is_array(y):
        def checked_each(x, y):
            if np.any(y < 0):
                raise ValueError("Integers to negative integer powers are not allowed.")
            return x ** y
        return checked_each

    def checked(x, y):
        if y < 0:
            raise ValueError("Integers to negative integer powers are not allowed.")
        return x ** y
    return checked


def dot(x, y):
    return np.dot(x, y)


def matmul(x, y):
    return np.matmul(x, y)


def inner(x, y):
    return np.inner(x, y)


def vdot(x, y):
    return np.vdot(x, y)


def trace(x):
    return np.trace(x)


def _is_float_array(t) -> bool:
    return _is_array(t) and isinstance(t.dtype, (types.Float, types.Complex))


@njit
def _int_matmul(x, y, out_type):
    # numba's np.dot is BLAS: floats only.  NumPy multiplies integers exactly.
    out = np.zeros((x.shape[0], y.shape[1]), out_type)
    for i in range(x.shape[0]):
        for k in range(x.shape[1]):
            for j in range(y.shape[1]):
                out[i, j] += x[i, k] * y[k, j]
    return out


@njit
def _as_row(v):
    return np.ascontiguousarray(v).reshape((1, v.size))


@njit
def _as_column(v):
    return np.ascontiguousarray(v).reshape((v.size, 1))


@overload(dot)
def _dot(x, y):
    if not _is_array(x) or not _is_array(y):
        return lambda x, y: x * y           # np.dot with a scalar multiplies
    if x.ndim > 2 or y.ndim > 2:
        raise TypingError("np.dot of arrays with more than two dimensions is not supported under jit; "
                          "for stacks of matrices write x @ y")
    if _is_float_array(x) and _is_float_array(y):
        if x.dtype != y.dtype:
            # numba's BLAS call needs one dtype; NumPy promotes (float32 with float64 is float64)
            common = np.result_type(as_dtype(x.dtype), as_dtype(y.dtype)).type
            return lambda x, y: np.dot(x.astype(common), y.astype(common))
        if x.ndim == 2 and y.ndim == 2 and "A" in (x.layout, y.layout):
            def strided(x, y):     # numba's np.dot would copy the strided one first
                if x.shape[1] != y.shape[0]:
                    raise ValueError("dot: shapes not aligned")
                out = np.empty((x.shape[0], y.shape[1]), x.dtype)
                gemm_into(x, y, out)
                return out
            return strided
        return lambda x, y: np.dot(x, y)
    t = np.result_type(as_dtype(x.dtype), as_dtype(y.dtype)).type
    # 1-D operands become a row / a column, and lose that axis again after
    if x.ndim == 1 and y.ndim == 1:
        return lambda x, y: _int_matmul(_as_row(x), _as_column(y), t)[0, 0]
    if x.ndim == 1:
        return lambda x, y: _int_matmul(_as_row(x), y, t)[0]
    if y.ndim == 1:
        return lambda x, y: _int_matmul(x, _as_column(y), t)[:, 0]
    return lambda x, y: _int_matmul(x, y, t)


# ------------------------------------------------- products of strided matrices
# numba's np.dot hands BLAS C- or F-contiguous matrices only, and copies any
# other; NumPy's matmul passes BLAS a matrix whose rows (or columns) are
# contiguous but spaced further apart, giving the spacing as its leading
# dimension.  The matrices of a transposed stack are such views: a stack's
# x[i] of np.transpose(c, (1, 2, 0)) is a column-major matrix with a leading
# dimension of c.shape[1] * c.shape[2].  Copying each one first (or the whole
# stack, as np.ascontiguousarray did) made GMM's (100, 64, 64) @ (100, 64, 1000)
# 2.5x NumPy's time; gemm_into calls BLAS on the view itself.
def gemm_into(a, b, out):
    """``out[...] = a @ b`` for matrices (the NumPy meaning)."""
    out[...] = a @ b


def _blas_layout(x, item):
    """(transposed, leading dimension) of a matrix in BLAS's column-major terms: a row-major x
    (contiguous rows, any spacing) is its transpose there; (-1, -1) if x has neither form."""


@overload(_blas_layout)
def _blas_layout_numba(x, item):
    def impl(x, item):
        rows, cols = x.shape
        row_step, col_step = x.strides
        # a size-1 dim's stride is never used: any spacing will do
        if cols == 1:
            col_step = item
        if rows == 1:
            row_step = max(cols, 1) * item if col_step == item else item
        if col_step == item and row_step > 0 and row_step % item == 0 and row_step // item >= max(cols, 1):
            return 0, row_step // item        # rows contiguous: x^T column-major, as it is in memory
        if row_step == item and col_step > 0 and col_step % item == 0 and col_step // item >= max(rows, 1):
            return 1, col_step // item        # columns contiguous: x column-major
        return -1, -1
    return impl


@overload(gemm_into)
def _gemm_into(a, b, out):
    if not (_is_float_array(a) and _is_float_array(b) and _is_array(out) and a.ndim == 2 and b.ndim == 2
            and out.ndim == 2 and a.dtype == b.dtype == out.dtype and out.layout == "C"):
        return lambda a, b, out: np.dot(np.ascontiguousarray(a), np.ascontiguousarray(b), out)
    from numba.np.linalg import _BLAS, get_blas_kind
    xxgemm = _BLAS().numba_xxgemm(a.dtype)
    kind = ord(get_blas_kind(a.dtype))
    transposed, straight = ord("t"), ord("n")
    dtype = a.dtype

    def impl(a, b, out):
        m, k = a.shape
        n = b.shape[1]
        if m == 0 or n == 0:
            return
        if k == 0:
            out[...] = 0
            return
        item = out.itemsize
        a_order, lda = _blas_layout(a, item)
        if a_order < 0:
            a = np.ascontiguousarray(a)
            a_order, lda = 0, k
        b_order, ldb = _blas_layout(b, item)
        if b_order < 0:
            b = np.ascontiguousarray(b)
            b_order, ldb = 0, n
        one = np.ones(1, dtype)
        zero = np.zeros(1, dtype)
        # row-major out = a @ b is column-major out^T = b^T a^T: BLAS's first operand is b^T
        # (b row-major is b^T as stored), its second a^T
        xxgemm(kind, transposed if b_order else straight, transposed if a_order else straight,
               n, m, k, one.ctypes, b.ctypes, ldb, a.ctypes, lda, zero.ctypes, out.ctypes, n)
    return impl


@overload(matmul)
def _matmul(x, y):
    if not _is_array(x) or not _is_array(y):
        raise TypingError("matmul: both operands must be arrays")
    if x.ndim <= 2 and y.ndim <= 2:
        return lambda x, y: dot(x, y)
    # a 1-D operand is a row (x) or a column (y) of every matrix in the other's stack, and loses that axis
    if x.ndim == 1:
        return lambda x, y: matmul(x.reshape((1, x.size)), y).reshape(y.shape[:-2] + (y.shape[-1],))
    if y.ndim == 1:
        return lambda x, y: matmul(x, y.reshape((y.size, 1))).reshape(x.shape[:-1])
    if x.ndim != y.ndim and min(x.ndim, y.ndim) != 2:
        raise TypingError("batched x @ y under jit needs equal ndim, or one 2-D operand")
    out_ndim = max(x.ndim, y.ndim)

    blas = _is_float_array(x) and _is_float_array(y) and x.dtype == y.dtype

    def impl(x, y):
        # numba's @ is 2-D only: loop over the stacked matrices
        a = _stacked(x)
        b = _stacked(y)
        batch = max(a.shape[0], b.shape[0])
        if a.shape[0] != b.shape[0] and min(a.shape[0], b.shape[0]) != 1:
            raise ValueError("matmul: batch dimensions do not match")
        if blas:           # each product written in place, BLAS reading strided views as they are
            if a.shape[2] != b.shape[1]:
                raise ValueError("matmul: shapes not aligned")
            out = np.empty((batch, a.shape[1], b.shape[2]), a.dtype)
            for i in range(batch):
                gemm_into(a[min(i, a.shape[0] - 1)], b[min(i, b.shape[0] - 1)], out[i])
            rows, cols = a.shape[1], b.shape[2]
        else:
            first = dot(a[0], b[0])
            out = np.empty((batch, first.shape[0], first.shape[1]), first.dtype)
            for i in range(batch):
                out[i] = dot(a[min(i, a.shape[0] - 1)], b[min(i, b.shape[0] - 1)])
            rows, cols = first.shape
        lead = np.array(x.shape if x.ndim >= y.ndim else y.shape)
        lead[-2] = rows
        lead[-1] = cols
        return out.reshape(to_fixed_tuple(lead, out_ndim))

    return impl


def _stacked(x):
    return x.reshape((-1,) + x.shape[-2:])


@overload(_stacked)
def _stacked_numba(x):
    if x.ndim == 2:
        return lambda x: x[None, :, :]    # a view in any layout (reshape takes contiguous ones only)
    if x.ndim == 3:
        return lambda x: x          # any layout: its matrices are taken one at a time
    return lambda x: np.ascontiguousarray(x).reshape((-1, x.shape[-2], x.shape[-1]))


@overload(inner)
def _inner(x, y):
    # numba has no np.inner; for at most 2-D operands it is a dot with y's
    # last axis moved first.
    if not _is_array(x) or not _is_array(y):
        return lambda x, y: x * y
    if y.ndim == 1:
        return lambda x, y: dot(x, y)
    if y.ndim == 2:
        return lambda x, y: dot(x, y.T)
    raise TypingError("np.inner of arrays with more than two dimensions is not supported under jit")


@overload(vdot)
def _vdot(x, y):
    # numba's np.vdot takes vectors only; NumPy's flattens its operands first
    if _is_array(x) and _is_array(y) and (x.ndim != 1 or y.ndim != 1):
        return lambda x, y: dot(np.ascontiguousarray(x).reshape(-1), np.ascontiguousarray(y).reshape(-1))
    return lambda x, y: np.vdot(x, y)


@overload(trace)
def _trace(x):
    # numba's np.trace rejects integer arrays
    if _is_array(x) and x.ndim == 2:
        return lambda x: np.sum(np.diag(x))
    return None


# ------------------------------------------------------------ linear algebra
# numba's np.linalg functions take one matrix; NumPy's also take a stack of them (every matrix of
# the leading axes), which these overloads decompose one matrix at a time.
def inv(x):
    return np.linalg.inv(x)


def det(x):
    return np.linalg.det(x)


def solve(a, b):
    return np.linalg.solve(a, b)


def cholesky(x):
    return np.linalg.cholesky(x)


def slogdet(x):
    return np.linalg.slogdet(x)


def eigh(x):
    return np.linalg.eigh(x)


def eigvalsh(x):
    return np.linalg.eigvalsh(x)


def _as_float(t):
    """numba's LAPACK calls take float arrays; NumPy converts integers to float64."""
    if _is_float_array(t):
        return lambda a: a
    return lambda a: a.astype(np.float64)


def _is_stack(t) -> bool:
    return _is_array(t) and t.ndim > 2


def _each_matrix(decompose):
    """An overload of a matrix-to-matrix function (inv, cholesky): numba's np.linalg takes one 2-D
    matrix, so a stack is decomposed one matrix at a time."""
    def typed(x):
        cast = njit(_as_float(x))
        if not _is_stack(x):
            return lambda x: decompose(cast(x))

        def each_matrix(x):
            stack = _stacked(cast(x))
            out = np.empty_like(stack)
            for k in range(stack.shape[0]):
                out[k] = decompose(stack[k])
            return out.reshape(x.shape)
        return each_matrix
    return typed


overload(inv)(_each_matrix(np.linalg.inv))


@overload(det)
def _det(x):
    cast = njit(_as_float(x))
    if not _is_stack(x):
        return lambda x: np.linalg.det(cast(x))

    def each_matrix(x):
        stack = _stacked(cast(x))
        out = np.empty(stack.shape[0], stack.dtype)
        for k in range(stack.shape[0]):
            out[k] = np.linalg.det(stack[k])
        return out.reshape(x.shape[:-2])
    return each_matrix


@overload(solve)
def _solve(a, b):
    cast_a, cast_b = njit(_as_float(a)), njit(_as_float(b))
    vector = _is_array(b) and b.ndim == 1
    # what LAPACK computes in: the float dtype the two operands are cast to, promoted together
    result = np.promote_types(*(as_dtype(t.dtype) if _is_float_array(t) else np.float64 for t in (a, b))).type
    if not _is_stack(a) and (vector or not _is_stack(b)):
        return lambda a, b: np.linalg.solve(cast_a(a), cast_b(b))
    if vector:
        # NumPy's rule: a vector b is solved against every matrix of the stack a
        def each_matrix(a, b):
            stack, rhs = _stacked(cast_a(a)), cast_b(b)
            out = np.empty((stack.shape[0], stack.shape[1]), result)
            for k in range(stack.shape[0]):
                out[k] = np.linalg.solve(stack[k], rhs)
            return out.reshape(a.shape[:-1])
        return each_matrix

    # otherwise b is a stack of matrices of columns, and the stack axes of a and b broadcast
    def each_pair(a, b):
        stack_shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        matrices = np.ascontiguousarray(np.broadcast_to(cast_a(a), stack_shape + a.shape[-2:]))
        columns = np.ascontiguousarray(np.broadcast_to(cast_b(b), stack_shape + b.shape[-2:]))
        matrices = matrices.reshape((-1,) + a.shape[-2:])
        columns = columns.reshape((-1,) + b.shape[-2:])
        out = np.empty(columns.shape, result)
        for k in range(columns.shape[0]):
            out[k] = np.linalg.solve(matrices[k], columns[k])
        return out.reshape(stack_shape + b.shape[-2:])
    return each_pair


overload(cholesky)(_each_matrix(np.linalg.cholesky))


@overload(slogdet)
def _slogdet(x):
    cast = njit(_as_float(x))
    if not _is_stack(x):
        return lambda x: np.linalg.slogdet(cast(x))

    def each_matrix(x):
        stack = _stacked(cast(x))
        sign = np.empty(stack.shape[0], stack.dtype)
        logabsdet = np.empty(stack.shape[0], stack.dtype)
        for k in range(stack.shape[0]):
            sign[k], logabsdet[k] = np.linalg.slogdet(stack[k])
        return sign.reshape(x.shape[:-2]), logabsdet.reshape(x.shape[:-2])
    return each_matrix


@overload(eigh)
def _eigh(x):
    cast = njit(_as_float(x))
    if not _is_stack(x):
        return lambda x: np.linalg.eigh(cast(x))

    def each_matrix(x):
        stack = _stacked(cast(x))
        values = np.empty(stack.shape[:2], stack.dtype)
        vectors = np.empty_like(stack)
        for k in range(stack.shape[0]):
            values[k], vectors[k] = np.linalg.eigh(stack[k])
        return values.reshape(x.shape[:-1]), vectors.reshape(x.shape)
    return each_matrix


@overload(eigvalsh)
def _eigvalsh(x):
    cast = njit(_as_float(x))
    if not _is_stack(x):
        return lambda x: np.linalg.eigvalsh(cast(x))

    def each_matrix(x):
        stack = _stacked(cast(x))
        values = np.empty(stack.shape[:2], stack.dtype)
        for k in range(stack.shape[0]):
            values[k] = np.linalg.eigvalsh(stack[k])
        return values.reshape(x.shape[:-1])
    return each_matrix


# ------------------------------------------------------- runtime helpers, lax
@overload(runtime.astype)
def _astype(x, dtype):
    # rt.astype is plain NumPy; numba needs its own version for arrays and scalars
    if _is_array(x):
        return lambda x, dtype: x.astype(dtype)
    return lambda x, dtype: dtype(x)


@overload(lax.stop_gradient)
def _stop_gradient(x):
    # only transforms give stop_gradient a meaning; running it is the identity
    return lambda x: x


# ------------------------------------------------------------------ layouts
def c_ordered(value):
    """``value``, C-ordered if it is an array (free when it already is).  numba types a tape (a
    list) from its first entry, and a variable from all of its values; an F-ordered value
    (a transpose) among C-ordered ones makes a tape refuse the rest, or makes the variable an
    array of "any" layout, into which numba's array expressions cannot allocate."""
    return value


@overload(c_ordered)
def _c_ordered(value):
    if _is_array(value) and value.layout != "C":
        return lambda value: np.ascontiguousarray(value)
    return lambda value: value


# ------------------------------------------------------------ cotangents added in one pass
def extremum_vjp_added(base, g, x, peak, axis=None, keepdims=False):
    """``base + rt.extremum_vjp(g, x, peak, axis, keepdims)``: a max's (min's) cotangent added to
    the one already gathered for ``x``.  numba_runtime compiles it as one pass where ``base`` is an
    array of ``x``'s shape and float dtype (each element's share added as it is written), instead of
    an array of mostly zeros written and read back by the add."""
    return base + runtime.extremum_vjp(g, x, peak, axis, keepdims)


def unbroadcast_product(a, b, like, then=None):
    """``rt.unbroadcast(a * b, like)``, then ``rt.unbroadcast(..., then)`` where ``then`` is given: a
    product's cotangent summed over the axes it broadcast along.  numba_runtime compiles it as one
    walk where an operand has the product's shape and the sum is over leading axes (k-means'
    centroids'), each product added as it is computed, instead of the product written out and read
    back by the sum."""
    total = runtime.unbroadcast(a * b, like)
    return total if then is None else runtime.unbroadcast(total, then)


# ------------------------------------------------------------ number literals
def scalar_like(x, value):
    """A number literal that meets ``x`` in an elementwise operation.

    NumPy 2 treats Python numbers as "weak" (NEP 50): ``float32_array * 2.0``
    stays float32.  numba types the literal as float64 and widens the result;
    giving the literal x's precision first restores NumPy's answer.
    """
    return value


@overload(scalar_like)
def _scalar_like(x, value):
    kind = x.dtype if _is_array(x) else x
    if isinstance(value, types.Float) and isinstance(kind, types.Float):
        target = kind
    elif isinstance(value, types.Integer) and isinstance(kind, types.Integer):
        target = kind
    else:
        return lambda x, value: value
    return lambda x, value: target(value)


def expand_axis(g, axis):
    """A reduction's cotangent with its reduced axis put back, a view (numba_fusion: read beside an
    array of the full shape, it broadcasts as the array rt.expand_to fills would).  A number, the
    cotangent of a vector's reduction, broadcasts as it is."""
    return np.expand_dims(g, axis) if np.ndim(g) else g


@overload(expand_axis)
def _expand_axis(g, axis):
    if _is_array(g):
        return lambda g, axis: np.expand_dims(g, axis)
    return lambda g, axis: g


def as_float64(x):
    """An element of a small array kept as a number per element (numba_small_arrays.py), which the
    code made from a tuple holding a float: the number as ``np.asarray`` stores it, a float64."""
    return np.float64(x)


@overload(as_float64)
def _as_float64(x):
    # np.asarray of a tuple holding an array fails in numba too: only numbers are cast
    if isinstance(x, (types.Float, types.Integer, types.Boolean)):
        return lambda x: np.float64(x)
    return None


def number(x):
    """An argument met in arithmetic by a small array kept as numbers (numba_small_arrays.py), which
    must be a number there: as a float64, the type the array's arithmetic gave the result."""
    return np.float64(x)


@overload(number)
def _number(x):
    if isinstance(x, (types.Float, types.Integer, types.Boolean)):
        return lambda x: np.float64(x)
    if isinstance(x, types.Array) and x.ndim == 0 and isinstance(x.dtype, (types.Float, types.Integer, types.Boolean)):
        return lambda x: np.float64(x[()])
    # an array (or a complex number): the cpu target runs the function kept with its arrays
    raise TypingError(NOT_A_NUMBER)


# ------------------------------------------------------------------- linalg2
# numba's np.linalg.svd takes full_matrices by position only and has no compute_uv; its svd, qr and
# pinv take one 2-D float matrix (pinv with NumPy's default rcond, 1e-15): stacks go one matrix at a
# time, and svdvals (missing in numba) is the S of the reduced decomposition.
def svd(x):
    return np.linalg.svd(x, full_matrices=False)


def svd_complete(x):
    return np.linalg.svd(x, full_matrices=True)


def svdvals(x):
    return np.linalg.svdvals(x)


def pinv(x):
    return np.linalg.pinv(x)


def qr(x):
    return np.linalg.qr(x)


def _svd_of_each(full):
    def typed(x):
        cast = njit(_as_float(x))
        if not _is_stack(x):
            return lambda x: np.linalg.svd(cast(x), full)

        def each_matrix(x):
            stack = _stacked(cast(x))
            m, n = stack.shape[1], stack.shape[2]
            k = min(m, n)
            rows, columns = (m, n) if full else (k, k)
            u = np.empty((stack.shape[0], m, rows), stack.dtype)
            s = np.empty((stack.shape[0], k), stack.dtype)
            vh = np.empty((stack.shape[0], columns, n), stack.dtype)
            for i in range(stack.shape[0]):
                u[i], s[i], vh[i] = np.linalg.svd(stack[i], full)
            return u.reshape(x.shape[:-2] + (m, rows)), s.reshape(x.shape[:-2] + (k,)), \
                vh.reshape(x.shape[:-2] + (columns, n))
        return each_matrix
    return typed


overload(svd)(_svd_of_each(False))
overload(svd_complete)(_svd_of_each(True))


@overload(svdvals)
def _svdvals(x):
    cast = njit(_as_float(x))
    if not _is_stack(x):
        return lambda x: np.linalg.svd(cast(x), False)[1]

    def each_matrix(x):
        stack = _stacked(cast(x))
        k = min(stack.shape[1], stack.shape[2])
        s = np.empty((stack.shape[0], k), stack.dtype)
        for i in range(stack.shape[0]):
            s[i] = np.linalg.svd(stack[i], False)[1]
        return s.reshape(x.shape[:-2] + (k,))
    return each_matrix


@overload(pinv)
def _pinv(x):
    cast = njit(_as_float(x))
    if not _is_stack(x):
        return lambda x: np.linalg.pinv(cast(x))

    def each_matrix(x):
        stack = _stacked(cast(x))
        out = np.empty((stack.shape[0], stack.shape[2], stack.shape[1]), stack.dtype)
        for i in range(stack.shape[0]):
            out[i] = np.linalg.pinv(stack[i])
        return out.reshape(x.shape[:-2] + (stack.shape[2], stack.shape[1]))
    return each_matrix


@overload(qr)
def _qr(x):
    cast = njit(_as_float(x))
    if not _is_stack(x):
        return lambda x: np.linalg.qr(cast(x))

    def each_matrix(x):
        stack = _stacked(cast(x))
        m, n = stack.shape[1], stack.shape[2]
        k = min(m, n)
        q = np.empty((stack.shape[0], m, k), stack.dtype)
        r = np.empty((stack.shape[0], k, n), stack.dtype)
        for i in range(stack.shape[0]):
            q[i], r[i] = np.linalg.qr(stack[i])
        return q.reshape(x.shape[:-2] + (m, k)), r.reshape(x.shape[:-2] + (k, n))
    return each_matrix


def lstsq(a, b, rcond=None):
    return np.linalg.lstsq(a, b, rcond=rcond)


@overload(lstsq)
def _lstsq(a, b, rcond=None):
    # numba's rcond is by position and means NumPy's old default (-1: machine precision) where
    # NumPy 2's None means eps * max(m, n): given here
    cast_a, cast_b = njit(_as_float(a)), njit(_as_float(b))
    if _is_none(rcond):
        eps = float(np.finfo(as_dtype(a.dtype) if _is_float_array(a) else np.float64).eps)

        def impl(a, b, rcond=None):
            x, residuals, rank, s = np.linalg.lstsq(cast_a(a), cast_b(b), eps * max(a.shape[0], a.shape[1]))
            return x, residuals, np.int32(rank), s      # NumPy's rank is LAPACK's int32
        return impl

    def given(a, b, rcond=None):
        x, residuals, rank, s = np.linalg.lstsq(cast_a(a), cast_b(b), rcond)
        return x, residuals, np.int32(rank), s
    return given
