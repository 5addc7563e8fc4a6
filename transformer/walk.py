"""Every node of a libcst tree, fast, for passes that only read.

libcst's ``node.visit(visitor)`` rebuilds each node it passes (it is made
for transformers), which costs about four times a plain walk over the
nodes' fields.  Passes that only gather names or nodes, or check them, and
do not care in which order they meet siblings, walk with ``nodes`` or
``visit`` instead.
"""
from __future__ import annotations

import dataclasses

import libcst as cst

_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}   # node type -> its field names
_IS_NODE: dict[type, bool] = {}                   # any type met in a field -> is it a libcst node


def _is_node(value) -> bool:
    # by the type's MRO: isinstance against the abstract CSTNode asks every one of
    # its hundreds of subclasses the first time it meets a type that is not a node
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = cst.CSTNode in kind.__mro__
    return known


def children(node: cst.CSTNode) -> list:
    """The nodes directly below ``node`` (libcst's ``node.children``, without rebuilding it)."""
    names = _CHILD_FIELDS.get(type(node))
    if names is None:
        names = _CHILD_FIELDS[type(node)] = tuple(f.name for f in dataclasses.fields(node))
    found = []
    for name in names:
        value = getattr(node, name)
        if type(value) in (tuple, list):
            found.extend(item for item in value if _is_node(item))
        elif _is_node(value):
            found.append(value)
    return found


def nodes(tree: cst.CSTNode):
    """Yield ``tree`` and every node below it, in no particular order."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(children(node))


def visit(tree: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """Run ``visitor`` over ``tree`` as ``tree.visit(visitor)`` would, a parent
    before its children and left after them, a ``visit_`` that returns False
    skipping the children, but siblings in field order, not source order.

    For a visitor whose outcome does not depend on the order of siblings
    (the fence's question "is anything refused?").  It has no per-attribute
    hooks (``visit_Call_func``).
    """
    if visitor.on_visit(tree):
        for child in children(tree):
            visit(child, visitor)
    visitor.on_leave(tree)
