"""``show(f)``: the generated source of a transformed function."""
from __future__ import annotations

from . import staging


def show(fn, *static_args, target: str | None = None) -> str:
    """The generated module text for ``fn`` (a transformed function, or a plain one)."""
    if hasattr(fn, "source") and hasattr(fn, "target") and target in (None, fn.target):
        return fn.source(*static_args)
    base = getattr(fn, "__transformer_fn__", fn)
    steps = tuple(getattr(fn, "steps", ()))
    return staging.generated_source(base, steps, target or "python")
