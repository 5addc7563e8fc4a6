"""The ``pmap-cuda`` target: one device per GPU, collectives staged through the host.

A device's shard is compiled exactly as ``jit(f, target="cuda")`` compiles
array code (``cuda_fusion``): fused elementwise kernels plus a host driver,
plain Python that launches them with arrays kept on the GPU.  Each device
runs its driver on its own host thread (``cpu_threads.run``: the same thread
pool, barrier and fault handling as local CPU devices) with its GPU made
current for that thread, so N GPUs run their kernels at once.

A collective in the driver is a call of this module (``cdev.psum(x, "i")``):
the value comes back to the host, the devices meet at the ``DeviceGroup``
barrier, which combines their values once in NumPy, and each device copies
its result back to its GPU.  Staging through the host costs two copies per
collective; peer-to-peer copies (NCCL or ``cudaMemcpyPeer``) are not used yet.
"""
from __future__ import annotations

import contextlib
import inspect
import threading

import libcst as cst
import numpy as np
from numba import cuda
from numba.core import config

from . import cpu_threads, cuda as cuda_target
from .cuda_fusion import _Driver
from .cuda_runtime import device as to_device, is_device
from .device_code import COLLECTIVES, device_operands, sender_of

NAME = "pmap-cuda"
PREAMBLE = cuda_target.PREAMBLE + "from transformer.backends import cuda_devices as cdev\n"


class _ShardDriver(_Driver):
    """The CUDA host driver, with each collective left as a host call of this module."""

    def lower(self, prim, value):
        if prim.collective:
            return value.with_changes(func=cst.parse_expression(f"cdev.{prim.name}"))
        return super().lower(prim, value)


def source(core):
    return _ShardDriver(core).write(), PREAMBLE


finish = cuda_target.finish


# ------------------------------------------------------------------ host side
def gpu_count() -> int:
    """GPUs numba sees (the simulator shows one)."""
    if not cuda.is_available():
        raise RuntimeError("no CUDA GPU is available for pmap(backend='cuda'); run with NUMBA_ENABLE_CUDASIM=1 "
                           "for numba's simulator, or use backend='cpu'")
    return len(cuda.gpus)


class _Simulator:
    """numba's CUDA simulator runs one kernel at a time per process: under it, a device holds
    this lock while it runs and lets go of it while it waits in a collective.  Real GPUs
    run every device at once (``enabled`` is False)."""

    enabled = bool(config.ENABLE_CUDASIM)
    lock = threading.Lock()

    @classmethod
    @contextlib.contextmanager
    def turn(cls, released: bool = False):
        if not cls.enabled:
            yield
        elif released:                # inside a collective: wait for the other devices unlocked
            cls.lock.release()
            try:
                yield
            finally:
                cls.lock.acquire()
        else:
            with cls.lock:
                yield


def run(shard_fn, shard_args: list[tuple], gpu_ids: list[int]) -> list:
    """``shard_fn(*shard_args[d])`` on GPU ``gpu_ids[d]``, one host thread each, all at once."""
    def on_its_gpu(*args):
        _, index = cpu_threads.current_device()
        with _Simulator.turn(), cuda.gpus[gpu_ids[index]]:        # this thread's current CUDA context
            return shard_fn(*args)
    return cpu_threads.run(on_its_gpu, shard_args)


def _meet(prim, x, sender: int = -1):
    """One collective, staged through the host: this device's value down, the result back up."""
    group, index = cpu_threads.current_device()
    on_gpu = is_device(x)
    host = x.copy_to_host() if on_gpu else np.array(x)       # a contiguous copy; 0-d stays 0-d
    with _Simulator.turn(released=True):
        result = group.collective(index, prim.name, host, sender)
    if np.ndim(x) == 0 and not on_gpu and prim.collective.does != "gather":
        return result[()]                      # a host number stays a host number
    return to_device(np.asarray(result)) if np.ndim(result) else result


def _reduce(prim, x):
    if prim.collective.mean and np.issubdtype(x.dtype if is_device(x) else np.result_type(x), np.integer):
        x = np.asarray(x.copy_to_host() if is_device(x) else x, np.float64)      # the mean of ints is a float
    return _meet(prim, x)


def _index(prim):
    return cpu_threads.current_device()[1]


def _permute(prim, x, perm, inverse):
    group, index = cpu_threads.current_device()
    return _meet(prim, x, sender_of(perm, inverse, index, group.size))


# What each collective does -> how a device runs it, given the device's operands (device_code).
_RUNS = {"reduce": _reduce, "gather": _meet, "index": _index, "permute": _permute}


def _host_collective(prim):
    """``cdev.<name>``, which the generated driver calls with the core form's arguments (the axis
    name included): bound as the primitive binds them, run as the registry says it runs."""
    signature, operands, runs = inspect.signature(prim.impl), device_operands(prim), _RUNS[prim.collective.does]

    def collective(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return runs(prim, *(bound.arguments[name] for name in operands))
    collective.__name__ = collective.__qualname__ = prim.name
    return collective


globals().update({prim.name: _host_collective(prim) for prim in COLLECTIVES})
