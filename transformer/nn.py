"""Neural-network functions written as plain NumPy.

The transformer reads this file like user code: a call to ``tr.nn.softmax``
is inlined and transformed with the caller, so every transform handles these
functions with no rules of their own.
"""
import numpy as np


def relu(x):
    return np.maximum(x, 0.0)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softplus(x):
    return np.logaddexp(x, 0.0)


def tanh(x):
    return np.tanh(x)


def gelu(x):
    # the tanh approximation, as in JAX's default
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def logsumexp(x, axis=-1, keepdims=False):
    peak = np.max(x, axis=axis, keepdims=True)
    result = np.log(np.sum(np.exp(x - peak), axis=axis, keepdims=True)) + peak
    if not keepdims:        # a literal: decided when the caller is transformed
        result = np.squeeze(result, axis=axis)
    return result


def softmax(x, axis=-1):
    shifted = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return shifted / np.sum(shifted, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
