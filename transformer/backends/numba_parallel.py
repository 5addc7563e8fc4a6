"""Parallel loops for numba: ``rt.parallel_range`` becomes ``prange``.

vmap writes its per-example loops (``dot`` with both operands batched,
linear algebra, per-example indices) as ``for example in
rt.parallel_range(...)``: no pass reads what another pass writes.  The core
form keeps that as a marker every transform reads like ``range``; only here,
for the CPU backend, does it become numba's ``prange``::

    for example in rt.parallel_range(1, batch_size):   ->   for example in prange(1, batch_size):

A function gets ``njit(parallel=True)`` only when it has such a loop
(``is_parallel``): numba's parallel pipeline also rewrites the rest of the
function's array code and costs compile time, which pays only there.

That rewrite is also why it is switched off for now (``ENABLED``): numba's
parallel pipeline refuses NumPy broadcasting of a size-1 axis in the rest of
the function (``x + b[:, None]`` fails with "Sizes of ... do not match"),
and vmap's code broadcasts unbatched operands exactly that way.  The loops
stay ``range`` until each parallel loop is compiled as a function of its own.
"""
from __future__ import annotations

import libcst as cst

from .. import core_form as cf

PRANGE = "prange"
PREAMBLE = f"from numba import {PRANGE}\n"


class _Prange(cst.CSTTransformer):
    def __init__(self):
        self.found = False

    def leave_For(self, original, updated):
        if not cst.Module([]).code_for_node(updated.iter.func) == "rt.parallel_range":
            return updated
        self.found = True
        return updated.with_changes(iter=updated.iter.with_changes(func=cst.Name(PRANGE)))


ENABLED = False


class _Range(cst.CSTTransformer):
    def leave_For(self, original, updated):
        if cst.Module([]).code_for_node(updated.iter.func) == "rt.parallel_range":
            return updated.with_changes(iter=updated.iter.with_changes(func=cst.Name("range")))
        return updated


def lower(core: cf.CoreFunction) -> tuple[cf.CoreFunction, str]:
    """A copy of ``core`` with ``prange`` loops, and the import they need ("" if none)."""
    if not ENABLED:
        node = core.node.visit(_Range())
        return cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants), ""
    rewriter = _Prange()
    node = core.node.visit(rewriter)
    lowered = cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants)
    return lowered, PREAMBLE if rewriter.found else ""


def is_parallel(function) -> bool:
    """Whether a generated function has a ``prange`` loop (its code names the global)."""
    return PRANGE in function.__code__.co_names
