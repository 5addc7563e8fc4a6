"""Shared by the device backends: collectives become calls to the backend's module.

The ``pmap_shard`` step leaves ``z = lax.psum(x, "i")`` in a device's code
(after checking the axis name).  A device backend rewrites it to
``z = dev.psum(x)``, where ``dev`` is the backend's own module of numba
overloads: the local-thread backend meets the other devices' threads, the MPI
backend calls MPI.  The axis name has done its job by then: a device belongs
to exactly one pmapped axis.
"""
from __future__ import annotations

import libcst as cst

from ..core_form import CoreFunction
from ..transforms.pmap import collective_call


class _Lower(cst.CSTTransformer):
    def __init__(self, module_alias: str):
        self.module_alias = module_alias

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        found = collective_call(updated)
        if not found:
            return updated
        name, call = found
        args = list(call.args[:-1])
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return cst.Call(func=cst.Attribute(cst.Name(self.module_alias), cst.Name(name)), args=args)


def lower_collectives(core: CoreFunction, module_alias: str) -> CoreFunction:
    """``lax.<collective>(..., axis_name)`` -> ``<module_alias>.<collective>(...)``."""
    core.node = core.node.visit(_Lower(module_alias))
    return core


COLLECTIVES = ("psum", "pmean", "pmax", "pmin", "all_gather", "axis_index")


def device_only_collectives() -> tuple:
    """One Python stand-in per collective, for a backend to give numba overloads.

    Each backend needs its own function objects (an overload is keyed by the
    function); calling one outside compiled device code is an error.
    """
    def stand_in(name):
        def collective(*args):
            raise NotImplementedError(f"{name} runs only inside compiled device code")
        collective.__name__ = collective.__qualname__ = name
        return collective
    return tuple(stand_in(name) for name in COLLECTIVES)
