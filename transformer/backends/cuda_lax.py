"""transformer.lax's special functions on one scalar, as CUDA device code can call them.

Generated device code keeps the lax spelling (``lax.digamma(x)``), the same on
every target; it is compiled with this module standing for ``lax``
(``cuda_runtime.device_math``): the scalar kernels of ``special_kernels``,
which numba-cuda compiles as numba does (math.erf, math.erfc and math.lgamma
become libdevice's).  They compute in float64; a float32 output stores the
result in its dtype, as with ``cuda_numpy``.

On numba's simulator device code is plain Python, so there every name is
transformer.lax's own (scipy's values).
"""
from numba.core import config

from ..lax import *   # noqa: F401,F403

if not config.ENABLE_CUDASIM:
    from .special_kernels import digamma, erf, erf_inv, erfc, lgamma, polygamma   # noqa: F401
    from .special_kernels import log_ndtr, ndtr   # noqa: F401  (misc)
