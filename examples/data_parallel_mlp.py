"""Data-parallel training of a small MLP with pmap, on local CPU devices.

    python examples/data_parallel_mlp.py          # TRANSFORMER_CPU_DEVICES=2 to choose the count

The dataset is two interleaved spirals (the classic "two spirals" task),
generated here from a fixed seed so every run sees the same 512 points.
Each step:

1. ``pmap(jit(grad(loss)))`` — every device computes the gradient of the loss
   on its own slice of the batch, in parallel (compiled, GIL released);
2. ``pmap(sgd_update)`` — ``lax.pmean`` averages the devices' gradients and
   every device applies the same update, so the parameters stay replicated.

Because the loss is a mean and the slices are equal, the averaged gradient is
exactly the full-batch gradient: we train a single-device copy side by side
with ``jit(grad(loss))`` and check the two sets of parameters agree.
"""
import numpy as np

import transformer as tr
from transformer import lax

STEPS = 200
LEARNING_RATE = 0.2


def two_spirals(n_points, seed=0):
    """(x, y): n_points 2-D points on two noisy spirals, labels 0 and 1."""
    rng = np.random.default_rng(seed)
    half = n_points // 2
    turns = np.sqrt(rng.random(half)) * 1.5 * np.pi
    arm = np.stack([np.cos(turns) * turns, np.sin(turns) * turns], axis=1) / (1.5 * np.pi)
    x = np.concatenate([arm, -arm]) + 0.02 * rng.standard_normal((2 * half, 2))
    y = np.concatenate([np.zeros(half), np.ones(half)])
    order = rng.permutation(2 * half)
    return x[order], y[order]


def init_params(seed=1, hidden=32):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((2, hidden)) * 1.0, np.zeros(hidden),
            rng.standard_normal((hidden, hidden)) / np.sqrt(hidden), np.zeros(hidden),
            rng.standard_normal(hidden) / np.sqrt(hidden), 0.0)


def loss(params, x, y):
    """Mean logistic loss of a 2-layer tanh MLP."""
    w1, b1, w2, b2, w3, b3 = params
    h1 = np.tanh(x @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    logits = h2 @ w3 + b3
    return np.mean(np.log(1.0 + np.exp(-logits)) + (1.0 - y) * logits)


def sgd_update(params, grads):
    """One SGD step with the gradient averaged over every device."""
    w1, b1, w2, b2, w3, b3 = params
    g1, gb1, g2, gb2, g3, gb3 = grads
    g1 = lax.pmean(g1, "batch")
    gb1 = lax.pmean(gb1, "batch")
    g2 = lax.pmean(g2, "batch")
    gb2 = lax.pmean(gb2, "batch")
    g3 = lax.pmean(g3, "batch")
    gb3 = lax.pmean(gb3, "batch")
    return (w1 - LEARNING_RATE * g1, b1 - LEARNING_RATE * gb1, w2 - LEARNING_RATE * g2,
            b2 - LEARNING_RATE * gb2, w3 - LEARNING_RATE * g3, b3 - LEARNING_RATE * gb3)


def accuracy(params, x, y):
    w1, b1, w2, b2, w3, b3 = params
    logits = np.tanh(np.tanh(x @ w1 + b1) @ w2 + b2) @ w3 + b3
    return np.mean((logits > 0) == (y > 0.5))


def main():
    n_devices = min(len(tr.devices()), 4)
    x, y = two_spirals(512)
    shards_x = x.reshape(n_devices, -1, 2)          # device d trains on rows d*k .. (d+1)*k
    shards_y = y.reshape(n_devices, -1)
    print(f"two spirals: {len(x)} points, {n_devices} CPU devices, {len(x) // n_devices} points each")

    device_grads = tr.pmap(tr.jit(tr.grad(loss)), in_axes=(None, 0, 0))
    update = tr.pmap(sgd_update, axis_name="batch", in_axes=(None, 0), out_axes=None)
    full_batch_grad = tr.jit(tr.grad(loss))

    params = init_params()
    single = init_params()
    first_loss = loss(params, x, y)
    for step in range(STEPS):
        params = update(params, device_grads(params, shards_x, shards_y))
        single = tuple(p - LEARNING_RATE * g for p, g in zip(single, full_batch_grad(single, x, y)))
        if step % 100 == 0:
            print(f"step {step:3d}  loss {loss(params, x, y):.4f}")
    final_loss = loss(params, x, y)
    print(f"loss {first_loss:.4f} -> {final_loss:.4f}; loss fell: {final_loss < 0.8 * first_loss}")
    print(f"training accuracy: {accuracy(params, x, y):.3f}")
    gap = max(float(np.max(np.abs(np.asarray(p) - np.asarray(s)))) for p, s in zip(params, single))
    print(f"largest difference from single-device training: {gap:.2e}; "
          f"parameters match single-device training: {gap < 1e-9}")


if __name__ == "__main__":
    main()
