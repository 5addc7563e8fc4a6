"""``vmap``: the user API of automatic batching.

``vmap(f, in_axes, out_axes, axis_name, axis_size)`` has JAX's meaning.  The
batched code itself is written by the source transform in
``transforms/vmap.py``; what lives here is the Python side: normalizing
``in_axes``/``out_axes`` and checking the arguments (batch sizes agree, axes in
range) before they reach the generated function.
"""
from __future__ import annotations

import numpy as np

from . import staging, structure, tree
from .staging import Step
from .transformed import Boundary, Transformed, TransformsItself


def vmap(fn=None, in_axes=0, out_axes=0, axis_name=None, axis_size=None):
    """Map ``fn`` over a batch axis of its arguments (JAX's ``vmap``)."""
    if fn is None:
        return lambda f: vmap(f, in_axes, out_axes, axis_name, axis_size)
    if isinstance(fn, TransformsItself):      # vmap(vjp_fn): a Jacobian row per cotangent
        return fn.vmapped(in_axes, out_axes)
    if hasattr(fn, "transform_refusal"):
        return _looped(fn, in_axes, out_axes, axis_name, axis_size)
    base = Transformed.of(fn).stepwise()    # its chain is rebuilt below
    n_params = _call_arity(base)
    axes = _normalize_in_axes(in_axes, n_params)
    if all(a is None for entry in axes for a in _prefix_leaves(entry)) and axis_size is None:
        raise ValueError("vmap must have at least one non-None value in in_axes, or an axis_size")
    if axis_size is not None and (not isinstance(axis_size, int) or axis_size < 0):
        raise ValueError(f"axis_size must be a non-negative int, got {axis_size!r}")
    outs, out_keys = _normalize_out_axes(out_axes)
    step = Step("vmap", (("axis_name", axis_name), ("axis_size", axis_size), ("in_axes", axes),
                         ("out_axes", outs)))
    inner = tuple(b.nested_in(axes) for b in base.boundaries)
    base = Transformed(base.__transformer_fn__, base.steps, base.target, base.static_argnums, inner, base.tiered)
    return base.then(step, VmapBoundary(axes, axis_size, out_keys=out_keys))


def _looped(fn, in_axes, out_axes, axis_name, axis_size):
    """vmap of a function transformer assembles in Python that has no code form to transform (the
    function linearize returns at pytree primals): the examples are mapped by a Python loop, one
    call of the function each, with JAX's meaning."""
    if axis_name is not None or not isinstance(out_axes, int) or not all(
            a is None or isinstance(a, int) for a in (in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,))):
        raise TypeError("vmap of linearize's function at pytree primals takes int or None in_axes, an int "
                        "out_axes and no axis_name")

    def mapped(*args):
        axes = tuple(in_axes) if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
        if len(axes) != len(args):
            raise ValueError(f"in_axes has {len(axes)} entries but the function is called with {len(args)} arguments")
        sizes = {np.shape(a)[axis] for a, axis in zip(args, axes) if axis is not None}
        if axis_size is not None:
            sizes.add(axis_size)
        if len(sizes) != 1:
            raise ValueError(f"vmap got mapped axes of sizes {sorted(sizes)}; they must agree (or give axis_size)")
        count = sizes.pop()
        outs = [fn(*[a if axis is None else np.take(a, k, axis=axis) for a, axis in zip(args, axes)])
                for k in range(count)]
        return tree.map(lambda *leaves: np.stack(leaves, axis=out_axes), *outs)

    mapped.transform_refusal = ("vmap of linearize's function at pytree primals runs as a Python loop "
                                "over the examples, so it cannot be transformed again")
    return mapped


def _call_arity(base: Transformed) -> int:
    """How many arguments ``base`` is called with: in_axes count against what vmap wraps.

    A chain of steps that keep the user's arguments takes the user's parameters; any
    other step (a jvp step takes tangents too) is asked by building its core form.
    """
    if all(step.name in structure.KEEP_ARGUMENTS for step in base.steps):
        return len(base.signature.parameters)
    return len(staging.make_core(base.__transformer_fn__, base.steps).params)


# ------------------------------------------------------- in_axes as a prefix
class AxesDict(tuple):
    """A dict entry of an in_axes prefix, kept hashable (it is part of the step's options):
    sorted ``(key, axes)`` pairs, shown as the dict it came from."""

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self) + "}"


def _freeze_prefix(entry, position):
    """One argument's in_axes entry as a hashable prefix: int or None, or a tuple/AxesDict of them."""
    if entry is None or isinstance(entry, int) and not isinstance(entry, bool):
        return entry
    if isinstance(entry, (tuple, list)):
        return tuple(_freeze_prefix(e, position) for e in entry)
    if isinstance(entry, dict):
        return AxesDict(sorted((k, _freeze_prefix(v, position)) for k, v in entry.items()))
    raise ValueError(f"in_axes entry for argument {position} must be an int, None, or a tuple/list/dict "
                     f"of them matching the argument's structure, got {entry!r}")


def _prefix_leaves(entry) -> list:
    if isinstance(entry, AxesDict):
        return [a for _, v in entry for a in _prefix_leaves(v)]
    if isinstance(entry, tuple):
        return [a for v in entry for a in _prefix_leaves(v)]
    return [entry]


def leaf_axes(entry, treedef, position) -> list:
    """The axis of each leaf of an argument (flatten order) from its in_axes prefix entry (JAX's
    rule: an int or None stands for every leaf below it)."""
    if not isinstance(entry, tuple):
        return [entry] * treedef.num_leaves
    if isinstance(entry, AxesDict):
        keys = tuple(k for k, _ in entry)
        if treedef.kind != "dict" or treedef.keys != keys:
            raise ValueError(f"in_axes entry {entry!r} for argument {position} does not match the argument's "
                             f"structure {treedef}: a dict prefix needs a dict with the same keys")
        children = [v for _, v in entry]
    else:
        if treedef.kind not in ("tuple", "list") or len(treedef.children) != len(entry):
            raise ValueError(f"in_axes entry {entry!r} for argument {position} does not match the argument's "
                             f"structure {treedef}: a tuple prefix needs a tuple or list of {len(entry)} items")
        children = entry
    return [a for child, sub in zip(children, treedef.children) for a in leaf_axes(child, sub, position)]


def _adapt_in_axes(options: dict, layout: structure.ParamLayout) -> dict:
    """in_axes per user parameter -> per leaf parameter, each prefix entry spread over its leaves."""
    options["in_axes"] = tuple(axis for position, (entry, treedef) in enumerate(zip(options["in_axes"],
                                                                                   layout.treedefs))
                               for axis in leaf_axes(entry, treedef, position))
    return options


structure.STEP_ADAPTERS.setdefault("vmap", _adapt_in_axes)
structure.STEP_ADAPTERS.setdefault("pmap", _adapt_in_axes)     # pmap composes as the vmap it is


def _normalize_in_axes(in_axes, n_params) -> tuple:
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if in_axes is None or isinstance(in_axes, int) and not isinstance(in_axes, bool):
        return (in_axes,) * n_params
    if not isinstance(in_axes, tuple):
        raise ValueError(f"in_axes must be an int, None or a tuple with one entry per argument, got {in_axes!r}")
    if len(in_axes) != n_params:
        raise ValueError(f"in_axes has {len(in_axes)} entries but the function takes {n_params} arguments")
    return tuple(_freeze_prefix(entry, position) for position, entry in enumerate(in_axes))


def _normalize_out_axes(out_axes):
    """(the axes the vmap step takes, the keys a dict ``out_axes`` names or None).  A dict gives the
    axis of each entry of a dict output: the step takes them as a tuple in the keys' sorted order,
    the order the output's values are in, and the boundary checks the output has those keys."""
    keys = None
    if isinstance(out_axes, dict):
        keys = tuple(sorted(out_axes))
        out_axes = tuple(out_axes[k] for k in keys)
    if isinstance(out_axes, list):
        out_axes = tuple(out_axes)
    items = out_axes if isinstance(out_axes, tuple) else (out_axes,)
    for axis in items:
        if not (axis is None or isinstance(axis, int) and not isinstance(axis, bool)):
            raise ValueError(f"out_axes entries must be ints or None, got {axis!r}")
    return out_axes, keys


class VmapBoundary(Boundary):
    """Checks batch axes and sizes before the batched function runs.

    ``outer`` lists the in_axes of vmaps wrapped around this one (outermost
    first): those axes are not part of what this vmap maps over.
    """

    def __init__(self, in_axes, axis_size, outer=(), out_keys=None):
        self.in_axes = in_axes
        self.axis_size = axis_size
        self.outer = outer
        self.out_keys = out_keys

    def nested_in(self, outer_axes) -> "VmapBoundary":
        return VmapBoundary(self.in_axes, self.axis_size, (outer_axes,) + self.outer, self.out_keys)

    def check_result(self, result):
        if self.out_keys is not None and not (isinstance(result, dict) and tuple(sorted(result)) == self.out_keys):
            found = f"a dict with keys {sorted(result)}" if isinstance(result, dict) else type(result).__name__
            raise ValueError(f"vmap out_axes is a dict with keys {list(self.out_keys)}, but the function "
                             f"returned {found}")

    def before(self, args):
        if len(args) != len(self.in_axes):
            raise ValueError(f"vmap got {len(args)} arguments but in_axes has {len(self.in_axes)} entries")
        if not self.outer and self._sizes_agree(args):
            return args
        sizes = {}
        for position, (arg, entry) in enumerate(zip(args, self.in_axes)):
            treedef = tree.structure(arg) if tree.is_node(arg) else tree.LEAF
            outer = [leaf_axes(axes[position], treedef, position) for axes in self.outer]
            leaves = tree.leaves(arg) if tree.is_node(arg) else [arg]
            for j, (leaf, axis) in enumerate(zip(leaves, leaf_axes(entry, treedef, position))):
                if axis is None:
                    continue
                shape = self._example_shape(np.shape(leaf), [axes[j] for axes in outer])
                if not -len(shape) <= axis < len(shape):
                    raise ValueError(f"vmap in_axes={axis} is out of range for argument {position} "
                                     f"of rank {len(shape)} (shape {shape})")
                if sizes.setdefault(position, shape[axis]) != shape[axis]:
                    raise ValueError(f"vmap got inconsistent batch sizes within argument {position}: "
                                     f"{sizes[position]} and {shape[axis]}")
        if self.axis_size is not None:
            sizes["axis_size"] = self.axis_size
        if len(set(sizes.values())) > 1:
            listed = ", ".join(f"argument {k} has {v}" if k != "axis_size" else f"axis_size is {v}"
                               for k, v in sizes.items())
            raise ValueError(f"vmap got inconsistent batch sizes: {listed}")
        return args

    def _sizes_agree(self, args) -> bool:
        """The common call, checked quickly: arrays (no pytrees) with int axes in range and one batch
        size.  False sends the call through the full check, which names what is wrong."""
        size = self.axis_size
        for arg, axis in zip(args, self.in_axes):
            if axis is None:
                continue
            shape = getattr(arg, "shape", None)
            if shape is None or not isinstance(axis, int) or not -len(shape) <= axis < len(shape):
                return False
            if size is None:
                size = shape[axis]
            elif shape[axis] != size:
                return False
        return True

    @staticmethod
    def _example_shape(shape, outer_axes):
        """A leaf's shape without the axes the vmaps around this one map over (outermost first)."""
        for axis in outer_axes:
            if axis is not None:
                shape = shape[:axis % len(shape)] + shape[axis % len(shape) + 1:]
        return shape
