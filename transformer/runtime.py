"""Helpers that generated code calls at run time.

Each is plain NumPy, so the python backend runs it as it is; the CPU backend
gives each one a numba implementation in ``backends/numba_runtime.py``.  Each
one is also a registered primitive (spelled ``rt.<name>``), so transforms of
generated code have rules for it.
"""
from __future__ import annotations

import numpy as np


def astype(x, dtype):
    """``x.astype(dtype)`` for arrays and scalars alike."""
    return np.asarray(x).astype(dtype) if isinstance(x, np.ndarray) else dtype(x)


# ------------------------------------------------------------ cotangent basics
def _float_dtype(x):
    dtype = np.result_type(x)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def zeros_like(x):
    """A zero cotangent for ``x``: an array of its shape, or a scalar 0.0."""
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=_float_dtype(x))
    if isinstance(x, np.generic):
        return _float_dtype(x).type(0)
    return 0.0


def scalar_seed(out):
    """The cotangent 1 that starts grad's backward sweep; grad needs a scalar output."""
    if np.ndim(out) != 0:
        raise TypeError(f"grad requires a scalar output, but the function returned shape {np.shape(out)}; "
                        f"use vjp or jacrev for non-scalar outputs")
    return _float_dtype(out).type(1) if isinstance(out, (np.ndarray, np.generic)) else 1.0


def copy(x):
    """An independent copy of a value (views of arrays would change under later writes)."""
    return np.array(x) if isinstance(x, np.ndarray) else x


def unbroadcast(g, x):
    """Sum ``g`` over the axes broadcasting added, so it has the shape of ``x``."""
    if not isinstance(g, np.ndarray) and not isinstance(x, np.ndarray):
        return g              # two numbers (every step of a scalar loop): nothing was broadcast
    shape = np.shape(x)
    if np.shape(g) == shape:
        return g
    if not shape:
        total = np.sum(g)
        return total.item() if not isinstance(x, np.generic) else total
    g = np.sum(g, axis=tuple(range(np.ndim(g) - len(shape)))) if np.ndim(g) > len(shape) else g
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and np.shape(g)[i] != 1)
    if axes:
        g = np.sum(g, axis=axes, keepdims=True)
    return np.broadcast_to(g, shape).copy() if np.shape(g) != shape else g


def expand_to(g, x, axis=None, keepdims=False):
    """Undo a reduction's shape: broadcast the reduced ``g`` back over ``x``."""
    shape = np.shape(x)
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
    return np.broadcast_to(g, shape).astype(_float_dtype(g), copy=True)


def has_cotangent(x) -> bool:
    """Whether a value of ``x``'s dtype has a cotangent (floating point: yes; an integer: no)."""
    return bool(np.issubdtype(np.result_type(x), np.inexact))


def align_batch(x):
    """An operand vmap does not batch, lined up with batched ones (batch axis last): an array
    gets a trailing axis of length 1; a scalar broadcasts as it is and stays a scalar, so it
    promotes as in the user's code (float32 * 2 stays float32; an int64 array would not)."""
    return np.expand_dims(x, -1) if np.ndim(x) > 0 else x


# ------------------------------------------------- one number per example (vmap)
# vmap's float(), int() and bool() of each example's value, and its conditions (``if``, ``while``,
# ``not``), act on the batch's array at once (batch axis last).  NumPy refuses them where an
# example's value holds several numbers; these checks, given the batch's shape, refuse them too,
# with NumPy's words, rather than casting or masking every element of the example.
def number_per_example(shape):
    """Refuse ``float()``, ``int()`` or ``bool()`` of examples that are arrays."""
    if len(shape) != 1:
        raise TypeError("only 0-dimensional arrays can be converted to Python scalars (under vmap, "
                        f"each example's value here has shape {tuple(shape[:-1])})")


def truth_value_per_example(shape):
    """Refuse a condition (``if``, ``while``, ``not``) on examples that are arrays."""
    if len(shape) != 1:
        raise ValueError("The truth value of an array with more than one element is ambiguous (under "
                         f"vmap, each example's condition here has shape {tuple(shape[:-1])})")


# ------------------------------------------------------------- loops
def parallel_range(*bounds):
    """``range`` whose passes are independent (vmap's per-example loops): numba runs it as ``prange``."""
    return range(*bounds)


# ------------------------------------------------------------------ the tape
def stack():
    """An empty tape for one variable: values pushed in the forward sweep."""
    return []


def push(tape, value):
    tape.append(value)
    return tape


def pop(tape):
    return tape.pop()


def top(tape):
    return tape[-1]


def add_to_top(tape, value):
    """The top entry of ``tape`` plus ``value`` (reverse over reverse: a cotangent tape's entry)."""
    tape[-1] = tape[-1] + value
    return tape


# ------------------------------------------------------ adjoints of products
def dot_vjp_x(g, x, y):
    """The cotangent of x in ``z = np.dot(x, y)``, scalars or arrays of any rank: np.dot contracts
    x's last axis with y's second-to-last (its only one for a vector), ``z`` is
    ``x.shape[:-1] + y.shape[:-2] + y.shape[-1:]``."""
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(np.sum(g * y) if np.ndim(x) == 0 else g * y, x)
    if np.ndim(y) == 1:
        return np.outer(g, y) if np.ndim(x) == 2 else np.multiply.outer(g, y)
    if np.ndim(y) == 2:
        return np.dot(g, np.transpose(y))
    y_free = [a for a in range(np.ndim(y)) if a != np.ndim(y) - 2]          # all of y's axes but k
    return np.tensordot(g, y, axes=(list(range(np.ndim(x) - 1, np.ndim(g))), y_free))


def dot_vjp_y(g, x, y):
    """The cotangent of y in ``z = np.dot(x, y)``."""
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(np.sum(g * x) if np.ndim(y) == 0 else g * x, y)
    if np.ndim(x) == 1:
        return np.outer(x, g) if np.ndim(y) == 2 else np.moveaxis(np.multiply.outer(x, g), 0, -2) \
            if np.ndim(y) > 2 else g * x
    if np.ndim(x) == 2 and np.ndim(y) <= 2:
        return np.dot(np.transpose(x), g)
    lead = list(range(np.ndim(x) - 1))                         # x's axes but k, leading in g too
    y_bar = np.tensordot(x, g, axes=(lead, lead))              # (k,) + y's axes but k
    return np.moveaxis(y_bar, 0, -2) if np.ndim(y) > 1 else y_bar


def _as_matrices(g, x, y):
    """``np.matmul``'s 1-D operands as matrices (a row x, a column y), and ``g`` with the axes they
    lost put back: the batched 2-D products that every rank then shares."""
    x2 = np.reshape(x, (1, -1)) if np.ndim(x) == 1 else x
    y2 = np.reshape(y, (-1, 1)) if np.ndim(y) == 1 else y
    g2 = np.expand_dims(g, -2) if np.ndim(x) == 1 else g
    return x2, y2, np.expand_dims(g2, -1) if np.ndim(y) == 1 else g2


def matmul_vjp_x(g, x, y):
    """The cotangent of x in ``z = x @ y``: NumPy's matmul, stacks of matrices in the leading axes
    (broadcast), a 1-D operand a row (x) or a column (y)."""
    if np.ndim(x) <= 2 and np.ndim(y) <= 2:
        return dot_vjp_x(g, x, y)                     # np.dot is the same product
    x2, y2, g2 = _as_matrices(g, x, y)
    return np.reshape(unbroadcast(np.matmul(g2, np.swapaxes(y2, -1, -2)), x2), np.shape(x))


def matmul_vjp_y(g, x, y):
    """The cotangent of y in ``z = x @ y``."""
    if np.ndim(x) <= 2 and np.ndim(y) <= 2:
        return dot_vjp_y(g, x, y)
    x2, y2, g2 = _as_matrices(g, x, y)
    return np.reshape(unbroadcast(np.matmul(np.swapaxes(x2, -1, -2), g2), y2), np.shape(y))


def _inner_rows(g, x, y):
    """``g`` of ``z = np.inner(x, y)`` as a matrix: a row per entry of ``x`` but its last axis,
    a column per entry of ``y`` but its last axis (``z[i.., j..] = sum_k x[i.., k] y[j.., k]``)."""
    k = np.shape(x)[-1]
    return np.reshape(g, (np.size(x) // k, np.size(y) // k))


def inner_vjp_x(g, x, y):
    """The cotangent of x in ``z = np.inner(x, y)``: ``x_bar[i.., k] = sum_j g[i.., j..] y[j.., k]``."""
    if np.ndim(x) == 0 or np.ndim(y) == 0:        # a scalar operand: np.inner multiplies
        return unbroadcast(g * y, x)
    return np.reshape(np.dot(_inner_rows(g, x, y), np.reshape(y, (-1, np.shape(y)[-1]))), np.shape(x))


def inner_vjp_y(g, x, y):
    """The cotangent of y in ``z = np.inner(x, y)``: ``y_bar[j.., k] = sum_i g[i.., j..] x[i.., k]``."""
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return unbroadcast(g * x, y)
    rows = _inner_rows(g, x, y)
    return np.reshape(np.dot(np.transpose(rows), np.reshape(x, (-1, np.shape(x)[-1]))), np.shape(y))


# ------------------------------------ products with one batched operand (vmap)
# vmap writes these for np.dot and the dot adjoints when one operand carries the
# batch axis (LAST, as everywhere in generated code) and the other does not: one
# product for the whole batch, not one per example.  Each one's value is what
# the plain helper gives per example; an example may have rank 0, 1 or 2.
def _batch_last(out, axis):
    return np.moveaxis(out, axis, -1)


def _check_ranks(*ranks):
    """These products are np.dot's, which is @'s only while the right factor has at most two
    dimensions; past two per example they would contract the wrong axes (the CPU target refuses
    them when it compiles)."""
    if max(ranks) > 2:
        raise ValueError("np.dot or @ under vmap with one factor the same for every example supports "
                         "operands of at most two dimensions per example; batch both factors instead")


def dot_batched_x(x, y):
    """``np.dot(example, y)`` for every example of ``x``."""
    _check_ranks(np.ndim(y))
    if np.ndim(x) == 1 or np.ndim(y) == 0:                 # a scalar factor: a product
        return np.expand_dims(y, -1) * x if np.ndim(x) == 1 else x * y
    return _batch_last(np.tensordot(x, y, axes=(np.ndim(x) - 2, 0)), np.ndim(x) - 2)


def dot_batched_y(x, y):
    """``np.dot(x, example)`` for every example of ``y``."""
    _check_ranks(np.ndim(y) - 1)
    if np.ndim(y) == 1 or np.ndim(x) == 0:
        return np.expand_dims(x, -1) * y if np.ndim(y) == 1 else x * y
    return np.tensordot(x, y, axes=(np.ndim(x) - 1, 0))


def matmul_batched_x(x, y):
    """``example @ y`` for every example of ``x``: dot_batched_x's one product while an example
    and ``y`` have at most two dimensions (there @ is np.dot), else one @ of the examples' stack."""
    if max(np.ndim(x) - 1, np.ndim(y)) <= 2:
        return dot_batched_x(x, y)
    examples = np.moveaxis(x, -1, 0)                      # example b is examples[b]
    batch, shape = np.shape(examples)[0], np.shape(examples)[1:]
    if len(shape) == 1:                                   # a vector @ a stack: a row, dropped after
        rows = np.reshape(examples, (batch,) + (1,) * (np.ndim(y) - 2) + (1,) + shape)
        return _batch_last(np.matmul(rows, y)[..., 0, :], 0)
    # the batch axis in front of every stack axis @ broadcasts, so it pairs with no axis of y
    lead = (1,) * max(0, np.ndim(y) - len(shape))
    return _batch_last(np.matmul(np.reshape(examples, (batch,) + lead + shape), y), 0)


def matmul_batched_y(x, y):
    """``x @ example`` for every example of ``y`` (see matmul_batched_x)."""
    if max(np.ndim(x), np.ndim(y) - 1) <= 2:
        return dot_batched_y(x, y)
    examples = np.moveaxis(y, -1, 0)
    batch, shape = np.shape(examples)[0], np.shape(examples)[1:]
    if len(shape) == 1:                                   # a stack @ a vector: a column, dropped after
        columns = np.reshape(examples, (batch,) + (1,) * (np.ndim(x) - 2) + shape + (1,))
        return _batch_last(np.matmul(x, columns)[..., 0], 0)
    if np.ndim(x) == 1:
        return _batch_last(np.matmul(x, examples), 0)
    lead = (1,) * max(0, np.ndim(x) - len(shape))
    return _batch_last(np.matmul(x, np.reshape(examples, (batch,) + lead + shape)), 0)


def matmul_vjp_x_batched_g(g, x, y):
    """``matmul_vjp_x(example of g, x, y)`` for every example of the cotangent ``g`` (``x``, one
    example's operand, gives only a shape): dot_vjp_x_batched_g's one product where @ is np.dot."""
    if np.ndim(x) <= 2 and np.ndim(y) <= 2:
        return dot_vjp_x_batched_g(g, x, y)
    return np.stack([matmul_vjp_x(g[..., b], x, y) for b in range(np.shape(g)[-1])], axis=-1)


def matmul_vjp_y_batched_g(g, x, y):
    """``matmul_vjp_y(example of g, x, y)`` for every example of ``g``."""
    if np.ndim(x) <= 2 and np.ndim(y) <= 2:
        return dot_vjp_y_batched_g(g, x, y)
    return np.stack([matmul_vjp_y(g[..., b], x, y) for b in range(np.shape(g)[-1])], axis=-1)


def dot_vjp_x_batched_g(g, x, y):
    """``dot_vjp_x(example of g, x, y)`` for every example of the cotangent ``g``
    (``x``, one example's operand, gives only a shape)."""
    _check_ranks(np.ndim(y))
    if np.ndim(x) == 0:
        return np.tensordot(y, g, axes=np.ndim(y))
    if np.ndim(y) == 0:
        return g * y
    if np.ndim(y) == 1:
        return np.expand_dims(g, -2) * np.expand_dims(y, -1)
    return _batch_last(np.tensordot(g, y, axes=(np.ndim(g) - 2, 1)), np.ndim(g) - 2)


def dot_vjp_y_batched_g(g, x, y):
    """``dot_vjp_y(example of g, x, y)`` for every example of the cotangent ``g``."""
    _check_ranks(np.ndim(y))
    if np.ndim(y) == 0:
        return np.tensordot(x, g, axes=np.ndim(x))
    if np.ndim(x) == 0:
        return g * x
    if np.ndim(x) == 1:
        return np.multiply.outer(x, g)
    lead = list(range(np.ndim(x) - 1))           # x's axes but its last, leading in g too
    return np.tensordot(x, g, axes=(lead, lead))


def dot_vjp_y_batched_gx(g, x, y):
    """``dot_vjp_y(example of g, example of x, y)`` for every example: both factors batched, so
    elementwise where an example of ``x`` is a scalar or a vector (per-example gradients of a
    linear model), one product per example where it is a matrix."""
    _check_ranks(np.ndim(x) - 1, np.ndim(y))
    if np.ndim(x) == 1 or np.ndim(y) == 0:
        return g * x if np.ndim(y) else np.sum(g * x, axis=tuple(range(np.ndim(x) - 1)))
    if np.ndim(x) == 2:
        return g * x if np.ndim(y) == 1 else np.expand_dims(x, 1) * np.expand_dims(g, 0)
    return np.einsum("mn...,mk...->nk...", x, np.reshape(g, (np.shape(g)[0], -1, np.shape(g)[-1]))).reshape(
        np.shape(y) + np.shape(g)[-1:])


def matmul_vjp_y_batched_gx(g, x, y):
    """``matmul_vjp_y(example of g, example of x, y)`` for every example: dot_vjp_y_batched_gx where
    @ is np.dot, one @ per example past two dimensions."""
    if np.ndim(x) - 1 <= 2 and np.ndim(y) <= 2:
        return dot_vjp_y_batched_gx(g, x, y)
    return np.stack([matmul_vjp_y(g[..., b], x[..., b], y) for b in range(np.shape(g)[-1])], axis=-1)


def dot_identity_y(x, basis):
    """``dot_batched_y(x, basis)`` where ``basis`` is the identity matrix, its columns the
    examples (the Hessian's sweep over basis vectors): ``np.dot(x, e_k)`` is ``x[..., k]``, so
    the whole batch is ``x`` itself, with no product."""
    if np.ndim(x) == 0:
        return x * basis
    if np.shape(x)[-1] != np.shape(basis)[0]:
        raise ValueError(f"np.dot: shapes {np.shape(x)} and {np.shape(basis)[:1]} not aligned")
    return np.copy(x)


# The same two products where the batched factor is an unchanged argument that vmap
# still holds batch-FIRST (its rows, as the caller passed it): reading the rows saves
# the batch-last copy of the whole argument.  The result is batch-last, like every
# batched value in generated code.
def dot_rows_x(x_rows, y):
    """``np.dot(x_rows[b], y)`` for every example ``b``."""
    return dot_batched_x(np.moveaxis(x_rows, 0, -1), y)


def dot_vjp_y_rows_gx(g, x_rows, y):
    """``dot_vjp_y(example b of g, x_rows[b], y)`` for every example ``b``."""
    return dot_vjp_y_batched_gx(g, np.moveaxis(x_rows, 0, -1), y)


def extremum_vjp(g, x, peak, axis=None, keepdims=False):
    """max/min: the cotangent goes to the positions that attain the extremum, split among ties."""
    hits = (x == expand_to(peak, x, axis, keepdims)).astype(_float_dtype(x))
    count = np.sum(hits, axis=axis, keepdims=True)
    return expand_to(g, x, axis, keepdims) * hits / count


def prod_vjp(g, x, axis=None, keepdims=False):
    """prod: each element's cotangent is the product of all the others (exact with zeros)."""
    moved = np.moveaxis(np.reshape(x, -1) if axis is None else x, -1 if axis is None else axis, -1)
    ones = np.ones(moved.shape[:-1] + (1,), dtype=_float_dtype(x))
    before = np.cumprod(np.concatenate([ones, moved[..., :-1]], axis=-1), axis=-1)
    after = np.flip(np.cumprod(np.flip(np.concatenate([moved[..., 1:], ones], axis=-1), axis=-1), axis=-1), axis=-1)
    others = np.moveaxis(before * after, -1, -1 if axis is None else axis)
    return expand_to(g, x, axis, keepdims) * np.reshape(others, np.shape(x))


def cumsum_vjp(g, x, axis=None):
    if axis is None:
        return np.reshape(np.flip(np.cumsum(np.flip(np.reshape(g, -1)))), np.shape(x))
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


def cumprod_vjp(g, x, products, axis=None):
    """cumprod: x_bar[i] = sum over j >= i of g[j] * prod(x[k] for k <= j, k != i)."""
    flat = axis is None
    xs = np.reshape(x, -1) if flat else np.moveaxis(x, axis, -1)
    gs = np.reshape(g, -1) if flat else np.moveaxis(g, axis, -1)
    out = np.zeros(xs.shape, dtype=_float_dtype(x))
    n = xs.shape[-1]
    for i in range(n):
        others = xs.copy()
        others[..., i] = 1.0
        running = np.cumprod(others, axis=-1)
        out[..., i] = np.sum(gs[..., i:] * running[..., i:], axis=-1)
    return np.reshape(out, np.shape(x)) if flat else np.moveaxis(out, -1, axis)


def norm_vjp(g, x, norm, axis=None, keepdims=False):
    """The 2-norm (Frobenius for matrices with axis=None): x_bar = g * x / norm."""
    return expand_to(g / norm, x, axis, keepdims) * x


def norm_ord_weights(x, norm, ord, axis=None, keepdims=False):
    """d norm / d x, shaped as ``x``, of ``norm = np.linalg.norm(x, ord, axis, keepdims)`` for an
    ``ord`` the call gives (the 2-norm of ``ord=None`` has ``norm_vjp``, whose derivative is written).

    JAX's conventions where the derivative does not exist: ``|x|`` has slope +1 at 0 (so ``ord=1`` at
    a zero entry gives +1); the entries that tie for a max or min (``ord=inf``, a matrix's largest
    column or row sum, equal singular values) share its derivative equally; ``ord=0`` counts
    entries, derivative 0.  Matrix norms 2, -2 and 'nuc' differentiate the singular values.
    """
    x = np.asarray(x)
    axes = _norm_axes(x, ord, axis)
    keep = norm if keepdims else np.expand_dims(norm, axes)
    slope = np.where(x >= 0, 1, -1).astype(_float_dtype(x))     # d|x|/dx, +1 at 0 as in JAX
    if len(axes) == 1:
        return slope * _vector_norm_weights(np.abs(x).astype(slope.dtype), keep, ord, axes[0])
    if ord in ("fro", "f"):
        return x / keep
    if ord in (2, -2, "nuc"):
        return _singular_value_weights(x, ord, axes)
    along, across = axes if ord in (1, -1) else axes[::-1]     # 1: column sums; inf: row sums
    sums = np.sum(np.abs(x), axis=along, keepdims=True)
    return slope * _tie_shares(sums == keep, across, slope.dtype)


def norm_ord_curvature(x, norm, ord, axis, keepdims, direction):
    """``(h, b)``: the change of ``weights = norm_ord_weights(x, norm, ord, axis, keepdims)`` is
    ``h + b * d norm`` (the norm's change spread over the axes it reduces) when ``x`` moves along
    ``direction``, with ``norm`` held.  The second derivative of a norm with ``ord``.

    The map from ``direction`` to ``h`` is symmetric (a Hessian's part), so the adjoint rule
    passes its cotangent as ``direction``.  A vector p-norm's weights are s (|x| / norm)^(p-1),
    so ``h`` is elementwise; 'fro' has x / norm.  The singular-value norms (2, -2, 'nuc') do not
    depend on ``norm``: ``h`` is the derivative of the singular vectors
    (``_singular_value_curvature``).  Where the weights are piecewise constant (ord 1, inf, -inf,
    0, and a matrix's 1, -1, inf, -inf) both are zero, as JAX's derivative of them is."""
    x = np.asarray(x)
    axes = _norm_axes(x, ord, axis)
    keep = norm if keepdims else np.expand_dims(norm, axes)
    if len(axes) == 1 and ord not in (np.inf, -np.inf, 0, 1):
        weights = norm_ord_weights(x, norm, ord, axis, keepdims)
        return (ord - 1) * (np.abs(x) / keep) ** (ord - 2) / keep * direction, -(ord - 1) * weights / keep
    if ord in ("fro", "f"):
        return direction / keep, -x / keep / keep
    if ord in (2, -2, "nuc"):
        return _singular_value_curvature(x, ord, axes, direction), np.zeros_like(x, dtype=_float_dtype(x))
    zero = np.zeros_like(x, dtype=_float_dtype(x))
    return zero, zero


def _singular_value_curvature(x, ord, axes, direction):
    """The change of ``_singular_value_weights(x, ord, axes)`` when ``x`` moves along ``direction``.

    With the full SVD x = U S V^T and P = U^T direction V (m x n, singular values padded with zeros):
    'nuc' (weights U V^T) changes by U C V^T with C[j, i] = (P[j, i] - P[i, j]) / (s_i + s_j), zero
    where both are zero (a rank-deficient matrix: the norm has no derivative there, and 0 is the
    subgradient's choice).  ord 2 / -2 (weights u_t v_t^T for the largest / smallest s_t) changes by
    du_t v_t^T + u_t dv_t^T, du_t = sum_j u_j (s_t P[j, t] + s_j P[t, j]) / (s_t^2 - s_j^2) and
    dv_t = sum_j v_j (s_j P[j, t] + s_t P[t, j]) / (s_t^2 - s_j^2), j != t.  That divides by zero
    where s_t ties with another singular value: the norm has no second derivative there (nor in JAX,
    whose SVD derivative is not finite there either)."""
    x = np.asarray(x)
    dtype = _float_dtype(x)
    moved = np.moveaxis(x, axes, (-2, -1)).astype(dtype)
    along = np.moveaxis(np.asarray(direction), axes, (-2, -1)).astype(dtype)
    m, n = moved.shape[-2:]
    u, s, vh = np.linalg.svd(moved, full_matrices=True)
    v = np.swapaxes(vh, -1, -2)
    p = np.swapaxes(u, -1, -2) @ along @ v                   # (..., m, n)
    size = max(m, n)
    square = np.zeros(p.shape[:-2] + (size, size), dtype)
    square[..., :m, :n] = p
    padded = np.zeros(s.shape[:-1] + (size,), dtype)
    padded[..., :s.shape[-1]] = s
    if ord == "nuc":
        total = padded[..., :, None] + padded[..., None, :]
        difference = square - np.swapaxes(square, -1, -2)
        c = np.where(total == 0, 0, difference / np.where(total == 0, 1, total))
        change = u @ c[..., :m, :n] @ vh
    else:
        t = 0 if ord == 2 else min(m, n) - 1                  # NumPy's singular values come largest first
        s_t = padded[..., t:t + 1]
        column, row = square[..., :, t], square[..., t, :]    # P[j, t] and P[t, j] for every j
        gap = s_t ** 2 - padded ** 2
        gap[..., t] = 1                                       # j = t contributes nothing
        a = (s_t * column + padded * row) / gap
        b = (padded * column + s_t * row) / gap
        a[..., t] = 0
        b[..., t] = 0
        du = np.einsum("...ij,...j->...i", u, a[..., :m])
        dv = np.einsum("...ij,...j->...i", v, b[..., :n])
        change = du[..., :, None] * vh[..., t, None, :] + u[..., :, t, None] * dv[..., None, :]
    return np.moveaxis(change, (-2, -1), axes)


def _norm_axes(x, ord, axis):
    """The axes ``np.linalg.norm`` reduces, made non-negative: one for a vector norm, two for a matrix norm."""
    if axis is None:
        return tuple(range(x.ndim)) if ord is None else tuple(range(min(x.ndim, 2)))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return tuple(a % x.ndim for a in axes)


def _tie_shares(hits, axis, dtype):
    """1 / (number of hits) at each hit along ``axis``, 0 elsewhere: ties share a max or min equally."""
    hits = hits.astype(dtype)
    return hits / np.sum(hits, axis=axis, keepdims=True)


def _vector_norm_weights(magnitude, norm, ord, axis):
    """d norm / d |x| for a vector norm."""
    if ord in (np.inf, -np.inf):
        return _tie_shares(magnitude == norm, axis, magnitude.dtype)
    if ord == 0:
        return np.zeros_like(magnitude)
    if ord == 1:
        return np.ones_like(magnitude)
    return (magnitude / norm) ** (ord - 1)       # (sum |x|^p)^(1/p): (|x| / norm)^(p - 1)


def _singular_value_weights(x, ord, axes):
    """d norm / d x for the norms of singular values: sum_i w_i u_i v_i^T over the weights w_i
    of the singular values (all 1 for 'nuc', the largest (2) or smallest (-2) sharing 1)."""
    moved = np.moveaxis(x, axes, (-2, -1))
    u, s, vh = np.linalg.svd(moved, full_matrices=False)
    if ord == "nuc":
        weights = np.ones_like(s)
    else:
        extreme = np.max(s, axis=-1, keepdims=True) if ord == 2 else np.min(s, axis=-1, keepdims=True)
        weights = _tie_shares(s == extreme, -1, s.dtype)
    return np.moveaxis(np.matmul(u * np.expand_dims(weights, -2), vh), (-2, -1), axes)


def transpose_vjp(g, axes=None):
    if axes is None:
        return np.transpose(g)
    return np.transpose(g, np.argsort(axes))


def trace_vjp(g, x):
    """np.trace sums x[i, i, ...]: each trace's cotangent goes to its own diagonal."""
    eye = np.eye(np.shape(x)[0], np.shape(x)[1], dtype=_float_dtype(x))
    return np.reshape(eye, eye.shape + (1,) * (np.ndim(x) - 2)) * g


def index_slice(start, stop, step):
    """``start:stop:step`` as a value (a part of an index passed to add_at or kept_writes)."""
    return slice(start, stop, step)


def add_at(g, index, values):
    """``g`` with ``values`` added at ``g[index]``, in place: a position named twice gets both
    (``np.add.at``; ``g[index] += values`` would keep only one).  A number's cotangent is a number
    (``x[..., None]`` of a number reads its one entry): added to as a 0-d array, a number again."""
    if not isinstance(g, np.ndarray):
        whole = np.array(g)
        np.add.at(whole, index, values)
        return whole[()]
    np.add.at(g, index, values)
    return g


def take_at(g, index):
    """``g[index]`` for an index passed as a tuple of parts (what add_at added there)."""
    return g[index]


def kept_writes(g, index):
    """``g[index]`` with zeros where ``y[index] = v`` wrote a position a later part of
    the same write overwrote: only the value written last is kept, so only it has a cotangent."""
    part = np.array(g[index])
    order = np.zeros(np.shape(g), dtype=np.int64)
    positions = np.reshape(np.arange(1, np.size(part) + 1), np.shape(part))
    order[index] = positions
    return np.where(order[index] == positions, part, 0.0 * part)


def solve_columns(x, b):
    """``x``, shaped as ``np.linalg.solve(a, b)``'s result, as a stack of matrices of columns.

    NumPy's solve pairs each matrix of ``a`` with the vector ``b`` where ``b`` has one axis (its
    result is then one vector per matrix), and with a matrix of columns otherwise.  The rules of
    solve work on columns alone, so that ``a_dot @ z`` is a product of matrices for every stack."""
    return np.expand_dims(x, -1) if np.ndim(b) == 1 else x


def solve_uncolumns(x, b):
    """The inverse of ``solve_columns``: columns back to the shape that ``b`` (or the result) has."""
    return x[..., 0] if np.ndim(b) == 1 else x


def cast_like(g, x):
    """A cotangent cast back to the floating dtype of ``x``."""
    return astype(g, _float_dtype(x).type) if isinstance(x, (np.ndarray, np.generic)) else float(g)


def cast_derivative(g, like, to):
    """A derivative through ``astype(to)``: ``g`` in the floating dtype of ``like`` where ``to`` is a
    floating type, and zero where it is not (an integer or boolean cast has no derivative, as in JAX)."""
    g = cast_like(g, like)
    return g if np.issubdtype(np.dtype(to), np.floating) else g * 0.0


# ------------------------------------------------------------ custom rules
def custom_vjp_call(out, inputs, residuals, rule):
    """The value of a ``custom_vjp`` function's call: ``out`` itself.

    It marks where a user's backward rule applies: reverse mode sends the
    output's cotangent to ``inputs`` through the function named ``rule``
    (a string, so compiled code can carry it), never through ``out``'s own
    computation.
    """
    return out


def custom_jvp_call(out, inputs, rule):
    """The value of a ``custom_jvp`` function's call: ``out`` itself.

    It marks where a user's jvp rule applies: forward mode computes the
    output's tangent with the function named ``rule`` from ``inputs`` and
    their tangents, never through ``out``'s own computation.
    """
    return out


# ------------------------------------------------------------ layout
# The index arrays of NumPy's layout functions (templates/definitions.py's np.tile, np.repeat, np.pad,
# np.diag, np.diagonal, np.rollaxis): entry i of ``np.ravel(x)[index]`` is the flat position in ``x``
# the function puts there (-1: a cell np.pad fills with its constant).  They read only a shape, so
# their results are constants to every derivative and the same for every example of a vmap; the
# layout function itself is then a gather (np.ravel(x)[index]) whose derivative adds the copies back.
# NumPy computes each one here, from the positions 0, 1, 2, ... laid out in ``shape``.
def _positions(shape):
    return np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)


def tile_index(shape, reps):
    return np.tile(_positions(shape), reps)


def kron_index(shape_a, shape_b, which):
    """For each entry of np.kron(a, b), the flat position of the entry of ``a`` (``which`` 0) or of
    ``b`` (``which`` 1) it is the product of; the shorter shape is padded with ones in front."""
    rank = max(len(shape_a), len(shape_b))
    dims_a = (1,) * (rank - len(shape_a)) + tuple(shape_a)
    dims_b = (1,) * (rank - len(shape_b)) + tuple(shape_b)
    if which == 0:
        return np.kron(_positions(dims_a), np.ones(dims_b, np.int64))
    return np.kron(np.ones(dims_a, np.int64), _positions(dims_b))


def repeat_index(shape, repeats, axis=None):
    return np.repeat(_positions(shape), repeats, axis)


def split_bounds(length, sections, equal=True):
    """Where np.split's (``equal``) or np.array_split's ``sections`` pieces of an axis of ``length``
    start and end: ``sections + 1`` bounds.  np.split refuses an axis that does not divide evenly,
    as NumPy does; np.array_split gives the first ``length % sections`` pieces one more."""
    if equal and length % sections:
        raise ValueError("array split does not result in an equal division")
    size, extra = divmod(length, sections)
    bounds = np.empty(sections + 1, np.int64)
    for k in range(sections + 1):
        bounds[k] = k * size + min(k, extra)
    return bounds


def concatenate_bounds(sizes):
    """Where each of np.concatenate's arrays starts along the axis, and where the last ends."""
    bounds = np.zeros(len(sizes) + 1, np.int64)
    for k in range(len(sizes)):
        bounds[k + 1] = bounds[k] + sizes[k]
    return bounds


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def pad_index(shape, pad_width, mode):
    if mode not in _PAD_MODES:
        raise ValueError(f"np.pad's mode {mode!r} is not supported (only {', '.join(_PAD_MODES)}: modes that "
                         f"copy cells)")
    if mode == "constant":
        return np.pad(_positions(shape), pad_width, mode="constant", constant_values=-1)
    return np.pad(_positions(shape), pad_width, mode=mode)


def diag_index(shape, k=0):
    if len(shape) == 1:         # a vector on the k-th diagonal of a square matrix, -1 off it
        return np.diag(np.arange(1, shape[0] + 1, dtype=np.int64), k) - 1
    if len(shape) != 2:
        raise ValueError("np.diag takes a 1-D or a 2-D array")
    return np.diag(_positions(shape), k).copy()


def diagonal_index(shape, offset=0, axis1=0, axis2=1):
    return np.diagonal(_positions(shape), offset, axis1, axis2).copy()


def rollaxis_index(shape, axis, start=0):
    return np.rollaxis(_positions(shape), axis, start).copy()


def atleast_2d_shape(shape):
    return np.atleast_2d(np.empty(shape)).shape


def atleast_3d_shape(shape):
    return np.atleast_3d(np.empty(shape)).shape


def hsplit_shape(shape, width):
    """The shape of one of np.hsplit's pieces of an array of ``shape``: ``width`` along axis 1, or
    along axis 0 for a 1-D array (NumPy's rule for hsplit)."""
    if len(shape) == 1:
        return (width,)
    return (shape[0], width) + tuple(shape[2:])


def kept_dims_shape(shape):
    """``(1, ..., 1, n)`` of ``shape``'s rank: what a reduction of a batch-last array over every axis
    of each example leaves with keepdims=True (vmap's batch axis, the last, is kept)."""
    return (1,) * (len(shape) - 1) + (shape[-1],)


def atleast_1d_shape(shape):
    return np.atleast_1d(np.empty(shape)).shape


def broadcast_shape(a, b, c=None):
    """The shape that shapes ``a``, ``b`` (and ``c``) broadcast to (np.broadcast_arrays)."""
    return np.broadcast_shapes(a, b) if c is None else np.broadcast_shapes(a, b, c)


def squeezed_shape(shape):
    """``shape`` without its axes of length 1 (np.squeeze without an axis, per example under vmap)."""
    return tuple(d for d in shape if d != 1)


# ---------------------------------------------------------------------- misc
def cumprod_jvp(t, x, axis=None):
    """The tangent of ``np.cumprod(x, axis)`` for the tangent ``t`` of ``x``: along the axis (the
    flattened array when None), z_dot[j] = z_dot[j - 1] * x[j] + z[j - 1] * t[j], which is exact
    where entries are zero (no division)."""
    t = np.broadcast_to(t, np.shape(x))
    xs = np.reshape(x, -1) if axis is None else np.moveaxis(np.asarray(x), axis, -1)
    ts = np.reshape(t, -1) if axis is None else np.moveaxis(t, axis, -1)
    dtype = np.result_type(_float_dtype(x), ts.dtype)
    out = np.empty(xs.shape, dtype=dtype)
    running = np.ones(xs.shape[:-1], dtype=dtype)      # z[j - 1]
    tangent = np.zeros(xs.shape[:-1], dtype=dtype)     # z_dot[j - 1]
    for j in range(xs.shape[-1]):
        tangent = tangent * xs[..., j] + running * ts[..., j]
        running = running * xs[..., j]
        out[..., j] = tangent
    return out if axis is None else np.moveaxis(out, -1, axis)



# The second derivatives of np.prod and np.cumprod.  Each is a sum over pairs (k, m) of entries of
# one line of products of all the entries but those two.  Exact where entries are zero, with no
# division: for each m, the line is walked with x[m] replaced by 1 and the direction's m-th entry
# by 0, through cumprod_jvp's recurrence (tangent[j] = tangent[j - 1] * x[j] + running[j - 1] * d[j]).
# That is O(n^2) per line, against O(n) for the first derivative.
def _lines(a, axis):
    """``a`` as (lines, n): the flattened array when ``axis`` is None, else ``axis`` moved last."""
    a = np.asarray(a)
    moved = np.reshape(a, -1) if axis is None else np.moveaxis(a, axis, -1)
    return np.reshape(moved, (-1, moved.shape[-1])), moved.shape


def _from_lines(lines, moved_shape, shape, axis):
    out = np.reshape(lines, moved_shape)
    return np.reshape(out, shape) if axis is None else np.moveaxis(out, -1, axis)


def _tangents_without(xs, ds, m):
    """cumprod_jvp along each line of ``xs`` (lines, n) for the direction ``ds``, with entry ``m`` of
    the line left out of every product (x[m] read as 1, d[m] as 0): shape (lines, n)."""
    out = np.empty(np.shape(xs), dtype=np.result_type(xs, ds))
    running = np.ones(xs.shape[0], dtype=out.dtype)
    tangent = np.zeros(xs.shape[0], dtype=out.dtype)
    for j in range(xs.shape[1]):
        if j != m:
            tangent = tangent * xs[:, j] + running * ds[:, j]
            running = running * xs[:, j]
        out[:, j] = tangent
    return out


def _cumprod_shape(x, axis):
    return (np.size(x),) if axis is None else np.shape(x)


def prod_vjp_jvp(g, x, v, axis=None, keepdims=False):
    """The change of ``prod_vjp(g, x, axis, keepdims)`` when ``x`` moves along ``v``: entry m gets
    g times the sum over k != m of v[k] * prod(x[j] for j not in (k, m)), within m's line.  The map
    from ``v`` is symmetric (np.prod's Hessian times g), so it is also prod_vjp's adjoint in x."""
    dtype = np.result_type(_float_dtype(x), np.asarray(v).dtype, np.asarray(g).dtype)
    xs, moved = _lines(np.asarray(x, dtype), axis)
    vs, _ = _lines(np.broadcast_to(np.asarray(v, dtype), np.shape(x)), axis)
    out = np.empty(xs.shape, dtype)
    for m in range(xs.shape[1]):
        out[:, m] = _tangents_without(xs, vs, m)[:, -1]
    return expand_to(g, x, axis, keepdims) * _from_lines(out, moved, np.shape(x), axis)


def cumprod_jvp_jvp(t, v, x, axis=None):
    """The change of ``cumprod_jvp(t, x, axis)`` when ``x`` moves along ``v``: entry i gets the sum
    over k != m, both <= i, of t[k] v[m] prod(x[j] for j <= i, j not in (k, m)).  Symmetric in t
    and v; its transpose in v is cumprod_vjp_jvp."""
    dtype = np.result_type(_float_dtype(x), np.asarray(t).dtype, np.asarray(v).dtype)
    xs, moved = _lines(np.asarray(x, dtype), axis)
    ts, _ = _lines(np.broadcast_to(np.asarray(t, dtype), np.shape(x)), axis)
    vs, _ = _lines(np.broadcast_to(np.asarray(v, dtype), np.shape(x)), axis)
    out = np.zeros(xs.shape, dtype)
    for m in range(xs.shape[1]):
        out[:, m:] += vs[:, m:m + 1] * _tangents_without(xs, ts, m)[:, m:]
    return _from_lines(out, moved, moved, axis)      # flat when axis is None, as np.cumprod's


def cumprod_vjp_jvp(g, v, x, axis=None):
    """The change of ``cumprod_vjp(g, x, products, axis)`` when ``x`` moves along ``v``: entry m
    gets the sum over i >= m of g[i] times the sum over k != m, k <= i, of v[k] prod(x[j] for j <= i,
    j not in (k, m)).  Symmetric in v and the result, so it is also cumprod_vjp's adjoint in x (with
    the cotangent as ``v``) and cumprod_jvp's adjoint in x (with ``g`` the cotangent, ``v`` = t)."""
    dtype = np.result_type(_float_dtype(x), np.asarray(g).dtype, np.asarray(v).dtype)
    xs, moved = _lines(np.asarray(x, dtype), axis)
    gs, _ = _lines(np.broadcast_to(np.asarray(g, dtype), _cumprod_shape(x, axis)), axis)
    vs, _ = _lines(np.broadcast_to(np.asarray(v, dtype), np.shape(x)), axis)
    out = np.empty(xs.shape, dtype)
    for m in range(xs.shape[1]):
        out[:, m] = np.sum(gs[:, m:] * _tangents_without(xs, vs, m)[:, m:], axis=1)
    return _from_lines(out, moved, np.shape(x), axis)


# ------------------------------------------------------------ sorting
def add_along_axis(g, indices, values, axis):
    """A copy of ``g`` with ``values`` added where ``np.take_along_axis(g, indices, axis)`` reads:
    a position read twice gets both (the adjoint of take_along_axis, as np.add.at is getitem's).
    ``values`` has take_along_axis's result shape; where ``g`` has length 1 along an axis that
    result broadcast to more, the values along it are summed.  ``axis=None``: ``g`` flattened (then
    reshaped back), as take_along_axis reads it."""
    if axis is None:
        return np.reshape(add_along_axis(np.ravel(g), indices, values, 0), np.shape(g))
    values = np.asarray(values)
    big_shape = list(np.shape(values))
    big_shape[axis] = np.shape(g)[axis]
    big = np.zeros(big_shape, dtype=np.result_type(g, values))
    index = list(np.ix_(*[np.arange(n) for n in np.shape(values)]))
    index[axis] = np.broadcast_to(indices, np.shape(values))
    np.add.at(big, tuple(index), values)
    return g + unbroadcast(big, g)


# ------------------------------------------------------------ linalg2: decompositions by name
# np.linalg.svd's forms, one primitive each (templates/definitions.py picks one by its literal
# keywords): the reduced decomposition, which has derivatives, and the complete one, which has none.
def svd(x):
    """np.linalg.svd(x, full_matrices=False): (U, S, Vh) of a matrix or a stack of them."""
    return np.linalg.svd(x, full_matrices=False)


def svd_complete(x):
    """np.linalg.svd(x, full_matrices=True)."""
    return np.linalg.svd(x, full_matrices=True)
