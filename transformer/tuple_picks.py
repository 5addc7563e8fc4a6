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
    body = _each_assignment(body, lambda stmt, a: _inner_displays_named(stmt, a, scope))
    statements = list(dataflow.walk(body))
    counts = dataflow.write_counts(cst.FunctionDef(cst.Name("body"), cst.Parameters(), cf.block(body)),
                                   include_setitem=False)      # (a tuple is never written into)
    once = {name for name, count in counts.count.items() if count == 1}
    displays = {a.target: [el.value for el in a.value.elements] for a in statements
                if a.kind == "assign" and a.target in once and isinstance(a.value, cst.Tuple)}
    tuples = dataflow.tuple_sizes(statements)

    def resolved(stmt, a) -> list:
        value = a.value
        if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name)
                and value.value.value in displays and len(value.slice) == 1
                and isinstance(value.slice[0].slice, cst.Index)):
            return [stmt]
        elements = displays[value.value.value]
        k = cf.int_literal(value.slice[0].slice.value)
        if k is None or not -len(elements) <= k < len(elements):
            return [stmt]
        element = elements[k]
        if isinstance(element, cst.Name) and element.value in once and element.value in tuples:
            return [stmt.with_changes(body=[a.small.with_changes(value=element)])]
        return [stmt]
    return _each_assignment(body, resolved)


def _inner_displays_named(stmt, a, scope) -> list:
    """``stmt`` assigning a display with displays in it, after the assignments naming them."""
    if not (isinstance(a.value, cst.Tuple) and any(isinstance(el.value, cst.Tuple) for el in a.value.elements)):
        return [stmt]

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
    hoisted: list = []
    display = named(a.value, hoisted)
    # the user line's comment stays above the first of them
    hoisted[0] = hoisted[0].with_changes(leading_lines=stmt.leading_lines)
    return hoisted + [stmt.with_changes(leading_lines=[], body=[a.small.with_changes(value=display)])]


def _each_assignment(stmts: list, change) -> list:
    """``stmts`` with each assignment ``x = value`` replaced by ``change(statement, assignment)``, a
    list of statements, in every block."""
    out = []
    for stmt in stmts:
        if not isinstance(stmt, cst.SimpleStatementLine):
            out.append(cf.map_blocks(stmt, lambda block: _each_assignment(block, change)))
            continue
        a = dataflow.classify(stmt)
        out += change(stmt, a) if a.kind == "assign" else [stmt]
    return out
