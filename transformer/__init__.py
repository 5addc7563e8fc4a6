"""transformer: JAX's function transformations for plain NumPy code, by rewriting source."""
from __future__ import annotations

__version__ = "0.1.0"

from . import lax, nn, random, tree, tree_util
from .errors import CompileError, ConcreteValueError, NoSourceError, TransformError
from .batching import vmap
from .checkpoint import checkpoint, remat
from .custom import custom_jvp, custom_vjp
from .differentiate import grad, value_and_grad, vjp
from .derived import hessian, hvp, jacfwd, jacrev, linearize
from .forward import jvp
from .jit import jit
from .lax import stop_gradient
from .parallel import block_until_ready, device_count, device_put, devices, local_device_count, pmap
from . import config
from .show import show, tier_of

jacobian = jacrev       # JAX's other name for it

__all__ = ["jit", "vmap", "pmap", "devices", "device_count", "local_device_count", "device_put", "block_until_ready", "config", "jvp", "jacfwd", "jacrev", "jacobian", "hessian", "hvp", "linearize", "grad", "value_and_grad", "vjp", "custom_vjp", "custom_jvp", "checkpoint", "remat", "show", "tier_of", "stop_gradient", "lax", "nn", "random", "tree", "tree_util", "TransformError", "CompileError", "ConcreteValueError", "NoSourceError"]


def __getattr__(name):
    # a JAX name transformer lacks: say what to use instead (jax_names.py)
    from .jax_names import missing
    raise missing("", name)
