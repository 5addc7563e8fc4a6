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


def tree_reduce(function, tree, initializer=None):
    """``function`` folded over the leaves from the left (``functools.reduce``), as JAX's; from
    ``initializer`` where one is given (None stands for none, so transformed code can read it)."""
    values = tree_leaves(tree)
    if initializer is None:           # decided when transformed code is specialized
        total = values[0]
        for value in values[1:]:
            total = function(total, value)
    else:
        total = initializer
        for value in values:
            total = function(total, value)
    return total


def tree_all(tree) -> bool:
    """Whether every leaf is true (each leaf's truth as Python's ``all`` takes it, as JAX's)."""
    return all(tree_leaves(tree))


register_pytree_node = tree.register_pytree_node
register_dataclass = tree.register_dataclass
register_pytree_node_class = tree.register_pytree_node_class
