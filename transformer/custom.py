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
the rule there for the output's tangent.  Reverse mode differs from JAX: JAX
transposes the jvp rule, here reverse mode differentiates the function's own
body (the marker passes the cotangent straight to ``out``), so the gradient
of a custom_jvp function is that of its primal code.
"""
from __future__ import annotations

import functools


# Where a custom_vjp or custom_jvp function is called, normalize writes a call of one of these runtime
# markers (the function's output, its inputs, its rule); the transforms apply the user's rule there.
VJP_CALL = "rt.custom_vjp_call"
JVP_CALL = "rt.custom_jvp_call"


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


class custom_jvp:
    def __init__(self, fun):
        self.fun = fun
        self.jvp = None
        functools.update_wrapper(self, fun)

    def defjvp(self, jvp):
        """Set the rule ``jvp(primals, tangents) -> (out, out_tangent)``; returns it (a decorator)."""
        self.jvp = jvp
        return jvp

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)

