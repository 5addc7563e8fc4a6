"""``show(f)``: the generated source of a transformed function."""
from __future__ import annotations

from . import tiers
from .transformed import Transformed


def show(fn, *static_args, target: str | None = None) -> str:
    """The generated module text for ``fn`` (a transformed function, or a plain one).  For a tiered
    cpu build, a first comment line says which tier ran its last call."""
    transformed = Transformed.of(fn)
    if target is not None and target != transformed.target:
        transformed = transformed.on_target(target)
    text = transformed.source(*static_args)
    if transformed.target == "cpu" and tiers.enabled(getattr(transformed, "tiered", None)):
        builds = transformed.tiers() if hasattr(transformed, "tiers") else []
        text = tiers.describe(tiers.last_called(builds)) + text
    return text


def tier_of(fn) -> str | None:
    """Which tier ran ``fn``'s last call: "python" or "compiled" (None before any call).  An
    untiered build has one tier: "python" on the python target, "compiled" on the others."""
    transformed = Transformed.of(fn)
    builds = transformed.tiers() if hasattr(transformed, "tiers") else []
    called = tiers.last_called(builds)
    if called is not None:
        return called.last_tier
    if builds or not getattr(transformed, "_built", None):
        return None
    return "python" if transformed.target == "python" else "compiled"
