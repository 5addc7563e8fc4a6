"""Pytrees: nested tuples, lists, dicts, named tuples and registered classes whose leaves are arrays
or numbers.

``flatten(tree) -> (leaves, treedef)`` and ``unflatten(treedef, leaves)``
round-trip; a ``TreeDef`` is hashable, so generated code can be specialised
on the structure of its arguments.  ``None`` is an empty subtree, as in JAX.

A named tuple is a node whose children are its fields.  Other classes become nodes when registered,
as in JAX's ``jax.tree_util``: ``register_pytree_node(cls, flatten, unflatten)``,
``register_dataclass`` and ``register_pytree_node_class``.  Inside transformed code a node's
children are read as attributes (``params.W``): a named tuple's and a dataclass's fields by name,
and a registered class's children by the attribute of the instance that holds each one.
"""
from __future__ import annotations

import builtins
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class TreeDef:
    kind: str                          # "leaf" | "none" | "tuple" | "list" | "dict" | "namedtuple" | "node"
    children: tuple = ()
    keys: tuple = ()                   # dict keys, sorted; a named tuple's or a node's attribute names
    node_type: type | None = None      # a named tuple's or a registered node's class
    aux: Any = None                    # a registered node's auxiliary data (hashable, as in JAX)
    # a registered class's attributes that hold its auxiliary data, or an entry of it: (name, position
    # in aux, or None for the whole of it), so that transformed code reads them as literals
    aux_keys: tuple = ()

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(child.num_leaves for child in self.children)

    @property
    def is_sequence(self) -> bool:
        """Children read by position: a tuple's, a list's and a named tuple's."""
        return self.kind in ("tuple", "list", "namedtuple")

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
        if self.kind in ("namedtuple", "node"):
            named = [f"{k}={v}" for k, v in zip(self.keys, inner)] if self.keys else inner
            aux = f"; {self.aux!r}" if self.kind == "node" and self.aux not in (None, ()) else ""
            return f"{self.node_type.__qualname__}({', '.join(named)}{aux})"
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"


LEAF = TreeDef("leaf")


@dataclass(frozen=True)
class _NodeType:
    flatten: Callable          # instance -> (children, aux)
    unflatten: Callable        # (aux, children) -> instance
    fields: tuple = ()         # attribute names of the children, when the class says them (a dataclass)
    meta_fields: tuple = ()    # attribute names of the auxiliary data's entries (a dataclass's meta_fields)


_NODE_TYPES: dict[type, _NodeType] = {}


def register_pytree_node(node_type: type, flatten_func: Callable, unflatten_func: Callable) -> None:
    """Make ``node_type`` a pytree node, as JAX's: ``flatten_func(x) -> (children, aux_data)`` and
    ``unflatten_func(aux_data, children) -> x``.  ``aux_data`` must be hashable: generated code is
    specialised on it.  Inside transformed code ``x.name`` reads the child that the instance's
    attribute ``name`` holds."""
    _NODE_TYPES[node_type] = _NodeType(flatten_func, unflatten_func)


def register_dataclass(node_type: type, data_fields=None, meta_fields=None):
    """Make a dataclass a pytree node, as JAX's: ``data_fields`` are its children (arrays), and
    ``meta_fields`` its static data, part of the structure.  Without them, every field is a child.
    Returns the class, so it serves as a decorator."""
    if not dataclasses.is_dataclass(node_type):
        raise TypeError(f"register_dataclass takes a dataclass, not {node_type!r}")
    names = [f.name for f in dataclasses.fields(node_type)]
    data_fields = tuple(names if data_fields is None else data_fields)
    meta_fields = tuple(() if meta_fields is None else meta_fields)
    if set(data_fields) | set(meta_fields) != set(names) or set(data_fields) & set(meta_fields):
        raise ValueError(f"register_dataclass: data_fields and meta_fields must split the fields {names} of "
                         f"{node_type.__qualname__} between them")

    def flatten_dataclass(x):
        return tuple(getattr(x, f) for f in data_fields), tuple(getattr(x, f) for f in meta_fields)

    def unflatten_dataclass(aux, children):
        return node_type(**dict(zip(data_fields, children)), **dict(zip(meta_fields, aux)))
    _NODE_TYPES[node_type] = _NodeType(flatten_dataclass, unflatten_dataclass, data_fields, meta_fields)
    return node_type


def static_attribute(treedef: TreeDef, name: str):
    """``(True, value)`` when the attribute ``name`` of a registered node holds its auxiliary data or an
    entry of it (a dataclass's meta field): part of the structure, known when a function is
    specialised.  Else ``(False, None)``."""
    for key, position in treedef.aux_keys:
        if key == name:
            return True, treedef.aux if position is None else treedef.aux[position]
    return False, None


def register_pytree_node_class(node_type: type):
    """Class decorator, as JAX's: the class's ``tree_flatten()`` method and ``tree_unflatten(aux,
    children)`` classmethod make it a pytree node."""
    register_pytree_node(node_type, lambda x: x.tree_flatten(), node_type.tree_unflatten)
    return node_type


def constructor_fields(node_type: type):
    """``(data fields, meta fields)`` of a class transformed code may build (a named tuple, or a
    dataclass registered with register_dataclass), else None."""
    if issubclass(node_type, tuple) and hasattr(node_type, "_fields"):
        return tuple(node_type._fields), ()
    registered = _NODE_TYPES.get(node_type)
    if registered is not None and registered.fields:
        return registered.fields, registered.meta_fields
    return None


def built(node_type: type, children: tuple, meta: tuple) -> TreeDef:
    """The structure of ``node_type(...)`` built from children of these structures and meta values:
    the one ``flatten`` gives such an instance."""
    fields, meta_fields = constructor_fields(node_type)
    if meta_fields or node_type in _NODE_TYPES:
        return TreeDef("node", children, fields, node_type, tuple(meta),
                       tuple((name, k) for k, name in enumerate(meta_fields)))
    return TreeDef("namedtuple", children, fields, node_type)


def is_node(value) -> bool:
    """Whether ``value`` is a pytree node with children: a tuple, list, dict, named tuple or registered
    class (None, a node without any, is not counted)."""
    return isinstance(value, (tuple, list, dict)) or type(value) in _NODE_TYPES


def flatten(tree) -> tuple[list, TreeDef]:
    leaves: list = []
    return leaves, _flatten(tree, leaves)


def _is_namedtuple(tree) -> bool:
    return isinstance(tree, tuple) and hasattr(type(tree), "_fields")


def _flatten(tree, leaves) -> TreeDef:
    if tree is None:
        return TreeDef("none")
    registered = _NODE_TYPES.get(type(tree))
    if registered is not None:
        children, aux = registered.flatten(tree)
        children = tuple(children)
        aux_keys = tuple((name, registered.meta_fields.index(name)) for name in registered.meta_fields) \
            if registered.fields else _attributes_holding_aux(tree, aux)
        return TreeDef("node", tuple(_flatten(t, leaves) for t in children),
                       registered.fields or _attributes_holding(tree, children), type(tree), aux, aux_keys)
    if _is_namedtuple(tree):
        return TreeDef("namedtuple", tuple(_flatten(t, leaves) for t in tree), tuple(type(tree)._fields), type(tree))
    if isinstance(tree, tuple):
        return TreeDef("tuple", tuple(_flatten(t, leaves) for t in tree))
    if isinstance(tree, list):
        return TreeDef("list", tuple(_flatten(t, leaves) for t in tree))
    if isinstance(tree, dict):
        keys = tuple(sorted(tree))
        return TreeDef("dict", tuple(_flatten(tree[k], leaves) for k in keys), keys)
    leaves.append(tree)
    return LEAF


def _attributes_holding(instance, children) -> tuple:
    """The attribute of ``instance`` that holds each child (the very object), so that transformed code
    can read ``x.name``; () when some child is held by no attribute, or by several."""
    attributes = getattr(instance, "__dict__", None) or {}
    names = []
    for child in children:
        holding = [name for name, value in attributes.items() if value is child]
        if len(holding) != 1:
            return ()
        names.append(holding[0])
    return tuple(names)


def _attributes_holding_aux(instance, aux) -> tuple:
    """The attributes of ``instance`` that hold its auxiliary data (the very object), or an entry of
    it when it is a tuple: (name, position or None)."""
    found = []
    for name, value in (getattr(instance, "__dict__", None) or {}).items():
        if aux is not None and value is aux:
            found.append((name, None))
        elif isinstance(aux, tuple):
            positions = [k for k, entry in enumerate(aux) if entry is value and entry is not None]
            if len(positions) == 1:
                found.append((name, positions[0]))
    return tuple(found)


def unflatten(treedef: TreeDef, leaves) -> Any:
    iterator = iter(leaves)
    tree = _build(treedef, iterator)
    if next(iterator, _END) is not _END:
        raise ValueError(f"too many leaves for the structure {treedef}")
    return tree


_END = object()


def _build(treedef: TreeDef, leaves, children_given=False):
    if treedef.kind == "leaf":
        leaf = next(leaves, _END)
        if leaf is _END:
            raise ValueError("too few leaves for the structure")
        return leaf
    if treedef.kind == "none":
        return None
    children = list(leaves) if children_given else [_build(c, leaves) for c in treedef.children]
    if treedef.kind == "dict":
        return dict(zip(treedef.keys, children))
    if treedef.kind == "namedtuple":
        return treedef.node_type(*children)
    if treedef.kind == "node":
        return _NODE_TYPES[treedef.node_type].unflatten(treedef.aux, children)
    return list(children) if treedef.kind == "list" else tuple(children)


def rebuilt(treedef: TreeDef, nested) -> Any:
    """``nested``, tuples of tuples as generated code returns them, rebuilt as ``treedef`` (lists,
    dicts, named tuples and registered classes); its leaves may be batched (vmap) or anything else."""
    if treedef.kind == "leaf":
        return nested
    if treedef.kind == "none":
        return None
    return _build(treedef, iter([rebuilt(child, part) for child, part in zip(treedef.children, nested)]),
                  children_given=True)


def as_tuples(treedef: TreeDef, leaves_in) -> Any:
    """The leaves nested as tuples in the shape of ``treedef``: how generated code passes a structure
    (a dict's values in the order of its sorted keys)."""
    iterator = iter(leaves_in)

    def nested(t):
        if t.kind == "leaf":
            return next(iterator)
        return None if t.kind == "none" else tuple(nested(c) for c in t.children)
    return nested(treedef)


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


def reduce(function: Callable, tree, initializer=None):
    """``function`` folded over the leaves from the left (``functools.reduce``), as JAX's; from
    ``initializer`` where one is given (None stands for none).  Plain code over ``leaves``, which
    transformed code reads as a list of the leaves (normalize.py), so it works there too."""
    values = leaves(tree)
    if initializer is None:           # decided when transformed code is specialized
        total = values[0]
        for value in values[1:]:
            total = function(total, value)
    else:
        total = initializer
        for value in values:
            total = function(total, value)
    return total


def all(tree) -> bool:
    """Whether every leaf is true, as Python's ``all`` takes each (JAX's ``tree.all``)."""
    return builtins.all(leaves(tree))
