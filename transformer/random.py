"""JAX's explicit-key random numbers in plain NumPy: ``tr.random``.

Keys are raw ``uint32[2]`` arrays, as ``jax.random.PRNGKey`` gives them (JAX's
legacy key form); ``key(seed)`` returns the same raw array (JAX's ``key`` gives
a typed key array instead; passing one of those here is accepted too: its key
data is read). The numbers are JAX's with its defaults of this version: the
``threefry2x32`` implementation and ``jax_threefry_partitionable=True`` (each
element's bits are the threefry hash of its position as a 64-bit counter, hi and
lo words). Default float dtype is float64 and default int dtype int64, as JAX
gives with ``jax_enable_x64`` on; ``dtype=np.float32`` gives JAX's float32
numbers.

``split``, ``fold_in``, ``bits``, ``uniform``, ``bernoulli``, ``randint``,
``normal``, ``gumbel``, ``categorical``, ``permutation`` and ``choice``
reproduce JAX (CPU) bit for bit in float16, float32 and float64. That takes
XLA's own arithmetic, not NumPy's:

- ``normal`` is ``sqrt(2) * erfinv(u)`` with XLA's erfinv polynomials and XLA's
  log1p (Cephes' below sqrt(2) - 1, a log above);
- a multiply feeding an add is rounded once, as XLA's CPU code fuses them
  (``_fma``);
- XLA's float32 ``log`` is its own approximation (Cephes' logf, ``_log32``);
  float16 logs are float32 ones rounded back;
- XLA's float64 ``log`` is the C library's (``math.log``, ``_log64``). NumPy's
  ``np.log`` is not that on every machine: with AVX-512 it takes its own SIMD
  approximation, which differs on about 1 input in 500 by one ulp;
- ``gumbel``'s uniform is the one XLA's constant folding leaves (``_gumbel``).

The keys and samplers are primitives (transformer/primitives.py): transformed
code calls them as they are, so a draw inside ``tr.jit``, ``tr.vmap`` (a loop over
a batch of keys) or a derivative gives the numbers this module gives outside.
Their derivatives are in templates/random.py.  ``threefry2x32`` itself stays
host-only: its uint32 arithmetic is refused at the user's call.
"""
from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["PRNGKey", "key", "key_data", "split", "fold_in", "bits", "uniform", "normal",
           "bernoulli", "categorical", "gumbel", "permutation", "choice", "randint",
           "exponential", "laplace", "logistic", "rademacher", "threefry2x32"]

_U32 = np.uint32
_MASK32 = 0xFFFFFFFF
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


# --------------------------------------------------------------------- threefry

def _rotl(x, r):
    return (x << _U32(r)) | (x >> _U32(32 - r))


def threefry2x32(key, x0, x1):
    """The Threefry-2x32 block function (20 rounds) of key ``(k0, k1)`` on the
    counter words ``x0, x1`` (uint32 arrays of one shape); returns two arrays."""
    k = np.asarray(key, dtype=_U32)
    k0, k1 = k[0], k[1]
    ks = (k0, k1, k0 ^ k1 ^ _U32(0x1BD11BDA))
    x0 = np.array(x0, dtype=_U32, copy=True)
    x1 = np.array(x1, dtype=_U32, copy=True)
    with np.errstate(over="ignore"):
        x0 += ks[0]
        x1 += ks[1]
        for i in range(5):
            for r in _ROTATIONS[i % 2]:
                x0 += x1
                x1 = _rotl(x1, r)
                x1 ^= x0
            x0 += ks[(i + 1) % 3]
            x1 += ks[(i + 2) % 3]
            x1 += _U32(i + 1)
    return x0, x1


def _hash_flat(key, count):
    """JAX's ``threefry_2x32(key, count)``: the flat counts split in two halves
    (padded with one zero when odd), hashed pairwise, the halves concatenated."""
    count = np.asarray(count, dtype=_U32)
    flat = count.ravel()
    odd = flat.shape[0] % 2
    if odd:
        flat = np.concatenate([flat, np.zeros(1, _U32)])
    half = flat.shape[0] // 2
    y0, y1 = threefry2x32(key, flat[:half], flat[half:])
    out = np.concatenate([y0, y1])
    if odd:
        out = out[:-1]
    return out.reshape(count.shape)


def _counts(shape):
    n = math.prod(shape)
    c = np.arange(n, dtype=np.uint64).reshape(shape)
    return (c >> np.uint64(32)).astype(_U32), (c & np.uint64(_MASK32)).astype(_U32)


def _hash_shape(key, shape):
    hi, lo = _counts(tuple(shape))
    return threefry2x32(key, hi, lo)


# --------------------------------------------------------------------- keys

def key_data(key):
    """The raw ``uint32[..., 2]`` array of a key (ours, JAX's legacy, or JAX's typed)."""
    dt = getattr(key, "dtype", None)
    if dt is not None and "key" in str(dt):
        import jax.random  # a typed JAX key can only come from an installed jax
        key = jax.random.key_data(key)
    k = np.asarray(key)
    if k.shape[-1:] != (2,):
        raise TypeError(f"a threefry2x32 key is a uint32 array of shape (..., 2); got shape {k.shape}")
    if k.dtype != _U32:
        if not np.issubdtype(k.dtype, np.integer):
            raise TypeError(f"a threefry2x32 key holds uint32 values; got dtype {k.dtype}")
        k = k.astype(_U32)
    return k


def _single(name, key):
    k = key_data(key)
    if k.shape != (2,):
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{k.shape[:-1]} != (). Use tr.vmap or a loop for batching.")
    return k


def PRNGKey(seed):
    """A key from an integer seed: ``uint32[2]`` = (high, low) words of the 64-bit seed."""
    if np.ndim(seed):
        raise TypeError(f"PRNGKey accepts a scalar seed, but was given an array of shape {np.shape(seed)}")
    s = int(seed)
    return np.array([(s >> 32) & _MASK32, s & _MASK32], dtype=_U32)


def key(seed):
    """Same as ``PRNGKey``: a raw ``uint32[2]`` key (JAX's ``key`` wraps it in a typed scalar)."""
    return PRNGKey(seed)


def split(key, num=2):
    """``num`` new keys (or a shape of them), shape ``(*num, 2)``."""
    k = _single("split", key)
    shape = tuple(num) if isinstance(num, (tuple, list)) else (int(num),)
    b0, b1 = _hash_shape(k, shape)
    return np.stack([b0, b1], axis=b0.ndim)


def fold_in(key, data):
    """A new key from ``key`` and a 32-bit integer ``data``."""
    k = _single("fold_in", key)
    if np.ndim(data):
        raise TypeError(f"fold_in accepts a scalar, but was given an array of shape {np.shape(data)}")
    d = int(data) & _MASK32
    return _hash_flat(k, np.array([0, d], dtype=_U32))


def _random_bits(k, bit_width, shape):
    b0, b1 = _hash_shape(k, shape)
    if bit_width == 64:
        return (b0.astype(np.uint64) << np.uint64(32)) | b1.astype(np.uint64)
    out = b0 ^ b1
    if bit_width == 32:
        return out
    return out.astype({8: np.uint8, 16: np.uint16}[bit_width])


def bits(key, shape=(), dtype=None):
    """Uniform random bits, of an unsigned dtype of 8, 16, 32 or 64 bits (default uint64)."""
    dtype = np.dtype(np.uint64 if dtype is None else dtype)
    if dtype.kind != "u":
        raise TypeError(f"bits requires an unsigned integer dtype, got {dtype}")
    return _random_bits(_single("bits", key), dtype.itemsize * 8, _shape(shape))


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def _float_dtype(name, dtype):
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    if dtype.kind != "f":
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dtype}")
    return dtype


def _check_shape(name, shape, *param_shapes):
    if param_shapes:
        b = np.broadcast_shapes(shape, *param_shapes)
        if b != tuple(shape):
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                             f"argument, and the result of broadcasting the shapes must equal "
                             f"the shape argument, but got result {b} for shape argument {shape}.")


# --------------------------------------------------------------------- samplers

def _fma(a, b, c):
    """``a * b + c`` rounded once, as XLA's CPU code computes a multiply feeding an add
    (it contracts them into a fused multiply-add)."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    dtype = np.result_type(a, b, c)
    if dtype == np.float64:
        # Dekker's exact product and Knuth's two-sum, in double-double.
        def split(x):
            t = x * 134217729.0
            hi = t - (t - x)
            return hi, x - hi
        p = a * b
        ah, al = split(a)
        bh, bl = split(b)
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s = p + c
        bb = s - p
        e2 = (p - (s - bb)) + (c - bb)
        out = s + (e + e2)
        return np.where(np.isfinite(out), out, p + c)
    if dtype == np.float32:
        # The product of two float32 is exact in float64; the sum rounded to odd
        # in float64 then rounds to float32 as the exact sum would.
        p = a.astype(np.float64) * b.astype(np.float64)
        c64 = c.astype(np.float64)
        s = p + c64
        bb = s - p
        err = (p - (s - bb)) + (c64 - bb)
        inexact = (err != 0) & np.isfinite(s)
        toward_zero = inexact & ((err > 0) != (s > 0))
        t = np.where(toward_zero, np.nextafter(s, 0.0), s)
        bits = np.asarray(t).view(np.int64)
        t = np.where(inexact, (bits | 1).view(np.float64), t)
        return np.asarray(t).astype(np.float32)
    return (a * b + c).astype(dtype)


def _uniform(k, shape, dtype, minval, maxval):
    finfo = np.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    uint = {16: np.uint16, 32: np.uint32, 64: np.uint64}[nbits]
    b = _random_bits(k, nbits, shape).astype(uint)
    one = np.array(1.0, dtype).view(uint)
    floats = ((b >> uint(nbits - nmant)) | one).view(dtype) - dtype.type(1.0)
    minval = np.asarray(minval, dtype=dtype)
    maxval = np.asarray(maxval, dtype=dtype)
    out = _fma(floats, maxval - minval, minval) if dtype != np.float16 else floats * (maxval - minval) + minval
    return np.maximum(minval, out).astype(dtype, copy=False).reshape(shape)


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0):
    """Uniform floats in ``[minval, maxval)`` (default float64)."""
    k = _single("uniform", key)
    dtype = _float_dtype("uniform", dtype)
    shape = _shape(shape)
    _check_shape("uniform", shape, np.shape(minval), np.shape(maxval))
    return _uniform(k, shape, dtype, minval, maxval)


# XLA's ErfInv (Giles' approximations), coefficients highest power first.
_ERFINV32_LT5 = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                 -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV32_GE5 = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                 -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_ERFINV64_W0 = (-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
                1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
                6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
                2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
                1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
                4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
                0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
                0.24015818242558961693, 1.6536545626831027356)
_ERFINV64_W1 = (2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
                1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
                2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
                6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
                0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
                -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
                3.0838856104922207635)
_ERFINV64_W2 = (-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
                -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
                2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
                -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
                7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
                1.0103004648645343977, 4.8499064014085844221)


# XLA's CPU log1p: Cephes' rational approximation below sqrt(2) - 1, log(1 + x) above.
_LOG1P_NUM = (4.5270000862445199635215e-5, 4.9854102823193375972212e-1, 6.5787325942061044846969e0,
              2.9911919328553073277375e1, 6.0949667980987787057556e1, 5.7112963590585538103336e1,
              2.0039553499201281259648e1)
_LOG1P_DEN = (1.0, 1.5062909083469192043167e1, 8.3047565967967209469434e1, 2.2176239823732856465394e2,
              3.0909872225312059774938e2, 2.1642788614495947685003e2, 6.0118660497603843919306e1)


_LOG32_P = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
            -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)


def _log32(x):
    """XLA's CPU float32 log for positive normal x (Cephes' logf, multiply-adds fused)."""
    f = np.float32
    m, e = np.frexp(x)
    m, e = m.astype(f), e.astype(f)
    small = m < f(0.707106781186547524)
    e = np.where(small, e - f(1), e).astype(f)
    m = np.where(small, (m - f(1)) + m, m - f(1)).astype(f)
    x2 = m * m
    x3 = x2 * m
    p = [f(c) for c in _LOG32_P]
    y, y1, y2 = _fma(p[0], m, p[1]), _fma(p[3], m, p[4]), _fma(p[6], m, p[7])
    y, y1, y2 = _fma(y, m, p[2]), _fma(y1, m, p[5]), _fma(y2, m, p[8])
    # The last multiply by x3 fuses with the add of e * q1 (XLA's code: y * x3 + e * q1).
    y = _fma(_fma(_fma(y, x3, y1), x3, y2), x3, e * f(-2.12194440e-4))
    m = _fma(x2, f(-0.5), m) + y
    out = _fma(e, f(0.693359375), m)
    return np.where((x > 0) & np.isfinite(x), out, np.log(x)).astype(f)


def _log64(x):
    """XLA's CPU float64 log: the C library's ``log``, element by element.

    NumPy's ``np.log`` is the C library's only where it has no SIMD loop of its
    own for the machine; with AVX-512 its results differ on about 1 input in 500.
    """
    x = np.asarray(x, np.float64)
    out = np.log(x, out=np.empty_like(x))      # zero, negatives, inf and nan: exact either way
    normal = (x > 0) & np.isfinite(x)
    values = x[normal]
    out[normal] = np.fromiter(map(math.log, values.tolist()), np.float64, count=values.size)
    return out


def _log(x):
    """XLA's CPU log for x's dtype: float16 is computed in float32 and rounded back."""
    return _log64(x) if x.dtype == np.float64 else _in_float32(_log32, x)


def _log1p(x):
    t = x.dtype.type

    def poly(cs):
        p = np.zeros_like(x)
        for c in cs:
            p = _fma(p, x, t(c))
        return p
    x2 = x * x
    small = (x * x2) * (poly(_LOG1P_NUM) / poly(_LOG1P_DEN))
    small = x + _fma(t(-0.5), x2, small)
    # float64's log is the C library's, as XLA's; float32's is XLA's own
    # (Cephes') approximation, reproduced in _log32 to all but about 3e-4 of values.
    large = _log32(x + t(1.0)) if x.dtype == np.float32 else _log64(x + t(1.0))
    return np.where(np.abs(x) < t(0.41421356237309504880), small, large).astype(x.dtype, copy=False)


def _erfinv(x):
    t = x.dtype.type
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -_log1p(x * -x)
        if x.dtype == np.float32:
            lt = w < t(5.0)
            z = np.where(lt, w - t(2.5), np.sqrt(w) - t(3.0))
            c = lambda i: np.where(lt, t(_ERFINV32_LT5[i]), t(_ERFINV32_GE5[i]))
            p = c(0)
            for i in range(1, 9):
                p = _fma(p, z, c(i))
        else:
            lt6 = w < t(6.25)
            lt16 = w < t(16.0)
            sw = np.sqrt(w)
            z = np.where(lt6, w - t(3.125), np.where(lt16, sw - t(3.25), sw - t(5.0)))

            def c(i):
                v = np.full(x.shape, t(_ERFINV64_W0[i]))
                if i < 19:
                    v = np.where(lt6, v, t(_ERFINV64_W1[i]))
                if i < 17:
                    v = np.where(lt16, v, t(_ERFINV64_W2[i]))
                return v
            p = c(0)
            for i in range(1, 17):
                p = _fma(p, z, c(i))
            for i in range(17, 19):
                p = np.where(lt16, _fma(p, z, c(i)), p)
            for i in range(19, 23):
                p = np.where(lt6, _fma(p, z, c(i)), p)
        out = p * x
        return np.where(np.abs(x) == t(1.0), x * t(np.inf), out).astype(x.dtype, copy=False)


def normal(key, shape=(), dtype=None):
    """Standard normal floats (default float64): ``sqrt(2) * erfinv(u)``, ``u`` uniform in (-1, 1)."""
    k = _single("normal", key)
    dtype = _float_dtype("normal", dtype)
    shape = _shape(shape)
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform(k, shape, dtype, lo, np.array(1.0, dtype))
    if dtype == np.float16:  # XLA computes half-precision erfinv in float32
        return np.float16(np.sqrt(2)) * _erfinv(u.astype(np.float32)).astype(dtype)
    return (np.array(np.sqrt(2), dtype) * _erfinv(np.asarray(u, dtype))).astype(dtype, copy=False)


def bernoulli(key, p=0.5, shape=None):
    """Booleans, True with probability ``p`` (shape defaults to ``p``'s)."""
    k = _single("bernoulli", key)
    p = np.asarray(p)
    if p.dtype.kind != "f":
        if isinstance(p.item(0) if p.size else None, float):
            p = p.astype(np.float64)
        else:
            raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {p.dtype}.")
    shape = p.shape if shape is None else _shape(shape)
    _check_shape("bernoulli", shape, p.shape)
    return _uniform(k, shape, p.dtype, 0.0, 1.0) < p


def gumbel(key, shape=(), dtype=None):
    """Standard Gumbel floats (JAX's "low" mode): ``-log(-log(u))``."""
    k = _single("gumbel", key)
    dtype = _float_dtype("gumbel", dtype)
    return _gumbel(k, _shape(shape), dtype)


def _gumbel(k, shape, dtype):
    # JAX draws uniform(tiny, 1): floats * (1 - tiny) + tiny with floats = bits - 1.
    # 1 - tiny rounds to 1, and XLA folds the constants of (bits - 1) + tiny into
    # bits + (-1 + tiny), which rounds to bits - 1: only the clamp at tiny is left.
    # In float32 and float64 that is uniform(tiny, 1) exactly; in float16 it is not
    # (2**-10 + tiny is a float16), so the folded form is what JAX's numbers are.
    tiny = np.finfo(dtype).tiny
    u = np.maximum(np.asarray(tiny, dtype), _uniform(k, shape, dtype, 0.0, 1.0))
    with np.errstate(divide="ignore"):
        return -_log(-_log(u))


def _in_float32(fn, x):
    """XLA computes a float16 elementwise operation in float32 and rounds it back."""
    return fn(x.astype(np.float32)).astype(np.float16) if x.dtype == np.float16 else fn(x)


def exponential(key, shape=(), dtype=None):
    """Exponential floats of rate 1 (default float64): ``-log1p(-u)``."""
    k = _single("exponential", key)
    dtype = _float_dtype("exponential", dtype)
    u = _uniform(k, _shape(shape), dtype, 0.0, 1.0)
    return -_in_float32(_log1p, -u)


def laplace(key, shape=(), dtype=None):
    """Laplace floats of scale 1 (default float64): ``sign(u) * log1p(-|u|)``, ``u`` uniform in (-1, 1)."""
    k = _single("laplace", key)
    dtype = _float_dtype("laplace", dtype)
    u = _uniform(k, _shape(shape), dtype, -1.0 + np.finfo(dtype).epsneg, 1.0)
    return np.sign(u) * _in_float32(_log1p, -np.abs(u))


def logistic(key, shape=(), dtype=None):
    """Standard logistic floats (default float64): ``log(u) - log1p(-u)``."""
    k = _single("logistic", key)
    dtype = _float_dtype("logistic", dtype)
    tiny = np.asarray(np.finfo(dtype).tiny, dtype)
    u = np.maximum(tiny, _uniform(k, _shape(shape), dtype, 0.0, 1.0))    # as gumbel's (_gumbel)
    return _log(u) - _in_float32(_log1p, -u)


def rademacher(key, shape=(), dtype=None):
    """-1 or 1 with equal chance (default int64)."""
    dtype = np.dtype(np.int64 if dtype is None else dtype)
    draws = bernoulli(key, 0.5, _shape(shape)).astype(dtype)
    return (2 * draws - 1).astype(dtype)


def categorical(key, logits, axis=-1, shape=None):
    """Indices drawn from ``softmax(logits, axis)`` (with replacement), by the Gumbel max trick."""
    k = _single("categorical", key)
    logits = np.asarray(logits)
    if logits.dtype.kind != "f":
        logits = logits.astype(np.float64)
    nd = logits.ndim
    batch_shape = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = _shape(shape)
        _check_shape("categorical", shape, batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if axis >= 0:
        axis -= nd
    lshape = list(shape[len(shape) - len(batch_shape):])
    lshape.insert(axis % nd, logits.shape[axis])
    g = _gumbel(k, (*prefix, *lshape), logits.dtype)
    return np.argmax(g + logits.reshape((1,) * len(prefix) + logits.shape), axis=axis)


def randint(key, shape, minval, maxval, dtype=None):
    """Uniform integers in ``[minval, maxval)`` (default int64), JAX's two-word modulus method."""
    k = _single("randint", key)
    dtype = np.dtype(np.int64 if dtype is None else dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    shape = _shape(shape)
    _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    info = np.iinfo(dtype)
    sample = dtype
    minval = np.asarray(minval)
    maxval = np.asarray(maxval)
    if minval.dtype.kind not in "iu":
        minval = minval.astype(np.int64)
    if maxval.dtype.kind not in "iu":
        maxval = maxval.astype(np.int64)
    if info.bits < 32:
        sample = np.dtype(np.int32)
        minval = np.clip(minval.astype(np.int32), int(info.min), int(info.max))
        maxval = np.clip(maxval.astype(np.int32), int(info.min), int(info.max) + 1)
    return _randint(k, shape, minval, maxval, sample).astype(dtype)


def _clip_to(val, dtype):
    vi, di = np.iinfo(val.dtype), np.iinfo(dtype)
    lo, hi = max(di.min, vi.min), min(di.max, vi.max)
    return np.clip(val, val.dtype.type(lo), val.dtype.type(hi)).astype(dtype)


def _randint(k, shape, minval, maxval, dtype):
    nbits = np.iinfo(dtype).bits
    unsigned = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[nbits]
    top = np.array(np.iinfo(dtype).max, dtype)
    maxval_out_of_range = maxval > _clip_to(top, maxval.dtype)
    minval = _clip_to(minval, dtype)
    maxval = _clip_to(maxval, dtype)
    k1, k2 = split(k)
    higher = _random_bits(k1, nbits, shape)
    lower = _random_bits(k2, nbits, shape)
    with np.errstate(over="ignore"):
        span = (maxval - minval).astype(unsigned)
        span = np.where(maxval <= minval, unsigned(1), span)
        span = np.where(maxval_out_of_range & (maxval > minval), span + unsigned(1), span).astype(unsigned)
        # span == 0 (the full 2**nbits range) leaves the bits as they are, as XLA's rem by 0 does.
        safe = np.where(span == 0, unsigned(1), span)
        rem = lambda a, b: np.where(span == 0, a, a % safe).astype(unsigned)
        mult = rem(np.full(span.shape, unsigned(2 ** (nbits // 2))), span)
        mult = rem((mult * mult).astype(unsigned), span)
        off = (rem(higher, span) * mult).astype(unsigned) + rem(lower, span)
        off = rem(off.astype(unsigned), span)
        return (minval + off.astype(dtype)).astype(dtype)


def _shuffle(k, x, axis):
    n = x.size
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        k, sub = split(k)
        sort_keys = _random_bits(sub, 32, x.shape)
        order = np.argsort(sort_keys, axis=axis, kind="stable")
        x = np.take_along_axis(x, order, axis=axis)
    return x


def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``arange(x)`` (int ``x``) or of ``x`` along ``axis``."""
    k = _single("permutation", key)
    if not np.ndim(x):
        if not np.issubdtype(np.asarray(x).dtype, np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle(k, np.arange(int(x)), 0)
    x = np.asarray(x)
    axis = axis % x.ndim
    if independent or x.ndim == 1:
        return _shuffle(k, x, axis)
    ind = _shuffle(k, np.arange(x.shape[axis]), 0)
    return np.take(x, ind, axis=axis)


def choice(key, a, shape=(), replace=True, p=None, axis=0):
    """A sample from ``a`` (or ``arange(a)``), with or without replacement, weighted by ``p``."""
    k = _single("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape argument of choice must be a sequence, got {shape}")
    shape = tuple(int(d) for d in shape)
    arr = np.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = axis % arr.ndim
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return np.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(k, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else np.take(arr, ind, axis)
        else:
            sl = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(k, n_inputs if arr.ndim == 0 else arr, axis)[sl]
    else:
        p_arr = np.asarray(p)
        if p_arr.dtype.kind != "f":
            p_arr = p_arr.astype(np.float64)
        if p_arr.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                             f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = np.cumsum(p_arr)
            r = p_cuml[-1] * (p_arr.dtype.type(1) - _uniform(k, shape, p_arr.dtype, 0.0, 1.0))
            ind = np.searchsorted(p_cuml, r).astype(np.int64)
        else:
            with np.errstate(divide="ignore"):
                g = _gumbel(k, (n_inputs,), p_arr.dtype) + _log(p_arr)
            ind = np.argsort(-g, kind="stable")[:n_draws].astype(np.int64)
        result = ind if arr.ndim == 0 else np.take(arr, ind, axis)
    return result.reshape(shape if arr.ndim == 0 else
                          arr.shape[0:axis] + tuple(shape) + arr.shape[axis + 1:])


class HostOnlyFunction:
    """``threefry2x32`` itself: plain NumPy, called outside transformed code.

    Its uint32 arithmetic is not something ``tr.jit`` and the other transforms
    take, so rather than have them inline it and refuse a line inside this file,
    the public function is this wrapper, which a transform refuses at the user's
    own call.  (The keys and samplers are primitives: transformed code calls them.)"""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self._fn = fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self):
        return f"<function tr.random.{self.__name__}>"


threefry2x32 = HostOnlyFunction(threefry2x32)


def __getattr__(name):
    # a JAX name transformer lacks: say what to use instead (jax_names.py)
    from .jax_names import missing
    raise missing("random", name)
