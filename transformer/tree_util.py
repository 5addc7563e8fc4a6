"""JAX's ``jax.tree_util`` names for transformer's pytrees (tuples, lists, dicts and None; see
tree.py).  Outside transformed code they are these functions; inside it, ``tree_map`` over
structures known when the function is specialised is unrolled, one call per leaf (normalize.py)."""
from __future__ import annotations

from .tree import TreeDef, flatten, leaves, map, structure, unflatten


def tree_map(f, tree, *rest):
    """``f`` applied leaf by leaf to ``tree`` and the trees of the same structure in ``rest``."""
    return map(f, tree, *rest)


def tree_leaves(tree) -> list:
    return leaves(tree)


def tree_structure(tree) -> TreeDef:
    return structure(tree)


def tree_flatten(tree):
    """``(leaves, treedef)``, as JAX's."""
    return flatten(tree)


def tree_unflatten(treedef: TreeDef, leaves_in):
    return unflatten(treedef, leaves_in)
