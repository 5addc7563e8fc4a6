"""Neural-network functions written as plain NumPy.

The transformer reads this file like user code: a call to ``tr.nn.softmax``
is inlined and transformed with the caller, so every transform handles these
functions with no rules of their own.
"""
import numpy as np

from . import lax


def relu(x):
    # np.where, not np.maximum: the derivative at 0 is 0, as JAX's relu has it (maximum would split a tie)
    return np.where(x > 0.0, x, 0.0)


def sigmoid(x):
    return lax.logistic(x)


def softplus(x):
    return np.logaddexp(x, 0.0)


def tanh(x):
    return np.tanh(x)


def gelu(x, approximate=True):
    if approximate:         # the tanh approximation, JAX's default
        out = 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
    else:                   # the exact form, with the error function
        out = 0.5 * x * (1.0 + lax.erf(x * 0.7071067811865476))
    return out


def silu(x):
    return x * lax.logistic(x)


def swish(x):
    return silu(x)


def log_sigmoid(x):
    return -np.logaddexp(-x, 0.0)


def elu(x, alpha=1.0):
    # expm1 of the negative part only, so a large positive x never overflows on the branch not taken
    negative = np.where(x > 0.0, 0.0, x)
    return np.where(x > 0.0, x, alpha * np.expm1(negative))


def leaky_relu(x, negative_slope=0.01):
    return np.where(x >= 0.0, x, negative_slope * x)


def relu6(x):
    # derivative 0 at both corners, as JAX's relu6 has it
    return np.where(x > 0.0, np.where(x < 6.0, x, 6.0), 0.0)


def hard_tanh(x):
    return np.where(x > 1.0, 1.0, np.where(x < -1.0, -1.0, x))


def hard_sigmoid(x):
    return relu6(x + 3.0) / 6.0


def hard_silu(x):
    return x * hard_sigmoid(x)


def hard_swish(x):
    return hard_silu(x)


def selu(x):
    return 1.0507009873554804934193349852946 * elu(x, 1.6732632423543772848170429916717)


def celu(x, alpha=1.0):
    negative = np.where(x > 0.0, 0.0, x)    # as elu: no overflow on the branch not taken
    return np.where(x > 0.0, x, alpha * np.expm1(negative / alpha))


def glu(x, axis=-1):
    """The first half of ``x`` along ``axis`` gated by the sigmoid of the second half."""
    first, second = np.split(x, 2, axis=axis)
    return first * sigmoid(second)


def mish(x):
    return x * np.tanh(softplus(x))


def soft_sign(x):
    return x / (np.abs(x) + 1.0)


def squareplus(x, b=4.0):
    return (x + np.sqrt(x * x + b)) / 2.0


def sparse_plus(x):
    return np.where(x <= -1.0, 0.0, np.where(x < 1.0, (x + 1.0) ** 2 / 4.0, x))


def sparse_sigmoid(x):
    return np.where(x <= -1.0, 0.0, np.where(x < 1.0, (x + 1.0) / 2.0, 1.0))


def log1mexp(x):
    """``log(1 - exp(-x))`` for x > 0, each side of log(2) by the form that keeps its digits."""
    below = x < 0.6931471805599453
    small = np.where(below, x, 1.0)    # each form reads only its own side's x
    large = np.where(below, 1.0, x)
    return np.where(below, np.log(-np.expm1(-small)), np.log1p(-np.exp(-large)))


def identity(x):
    return x


def one_hot(x, num_classes):
    """Rows of the identity picked by the integer labels ``x`` (float; no derivative)."""
    return np.where(np.expand_dims(x, -1) == np.arange(num_classes), 1.0, 0.0)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5):
    """``(x - mean) / sqrt(variance + epsilon)``, the moments over ``axis`` unless given (as JAX's)."""
    # each `is None` is decided when the caller is transformed (the parameters are never rebound)
    centre = np.mean(x, axis=axis, keepdims=True) if mean is None else mean
    spread = np.mean(x * x, axis=axis, keepdims=True) - centre * centre if variance is None else variance
    return (x - centre) / np.sqrt(spread + epsilon)


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x)))`` over ``axis`` (all of ``x`` by default, as JAX's), without overflow."""
    peak = _finite_peak(x, axis)
    result = np.log(np.sum(np.exp(x - peak), axis=axis, keepdims=True)) + peak
    if not keepdims:        # a literal: decided when the caller is transformed
        result = _without_kept_axes(result, axis)
    return result


def logmeanexp(x, axis=None, keepdims=False):
    """``log(mean(exp(x)))`` over ``axis`` (all of ``x`` by default), without overflow."""
    peak = _finite_peak(x, axis)
    total = np.sum(np.exp(x - peak), axis=axis, keepdims=True)
    result = np.log(total / (np.size(x) / np.size(total))) + peak
    if not keepdims:        # a literal: decided when the caller is transformed
        result = _without_kept_axes(result, axis)
    return result


def _without_kept_axes(kept, axis):
    """``kept`` without the axes of length 1 a keepdims reduction over ``axis`` left: the sum of the
    one entry along them (a number for axis=None, which np.squeeze cannot give compiled)."""
    return np.sum(kept, axis=axis)


def _finite_peak(x, axis):
    """The max along ``axis`` (kept) to shift by: see _finite."""
    return _finite(lax.stop_gradient(np.max(x, axis=axis, keepdims=True)))


def _finite(peak):
    """A shift, 0 where it is infinite (all -inf, a masked row; or +inf, where x - peak would be
    inf - inf), as JAX shifts; a shift has no derivative of its own (lax.stop_gradient)."""
    return np.where(np.isfinite(peak), peak, 0.0)


def softmax(x, axis=-1):
    shifted = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return shifted / np.sum(shifted, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def __getattr__(name):
    # a JAX name transformer lacks: say what to use instead (jax_names.py)
    from .jax_names import missing
    raise missing("nn", name)
