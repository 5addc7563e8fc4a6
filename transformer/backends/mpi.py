"""The ``pmap-mpi`` target: one device per MPI rank, collectives as MPI calls.

Every rank runs the whole shard function, compiled by numba; each collective
is rewritten to a call of this module (``mpi_dev.psum(x)``), a numba overload
that calls numba-mpi's ``allreduce``/``allgather`` inside the compiled code —
no trip back to Python.  Before reducing, ranks agree on the operation and
shape (one small ``allreduce`` of max and -min): ranks that disagree all raise
``CollectiveMismatch`` together instead of corrupting memory or hanging.

Faults: MPI cannot cancel a collective another rank is waiting in.  So an
error every rank sees alike (shapes that differ across ranks, checked on entry
with mpi4py; a collective mismatch; a transform or compile error) is raised on
every rank, and any other error — one rank failing alone — is printed with
its traceback and ends the whole job through ``MPI_Abort``: every rank exits
with an error instead of hanging.
"""
from __future__ import annotations

import functools
import os
import sys
import time
import traceback

import numba
import numba_mpi
import numpy as np
from numba import types
from numba.core import errors as numba_errors
from numba.extending import overload

from ..errors import TransformError
from . import cpu, numba_lowering, numba_parallel, numba_promotion
from .cpu_devices import _value_dtype, sender_of, zeros_if_no_pairs
from .device_code import COLLECTIVES, device_only_collectives, lower_collectives

cpu.load_numba()    # every overload generated cpu code calls (nl.*, rt.*, lax.*, random.*), before any shard compiles

NAME = "pmap-mpi"
PREAMBLE = cpu.PREAMBLE + "from transformer.backends import mpi as mpi_dev\n"
_MAX_NDIM = 8


class CollectiveMismatch(ValueError):
    """Ranks reached a collective with different operations or shapes (raised on every rank)."""


def source(core):
    core = numba_lowering.lower_tapes(numba_lowering.lower(lower_collectives(core, "mpi_dev")))
    core, parallel_import = numba_parallel.lower(core)       # vmap's per-example loops (a Jacobian's rows)
    return core.code(), PREAMBLE + parallel_import


def finish(function, path):
    dispatcher = numba.njit(function, pipeline_class=numba_promotion.COMPILER)   # no disk cache: numba-mpi's ctypes pointers forbid it

    @functools.wraps(function)
    def compiled(*args):
        try:
            return dispatcher(*args)
        except (numba_errors.TypingError, numba_errors.LoweringError, numba_errors.UnsupportedError) as err:
            raise cpu._user_error(err, str(path)) from None

    compiled.dispatcher = dispatcher
    return compiled


# ------------------------------------------------------------------ host side
def _comm():
    from mpi4py import MPI
    return MPI.COMM_WORLD


def world_size() -> int:
    return _comm().Get_size()


def run(shard_fn, args: tuple):
    """This rank's shard; errors as the module docstring says."""
    comm = _comm()
    mine = [(np.shape(leaf), np.result_type(leaf).str) for leaf in tree_leaves(args)]
    everyone = comm.allgather(mine)
    if any(other != mine for other in everyone):
        listed = "; ".join(f"rank {r}: {[f'{s}{d}' for s, d in shapes]}" for r, shapes in enumerate(everyone))
        raise ValueError(f"pmap on MPI needs the same argument shapes and dtypes on every rank; got {listed}")
    try:
        return shard_fn(*args)
    except (CollectiveMismatch, TransformError):
        raise
    except BaseException:
        traceback.print_exc()
        sys.stderr.write(f"pmap: rank {comm.Get_rank()} failed alone; aborting every rank of the job\n")
        sys.stderr.flush()
        # mpiexec forwards our stderr asynchronously and stops forwarding when the job is
        # aborted: give it a moment, or the error's last lines can be lost under load
        time.sleep(0.5)
        comm.Abort(1)
        os._exit(1)        # MPI_Abort may return before mpiexec ends this process


def tree_leaves(args):
    from .. import tree
    return [leaf for arg in args for leaf in tree.leaves(arg)]


# ------------------------------------------------------------------ compiled side
# Each collective's code in the ranks' agreement check (0: none): the registry's order.
_OPS = {prim.name: code for code, prim in enumerate(COLLECTIVES, start=1)}


@numba.njit
def _agree(op, src):
    """Every rank reached the same collective with the same shape, or all raise."""
    mine = np.zeros(2 * (_MAX_NDIM + 2), np.int64)
    half = _MAX_NDIM + 2
    mine[0] = op
    mine[1] = src.ndim
    for k in range(src.ndim):
        mine[2 + k] = src.shape[k]
    for k in range(half):
        mine[half + k] = -mine[k]
    extremes = np.empty_like(mine)
    if numba_mpi.allreduce(mine, extremes, numba_mpi.Operator.MAX) != 0:
        raise RuntimeError("MPI allreduce failed")
    for k in range(half):
        if extremes[k] != -extremes[half + k]:
            raise CollectiveMismatch("pmap ranks reached a collective with different operations or shapes")


# Generated device code calls these (mpi_dev.psum, ...); only their numba overloads ever run.
_STAND_INS = device_only_collectives()
globals().update(_STAND_INS)


# A reducing collective's NumPy reduction -> MPI's operator for it.
_OPERATOR = {np.add: numba_mpi.Operator.SUM, np.maximum: numba_mpi.Operator.MAX,
             np.minimum: numba_mpi.Operator.MIN}


def _reduction(prim):
    """An overload for a collective that reduces: its result has the value's shape."""
    op, operator = _OPS[prim.name], _OPERATOR[prim.collective.reduction]
    divide = prim.collective.mean       # the sum divided by the number of ranks; the mean of ints is a float

    def typer(x):
        if isinstance(x, types.Array):
            if divide:
                def impl(x):
                    return _reduce(op, np.ascontiguousarray(x).astype(np.float64), operator) / numba_mpi.size()
            else:
                def impl(x):
                    return _reduce(op, np.ascontiguousarray(x), operator)
        else:
            _value_dtype(x)
            if divide:
                def impl(x):
                    return _reduce(op, np.array([float(x)]), operator)[0] / numba_mpi.size()
            else:
                def impl(x):
                    return _reduce(op, np.array([x]), operator)[0]
        return impl
    return typer


@numba.njit
def _reduce(op, src, operator):
    _agree(op, src)
    out = np.empty_like(src)
    if numba_mpi.allreduce(src, out, operator) != 0:
        raise RuntimeError("MPI allreduce failed")
    return out


def _gather(prim):
    """An overload for a collective that stacks every rank's value."""
    op = _OPS[prim.name]

    def typer(x):
        _value_dtype(x)
        if isinstance(x, types.Array):
            def impl(x):
                src = np.ascontiguousarray(x)
                _agree(op, src)
                out = np.empty((numba_mpi.size(),) + src.shape, src.dtype)
                if numba_mpi.allgather(src, out, src.size) != 0:
                    raise RuntimeError("MPI allgather failed")
                return out
        else:
            def impl(x):
                src = np.array([x])
                _agree(op, src)
                out = np.empty(numba_mpi.size(), src.dtype)
                if numba_mpi.allgather(src, out, 1) != 0:
                    raise RuntimeError("MPI allgather failed")
                return out
        return impl
    return typer


def _index(prim):
    """An overload for a collective that answers the rank."""
    def typer():
        def impl():
            return numba_mpi.rank()
        return impl
    return typer


@numba.njit
def receiver_of(perm, inverse, me):
    """The rank ``perm`` sends rank ``me``'s value to (-1: none)."""
    for k in range(len(perm)):
        source, destination = (perm[k][1], perm[k][0]) if inverse else (perm[k][0], perm[k][1])
        if source == me:
            return destination
    return -1


@numba.njit
def _send_along(op, src, perm, inverse):
    """Point to point: send to this rank's receiver (non-blocking, so a ring cannot deadlock),
    receive from its sender; ranks no pair sends to get zeros."""
    _agree(op, src)
    me = numba_mpi.rank()
    sender = sender_of(perm, inverse, me, numba_mpi.size())      # checks perm on every rank alike
    receiver = receiver_of(perm, inverse, me)
    out = np.zeros_like(src)
    if receiver == me:
        out[...] = src
        return out
    if receiver >= 0:
        status, request = numba_mpi.isend(src, receiver, 0)
        if status != 0:
            raise RuntimeError("MPI isend failed")
    if sender >= 0 and numba_mpi.recv(out, sender, 0) != 0:
        raise RuntimeError("MPI recv failed")
    if receiver >= 0 and numba_mpi.wait(request) != 0:
        raise RuntimeError("MPI wait failed")
    return out


def _permute(prim):
    """An overload for a collective that sends values along ``perm``."""
    op = _OPS[prim.name]

    def typer(x, perm, inverse):
        _value_dtype(x)
        nothing_sent = zeros_if_no_pairs(x, perm)
        if nothing_sent is not None:
            return nothing_sent
        if isinstance(x, types.Array):
            def impl(x, perm, inverse):
                return _send_along(op, np.ascontiguousarray(x), perm, inverse)
        else:
            def impl(x, perm, inverse):
                return _send_along(op, np.array([x]), perm, inverse)[0]
        return impl
    return typer


# What each collective does -> its overload; the registry says what each one does.
_OVERLOADS = {"reduce": _reduction, "gather": _gather, "index": _index, "permute": _permute}
for _prim in COLLECTIVES:
    overload(_STAND_INS[_prim.name])(_OVERLOADS[_prim.collective.does](_prim))
