"""Hand-written numba versions of the benchmark functions: what a numba user writes.

Plain numba cannot compile ``np.max(x, axis=-1, keepdims=True)``, so the
softmax of attention is written out as loops here.
"""
import numba
import numpy as np

from transformer.backends.numba_vecmath import sin64


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


@numba.njit(parallel=True, error_model="numpy", cache=True)
def decay_times_in_lanes(x0, lanes):
    """bench_vmap's decay_time for every initial condition, the fastest way found by hand:
    the examples in groups of ``lanes``, each group one masked while loop whose body is one
    loop over its lanes (SIMD: sin is numba_vecmath's branch-free kernel, not libm), the
    groups spread over the cores.  A group stops when its slowest example does."""
    n = x0.size
    out = np.empty(n)
    for group in numba.prange((n + lanes - 1) // lanes):
        start = group * lanes
        count = min(n, start + lanes) - start
        x = np.zeros(lanes)
        t = np.zeros(lanes)
        active = np.zeros(lanes, np.bool_)
        for j in range(count):
            x[j] = x0[start + j]
            active[j] = x[j] > 0.01
        running = True
        while running:
            still = 0
            for j in range(lanes):
                stepped = x[j] - 0.01 * x[j] * (1.0 + sin64(t[j]))
                on = active[j]
                x[j] = stepped if on else x[j]
                t[j] = t[j] + 0.01 if on else t[j]
                on = on and x[j] > 0.01
                active[j] = on
                still += on
            running = still > 0
        for j in range(count):
            out[start + j] = t[j]
    return out
