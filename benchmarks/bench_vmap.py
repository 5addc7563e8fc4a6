"""Benchmarks for vmap, as ratios measured in one run.

    python benchmarks/bench_vmap.py            # full sizes (a few minutes: numba compiles)
    python benchmarks/bench_vmap.py --quick    # tiny sizes: checks it runs

1. Per-example gradients of logistic regression (B=512, D=100):
   ``jit(vmap(grad(loss), in_axes=(None, 0, 0)))`` against JAX's
   ``jit(vmap(grad(loss)))`` (target <= 1.0x) and against the gradients
   written by hand, vectorised in NumPy (target <= 1.5x).
2. A scalar ODE integrator whose ``while`` runs a different number of steps
   per initial condition, over 10,000 initial conditions: ``jit(vmap(f))``
   against a Python loop of ``jit(f)`` calls (target: >= 50x faster).

Times are the minimum over repeats; compile time is excluded (one call
first).  Every result is checked against a reference before it is timed.
The user functions below are ordinary per-example NumPy code.

Measured on the 2-core development machine (shared, so +-30%), one run each:

    per-example gradients, B=512, D=100    jit(vmap(grad))   / NumPy   / JAX
      before (a loop per example for np.dot, each adjoint helper)  0.81 ms  10.4x  6.6x
      after  (one np.dot of the stacked rows, contiguous rows)     0.26 ms   3.4x  1.7x
      2026-12-01, load average 2.1-2.4 (shared): 0.135 ms 2.89x 3.50x;
      then, load average 2.6-2.8, with no loop per example left (np.dot
      and rt.dot_vjp_x one product each, rt.dot_vjp_y of the batched
      cotangent and batched x elementwise: rt.dot_batched_x and friends)
                                                                   0.077 ms  1.44x  1.68x
      again at load average 1.2-1.4                               0.102 ms  1.56x  1.31x
      (the 1.5x NumPy target is met in one run of two, JAX's 1.0x in neither)
    scalar ODE, 10,000 initial conditions: jit(vmap(f)) 1.3x -> 1.7x faster than a
      Python loop of jit(f) calls (noise: the CPU target runs this per example).
      Each example's few hundred Euler steps take ~7 us; since jit's call costs
      0.8 us (was ~5.5), the loop is mostly that work: jit(vmap(f)) 2.5x, and
      the fastest hand-written numba (SIMD lanes, every core) 6-8x, not 50x.
      Session 5: jit(vmap(f)) runs such code in SIMD lanes itself
      (backends/cpu_lanes.py), as fast as the hand-written lanes; README.md
      has the figures.
      Session 6: what is the same in every active lane (t, and so sin t) is
      computed once a step for the group, and the lanes that are done leave
      the sweep: 117 ms / 1.97 ms = 59.6x.  The hand-written lanes now share
      sin t the same way (they took 16.3 ms with a sin per lane).
"""
from __future__ import annotations

import argparse
import math
import os
import sys

# compiled code is timed from its first call: no python tier while numba compiles (transformer/tiers.py)
os.environ.setdefault("TRANSFORMER_TIERED", "0")
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import transformer as tr  # noqa: E402
import hand_numba  # noqa: E402  (the examples in SIMD lanes, written by hand)

LANES = 1024    # examples per masked while loop in the hand-written version (10 groups for 10,000)


# ------------------------------------------------------------ user functions
def logistic_loss(w, x, y):
    z = np.dot(x, w)
    p = 1.0 / (1.0 + np.exp(-z))
    return -(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def decay_time(x0):
    """Time for x' = -x (1 + sin t) to fall below 0.01, by Euler steps of 0.01."""
    x = x0
    t = 0.0
    while x > 0.01:
        x = x - 0.01 * x * (1.0 + math.sin(t))
        t = t + 0.01
    return t


def hand_vectorised_grads(w, X, y):
    """Per-example gradients of logistic_loss, derived and vectorised by hand."""
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return (p - y)[:, None] * X


# ------------------------------------------------------------------- timing
def best_time(fn, repeats):
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def row(name, seconds, reference=None, target=None):
    ratio = "" if reference is None else f"{seconds / reference:8.2f}x"
    goal = "" if target is None else f"   (target {target})"
    print(f"  {name:<44} {seconds * 1e3:10.3f} ms {ratio}{goal}")


def per_example_gradients(batch, dim, repeats):
    rng = np.random.default_rng(0)
    w, X = rng.normal(size=dim) * 0.1, rng.normal(size=(batch, dim))
    y = (rng.random(batch) > 0.5) * 1.0
    want = hand_vectorised_grads(w, X, y)
    ours = tr.jit(tr.vmap(tr.grad(logistic_loss), in_axes=(None, 0, 0)))
    np.testing.assert_allclose(ours(w, X, y), want, rtol=1e-9, atol=1e-12)
    t_ours = best_time(lambda: ours(w, X, y), repeats)
    t_numpy = best_time(lambda: hand_vectorised_grads(w, X, y), repeats)
    print(f"\nper-example gradients of logistic regression, B={batch}, D={dim}")
    row("transformer jit(vmap(grad))", t_ours)
    row("hand-vectorised NumPy", t_numpy)
    print(f"  {'':<44} ratio transformer / NumPy = {t_ours / t_numpy:.2f}x   (target <= 1.5x)")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        print("  JAX not installed: skipped")
        return
    jax.config.update("jax_enable_x64", True)

    def jax_loss(w, x, y):
        z = jnp.dot(x, w)
        p = 1.0 / (1.0 + jnp.exp(-z))
        return -(y * jnp.log(p) + (1.0 - y) * jnp.log(1.0 - p))

    theirs = jax.jit(jax.vmap(jax.grad(jax_loss), in_axes=(None, 0, 0)))
    np.testing.assert_allclose(np.asarray(theirs(w, X, y)), want, rtol=1e-9, atol=1e-12)
    t_jax = best_time(lambda: theirs(w, X, y).block_until_ready(), repeats)
    row("JAX jit(vmap(grad))", t_jax)
    print(f"  {'':<44} ratio transformer / JAX = {t_ours / t_jax:.2f}x   (target <= 1.0x)")


def batched_ode(count, repeats):
    rng = np.random.default_rng(1)
    x0 = rng.uniform(0.05, 10.0, size=count)
    one = tr.jit(decay_time)
    many = tr.jit(tr.vmap(decay_time))
    want = np.array([decay_time(x) for x in x0[:50]])
    np.testing.assert_allclose([one(x) for x in x0[:50]], want, rtol=1e-12)
    np.testing.assert_allclose(many(x0)[:50], want, rtol=1e-12)
    hand_numba.decay_times_in_lanes(x0[:50], LANES)
    np.testing.assert_allclose(hand_numba.decay_times_in_lanes(x0, LANES)[:50], want, rtol=1e-12)
    t_loop = best_time(lambda: [one(x) for x in x0], max(1, repeats // 3))
    t_vmap = best_time(lambda: many(x0), repeats)
    t_hand = best_time(lambda: hand_numba.decay_times_in_lanes(x0, LANES), repeats)
    print(f"\nscalar ODE with a data-dependent while, {count} initial conditions")
    row("Python loop of jit(f) calls", t_loop)
    row("transformer jit(vmap(f))", t_vmap)
    print(f"  {'':<44} jit(vmap(f)) is {t_loop / t_vmap:.1f}x faster   (target >= 50x)")
    row(f"hand-written numba, SIMD lanes of {LANES}", t_hand)
    print(f"  {'':<44} the hand-written lanes are {t_loop / t_hand:.1f}x faster than the loop;"
          f" transformer / hand-written = {t_vmap / t_hand:.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, few repeats")
    quick = parser.parse_args().quick
    print(f"CPU cores visible: {os.cpu_count()}")
    per_example_gradients(16 if quick else 512, 8 if quick else 100, 3 if quick else 50)
    batched_ode(100 if quick else 10_000, 2 if quick else 7)


if __name__ == "__main__":
    main()
