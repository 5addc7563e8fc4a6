"""pmap's two source steps.

``pmap`` — the whole mapped function seen from outside, as one function of
the stacked arrays.  JAX defines ``pmap(f)`` to compute what ``vmap(f)``
computes (same axis_name, in_axes and out_axes); only where it runs differs.
So when another transform is applied on top of a pmapped function
(``vmap(pmap(f))``, ``jvp(pmap(f))``, ``grad`` of a function that pmaps),
this step writes the vmapped code and the composition is exact, run on one
device.  A pmapped function called directly never uses this step.

``pmap_shard`` — the code one device runs on its own shard: the user's
function unchanged, with its collectives over ``axis_name`` left in place for
the device backend (``backends/cpu_devices.py``, ``backends/mpi.py``) to turn
into calls that talk to the other devices.  The step only checks that every
collective names the pmapped axis: any other name is unbound, as in JAX.
"""
from __future__ import annotations

import libcst as cst

from .. import core_form as cf
from ..core_form import CoreFunction
from ..errors import Location, TransformError
from . import TRANSFORMS, register

COLLECTIVES = ("psum", "pmean", "pmax", "pmin", "all_gather", "axis_index")


@register("pmap")
def pmap_transform(core: CoreFunction, axis_name=None, in_axes=(), out_axes=0) -> CoreFunction:
    from .. import batching  # noqa: F401  (registers the "vmap" step)
    return TRANSFORMS["vmap"](core, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name, axis_size=None)


@register("pmap_shard", internal=True)
def pmap_shard_transform(core: CoreFunction, axis_name=None) -> CoreFunction:
    _check_axis_names(core, core.node.body.body, axis_name)
    return core


def collective_call(value) -> tuple[str, cst.Call] | None:
    """(collective name, call) if ``value`` is ``lax.<collective>(...)``."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
            and isinstance(value.func.value, cst.Name) and value.func.value.value == "lax" \
            and value.func.attr.value in COLLECTIVES:
        return value.func.attr.value, value
    return None


def axis_of(call: cst.Call) -> str | None:
    """The axis name a collective call spells (its last argument), if a string literal."""
    atom = call.args[-1].value if call.args else None
    return atom.evaluated_value if isinstance(atom, cst.SimpleString) else None


def _check_axis_names(core, stmts, axis_name, origin=None):
    for stmt in stmts:
        origin = cf.origin_of(stmt) or origin
        if isinstance(stmt, cst.SimpleStatementLine):
            small = stmt.body[0]
            found = collective_call(small.value) if isinstance(small, (cst.Assign, cst.Return)) else None
            if found and axis_of(found[1]) != axis_name:
                where = Location(core.sources.get(origin[0], origin[0]), origin[1]) if origin else None
                named = axis_of(found[1])
                raise TransformError(f"unbound axis name: {named!r} (lax.{found[0]} inside pmap "
                                     f"with axis_name={axis_name!r})", where,
                                     f"pass axis_name={named!r} to pmap, or name the pmapped axis here")
        else:
            for block in _blocks(stmt):
                _check_axis_names(core, block, axis_name, origin)


def _blocks(stmt):
    if isinstance(stmt, (cst.If, cst.For, cst.While)):
        yield stmt.body.body
        if getattr(stmt, "orelse", None) is not None:
            yield stmt.orelse.body.body
