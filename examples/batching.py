"""vmap: write the code for one example, get the batched code.

    python examples/batching.py

* ``vmap`` of the seed's ``linear_step`` with ``in_axes=(0, None, None)``:
  a batch of inputs through shared weights;
* per-example gradients, ``vmap(grad(loss), in_axes=(None, 0, 0))``: the
  gradient of each example's loss, as used for per-example clipping in
  differentially private training;

each checked against a Python loop over the examples, and compiled with jit.
"""
import numpy as np

import transformer as tr


def linear_step(x, w, b):
    return np.tanh(np.dot(w, x) + b)


def loss(w, x, y):
    logit = np.dot(x, w)
    return np.logaddexp(0.0, logit) - y * logit


rng = np.random.default_rng(0)
w, b = rng.normal(size=(4, 3)), rng.normal(size=4)
xs = rng.normal(size=(8, 3))

batched = tr.vmap(linear_step, in_axes=(0, None, None))
out = batched(xs, w, b)
loop = np.stack([linear_step(x, w, b) for x in xs])
print(f"vmap(linear_step): {xs.shape} inputs -> {out.shape} outputs; matches a Python loop: {np.allclose(out, loop)}")
print(f"jit(vmap(linear_step)) matches too: {np.allclose(tr.jit(batched)(xs, w, b), loop)}")

weights = rng.normal(size=3)
labels = (rng.uniform(size=8) > 0.5).astype(float)
per_example = tr.jit(tr.vmap(tr.grad(loss), in_axes=(None, 0, 0)))
grads = per_example(weights, xs, labels)
loop = np.stack([tr.grad(loss)(weights, x, y) for x, y in zip(xs, labels)])
print(f"per-example gradients: shape {grads.shape}; match one grad call per example: {np.allclose(grads, loop)}")
norms = np.linalg.norm(grads, axis=1)
clipped = grads / np.maximum(1.0, norms / 0.5)[:, None]
print(f"largest per-example gradient norm {norms.max():.3f}; after clipping to 0.5: "
      f"{np.linalg.norm(clipped, axis=1).max():.3f}")

source = tr.show(batched)
print("\nThe batched code (note the strategy comment):\n")
print(source[source.index("def "):])
