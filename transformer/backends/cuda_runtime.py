"""Host-side helpers that generated CUDA modules call (imported there as ``cu``).

A generated module for ``target="cuda"`` has kernels plus a *host driver*: a
plain Python function that keeps arrays on the device and launches one kernel
per fused group of statements.  The driver calls these helpers to launch
kernels, to allocate, and to move data only where the user asked for it:

* arguments that are NumPy arrays are copied to the device once, on entry;
* results go back to the host when every array argument came from the host,
  and stay on the device (numba device arrays) when any argument was already
  there — pass ``numba.cuda.to_device(x)`` to keep a chain of calls on the GPU.
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from .. import rules, runtime
from . import cuda_kernels as kernels
from . import cuda_lax, cuda_numpy


def device_math(fn):
    """``fn`` as device code: the same code, with ``np`` standing for ``cuda_numpy`` (NumPy's
    elementwise functions as numba-cuda can lower them on scalars) and ``lax`` for ``cuda_lax``
    (its special functions).  The function's globals are copied here, so everything it names
    must be defined before it, as generated modules do."""
    import types
    scope = dict(fn.__globals__, np=cuda_numpy, lax=cuda_lax)
    return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)


class CudaTargetError(TypeError):
    """A value the CUDA target cannot take (the backend adds the user's line)."""


def is_device(x) -> bool:
    return hasattr(x, "copy_to_host")


def device(x):
    """``x`` on the device if it is an array; host scalars stay scalars."""
    if is_device(x):
        return x
    if hasattr(x, "__cuda_array_interface__"):          # CuPy, PyTorch...: borrow, no copy
        return cuda.as_cuda_array(x)
    if isinstance(x, np.ndarray) and x.ndim > 0:
        return cuda.to_device(np.ascontiguousarray(x))
    return x


def any_device(*args) -> bool:
    return any(is_device(a) or hasattr(a, "__cuda_array_interface__") for a in args)


def result(value, keep_on_device: bool):
    """The driver's return value: device arrays come home unless the caller passed device arrays."""
    if isinstance(value, tuple):
        return tuple(result(v, keep_on_device) for v in value)
    if is_device(value):
        if value.ndim == 0:
            return value.copy_to_host()[()]
        return value if keep_on_device else value.copy_to_host()
    return value


def value(x):
    """A host number for ``if``/``while``/``range``: device scalars are read back."""
    if is_device(x):
        if x.size != 1:
            raise CudaTargetError(f"the truth value of an array of shape {x.shape} is ambiguous")
        return x.copy_to_host().reshape(()).item()
    return x


# -------------------------------------------------------------- layout
def _contiguous(x):
    """``x`` as a C-contiguous device array (a copy kernel for strided views)."""
    if x.is_c_contiguous():
        return x
    if x.ndim > 3:
        raise CudaTargetError(f"a non-contiguous view of rank {x.ndim} on the device (ranks up to 3 are copied)")
    out = cuda.device_array(x.shape, x.dtype)
    if x.ndim == 1:
        kernels.copy_1d[kernels.blocks_for(x.shape[0]), kernels.THREADS](out, x)
    else:
        grid = tuple(max(1, -(-n // 8)) for n in x.shape)
        kernels.copy_2d[grid, (8,) * 2](out, x) if x.ndim == 2 else kernels.copy_3d[grid, (8,) * 3](out, x)
    return out


def flat(x):
    return _contiguous(x).reshape(x.size)


def _gather(src, shape, strides):
    """A new contiguous array of ``shape`` with element k of ``src`` (flat) chosen by ``strides``."""
    n = int(np.prod(shape, dtype=np.int64))
    out = cuda.device_array(n, src.dtype)
    if n:
        kernels.gather[kernels.blocks_for(n), kernels.THREADS](
            out, flat(src), cuda.to_device(np.array(shape or (1,), np.int64)),
            cuda.to_device(np.array(strides or (0,), np.int64)))
    return out.reshape(shape)


def broadcast_to(x, shape):
    """``np.broadcast_to(x, shape)``, materialized on the device."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    padded = (1,) * (len(shape) - x.ndim) + tuple(x.shape)
    c_strides = np.cumprod((1,) + padded[:0:-1])[::-1] if padded else ()
    strides = [0 if n == 1 and m != 1 else s for n, m, s in zip(padded, shape, c_strides)]
    return _gather(x, shape, strides)


def transpose(x, axes=None):
    x = device(x)
    if not is_device(x) or x.ndim < 2:
        return x
    axes = tuple(reversed(range(x.ndim))) if axes is None else tuple(a % x.ndim for a in axes)
    c_strides = np.cumprod((1,) + tuple(x.shape)[:0:-1])[::-1]
    return _gather(x, tuple(x.shape[a] for a in axes), [int(c_strides[a]) for a in axes])


def shape(x):
    return tuple(x.shape) if is_device(x) else np.shape(x)     # a plain tuple, negative indices and all


def moveaxis(x, source, destination):
    x = device(x)
    if not is_device(x):
        return np.moveaxis(x, source, destination)
    if not isinstance(source, int) or not isinstance(destination, int):
        raise CudaTargetError("np.moveaxis with several axes on the cuda target (move one axis at a time)")
    order = [a for a in range(x.ndim) if a != source % x.ndim]
    order.insert(destination % x.ndim, source % x.ndim)
    return transpose(x, order)


def reshape(x, shape):
    return device(x) if not hasattr(x, "reshape") else _contiguous(device(x)).reshape(shape)


# --------------------------------------------------------- elementwise
_DTYPE_CACHE: dict = {}


def elementwise(kernel, element, args):
    """Run one fused group: the kernel over the broadcast shape, or ``element`` on host scalars.

    ``element`` is the group's code as a plain function of scalars; run once
    on stand-in values it gives each output's dtype, and it computes the
    group outright when no argument is an array.
    """
    arrays = [a for a in args if is_device(a) or isinstance(a, np.ndarray) and a.ndim > 0]
    if not arrays:
        return element(*args)
    shape = np.broadcast_shapes(*(tuple(a.shape) for a in arrays))
    n = int(np.prod(shape, dtype=np.int64))
    dtypes = _output_dtypes(element, args)
    operands = []
    for a in args:
        if is_device(a) or isinstance(a, np.ndarray) and a.ndim > 0:
            a = device(a)
            operands += [flat(broadcast_to(a, shape)) if a.size != 1 else flat(a), 1 if a.size != 1 else 0]
        else:
            operands += [cuda.to_device(np.array([a])), 0]      # a host scalar: one element, step 0
    outs = [cuda.device_array(n, dtype) for dtype in dtypes]
    if n:
        kernel[kernels.blocks_for(n), kernels.THREADS](n, *operands, *outs)
    return tuple(o.reshape(shape) for o in outs)


def _output_dtypes(element, args):
    key = (element, tuple(np.result_type(a).str if not isinstance(a, (int, float, bool)) else type(a) for a in args))
    if key not in _DTYPE_CACHE:
        stand_ins = [np.ones((), dtype=a.dtype) if is_device(a) or isinstance(a, np.ndarray) else a for a in args]
        with np.errstate(all="ignore"):
            outputs = element(*stand_ins)
        _DTYPE_CACHE[key] = [np.result_type(o) for o in outputs]
    return _DTYPE_CACHE[key]


# ---------------------------------------------------------- reductions
_MANY_OUTPUTS = 4096        # at least this many outputs: one thread per output is enough work


def reduce(kind, x, axis=None, keepdims=False):
    """``np.<kind>(x, axis=axis, keepdims=keepdims)`` on the device, for a reduction of the "cuda"
    table (templates/cuda.py): its rule names the kernels' ``combine`` and the value it ``start``s from."""
    if not (is_device(x) or isinstance(x, np.ndarray) and x.ndim > 0):
        return getattr(np, kind)(x, axis=axis, keepdims=keepdims)
    rule = rules.options("cuda", kind)
    x = device(x)
    if axis is None:
        axes = tuple(range(x.ndim))
    else:
        axes = tuple(sorted(a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis)))
    if axes != tuple(range(axes[0], axes[-1] + 1)) if axes else False:
        raise CudaTargetError(f"{kind} over axes {axis} that are not next to each other")
    shape = tuple(x.shape)
    outer = int(np.prod(shape[:axes[0]], dtype=np.int64)) if axes else int(np.prod(shape))
    length = int(np.prod([shape[a] for a in axes], dtype=np.int64)) if axes else 1
    inner = int(np.prod(shape[axes[-1] + 1:], dtype=np.int64)) if axes else 1
    if length == 0 and rule["start"] != "zero":
        raise ValueError(f"zero-size array to reduction operation {kind} which has no identity")
    out_dtype = _reduced_dtype(kind, x.dtype)
    op = getattr(kernels, rule["combine"])
    init = _start(rule["start"], op, x.dtype, kind)
    n_out = outer * inner
    out = cuda.device_array(max(n_out, 1), out_dtype)
    src = flat(x)
    if n_out >= _MANY_OUTPUTS or x.dtype.kind not in "f" or length <= kernels.THREADS:
        kernels.reduce_per_output[kernels.blocks_for(n_out), kernels.THREADS](
            src, outer, length, inner, init, op, length, out)
    else:
        chunks = min(256, -(-length // kernels.THREADS))
        chunk = -(-length // chunks)
        partial = cuda.device_array(n_out * chunks, np.float64)
        kernels.reduce_chunks[(chunks, n_out), kernels.THREADS](src, outer, length, inner, float(init), op, chunk,
                                                                  partial)
        final = kernels.SUM if op == kernels.MEAN else op
        with_mean = kernels.MEAN if op == kernels.MEAN else final
        kernels.reduce_per_output[kernels.blocks_for(n_out), kernels.THREADS](
            partial, n_out, chunks, 1, float(init), with_mean, length, out)
    out_shape = tuple(1 if i in axes else n for i, n in enumerate(shape)) if keepdims else \
        tuple(n for i, n in enumerate(shape) if i not in axes)
    return out[:n_out].reshape(out_shape)


def _reduced_dtype(kind, dtype):
    return np.result_type(getattr(np, kind)(np.ones(1, dtype)))


def _start(start, op, dtype, kind):
    """The value a reduction of ``dtype`` starts from, as its rule's ``start`` names it (a mean's
    zero is a float: it divides)."""
    if start == "zero":
        return 0.0 if dtype.kind == "f" or op == kernels.MEAN else 0
    info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype) if dtype.kind in "iu" else None
    if info is None:
        raise CudaTargetError(f"np.{kind} of {dtype} arrays on the cuda target")
    lowest = start == "lowest"
    if dtype.kind == "f":
        return -np.inf if lowest else np.inf
    return int(info.min) if lowest else int(info.max)


# -------------------------------------------------------------- matmul
def matmul(x, y):
    """``x @ y`` (and ``np.dot``) for 1-D and 2-D operands: the tiled shared-memory kernel."""
    if not any_device(x, y) and (np.ndim(x) == 0 or np.ndim(y) == 0):
        return x * y
    x, y = device(x), device(y)
    if x.ndim == 0 or y.ndim == 0 or x.ndim > 2 or y.ndim > 2:
        raise CudaTargetError(f"matmul of shapes {x.shape} and {y.shape} on the cuda target (1-D and 2-D only)")
    a = x.reshape(1, x.shape[0]) if x.ndim == 1 else _contiguous(x)
    b = y.reshape(y.shape[0], 1) if y.ndim == 1 else _contiguous(y)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: shapes {x.shape} and {y.shape} do not align")
    dtype = np.result_type(a.dtype, b.dtype, np.float32)
    if dtype not in (np.float32, np.float64):
        dtype = np.dtype(np.float64)
    if a.dtype != dtype:
        a = astype(a, dtype)
    if b.dtype != dtype:
        b = astype(b, dtype)
    m, n = a.shape[0], b.shape[1]
    c = cuda.device_array((m, n), dtype)
    grid = (max(1, -(-n // kernels.TILE)), max(1, -(-m // kernels.TILE)))
    kernels.matmul_kernel(dtype.name)[grid, (kernels.TILE, kernels.TILE)](a, b, c)
    shape = tuple(x.shape[:-1]) + tuple(y.shape[1:])
    return c.reshape(shape) if shape != (m, n) else c


@cuda.jit
def _cast(dst, src):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i]


def astype(x, dtype):
    dtype = np.dtype(dtype)
    if not is_device(x):
        return np.asarray(x).astype(dtype) if isinstance(x, np.ndarray) else dtype.type(x)
    out = cuda.device_array(x.size, dtype)
    if x.size:
        _cast[kernels.blocks_for(x.size), kernels.THREADS](out, flat(x))
    return out.reshape(x.shape)


# ------------------------------------------------------------ creation
def full(shape, fill_value, dtype=None):
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),)
    dtype = np.dtype(dtype) if dtype is not None else np.result_type(fill_value)
    out = cuda.device_array(int(np.prod(shape, dtype=np.int64)), dtype)
    if out.size:
        kernels.fill[kernels.blocks_for(out.size), kernels.THREADS](out, fill_value)
    return out.reshape(shape)


def zeros(shape, dtype=float):
    return full(shape, 0, dtype)


def ones(shape, dtype=float):
    return full(shape, 1, dtype)


def zeros_like(x, dtype=None):
    return full(np.shape(x), 0, dtype or np.result_type(x))


def ones_like(x, dtype=None):
    return full(np.shape(x), 1, dtype or np.result_type(x))


def full_like(x, fill_value, dtype=None):
    return full(np.shape(x), fill_value, dtype or np.result_type(x))


def copy(x):
    return astype(x, x.dtype) if is_device(x) else runtime.copy(x)


# ------------------------------------------------- reverse-mode helpers
def unbroadcast(g, x):
    """``rt.unbroadcast`` on the device: sum ``g`` over the axes broadcasting added."""
    if not is_device(g):
        return runtime.unbroadcast(g, x)
    shape = tuple(np.shape(x))
    if tuple(g.shape) == shape:
        return g
    lead = g.ndim - len(shape)
    if lead > 0:
        g = reduce("sum", g, axis=tuple(range(lead)))
    for axis, n in enumerate(shape):
        if n == 1 and g.shape[axis] != 1:
            g = reduce("sum", g, axis=axis, keepdims=True)
    return g


def expand_to(g, x, axis=None, keepdims=False):
    """``rt.expand_to`` on the device: broadcast a reduced ``g`` back over ``x`` (floating)."""
    shape = tuple(np.shape(x))
    dtype = np.result_type(g, np.float32) if np.result_type(g).kind != "f" else np.result_type(g)
    if not is_device(g):
        return full(shape, g, np.float64 if dtype.kind != "f" else dtype)
    if axis is not None and not keepdims:
        kept = list(g.shape)
        for a in sorted(a % len(shape) for a in ((axis,) if isinstance(axis, int) else axis)):
            kept.insert(a, 1)
        g = _contiguous(g).reshape(tuple(kept))
    return broadcast_to(astype(g, dtype) if g.dtype != dtype else g, shape)


# ---------------------------------------------------------- per example
_PROBES: dict = {}


def run_examples(kernel, one_example, args, in_axes):
    """vmap on the device: ``kernel`` runs ``one_example``'s code once per thread, one example each.

    ``one_example`` (the same code as plain Python) runs once on the host for
    the first example, to learn how many results there are and their dtypes.
    """
    keep_on_device = any_device(*args)
    sizes = {np.shape(a)[axis] for a, axis in zip(args, in_axes) if axis is not None}
    if len(sizes) != 1:
        raise ValueError(f"vmap got inconsistent batch sizes {sorted(sizes)}")
    n = sizes.pop()
    moved = []
    for a, axis in zip(args, in_axes):
        if axis not in (None, 0):
            if is_device(a):
                raise CudaTargetError(f"in_axes={axis} for a device array (move the batch axis first, or pass in_axes=0)")
            a = np.moveaxis(np.asarray(a), axis, 0)
        moved.append(a)
    dtypes = _probe(one_example, moved, in_axes)
    operands = [device(a) if axis is not None or isinstance(a, np.ndarray) else a for a, axis in zip(moved, in_axes)]
    outs = [cuda.device_array(n, dtype) for dtype in dtypes]
    status = cuda.to_device(np.zeros(1, np.int32))
    if n:
        kernel[kernels.blocks_for(n), kernels.THREADS](n, *operands, *outs, status)
    if status.copy_to_host()[0]:
        raise RuntimeError("a reverse-mode tape in the per-example CUDA kernel overflowed its fixed size "
                           "(TAPE_CAPACITY in the generated module): a loop ran more iterations than it holds")
    outs = tuple(o if keep_on_device else o.copy_to_host() for o in outs)
    return outs if len(outs) > 1 else outs[0]


def _probe(one_example, args, in_axes):
    key = (one_example, tuple((np.result_type(a).str if hasattr(a, "dtype") else type(a), np.ndim(a), axis)
                              for a, axis in zip(args, in_axes)))
    if key not in _PROBES:
        first = [_first(a) if axis is not None else _host(a) for a, axis in zip(args, in_axes)]
        out = one_example(*first)
        outs = out if isinstance(out, tuple) else (out,)
        for value in outs:
            if np.ndim(value) != 0:
                raise CudaTargetError(f"a per-example CUDA kernel returns one number per example and result; "
                                      f"this function returns shape {np.shape(value)} for one example")
        _PROBES[key] = [np.result_type(v) for v in outs]
    return _PROBES[key]


def _first(a):
    a = a[0:1]
    a = a.copy_to_host() if is_device(a) else np.asarray(a)
    return a[0]


def _host(a):
    return a.copy_to_host() if is_device(a) else a
