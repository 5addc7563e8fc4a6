"""User functions for the reverse-mode API tests."""
import numpy as np

import transformer as tr


def loss_with_aux(w, x):
    pred = np.tanh(x @ w)
    loss = np.mean(pred ** 2)
    return loss, pred


def two_args(a, b):
    return np.sum(a * b ** 2)


def with_int(x, n):
    return np.sum(x ** n)


def vector_output(x):
    return np.sin(x) * 2.0


def pair_output(x):
    return np.sum(x), x * 3.0


def mlp_loss(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"] + params["b2"]
    return np.mean((out - y) ** 2)


def layers_loss(layers, x):
    for layer in layers:
        x = np.tanh(x @ layer["W"] + layer["b"])
    return np.sum(x ** 2)


def tuple_params(ab, x):
    a, b = ab
    return np.sum(a * x + b * x ** 2)


square_lambda = lambda x: np.sum(x * x)  # noqa: E731


def sgd_step(w, x):
    """A training step that calls tr.grad inside the function being transformed."""
    g = tr.grad(tanh_loss)(w, x)
    return w - 0.1 * g


def tanh_loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def gradient_norm(x):
    g = tr.grad(sin_energy)(x)
    return np.sum(g * g)


def sin_energy(x):
    return np.sum(np.sin(x) * x)


def second_argument_gradient(a, b):
    return tr.grad(two_args, argnums=1)(a, b) * 2.0


def looped_product(x, y):
    # a vector output through a loop: its vjp function is transformed below
    s = np.sin(x) * y
    for _ in range(2):
        s = s * 1.1 + x
    return s


def dict_output(x):
    return {"double": x * 2.0, "total": np.sum(x * x)}
