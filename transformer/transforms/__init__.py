"""Source transforms: each takes core form and returns core form.

That closure is what makes composition work: ``grad(grad(f))`` is the vjp
transform applied to the output of the vjp transform.  Each transform lives
in its own module and registers itself in ``TRANSFORMS`` by name.
"""
from __future__ import annotations

from typing import Callable

from ..core_form import CoreFunction

# step name -> function(core, **options) -> core
TRANSFORMS: dict[str, Callable[..., CoreFunction]] = {}
# steps that are parts of a public transform (pmap_shard, pick), not one a user names
INTERNAL: set[str] = set()


def register(name: str, internal: bool = False):
    def decorate(fn):
        TRANSFORMS[name] = fn
        if internal:
            INTERNAL.add(name)
        return fn
    return decorate
