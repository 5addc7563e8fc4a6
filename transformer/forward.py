"""Forward-mode user API: ``jvp`` and ``jacfwd`` (JAX meanings).

The derivative is generated source (``transforms/jvp.py``): ``jvp_f(x, y,
x_dot, y_dot) -> (out, out_dot)``.  This module checks the arguments where
Python values meet generated code, and decides from them which parameters
carry tangents (floating-point ones; an integer argument's tangent is
ignored) and how many dimensions each has (which keeps zero tangents plain).
"""
from __future__ import annotations

import functools

import numpy as np

from . import staging, tree
from .staging import Step
from .transformed import Boundary, Transformed, refuse_complex
from .transforms import jvp as _jvp_transform  # noqa: F401  (registers the transform)


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


def jacfwd(fn, argnums=0):
    """A function computing the Jacobian of ``fn`` by forward mode.

    The Jacobian of an output of shape ``S`` with respect to an argument of
    shape ``A`` has shape ``S + A``.  As in JAX, a pytree output gives its
    structure with a Jacobian per leaf, and a tuple ``argnums`` a tuple of
    those inside it: ``jac[i][j]`` is d out_i / d arg_j.  Columns come one jvp
    call each, a basis tangent at a time.
    """
    from .derived import Jacobian, _Derived
    if isinstance(fn, Jacobian):
        return fn.forward(argnums)        # jacfwd(jacrev(f)): forward over reverse, a Hessian
    if isinstance(fn, _Derived):
        raise TypeError(f"jacfwd of {fn.what} is not supported; differentiate the function inside it")
    several = isinstance(argnums, tuple)
    wanted = argnums if several else (argnums,)

    @functools.wraps(fn)
    def jacobian(*args):
        n = len(args)
        positions = []
        for i in wanted:
            if not isinstance(i, int) or not -n <= i < n:
                raise ValueError(f"argnums {i!r} is out of range for {n} arguments")
            if not tree.is_node(args[i]) and not _is_float(args[i]):
                raise TypeError(f"jacfwd requires real-valued inputs, but argument {i % n} has dtype "
                                f"{np.result_type(args[i])}; pass floats, e.g. np.asarray(x, dtype=float)")
            positions.append(i % n)
        if any(tree.is_node(a) for a in args):
            return _jacobian_of_pytrees(fn, args, positions, several)
        args, _ = _check_pairs(fn, tuple(args), tuple(_zeros(a) for a in args))
        forward = _forward(fn, tuple(sorted(set(positions))), tuple(np.ndim(a) for a in args))
        per_argument = [_jacobian(forward, args, i) for i in positions]     # each: (treedef, leaf blocks)
        treedef = per_argument[0][0]
        # JAX's nesting: the output's structure outside, the arguments' tuple inside (jac[i][j])
        leaves = [tuple(blocks[k] for _, blocks in per_argument) if several else per_argument[0][1][k]
                  for k in range(treedef.num_leaves)]
        return tree.unflatten(treedef, leaves)

    # functools.wraps names it after fn, but it is no wrapper a transform may see through to fn
    del jacobian.__wrapped__
    jacobian.transform_refusal = ("jacfwd is computed by calling generated code once per basis vector, so it "
                                  "cannot be transformed again; transform the function inside it instead (e.g. "
                                  "tr.hessian(f) rather than tr.jacfwd(tr.jacfwd(f)))")
    return jacobian


def _jvp_of_pytrees(fn, primals: tuple, tangents):
    """jvp with pytree primals: the generated jvp takes one parameter per leaf (the function is
    specialised on the primals' structures), then one tangent per leaf, in the same order."""
    if not isinstance(tangents, (tuple, list)) or len(tangents) != len(primals):
        raise ValueError(f"jvp got {len(primals)} primals; pass a tuple of as many tangents, each of its "
                         f"primal's structure")
    base = Transformed.of(fn)
    if base.boundaries or base.static_argnums:
        raise TypeError(f"jvp with pytree primals of {base!r}: apply jvp to the function before vmap, pmap "
                        f"or static arguments")
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
        checked.append(np.asarray(t, dtype=dtype) if np.ndim(p) else dtype.type(t) if isinstance(p, np.generic)
                       else float(t))
    return list(primal_leaves), checked


@functools.lru_cache(maxsize=256)
def _forward(fn, active: tuple, ndims: tuple) -> Transformed:
    # one Transformed per (function, active set, ranks), so its build is reused across calls
    base = Transformed.of(fn)
    base.refuse_transform("jvp")        # its chain is rebuilt below: a derived function's is not what it computes
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


def _jacobian_of_pytrees(fn, args: tuple, positions: list, several: bool):
    """jacfwd with pytree arguments (JAX's nesting: the output's structure outside, then the tuple of
    argnums, then each argument's structure), one pytree jvp per element of each differentiated leaf."""
    zero = [tree.map(_zeros, a) if tree.is_node(a) else _zeros(a) for a in args]
    out_def, per_position = None, []
    for i in positions:
        leaves, arg_def = tree.flatten(args[i])
        blocks_per_leaf = []          # per leaf of args[i]: per output leaf, its block
        for j, leaf in enumerate(leaves):
            if not _is_float(leaf):
                raise TypeError(f"jacfwd requires real-valued inputs, but leaf {j} of argument {i} has dtype "
                                f"{np.result_type(leaf)}")
            columns, out = [], None
            for k in range(int(np.size(leaf))):
                basis = np.zeros(np.size(leaf), dtype=np.result_type(leaf))
                basis[k] = 1.0
                tangent_leaves = [_zeros(other) for other in leaves]
                tangent_leaves[j] = basis.reshape(np.shape(leaf)) if np.ndim(leaf) else basis[0]
                tangents = list(zero)
                tangents[i] = tree.unflatten(arg_def, tangent_leaves) if tree.is_node(args[i]) else tangent_leaves[0]
                out, column = jvp(fn, args, tuple(tangents))
                columns.append(tree.leaves(column))
            out_leaves, out_def = tree.flatten(out)
            blocks_per_leaf.append([_assemble([c[o] for c in columns], out_leaf, leaf)
                                    for o, out_leaf in enumerate(out_leaves)])
        per_position.append([tree.unflatten(arg_def, [blocks[o] for blocks in blocks_per_leaf])
                             for o in range(out_def.num_leaves)])
    leaves = [tuple(blocks[o] for blocks in per_position) if several else per_position[0][o]
              for o in range(out_def.num_leaves)]
    return tree.unflatten(out_def, leaves)


def _jacobian(forward, args, i):
    """The output's structure and, per output leaf, d leaf / d args[i] (shape leaf.shape + x.shape)."""
    x = args[i]
    tangents = [_zeros(a) for a in args]
    columns = []
    out = None
    for k in range(int(np.size(x))):
        basis = np.zeros(np.size(x), dtype=np.result_type(x))    # x's precision: float32 stays float32
        basis[k] = 1.0
        tangents[i] = basis.reshape(np.shape(x)) if np.ndim(x) else basis[0] if isinstance(x, np.generic) else 1.0
        out, column = forward(*args, *tangents)
        columns.append(tree.leaves(column))
    out_leaves, treedef = tree.flatten(out)
    return treedef, [_assemble([c[j] for c in columns], o, x) for j, o in enumerate(out_leaves)]


def _assemble(columns, out, x):
    """Columns d out / d x[k] (one per element k of x) -> an array of shape out.shape + x.shape, in
    the precision of out and x (as JAX's: float32 stays float32)."""
    stacked = np.stack([np.asarray(c, dtype=np.result_type(out, x)) for c in columns], axis=-1)
    return stacked.reshape(np.shape(out) + np.shape(x))


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
    for i, (p, t) in enumerate(zip(primals, tangents)):
        if tree.is_node(p):
            raise TypeError(f"argument {i} is a {type(p).__name__}: jvp takes arrays and numbers "
                            f"(pytree arguments are not supported yet)")
        if not _is_float(p):
            checked.append(0.0)          # an integer argument: its tangent is ignored
            continue
        if not _is_numeric(t):
            raise TypeError(f"the tangent for argument {i} must be a number or array, got {type(t).__name__}")
        if np.shape(t) != np.shape(p):
            raise ValueError(f"the tangent for argument {i} has shape {np.shape(t)}, but the primal has shape "
                             f"{np.shape(p)}; a tangent must have its primal's shape")
        dtype = np.result_type(p)
        checked.append(np.asarray(t, dtype=dtype) if np.ndim(p) else dtype.type(t) if isinstance(p, np.generic)
                       else float(t))
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
