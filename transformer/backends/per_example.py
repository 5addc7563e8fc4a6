"""vmap as a loop over examples running the un-batched code: which functions qualify.

``vmap`` as a source transform writes array code with a batch axis: the right
thing for straight-line array code, where every operation becomes one
vectorised pass over the batch.  Per-example *scalar* code with loops —
a data-dependent ``while``, a loop with a per-example trip count — is
different: batched, every step runs for the whole batch under a mask until
the slowest example is done.  Such code runs best as it was written, once
per example.  When ``vmap`` is the outermost step of a chain, a compiling
backend may take it over (``take_last_step``): CUDA runs one thread per
example (``cuda_vmap.py``), the CPU a compiled loop over the examples
(``cpu_vmap.py``).  This module decides which functions qualify and keeps
their un-batched core form, and spells a primitive on scalars (``scalar_form``,
from the ``"scalar"`` table of templates/scalar_forms.py) for this code and for
CUDA's fused kernels.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import libcst as cst

from .. import core_form as cf
from .. import primitives, rules, source
from ..core_form import CoreFunction

# kinds that mean on scalars what they mean on arrays: the "scalar" table has rules for the others
_SCALAR_KINDS = (primitives.UNARY, primitives.BINARY, primitives.COMPARE)


@dataclass
class PerExampleVmap(CoreFunction):
    """The un-batched core form of a vmapped function, to be run once per example."""

    in_axes: tuple = ()


def take_vmap(core: CoreFunction, options: dict) -> PerExampleVmap | None:
    """The per-example form of ``vmap(core)``, or None when the ordinary vmap should run."""
    in_axes = tuple(options.get("in_axes", ()))
    out_axes = options.get("out_axes", 0)
    if options.get("axis_name") is not None or options.get("axis_size") is not None:
        return None
    if any(a not in (None, 0) and not isinstance(a, int) for a in in_axes) or len(in_axes) != len(core.params):
        return None
    if not all(a == 0 for a in (out_axes if isinstance(out_axes, tuple) else (out_axes,))):
        return None
    if not _is_scalar_code(core.node.body.body) or return_arity(core.node.body.body) is None:
        return None
    return PerExampleVmap(core.node, core.scope, core.sources, core.constants, core.functions, in_axes=in_axes)


def _is_scalar_code(stmts) -> bool:
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            small = stmt.body[0]
            if isinstance(small, cst.Assign):
                if isinstance(small.targets[0].target, cst.Subscript):
                    return False               # an in-place write: per-example arrays are read-only here
                if not cf.is_atom(small.value):
                    prim = cf.primitive_of(small.value)
                    if prim is None or not (has_scalar_form(prim) or prim.tape):
                        return False
        else:
            for block in cf.blocks(stmt):
                if not _is_scalar_code(block):
                    return False
    return True


def has_scalar_form(prim) -> bool:
    """Whether one example's code may call ``prim``: an elementwise kind, or a rule of the "scalar"
    table that does not refuse it (``form=None``)."""
    rule = rules.options("scalar", prim.name)
    if rule is None:
        return prim.kind in _SCALAR_KINDS
    return rule.get("form", "template") is not None


def scalar_form(prim, operands) -> cst.BaseExpression | None:
    """``prim`` called with ``operands`` (atoms, by position), as code on scalars spells it: the
    expression its "scalar" rule's template returns, with the operands for its parameters (None:
    as the core form spells it)."""
    template = rules.table("scalar").get(prim.name)
    if template is None or isinstance(template, rules.Machinery):
        return None
    params, returned = _returned_expression(template)
    if len(operands) < len(params):
        raise TypeError(f"{prim.spelling} on scalars takes {len(params)} operands, not {len(operands)}")
    return returned.visit(_Operands(dict(zip(params, operands))))


@functools.cache
def _returned_expression(template) -> tuple[list[str], cst.BaseExpression]:
    """A scalar form's parameter names and the expression its one ``return`` gives."""
    node = source.load(template).node
    (stmt,) = node.body.body
    return [p.name.value for p in node.params.params], stmt.body[0].value


class _Operands(cst.CSTTransformer):
    """A template's parameters replaced by the call's operands (an attribute's name and a keyword
    are no parameter)."""

    def __init__(self, operands: dict):
        self.operands = operands

    def leave_Name(self, original, updated):
        return self.operands.get(updated.value, updated)

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)


def _returns(stmts):
    for stmt in cf.walk(stmts):
        if isinstance(stmt.body[0], cst.Return):
            yield stmt.body[0]


def return_arity(stmts) -> int | None:
    arities = {len(r.value.elements) if isinstance(r.value, cst.Tuple) else 1 for r in _returns(stmts)
               if r.value is not None}
    return arities.pop() if len(arities) == 1 else None


def has_loop(stmts) -> bool:
    """Whether the code loops: where batched code would step every example under a mask."""
    return any(isinstance(stmt, (cst.For, cst.While)) or
               (not isinstance(stmt, cst.SimpleStatementLine) and any(has_loop(b) for b in cf.blocks(stmt)))
               for stmt in stmts)


def loop_wins_on_cpu(core, options: dict) -> bool:
    """Loops in per-example scalar code, batch axes first, results stacked first: on the CPU, a
    compiled loop over the examples beats the batched code (``cpu_vmap.py``)."""
    in_axes = tuple(options.get("in_axes", ()))
    return all(axis in (None, 0) for axis in in_axes) and has_loop(core.node.body.body)
