"""Forward-mode user API: ``jvp`` (JAX's meaning); ``jacfwd`` is built on it in derived.py.

The derivative is generated source (``transforms/jvp.py``): ``jvp_f(x, y,
x_dot, y_dot) -> (out, out_dot)``.  This module checks the arguments where
Python values meet generated code, and decides from them which parameters
carry tangents (floating-point ones; an integer argument's tangent is
ignored) and how many dimensions each has (which keeps zero tangents plain).
"""
from __future__ import annotations

import functools

import numpy as np

from . import derived_code, staging, tree
from .staging import Step
from .transformed import Boundary, Transformed, refuse_complex


def jvp(fn, primals, tangents):
    """``(fn(*primals), d/dt fn(primals + t * tangents) at t = 0)``.  As in JAX, a primal may be a
    pytree (a tuple, list, dict or named tuple of arrays), with a tangent of its structure; the
    output and its tangent keep the structure the function returns."""
    if isinstance(primals, (tuple, list)) and any(tree.is_node(p) for p in primals):
        return _jvp_of_pytrees(fn, tuple(primals), tangents)
    primals, tangents = _check_pairs(fn, primals, tangents)
    active = tuple(i for i, p in enumerate(primals) if _is_float(p))
    forward = _forward(fn, active, tuple(np.ndim(p) for p in primals))
    return forward(*primals, *tangents)


def _jvp_of_pytrees(fn, primals: tuple, tangents):
    """jvp with pytree primals: the generated jvp takes one parameter per leaf (the function is
    specialised on the primals' structures), then one tangent per leaf, in the same order."""
    if not isinstance(tangents, (tuple, list)) or len(tangents) != len(primals):
        raise ValueError(f"jvp got {len(primals)} primals; pass a tuple of as many tangents, each of its "
                         f"primal's structure")
    base = Transformed.of(fn)
    if base.static_argnums:
        raise TypeError(f"jvp with pytree primals of {base!r}: apply jvp to the function before static arguments")
    if base.boundaries:     # grad(f), vmap(f): a plain function calling it, whose call takes the structures
        fn = base = derived_code.called_from_code(base)
    names = list(base.signature.parameters)
    if len(primals) != len(names):
        raise TypeError(f"jvp of a function of {len(names)} arguments got {len(primals)} primals")
    primal_leaves, tangent_leaves = [], []
    for i, (p, t) in enumerate(zip(primals, tangents)):
        p_leaves, p_def = tree.flatten(p)
        t_leaves, t_def = tree.flatten(t)
        if p_def != t_def:
            raise ValueError(f"the tangent for argument {i} has the structure {t_def}, but its primal has "
                             f"{p_def}; a tangent must have its primal's structure")
        primal_leaves += p_leaves
        tangent_leaves += t_leaves
    flat_primals, flat_tangents = _check_leaves(base, primal_leaves, tangent_leaves)
    active = tuple(k for k, leaf in enumerate(flat_primals) if _is_float(leaf))
    forward = _forward(fn, active, tuple(np.ndim(leaf) for leaf in flat_primals))
    generated = forward.compiled(*primals)       # specialised on the primals' structures
    out, out_dot = generated(*flat_primals, *flat_tangents)
    returned = staging.result_structure(base.__transformer_fn__, (), None, forward.structures(primals))
    if returned is not None:
        out, out_dot = tree.rebuilt(returned, out), tree.rebuilt(returned, out_dot)
    return out, out_dot


def _check_leaves(base, primal_leaves, tangent_leaves):
    """The leaves' tangents checked as _check_pairs checks plain arguments'."""
    names = [f"leaf {k}" for k in range(len(primal_leaves))]
    refuse_complex(base.__transformer_fn__, primal_leaves, names)
    refuse_complex(base.__transformer_fn__, tangent_leaves, [f"the tangent of {name}" for name in names])
    checked = []
    for k, (p, t) in enumerate(zip(primal_leaves, tangent_leaves)):
        if not _is_float(p):
            checked.append(0.0)
            continue
        if not _is_numeric(t) or np.shape(t) != np.shape(p):
            raise ValueError(f"the tangent of leaf {k} must be a number or array of its primal's shape "
                             f"{np.shape(p)}")
        dtype = np.result_type(p)
        # a 0-d array's tangent is a 0-d array too (a[()] reads it as such), a number's a number
        checked.append(np.asarray(t, dtype=dtype) if np.ndim(p) or isinstance(p, np.ndarray)
                       else dtype.type(t) if isinstance(p, np.generic) else float(t))
    return list(primal_leaves), checked


@functools.lru_cache(maxsize=256)
def _forward(fn, active: tuple, ndims: tuple) -> Transformed:
    # one Transformed per (function, active set, ranks), so its build is reused across calls
    base = Transformed.of(fn).stepwise()    # its chain is rebuilt below
    n_primals = len(base.signature.parameters)
    inner = tuple(OnPrimals(b, n_primals) for b in base.boundaries)
    base = Transformed(base.__transformer_fn__, base.steps, base.target, base.static_argnums, inner, base.tiered)
    return base.then(Step("jvp", (("active", active), ("ndims", ndims))))


class OnPrimals(Boundary):
    """A boundary of what jvp wraps, seeing the jvp function's calls as its own.

    The jvp function takes the primals then one tangent per primal, and returns
    ``(out, out_dot)``: the boundary checks the primals (a tangent has its primal's
    shape, which ``_check_pairs`` has seen to) and reshapes the output and its tangent
    alike.  So ``jvp(vmap(f))`` is the batched jvp: each tangent batched as its primal.
    """

    def __init__(self, boundary: Boundary, n_primals: int):
        self.boundary = boundary
        self.n_primals = n_primals

    def before(self, args):
        primals = self.boundary.before(args[:self.n_primals])
        return tuple(primals) + tuple(args[self.n_primals:])

    def after(self, result, args):
        out, out_dot = result
        primals = args[:self.n_primals]
        return self.boundary.after(out, primals), self.boundary.after(out_dot, primals)


def _check_pairs(fn, primals, tangents):
    for what, value in (("primals", primals), ("tangents", tangents)):
        if not isinstance(value, (tuple, list)):
            raise TypeError(f"jvp {what} must be a tuple (one entry per argument), got {type(value).__name__}")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp got {len(primals)} primals but {len(tangents)} tangents; pass one tangent per "
                         f"primal (any value for an integer argument)")
    base = Transformed.of(fn)
    names = list(base.signature.parameters)
    n = len(names)
    if len(primals) != n:
        raise TypeError(f"jvp of a function of {n} arguments got {len(primals)} primals")
    refuse_complex(base.__transformer_fn__, primals, names)
    refuse_complex(base.__transformer_fn__, tangents, [f"the tangent of {name}" for name in names])
    checked = []
    for i, (p, t) in enumerate(zip(primals, tangents)):     # pytree primals took _jvp_of_pytrees' way
        if not _is_float(p):
            checked.append(0.0)          # an integer argument: its tangent is ignored
            continue
        if not _is_numeric(t):
            raise TypeError(f"the tangent for argument {i} must be a number or array, got {type(t).__name__}")
        if np.shape(t) != np.shape(p):
            raise ValueError(f"the tangent for argument {i} has shape {np.shape(t)}, but the primal has shape "
                             f"{np.shape(p)}; a tangent must have its primal's shape")
        dtype = np.result_type(p)
        # a 0-d array's tangent is a 0-d array too (a[()] reads it as such), a number's a number
        checked.append(np.asarray(t, dtype=dtype) if np.ndim(p) or isinstance(p, np.ndarray)
                       else dtype.type(t) if isinstance(p, np.generic) else float(t))
    return tuple(primals), tuple(checked)


def _is_float(value) -> bool:
    if tree.is_node(value):
        return False
    return np.issubdtype(np.result_type(value), np.inexact)


def _is_numeric(value) -> bool:
    if isinstance(value, (str, bytes, tuple, list, dict)) or value is None:
        return False
    return np.issubdtype(np.asarray(value).dtype, np.number)


def _zeros(value):
    """A zero tangent for ``value``, in its floating-point precision (float64 for any other)."""
    dtype = np.result_type(value) if _is_float(value) else np.float64
    return np.zeros(np.shape(value), dtype) if np.ndim(value) else dtype.type(0) if isinstance(value, np.generic) \
        else 0.0
