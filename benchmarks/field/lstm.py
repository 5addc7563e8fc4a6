"""ADBench's and GradBench's ``lstm``: a diagonal LSTM of ``l`` layers run over a character sequence.

Each layer's gates are elementwise (``diagonal``: a weight per input and per hidden entry, no matrix
product).  ``main`` (2l, 4b) holds each layer's weights then biases, ``extra`` (3, b) the input
scale and the output's scale and shift, ``state`` (2l, b) each layer's hidden and cell rows, and
``sequence`` (c, b) the one-hot characters.  The objective is the mean cross-entropy of predicting
each character from the ones before; the gradient is taken in main and extra.  The state is
updated row by row in place, as a NumPy user keeps an LSTM's state.
"""
from __future__ import annotations

import numpy as np

SIZES = {
    "small": dict(l=2, c=4, b=3),
    "l2-c1024": dict(l=2, c=1024, b=14),
    "l4-c4096": dict(l=4, c=4096, b=14),
}
WRT = (0, 1)


def inputs(l, c, b, seed=0):
    rng = np.random.default_rng(seed)
    main = rng.uniform(-1.0, 1.0, (2 * l, 4 * b))
    extra = rng.uniform(-1.0, 1.0, (3, b))
    state = rng.uniform(-1.0, 1.0, (2 * l, b))
    sequence = np.eye(b)[rng.integers(0, b, c)]
    return main, extra, state, sequence


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def cell_step(weight, bias, hidden, cell, x):
    """One layer's step: its four gates from the input and the hidden row, elementwise."""
    b = hidden.shape[0]
    gates = np.concatenate((x, hidden, x, hidden)) * weight + bias
    forget = sigmoid(gates[:b])
    ingate = sigmoid(gates[b:2 * b])
    outgate = sigmoid(gates[2 * b:3 * b])
    change = np.tanh(gates[3 * b:])
    cell = cell * forget + ingate * change
    return outgate * np.tanh(cell), cell


def objective(main, extra, state, sequence):
    state = state.copy()
    layers = main.shape[0] // 2
    b = sequence.shape[1]
    total = 0.0
    for t in range(sequence.shape[0] - 1):
        x = sequence[t] * extra[0]
        for layer in range(layers):
            hidden, cell = cell_step(main[2 * layer], main[2 * layer + 1], state[2 * layer], state[2 * layer + 1], x)
            state[2 * layer] = hidden
            state[2 * layer + 1] = cell
            x = hidden
        prediction = x * extra[1] + extra[2]
        normalised = prediction - np.log(np.sum(np.exp(prediction)) + 2.0)
        total = total + np.sum(sequence[t + 1] * normalised)
    return -total / ((sequence.shape[0] - 1) * b)


def jax_replacements(jax, scope):
    """JAX carries the state through ``lax.scan`` (a Python loop would be unrolled at 1023 steps) and
    writes it as new arrays (``state.at[row].set``)."""
    jnp = jax.numpy
    cell_step = scope["cell_step"]                  # (its np is jax.numpy)

    def objective(main, extra, state, sequence):
        layers = main.shape[0] // 2
        b = sequence.shape[1]

        def step(state, pair):
            current, following = pair
            x = current * extra[0]
            for layer in range(layers):
                hidden, cell = cell_step(main[2 * layer], main[2 * layer + 1], state[2 * layer],
                                         state[2 * layer + 1], x)
                state = state.at[2 * layer].set(hidden).at[2 * layer + 1].set(cell)
                x = hidden
            prediction = x * extra[1] + extra[2]
            normalised = prediction - jnp.log(jnp.sum(jnp.exp(prediction)) + 2.0)
            return state, jnp.sum(following * normalised)
        _, terms = jax.lax.scan(step, state, (sequence[:-1], sequence[1:]))
        return -jnp.sum(terms) / ((sequence.shape[0] - 1) * b)
    return {"objective": objective}
