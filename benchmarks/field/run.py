"""The field's AD benchmarks (ADBench, GradBench), each written as a NumPy user would write it.

    python benchmarks/field/run.py                  # every problem at GradBench's sizes
    python benchmarks/field/run.py gmm lstm         # some of them
    python benchmarks/field/run.py --quick          # the small sizes only: checks that it runs

For each problem (one module here each) the runner first checks, on the small size, that
``tr.jit(tr.grad)`` agrees with central differences and with ``jax.grad`` (where JAX is installed).
Then, for every size, it times in one process, in interleaved rounds: the NumPy objective,
``tr.jit`` of it, ``tr.jit(tr.grad)``, JAX's ``jit`` objective and ``jit(grad)``.  It prints
GradBench's headline figure, a gradient's time over its objective's, for each library (the
objective's time is each library's own jitted one), and ours over JAX's for the gradient and for the
objective.  A problem whose gradient is refused or wrong says so in its row.

The JAX version of a problem is its own NumPy objective with ``np`` bound to ``jax.numpy``, and
with the helpers the module replaces (``jax_replacements(jax, scope)``, given the rebound helpers: where NumPy code writes into an array,
JAX code writes ``x.at[i].set(v)``).
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
import types
from pathlib import Path

os.environ.setdefault("TRANSFORMER_TIERED", "0")     # compiled code from its first call
HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent.parent / "tests")]
import threads  # noqa: E402,F401  (--threads N: set before NumPy loads its BLAS)
import numpy as np  # noqa: E402

import transformer as tr  # noqa: E402
from bench_grad import best_times  # noqa: E402
from oracles import central_difference_grad  # noqa: E402  (tests/oracles.py: needs nothing of ours)

PROBLEMS = ("gmm", "lstm", "ba", "ht", "htc", "ode", "kmeans", "lse", "llsq", "particle")


def load(name):
    return importlib.import_module(name)


def ours(problem):
    """(jit objective, jit grad) of the problem's objective."""
    return tr.jit(problem.objective), tr.jit(tr.grad(problem.objective, argnums=problem.WRT))


def forward_derivative(problem):
    """Ours by JAX's own route where JAX has to take forward mode (``JAX_DERIVATIVE = "jacfwd"``):
    the jvp with tangent 1 in the problem's one argument, a number.  None for other problems."""
    if getattr(problem, "JAX_DERIVATIVE", "grad") != "jacfwd" or problem.WRT != (0,):
        return None
    objective = problem.objective

    def derivative(w):
        return tr.jvp(objective, (w,), (1.0,))[1]
    return tr.jit(derivative)


def jax_or_none():
    try:
        import jax
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    return jax


def jax_version(problem, jax):
    """The problem's objective as JAX code: its own, or its NumPy source with np = jax.numpy."""
    import jax.scipy.special
    scope = dict(vars(problem), np=jax.numpy)
    if "scipy" in scope:
        scope["scipy"] = types.SimpleNamespace(special=jax.scipy.special)
    for name, value in vars(problem).items():             # its helpers (and those it imports) see jax.numpy too
        if isinstance(value, types.FunctionType) and value.__module__ in (problem.__name__, *PROBLEMS):
            scope[name] = types.FunctionType(value.__code__, scope, name, value.__defaults__)
    if hasattr(problem, "jax_replacements"):
        scope.update(problem.jax_replacements(jax, scope))
    return scope["objective"]


def jax_derivative(problem, jax):
    """jax.grad, or the transform JAX has to use instead (``JAX_DERIVATIVE``: jacfwd where JAX cannot
    reverse-differentiate the problem's loop)."""
    return getattr(jax, getattr(problem, "JAX_DERIVATIVE", "grad"))


def check(problem, jax) -> str:
    """'' when the gradient on the small size agrees with central differences (and JAX), else why not."""
    args = problem.inputs(**problem.SIZES["small"])
    try:
        _, gradient = ours(problem)
        got = gradient(*args)
    except tr.TransformError as err:
        return f"refused: {err}"
    got = got if isinstance(got, tuple) else (got,)
    want = [central_difference_grad(problem.objective, args, argnum=i) for i in problem.WRT]
    for g, w in zip(got, want):
        if not np.allclose(g, w, rtol=1e-5, atol=1e-6):
            return f"WRONG against central differences (max error {np.max(np.abs(g - w)):.3g})"
    if jax is not None:
        theirs = jax.jit(jax_derivative(problem, jax)(jax_version(problem, jax), argnums=problem.WRT),
                         static_argnums=getattr(problem, "STATIC", ()))(*args)
        for g, w in zip(got, theirs):
            if not np.allclose(g, np.asarray(w), rtol=1e-9, atol=1e-11):
                return f"differs from JAX's gradient (max {np.max(np.abs(g - np.asarray(w))):.3g})"
    return ""


def timed(problem, size, jax, rounds):
    args = problem.inputs(**problem.SIZES[size])
    objective, gradient = ours(problem)
    contenders = {"numpy": lambda: problem.objective(*args), "ours f": lambda: objective(*args),
                  "ours grad": lambda: gradient(*args)}
    forward = forward_derivative(problem)
    if forward is not None:
        np.testing.assert_allclose(forward(*args), gradient(*args), rtol=1e-9)
        contenders["ours fwd"] = lambda: forward(*args)
    if jax is not None:
        static = getattr(problem, "STATIC", ())         # ints that shape the computation (loop counts)
        jf = jax.jit(jax_version(problem, jax), static_argnums=static)
        jg = jax.jit(jax_derivative(problem, jax)(jax_version(problem, jax), argnums=problem.WRT),
                     static_argnums=static)
        contenders["jax f"] = lambda: jax.block_until_ready(jf(*args))
        contenders["jax grad"] = lambda: jax.block_until_ready(jg(*args))
    return best_times(contenders, rounds=rounds, min_seconds=0.02, settle_seconds=0.05)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="*", default=PROBLEMS)
    parser.add_argument("--quick", action="store_true", help="the small sizes only")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, help="limit every library's thread pool (see threads.py)")
    args = parser.parse_args()
    jax = jax_or_none()
    print(threads.describe(), "| jax:", jax.__version__ if jax else "not installed")
    header = (f"{'problem':10} {'size':10} {'numpy f':>10} {'ours f':>10} {'ours grad':>10} {'jax f':>10} "
              f"{'jax grad':>10} {'ours g/f':>9} {'jax g/f':>8} {'grad o/j':>9} {'f o/j':>7} {'f o/np':>7}")
    print(header)
    for name in args.problems:
        problem = load(name)
        start = time.perf_counter()
        verdict = check(problem, jax)
        if verdict:
            print(f"{name:10} {'small':10} {verdict[:150]}")
            continue
        for size in (["small"] if args.quick else [s for s in problem.SIZES if s != "small"]):
            t = timed(problem, size, jax, args.rounds)
            jf, jg = t.get("jax f", np.nan), t.get("jax grad", np.nan)
            print(f"{name:10} {size:10} " + " ".join(f"{t.get(k, np.nan) * 1e3:8.3f}ms" for k in
                                                      ("numpy", "ours f", "ours grad", "jax f", "jax grad"))
                  + f" {t['ours grad'] / t['ours f']:9.2f} {jg / jf:8.2f} {t['ours grad'] / jg:9.2f}"
                  + f" {t['ours f'] / jf:7.2f} {t['ours f'] / t['numpy']:7.2f}", flush=True)
            if "ours fwd" in t:
                print(f"{'':10} {'':10} ours by JAX's route (forward mode, tr.jvp): {t['ours fwd'] * 1e3:.3f}ms,"
                      f" {t['ours fwd'] / t['ours f']:.2f} of ours f, {t['ours fwd'] / jg:.2f} of JAX's", flush=True)
        print(f"{'':10} (checked and timed in {time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
