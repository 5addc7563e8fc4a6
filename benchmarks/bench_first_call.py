"""Time to first result: a jitted function's first call, cold and warm, against JAX's (issue 23).

    python benchmarks/bench_first_call.py            # the four functions of the issue's table
    python benchmarks/bench_first_call.py --quick    # small sizes: checks that it runs

Each figure is one fresh process: ``import transformer`` (or ``jax``) is not counted, the first call
is.  *Cold*: empty transformer and numba cache directories.  *Warm*: a second process on the cache
directories the cold one left (the cold process waits for its background compile before it exits,
untimed, so that the cache is complete).  transformer is timed three ways:

- ``tiered``: the default, the first calls answered on the python tier while numba compiles in a
  background process (transformer/tiers.py);
- ``untiered``: ``TRANSFORMER_TIERED=0``, the first call waits for numba;
- ``compiled``: the tiered process's first call on the compiled tier once the background compile is
  done, the time a user waits at the switch.

Every result (value and gradient) is checked against NumPy: the value against the function run by
NumPy itself, the gradient by central differences along three random directions.  Ratios are
ours / JAX's; the goal is 2x cold and 1x warm.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()


# ------------------------------------------------------------------ the functions, plain NumPy
def mlp_loss(params, x, y):
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    top = np.max(logits, axis=1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.sum(np.exp(logits - top), axis=1))
    return np.mean(log_norm - np.sum(logits * y, axis=1))


def attention(weights, x):
    wq, wk, wv = weights
    q, k, v = x @ wq, x @ wk, x @ wv
    scores = q @ k.T / np.sqrt(x.shape[1])
    scores = scores - np.max(scores, axis=1, keepdims=True)
    p = np.exp(scores)
    p = p / np.sum(p, axis=1, keepdims=True)
    out = p @ v
    return np.sum(out * out) / x.shape[0]


def rosen(x):
    total = 0.0
    for i in range(x.shape[0] - 1):
        total += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


def logreg(w, x, y):
    z = np.dot(x, w)
    return np.log1p(np.exp(-y * z))


def problem(name: str, quick: bool):
    """(arguments, argument differentiated) of each function, at the issue's sizes."""
    rng = np.random.default_rng(0)
    if name == "mlp":
        n, d, h, c = (16, 32, 16, 10) if quick else (128, 784, 256, 10)
        params = (rng.normal(size=(d, h)) / np.sqrt(d), np.zeros(h), rng.normal(size=(h, c)) / np.sqrt(h), np.zeros(c))
        return (params, rng.normal(size=(n, d)), np.eye(c)[rng.integers(0, c, n)]), 0
    if name == "attention":
        n, d = (16, 8) if quick else (256, 64)
        return (tuple(rng.normal(size=(d, d)) / np.sqrt(d) for _ in range(3)), rng.normal(size=(n, d))), 0
    if name == "rosen":
        return (rng.uniform(-1.0, 1.0, 100 if quick else 10_000),), 0
    if name == "logreg":
        n, d = (16, 8) if quick else (512, 100)
        return (rng.normal(size=d) / np.sqrt(d), rng.normal(size=(n, d)), rng.choice([-1.0, 1.0], n)), 0
    raise ValueError(name)


FUNCTIONS = {"mlp": "jit(value_and_grad(mlp_loss)), 128x784->256->10",
             "attention": "jit(value_and_grad(attention)), 256x64",
             "rosen": "jit(value_and_grad(rosen)), a scalar loop, n = 10^4",
             "logreg": "jit(vmap(grad(logreg), in_axes=(None, 0, 0))), 512x100"}


# ------------------------------------------------------------------ one fresh process
def transformer_function(name: str, tiered: bool):
    import transformer as tr
    if name == "logreg":
        return tr.jit(tr.vmap(tr.grad(logreg), in_axes=(None, 0, 0)), tiered=tiered)
    return tr.jit(tr.value_and_grad({"mlp": mlp_loss, "attention": attention, "rosen": rosen}[name]),
                  tiered=tiered)


def jax_function(name: str):
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    if name == "rosen":       # a Python loop would be unrolled by JAX's tracing: its loop is fori_loop
        def jax_rosen(x):
            def step(i, total):
                return total + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
            return jax.lax.fori_loop(0, x.shape[0] - 1, step, 0.0)
        return jax.jit(jax.value_and_grad(jax_rosen))
    namespace = {"np": jnp}
    exec(inspect.getsource({"mlp": mlp_loss, "attention": attention, "logreg": logreg}[name]), namespace)
    fn = namespace[{"mlp": "mlp_loss", "attention": "attention", "logreg": "logreg"}[name]]
    if name == "logreg":
        return jax.jit(jax.vmap(jax.grad(fn), in_axes=(None, 0, 0)))
    return jax.jit(jax.value_and_grad(fn))


def as_numpy(result):
    if isinstance(result, (tuple, list)):
        return [as_numpy(r) for r in result]
    return np.asarray(result, dtype=np.float64)


def one_process(name: str, contender: str, quick: bool, out: str) -> None:
    """Run in a fresh process: time the first call, save what it returned."""
    args, _ = problem(name, quick)
    report = {}
    if contender == "jax":
        fn = jax_function(name)
        start = time.perf_counter()
        result = fn(*args)
        result = as_numpy(result)          # JAX dispatches asynchronously: the result is ready here
        report["first"] = time.perf_counter() - start
    else:
        fn = transformer_function(name, tiered=contender == "tiered")
        start = time.perf_counter()
        result = as_numpy(fn(*args))
        report["first"] = time.perf_counter() - start
        if contender == "tiered":
            import transformer as tr
            report["first_tier"] = tr.tier_of(fn)
            for build in fn.tiers():         # untimed: the cache is complete when this process ends
                build.wait()
            start = time.perf_counter()
            switched = as_numpy(fn(*args))
            report["switch"] = time.perf_counter() - start
            report["switch_tier"] = tr.tier_of(fn)
            Path(out + ".switched.pickle").write_bytes(pickle.dumps(flatten(switched)))
    Path(out + ".pickle").write_bytes(pickle.dumps(flatten(result)))
    Path(out + ".json").write_text(json.dumps(report))


def flatten(result) -> list:
    if isinstance(result, list):
        return [leaf for r in result for leaf in flatten(r)]
    return [result]


def fresh_process(name, contender, quick, caches, out):
    env = dict(os.environ, TRANSFORMER_CACHE_DIR=caches[0], NUMBA_CACHE_DIR=caches[1])
    subprocess.run([sys.executable, str(HERE), "--one", name, contender, out] + (["--quick"] if quick else []),
                   check=True, env=env)
    report = json.loads(Path(out + ".json").read_text())
    report["result"] = pickle.loads(Path(out + ".pickle").read_bytes())
    if Path(out + ".switched.pickle").exists():
        report["switched"] = pickle.loads(Path(out + ".switched.pickle").read_bytes())
    return report


# ------------------------------------------------------------------ checks against NumPy
def expected(name: str, quick: bool):
    """The value (or, for logreg, the per-example gradients) from NumPy alone, and a gradient check."""
    args, wrt = problem(name, quick)
    fn = {"mlp": mlp_loss, "attention": attention, "rosen": rosen, "logreg": logreg}[name]
    if name == "logreg":
        w, x, y = args
        per_example = np.array([_gradient_by_differences(lambda w_: logreg(w_, xi, yi), w) for xi, yi in zip(x, y)])
        return per_example
    return fn(*args)


def _gradient_by_differences(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        up, down = x.copy(), x.copy()
        up.flat[i] += h
        down.flat[i] -= h
        g.flat[i] = (f(up) - f(down)) / (2 * h)
    return g


def check(name: str, quick: bool, leaves: list, who: str) -> None:
    """Value against NumPy; gradient by central differences along three random directions."""
    args, wrt = problem(name, quick)
    if name == "logreg":
        np.testing.assert_allclose(leaves[0], expected(name, quick), rtol=1e-5, atol=1e-7, err_msg=who)
        return
    fn = {"mlp": mlp_loss, "attention": attention, "rosen": rosen}[name]
    np.testing.assert_allclose(leaves[0], fn(*args), rtol=1e-9, err_msg=who)
    grads = leaves[1:]
    primal = args[wrt] if isinstance(args[wrt], tuple) else (args[wrt],)
    rng = np.random.default_rng(7)
    for _ in range(3):
        direction = [rng.normal(size=np.shape(p)) for p in primal]
        h = 1e-6

        def at(step):
            moved = tuple(p + step * d for p, d in zip(primal, direction))
            new_args = list(args)
            new_args[wrt] = moved if isinstance(args[wrt], tuple) else moved[0]
            return fn(*new_args)
        numeric = (at(h) - at(-h)) / (2 * h)
        ours = sum(float(np.sum(g * d)) for g, d in zip(grads, direction))
        assert abs(ours - numeric) <= 1e-5 * max(1.0, abs(numeric)), (who, ours, numeric)


# ------------------------------------------------------------------ the table
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--one", nargs=3, metavar=("NAME", "CONTENDER", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--only", nargs="*", default=list(FUNCTIONS))
    options = parser.parse_args()
    if options.one:
        one_process(*options.one[:2], options.quick, options.one[2])
        return
    try:
        import jax  # noqa: F401
        have_jax = True
    except ImportError:
        have_jax = False
        print("JAX is not installed: transformer's times only (pip install jax to compare)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-first-call-") as scratch:
        for name in options.only:
            figures = {}
            for contender in ("tiered", "untiered") + (("jax",) if have_jax else ()):
                caches = [tempfile.mkdtemp(dir=scratch) for _ in range(2)]
                for state in ("cold", "warm"):
                    out = str(Path(scratch) / f"{name}-{contender}-{state}")
                    report = fresh_process(name, contender, options.quick, caches, out)
                    check(name, options.quick, report["result"], f"{name} {contender} {state}")
                    if "switched" in report:
                        check(name, options.quick, report["switched"], f"{name} {contender} {state}, switched")
                    figures[contender, state] = report
            rows.append((name, figures))
            print_row(name, figures, have_jax)
    print("\nevery value and gradient above was checked against NumPy (values) and central differences")


def print_row(name: str, figures: dict, have_jax: bool) -> None:
    print(f"\n{FUNCTIONS[name]}")
    for state in ("cold", "warm"):
        tiered, untiered = figures["tiered", state], figures["untiered", state]
        jax_time = figures["jax", state]["first"] if have_jax else None

        def ratio(seconds):
            return f" ({seconds / jax_time:5.1f}x JAX)" if jax_time else ""
        line = (f"  {state}: tiered first call {tiered['first']:6.3f} s{ratio(tiered['first'])} "
                f"on the {tiered['first_tier']} tier; untiered {untiered['first']:6.3f} s{ratio(untiered['first'])}; "
                f"the switch to compiled code {tiered['switch']:6.3f} s")
        if jax_time:
            line += f"; JAX {jax_time:6.3f} s"
        print(line)


if __name__ == "__main__":
    main()
