"""Rule tables: for each transform, which template implements each primitive.

Rules are plain Python functions in ``templates/`` (one module per
transform).  Each is registered right next to its definition with a decorator
from here, keyed by primitive name.  A primitive that a transform cannot
handle is listed with ``unsupported(...)`` and a reason, which becomes the
user's error message; a test checks every primitive is one or the other.
"""
from __future__ import annotations

import importlib
from typing import Callable

# transform name -> primitive name -> template function
RULES: dict[str, dict[str, Callable]] = {"adjoint": {}, "tangent": {}, "batching": {}}
# transform name -> primitive name -> why it has no rule
UNSUPPORTED: dict[str, dict[str, str]] = {"adjoint": {}, "tangent": {}, "batching": {}}

_TEMPLATE_MODULES = {
    "adjoint": "transformer.templates.adjoints",
    "tangent": "transformer.templates.tangents",
    "batching": "transformer.templates.batching",
}


def rule(transform: str, *names: str, **options):
    """Register the decorated template as ``transform``'s rule for ``names``."""
    def decorate(template):
        for name in names:
            if name in RULES[transform]:
                raise ValueError(f"two {transform} rules for {name!r}")
            RULES[transform][name] = template
        template.rule_options = options
        return template
    return decorate


def unsupported(transform: str, names, reason: str) -> None:
    for name in names:
        UNSUPPORTED[transform][name] = reason


def table(transform: str) -> dict[str, Callable]:
    """The loaded rule table of ``transform`` (importing its template module once)."""
    module = _TEMPLATE_MODULES[transform]
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name != module:
            raise
    return RULES[transform]


# Primitives whose derivative is zero everywhere it exists (floor, comparisons,
# argmax, shape queries...): every differentiation transform treats their
# results as constants.
ZERO_DERIVATIVE: set[str] = set()


def zero_derivative(*names: str) -> None:
    ZERO_DERIVATIVE.update(names)
