"""``custom_vjp`` and ``custom_jvp``: functions whose derivative the user writes.

As in JAX::

    @tr.custom_vjp
    def clip_gradient(x):
        return x

    def clip_fwd(x):
        return x, None                  # (output, residuals for the backward rule)

    def clip_bwd(residuals, g):
        return (np.clip(g, -1.0, 1.0),)  # one cotangent per input

    clip_gradient.defvjp(clip_fwd, clip_bwd)

Called from a transformed function, the forward rule is inlined, and reverse
mode inlines the backward rule where the derivative would otherwise go
through the function's own code.

``custom_jvp`` is the forward-mode twin, as in JAX::

    @tr.custom_jvp
    def log1pexp(x):
        return np.log1p(np.exp(x))

    @log1pexp.defjvp
    def log1pexp_jvp(primals, tangents):
        x, = primals
        x_dot, = tangents
        return log1pexp(x), x_dot / (1.0 + np.exp(-x))   # (output, output tangent)

Called from a transformed function, its own body is inlined and its output
marked with ``rt.custom_jvp_call(out, inputs, rule)``; forward mode inlines
the rule there for the output's tangent.  Reverse mode, as JAX's, transposes
the rule: the rule's output tangent is linear in the tangents, and the
gradient in the tangents of its product with the cotangent is the transpose
(``transposed_rule``, which reverse mode inlines as it inlines a custom_vjp's
backward rule).

A transform called from Python on a custom function itself (``tr.jvp(f, ...)``)
transforms a plain function that calls it (``called_form``), so it meets the
rule as a call from code does.
"""
from __future__ import annotations

import functools


# Where a custom_vjp or custom_jvp function is called, normalize writes a call of one of these runtime
# markers (the function's output, its inputs, its rule); the transforms apply the user's rule there.
VJP_CALL = "rt.custom_vjp_call"
JVP_CALL = "rt.custom_jvp_call"
MARKERS = (VJP_CALL, JVP_CALL)


class custom_vjp:
    def __init__(self, fun):
        self.fun = fun
        self.fwd = None
        self.bwd = None
        functools.update_wrapper(self, fun)

    def defvjp(self, fwd, bwd):
        self.fwd = fwd
        self.bwd = bwd
        return self

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def called_form(self):
        return _called_form(self)


class custom_jvp:
    def __init__(self, fun):
        self.fun = fun
        self.jvp = None
        functools.update_wrapper(self, fun)

    def defjvp(self, jvp):
        """Set the rule ``jvp(primals, tangents) -> (out, out_tangent)``; returns it (a decorator)."""
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps):
        """Set the rule from one function per argument, as JAX's ``defjvps``: ``jvps[k](t_k, out,
        *primals)`` is the output tangent's part from argument ``k`` (None: none), and the rule adds
        the parts up (``summed_jvps``)."""
        self.jvp = summed_jvps(self.fun, jvps)

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

    def called_form(self):
        return _called_form(self)


def _called_form(fun):
    """What a transform from Python transforms (``Transformed.of``): a plain function that calls
    ``fun``, so the transform meets the call and the rule with it, as a call from code does.  The
    function is written once per custom function and kept; its rules may be set later (defvjp)."""
    made = getattr(fun, "_called", None)
    if made is None:
        from .derived_code import calling_custom        # derived_code's imports reach this module
        from .transformed import Transformed
        made = fun._called = Transformed(calling_custom(fun))
    return made


def transposed_rule(jvp_rule, arity: int, outputs: int | None):
    """The backward rule reverse mode applies for a custom_jvp function of ``arity`` arguments
    whose jvp rule is ``jvp_rule``, for an output that is one array (``outputs`` None) or a
    tuple of ``outputs``: ``bwd(primals, g)``, one cotangent per argument.  The rule's output
    tangent is linear in the tangents, so its product with ``g``, summed, has as gradient in the
    tangents the transpose of the rule applied to ``g``, at any tangent (zeros here)."""
    xs = [f"x{k}" for k in range(arity)]
    ts = [f"t{k}" for k in range(arity)]
    comma = "," if arity == 1 else ""
    if outputs is None:
        project = ["    out, out_dot = rule(primals, tangents)", "    return np.sum(out_dot * g)"]
    else:
        project = ["    out, out_dot = rule(primals, tangents)",
                   "    return " + " + ".join(f"np.sum(out_dot[{k}] * g[{k}])" for k in range(outputs))]
    argnums = tuple(range(arity, 2 * arity)) if arity > 1 else arity
    zeros = ", ".join(f"np.zeros(np.shape({x}))" for x in xs)
    shape = "one array" if outputs is None else f"a tuple of {outputs}"
    return _written([
        f"# the transpose of a custom_jvp rule for a function of {arity} argument{'s' if arity != 1 else ''} "
        f"returning {shape},",
        "# as written by transformer/custom.py: `rule` is the user's jvp rule"], [
        f"def projected_tangent({', '.join(xs + ts)}, g):",
        f"    primals = ({', '.join(xs)}{comma})",
        f"    tangents = ({', '.join(ts)}{comma})",
        *project,
        "",
        "",
        "def transposed_rule(primals, g):",
        f"    {', '.join(xs)}{comma} = primals",
        "    # linear in the tangents: its gradient there is the same at every tangent",
        f"    return {'(' if arity == 1 else ''}tr.grad(projected_tangent, argnums={argnums})"
        f"({', '.join(xs)}, {zeros}, g){',)' if arity == 1 else ''}"],
        f"custom_jvp_transposed_{arity}", {"rule": jvp_rule}).transposed_rule


def batched_rule(kind: str, rule, axes: tuple, summed: tuple = ()):
    """A rule for a custom function's call under vmap, where each batched value carries the batch as
    its last axis (vmap's layout): the user's ``rule`` (a jvp rule, ``kind`` "jvp", or a backward
    rule, "vjp") applied to each example with ``tr.vmap``, in ``axes`` (-1 or None, nested as the
    operands are: the primals' for a jvp rule, whose tangents are batched as their primals; the
    residuals' for a backward rule, whose cotangent is batched).  Every result is batched; the
    cotangents of the inputs in ``summed``, the same for every example, are summed over the batch."""
    if kind == "jvp":
        body = [f"    return tr.vmap(rule, in_axes=({axes!r}, {axes!r}), out_axes=-1)(primals, tangents)"]
        signature = "primals, tangents"
    else:
        count = len(summed)
        body = [f"    cotangents = tr.vmap(rule, in_axes=({axes!r}, -1), out_axes=-1)(residuals, g)"]
        pieces = [f"np.sum(cotangents[{k}], axis=-1)" if summed[k] else f"cotangents[{k}]" for k in range(count)]
        if any(summed):
            body.insert(0, "    # an input the same for every example gets the sum of its examples' cotangents")
        body.append(f"    return ({', '.join(pieces)}{',' if count == 1 else ''})")
        signature = "residuals, g"
    return _written([f"# a custom_{kind} rule applied to each example of a batch (batch axes {axes!r}),",
                     "# as written by transformer/custom.py: `rule` is the user's rule"],
                    [f"def batched_rule({signature}):", *body], f"custom_{kind}_batched", {"rule": rule}).batched_rule


def summed_jvps(fun, jvps):
    """A jvp rule ``rule(primals, tangents)`` that adds up the parts ``jvps[k](t_k, out, *primals)``
    of the arguments whose entry is not None, written as code (a tuple output's parts add leaf by
    leaf, as JAX's do)."""
    xs = [f"x{k}" for k in range(len(jvps))]
    ts = [f"t{k}" for k in range(len(jvps))]
    comma = "," if len(jvps) == 1 else ""
    parts = [f"jvp{k}({ts[k]}, out, {', '.join(xs)})" for k, jvp in enumerate(jvps) if jvp is not None]
    if not parts:
        total = ["    return out, tr.tree_util.tree_map(np.zeros_like, out)"]
    else:
        total = [f"    part{k} = {part}" for k, part in enumerate(parts)]
        total.append("    tangent = part0")
        total += [f"    tangent = tr.tree_util.tree_map(np.add, tangent, part{k})" for k in range(1, len(parts))]
        total.append("    return out, tangent")
    bindings = {"fun": fun, **{f"jvp{k}": jvp for k, jvp in enumerate(jvps) if jvp is not None}}
    return _written([
        f"# a custom_jvp rule from defjvps for a function of {len(jvps)} argument{'s' if len(jvps) != 1 else ''},",
        "# as written by transformer/custom.py: `fun` is the function, `jvpK` the rule of argument K"], [
        "def summed_rule(primals, tangents):",
        f"    {', '.join(xs)}{comma} = primals",
        f"    {', '.join(ts)}{comma} = tangents",
        f"    out = fun({', '.join(xs)})",
        *total], f"custom_jvps_{len(jvps)}", bindings).summed_rule


def _written(header: list, body: list, stem: str, bindings: dict):
    """The module of code written for a custom function's rule (emit.load_written), its header
    comment, the imports its lines use, and ``body``."""
    from . import emit              # emit's cache key reads this module: imported when first used
    lines = [*header, "import numpy as np", "", "import transformer as tr", "", "", *body, ""]
    return emit.load_written("\n".join(lines), stem, bindings)

