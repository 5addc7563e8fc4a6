"""``jit``: compile a function's generated source with a backend.

``jit(f)`` normalizes ``f`` (and whatever transforms it carries) to core form,
lowers it for the target and compiles it; numba specialises per argument
type as usual.  Static arguments are baked in as constants: a new value
builds (and caches) a new module.
"""
from __future__ import annotations

import functools

from .transformed import Transformed, TransformsItself


def jit(fn=None, *, static_argnums=(), target="cpu", tiered=None):
    """Compile ``fn`` (usable as ``@jit`` or ``@jit(static_argnums=...)``).

    On the cpu target the first calls run on the python tier while numba compiles in a background
    process (transformer/tiers.py); ``tiered=False`` (or ``TRANSFORMER_TIERED=0``) waits for the
    compile instead."""
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums, target=target, tiered=tiered)
    from . import backends
    if target not in backends.targets():
        raise ValueError(f"unknown target {target!r}; choose one of {', '.join(backends.targets())}")
    if isinstance(fn, TransformsItself):      # jit(vjp_fn): the generated vjp function, compiled
        return fn.on_target(target, tiered)
    return Transformed.of(fn).on_target(target, static_argnums, tiered)
