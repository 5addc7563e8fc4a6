"""``pick``: keep one element of a function's tuple result.

``jvp_f`` returns ``(out, out_dot)``; ``pick(index=1)`` of it returns
``out_dot`` alone, a function of ``(x, x_dot)`` that reverse mode can
differentiate.  That is how "grad of a jvp-based function" is written here:
``grad(pick(jvp(f), 1))`` is reverse over forward, ``d/dx (grad f(x) . x_dot)``,
a Hessian-vector product.  (Inside a user function, calling ``tr.jvp`` is not
supported: transforms read source, and a transform call is not NumPy code.)
"""
from __future__ import annotations

import libcst as cst

from .. import dataflow
from ..core_form import CoreFunction
from ..errors import TransformError
from . import register


@register("pick", internal=True)
def pick(core: CoreFunction, index: int = 0) -> CoreFunction:
    core.node = core.node.visit(_PickFromReturns(index, core.node.name.value))
    # what only the other elements needed (hvp's gradient, next to its tangent) is dropped
    core.node = dataflow.remove_dead_code(core.node)
    return core


class _PickFromReturns(cst.CSTTransformer):
    def __init__(self, index: int, name: str):
        self.index = index
        self.name = name

    def leave_Return(self, original, updated):
        value = updated.value
        if not isinstance(value, cst.Tuple) or not -len(value.elements) <= self.index < len(value.elements):
            raise TransformError(f"pick({self.index}) needs {self.name}() to return a tuple with that element")
        return updated.with_changes(value=value.elements[self.index].value)
