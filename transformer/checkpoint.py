"""``tr.checkpoint`` (also ``tr.remat``), as JAX's: differentiate a function without taping its
forward values; the backward sweep recomputes them.

A long loop whose body is checkpointed keeps, per iteration, only what the body is called with,
where plain reverse mode tapes every intermediate value the body's rules read.  The price is one
more forward evaluation of the body in the backward sweep (JAX's trade, with the same default
policy: nothing saved).

It is a ``custom_vjp`` whose rules are written for the function's number of arguments and outputs
(``_rules_source``): the forward rule calls the function and keeps its arguments as residuals; the
backward rule is ``tr.grad`` of ``sum(f(*args) * g)``, so the recomputation and its backward sweep
are written into the caller's backward sweep where the call's cotangent is known.  The rules' file
is written to the cache directory once per number of arguments and outputs; each checkpointed function loads
it as a module of its own, in which ``fun`` is that function.
"""
from __future__ import annotations

import inspect

from . import emit
from .custom import custom_vjp


def checkpoint(fun=None, *, prevent_cse: bool = True, policy=None, static_argnums=()):
    """``fun`` differentiated by recomputing its forward values in the backward sweep instead of
    taping them.  Usable as ``tr.checkpoint(f)``, ``@tr.checkpoint`` or ``@tr.checkpoint(...)``.
    ``fun`` returns one array or a tuple of them.  ``policy`` (what to save) is not supported: nothing
    is saved."""
    if fun is None:
        return lambda f: checkpoint(f, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums)
    if policy is not None:
        raise TypeError("tr.checkpoint takes no policy: it saves nothing but the function's arguments")
    if static_argnums:
        raise TypeError("tr.checkpoint takes no static_argnums: pass numbers known when the caller is "
                        "specialised as ordinary arguments")
    parameters = list(inspect.signature(fun).parameters.values())
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.default is not p.empty
           for p in parameters):
        raise TypeError(f"tr.checkpoint takes a function of plain positional parameters; "
                        f"{getattr(fun, '__qualname__', fun)} has defaults, * or keyword-only ones")
    return Checkpointed(fun, len(parameters))


class Checkpointed(custom_vjp):
    """A checkpointed function: a custom_vjp whose backward rule recomputes (``recomputes``)."""

    def __init__(self, fun, arity: int):
        super().__init__(fun)
        self.arity = arity
        self.checkpointed = True
        rules = _rules_for(fun, arity, None)
        self.defvjp(rules.checkpoint_fwd, rules.checkpoint_bwd)
        self._backward = {None: rules.checkpoint_bwd}

    def backward_for(self, outputs: int | None):
        """The backward rule for a call whose output is one array (None) or a tuple of ``outputs``."""
        if outputs not in self._backward:
            self._backward[outputs] = _rules_for(self.fun, self.arity, outputs).checkpoint_bwd
        return self._backward[outputs]


remat = checkpoint


def _rules_source(arity: int, outputs: int | None) -> str:
    xs = [f"x{k}" for k in range(arity)]
    args = ", ".join(xs)
    gradient = f"tr.grad(projected, argnums={tuple(range(arity)) if arity > 1 else 0})({args}, g)"
    if outputs is None:
        project = [f"    return np.sum(fun({args}) * g)"]
    else:                 # a tuple of outputs: each against its own cotangent
        ys = [f"y{k}" for k in range(outputs)]
        project = [f"    {', '.join(ys)}{',' if outputs == 1 else ''} = fun({args})",
                   "    return " + " + ".join(f"np.sum({y} * g[{k}])" for k, y in enumerate(ys))]
    shape = "one array" if outputs is None else f"a tuple of {outputs}"
    return "\n".join([
        f"# tr.checkpoint's rules for a function of {arity} argument{'s' if arity != 1 else ''} returning {shape}, "
        f"as written by transformer/checkpoint.py: `fun` is the checkpointed function",
        "import numpy as np",
        "",
        "import transformer as tr",
        "",
        "",
        f"def checkpoint_fwd({args}):",
        "    # the forward sweep keeps the arguments only: the backward sweep recomputes the rest",
        f"    return fun({args}), ({args}{',' if arity == 1 else ''})",
        "",
        "",
        f"def projected({args}, g):",
        *project,
        "",
        "",
        "def checkpoint_bwd(residuals, g):",
        f"    {args}{',' if arity == 1 else ''} = residuals",
        "    # fun's forward values recomputed, and its backward sweep, for the cotangent g",
        f"    return {gradient}{',' if arity == 1 else ''}",
        "",
    ])


def _rules_for(fun, arity: int, outputs: int | None):
    module = emit.load_written(_rules_source(arity, outputs), f"checkpoint_rules_{arity}", {"fun": fun})
    module.checkpoint_bwd.recomputes = True    # forward mode and vmap see the function's own code (jvp.py, vmap.py)
    return module
