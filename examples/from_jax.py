"""A JAX training script, run by transformer with only its imports changed.

Under JAX this file begins:

    import jax
    import jax.numpy as jnp
    from jax import grad, jit, lax
    from jax.scipy.special import logsumexp

Everything below the imports is the JAX program as written for JAX: parameters as a
list of (w, b) tuples, a predict that loops over params[:-1], an update that
returns a list comprehension over zip(params, grads), and the training loop
as lax.fori_loop.  (The data and the initial parameters come from NumPy's
random generator, which both runs share.)
"""
import numpy as np

import numpy as jnp
import transformer as jax
from scipy.special import logsumexp
from transformer import grad, jit, lax

STEP_SIZE = 0.5


def init_params(sizes, rng):
    return [(rng.normal(size=(m, n)) / np.sqrt(m), np.zeros(n)) for m, n in zip(sizes[:-1], sizes[1:])]


def predict(params, x):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, x, y):
    return -jnp.mean(jnp.sum(predict(params, x) * y, axis=1))


def accuracy(params, x, y):
    return jnp.mean(jnp.argmax(predict(params, x), axis=1) == jnp.argmax(y, axis=1))


def update(params, x, y):
    grads = grad(loss)(params, x, y)
    return [(w - STEP_SIZE * dw, b - STEP_SIZE * db) for (w, b), (dw, db) in zip(params, grads)]


def train(params, x, y):
    return lax.fori_loop(0, 100, lambda i, p: update(p, x, y), params)


def numpy_grad(params, x, y):
    """grad(loss) on transformer's python target: the same generated code, run by Python."""
    return jit(grad(loss), target="python")(params, x, y)


def make_data(rng, n=512):
    """Three classes of points on a noisy spiral, with one-hot labels."""
    labels = rng.integers(0, 3, n)
    radius = rng.uniform(0.2, 1.0, n)
    angle = labels * 2.0 * np.pi / 3.0 + 2.5 * radius + rng.normal(scale=0.2, size=n)
    x = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    return x, np.eye(3)[labels]


def main():
    rng = np.random.default_rng(0)
    x, y = make_data(rng)
    params = init_params([2, 32, 32, 3], rng)
    print(f"loss before training: {loss(params, x, y):.3f}, accuracy {accuracy(params, x, y):.2f}")
    trained = jit(train)(params, x, y)                  # 100 steps of gradient descent, compiled
    print(f"loss after 100 steps under jit: {loss(trained, x, y):.3f}, accuracy {accuracy(trained, x, y):.2f}")
    step_by_step = params
    for _ in range(100):                                # the same steps in plain NumPy, one call at a time
        grads = numpy_grad(params=step_by_step, x=x, y=y)
        step_by_step = [(w - STEP_SIZE * dw, b - STEP_SIZE * db) for (w, b), (dw, db) in zip(step_by_step, grads)]
    same = all(np.allclose(a, b) for a, b in zip(jax.tree_util.tree_leaves(trained),
                                                 jax.tree_util.tree_leaves(step_by_step)))
    print(f"jit(train) matches 100 steps run without compiling: {same}")
    print(f"loss fell: {loss(trained, x, y) < loss(params, x, y)}")


if __name__ == "__main__":
    main()
