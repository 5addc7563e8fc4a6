"""What a name in user code means.

Names are resolved the way Python would at call time — local variables,
closure cells, module globals, builtins — and the object found is classified:
a primitive (``np.sin``, ``math.sin``, an aliased ``xp.sin`` are one
primitive), another user function (inlined and transformed with the caller),
a constant read at transform time, or something we cannot transform.  A
function of an installed library (scipy, the standard library...) is never
inlined, even though Python has its source: it is a ``library`` call, which
the fence refuses unless a primitive stands for it.
"""
from __future__ import annotations

import builtins
import functools
import math
import os
import sysconfig
import types
from dataclasses import dataclass
from typing import Any

import libcst as cst
import numpy as np

from . import primitives, tree, walk
from .custom import custom_jvp, custom_vjp
from .primitives import Primitive

# Builtins with a meaning of their own in the core form (loops only).
LOOP_BUILTINS = {builtins.range: "range", builtins.enumerate: "enumerate", builtins.zip: "zip",
                 builtins.reversed: "reversed"}

# Constants spelled directly in the core form instead of bound by value.
NAMED_CONSTANTS = {
    "np.pi": np.pi, "np.e": np.e, "np.inf": np.inf, "np.nan": np.nan,
    "math.pi": math.pi, "math.e": math.e,
    "math.inf": math.inf, "math.nan": math.nan, "math.tau": math.tau,
}


def is_newaxis(r: "Resolved") -> bool:
    """``np.newaxis`` (however NumPy was imported): it is ``None``, which an index reads as a new axis."""
    return r.value is None and r.dotted.rpartition(".")[2] == "newaxis"


@dataclass(frozen=True)
class Resolved:
    kind: str               # local | primitive | user | library | constant | dtype | module | loop | node | other | unknown
    value: Any = None
    primitive: Primitive | None = None
    dotted: str = ""        # the name as written, e.g. "np.sin"


def dotted_name(node: cst.BaseExpression) -> str | None:
    """'np.linalg.norm' for an Attribute chain over a Name, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def is_constant_value(value) -> bool:
    """A value transformed code reads once, when it is transformed (as JAX reads a global when it
    traces): numbers, strings, arrays, and tuples and string-keyed dicts of them (a config dict)."""
    if isinstance(value, bool | int | float | complex | str | np.generic | np.ndarray):
        return True
    if isinstance(value, tuple):
        return all(is_constant_value(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str for k in value) and all(is_constant_value(v) for v in value.values())
    return False


def classify(value, dotted: str = "") -> Resolved:
    prim = primitives.lookup(value) if not isinstance(value, (bool, int, float, str)) else None
    if prim is not None:
        return Resolved("primitive", value, prim, dotted)
    definition = primitives.definition_of(value) if prim is None and callable(value) else None
    if definition is not None:                  # np.roll, scipy.special.logsumexp: ours, in NumPy
        return Resolved("user", definition, None, dotted)
    if hasattr(value, "__transformer_fn__"):   # another transformed function (e.g. @tr.jit helper)
        return Resolved("user", value, None, dotted)
    if hasattr(value, "as_code") or hasattr(value, "transform_refusal"):   # a Jacobian's function, linearize's
        return Resolved("user", value, None, dotted)
    if isinstance(value, (custom_vjp, custom_jvp)):   # inlined through its forward rule / its own body
        return Resolved("user", value, None, dotted)
    if isinstance(value, types.FunctionType):
        return Resolved("library" if installed_package(value) else "user", value, None, dotted)
    try:
        if value in LOOP_BUILTINS:
            return Resolved("loop", LOOP_BUILTINS[value], None, dotted)
    except TypeError:  # unhashable
        pass
    if isinstance(value, type) and issubclass(value, np.generic):
        return Resolved("dtype", value, None, dotted)
    if isinstance(value, type) and tree.constructor_fields(value) is not None:
        return Resolved("node", value, None, dotted)     # Dense(W, b): a named tuple or dataclass pytree built
    if isinstance(value, types.ModuleType):
        return Resolved("module", value, None, dotted)
    if is_constant_value(value):
        return Resolved("constant", value, None, dotted)
    return Resolved("other", value, None, dotted)


@functools.lru_cache(maxsize=None)
def _installed_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple({os.path.realpath(paths[key]) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")
                  if key in paths})


def installed_package(fn) -> str | None:
    """The installed package (``scipy``, ``statistics``...) a Python function comes from, or None for
    the user's own code (and transformer's: tr.nn, tr.lax are inlined wherever it is installed)."""
    module = getattr(fn, "__module__", None) or ""
    root = module.partition(".")[0]
    if root == "transformer":
        return None
    filename = os.path.realpath(getattr(getattr(fn, "__code__", None), "co_filename", "") or "")
    return (root or os.path.basename(filename)) if filename.startswith(_installed_roots()) else None


def resolve(node: cst.BaseExpression, lookup, local_names) -> Resolved:
    """Resolve a Name or a dotted Attribute chain.

    ``lookup(name) -> (found, value)`` searches closure, globals and builtins;
    ``local_names`` are the function's own variables.
    """
    dotted = dotted_name(node)
    if dotted is None:
        return Resolved("other", None, None, "")
    root, *rest = dotted.split(".")
    if root in local_names:
        return Resolved("local", None, None, dotted)
    found, value = lookup(root)
    if not found:
        return Resolved("unknown", None, None, dotted)
    for attr in rest:
        try:
            value = getattr(value, attr)
        except AttributeError:
            return Resolved("unknown", None, None, dotted)
    return classify(value, dotted)


def _target_names(node, names: set) -> None:
    if isinstance(node, cst.Name):
        names.add(node.value)
    elif isinstance(node, (cst.Tuple, cst.List)):
        for el in node.elements:
            _target_names(el.value, names)
    elif isinstance(node, cst.StarredElement):
        _target_names(node.value, names)


# each has .target (a comprehension's for clause too: its names are the comprehension's variables)
_ASSIGNING = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.CompFor)


def local_names(func: cst.FunctionDef) -> set[str]:
    """The function's own variables: its parameters and every name it assigns."""
    names: set[str] = set()
    for node in walk.nodes(func):
        if isinstance(node, cst.Param):
            names.add(node.name.value)
        elif isinstance(node, _ASSIGNING):
            _target_names(node.target, names)
    return names


# ----------------------------------------------------- transforms in user code
# Transforms transformed code may apply (their generated core form is inlined where they are
# called): those that make a function, ``tr.grad(loss)(w, x)`` (the Jacobians in their code form,
# derived_code.py; pmap as the vmap it composes as), and jvp, vjp and linearize, called with their
# arguments.
INLINED_MAKERS = ("grad", "value_and_grad", "vmap", "jit", "checkpoint", "remat", "jacfwd", "jacrev", "hessian",
                  "hvp", "pmap")
INLINED_CALLS = ("jvp", "vjp", "linearize")
# The rest of transformer's transforms, which transformed code refuses by name.
HOST_TRANSFORMS = ("custom_vjp", "custom_jvp")


def transform_named(node, lookup, local_names) -> str | None:
    """The name of transformer's transform ``node`` stands for (``tr.jacfwd``), or None."""
    import transformer
    if dotted_name(node) is None:
        return None
    value = resolve(node, lookup, local_names).value
    for name in INLINED_MAKERS + INLINED_CALLS + HOST_TRANSFORMS:
        if value is getattr(transformer, name, None):
            return name
    return None


def transform_of_call(node: cst.Call, lookup, local_names, given=None):
    """The transformed function ``tr.grad(loss, argnums=1)`` builds, evaluated
    now, if ``node`` is such a call; None if it is not a transform.

    Only the transforms that return a function are accepted, applied to user
    functions (or transformed ones) and literal options.  ``given`` maps an
    argument's node to its value (a lambda's function, made by the caller).
    """
    import ast

    import transformer
    makers = {getattr(transformer, name) for name in INLINED_MAKERS if hasattr(transformer, name)}
    r = resolve(node.func, lookup, local_names)
    if r.value not in makers:
        return None
    args, kwargs = [], {}
    for arg in node.args:
        target = resolve(arg.value, lookup, local_names) if dotted_name(arg.value) else None
        made = transform_of_call(arg.value, lookup, local_names, given) if isinstance(arg.value, cst.Call) else None
        if given and arg.value in given:
            value = given[arg.value]
        elif made is not None:          # tr.vmap(tr.grad(f), in_axes=...): a transform made in place
            value = made
        elif target is not None and target.kind == "user":
            value = target.value
        else:
            try:
                value = ast.literal_eval(cst.Module([]).code_for_node(arg.value))
            except (ValueError, SyntaxError):
                raise ValueError(f"{cst.Module([]).code_for_node(arg.value)}: transforms inside transformed "
                                 f"code take a function name and literal options") from None
        if arg.keyword is not None:
            kwargs[arg.keyword.value] = value
        else:
            args.append(value)
    return r.value(*args, **kwargs)
