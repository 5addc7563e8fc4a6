"""Reverse-mode user API: ``grad``, ``value_and_grad`` and ``vjp`` (JAX meanings).

The derivative itself is generated source (``transforms/vjp.py``); this
module only checks arguments where Python values meet generated code.
"""
from __future__ import annotations

import functools

import numpy as np

from . import staging, tree
from .batching import vmap
from .staging import Step
from .transformed import Boundary, Transformed, TransformsItself


def _check_argnums(fn, argnums):
    import inspect
    n = len(inspect.signature(getattr(fn, "__transformer_fn__", fn)).parameters)
    for i in (argnums if isinstance(argnums, tuple) else (argnums,)):
        if not isinstance(i, int):
            raise TypeError(f"argnums must be an int or a tuple of ints, got {i!r}")
        if not -n <= i < n:
            raise ValueError(f"argnums {i} is out of range: the function takes {n} arguments")


def _normalized(argnums, n):
    return tuple(i % n for i in argnums) if isinstance(argnums, tuple) else argnums % n


class _ReverseBoundary(Boundary):
    """grad's Python side: differentiated arguments must be floating point, and
    gradients of pytree arguments come back in the arguments' structure."""

    def __init__(self, kind, argnums, has_aux, base=None):
        self.kind = kind
        self.argnums = argnums
        self.has_aux = has_aux
        self.base = base                    # the Transformed differentiated: what has_aux's aux is of
        self._aux_structures: dict = {}     # the arguments' structures -> the aux's TreeDef, or None

    def before(self, args):
        for i in (self.argnums if isinstance(self.argnums, tuple) else (self.argnums,)):
            if i >= len(args):
                raise TypeError(f"argnums {i} is out of range: called with {len(args)} arguments")
            value = args[i]
            if type(value) is float or isinstance(value, np.ndarray) and value.dtype.kind in "fc":
                continue                                  # the common case, without NumPy's dtype lookups
            for leaf in tree.leaves(value):
                dtype = np.result_type(leaf)
                if not np.issubdtype(dtype, np.inexact):
                    raise TypeError(f"grad requires real- or complex-valued inputs (input dtype that is a "
                                    f"sub-dtype of np.inexact), but argument {i} has dtype {dtype}; "
                                    f"pass floats, e.g. np.asarray(x, dtype=float)")
        return args

    def after(self, result, args):
        if self.kind == "grad":
            if self.has_aux:
                grads, aux = result
                return self._regroup(grads, args), self._aux_rebuilt(aux, args)
            return self._regroup(result, args)
        value, grads = result
        if self.has_aux:
            value = (value[0], self._aux_rebuilt(value[1], args))
        return value, self._regroup(grads, args)

    def _aux_rebuilt(self, aux, args):
        """has_aux's aux in the structure the function returns it in (a dict, a named tuple): generated
        code returns it as a tuple of its leaves.  The structure is read from the function normalized
        at these arguments' structures, once for each."""
        if not isinstance(aux, tuple) or self.base is None:
            return aux
        structures = self.base.structures(args)
        key = tuple(sorted((name, str(treedef)) for name, treedef in structures.items()))
        if key not in self._aux_structures:
            own = staging.result_structure(self.base.__transformer_fn__, self.base.steps,
                                           self.base.static_values(args) or None, structures or None)
            pair = own is not None and own.kind == "tuple" and len(own.children) == 2
            self._aux_structures[key] = own.children[1] if pair and own.children[1].kind != "leaf" else None
        treedef = self._aux_structures[key]
        return aux if treedef is None else tree.rebuilt(treedef, aux)

    def _indices(self):
        return self.argnums if isinstance(self.argnums, tuple) else (self.argnums,)

    def _regroup(self, flat, args):
        """Flat leaf gradients (as generated code returns them) -> the arguments' structures,
        each leaf in its argument's dtype."""
        if not isinstance(self.argnums, tuple) and not tree.is_node(args[self.argnums]):
            return in_dtype_of(flat, args[self.argnums])        # the common case: one array
        flat = list(flat) if isinstance(flat, tuple) else [flat]
        grouped = []
        for i in self._indices():
            leaves, treedef = tree.flatten(args[i])
            grouped.append(tree.unflatten(treedef, [in_dtype_of(g, x) for g, x in zip(flat, leaves)]))
            flat = flat[len(leaves):]
        return grouped[0] if not isinstance(self.argnums, tuple) else tuple(grouped)


def in_dtype_of(cotangent, primal):
    """A cotangent in its primal's floating dtype, as in JAX: float32 in, float32 gradient, even
    where the computation widened to float64 (x32 + y64) or narrowed (np.asarray(x, np.float32))."""
    dtype = getattr(primal, "dtype", None)
    if dtype is None or dtype.kind != "f" or getattr(cotangent, "dtype", dtype) == dtype:
        return cotangent
    return cotangent.astype(dtype) if isinstance(cotangent, np.ndarray) else dtype.type(cotangent)


def _reverse(name, fn, argnums, has_aux):
    _check_argnums(fn, argnums)
    transformed = Transformed.of(fn)
    n = len(transformed.signature.parameters)
    argnums = _normalized(argnums, n)
    return transformed.then(Step(name, (("argnums", argnums), ("has_aux", has_aux))),
                            _ReverseBoundary(name, argnums, has_aux, transformed))


def grad(fn=None, argnums=0, has_aux=False):
    """The gradient of a scalar-valued ``fn`` with respect to argument(s) ``argnums``."""
    if fn is None:
        return functools.partial(grad, argnums=argnums, has_aux=has_aux)
    return _reverse("grad", fn, argnums, has_aux)


def value_and_grad(fn=None, argnums=0, has_aux=False):
    """``fn``'s value and its gradient, from one generated function."""
    if fn is None:
        return functools.partial(value_and_grad, argnums=argnums, has_aux=has_aux)
    return _reverse("value_and_grad", fn, argnums, has_aux)


def vjp(fn, *primals, has_aux=False):
    """``(out, vjp_fn)``: ``vjp_fn(out_bar)`` returns a cotangent per primal."""
    transformed = Transformed.of(fn)
    out = transformed(*primals)
    aux = None
    if has_aux:
        out, aux = out
    backward = transformed.then(Step("vjp", (("has_aux", has_aux),)))
    vjp_fn = VjpFunction(backward, primals, _shape_of(out))
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


class VjpFunction(TransformsItself):
    """The function ``vjp`` returns: ``vjp_fn(out_bar)`` gives a cotangent per primal.  It is the
    generated vjp function with the primals bound, so transforms apply to it as in JAX:
    ``jit(vjp_fn)`` compiles it, ``vmap(vjp_fn)(out_bars)`` gives a row of the Jacobian per
    cotangent (the primals unbatched)."""

    # what a transform other than jit and vmap applied to it says (source.unwrap)
    transform_refusal = ("the function vjp returns can be transformed by jit and vmap; to differentiate it, "
                         "write a function that calls `out, vjp_fn = tr.vjp(f, x)` and vjp_fn, and transform that")

    def __init__(self, backward: Transformed, primals: tuple, out_structure):
        self.backward = backward
        self.primals = primals
        self.out_structure = out_structure

    def __call__(self, out_bar):
        given = _shape_of(out_bar)
        if given != self.out_structure:
            raise ValueError(f"vjp_fn expects a cotangent shaped like the output: {_describe(self.out_structure)}, "
                             f"got {_describe(given)}")
        # The generated function takes the primals' leaves, then the cotangent, nested as tuples.
        generated = self.backward.compiled(*self.primals)
        flat = generated(*[leaf for p in self.primals for leaf in tree.leaves(p)], _as_generated(out_bar))
        return self._regrouped(flat)

    def _regrouped(self, flat):
        flat = flat if isinstance(flat, tuple) else (flat,)
        cotangents, position = [], 0
        for primal in self.primals:
            leaves, treedef = tree.flatten(primal)
            cotangents.append(tree.unflatten(treedef, [in_dtype_of(g, x) for g, x in
                                                       zip(flat[position:position + len(leaves)], leaves)]))
            position += len(leaves)
        return tuple(cotangents)

    def on_target(self, target: str, tiered=None) -> "VjpFunction":
        """``jit(vjp_fn)``: the same generated function, for ``target``."""
        return VjpFunction(self.backward.on_target(target, tiered=tiered), self.primals, self.out_structure)

    def vmapped(self, in_axes=0, out_axes=0):
        """``vmap(vjp_fn)``: one cotangent per example along ``in_axes``, the primals shared."""
        if any(tree.is_node(p) for p in self.primals) or self.out_structure[0] != tree.LEAF:
            raise TypeError("vmap of a vjp function takes arrays: its primals and output must be arrays, "
                            "not pytrees")
        if not isinstance(in_axes, int) or not isinstance(out_axes, int):
            raise TypeError("vmap of a vjp function takes one int in_axes and one int out_axes")
        batched = vmap(self.backward, in_axes=(None,) * len(self.primals) + (in_axes,), out_axes=out_axes)
        primals = self.primals

        def rows(out_bars):
            return self._regrouped(batched(*primals, out_bars))
        return rows


def _as_generated(value):
    """A structured cotangent as generated code takes it: tuples nested as its structure."""
    if not tree.is_node(value):
        return value
    leaves, treedef = tree.flatten(value)
    return tree.as_tuples(treedef, leaves)


def _describe(structure) -> str:
    treedef, shapes = structure
    return f"structure {treedef} with leaf shapes {list(shapes)}"


def _shape_of(value):
    """A pytree's structure with each leaf's shape: what a cotangent must share with the output."""
    leaves, treedef = tree.flatten(value)
    return treedef, tuple(np.shape(leaf) for leaf in leaves)
