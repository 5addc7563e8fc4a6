"""Array methods and attributes, and the primitive each one becomes.

The core form has no methods: ``x.sum(axis=1)`` becomes ``np.sum(x, axis=1)``
and ``x.T`` becomes ``np.transpose(x)``.
"""
from __future__ import annotations

from . import primitives

# Indexes of the registry's ``methods``, ``spread_argument`` and ``attribute`` facts:
# method name -> primitive name (the receiver becomes the first argument)
METHODS = {method: prim.name for prim in primitives.REGISTRY.values() for method in prim.methods}
# method name -> the parameter it may take spread out (x.reshape(2, 3), x.transpose(1, 0))
SPREAD_ARGUMENT_METHODS = {method: prim.spread_argument for prim in primitives.REGISTRY.values()
                           for method in prim.methods if prim.spread_argument}
# attribute name -> primitive name
ATTRIBUTES = {prim.attribute: prim.name for prim in primitives.REGISTRY.values() if prim.attribute}


# JAX's functional index updates, ``x.at[index].<op>(value)``: a copy of ``x`` with the update made
# (see normalize.py).  Besides ``get`` and ``set``, each is a binary primitive's (its registry
# entry's ``at_update``): op name -> the primitive
AT_PRIMITIVES = {prim.at_update: prim for prim in primitives.REGISTRY.values() if prim.at_update}
AT_UPDATES = ("get", "set", *AT_PRIMITIVES)


def at_update(call):
    """``(x, subscript, op)`` when ``call`` is ``x.at[index].op(...)``, else None."""
    import libcst as cst
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in AT_UPDATES and isinstance(func.value, cst.Subscript):
        at = func.value.value
        if isinstance(at, cst.Attribute) and at.attr.value == "at":
            return at.value, func.value, func.attr.value
    return None
