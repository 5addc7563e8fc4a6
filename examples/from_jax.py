"""A JAX training script, run by transformer with only its imports changed.

Under JAX this file begins:

    import jax
    import jax.numpy as jnp
    from jax import grad, jit, lax, random
    from jax.scipy.special import logsumexp

Everything below the imports is the JAX program as written for JAX: parameters as a
list of (w, b) tuples drawn with explicit random keys, a predict that loops over
params[:-1], an update that returns a list comprehension over zip(params, grads),
and the training loop as lax.fori_loop, each step drawing its own minibatch from
a key folded with the step number, inside the compiled loop.  tr.random gives
jax.random's numbers for the same keys, so both runs see the same data, the same
initial weights and the same minibatches.
"""
import numpy as np

import numpy as jnp
import transformer as jax
from scipy.special import logsumexp
from transformer import grad, jit, lax, random

STEP_SIZE = 0.5
STEPS = 200
BATCH_SIZE = 128


def init_params(sizes, key):
    keys = random.split(key, len(sizes) - 1)
    return [(random.normal(k, (m, n)) / jnp.sqrt(m), jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


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


def sgd_step(params, x, y, key):
    rows = random.choice(key, x.shape[0], (BATCH_SIZE,), replace=False)
    return update(params, x[rows], y[rows])


def train(params, x, y, key):
    return lax.fori_loop(0, STEPS, lambda i, p: sgd_step(p, x, y, random.fold_in(key, i)), params)


def numpy_grad(params, x, y):
    """grad(loss) on transformer's python target: the same generated code, run by Python."""
    return jit(grad(loss), target="python")(params, x, y)


def make_data(key, n=512):
    """Three classes of points on a noisy spiral, with one-hot labels."""
    k_label, k_radius, k_noise = random.split(key, 3)
    labels = random.randint(k_label, (n,), 0, 3)
    radius = random.uniform(k_radius, (n,), minval=0.2, maxval=1.0)
    angle = labels * 2.0 * jnp.pi / 3.0 + 2.5 * radius + 0.2 * random.normal(k_noise, (n,))
    x = jnp.stack([radius * jnp.cos(angle), radius * jnp.sin(angle)], axis=1)
    return x, jnp.eye(3)[labels]


def main():
    k_data, k_init, k_train = random.split(random.PRNGKey(0), 3)
    x, y = make_data(k_data)
    params = init_params([2, 32, 32, 3], k_init)
    print(f"loss before training: {loss(params, x, y):.3f}, accuracy {accuracy(params, x, y):.2f}")
    trained = jit(train)(params, x, y, k_train)   # STEPS minibatch steps, compiled, the batches drawn inside
    print(f"loss after {STEPS} steps under jit: {loss(trained, x, y):.3f}, accuracy {accuracy(trained, x, y):.2f}")
    step_by_step = params
    for i in range(STEPS):                        # the same steps in plain NumPy, one call at a time
        rows = random.choice(random.fold_in(k_train, i), x.shape[0], (BATCH_SIZE,), replace=False)
        grads = numpy_grad(params=step_by_step, x=x[rows], y=y[rows])
        step_by_step = [(w - STEP_SIZE * dw, b - STEP_SIZE * db) for (w, b), (dw, db) in zip(step_by_step, grads)]
    same = all(np.allclose(a, b) for a, b in zip(jax.tree_util.tree_leaves(trained),
                                                 jax.tree_util.tree_leaves(step_by_step)))
    print(f"jit(train) matches {STEPS} steps run without compiling: {same}")
    print(f"loss fell: {loss(trained, x, y) < loss(params, x, y)}")


if __name__ == "__main__":
    main()
