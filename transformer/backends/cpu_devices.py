"""The ``pmap-cpu`` target: one device's shard code for local CPU devices.

The same numba lowering as the ``cpu`` target, compiled with ``nogil=True``
so device threads run at once, and with each collective rewritten to a call
of this module (``dev.psum(x)``).  Those calls are numba overloads that pass
the value's address to the host through a C callback (``cpu_threads``),
registered as a named symbol so that numba's on-disk cache stays valid across
processes.  Why threads and a callback rather than stages: see cpu_threads.
"""
from __future__ import annotations

import ctypes
import functools

import numba
import numpy as np
from llvmlite import binding as llvm
from numba import types
from numba.core import errors as numba_errors
from numba.extending import overload

from . import cpu, numba_lowering, numba_parallel, numba_promotion
from .cpu_threads import AXIS_SIZE, CALLBACK, COLLECTIVES, DTYPES, OP, DeviceAborted
from . import device_code
from .device_code import device_only_collectives, lower_collectives

cpu.load_numba()    # every overload generated cpu code calls (nl.*, rt.*, lax.*, random.*), before any shard compiles

NAME = "pmap-cpu"
PREAMBLE = cpu.PREAMBLE + "from transformer.backends import cpu_devices as dev\n"

_SYMBOL = "transformer_pmap_cpu_collective"
llvm.add_symbol(_SYMBOL, ctypes.cast(CALLBACK, ctypes.c_void_p).value)
# (op, dtype code, source address, destination address, shape address, ndim, device sending to
# this one (ppermute; else -1)) -> status
_host = types.ExternalFunction(_SYMBOL, types.int64(types.int64, types.int64, types.intp, types.intp,
                                                    types.intp, types.int64, types.int64))


def source(core):
    core = numba_lowering.lower_tapes(numba_lowering.lower(lower_collectives(core, "dev")))
    core, parallel_import = numba_parallel.lower(core)       # vmap's per-example loops (a Jacobian's rows)
    return core.code(), PREAMBLE + parallel_import


def finish(function, path):
    dispatcher = numba.njit(cache=True, nogil=True, pipeline_class=numba_promotion.COMPILER)(function)

    @functools.wraps(function)
    def compiled(*args):
        try:
            return dispatcher(*args)
        except (numba_errors.TypingError, numba_errors.LoweringError, numba_errors.UnsupportedError) as err:
            raise cpu._user_error(err, str(path)) from None

    compiled.dispatcher = dispatcher
    return compiled


# ------------------------------------------------------------------ compiled side
@numba.njit(nogil=True, cache=True)
def _exchange(op, dtype_code, src, out, sender=-1):
    shape = np.empty(max(src.ndim, 1), np.int64)
    for k in range(src.ndim):
        shape[k] = src.shape[k]
    if _host(op, dtype_code, src.ctypes.data, out.ctypes.data, shape.ctypes.data, src.ndim, sender) < 0:
        raise DeviceAborted("pmap collective failed; the caller raises the error that caused it")


@numba.njit(nogil=True, cache=True)
def _ask(op):
    answer = _host(op, 0, 0, 0, 0, 0, -1)
    if answer < 0:
        raise DeviceAborted("lax.axis_index called outside pmap")
    return answer


def _dtype_code(dtype) -> int:
    try:
        return DTYPES.index(np.dtype(str(dtype)))
    except (TypeError, ValueError):
        raise numba_errors.TypingError(f"pmap collectives take float64, float32, int64 or int32 values, "
                                       f"not {dtype}") from None


def _value_dtype(x):
    if isinstance(x, types.Array):
        return x.dtype
    if isinstance(x, (types.Float, types.Integer)) and not isinstance(x, types.Boolean):
        return x
    raise numba_errors.TypingError(f"pmap collectives take arrays or numbers, not {x}")


# Which device sends to which (checking perm as it goes), compiled into device code.
sender_of = numba.njit(nogil=True, cache=True)(device_code.sender_of)


# Generated device code calls these (dev.psum, ...); only their numba overloads ever run.
_STAND_INS = device_only_collectives()
globals().update(_STAND_INS)
_INDEX = next(OP[prim.name] for prim in COLLECTIVES if prim.collective.does == "index")


def _reduction(prim):
    """An overload for a collective that reduces: its result has the value's shape."""
    op = OP[prim.name]

    def typer(x):
        dtype = _value_dtype(x)
        to_float = prim.collective.mean and isinstance(dtype, types.Integer)   # the mean of ints is a float
        code = _dtype_code(types.float64 if to_float else dtype)
        if isinstance(x, types.Array):
            if to_float:
                def impl(x):
                    src = np.ascontiguousarray(x).astype(np.float64)
                    out = np.empty_like(src)
                    _exchange(op, code, src, out)
                    return out
            else:
                def impl(x):
                    src = np.ascontiguousarray(x)
                    out = np.empty_like(src)
                    _exchange(op, code, src, out)
                    return out
        elif to_float:
            def impl(x):
                src = np.array([float(x)])
                out = np.empty_like(src)
                _exchange(op, code, src, out)
                return out[0]
        else:
            def impl(x):
                src = np.array([x])
                out = np.empty_like(src)
                _exchange(op, code, src, out)
                return out[0]
        return impl
    return typer


def _gather(prim):
    """An overload for a collective that stacks every device's value."""
    op = OP[prim.name]

    def typer(x):
        code = _dtype_code(_value_dtype(x))
        if isinstance(x, types.Array):
            def impl(x):
                src = np.ascontiguousarray(x)
                out = np.empty((_ask(AXIS_SIZE),) + src.shape, src.dtype)
                _exchange(op, code, src, out)
                return out
        else:
            def impl(x):
                src = np.array([x])
                out = np.empty(_ask(AXIS_SIZE), src.dtype)
                _exchange(op, code, src, out)      # the host stacks (1,)-shaped values: n numbers
                return out
        return impl
    return typer


def _index(prim):
    """An overload for a collective that answers the device's index."""
    op = OP[prim.name]

    def typer():
        def impl():
            return _ask(op)
        return impl
    return typer


def zeros_if_no_pairs(x, perm):
    """The ppermute overload when ``perm`` is the empty tuple (every device receives zeros;
    numba cannot index an empty tuple), else None."""
    if not (isinstance(perm, types.BaseTuple) and len(perm) == 0):
        return None
    if isinstance(x, types.Array):
        return lambda x, perm, inverse: np.zeros_like(x)
    return lambda x, perm, inverse: x * 0


def _permute(prim):
    """An overload for a collective that sends values along ``perm``."""
    op = OP[prim.name]

    def typer(x, perm, inverse):
        code = _dtype_code(_value_dtype(x))
        nothing_sent = zeros_if_no_pairs(x, perm)
        if nothing_sent is not None:
            return nothing_sent
        if isinstance(x, types.Array):
            def impl(x, perm, inverse):
                src = np.ascontiguousarray(x)
                out = np.empty_like(src)
                _exchange(op, code, src, out, sender_of(perm, inverse, _ask(_INDEX), _ask(AXIS_SIZE)))
                return out
        else:
            def impl(x, perm, inverse):
                src = np.array([x])
                out = np.empty_like(src)
                _exchange(op, code, src, out, sender_of(perm, inverse, _ask(_INDEX), _ask(AXIS_SIZE)))
                return out[0]
        return impl
    return typer


# What each collective does -> its overload; the registry says what each one does.
_OVERLOADS = {"reduce": _reduction, "gather": _gather, "index": _index, "permute": _permute}
for _prim in COLLECTIVES:
    overload(_STAND_INS[_prim.name], jit_options={"nogil": True})(_OVERLOADS[_prim.collective.does](_prim))
