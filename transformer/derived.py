"""Derived transforms: ``jacrev``, ``hessian``, ``hvp`` and ``linearize`` (JAX meanings).

Each is a composition of the two source transforms, reverse mode (``grad``/
``vjp``) and forward mode (``jvp``), so the generated code is one function a
reader can follow:

* ``hvp(f)(x, v)`` is forward over reverse, ``jvp(grad(f), (x,), (v,))[1]``:
  one generated function ``jvp_grad_f(x, x_dot)`` whose tangent output is
  ``H v``.
* ``jacrev(f)`` calls ``vjp_f(x, out_bar)`` once per output element, with
  ``out_bar`` a basis vector: row ``i`` of the Jacobian.
* ``hessian(f)`` is ``jacfwd(jacrev(f))``: the generated function is
  ``jvp_grad_f`` (for a scalar ``f``; ``jvp_vjp_f`` otherwise), applied to
  each basis tangent: column ``j`` of the Hessian.  For array arguments and
  a scalar ``f`` every column comes from one generated call, with ``f`` and
  its gradient computed once: ``vmap_pick_jvp_grad_f`` (vmap over the basis
  tangents, so the products with them are matrix-matrix products) from 16
  entries on, and below that the loop of ``columns_jvp_grad_f``
  (``transforms/columns.py``), whose fixed cost is smaller.

Otherwise the loop over basis vectors runs in Python around the generated
(and, under ``jit``, compiled) function.  ``tr.show(h)`` shows the function
per basis vector; ``tr.show(h, x)`` what a call with ``x`` runs.  What the steps
are depends on the arguments (which leaves carry tangents, their ranks, the
output's shape), so the chain is built per argument layout and cached; a
Hessian's sweep of plain arguments is kept by their types, shapes and dtypes,
so a call with the same ones runs the compiled sweep without calling ``f``
first to learn its output's shape.

Those Python calls are what a call from Python runs.  Transformed code that calls
one of these functions, and a transform applied to one (``tr.grad(tr.jacrev(f))``,
``tr.vmap(tr.hessian(f))``), take its code form instead (``as_code``,
derived_code.py): the same derivative written as code calling tr.vmap, tr.jvp
and tr.grad, which transforms transform as one function.
"""
from __future__ import annotations

import functools
from typing import Callable, NamedTuple

import numpy as np

from . import derived_code, staging, tree
from .differentiate import _check_argnums
from .errors import Location, TransformError
from .forward import _check_pairs, _forward, _is_float, _zeros, jvp
from .staging import Step
from .transformed import Boundary, Transformed


# From this many entries of the swept argument on, hessian runs vmap of the jvp-of-grad function
# over the basis; below it, the loop of transforms/columns.py, whose fixed cost is smaller (vmap's
# code moves axes and broadcasts unbatched values whatever the size).  Measured on
# benchmarks/bench_hessian.py's function at several sizes and on the test corpus: they meet near 16.
_VMAP_FROM = 16


class _Derived(Transformed):
    """A function computed from calls of one generated function (see the module docstring).  A
    transform of it, or transformed code calling it, takes its code form instead (``as_code``)."""

    def __init__(self, base: Transformed):
        super().__init__(base.__transformer_fn__, base.steps, base.target, base.static_argnums, base.boundaries,
                         base.tiered)
        self.base = base
        self._chains: dict = {}
        self._code: dict = {}        # the argument structures -> the code form
        self._called = None
        self._through = None

    def tiers(self) -> list:
        """The tiered builds of the generated functions this one calls (transformer/tiers.py)."""
        return [build for chain in self._chains.values() for build in chain.tiers()]

    # a subclass says which steps its generated function needs for these
    # arguments (None: no example arguments, as for tr.show(f))
    def steps_for(self, args, layout, out) -> tuple:
        raise NotImplementedError

    def rebuilt(self, base: Transformed) -> "_Derived":
        raise NotImplementedError

    def on_target(self, target: str, static_argnums=(), tiered=None) -> "_Derived":
        return self.rebuilt(self.base.on_target(target, static_argnums, tiered))

    # a subclass writes itself as code: derived_code.written's kind and argnums
    def written(self, fun, arity: int, structures=None):
        raise NotImplementedError

    def as_code(self, structures: tuple | None = None) -> Transformed:
        """This function written as code that calls tr.jvp, tr.grad and tr.vmap (derived_code.py),
        which transforms transform as one function: its steps alone are not what it computes.
        ``structures``: the TreeDef of each argument, where transformed code passes tuples, lists or
        dicts (one code form per structure)."""
        if structures not in self._code:
            self._code[structures] = _code_form(self.base, lambda fun, n: self.written(fun, n, structures),
                                                structures)
        return self._code[structures]

    def called_form(self) -> Transformed:
        """The plain function that calls this one (derived_code.called), which a transform from
        Python transforms: its call inlines the code form for the arguments it is given."""
        if self._called is None:
            self._called = _called_form(self, self.base)
        return self._called

    def through_code(self) -> "_Derived":
        """This derivative of the plain function that calls the transformed one, at tuple, list or
        dict arguments: that call inlines the transform for their structures (grad's, vmap's...),
        where the transformed function's own generated code takes arrays."""
        if self._through is None:
            self._through = self.rebuilt(derived_code.called_from_code(self.base))
        return self._through

    def stepwise(self) -> Transformed:
        return self.called_form()

    def then(self, step, boundary=None):
        return self.called_form().then(step, boundary)

    def chain(self, args, out=None, layout=None) -> Transformed:
        layout = layout or _Layout(self.base, args)
        steps = self.steps_for(args, layout, out)
        chain = self._chains.get(steps)
        if chain is None:
            chain = self._chains[steps] = Transformed(self.base.__transformer_fn__, self.base.steps + steps,
                                                      self.base.target, self.base.static_argnums,
                                                      tiered=self.base.tiered)
        return chain

    def bind(self, args, kwargs) -> tuple:
        if kwargs or len(args) < len(self.signature.parameters):
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args = bound.args
        for boundary in reversed(self.base.boundaries):
            args = boundary.before(args)          # the inner transforms' argument checks
        return tuple(args)

    def source(self, *args) -> str:
        if args:
            return self.chain(args, self.output(args)).source(*args)
        return Transformed(self.base.__transformer_fn__, self.base.steps + self.steps_for(None, None, None),
                           self.base.target, self.base.static_argnums).source()

    @property
    def __transformer_chain__(self) -> str:
        # its options too: the cache's key of code that calls it reads this (cache._visit_value), so
        # jacrev(f, argnums=0) and jacrev(f, argnums=1) bound to one name must not share a module
        return f"{self.what}{self.options()} of {self.base.__transformer_chain__}"

    def options(self) -> str:
        return ""

    def __repr__(self) -> str:
        return f"<{self.what} of {self.__qualname__} on {self.target}>"

    def output(self, args):
        return None


def _called_form(fun, base: Transformed) -> Transformed:
    """``fun``, a derived function of ``base``, as the plain function that calls it from code."""
    _check_writable(base)
    return derived_code.called_from_code(base, fun)


def _check_writable(base: Transformed) -> None:
    """A derivative of ``base`` is written as code for plain positional parameters, not static ones."""
    if base.static_argnums:
        raise TransformError(f"{base.__qualname__} has static_argnums, so its derivative cannot be written "
                             f"as code that a transform applies to; transform the function without them")
    parameters = list(base.signature.parameters.values())
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters):
        raise TransformError(f"{base.__qualname__} takes * or keyword-only parameters, so its derivative cannot "
                             f"be written as code that a transform applies to; give it plain parameters")


def _code_form(base: Transformed, written, structures: tuple | None = None) -> Transformed:
    """``written(fun, arity)``'s function, as a plain one: ``fun`` is ``base``'s user function, or
    ``base`` itself when it is already transformed, which the code then calls.  ``structures``: the
    TreeDef of each argument, where transformed code passes tuples, lists or dicts (only transformed
    code calls that form, so it has no boundary: its caller knows the structures)."""
    _check_writable(base)
    parameters = list(base.signature.parameters.values())
    fun = base.__transformer_fn__ if not base.steps and base.target == "python" and not base.boundaries else base
    given = {p.name: t for p, t in zip(parameters, structures or ()) if t.kind != "leaf"}
    code = Transformed(written(fun, len(parameters)), (), base.target, (), () if given else (_OneArrayEach(base),),
                       base.tiered)
    if not base.steps and staging.normalize(base.__transformer_fn__, None, given or None).returns_structure:
        raise TransformError(f"{base.__qualname__} returns a tuple, list or dict: the Jacobian that transformed "
                             f"code calls, or that a transform applies to, is written for a function returning one "
                             f"array; return one, or take the Jacobian outside and pass it in")
    return code


class _OneArrayEach(Boundary):
    """The code form's arguments: arrays and numbers (it reads each argument's size and shape)."""

    def __init__(self, base):
        self.base = base

    def before(self, args):
        if any(tree.is_node(arg) for arg in args):
            raise TypeError(f"a transform of a Jacobian of {self.base.__qualname__} takes arrays and numbers; "
                            f"pass each array of a tuple, list or dict as an argument of its own")
        return args


class _Layout:
    """Where each argument's leaves sit among the generated function's flat parameters."""

    def __init__(self, base: Transformed, args):
        self.args = args
        self.positions, self.leaves = [], []
        for i, arg in enumerate(args):
            if i in base.static_argnums:
                self.positions.append([])
                continue
            leaves = tree.leaves(arg) if tree.is_node(arg) else [arg]
            self.positions.append(list(range(len(self.leaves), len(self.leaves) + len(leaves))))
            self.leaves += leaves
        self.structured = any(tree.is_node(a) for a in args)
        if self.structured and base.steps:
            raise TypeError("derivatives of an already transformed function take arrays and numbers; "
                            "pytree arguments work when the function is a plain one")

    @classmethod
    def plain(cls, args) -> "_Layout":
        """The layout of arguments ``_plain_key`` accepts: one leaf each, in order."""
        layout = cls.__new__(cls)
        layout.args, layout.leaves, layout.structured = args, list(args), False
        layout.positions = [[i] for i in range(len(args))]
        return layout

    def of(self, argnums) -> list[int]:
        return [leaf for i in argnums for leaf in self.positions[i]]

    def ndims(self) -> tuple:
        return tuple(np.ndim(leaf) for leaf in self.leaves)


def _argnums(fn, argnums, n) -> tuple:
    _check_argnums(fn, argnums)
    return tuple(i % n for i in (argnums if isinstance(argnums, tuple) else (argnums,)))


def _check_float(args, argnums, layout, what):
    for i in argnums:
        for leaf in (layout.leaves[p] for p in layout.positions[i]):
            if isinstance(leaf, float) or (isinstance(leaf, np.ndarray) and leaf.dtype.kind in "fc"):
                continue        # the common cases, without NumPy's slower dtype machinery
            if not np.issubdtype(np.result_type(leaf), np.inexact):
                raise TypeError(f"{what} requires real-valued inputs, but argument {i} has dtype "
                                f"{np.result_type(leaf)}; pass floats, e.g. np.asarray(x, dtype=float)")


def _precision(*values) -> np.dtype:
    """The floating-point dtype of a derivative of these values: float32 stays float32, as in JAX."""
    dtype = np.result_type(*values)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float64)


def _basis(like, k):
    """The k-th basis vector shaped like ``like``, in its precision (1.0 for a scalar)."""
    if np.ndim(like) == 0:
        return _precision(like).type(1) if isinstance(like, np.generic) else 1.0
    e = np.zeros(np.shape(like), _precision(like))
    e.flat[k] = 1.0
    return e


def _plain_key(base: Transformed, args):
    """What the generated code of plain arguments (no static ones, no pytrees) depends on: each
    argument's type and, for arrays, shape and dtype.  None for other arguments."""
    if base.static_argnums:
        return None
    key = []
    for arg in args:
        if isinstance(arg, np.ndarray):
            key.append((type(arg), arg.shape, arg.dtype))
        elif tree.is_node(arg):
            return None
        else:
            key.append(type(arg))
    return tuple(key)


class _Sweep(NamedTuple):
    """The generated call that gives every column for the basis vectors of leaf ``q`` (``n`` entries):
    vmap's, taking ``basis`` as that leaf's tangents, or (``basis`` None) the columns loop's."""
    q: int
    n: int
    basis: np.ndarray | None
    generated: Callable
    rev_leaves: tuple


def _shape(x) -> tuple:
    return x.shape if isinstance(x, np.ndarray) else np.shape(x)


@functools.lru_cache(maxsize=8)
def _identity(n, dtype):
    """The n basis vectors that hessian's vmap sweeps, made once per size and precision (vmap
    copies its arguments on entry, so the generated code never writes into them)."""
    return np.eye(n, dtype=dtype)


def _zero(like):
    """A zero tangent or cotangent for ``like``, in its precision."""
    if np.ndim(like) == 0:
        return _precision(like).type(0) if isinstance(like, np.generic) else 0.0
    return np.zeros(np.shape(like), _precision(like))


# ------------------------------------------------------------------ Jacobians
class Jacobian(_Derived):
    """``jacrev(f, rev)``, or ``jacfwd(jacrev(f, rev), fwd)`` when ``fwd`` is set."""

    def __init__(self, base, rev, rev_several, fwd=None, fwd_several=False):
        super().__init__(base)
        self.rev, self.rev_several = rev, rev_several
        self.fwd, self.fwd_several = fwd, fwd_several
        self.what = "jacrev" if fwd is None else "jacfwd(jacrev)"
        self._sweeps_by_key: dict = {}       # _plain_key -> a Hessian's _Sweep per swept leaf
        self._per_array: dict = {}           # an output's TreeDef -> the Hessian of each of its arrays

    def rebuilt(self, base):
        return Jacobian(base, self.rev, self.rev_several, self.fwd, self.fwd_several)

    def options(self) -> str:
        return repr((self.rev, self.rev_several, self.fwd, self.fwd_several))

    def written(self, fun, arity, structures=None):
        if self.fwd is None:
            return derived_code.written("jacrev", fun, arity, self.rev, self.rev_several, structures=structures)
        return derived_code.written("hessian", fun, arity, self.fwd, self.fwd_several, (self.rev, self.rev_several),
                                    structures=structures)

    def forward(self, argnums) -> "Jacobian":
        """``jacfwd`` of this reverse-mode Jacobian: forward over reverse."""
        n = len(self.signature.parameters)
        return Jacobian(self.base, self.rev, self.rev_several, _argnums(self.__transformer_fn__, argnums, n),
                        isinstance(argnums, tuple))

    def steps_for(self, args, layout, out) -> tuple:
        scalar = out is None or not tree.is_node(out) and np.ndim(out) == 0
        if scalar:     # a scalar output: grad's code, no seed parameter
            reverse = Step("grad", (("argnums", self.rev), ("has_aux", False)))
        else:
            reverse = Step("vjp", (("has_aux", False),))
        if self.fwd is None:
            return (reverse,)
        if layout is None:
            active, ndims = self.fwd, None
        else:
            active = tuple(layout.of(self.fwd))
            ndims = layout.ndims() + (() if scalar else (np.ndim(out),))
        return reverse, Step("jvp", (("active", active), ("ndims", ndims)))

    def output(self, args):
        """The function's value (its shape decides the steps and the Jacobian's shape)."""
        out = self.base(*args)
        for leaf in tree.leaves(out):
            if not np.issubdtype(np.result_type(leaf), np.inexact):
                raise TypeError(f"{self.what} requires a real-valued output, got dtype {np.result_type(leaf)}")
        return out

    def __call__(self, *args, **kwargs):
        args = self.bind(args, kwargs)
        if self.base.steps and any(tree.is_node(a) for a in args):
            return self.through_code()(*args)
        key = _plain_key(self.base, args)
        sweeps = self._sweeps_by_key.get(key) if key is not None else None
        if sweeps is not None:          # a Hessian of arguments laid out as before: no f call, no lookups
            return self._assemble(self._swept_blocks(sweeps, list(args)), _Layout.plain(args), ())
        layout = _Layout(self.base, args)
        _check_float(args, self.rev + (self.fwd or ()), layout, self.what)
        out = self.output(args)
        flat = layout.leaves
        rev_leaves = layout.of(self.rev)
        if tree.is_node(out) and self.fwd is not None:
            return self._per_output_array(args, out)
        if tree.is_node(out):
            return self._tree_rows(self.chain(args, out, layout).compiled(*args), layout, out, rev_leaves)
        scalar = np.ndim(out) == 0
        if self._sweeps(layout, out):
            sweeps = self._sweeps_of(args, layout, out)
            if key is not None:
                self._sweeps_by_key[key] = sweeps
            return self._assemble(self._swept_blocks(sweeps, layout.leaves), layout, np.shape(out))
        generated = self.chain(args, out, layout).compiled(*args)
        # blocks[(r, q)]: d out / d leaf r (then d / d leaf q), each of shape
        # (out.size,) + leaf_r.shape (+ (leaf_q.size,))
        if self.fwd is None:
            rows = []
            for i in range(np.size(out)):
                cotangents = generated(*flat) if scalar else generated(*flat, _basis(out, i))
                cotangents = cotangents if isinstance(cotangents, tuple) else (cotangents,)
                rows.append(cotangents if scalar else [cotangents[r] for r in rev_leaves])
            blocks = {(r,): np.stack([np.asarray(row[k], dtype=_precision(out, flat[r])) for row in rows])
                      for k, r in enumerate(rev_leaves)}
        else:
            blocks = self._forward_blocks(generated, layout, out, scalar, rev_leaves)
        return self._assemble(blocks, layout, np.shape(out))

    def _per_output_array(self, args, out):
        """The Hessian of a function returning a tuple, list or dict: the Hessian of each of its
        arrays, each a function of its own (derived_code.picked), nested as JAX nests it: the
        output's structure outside."""
        treedef = tree.structure(out)
        per_array = self._per_array.get(treedef)
        if per_array is None:
            base = self.base
            fun = base.__transformer_fn__ if not base.steps and not base.boundaries else base
            per_array = self._per_array[treedef] = [
                self.rebuilt(Transformed(leaf, (), base.target, (), (), base.tiered))
                for leaf in derived_code.picked(fun, len(args), treedef)]
        return tree.unflatten(treedef, [hessian(*args) for hessian in per_array])

    def _tree_rows(self, generated, layout, out, rev_leaves):
        """jacrev of a function returning a pytree: per output leaf, one vjp per element of it (a
        basis cotangent there, zeros in the other leaves), as JAX nests it: the output's structure
        outside, the arguments' inside."""
        out_leaves, treedef = tree.flatten(out)
        zeros = [_zero(leaf) for leaf in out_leaves]
        jacobians = []
        for m, leaf in enumerate(out_leaves):
            rows = []
            for i in range(np.size(leaf)):
                seed = zeros[:m] + [_basis(leaf, i)] + zeros[m + 1:]
                rows.append(generated(*layout.leaves, tree.as_tuples(treedef, seed)))
            blocks = {(r,): np.stack([np.asarray(row[r], dtype=_precision(leaf, layout.leaves[r])) for row in rows])
                      for r in rev_leaves}
            jacobians.append(self._assemble(blocks, layout, np.shape(leaf)))
        return tree.unflatten(treedef, jacobians)

    def _sweeps(self, layout, out) -> bool:
        """Whether one generated loop computes the blocks: a Hessian (scalar output) of array leaves."""
        leaves = layout.of(self.rev) + layout.of(self.fwd or ())
        return self.fwd is not None and np.ndim(out) == 0 and all(np.ndim(layout.leaves[p]) for p in leaves)

    def _swept(self, args, layout, out, q) -> Transformed:
        """The chain whose ONE generated call gives every column for the basis vectors of leaf ``q``:
        vmap of the jvp-of-grad function over the basis (matrix-matrix products; what does not
        depend on the tangent is unbatched, so computed once), or, for a leaf of few entries, the
        loop of ``transforms/columns.py``, whose fixed cost is smaller (``_VMAP_FROM``), and which
        also runs what vmap refuses to batch."""
        n = len(layout.leaves)
        columns = (Step("columns", (("sizes", tuple(layout.of(self.rev))), ("tangent", n + q))),)
        if np.size(layout.leaves[q]) < _VMAP_FROM:
            return self._chain_of(args, out, layout, columns)
        # basis and columns batch-last, as inside vmap's code: no axis to move in or out
        in_axes = (None,) * n + tuple(-1 if p == q else None for p in range(n))
        # a vector's basis is the identity matrix, which vmap's products need not multiply by
        identity = (n + q,) if np.ndim(layout.leaves[q]) == 1 else ()
        steps = (Step("pick", (("index", 1),)),              # the tangent outputs: the columns
                 Step("vmap", (("axis_name", None), ("axis_size", None), ("identity_basis", identity),
                               ("in_axes", in_axes), ("out_axes", -1))))
        if steps not in self._chains:
            swept = self._chain_of(args, out, layout, steps)
            try:
                # the transforms run now (a tiered jit compiles only when first called), so a refusal is seen here
                swept.source(*args)
            except TransformError:
                self._chains[steps] = self._chain_of(args, out, layout, columns)
        return self._chains[steps]

    def _chain_of(self, args, out, layout, steps) -> Transformed:
        swept = self._chains.get(steps)
        if swept is None:
            base = self.chain(args, out, layout)
            swept = self._chains[steps] = Transformed(base.__transformer_fn__, base.steps + steps,
                                                      base.target, base.static_argnums, tiered=base.tiered)
        return swept

    def source(self, *args) -> str:
        if args:
            layout, out = _Layout(self.base, args), self.output(args)
            if self._sweeps(layout, out):      # what a call with these arguments runs
                return self._swept(args, layout, out, layout.of(self.fwd)[0]).source(*args)
        return super().source(*args)

    def _sweeps_of(self, args, layout, out) -> tuple:
        """Per swept leaf q, the call that gives its columns (``_swept``).  With a scalar output the
        calls depend only on the arguments' layout, types, shapes and dtypes (``_plain_key``), so
        ``__call__`` keeps them by that; should f return an array for other values of the same
        layout, the generated grad code refuses it (rt.scalar_seed)."""
        rev_leaves = tuple(layout.of(self.rev))
        sweeps = []
        for q in layout.of(self.fwd):
            swept = self._swept(args, layout, out, q)
            n = np.size(layout.leaves[q])
            # basis vector k of a vmap sweep: [..., k]
            basis = np.reshape(_identity(n, _precision(layout.leaves[q])), np.shape(layout.leaves[q]) + (n,)) \
                if swept.steps[-1].name == "vmap" else None
            sweeps.append(_Sweep(q, n, basis, swept.compiled(*args), rev_leaves))
        return tuple(sweeps)

    def _swept_blocks(self, sweeps, flat) -> dict:
        """The blocks from one generated call per leaf q (``_swept``), so f and its gradient are
        computed once, not once per column."""
        blocks = {}
        for sweep in sweeps:
            q, n = sweep.q, sweep.n
            if sweep.basis is not None:
                tangents = [sweep.basis if p == q else _zero(leaf) for p, leaf in enumerate(flat)]
                dots = sweep.generated(*flat, *tangents)                    # column k of each: [..., k]
                for j, r in enumerate(sweep.rev_leaves):
                    dtype = _precision(flat[r], flat[q])
                    blocks[(r, q)] = np.reshape(np.asarray(dots[j], dtype=dtype), (-1, n))
                continue
            zeros = [_zero(leaf) for p, leaf in enumerate(flat) if p != q]
            columns = sweep.generated(*flat, *zeros)
            for j, r in enumerate(sweep.rev_leaves):
                dtype = _precision(flat[r], flat[q])
                blocks[(r, q)] = np.asarray(columns[j], dtype=dtype).T   # (leaf_r.size, leaf_q.size)
        return blocks

    def _forward_blocks(self, generated, layout, out, scalar, rev_leaves) -> dict:
        flat = layout.leaves
        zeros = [_zero(leaf) for leaf in flat]
        seed_dot = () if scalar else (_zero(out),)
        blocks = {}
        for q in layout.of(self.fwd):
            per_output = []
            for i in range(np.size(out)):
                seed = () if scalar else (_basis(out, i),)
                columns = []
                for k in range(np.size(flat[q])):
                    tangents = list(zeros)
                    tangents[q] = _basis(flat[q], k)
                    _, dots = generated(*flat, *seed, *tangents, *seed_dot)
                    dots = dots if isinstance(dots, tuple) else (dots,)
                    columns.append([np.asarray(d, dtype=_precision(out, flat[q])) for d in
                                    (dots if scalar else [dots[r] for r in rev_leaves])])
                per_output.append(columns)
            for j, r in enumerate(rev_leaves):
                # (out.size, leaf_q.size) + leaf_r.shape -> (out.size,) + leaf_r.shape + (leaf_q.size,)
                block = np.array([[column[j] for column in columns] for columns in per_output])
                blocks[(r, q)] = np.moveaxis(block, 1, -1)
        return blocks

    def _assemble(self, blocks, layout, out_shape):
        flat = layout.leaves

        def reshaped(r, q=None):
            shape = out_shape + np.shape(flat[r]) + (() if q is None else np.shape(flat[q]))
            return blocks[(r,) if q is None else (r, q)].reshape(shape)

        def regroup(i, fill):
            """Argument i's structure with leaf position p replaced by fill(p)."""
            leaves = [fill(p) for p in layout.positions[i]]
            arg = layout.args[i]
            return tree.unflatten(tree.flatten(arg)[1], leaves) if tree.is_node(arg) else leaves[0]

        def inner(r):
            if self.fwd is None:
                return reshaped(r)
            parts = tuple(regroup(b, lambda q: reshaped(r, q)) for b in self.fwd)
            return parts if self.fwd_several else parts[0]

        result = tuple(regroup(a, inner) for a in self.rev)
        return result if self.rev_several else result[0]


def _with_aux(kind: str, fn, argnums):
    """``kind(fn, ..., has_aux=True)``: ``fn`` returns ``(output, aux)``; the result returns the
    derivative of the output and ``aux`` (derived_code.with_aux's code).  That code reads
    ``fun(...)[0]``, which of an array would be its first row: so that ``fn`` returns a pair is
    checked before, for the structures of the arguments, called or transformed."""
    base = Transformed.of(fn)
    if base.steps:
        raise TransformError(f"{kind}(..., has_aux=True) takes a function not yet transformed (jit is fine): "
                             f"{base.__qualname__} is; take {kind} of the plain function, then transform it")
    _check_writable(base)
    written = derived_code.with_aux(fn, len(base.signature.parameters), kind, argnums)
    pair = _ReturnsPair(base, kind)

    @functools.wraps(written)
    def with_aux(*args):
        pair.check(base.structures(args))
        return written(*args)       # Python: the derivative's own call takes pytrees as JAX does

    del with_aux.__wrapped__        # a transform takes the written code (called_form), not this wrapper

    def as_code(structures=None):
        """Called from transformed code: checked for the caller's structures, then inlined."""
        names = list(base.signature.parameters)
        pair.check({names[i]: t for i, t in enumerate(structures or ()) if t.kind != "leaf"})
        return Transformed(written, (), base.target, (), (), base.tiered)

    with_aux.as_code = as_code
    with_aux.called_form = lambda: Transformed(written, (), "python", (), (pair,))
    return with_aux


class _ReturnsPair(Boundary):
    """has_aux's condition: every ``return`` of the function gives a pair ``(output, aux)``."""

    def __init__(self, base, kind):
        self.base, self.kind = base, kind
        self._passed: set = set()          # the argument structures checked already (normalizing is slow)

    def check(self, structures: dict) -> None:
        key = tuple(sorted((name, str(treedef)) for name, treedef in structures.items()))
        if key in self._passed:
            return
        returned = staging.normalize(self.base.__transformer_fn__, None, structures or None).returned
        if not returned or any(r.kind != "tuple" or len(r.children) != 2 for r in returned):
            code = self.base.__transformer_fn__.__code__
            raise TransformError(f"{self.kind}(..., has_aux=True) needs {self.base.__qualname__}() to return a "
                                 f"pair (output, aux) at every return", Location(code.co_filename, code.co_firstlineno))
        self._passed.add(key)

    def before(self, args):
        self.check(self.base.structures(args))
        return args


def jacrev(fn, argnums=0, has_aux=False):
    """The Jacobian of ``fn`` by reverse mode, one vjp per output element.

    For an output of shape ``S`` and an argument of shape ``A`` it has shape
    ``S + A``; a tuple ``argnums`` gives a tuple, a pytree argument a pytree.
    A pytree output nests outside them, as in JAX: ``jac[i][j]`` is
    d out_i / d arg_j.  With ``has_aux``, ``fn`` returns ``(output, aux)`` and
    the result is ``(jacobian, aux)``.
    """
    if has_aux:
        return _with_aux("jacrev", fn, argnums)
    base = Transformed.of(fn).stepwise()       # a derived function's code form: its chain is extended
    return Jacobian(base, _argnums(fn, argnums, len(base.signature.parameters)), isinstance(argnums, tuple))


def hessian(fn, argnums=0, has_aux=False):
    """``jacfwd(jacrev(fn, argnums), argnums)``: forward over reverse, as JAX does (``has_aux``:
    ``fn`` returns ``(output, aux)``, the result ``(hessian, aux)``)."""
    if has_aux:
        return _with_aux("hessian", fn, argnums)
    return jacfwd(jacrev(fn, argnums), argnums)


# ------------------------------------------------------ forward-mode Jacobians
def jacfwd(fn, argnums=0, has_aux=False):
    """A function computing the Jacobian of ``fn`` by forward mode.

    The Jacobian of an output of shape ``S`` with respect to an argument of
    shape ``A`` has shape ``S + A``.  As in JAX, a pytree output gives its
    structure with a Jacobian per leaf, and a tuple ``argnums`` a tuple of
    those inside it: ``jac[i][j]`` is d out_i / d arg_j.  Columns come one jvp
    call each, a basis tangent at a time.  With ``has_aux``, ``fn`` returns
    ``(output, aux)`` and the result is ``(jacobian, aux)``.
    """
    if has_aux:
        return _with_aux("jacfwd", fn, argnums)
    if isinstance(fn, Jacobian) and fn.fwd is None:
        return fn.forward(argnums)        # jacfwd(jacrev(f)): forward over reverse, a Hessian
    if isinstance(fn, _Derived) or hasattr(fn, "as_code"):
        fn = Transformed.of(fn).stepwise()       # a derived function's code form, differentiated again
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

    # functools.wraps names it after fn, but it is no wrapper a transform may see through to fn:
    # a transform takes its code form (derived_code.py)
    del jacobian.__wrapped__

    def as_code(structures=None):
        base = Transformed.of(fn)
        arity = len(base.signature.parameters)
        positions = tuple(i % arity for i in wanted)
        return _code_form(base, lambda fun, n: derived_code.written("jacfwd", fun, n, positions, several,
                                                                    structures=structures), structures)

    jacobian.as_code = functools.lru_cache(maxsize=None)(as_code)
    jacobian.called_form = functools.lru_cache(maxsize=None)(lambda: _called_form(jacobian, Transformed.of(fn)))
    return jacobian


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
        tangents[i] = basis.reshape(np.shape(x)) if np.ndim(x) or isinstance(x, np.ndarray) \
            else basis[0] if isinstance(x, np.generic) else 1.0       # (a 0-d array's tangent: a 0-d array)
        out, column = forward(*args, *tangents)
        columns.append(tree.leaves(column))
    out_leaves, treedef = tree.flatten(out)
    return treedef, [_assemble([c[j] for c in columns], o, x) for j, o in enumerate(out_leaves)]


def _assemble(columns, out, x):
    """Columns d out / d x[k] (one per element k of x) -> an array of shape out.shape + x.shape, in
    the precision of out and x (as JAX's: float32 stays float32)."""
    stacked = np.stack([np.asarray(c, dtype=np.result_type(out, x)) for c in columns], axis=-1)
    return stacked.reshape(np.shape(out) + np.shape(x))


# ----------------------------------------------------- Hessian-vector products
class HessianVectorProduct(_Derived):
    """``hvp(f)(*args, v)``: ``jvp(grad(f, argnums), args, tangents)[1]`` with ``v`` as argument
    ``argnums``'s tangent (zero tangents elsewhere)."""

    what = "hvp"

    def __init__(self, base, argnum):
        super().__init__(base)
        self.argnum = argnum
        self._by_layout: dict = {}

    def rebuilt(self, base):
        return HessianVectorProduct(base, self.argnum)

    def options(self) -> str:
        return repr((self.argnum,))

    def written(self, fun, arity, structures=None):
        return derived_code.written("hvp", fun, arity, (self.argnum,), False, structures=structures)

    def steps_for(self, args, layout, out) -> tuple:
        grad = Step("grad", (("argnums", (self.argnum,)), ("has_aux", False)))
        pick = Step("pick", (("index", 1),))     # only the tangents: what only the gradient needs is dropped
        if layout is None:
            return grad, Step("jvp", (("active", (self.argnum,)), ("ndims", None))), pick
        return grad, Step("jvp", (("active", tuple(layout.of((self.argnum,)))), ("ndims", layout.ndims()))), pick

    def _generated(self, args, layout):
        # hvp is called in loops: with plain (not static, not pytree) arguments
        # the generated function depends only on their ranks, so it is looked
        # up by those, skipping the chain's rebuild per call
        if self.base.static_argnums or layout.structured:
            return self.chain(args, layout=layout).compiled(*args)
        key = layout.ndims()
        generated = self._by_layout.get(key)
        if generated is None:
            generated = self._by_layout[key] = self.chain(args, layout=layout).compiled(*args)
        return generated

    def __call__(self, *args):
        n = len(self.signature.parameters)
        fast = self._fast_call(args, n)
        if fast is not None:
            return fast
        if len(args) != n + 1:
            raise TypeError(f"hvp(f) takes f's {n} arguments and then the vector v; got {len(args)} arguments")
        *args, v = args
        args = self.bind(tuple(args), {})
        if self.base.steps and any(tree.is_node(a) for a in args):
            return self.through_code()(*args, v)
        layout = _Layout(self.base, args)
        _check_float(args, (self.argnum,), layout, "hvp")
        where = args[self.argnum]
        v_leaves, v_def = tree.flatten(v) if tree.is_node(v) else ([v], None)
        swept = layout.positions[self.argnum]
        if (v_def is None) != (not tree.is_node(where)) or \
                list(map(_shape, v_leaves)) != [_shape(layout.leaves[p]) for p in swept]:
            raise ValueError(f"hvp: v must have the structure and shapes of argument {self.argnum}")
        tangents = [None if p in swept else _zero(leaf) for p, leaf in enumerate(layout.leaves)]
        for p, leaf in zip(swept, v_leaves):
            dtype = _precision(layout.leaves[p])          # v in its argument's precision, as jvp casts it
            tangents[p] = np.asarray(leaf, dtype=dtype) if np.ndim(leaf) else \
                dtype.type(leaf) if isinstance(layout.leaves[p], np.generic) else float(leaf)
        generated = self._generated(args, layout)
        dots = generated(*layout.leaves, *tangents)
        dots = list(dots) if isinstance(dots, tuple) else [dots]
        return tree.unflatten(v_def, dots) if v_def is not None else dots[0]


    def _fast_call(self, args, n):
        """The call as the general path below makes it, for float64 arrays only (no static or
        pytree argument, no argument checks of inner transforms): hvp runs in loops, where that
        path's Python work was as long as the compiled call.  None: take the general path."""
        if len(args) != n + 1 or self.base.static_argnums or self.base.boundaries:
            return None
        *plain, v = args
        for a in args:
            if type(a) is not np.ndarray or a.dtype != np.float64:
                return None
        where = plain[self.argnum]
        if v.shape != where.shape:
            return None
        generated = self._by_layout.get(tuple(a.ndim for a in plain))
        if generated is None:
            return None
        tangents = [v if p == self.argnum else _zero(leaf) for p, leaf in enumerate(plain)]
        dots = generated(*plain, *tangents)
        return dots[0] if isinstance(dots, tuple) else dots


def hvp(fn, argnums=0):
    """``hvp(f)(x, v)``: the Hessian of scalar ``f`` times ``v``, by forward over reverse
    (about the cost of a few gradients; the Hessian itself is never formed)."""
    base = Transformed.of(fn).stepwise()       # a derived function's code form: its chain is extended
    if isinstance(argnums, tuple):
        raise TypeError("hvp differentiates one argument: pass an int argnums")
    return HessianVectorProduct(base, _argnums(fn, argnums, len(base.signature.parameters))[0])


# ------------------------------------------------------------------ linearize
def linearize(fn, *primals):
    """``(fn(*primals), f_jvp)`` with ``f_jvp(*tangents)`` the jvp at ``primals``.

    Here ``f_jvp`` runs the generated jvp function again (the primal with it)
    rather than replaying a stored linearization as JAX does: same values,
    a primal's worth more work per call.
    """
    forward = Transformed.of(fn)
    out = forward(*primals)
    return out, LinearizedJvp(forward, primals)


class LinearizedJvp:
    """The function ``linearize`` returns: ``f_jvp(*tangents)``, the jvp at the primals.  A transform
    of it transforms its code form (derived_code.py: ``tr.jvp`` at the primals, which the code
    holds as constants); at pytree primals it is refused, saying so (``transform_refusal``)."""

    def __init__(self, forward: Transformed, primals: tuple):
        self.forward = forward
        self.primals = primals
        if any(tree.is_node(p) for p in primals):
            self.transform_refusal = ("the function linearize returns at tuple, list or dict primals is written "
                                      "as code for arrays and numbers only, so it cannot be transformed; write a "
                                      "function that returns tr.jvp(f, primals, tangents)[1] and transform that")
        else:
            self.as_code = functools.lru_cache(maxsize=None)(self._code_form)
            self.called_form = functools.lru_cache(maxsize=None)(lambda: _called_form(self, self.forward))

    def cache_parts(self):
        """What code calling it computes with (cache._visit_value): its primals, held as constants
        in its code form, and the function linearized."""
        return (self.forward.__transformer_chain__, tuple(self.primals)), [self.forward.__transformer_fn__]

    def _code_form(self, structures=None) -> Transformed:
        if structures is not None and any(t.kind != "leaf" for t in structures):
            raise TransformError("the function linearize returns is written as code for tangents that are arrays "
                                 "and numbers; pass each array of a tuple, list or dict as a tangent of its own")
        primals = self.primals
        return _code_form(self.forward, lambda fun, n: derived_code.written(
            "linearized", fun, n, tuple(range(n)), True, primals=primals))

    def __call__(self, *tangents):
        return jvp(self.forward, self.primals, tangents)[1]
