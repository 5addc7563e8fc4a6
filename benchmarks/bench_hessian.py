"""Second derivatives: jit(hessian(f)) against JAX, and jit(hvp) against jit(f).

    python benchmarks/bench_hessian.py           # about a minute (numba compiles)
    python benchmarks/bench_hessian.py --quick   # fewer repeats

f(x) = sum(tanh(W x + b)) + sum(x^4) / 4 with x of 100 entries
(benchmarks/hessian_functions.py).  Prints one table of times (best of
repeats, after a warm-up call that compiles) and ratios measured in this run:

* jit(hessian(f)) against JAX's jit(hessian(f)) (when JAX is installed);
  target <= 1.0x JAX.  Ours is one compiled call, vmap_pick_jvp_grad_f:
  vmap of the jvp-of-grad function over the 100 basis tangents, so f and
  its gradient (unbatched) are computed once and the products with the
  tangents are two matrix-matrix products (rt.dot_batched_y,
  rt.dot_vjp_y_batched_g), as JAX's one vmapped XLA program does.
* jit(hvp(f)) and jit(grad(f)) against jit(f); target hvp <= 5x f.

Measured 2026-12-01 on the shared 2-core machine, one run each:

                              jit(hessian)   / JAX    jit(hvp) / jit(f)   load average
    before (columns_jvp_grad_f: a loop of
      matrix-vector products per column)     419.3us   3.32x   3.2x    2.35-2.5
    after (vmap over the basis)              156.9us   1.53x   2.8x    2.6-2.8
    three runs more (one with OPENBLAS_NUM_THREADS=1)  148-153us  1.52-1.55x  2.2-3.3x  1.6-1.9
    (one run besides at 2.26x JAX, load 1.4-1.7: the shared machine)
    after the sweep is kept by the arguments' types, shapes and dtypes (no
      call of f to learn its output's shape, no chain built, no lookups:
      about 35 us of Python per call gone), three runs, load 1.2-1.6:
                                             101.6-153.5us  0.69-1.16x  3.2-4.7x
      (JAX's own time swung 89-150us between those runs; ours held at
      102us in the two quieter ones, so near 1.0x, not safely under it)
    with the basis copied in without a moveaxis view, three runs, load 0.7-1.5:
                                             100.6-150.2us  1.07-1.62x  3.1-3.3x
      (1.07x twice, ours 101-103us against JAX's 94-96us; 1.62x once)

What is left: about 95 of our 102us is the compiled call itself, and most
of that is the two 100x100x100 products.  One of them is W times the
identity basis (the jvp's W @ x_dot), a product whose result is W; the
rest is elementwise work on the 100x100 batch (copying the basis in,
adding the zero tangents of constants, the tangent sweep's products).
"""
from __future__ import annotations

import argparse
import os
import sys

# compiled code is timed from its first call: no python tier while numba compiles (transformer/tiers.py)
os.environ.setdefault("TRANSFORMER_TIERED", "0")
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("TRANSFORMER_CACHE_DIR", tempfile.mkdtemp(prefix="bench_hessian-"))

import hessian_functions as hf  # noqa: E402
import transformer as tr  # noqa: E402


def best(fn, *args, repeats=20):
    fn(*args)                                  # compile / warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def jax_hessian_time(x, repeats):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None, None
    jax.config.update("jax_enable_x64", True)
    w, b = jnp.asarray(hf.W), jnp.asarray(hf.B)

    def f(x):
        return jnp.sum(jnp.tanh(w @ x + b)) + 0.25 * jnp.sum(x ** 4)

    hess = jax.jit(jax.hessian(f))
    xj = jnp.asarray(x)
    return best(lambda y: hess(y).block_until_ready(), xj, repeats=repeats), np.asarray(hess(xj))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    repeats = 5 if parser.parse_args().quick else 30
    x = np.random.default_rng(1).uniform(-1.0, 1.0, hf.N)
    v = np.random.default_rng(2).uniform(-1.0, 1.0, hf.N)
    f = tr.jit(hf.tanh_quartic)
    rows = {
        "jit(f)": best(f, x, repeats=repeats),
        "jit(grad(f))": best(tr.jit(tr.grad(hf.tanh_quartic)), x, repeats=repeats),
        "jit(hvp(f))": best(tr.jit(tr.hvp(hf.tanh_quartic)), x, v, repeats=repeats),
        "jit(hessian(f))": best(tr.jit(tr.hessian(hf.tanh_quartic)), x, repeats=repeats),
        "hessian(f) python target": best(tr.hessian(hf.tanh_quartic), x, repeats=max(2, repeats // 10)),
    }
    jax_time, jax_value = jax_hessian_time(x, repeats)
    if jax_value is not None:
        ours = tr.jit(tr.hessian(hf.tanh_quartic))(x)
        assert np.allclose(ours, jax_value, rtol=1e-10, atol=1e-10), "the Hessians disagree"
        rows["JAX jit(hessian(f))"] = jax_time
    base = rows["jit(f)"]
    print(f"f: R^{hf.N} -> R, sum(tanh(W x + b)) + sum(x^4)/4; best of {repeats}")
    print(f"{'':<28}{'time':>12}{'/ jit(f)':>10}{'/ JAX':>10}")
    for name, seconds in rows.items():
        vs_jax = f"{seconds / jax_time:>9.2f}x" if jax_time else f"{'-':>10}"
        print(f"{name:<28}{seconds * 1e6:>10.1f}us{seconds / base:>9.1f}x{vs_jax}")
    print("targets: jit(hvp) <= 5x jit(f); jit(hessian) <= 1.0x JAX")


if __name__ == "__main__":
    main()
