"""``show(f)``: the generated source of a transformed function."""
from __future__ import annotations

from .transformed import Transformed


def show(fn, *static_args, target: str | None = None) -> str:
    """The generated module text for ``fn`` (a transformed function, or a plain one)."""
    transformed = Transformed.of(fn)
    if target is not None and target != transformed.target:
        transformed = transformed.on_target(target)
    return transformed.source(*static_args)
