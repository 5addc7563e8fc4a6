"""Derivatives of plain NumPy code: grad, vjp and jvp, and the code they write.

    python examples/grad_vjp_jvp.py

A small regression model, differentiated three ways:

* ``tr.grad`` — the gradient of a scalar loss (reverse mode);
* ``tr.vjp``  — a vector-Jacobian product of a vector-valued function;
* ``tr.jvp``  — a Jacobian-vector product (forward mode);

each checked against central finite differences, then compiled with
``tr.jit``.  Finally it prints the gradient code transformer generated, so you
can read how reverse mode works: a forward sweep that runs your code, then a
backward sweep that walks it in reverse, one ``# vjp of:`` block per line.
"""
import numpy as np

import transformer as tr


def predict(w, x):
    hidden = np.tanh(x @ w[:, :3])
    return hidden @ w[0, 3:] + 0.5


def loss(w, x, y):
    error = predict(w, x) - y
    return np.mean(error ** 2)


def central_difference(f, w, eps=1e-6):
    grad = np.zeros_like(w)
    for index in np.ndindex(w.shape):
        step = np.zeros_like(w)
        step[index] = eps
        grad[index] = (f(w + step) - f(w - step)) / (2 * eps)
    return grad


rng = np.random.default_rng(0)
w = rng.normal(size=(2, 6)) * 0.5
x = rng.normal(size=(5, 2))
y = rng.normal(size=5)

# --- grad: reverse mode --------------------------------------------------------
gradient = tr.grad(loss)(w, x, y)
reference = central_difference(lambda w_: loss(w_, x, y), w)
print(f"grad(loss) has shape {gradient.shape}; matches finite differences: "
      f"{np.allclose(gradient, reference, atol=1e-8)}")
value, gradient_jit = tr.jit(tr.value_and_grad(loss))(w, x, y)
print(f"jit(value_and_grad(loss)): loss {value:.6f}, same gradient: {np.allclose(gradient_jit, gradient)}")

# --- vjp: a cotangent pulled back through a vector-valued function --------------
out, vjp_fn = tr.vjp(predict, w, x)
cotangent = np.arange(5.0)
w_bar, x_bar = vjp_fn(cotangent)
reference = central_difference(lambda w_: np.dot(cotangent, predict(w_, x)), w)
print(f"vjp(predict) returns one cotangent per argument: {w_bar.shape}, {x_bar.shape}; "
      f"matches finite differences: {np.allclose(w_bar, reference, atol=1e-8)}")

# --- jvp: a tangent pushed forward --------------------------------------------
direction = rng.normal(size=w.shape)
out, out_dot = tr.jvp(predict, (w, x), (direction, np.zeros_like(x)))
eps = 1e-6
reference = (predict(w + eps * direction, x) - predict(w - eps * direction, x)) / (2 * eps)
print(f"jvp(predict) along a random direction matches finite differences: {np.allclose(out_dot, reference, atol=1e-8)}")

# --- the generated gradient code ----------------------------------------------
source = tr.show(tr.grad(loss))
body = source[source.index("def grad_loss"):]
print("\nThe gradient transformer wrote (tr.show(tr.grad(loss))):\n")
print(body)
