"""Tuples of tuples in the core form, made plain for the transforms.

A tuple of tuples is a value like any other in Python: ``h = ((a, b), (c, d))`` and then
``h[0][1]``.  Reverse mode gives a tuple one cotangent per element (transforms/vjp.py), an element
that is itself a tuple has none of its own, so this pass leaves it none to need:

* an inner display gets a name of its own: ``_t1 = (a, b); _t2 = (c, d); h = (_t1, _t2)``;
* a pick ``w = h[0]`` of an element that holds a tuple reads the name holding it: ``w = _t1``,
  where ``h`` is bound once in the function and that element's name too (so the pick can only
  see that one value), as a Hessian's ``((h00, h01), (h10, h11))`` is read.

A pick left as it was (a tuple bound in several places) reaches reverse mode's refusal of a tuple
holding a tuple, which names the line.
"""
from __future__ import annotations

import libcst as cst

from . import core_form as cf
from . import dataflow


def plain(body: list, scope) -> list:
    """``body`` with inner tuple displays named and picks of tuple elements resolved."""
    body = _named_inner_displays(body, scope)
    statements = list(dataflow.walk(body))
    bound = {}
    for a in statements:
        if a.kind == "assign":          # (a tuple is never written into)
            bound[a.target] = bound.get(a.target, 0) + 1
    loops = _loop_targets(body)
    once = {name for name, count in bound.items() if count == 1 and name not in loops}
    displays = {a.target: [el.value for el in a.value.elements] for a in statements
                if a.kind == "assign" and a.target in once and isinstance(a.value, cst.Tuple)}
    tuples = dataflow.tuple_sizes(statements)

    def resolved(value):
        if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name)
                and value.value.value in displays and len(value.slice) == 1
                and isinstance(value.slice[0].slice, cst.Index)):
            return None
        elements = displays[value.value.value]
        k = cf.int_literal(value.slice[0].slice.value)
        if k is None or not -len(elements) <= k < len(elements):
            return None
        element = elements[k]
        if isinstance(element, cst.Name) and element.value in once and element.value in tuples:
            return element
        return None

    def rewrite(stmts: list) -> list:
        out = []
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                a = dataflow.classify(stmt)
                element = resolved(a.value) if a.kind == "assign" else None
                if element is not None:
                    stmt = stmt.with_changes(body=[a.small.with_changes(value=element)])
                out.append(stmt)
            else:
                out.append(_with_blocks(stmt, rewrite))
        return out
    return rewrite(body)


def _named_inner_displays(body: list, scope) -> list:
    def named(display: cst.Tuple, out: list) -> cst.Tuple:
        elements = []
        for el in display.elements:
            value = el.value
            if isinstance(value, cst.Tuple):
                inner = scope.temp()
                out.append(cf.assign(inner, named(value, out)))
                value = cst.Name(inner)
            elements.append(el.with_changes(value=value))
        return display.with_changes(elements=elements)

    def rewrite(stmts: list) -> list:
        out = []
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                a = dataflow.classify(stmt)
                if a.kind == "assign" and isinstance(a.value, cst.Tuple) and \
                        any(isinstance(el.value, cst.Tuple) for el in a.value.elements):
                    hoisted: list = []
                    display = named(a.value, hoisted)
                    if hoisted:         # the user line's comment stays above the first of them
                        hoisted[0] = hoisted[0].with_changes(leading_lines=stmt.leading_lines)
                        stmt = stmt.with_changes(leading_lines=[])
                    out += hoisted
                    stmt = stmt.with_changes(body=[a.small.with_changes(value=display)])
                out.append(stmt)
            else:
                out.append(_with_blocks(stmt, rewrite))
        return out
    return rewrite(body)


def _loop_targets(body: list) -> set:
    found = set()
    for stmt in body:
        if isinstance(stmt, cst.For):
            found |= set(dataflow.atom_names(stmt.target))
        for block in cf.blocks(stmt):
            found |= _loop_targets(block)
    return found


def _with_blocks(stmt, rewrite):
    """``stmt`` with ``rewrite`` applied to each statement list in it (an elif is a nested if)."""
    if isinstance(stmt, cst.If):
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):
            orelse = _with_blocks(orelse, rewrite)
        elif orelse is not None:
            orelse = orelse.with_changes(body=cf.block(rewrite(list(orelse.body.body))))
        return stmt.with_changes(body=cf.block(rewrite(list(stmt.body.body))), orelse=orelse)
    if isinstance(stmt, (cst.For, cst.While)):
        return stmt.with_changes(body=cf.block(rewrite(list(stmt.body.body))))
    return stmt
