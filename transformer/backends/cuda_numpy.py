"""NumPy's elementwise functions on one scalar, as CUDA device code can call them.

Generated device code keeps NumPy's spelling (``np.exp(x)``), the same on
every target.  numba-cuda types such a call on a scalar, but its lowering
table only holds some ufuncs (the trigonometric, hyperbolic and logarithmic
ones, ``maximum``/``minimum``, ``isnan``, the logical ones); ``np.exp``,
``np.sqrt``, ``np.floor`` and the others below fail in NVVM lowering with a
``KeyError``, which the simulator never shows.  So device code is compiled
with this module standing for ``np`` (``cuda_runtime.device_math``): the
names below are libdevice's functions, and every other name is NumPy's own.

On numba's simulator device code is plain Python, so there every name is
NumPy's own and the values are NumPy's, bit for bit.
"""
from numpy import *   # noqa: F401,F403  dtypes (np.float32 in casts) and the ufuncs numba-cuda lowers
from numba.core import config

if not config.ENABLE_CUDASIM:
    import builtins as _builtins

    from numba import cuda as _cuda
    from numba.cuda import libdevice as _libdevice

    _device = _cuda.jit(device=True)

    # libdevice's double-precision functions: a float32 argument is widened, and the result is
    # stored in the output's dtype (the host decides it by NumPy's rules)
    @_device
    def exp(x):
        return _libdevice.exp(x)

    @_device
    def expm1(x):
        return _libdevice.expm1(x)

    @_device
    def exp2(x):
        return _libdevice.exp2(x)

    @_device
    def log1p(x):
        return _libdevice.log1p(x)

    @_device
    def sqrt(x):
        return _libdevice.sqrt(x)

    @_device
    def cbrt(x):
        return _libdevice.cbrt(x)

    @_device
    def fabs(x):
        return _libdevice.fabs(x)

    @_device
    def floor(x):
        return _libdevice.floor(x)

    @_device
    def ceil(x):
        return _libdevice.ceil(x)

    @_device
    def trunc(x):
        return _libdevice.trunc(x)

    @_device
    def rint(x):
        return _libdevice.rint(x)            # halves to even, as NumPy

    @_device
    def round(x, decimals=0):
        if decimals == 0:
            return _libdevice.rint(x)
        scale = 10.0 ** decimals            # NumPy scales, rounds to even, and scales back
        return _libdevice.rint(x * scale) / scale

    @_device
    def copysign(x, y):
        return _libdevice.copysign(x, y)

    @_device
    def fmod(x, y):
        return _libdevice.fmod(x, y)

    @_device
    def isinf(x):
        return _libdevice.isinfd(x) != 0

    @_device
    def isfinite(x):
        return _libdevice.isfinited(x) != 0

    @_device
    def abs(x):
        return _builtins.abs(x)             # integers stay integers; -0.0 becomes 0.0

    absolute = abs

    @_device
    def square(x):
        return x * x

    @_device
    def reciprocal(x):
        return 1.0 / x

    @_device
    def sign(x):
        if x > 0:
            return 1.0
        if x < 0:
            return -1.0
        return x * 1.0                      # 0 stays 0 (signed), NaN stays NaN

    @_device
    def logaddexp(x, y):
        if x == y:                          # also both -inf: NumPy gives x + log 2 there (-inf)
            return x + 0.6931471805599453
        larger = x if x > y else y
        return larger + _libdevice.log1p(_libdevice.exp(-_builtins.abs(x - y)))
