"""``pmap`` and ``devices``: SPMD over devices (JAX meanings).

``pmap(f, axis_name, in_axes, out_axes, devices, backend)`` runs ``f`` once per
device, each on its slice of the mapped arguments, with ``lax.psum`` & co.
over ``axis_name`` talking between the devices.  The mapped axis size is the
number of devices used.

Backends:
- ``"cpu"`` (default): local CPU devices, as many as ``TRANSFORMER_CPU_DEVICES``
  says (default: the core count).  Each device is a thread running the shard
  function compiled by numba with ``nogil=True`` (``backends/cpu_threads.py``
  says why this rather than splitting at collectives).
- ``"mpi"``: one device per MPI rank (``mpiexec -n K python script.py``).  As in
  JAX's multi-process pmap, every rank passes its *local* shard: mapped
  arguments have a leading axis of 1 (this rank's one device), and so do
  mapped outputs.  Collectives are MPI calls inside the compiled code
  (numba-mpi).
- ``"cuda"``: one device per GPU (``tr.devices("cuda")``).  Each device's shard is
  the CUDA target's code (fused kernels and a host driver), run on its own host
  thread with its GPU current; collectives are staged through the host
  (``backends/cuda_devices.py``).

The generated code: a device runs the ``pmap_shard`` step's output — the
user's function with its collectives lowered by the device backend.  Seen
from outside, ``pmap(f)`` computes what ``vmap(f)`` computes, so a transform
applied *on top* of a pmapped function (``grad(pmap(f))``, ``vmap(pmap(f))``)
composes through the ``pmap`` step, which writes the vmapped code: exact,
run on one device.  ``jit(pmap(f))`` is ``pmap(f)``, which compiles already.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np

from . import tree
from .batching import VmapBoundary, _normalize_in_axes, _normalize_out_axes
from .staging import Step
from .transformed import Transformed

BACKENDS = ("cpu", "mpi", "cuda")


@dataclass(frozen=True)
class Device:
    id: int
    platform: str
    process_index: int = 0

    def __repr__(self) -> str:
        return f"{self.platform.upper()}Device(id={self.id})"


def devices(backend: str | None = None) -> list[Device]:
    """Every device of ``backend`` (default ``"cpu"``); for MPI, one per rank of the job."""
    backend = _backend_name(backend)
    if backend == "cpu":
        return [Device(i, "cpu") for i in range(_cpu_device_count())]
    if backend == "cuda":
        from .backends import cuda_devices
        return [Device(i, "cuda") for i in range(cuda_devices.gpu_count())]
    from .backends import mpi
    return [Device(rank, "mpi", rank) for rank in range(mpi.world_size())]


def device_count(backend: str | None = None) -> int:
    """How many devices ``backend`` has (``len(devices(backend))``), as ``jax.device_count``."""
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """The devices of this process: all of the cpu's and the GPUs; one per MPI rank."""
    return 1 if _backend_name(backend) == "mpi" else device_count(backend)


def device_put(x, device=None):
    """JAX's ``device_put``: transformer's arrays are NumPy arrays in host memory (a CUDA target copies
    them to the GPU itself on each call), so each leaf becomes a NumPy array, where it already is."""
    return tree.map(np.asarray, x) if tree.is_node(x) else np.asarray(x)


def block_until_ready(x):
    """JAX's ``block_until_ready``: transformer's calls return finished results, so ``x`` itself."""
    return x


def _cpu_device_count() -> int:
    text = os.environ.get("TRANSFORMER_CPU_DEVICES")
    if text is None:
        return os.cpu_count() or 1
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"TRANSFORMER_CPU_DEVICES must be a positive integer, got {text!r}")
    return int(text)


def _backend_name(backend) -> str:
    backend = "cpu" if backend is None else backend
    if backend not in BACKENDS:
        raise ValueError(f"unknown pmap backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    return backend


def pmap(fn=None, axis_name=None, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None,
         backend=None):
    """Run ``fn`` in parallel over devices, one slice of the mapped axis each (JAX's ``pmap``).
    ``static_broadcasted_argnums``: arguments every device gets whole, as constants the function is
    specialised on (as ``jit``'s ``static_argnums``; their ``in_axes`` are None)."""
    if fn is None:
        return functools.partial(pmap, axis_name=axis_name, in_axes=in_axes, out_axes=out_axes,
                                 static_broadcasted_argnums=static_broadcasted_argnums, devices=devices,
                                 backend=backend)
    backend = _backend_name(backend)
    if devices is not None:
        devices = list(devices)
        if not devices or any(not isinstance(d, Device) or d.platform != backend for d in devices):
            raise ValueError(f"devices must be a non-empty list of tr.devices({backend!r}) entries, got {devices!r}")
    inner = Transformed.of(fn).stepwise()   # Pmapped rebuilds its chain
    if static_broadcasted_argnums not in ((), None):
        inner, in_axes = _with_static(inner, static_broadcasted_argnums, in_axes)
    return Pmapped(inner, axis_name, in_axes, out_axes, devices, backend)


def _with_static(inner: Transformed, argnums, in_axes):
    """``inner`` specialised on the arguments at ``argnums`` (jit's static_argnums), which no device
    maps over: their in_axes None."""
    argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    n = len(inner.signature.parameters)
    if any(not isinstance(i, int) or not -n <= i < n for i in argnums):
        raise ValueError(f"static_broadcasted_argnums {argnums!r} is out of range for {n} parameters")
    static = tuple(sorted({i % n for i in argnums} | {i % n for i in inner.static_argnums}))
    inner = Transformed(inner.__transformer_fn__, inner.steps, inner.target, static, inner.boundaries, inner.tiered)
    axes = list(in_axes) if isinstance(in_axes, (tuple, list)) else [in_axes] * n
    if len(axes) != n:
        raise ValueError(f"in_axes has {len(axes)} entries for {n} arguments")
    for i in static:
        axes[i] = None
    return inner, tuple(axes)


class PmapBoundary(VmapBoundary):
    """Checks, where arrays enter: mapped sizes agree and fit the devices."""

    def __init__(self, in_axes, device_count, explicit_devices, outer=()):
        super().__init__(in_axes, None, outer)
        self.device_count = device_count
        self.explicit_devices = explicit_devices

    def nested_in(self, outer_axes) -> "PmapBoundary":
        return PmapBoundary(self.in_axes, self.device_count, self.explicit_devices, (outer_axes,) + self.outer)

    def before(self, args):
        sizes = {}
        for position, (arg, axis) in enumerate(zip(args, self.in_axes)):
            if axis is None:
                continue
            for leaf in tree.leaves(arg):
                shape = self._shape_inside(np.shape(leaf), position)
                if not -len(shape) <= axis < len(shape):
                    raise ValueError(f"pmap in_axes={axis} is out of range for argument {position} of rank "
                                     f"{len(shape)} (shape {shape}); unmapped arguments need in_axes=None")
                sizes.setdefault(shape[axis], position)
        if len(sizes) > 1:
            listed = ", ".join(f"argument {p} has {n}" for n, p in sizes.items())
            raise ValueError(f"pmap got different sizes along the mapped axis: {listed}")
        size = next(iter(sizes))
        if self.explicit_devices and size != self.device_count:
            raise ValueError(f"pmap was given {self.device_count} devices but the mapped axis has size {size}: "
                             f"they must be equal")
        if size > self.device_count:
            raise ValueError(f"pmap's mapped axis has size {size} but only {self.device_count} devices exist "
                             f"(map fewer; TRANSFORMER_CPU_DEVICES sets how many CPU devices exist)")
        return args

    def _shape_inside(self, shape, position):
        """A leaf's shape without the axes of vmaps around this pmap (an int axis per argument)."""
        for axes in self.outer:
            axis = axes[position]
            if isinstance(axis, int):
                shape = shape[:axis % len(shape)] + shape[axis % len(shape) + 1:]
        return shape

    def mapped_size(self, args) -> int:
        for position, (arg, axis) in enumerate(zip(args, self.in_axes)):
            if axis is not None:
                return self._shape_inside(np.shape(tree.leaves(arg)[0]), position)[axis]
        raise ValueError("pmap must have at least one non-None value in in_axes")


class Pmapped(Transformed):
    """A pmapped function: runs shards on devices when called; composes as its vmap."""

    def __init__(self, inner: Transformed, axis_name, in_axes, out_axes, devices, backend):
        n_params = len(inner.signature.parameters)
        self.in_axes = tuple(None if i in inner.static_argnums else a
                             for i, a in enumerate(_normalize_in_axes(in_axes, n_params)))
        if all(a is None for a in self.in_axes):
            raise ValueError("pmap must have at least one non-None value in in_axes")
        self.out_axes, out_keys = _normalize_out_axes(out_axes)
        self.axis_name, self.devices, self.backend = axis_name, devices, backend
        self.inner = inner
        whole = Step("pmap", (("axis_name", axis_name), ("in_axes", self.in_axes), ("out_axes", self.out_axes)))
        boundary = PmapBoundary(self.in_axes, self._device_count(), devices is not None)
        boundary.out_keys = out_keys            # a dict out_axes: the output must be a dict of those keys
        super().__init__(inner.__transformer_fn__, inner.steps + (whole,), inner.target, inner.static_argnums,
                         inner.boundaries + (boundary,))
        self.boundary = boundary
        self.shard = Transformed(inner.__transformer_fn__,
                                 inner.steps + (Step("pmap_shard", (("axis_name", axis_name),)),),
                                 f"pmap-{backend}", inner.static_argnums, inner.boundaries)

    def _device_count(self) -> int:
        if self.devices is not None:
            return len(self.devices)
        return 1 if self.backend == "mpi" else len(devices(self.backend))   # MPI: this rank's one device

    def on_target(self, target, static_argnums=(), tiered=None):
        return self        # jit(pmap(f)): pmap compiles its shards already

    def __call__(self, *args, **kwargs):
        if kwargs or len(args) < len(self.signature.parameters):
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        args = self.boundary.before(args)
        size = self.boundary.mapped_size(args)
        shards = list(zip(*(_shards_of(arg, axis, size) for arg, axis in zip(args, self.in_axes))))
        if self.backend == "mpi":
            from .backends import mpi
            results = [mpi.run(self.shard, shards[0])]
        elif self.backend == "cuda":
            from .backends import cuda_devices
            chosen = self.devices or devices("cuda")
            self.shard.compiled(*shards[0])      # build once here, not on every device thread
            results = cuda_devices.run(self.shard, shards, [d.id for d in chosen[:size]])
        else:
            from .backends import cpu_threads
            built = self.shard.compiled(*shards[0])      # build once here, not on every device thread
            if self._plain(args):
                # the generated function itself: a dict or list it returns comes back as a tuple
                return self.shard._rebuilt(built, _stack(cpu_threads.run(built, shards), self.out_axes))
            results = cpu_threads.run(self.shard, shards)
        return _stack(results, self.out_axes)

    def _plain(self, args) -> bool:
        """Arrays and numbers only, nothing for the shard's own boundaries to do: devices may call
        the compiled function directly (a few microseconds less per device and call)."""
        return not self.shard.boundaries and not self.shard.static_argnums and \
            not any(tree.is_node(a) for a in args)

    def source(self, *args) -> str:
        """The code one device runs (before the device backend lowers its collectives)."""
        return self.shard.on_target("python").source(*args)

    def __repr__(self) -> str:
        return f"<pmap(axis_name={self.axis_name!r}) of {self.inner!r} on {self.backend}>"


def _shards_of(arg, axis, size) -> list:
    """One argument's value on each device: itself if unmapped, else its slice along ``axis``."""
    if axis is None:
        return [arg] * size
    if isinstance(arg, np.ndarray) and axis == 0:
        return [arg[d] for d in range(size)]
    return [tree.map(lambda leaf: _slice(leaf, axis, d), arg) for d in range(size)]


def _slice(leaf, axis, index):
    leaf = np.asarray(leaf)     # PmapBoundary has checked the axis exists
    return leaf[index] if axis == 0 else np.ascontiguousarray(np.take(leaf, index, axis=axis))


def _stack(results, out_axes):
    """Per-device results -> one result with the device axis at ``out_axes``."""
    if out_axes == 0 and all(isinstance(r, np.ndarray) for r in results) and \
            len({(r.shape, r.dtype) for r in results}) == 1:
        return np.array(results)            # one array per device: what np.stack does, with less overhead
    leaves_per_device = [tree.flatten(r) for r in results]
    treedef = leaves_per_device[0][1]
    n_leaves = len(leaves_per_device[0][0])
    axes = out_axes if isinstance(out_axes, tuple) and len(out_axes) == n_leaves and n_leaves != 1 \
        else (out_axes,) * n_leaves
    stacked = []
    for k, axis in enumerate(axes):
        values = [leaves[k] for leaves, _ in leaves_per_device]
        stacked.append(values[0] if axis is None else np.stack(values, axis=axis))   # None: replicated
    return tree.unflatten(treedef, stacked)
