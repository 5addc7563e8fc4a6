"""Source transforms: each takes core form and returns core form.

That closure is what makes composition work: ``grad(grad(f))`` is the vjp
transform applied to the output of the vjp transform.  Each transform lives
in its own module and registers itself in ``TRANSFORMS`` by name.  The
modules are imported on the first lookup of a name not yet registered, so
the user API (``batching.py``, ``parallel.py``...) imports none of them just
to have its step registered.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

from ..core_form import CoreFunction


class _Transforms(dict):
    """step name -> function(core, **options) -> core"""

    def __missing__(self, name: str):
        load_all()
        if not dict.__contains__(self, name):
            raise KeyError(name)
        return dict.__getitem__(self, name)

    def __iter__(self):          # every step, for a listing (transformer check)
        load_all()
        return dict.__iter__(self)


TRANSFORMS: dict[str, Callable[..., CoreFunction]] = _Transforms()
# steps that are parts of a public transform (pmap_shard, pick), not one a user names
INTERNAL: set[str] = set()


def register(name: str, internal: bool = False):
    def decorate(fn):
        TRANSFORMS[name] = fn
        if internal:
            INTERNAL.add(name)
        return fn
    return decorate


def load_all() -> None:
    """Import every transform module of this package (each registers its steps)."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")
