"""transformer.lax's special functions for numba: erf, erfc, erf_inv, lgamma, digamma, polygamma.

Generated code keeps their lax spelling (``lax.digamma(x)``) on every target.
numba knows none of them by that name, and lacks digamma, polygamma and the
inverse error function altogether; so each gets an ``overload`` here: the
scalar kernel of ``special_kernels`` on a number, a loop of it over an array.
The kernels compute in float64; a float32 argument gives a float32 result, as
in scipy and JAX (integers and booleans give float64, as in scipy).
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .. import lax
from . import special_kernels as kernels


def _result_dtype(t):
    """float32 for a float32 number or array, float64 for any other real one."""
    dtype = t.dtype if isinstance(t, types.Array) else t
    if not isinstance(dtype, (types.Float, types.Integer, types.Boolean)):
        raise TypingError(f"a special function of {t}: it takes real numbers")
    return np.float32 if dtype == types.float32 else np.float64


def _unary(lax_function, kernel):
    @overload(lax_function)
    def _typed(x):
        dtype = _result_dtype(x)
        if isinstance(x, types.Array):
            def on_array(x):
                out = np.empty(x.shape, dtype)
                flat_out = out.reshape(-1)
                flat_x = np.ravel(x)                   # a view where x is contiguous, else a copy
                for i in range(flat_x.size):
                    flat_out[i] = kernel(np.float64(flat_x[i]))
                return out
            return on_array
        return lambda x: dtype(kernel(np.float64(x)))
    return _typed


_unary(lax.erf, kernels.erf)
_unary(lax.erfc, kernels.erfc)
_unary(lax.erf_inv, kernels.erf_inv)
_unary(lax.lgamma, kernels.lgamma)
_unary(lax.digamma, kernels.digamma)


@overload(lax.polygamma)
def _polygamma(n, x):
    # the result has x's precision; the order is read as a float64 (NaN unless a whole number >= 0)
    _result_dtype(n)
    dtype = _result_dtype(x)
    if isinstance(n, types.Array):                     # orders that vary (a batched n): broadcast the two
        def each_order(n, x):
            orders, xs = np.broadcast_arrays(np.asarray(n).astype(np.float64), np.asarray(x).astype(np.float64))
            out = np.empty(orders.shape, dtype)
            flat_out = out.reshape(-1)
            i = 0
            for order, value in zip(orders.flat, xs.flat):
                flat_out[i] = kernels.polygamma(order, value)
                i += 1
            return out
        return each_order
    if isinstance(x, types.Array):
        def on_array(n, x):
            out = np.empty(x.shape, dtype)
            flat_out = out.reshape(-1)
            flat_x = np.ravel(x)
            order = np.float64(n)
            for i in range(flat_x.size):
                flat_out[i] = kernels.polygamma(order, np.float64(flat_x[i]))
            return out
        return on_array
    return lambda n, x: dtype(kernels.polygamma(np.float64(n), np.float64(x)))

# ---------------------------------------------------------------------- misc
_unary(lax.ndtr, kernels.ndtr)
_unary(lax.log_ndtr, kernels.log_ndtr)
