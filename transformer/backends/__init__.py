"""Backends, loaded lazily: importing transformer never imports numba.

A backend turns core form into something callable:

* ``source(core) -> (code, preamble)``: the module text for this target
  (the CPU backend lowers calls numba lacks into helpers here);
* ``finish(function, core) -> callable``: compile the imported function.
"""
from __future__ import annotations

import importlib

_MODULES = {
    "python": "transformer.backends.python",
    "cpu": "transformer.backends.cpu",
    "cuda": "transformer.backends.cuda",                # numba.cuda kernels (NUMBA_ENABLE_CUDASIM=1 without a GPU)
    "pmap-cpu": "transformer.backends.cpu_devices",   # pmap's shard code on local CPU devices
    "pmap-mpi": "transformer.backends.mpi",           # pmap's shard code on MPI ranks
    "pmap-cuda": "transformer.backends.cuda_devices",  # pmap's shard code on GPUs, one host thread each
}


def get(target: str):
    try:
        module_name = _MODULES[target]
    except KeyError:
        raise ValueError(f"unknown target {target!r}; choose one of {', '.join(_MODULES)}") from None
    return importlib.import_module(module_name)


def targets() -> tuple[str, ...]:
    return tuple(_MODULES)
