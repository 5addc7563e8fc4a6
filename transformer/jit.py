"""``jit``: compile a function's generated source with a backend.

``jit(f)`` normalizes ``f`` (and whatever transforms it carries) to core form,
lowers it for the target and compiles it; numba specialises per argument
type as usual.  Static arguments are baked in as constants: a new value
builds (and caches) a new module.
"""
from __future__ import annotations

import functools
import inspect

from . import staging


class Jitted:
    """A compiled function; call it like the original."""

    def __init__(self, fn, static_argnums=(), target="cpu"):
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        self.__transformer_fn__, self.steps = _base_and_steps(fn)
        self.static_argnums = tuple(sorted(static_argnums))
        self.target = target
        self._signature = inspect.signature(self.__transformer_fn__)
        self._built: dict = {}
        functools.update_wrapper(self, self.__transformer_fn__, updated=())
        del self.__wrapped__  # source.unwrap must see the base function, not us
        n_params = len(self._signature.parameters)
        for i in self.static_argnums:
            if not -n_params <= i < n_params:
                raise ValueError(f"static_argnums {i} is out of range for {n_params} parameters")

    @property
    def __transformer_chain__(self):
        return staging.describe(self.steps)

    def _static_values(self, args) -> dict:
        names = list(self._signature.parameters)
        static = {}
        for i in self.static_argnums:
            value = args[i]
            try:
                hash(value)
            except TypeError:
                raise TypeError(f"static argument {names[i]!r} must be hashable, got {type(value).__name__}") from None
            static[names[i]] = value
        return static

    def compiled(self, *args):
        static = self._static_values(args)
        key = tuple((k, type(v).__name__, v) for k, v in static.items())
        fn = self._built.get(key)
        if fn is None:
            fn = staging.build(self.__transformer_fn__, self.steps, self.target, static)
            self._built[key] = fn
        return fn

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = self._signature.bind(*args, **kwargs).args
        fn = self.compiled(*args)
        if self.static_argnums:
            args = tuple(a for i, a in enumerate(args) if i not in self.static_argnums)
        return fn(*args)

    def source(self, *static_args) -> str:
        static = self._static_values(static_args) if self.static_argnums else None
        return staging.generated_source(self.__transformer_fn__, self.steps, self.target, static)


def _base_and_steps(fn):
    """A function and the transforms already applied to it."""
    inner = getattr(fn, "__transformer_fn__", None)
    if inner is not None:
        return inner, tuple(getattr(fn, "steps", ()))
    return fn, ()


def jit(fn=None, *, static_argnums=(), target="cpu"):
    """Compile ``fn`` (usable as ``@jit`` or ``@jit(static_argnums=...)``)."""
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums, target=target)
    return Jitted(fn, static_argnums, target)
