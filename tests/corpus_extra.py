"""Functions whose derivative a finite-difference oracle cannot see."""
import numpy as np

import transformer as tr


def with_stop_gradient(x):
    return np.sum(x * tr.stop_gradient(x))


@tr.custom_vjp
def clip_gradient(x):
    return x


def clip_gradient_fwd(x):
    return x, None


def clip_gradient_bwd(residuals, g):
    return (np.clip(g, -1.0, 1.0),)


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


def uses_clip_gradient(x):
    return np.sum(clip_gradient(x) * 3.0)


@tr.custom_vjp
def safe_log(x):
    return np.log(x)


def safe_log_fwd(x):
    return np.log(x), x


def safe_log_bwd(x, g):
    return (g / np.maximum(x, 1e-3),)


safe_log.defvjp(safe_log_fwd, safe_log_bwd)


def uses_safe_log(x):
    return np.sum(safe_log(x * x))


@tr.custom_vjp
def softplus(x):
    return np.log1p(np.exp(x))


def softplus_fwd(x):
    # JAX's idiom: the forward rule calls the function itself for the output
    return softplus(x), x


def softplus_bwd(x, g):
    return (g / (1.0 + np.exp(-x)),)


softplus.defvjp(softplus_fwd, softplus_bwd)


def uses_softplus(x):
    return np.sum(softplus(x) * x)


def jitted_clip_inside(x):
    # the custom rule applies through a transform applied inside the code
    return tr.jit(uses_clip_gradient)(x)
