"""The CUDA target's library kernels: what generated code launches but does not spell out.

Generated modules write their own kernels for fused elementwise code and for
per-example (vmap) code.  Reductions, matrix products and data movement are
the same every time, so they live here, written once:

* ``reduce_per_output`` / ``reduce_chunks``: ``sum``/``mean``/``max``/``min``
  of an array seen as ``(outer, length, inner)`` along its middle axis;
* ``matmul_float32`` / ``matmul_float64``: the tiled shared-memory matrix product;
* ``gather``: a strided copy (broadcasts and transposes on the device);
* ``copy_1d/2d/3d``: a non-contiguous view into a fresh contiguous array;
* ``tape_push`` / ``tape_peek``: device functions for reverse mode's tapes
  inside per-example kernels (fixed-size local arrays).
"""
from __future__ import annotations

import math

from numba import cuda, float32, float64
from numba.core import config

THREADS = 256          # threads per block for 1-D launches
TILE = 16              # matmul tile edge: a TILE x TILE block of threads
SUM, MAX, MIN, MEAN = 0, 1, 2, 3


def blocks_for(n: int) -> int:
    return max(1, math.ceil(n / THREADS))


# ------------------------------------------------------------------ tapes
def _called_per_statement(function):
    """A device function that per-example kernels call on every taped statement.

    On numba's simulator every call of a device function takes a lock on its
    module; with one Python thread per simulated CUDA thread, each contended
    acquire waits out the interpreter's thread switch interval, and a kernel of
    64 threads that pushes a few thousand values can stall for minutes.  These
    functions use nothing of ``cuda``, so on the simulator they stay plain
    Python, called without that lock; on a GPU they are device functions.
    """
    return function if config.ENABLE_CUDASIM else cuda.jit(device=True)(function)


@_called_per_statement
def tape_push(tape, size, value, status):
    """Record ``value``; a full tape sets ``status[0]`` (the host raises) instead of writing."""
    if size < tape.shape[0]:
        tape[size] = value
    else:
        status[0] = 1
    return size + 1


@_called_per_statement
def tape_peek(tape, index):
    """The value at ``index`` (clamped, so an overflowed tape reads garbage, not out of bounds)."""
    return tape[min(max(index, 0), tape.shape[0] - 1)]


# ------------------------------------------------------------- reductions
@cuda.jit(device=True)
def _combine(op, acc, value):
    if op == MAX:
        return value if value > acc or value != value else acc     # NaN wins, as in NumPy
    if op == MIN:
        return value if value < acc or value != value else acc
    return acc + value


@cuda.jit
def reduce_per_output(x, outer, length, inner, init, op, divisor, out):
    """One thread per output element walks the reduced axis: good when outputs are many."""
    o = cuda.grid(1)
    if o < outer * inner:
        a = o // inner
        b = o % inner
        acc = init
        for k in range(length):
            acc = _combine(op, acc, x[(a * length + k) * inner + b])
        if op == MEAN:
            acc = acc / divisor
        out[o] = acc


@cuda.jit
def reduce_chunks(x, outer, length, inner, init, op, chunk, partial):
    """Few outputs, long axis: block (c, o) folds chunk c of output o in shared memory."""
    shared = cuda.shared.array(THREADS, float64)
    c = cuda.blockIdx.x
    o = cuda.blockIdx.y
    t = cuda.threadIdx.x
    a = o // inner
    b = o % inner
    acc = float64(init)
    start = c * chunk
    stop = min(start + chunk, length)
    for k in range(start + t, stop, THREADS):
        acc = _combine(op, acc, x[(a * length + k) * inner + b])
    shared[t] = acc
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:                     # tree reduction over the block's threads
        if t < step:
            shared[t] = _combine(op, shared[t], shared[t + step])
        cuda.syncthreads()
        step //= 2
    if t == 0:
        partial[o * cuda.gridDim.x + c] = shared[0]


# ---------------------------------------------------------------- matmul
def _tiled_matmul(element):
    """``c = a @ b`` for 2-D ``a`` (m, k) and ``b`` (k, n): TILE x TILE tiles staged in shared memory."""

    @cuda.jit
    def matmul_tiled(a, b, c):
        tile_a = cuda.shared.array((TILE, TILE), element)
        tile_b = cuda.shared.array((TILE, TILE), element)
        col, row = cuda.grid(2)         # x runs along a row of c: neighbouring threads read neighbouring memory
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        m, k = a.shape
        n = b.shape[1]
        acc = element(0)
        for t in range((k + TILE - 1) // TILE):
            # each thread loads one element of each tile (zero beyond the edges)
            ka = t * TILE + tx
            kb = t * TILE + ty
            tile_a[ty, tx] = a[row, ka] if row < m and ka < k else element(0)
            tile_b[ty, tx] = b[kb, col] if kb < k and col < n else element(0)
            cuda.syncthreads()
            for j in range(TILE):
                acc += tile_a[ty, j] * tile_b[j, tx]
            cuda.syncthreads()
        if row < m and col < n:
            c[row, col] = acc

    return matmul_tiled


# one kernel per element type (the shared tiles' type is fixed at compile time), each bound to a
# module-level name so that cuda_ptx can find it again in a process of its own
matmul_float32 = _tiled_matmul(float32)
matmul_float64 = _tiled_matmul(float64)


def matmul_kernel(dtype_name: str):
    return matmul_float32 if dtype_name == "float32" else matmul_float64


# ---------------------------------------------------------- data movement
@cuda.jit
def gather(dst, src, dst_shape, src_strides):
    """``dst[j] = src[k]``, k from j's multi-index in ``dst_shape`` and ``src_strides`` (elements; 0 broadcasts)."""
    j = cuda.grid(1)
    if j < dst.size:
        rest = j
        k = 0
        for d in range(dst_shape.size - 1, -1, -1):
            k += (rest % dst_shape[d]) * src_strides[d]
            rest //= dst_shape[d]
        dst[j] = src[k]


@cuda.jit
def copy_1d(dst, src):
    i = cuda.grid(1)
    if i < dst.shape[0]:
        dst[i] = src[i]


@cuda.jit
def copy_2d(dst, src):
    i, j = cuda.grid(2)
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = src[i, j]


@cuda.jit
def copy_3d(dst, src):
    i, j, k = cuda.grid(3)
    if i < dst.shape[0] and j < dst.shape[1] and k < dst.shape[2]:
        dst[i, j, k] = src[i, j, k]


@cuda.jit
def fill(dst, value):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = value
