"""Shared by the device backends: collectives become calls to the backend's module.

The ``pmap_shard`` step leaves ``z = lax.psum(x, "i")`` in a device's code
(after checking the axis name).  The CPU and MPI backends rewrite it to
``z = dev.psum(x)`` (``dev.ppermute(x, perm, inverse)`` for a ppermute), where
``dev`` is the backend's own module of numba overloads: the local-thread
backend meets the other devices' threads, the MPI backend calls MPI.  The axis
name has done its job by then: a device belongs to exactly one pmapped axis.
(The CUDA backend's driver is plain Python and calls its module's functions
with the core form's arguments as they are.)
"""
from __future__ import annotations

import inspect

import libcst as cst

from .. import core_form as cf
from .. import primitives
from ..core_form import CoreFunction
from ..transforms.pmap import AXIS_NAME, collective_call

# The registry's collectives, in registry order (the CPU backend numbers its opcodes by it).
COLLECTIVES = tuple(prim for prim in primitives.REGISTRY.values() if prim.collective)


def device_operands(prim) -> tuple[str, ...]:
    """What a device's call of collective ``prim`` takes: the primitive's parameters and keywords
    less the axis name (the device belongs to exactly one axis), in that order."""
    return tuple(name for name in prim.params + prim.keywords if name != AXIS_NAME)


def keyword_default(prim, keyword: str):
    """The value ``prim``'s keyword takes where a call leaves it out (its ``impl`` says)."""
    default = inspect.signature(prim.impl).parameters[keyword].default
    if default is inspect.Parameter.empty:
        raise ValueError(f"lax.{prim.name} has no default for {keyword!r}")
    return default


class _Lower(cst.CSTTransformer):
    def __init__(self, module_alias: str):
        self.module_alias = module_alias

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        found = collective_call(updated)
        if not found:
            return updated
        prim, call = found
        bound = cf.arguments(call, prim)
        operands = [bound[name] if name in bound else cf.literal(keyword_default(prim, name))
                    for name in device_operands(prim)]
        return cf.call(f"{self.module_alias}.{prim.name}", operands)


def lower_collectives(core: CoreFunction, module_alias: str) -> CoreFunction:
    """``lax.<collective>(..., axis_name, ...)`` -> ``<module_alias>.<collective>(...)``."""
    core.node = core.node.visit(_Lower(module_alias))
    return core


def device_only_collectives() -> dict:
    """Collective name -> a Python stand-in, for a backend to bind as a module global of that name
    (generated device code calls ``dev.psum(x)``) and give numba overloads.

    Each backend needs its own function objects (an overload is keyed by the
    function); calling one outside compiled device code is an error.
    """
    def stand_in(name):
        def collective(*args):
            raise NotImplementedError(f"{name} runs only inside compiled device code")
        collective.__name__ = collective.__qualname__ = name
        return collective
    return {prim.name: stand_in(prim.name) for prim in COLLECTIVES}


def sender_of(perm, inverse, me, size):
    """The device that ppermute's ``perm`` sends to device ``me`` (-1: none), checking ``perm`` first.

    ``perm`` holds (source, destination) pairs, (destination, source) if ``inverse``.  Plain
    Python that numba also compiles (the CPU backends call it from device code).
    """
    sender = -1
    for k in range(len(perm)):
        source, destination = (perm[k][1], perm[k][0]) if inverse else (perm[k][0], perm[k][1])
        if not (0 <= source < size and 0 <= destination < size):
            raise ValueError("lax.ppermute: perm names a device outside the pmapped axis")
        for j in range(k):
            if perm[j][0] == perm[k][0] or perm[j][1] == perm[k][1]:
                raise ValueError("lax.ppermute: perm names a device twice as a source or as a destination")
        if destination == me:
            sender = source
    return sender
