"""pmap's two source steps.

``pmap`` — the whole mapped function seen from outside, as one function of
the stacked arrays.  JAX defines ``pmap(f)`` to compute what ``vmap(f)``
computes (same axis_name, in_axes and out_axes); only where it runs differs.
So when another transform is applied on top of a pmapped function
(``vmap(pmap(f))``, ``jvp(pmap(f))``, ``grad`` of a function that pmaps),
this step writes the vmapped code and the composition is exact, run on one
device.  vmap has no rule for ``lax.ppermute``, so this step first writes each
one as a gather of every device's value and a pick by the static ``perm``.
A pmapped function called directly never uses this step.

``pmap_shard`` — the code one device runs on its own shard: the user's
function unchanged, with its collectives over ``axis_name`` left in place for
the device backend (``backends/cpu_devices.py``, ``backends/mpi.py``) to turn
into calls that talk to the other devices.  The step only checks that every
collective names the pmapped axis (any other name is unbound, as in JAX) and
that each ``lax.ppermute``'s ``perm`` is a permutation known when the code is
written (a literal or a module constant).
"""
from __future__ import annotations

import ast

import libcst as cst

from .. import core_form as cf
from .. import primitives
from ..core_form import CoreFunction
from ..errors import Location, TransformError
from . import TRANSFORMS, register



@register("pmap")
def pmap_transform(core: CoreFunction, axis_name=None, in_axes=(), out_axes=0) -> CoreFunction:
    core.node = core.node.with_changes(body=cf.block(ppermutes_as_gathers(core, list(core.node.body.body),
                                                                          axis_name)))
    return TRANSFORMS["vmap"](core, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name, axis_size=None)


@register("pmap_shard", internal=True)
def pmap_shard_transform(core: CoreFunction, axis_name=None) -> CoreFunction:
    _check_axis_names(core, axis_name)
    return core


# The parameter by which every collective names its axis.
AXIS_NAME = "axis_name"


def collective_call(value) -> tuple[primitives.Primitive, cst.Call] | None:
    """(collective primitive, call) if ``value`` is ``lax.<collective>(...)``."""
    prim = cf.primitive_of(value) if isinstance(value, cst.Call) else None
    if prim is not None and prim.collective:
        return prim, value
    return None


def _permutes(prim) -> bool:
    """Whether collective ``prim`` sends values along its ``perm`` operand (lax.ppermute)."""
    return prim.collective.does == "permute"


def axis_of(call: cst.Call) -> str | None:
    """The axis name a collective call spells, if a string literal."""
    atom = cf.arguments(call).get(AXIS_NAME)
    return atom.evaluated_value if isinstance(atom, cst.SimpleString) else None


def collectives(core, stmts, origin=None):
    """(primitive, call, location) of every collective call in ``stmts``, nested blocks included."""
    for stmt in stmts:
        origin = cf.origin_of(stmt) or origin
        if isinstance(stmt, cst.SimpleStatementLine):
            small = stmt.body[0]
            found = collective_call(small.value) if isinstance(small, (cst.Assign, cst.Return)) else None
            if found:
                where = Location(core.sources.get(origin[0], origin[0]), origin[1]) if origin else None
                yield found[0], found[1], where
        else:
            for block in cf.blocks(stmt):
                yield from collectives(core, block, origin)


def _check_axis_names(core, axis_name):
    for prim, call, where in collectives(core, core.node.body.body):
        if _permutes(prim):
            _check_permutation(core, cf.arguments(call).get("perm"), where)
        if axis_of(call) != axis_name:
            named = axis_of(call)
            raise TransformError(f"unbound axis name: {named!r} (lax.{prim.name} inside pmap "
                                 f"with axis_name={axis_name!r})", where,
                                 f"pass axis_name={named!r} to pmap, or name the pmapped axis here")


def permutation_of(core, atom):
    """The (source, destination) pairs a ppermute's ``perm`` atom spells: a literal or a module constant."""
    if isinstance(atom, cst.Name) and atom.value in core.constants:
        return core.constants[atom.value]
    try:
        return ast.literal_eval(cst.Module([]).code_for_node(atom))
    except (ValueError, SyntaxError, TypeError):
        return None


def _check_permutation(core, atom, where):
    """perm must be known when the code is written, and a permutation: JAX checks it as early."""
    perm = permutation_of(core, atom)
    hint = "write perm as a tuple of (source, destination) pairs, e.g. ((0, 1), (1, 0)), or a module constant"
    if not isinstance(perm, (tuple, list)) or \
            not all(isinstance(p, (tuple, list)) and len(p) == 2 and all(type(i) is int and i >= 0 for i in p)
                    for p in perm):
        raise TransformError("lax.ppermute needs perm as (source, destination) pairs of device numbers "
                             "known when the code is written", where, hint)
    for k in (0, 1):
        named = [p[k] for p in perm]
        if len(set(named)) != len(named):
            raise TransformError(f"lax.ppermute perm names a device twice as a {('source', 'destination')[k]}: "
                                 f"{tuple(map(tuple, perm))}", where, "each device sends at most once and "
                                 "receives at most once")


def ppermutes_as_gathers(core, stmts, axis_name, origin=None) -> list:
    """Each ``z = lax.ppermute(x, axis_name, perm)`` written with collectives vmap knows:

        _g = lax.all_gather(x, "i")            # every device's x
        _me = lax.axis_index("i")
        _from = -1                             # the device that sends to this one, per pair
        _hit = _me == 1
        _from = np.where(_hit, 0, _from)
        _sent = _from >= 0
        _from = np.maximum(_from, 0)
        _t = _g[_from]
        z = _t * _sent                         # zeros where nobody sends

    Exact, and differentiable by the rules of those primitives; on one machine a
    gather costs nothing a permutation would not.
    """
    out = []
    for stmt in stmts:
        origin = cf.origin_of(stmt) or origin
        if not isinstance(stmt, cst.SimpleStatementLine):
            out.append(cf.map_blocks(stmt, lambda block: ppermutes_as_gathers(core, block, axis_name, origin)))
            continue
        small = stmt.body[0]
        found = collective_call(small.value) if isinstance(small, cst.Assign) else None
        if not found or not _permutes(found[0]) or axis_of(found[1]) != axis_name:
            out.append(stmt)
            continue
        where = Location(core.sources.get(origin[0], origin[0]), origin[1]) if origin else None
        arguments = cf.arguments(found[1])
        perm = permutation_of(core, arguments.get("perm"))
        inverse = arguments.get("inverse", cst.Name("False"))
        if perm is None or not (isinstance(inverse, cst.Name) and inverse.value in ("True", "False")):
            raise TransformError("a transform of a pmapped function runs it as vmap, which needs lax.ppermute's "
                                 "perm written as a literal or a module constant", where,
                                 "apply the transform inside pmap instead: pmap(grad(f))")
        _check_permutation(core, arguments.get("perm"), where)
        pairs = [(d, s) for s, d in perm] if inverse.value == "True" else list(perm)
        out += _gather_form(core, small.targets[0].target, arguments["x"], axis_name, pairs, stmt)
    return out


def _gather_form(core, target, x, axis_name, pairs, stmt) -> list:
    temp = core.scope.temp
    gathered, me, sender, hit, sent, picked = (temp() for _ in range(6))
    axis = cf.literal(axis_name)
    lines = [cf.assign(gathered, cf.call("lax.all_gather", [x, axis])),
             cf.assign(me, cf.call("lax.axis_index", [axis])),
             cf.assign(sender, cf.literal(-1))]
    for source, destination in pairs:
        lines += [cf.assign(hit, cst.Comparison(cst.Name(me), [cst.ComparisonTarget(cst.Equal(),
                                                                                    cf.literal(destination))])),
                  cf.assign(sender, cf.call("np.where", [cst.Name(hit), cf.literal(source), cst.Name(sender)]))]
    lines += [cf.assign(sent, cst.Comparison(cst.Name(sender), [cst.ComparisonTarget(cst.GreaterThanEqual(),
                                                                                     cf.literal(0))])),
              cf.assign(sender, cf.call("np.maximum", [cst.Name(sender), cf.literal(0)])),
              cf.assign(picked, cst.Subscript(cst.Name(gathered), [cst.SubscriptElement(cst.Index(cst.Name(sender)))])),
              cf.assign(target, cst.BinaryOperation(cst.Name(picked), cst.Multiply(), cst.Name(sent)))]
    comments = [line.comment.value for line in stmt.leading_lines if line.comment]
    for comment in comments + ["# lax.ppermute as a gather: vmap runs the devices' code side by side"]:
        lines[0] = cf.with_comment(lines[0], comment)
    return lines
