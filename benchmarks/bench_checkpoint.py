"""tr.checkpoint's memory and time: a long loop differentiated with and without it, against JAX's
``jax.checkpoint`` (issue 22).

    python benchmarks/bench_checkpoint.py            # T=200 outer steps of K=10 Euler substeps, n=256
    python benchmarks/bench_checkpoint.py --quick    # small sizes: checks that it runs

The problem: ``h`` (n numbers) advanced T times by ``step``, each K explicit Euler substeps of
dh/dt = tanh(W h); the loss is sum(h^2); the gradient is with respect to h and W.  Plain reverse mode
tapes every substep's state (T*K states); checkpointing ``step`` tapes T states and recomputes each
step's substeps in the backward sweep.

*Memory*: transformer's peak of the gradient call on the python target, measured by tracemalloc (its
tapes are the lists of NumPy arrays the compiled code keeps in numba's lists, the same values); JAX's,
the temporary buffers XLA's compiled gradient allocates (``memory_analysis().temp_size_in_bytes``).
*Time*: ``bench_jit.best_time`` of ``jit(grad)``, ours on the CPU target.  Every gradient is checked
against the plain one and against central differences along a random direction.
"""
from __future__ import annotations

import argparse
import os
import tracemalloc

os.environ.setdefault("TRANSFORMER_TIERED", "0")     # time compiled code from the first call

import numpy as np

import transformer as tr
from bench_jit import best_time      # the suite's timer: the best of batches of calls

T, K = 200, 10


def step(h, w):
    for _ in range(K):
        h = h + 0.05 * np.tanh(w @ h)
    return h


checkpointed_step = tr.checkpoint(step)


def loss(h, w):
    for _ in range(T):
        h = step(h, w)
    return np.sum(h * h)


def checkpointed_loss(h, w):
    for _ in range(T):
        h = checkpointed_step(h, w)
    return np.sum(h * h)


def peak_bytes(fn, *args) -> int:
    fn(*args)                                    # built and run once: only the call is measured
    tracemalloc.start()
    fn(*args)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def check(grads, want, h, w, direction, rtol=1e-9):
    for a, b in zip(grads, want):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-12 * np.max(np.abs(b)))
    eps = 1e-6
    slope = (loss(h + eps * direction, w) - loss(h - eps * direction, w)) / (2 * eps)
    assert abs(np.dot(want[0], direction) - slope) <= 1e-5 * max(1.0, abs(slope)), (np.dot(want[0], direction), slope)


def jax_figures(h, w):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def jstep(h, w):
        return jax.lax.fori_loop(0, K, lambda _, h: h + 0.05 * jnp.tanh(w @ h), h)

    def make(body):
        def jloss(h, w):
            return jnp.sum(jax.lax.fori_loop(0, T, lambda _, h: body(h, w), h) ** 2)
        return jax.jit(jax.grad(jloss, argnums=(0, 1)))
    figures = {}
    for name, body in (("plain", jstep), ("checkpoint", jax.checkpoint(jstep))):
        fn = make(body)
        compiled = fn.lower(h, w).compile()
        analysis = compiled.memory_analysis()
        memory = analysis.temp_size_in_bytes if analysis is not None else float("nan")
        got = fn(h, w)
        figures[name] = (memory, best_time(lambda a, b: jax.block_until_ready(fn(a, b)), h, w),
                         [np.asarray(g) for g in got])
    return figures


def main():
    global T, K
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    n = 256
    if options.quick:
        T, K, n = 20, 5, 16
    rng = np.random.default_rng(0)
    h = rng.normal(size=n)
    w = rng.normal(size=(n, n)) * 0.5 / np.sqrt(n)
    direction = rng.normal(size=n)

    plain_python = tr.jit(tr.grad(loss, argnums=(0, 1)), target="python")
    checkpointed_python = tr.jit(tr.grad(checkpointed_loss, argnums=(0, 1)), target="python")
    want = plain_python(h, w)
    check(checkpointed_python(h, w), want, h, w, direction)
    plain_cpu = tr.jit(tr.grad(loss, argnums=(0, 1)))
    checkpointed_cpu = tr.jit(tr.grad(checkpointed_loss, argnums=(0, 1)))
    check(plain_cpu(h, w), want, h, w, direction)
    check(checkpointed_cpu(h, w), want, h, w, direction)

    rows = [("transformer, plain", peak_bytes(plain_python, h, w), best_time(plain_cpu, h, w)),
            ("transformer, tr.checkpoint", peak_bytes(checkpointed_python, h, w), best_time(checkpointed_cpu, h, w))]
    jax_rows = jax_figures(h, w)
    if jax_rows is not None:
        for name, (memory, seconds, grads) in jax_rows.items():
            # XLA sums in another order: over 2000 substeps, a few entries differ in their 9th digit
            check(grads, want, h, w, direction, rtol=1e-7)
            rows.append((f"JAX, {name}", memory, seconds))
    state = n * 8
    print(f"T={T} outer steps of K={K} Euler substeps, n={n}: one state is {state} bytes, "
          f"T*K states {T * K * state / 1e6:.2f} MB, T states {T * state / 1e6:.2f} MB")
    print(f"{'':30} {'memory (MB)':>12} {'/ plain':>8} {'jit(grad) ms':>13} {'/ plain':>8}")
    for name, memory, seconds in rows:
        base = rows[0] if name.startswith("transformer") else rows[2]
        print(f"{name:30} {memory / 1e6:12.2f} {memory / base[1]:8.2f} {seconds * 1e3:13.2f} {seconds / base[2]:8.2f}")
    if jax_rows is None:
        print("(JAX is not installed: pip install jax for its figures)")
    else:
        print(f"transformer / JAX, tr.checkpoint against jax.checkpoint: time {rows[1][2] / rows[3][2]:.2f}x")


if __name__ == "__main__":
    main()
