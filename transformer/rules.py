"""Rule tables: for each transform, which template implements each primitive.

Rules are plain Python functions in ``templates/``: one module per
transform for the primitives every NumPy program uses (``adjoints.py``,
``tangents.py``, ``batching.py``), and one module per family of primitives
(``sorting.py``: every rule of ``np.sort`` and its kin, whatever the transform).
A backend's per-primitive knowledge (how CUDA's fused kernels spell ``np.where`` on
scalars, which collectives an MPI shard runs) is a table here too, named for the
backend (``"cuda"``) and registered from a module of ``templates/`` the same way:
the backend reads the table and keeps only its machinery.
Each is registered right next to its definition with a decorator from here,
keyed by primitive name.  A primitive that a transform cannot
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
    """Register the decorated template as ``transform``'s rule for ``names`` (a backend's table is
    made by its first rule)."""
    def decorate(template):
        registered = RULES.setdefault(transform, {})
        for name in names:
            if name in registered:
                raise ValueError(f"two {transform} rules for {name!r}")
            registered[name] = template
        template.rule_options = options
        return template
    return decorate


class Machinery:
    """A rule whose work the transform's strategy does itself, with no template body to inline (vmap's
    loop over the examples, its joins of arrays...): only the options ``rule`` gives it."""

    def __init__(self, transform: str, names):
        self.__name__ = f"{transform} rule of {', '.join(names)}"


def machinery(transform: str, *names: str, **options) -> None:
    """Register ``names`` for ``transform`` with ``options`` (a ``strategy`` and what it needs) and no
    template."""
    rule(transform, *names, **options)(Machinery(transform, names))


def variant(template, given: set[str]):
    """The template that applies to a call giving the keywords ``given`` (literal ``None`` counts as
    not given): a rule registered with ``when_given={"ord": "norm_with_ord"}`` is replaced by its
    module's ``norm_with_ord`` when the call gives ``ord``."""
    options = getattr(template, "rule_options", {})
    for keyword, name in options.get("when_given", {}).items():
        if keyword in given:
            chosen = getattr(importlib.import_module(template.__module__), name)
            if not hasattr(chosen, "rule_options"):      # the variant takes its rule's options
                chosen.rule_options = {k: v for k, v in options.items() if k != "when_given"}
            return chosen
    return template


def unsupported(transform: str, names, reason: str) -> None:
    for name in names:
        UNSUPPORTED[transform][name] = reason


# Modules of templates/ that hold no rules: the definitions are inlined as user code, not applied as rules
_NOT_RULES = {"definitions"}


def table(transform: str) -> dict[str, Callable]:
    """The loaded rule table of ``transform`` or of a backend (importing its template module and every
    family's once)."""
    module = _TEMPLATE_MODULES.get(transform)
    if module is not None:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name != module:
                raise
    _load_families()
    return RULES.setdefault(transform, {})


def options(transform: str, name: str) -> dict | None:
    """The options ``name``'s rule in ``transform``'s table was registered with (None: it has none)."""
    template = table(transform).get(name)
    return None if template is None else getattr(template, "rule_options", {})


def named(transform: str, **wanted) -> frozenset[str]:
    """The primitives whose rule in ``transform``'s table was registered with every option in
    ``wanted`` (``named("cuda", strategy="unchanged")``)."""
    return frozenset(name for name, template in table(transform).items()
                     if all(getattr(template, "rule_options", {}).get(k) == v for k, v in wanted.items()))


_families_loaded = False


def _load_families() -> None:
    """Import each family module of templates/ (a family registers rules for several transforms)."""
    global _families_loaded
    if _families_loaded:
        return
    _families_loaded = True
    import pkgutil

    from . import templates
    per_transform = {m.rsplit(".", 1)[1] for m in _TEMPLATE_MODULES.values()}
    for info in pkgutil.iter_modules(templates.__path__):
        if info.name not in per_transform | _NOT_RULES and not info.name.startswith("_"):
            importlib.import_module(f"{templates.__name__}.{info.name}")


# Primitives whose derivative is zero everywhere it exists (floor, comparisons,
# argmax, shape queries...): every differentiation transform treats their
# results as constants.
ZERO_DERIVATIVE: set[str] = set()


def zero_derivative(*names: str) -> None:
    ZERO_DERIVATIVE.update(names)
