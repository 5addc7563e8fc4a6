"""Local CPU devices, host side: one thread per device, collectives met at a barrier.

Why threads running whole compiled shards, and not the function split into
stages at its collectives (the other design DESIGN.md names): a stage split
must cut loops and branches that contain collectives and drive them from the
host, which is a second compiler for control flow.  Here every device runs
the *whole* shard function, compiled by numba with ``nogil=True``, on its own
thread, so the devices really run at once.  A collective in compiled code is
a call into this module (through a C callback, see ``cpu_devices``): the
callback takes the GIL, deposits the device's value at a barrier, and the last
device to arrive computes the result once (NumPy over a handful of arrays —
cheap next to the stages between collectives); waiting releases the GIL.
Loops and branches with collectives need nothing special.

Faults, so that nothing hangs:
- a device that raises marks the group failed and wakes every waiting device;
  their collectives return an error code and the compiled code raises
  ``DeviceAborted``; the caller re-raises the *first real* error;
- devices arriving at different collectives, or with different shapes, fail
  the group with a ValueError naming both;
- a device that returns while another waits in a collective fails the group
  (the collective could never complete).
"""
from __future__ import annotations

import ctypes
import queue
import threading

import numpy as np

from .. import primitives
from .device_code import COLLECTIVES

# Codes shared with the compiled side (cpu_devices): opcode, dtype code.  The opcodes number the
# registry's collectives in registry order, then one more question device code asks the host:
# "axis_size", the number of devices.
OPS = tuple(prim.name for prim in COLLECTIVES) + ("axis_size",)
OP = {name: code for code, name in enumerate(OPS)}
AXIS_SIZE = OP["axis_size"]
DTYPES = (np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int64), np.dtype(np.int32))
FAILED = -1


class DeviceAborted(RuntimeError):
    """Raised on a device whose collective was cancelled because another device failed."""


class DeviceGroup:
    """The devices of one pmap call and the state of the collective they are in."""

    def __init__(self, size: int):
        self.size = size
        self._cond = threading.Condition()
        self._arrivals: list = [None] * size      # (opname, array, source) per device, this collective
        self._arrived = 0
        self._generation = 0                      # collectives completed so far
        self._result = None
        self._returned: list[int] = []            # devices whose shard function has returned
        self.error: BaseException | None = None   # the first real failure

    # ------------------------------------------------------------ collectives
    def collective(self, index: int, opname: str, value: np.ndarray, source: int = -1) -> np.ndarray:
        """This device's result; ``source`` is the device a ppermute receives from (-1: none)."""
        with self._cond:
            if self.error is not None:
                raise DeviceAborted("another pmap device failed")
            if self._returned:
                self._fail(RuntimeError(f"pmap device {index} reached lax.{opname} after device "
                                        f"{self._returned[0]} had returned: every device must reach the "
                                        f"same collectives in the same order"))
                raise DeviceAborted("collective cannot complete")
            self._arrivals[index] = (opname, value, source)
            self._arrived += 1
            if self._arrived == self.size:
                self._combine()
            else:
                generation = self._generation
                while generation == self._generation and self.error is None:
                    self._cond.wait()
                if self.error is not None:
                    raise DeviceAborted("another pmap device failed")
            return self._result[index] if isinstance(self._result, list) else self._result

    def _combine(self):
        arrivals, self._arrivals = self._arrivals, [None] * self.size
        self._arrived = 0
        try:
            self._result = combine(arrivals)
        except BaseException as exc:
            self._fail(exc)
            raise DeviceAborted("collective failed") from None
        self._generation += 1
        self._cond.notify_all()

    # ------------------------------------------------------------ endings
    def returned(self, index: int):
        with self._cond:
            self._returned.append(index)
            if self._arrived and self.error is None:
                waiting = [i for i, a in enumerate(self._arrivals) if a is not None]
                self._fail(RuntimeError(f"pmap device {index} returned while device(s) {waiting} wait in "
                                        f"lax.{self._arrivals[waiting[0]][0]}: every device must reach the "
                                        f"same collectives in the same order"))

    def failed(self, index: int, exc: BaseException):
        with self._cond:
            if self.error is None:      # a DeviceAborted only ever follows a real error, recorded first
                exc.add_note(f"(raised on pmap device {index})")
                self._fail(exc)

    def _fail(self, exc: BaseException):
        if self.error is None:
            self.error = exc
        self._cond.notify_all()


def combine(arrivals) -> np.ndarray | list:
    """The collective's result from every device's (opname, value, source), in device order:
    one array every device shares, or (ppermute) a list of one array per device."""
    names = {name for name, _, _ in arrivals}
    if len(names) > 1:
        listed = ", ".join(f"device {i}: lax.{name}" for i, (name, _, _) in enumerate(arrivals))
        raise ValueError(f"pmap devices reached different collectives at the same point ({listed})")
    name = names.pop()
    values = [v for _, v, _ in arrivals]
    shapes = {v.shape for v in values}
    if len(shapes) > 1:
        listed = ", ".join(f"device {i} has {v.shape}" for i, v in enumerate(values))
        raise ValueError(f"lax.{name} needs the same shape on every pmap device: {listed}")
    collective = primitives.REGISTRY[name].collective
    if collective.does == "gather":
        return np.stack(values)
    if collective.does == "permute":      # copies: a sender's buffer is its own again once it leaves the barrier
        return [values[source].copy() if source >= 0 else np.zeros_like(values[index])
                for index, (_, _, source) in enumerate(arrivals)]
    if collective.does != "reduce":
        raise ValueError(f"lax.{name} exchanges no values between pmap devices")
    total = values[0].copy()          # fixed order: every device gets the same bits
    for v in values[1:]:
        collective.reduction(total, v, out=total)
    return total / len(values) if collective.mean else total


# ------------------------------------------------------- the C callback
_local = threading.local()      # .device = (group, index) while a thread runs a shard


def current_device() -> tuple[DeviceGroup, int]:
    """(group, device index) of the pmap device this thread runs (host-side collectives ask)."""
    device = getattr(_local, "device", None)
    if device is None:
        raise RuntimeError("a pmap collective was called outside a pmapped function")
    return device


def _callback(op, dtype_code, src, dst, shape_ptr, ndim, source):
    """Called from compiled device code (with the GIL taken by ctypes)."""
    device = getattr(_local, "device", None)
    if device is None:
        return FAILED           # compiled device code called outside pmap: the caller raises
    group, index = device
    if op == AXIS_SIZE:
        return group.size
    prim = COLLECTIVES[op]
    if prim.collective.does == "index":
        return index
    try:
        dtype = DTYPES[dtype_code]
        shape = tuple(np.ctypeslib.as_array((ctypes.c_int64 * ndim).from_address(shape_ptr))) if ndim else ()
        count = int(np.prod(shape))
        value = np.frombuffer((ctypes.c_char * (count * dtype.itemsize)).from_address(src), dtype).reshape(shape)
        result = group.collective(index, prim.name, value, source)
        out = np.frombuffer((ctypes.c_char * (result.size * dtype.itemsize)).from_address(dst), dtype)
        out[:] = result.reshape(-1)
        return 0
    except BaseException as exc:          # a C callback must not raise: report and return the code
        group.failed(index, exc)
        return FAILED


CALLBACK_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                 ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)
CALLBACK = CALLBACK_TYPE(_callback)      # kept alive for the life of the process


# ------------------------------------------------------- running shards
class _Worker:
    """A thread kept for device ``k`` between calls (starting threads per call would dominate
    small steps).  A job is handed over through a queue and its end signalled by releasing a
    lock: the cheapest handshake Python's threading offers, which pmap's dispatch time feels."""

    def __init__(self, k: int):
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._serve, name=f"transformer-pmap-device-{k}", daemon=True).start()

    def _serve(self):
        while True:
            job, argument, done = self.inbox.get()
            try:
                job(argument)
            finally:
                done.release()

    def start(self, job, argument) -> threading.Lock:
        done = threading.Lock()
        done.acquire()
        self.inbox.put((job, argument, done))
        return done


_workers: list[_Worker] = []
_workers_lock = threading.Lock()


def _workers_for(count: int) -> list[_Worker]:
    with _workers_lock:
        while len(_workers) < count:
            _workers.append(_Worker(len(_workers) + 1))
        return _workers[:count]


def run(shard_fn, shard_args: list[tuple]) -> list:
    """``shard_fn(*shard_args[d])`` on device d, all at once; device 0 runs on this thread."""
    if getattr(_local, "device", None) is not None:
        raise NotImplementedError("pmap inside a pmapped function is not supported: pmap the outer axis only "
                                  "and vmap the inner one")
    group = DeviceGroup(len(shard_args))
    results = [None] * len(shard_args)

    def device(index):
        _local.device = (group, index)
        try:
            results[index] = shard_fn(*shard_args[index])
            group.returned(index)
        except BaseException as exc:
            group.failed(index, exc)
        finally:
            _local.device = None

    running = [worker.start(device, index)
               for index, worker in enumerate(_workers_for(len(shard_args) - 1), start=1)]
    device(0)
    for done in running:
        done.acquire()
    if group.error is not None:
        raise group.error
    return results
