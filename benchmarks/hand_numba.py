"""Hand-written numba versions of the benchmark functions: what a numba user writes.

Plain numba cannot compile ``np.max(x, axis=-1, keepdims=True)``, so the
softmax of attention is written out as loops here.
"""
import numba
import numpy as np


@numba.njit(cache=True)
def attention(q, k, v):
    scores = np.dot(q, k.T) / np.sqrt(q.shape[-1])
    rows, cols = scores.shape
    for i in range(rows):
        peak = scores[i, 0]
        for j in range(1, cols):
            peak = max(peak, scores[i, j])
        total = 0.0
        for j in range(cols):
            scores[i, j] = np.exp(scores[i, j] - peak)
            total += scores[i, j]
        for j in range(cols):
            scores[i, j] /= total
    return np.dot(scores, v)


@numba.njit(cache=True)
def elementwise_chain(x):
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = np.exp(-x[i] ** 2) * np.sin(3 * x[i]) + 0.5 * np.tanh(x[i])
    return out
