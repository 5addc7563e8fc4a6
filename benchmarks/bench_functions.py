"""The user functions the benchmarks transform: plain NumPy, as a user writes it.

They live in their own file because transformer reads source from files.
"""
import numpy as np

import transformer as tr


def scaled_dot_product(q, k, v):
    scores = np.dot(q, k.T) / np.sqrt(q.shape[-1])
    weights = tr.nn.softmax(scores)
    return np.dot(weights, v)


def elementwise_chain(x):
    return np.exp(-x ** 2) * np.sin(3 * x) + 0.5 * np.tanh(x)


def mlp_layer(x, w, b):
    return tr.nn.gelu(np.dot(x, w) + b)


def rosenbrock(x):
    total = 0.0
    for i in range(x.shape[0] - 1):
        total += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total
