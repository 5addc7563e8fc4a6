"""Give a for loop's index a name of its own where the name is reused.

Transforms that decide things per *name* (vmap: is this variable batched?)
see every binding of a name at once.  Two loops both counting with ``i``,
one over a fixed range and one over a per-example range, would then make the
first loop's ``i`` look per-example too.  Renaming each such loop's index
(``i`` -> ``i_1``) inside its own body makes each binding a name of its own.

A loop is renamed only when that cannot change what any read sees: its body
never assigns the index, and every read of the name outside the loop belongs
to another loop that binds the name and whose body never assigns it (so the
index is dead after the loop: Python would otherwise let a read after the
loop see its last value).
"""
from __future__ import annotations

from collections import Counter

import libcst as cst

from ..core_form import CoreFunction


def own_loop_names(core: CoreFunction) -> CoreFunction:
    """``core`` with each reused for-loop index renamed within its loop (see the module docstring)."""
    facts = _Facts()
    core.node.body.visit(facts)
    renames = {}
    for loop in facts.loops:
        name = loop.target.value
        if facts.bindings[name] + (name in core.params) < 2 or name in facts.stored_in[loop]:
            continue
        if all(owner is not None and name not in facts.stored_in[owner]
               for owner in facts.read_owners.get(name, []) if owner is not loop):
            renames[loop] = core.scope.claim(name)
    if renames:
        core.node = core.node.visit(_RenameLoops(renames))
    return core


class _Facts(cst.CSTVisitor):
    """Per name: how often it is bound, and for each read, the innermost loop binding it."""

    def __init__(self):
        self.loops: list[cst.For] = []
        self.bindings: Counter = Counter()
        self.stored_in: dict = {}          # loop -> names assigned anywhere in its body
        self.read_owners: dict = {}        # name -> [innermost enclosing loop binding it, or None]
        self.enclosing: list[cst.For] = []

    def _bind(self, name):
        self.bindings[name] += 1
        for loop in self.enclosing:
            self.stored_in[loop].add(name)

    def visit_For(self, node):
        self.loops.append(node)
        self.stored_in[node] = set()
        self._bind(node.target.value)      # a binding in the loops around it, not in its own body
        node.iter.visit(self)
        self.enclosing.append(node)
        node.body.visit(self)
        self.enclosing.pop()
        return False

    def visit_AssignTarget(self, node):
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value)
            return False
        return True

    def visit_Attribute(self, node):
        node.value.visit(self)         # np.sin: `sin` is no variable
        return False

    def visit_Arg(self, node):
        node.value.visit(self)         # axis=0: `axis` is no variable
        return False

    def visit_Name(self, node):
        owner = next((loop for loop in reversed(self.enclosing) if loop.target.value == node.value), None)
        self.read_owners.setdefault(node.value, []).append(owner)


class _RenameLoops(cst.CSTTransformer):
    def __init__(self, renames):
        self.renames = renames
        self.active: list[tuple[str, str]] = []     # (old, new) of the renamed loops we are inside

    def visit_For(self, node):
        if node in self.renames:
            self.active.append((node.target.value, self.renames[node]))

    def leave_For(self, original, updated):
        if original not in self.renames:
            return updated
        self.active.pop()
        return updated.with_changes(target=cst.Name(self.renames[original]),
                                    iter=original.iter)       # the range is evaluated outside the loop

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)

    def leave_Name(self, original, updated):
        for old, new in reversed(self.active):
            if updated.value == old:
                return updated.with_changes(value=new)
        return updated
