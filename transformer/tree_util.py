"""JAX's ``jax.tree_util`` names for transformer's pytrees (tuples, lists, dicts, None, named tuples
and registered classes; see tree.py).  Outside transformed code they are these functions; inside it, ``tree_map`` over
structures known when the function is specialised is unrolled, one call per leaf (normalize.py)."""
from __future__ import annotations

from . import tree
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


tree_reduce = tree.reduce
tree_all = tree.all
register_pytree_node = tree.register_pytree_node
register_dataclass = tree.register_dataclass
register_pytree_node_class = tree.register_pytree_node_class
