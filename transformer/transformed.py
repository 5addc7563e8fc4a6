"""``Transformed``: what every transform returns.

It holds the user's function, the chain of source transforms applied to it
(``steps``), the target that runs the generated code, and the Python-side
``boundaries`` — argument checks and result reshaping that each transform
needs where plain Python values enter and leave generated code.  ``jit`` of a
``Transformed`` keeps its steps and boundaries and changes only the target,
so ``jit(grad(f))`` and ``grad(jit(f))`` compile the same generated function.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from . import emit, staging, tiers, tree
from .errors import Location, TransformError



def _is_structure(value) -> bool:
    """A pytree node or None: each leaf is its own parameter of generated code, and None is a node
    without leaves (as in JAX), so a function is specialised on which of its arguments are None."""
    return value is None or tree.is_node(value)


def _is_complex(value) -> bool:
    return isinstance(value, (complex, np.complexfloating)) or \
        isinstance(value, np.ndarray) and value.dtype.kind == "c"


def refuse_complex(fn, args, names) -> None:
    """Complex numbers are outside what the transforms handle (their rules are written for real
    arguments): a complex argument, or a complex leaf of a pytree argument, is refused before any
    code runs, naming the argument, rather than give a derivative or a batch that silently drops
    the imaginary part.  ``names[i]`` names ``args[i]``."""
    for i, value in enumerate(args):
        if _is_structure(value):
            if not any(_is_complex(leaf) for leaf in tree.leaves(value)):
                continue
        elif not _is_complex(value):
            continue
        code = getattr(fn, "__code__", None)
        where = Location(code.co_filename, code.co_firstlineno) if code is not None else None
        name = names[i] if i < len(names) else f"argument {i}"
        dtype = np.result_type(*tree.leaves(value)) if _is_structure(value) else np.result_type(value)
        raise TransformError(f"argument {name!r} of {getattr(fn, '__qualname__', fn)!r} is complex ({dtype}): "
                             f"transformer's transforms (grad, jvp, vmap, jit) take real floating-point and "
                             f"integer arguments only", where,
                             "pass the real and imaginary parts as two real arrays")


class Boundary:
    """Python-side work one transform does around the generated function."""

    def before(self, args: tuple) -> tuple:
        return args

    def after(self, result, args: tuple):
        return result

    def check_result(self, result) -> None:
        """A check of the result as the caller gets it (a dict or list rebuilt from generated code's
        tuples), after every ``after``."""

    def nested_in(self, outer_axes) -> "Boundary":
        """This boundary inside a vmap over ``outer_axes``: a vmap's or pmap's leaves out the axes the
        outer vmap maps over when it checks its own (batching.VmapBoundary, parallel.PmapBoundary)."""
        return self


class TransformsItself:
    """A function transformer returns that knows its own jit and vmap (the function ``vjp`` returns:
    differentiate.VjpFunction), so the user API of those transforms need not know its class."""

    def on_target(self, target: str, tiered=None):
        raise NotImplementedError

    def vmapped(self, in_axes=0, out_axes=0):
        raise NotImplementedError


class Transformed:
    def __init__(self, base, steps=(), target="python", static_argnums=(), boundaries=(), tiered=None):
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        self.__transformer_fn__ = base
        self.steps = tuple(steps)
        self.target = target
        self.static_argnums = tuple(sorted(static_argnums))
        self.boundaries = tuple(boundaries)
        self.tiered = tiered      # the cpu target's tiering (transformer/tiers.py); None: the environment's
        self.signature = inspect.signature(base)
        self._built: dict = {}
        self._n_params = len(self.signature.parameters)
        # the generated callable when no argument is static or a container, per the arguments'
        # ranks: then the lookup by key below finds the same one, and a call skips it (the ranks
        # stay in the key: staging's checks of rows read after writes depend on them)
        self._generated_for_plain: dict = {}
        self._specialised_for: dict = {}       # id of a built function -> its (static, structures)
        self._result_structures: dict = {}     # id of a built function -> the structure its result is rebuilt as
        functools.update_wrapper(self, base, updated=())
        del self.__wrapped__  # source.unwrap must see the base function, not this wrapper
        n_params = len(self.signature.parameters)
        for i in self.static_argnums:
            if not -n_params <= i < n_params:
                raise ValueError(f"static_argnums {i} is out of range for {n_params} parameters")

    @classmethod
    def of(cls, fn) -> "Transformed":
        """``fn`` itself if already transformed, the plain function calling it if it has a code form
        (the function jacfwd or linearize returns, derived_code.py), else a plain wrapper of it."""
        if isinstance(fn, Transformed):
            return fn
        called = getattr(fn, "called_form", None)   # jacfwd's function, linearize's: called from code
        return called() if called is not None else cls(fn)

    def stepwise(self) -> "Transformed":
        """This function as a chain of steps that computes it, for a transform that rebuilds the
        chain: itself, but for a function computed from calls of generated code (derived.py), whose
        steps alone do not compute it: that one gives its code form (derived_code.py)."""
        return self

    def then(self, step: staging.Step, boundary: Boundary | None = None) -> "Transformed":
        """This chain with one more source transform on top."""
        return Transformed(self.__transformer_fn__, self.steps + (step,), self.target, self.static_argnums,
                           self.boundaries + ((boundary,) if boundary else ()), self.tiered)

    def on_target(self, target: str, static_argnums=(), tiered=None) -> "Transformed":
        return Transformed(self.__transformer_fn__, self.steps, target,
                           self.static_argnums if static_argnums == () else static_argnums,  # 0 is an index
                           self.boundaries, self.tiered if tiered is None else tiered)

    @property
    def __transformer_chain__(self) -> str:
        return staging.describe(self.steps)

    # ------------------------------------------------------------------ calling
    def static_values(self, args) -> dict:
        names = list(self.signature.parameters)
        static = {}
        for i in self.static_argnums:
            if i >= len(args):      # show(f, 10) for f(x, s): the call's arguments were meant
                raise TypeError(f"static argument {names[i]!r} is argument {i}, and only {len(args)} "
                                f"arguments were given: pass all of a call's arguments")
            value = args[i]
            try:
                hash(value)
            except TypeError:
                raise TypeError(f"static argument {names[i]!r} must be hashable, got {type(value).__name__}") from None
            static[names[i]] = value
        return static

    def structures(self, args) -> dict:
        """The pytree structure of each non-static argument that is a pytree node (tuple, list, dict, None,
        named tuple or registered class): each leaf is its own parameter of generated code, and None
        is a node without leaves (as in JAX), so a function is specialised on which arguments are None."""
        names = list(self.signature.parameters)
        found = {}
        for i, value in enumerate(args):
            if i not in self.static_argnums and _is_structure(value):
                found[names[i]] = tree.structure(value)
        return found

    def ranks(self, args) -> dict:
        """Each array or number argument's number of dimensions as the function sees it (one fewer
        for each vmap or pmap that batches it): staging's checks of views read after writes then
        tell a row picked from an array (``r = y[0]`` of a 2-d ``y``, a view) from an entry (a
        number, which shares nothing).  Empty where a step batches in another way.  The generated
        code is the same for any ranks."""
        names = list(self.signature.parameters)
        ranks = [np.ndim(value) if isinstance(value, (np.ndarray, np.generic, float, int)) else None
                 for value in args[:len(names)]]
        for step in reversed(self.steps):           # (the call's arguments go to the last step)
            if step.name not in staging.BATCHING_STEPS:
                continue
            axes = dict(step.options).get("in_axes")
            if step.name not in ("vmap", "pmap") or not isinstance(axes, (int, tuple)):
                return {}
            axes = axes if isinstance(axes, tuple) else (axes,) * len(ranks)
            if len(axes) < len(ranks) or not all(axis is None or isinstance(axis, int) for axis in axes[:len(ranks)]):
                return {}
            ranks = [rank if rank is None or axis is None else rank - 1 for rank, axis in zip(ranks, axes)]
        return {names[i]: rank for i, rank in enumerate(ranks) if rank is not None and i not in self.static_argnums}

    def compiled(self, *args):
        """The generated callable for these arguments' static values, structures and ranks."""
        static = self.static_values(args)
        structures = self.structures(args)
        ranks = self.ranks(args)
        key = (tuple((k, type(v).__name__, v) for k, v in static.items()),
               tuple(sorted(structures.items(), key=lambda kv: kv[0])), tuple(sorted(ranks.items())))
        fn = self._built.get(key)
        if fn is None:
            if ranks:       # (a module built for other ranks is this one's code: its checks run for these)
                staging.refuse_for_ranks(self.__transformer_fn__, self.steps, static, structures, ranks)
            fn = self._built[key] = self._build(static, structures, ranks)
            self._specialised_for[id(fn)] = (static, structures)
        return fn

    def _build(self, static, structures, ranks=None):
        def on(target):
            return lambda: staging.build(self.__transformer_fn__, self.steps, target, static, structures, ranks)
        if self.target == "cpu" and tiers.enabled(self.tiered):    # first calls on the python tier, compile aside
            return tiers.Tiered(on("python"), on("cpu"), lambda: staging.write_modules(
                self.__transformer_fn__, self.steps, ("python", "cpu"), static, structures, ranks)["cpu"])
        return on(self.target)()

    def wait_until_compiled(self, timeout: float | None = None) -> bool:
        """Block until the background compiles of this function's tiered builds are done (True), or
        ``timeout`` seconds passed (False); later calls then run compiled code."""
        return all(build.wait(timeout) for build in self.tiers())

    def tiers(self) -> list:
        """The tiered builds of this function called so far (transformer/tiers.py)."""
        return [fn for fn in self._built.values() if isinstance(fn, tiers.Tiered)]

    def __call__(self, *args, **kwargs):
        try:
            if kwargs or len(args) < self._n_params:
                bound = self.signature.bind(*args, **kwargs)
                bound.apply_defaults()   # generated functions take every parameter positionally
                args = bound.args
            for value in args:
                if _is_complex(value) or _is_structure(value):
                    refuse_complex(self.__transformer_fn__, args, list(self.signature.parameters))
                    break
            for boundary in reversed(self.boundaries):
                args = boundary.before(args)
            if not self.static_argnums:
                for value in args:
                    if _is_structure(value):
                        break
                else:
                    ranks = tuple(value.ndim if isinstance(value, np.ndarray) else 0 for value in args)
                    fn = self._generated_for_plain.get(ranks)
                    if fn is None:
                        fn = self._generated_for_plain[ranks] = self.compiled(*args)
                    result = fn(*args)
                    for boundary in self.boundaries:
                        result = boundary.after(result, args)
                    return self._checked(self._rebuilt(fn, result))
            fn = self.compiled(*args)
            flat = []
            for i, value in enumerate(args):
                if i in self.static_argnums:
                    continue
                if _is_structure(value):
                    flat.extend(tree.leaves(value))   # generated code takes one parameter per leaf
                else:
                    flat.append(value)
            result = fn(*flat)
            for boundary in self.boundaries:
                result = boundary.after(result, args)
            return self._checked(self._rebuilt(fn, result))
        except Exception as err:
            # an error of the generated Python (the python target) told at the user's line
            told = emit.told_at_user_line(err)
            if told is err:
                raise
            raise told from None

    def _checked(self, result):
        for boundary in self.boundaries:
            boundary.check_result(result)
        return result

    def _rebuilt(self, fn, result):
        """A list, dict or named tuple the function built and returned, rebuilt from the tuples
        generated code returns.  The structure is read (by normalizing the function) only when a
        result is a tuple, so a warm start of a function returning an array does no libcst work."""
        if not isinstance(result, tuple):
            return result
        key = id(fn)
        if key not in self._result_structures:
            static, structures = self._specialised_for.get(key, (None, None))
            self._result_structures[key] = staging.result_structure(self.__transformer_fn__, self.steps,
                                                                    static, structures)
        structure = self._result_structures[key]
        return result if structure is None else tree.rebuilt(structure, result)

    def source(self, *args) -> str:
        """The generated module text; pass example arguments when static or structured ones matter."""
        static = self.static_values(args) if self.static_argnums and args else None
        structures = self.structures(args) if args else None
        return staging.generated_source(self.__transformer_fn__, self.steps, self.target, static, structures)

    def __repr__(self) -> str:
        return f"<transformed {self.__transformer_chain__} of {self.__qualname__} on {self.target}>"
