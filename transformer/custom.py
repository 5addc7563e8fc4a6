"""``custom_vjp``: a function whose reverse-mode derivative the user writes.

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
"""
from __future__ import annotations

import functools


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
