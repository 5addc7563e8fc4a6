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
    loop over its lanes (SIMD), the groups spread over the cores.  Every example still
    stepping has taken as many steps as the others, so they share t and its sin: one
    sin a step for the group (numba_vecmath's, as the per-example code has it).  A finished
    example's t is stored by a masked store; a group stops when its slowest example does."""
    n = x0.size
    out = np.empty(n)
    for group in numba.prange((n + lanes - 1) // lanes):
        start = group * lanes
        count = min(n, start + lanes) - start
        x = np.empty(count)
        t_of = np.zeros(count)
        active = np.empty(count, np.uint8)
        for j in range(count):
            x[j] = x0[start + j]
            active[j] = x[j] > 0.01
        t = 0.0
        still = count
        while still > 0:
            factor = 1.0 + sin64(t)
            t_next = t + 0.01
            still = 0
            for j in range(count):
                on = active[j] != 0
                x[j] = x[j] - 0.01 * x[j] * factor
                if on:
                    t_of[j] = t_next
                active[j] = on & (x[j] > 0.01)
                still += active[j]
            t = t_next
        for j in range(count):
            out[start + j] = t_of[j]
    return out
