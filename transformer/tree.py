"""Pytrees: nested tuples, lists and dicts whose leaves are arrays or numbers.

``flatten(tree) -> (leaves, treedef)`` and ``unflatten(treedef, leaves)``
round-trip; a ``TreeDef`` is hashable, so generated code can be specialised
on the structure of its arguments.  ``None`` is an empty subtree, as in JAX.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class TreeDef:
    kind: str                          # "leaf" | "none" | "tuple" | "list" | "dict"
    children: tuple = ()
    keys: tuple = ()                   # dict keys, sorted

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(child.num_leaves for child in self.children)

    def __str__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = [str(c) for c in self.children]
        if self.kind == "dict":
            return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(self.keys, inner)) + "}"
        if self.kind == "list":
            return "[" + ", ".join(inner) + "]"
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"


LEAF = TreeDef("leaf")


def flatten(tree) -> tuple[list, TreeDef]:
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves) -> TreeDef:
    if tree is None:
        return TreeDef("none")
    if isinstance(tree, tuple) and not hasattr(tree, "_fields"):
        return TreeDef("tuple", tuple(_flatten(t, leaves) for t in tree))
    if isinstance(tree, list):
        return TreeDef("list", tuple(_flatten(t, leaves) for t in tree))
    if isinstance(tree, dict):
        keys = tuple(sorted(tree))
        return TreeDef("dict", tuple(_flatten(tree[k], leaves) for k in keys), keys)
    leaves.append(tree)
    return LEAF


def unflatten(treedef: TreeDef, leaves) -> Any:
    iterator = iter(leaves)
    tree = _build(treedef, iterator)
    if next(iterator, _END) is not _END:
        raise ValueError(f"too many leaves for the structure {treedef}")
    return tree


_END = object()


def _build(treedef: TreeDef, leaves):
    if treedef.kind == "leaf":
        leaf = next(leaves, _END)
        if leaf is _END:
            raise ValueError("too few leaves for the structure")
        return leaf
    if treedef.kind == "none":
        return None
    children = [_build(c, leaves) for c in treedef.children]
    if treedef.kind == "dict":
        return dict(zip(treedef.keys, children))
    return list(children) if treedef.kind == "list" else tuple(children)


def leaves(tree) -> list:
    return flatten(tree)[0]


def structure(tree) -> TreeDef:
    return flatten(tree)[1]


def map(fn: Callable, tree, *rest):
    """Apply ``fn`` leafwise over one or more trees of the same structure."""
    flat, treedef = flatten(tree)
    others = []
    for other in rest:
        other_flat, other_def = flatten(other)
        if other_def != treedef:
            raise ValueError(f"tree structures differ: {treedef} and {other_def}")
        others.append(other_flat)
    return unflatten(treedef, [fn(*xs) for xs in zip(flat, *others)])
