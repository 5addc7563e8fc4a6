"""Benchmarks for jit: how long transforming takes, and how fast the result runs.

    python benchmarks/bench_jit.py            # full sizes (about a minute)
    python benchmarks/bench_jit.py --quick    # tiny sizes, few repeats: checks it runs

Prints three tables, each as ratios measured in this one run:

1. transform time per function (no numba compile counted: the python target),
   cold (empty cache directory, first transform in a fresh process, and the
   best of repeats in a warm process) and warm (read from the disk cache by a
   fresh process), against the targets of 20 ms cold and 2 ms warm; each
   fresh-process figure is the least of three processes, run as Python runs
   by default (keeping .pyc files); the warm start is also timed under
   PYTHONDONTWRITEBYTECODE=1, where each import compiles its source again
   (0.3-0.5 ms more here: the backend's modules and the generated one);
2. numba compile time of each jitted function (first call, fresh cache) and
   its load time from numba's disk cache in a fresh process;
3. run time of jit(attention) at 256x64 against NumPy, hand-written numba and
   JAX jit (when JAX is installed), and of an elementwise chain on 10^6
   floats against hand-written numba.  Targets: attention <= 1.0x JAX, the
   chain <= 1.0x hand-written numba; the figures of each session are in
   README.md.

Every time is the minimum over repeats (the least disturbed run).  Fresh
processes are started for cold and warm measurements, so imports are not
counted in either.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

# compiled code is timed from its first call: no python tier while numba compiles (transformer/tiers.py)
os.environ.setdefault("TRANSFORMER_TIERED", "0")
import tempfile
import time
from pathlib import Path

import threads  # (--threads N: set before NumPy loads its BLAS)
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

FUNCTIONS = ("scaled_dot_product", "elementwise_chain", "mlp_layer", "rosenbrock")
COLD_TARGET_MS, WARM_TARGET_MS = 20.0, 2.0


def example_args(name: str, scale: float = 1.0):
    """Arguments for each benchmark function (small ones are enough to compile)."""
    rng = np.random.default_rng(0)
    n = max(4, int(256 * scale))
    if name == "scaled_dot_product":
        return tuple(rng.standard_normal((n, 64)) for _ in range(3))
    if name == "elementwise_chain":
        return (rng.standard_normal(max(8, int(1_000_000 * scale))),)
    if name == "mlp_layer":
        return rng.standard_normal((n, 64)), rng.standard_normal((64, 32)), rng.standard_normal(32)
    if name == "rosenbrock":
        return (rng.standard_normal(max(8, int(10_000 * scale))),)
    raise KeyError(name)


def best_time(fn, *args, repeat: int = 7, min_seconds: float = 0.02) -> float:
    """Seconds per call: the minimum over ``repeat`` batches of enough calls to last min_seconds."""
    fn(*args)
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        if time.perf_counter() - start >= min_seconds or number >= 1 << 20:
            break
        number *= 2
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        best = min(best, (time.perf_counter() - start) / number)
    return best


# ------------------------------------------------------ measured in a fresh process
def worker(mode: str, name: str) -> dict:
    """One measurement in this (fresh) process; the cache directory comes from the environment."""
    import bench_functions
    import transformer as tr
    from transformer import staging

    fn = getattr(bench_functions, name)
    if mode == "transform":               # python target: source -> generated module, imported
        start = time.perf_counter()
        staging.build(fn, (), "python")
        return {"seconds": time.perf_counter() - start}
    if mode == "transform-repeats":       # the same in this warm process, each time into an empty cache
        from transformer import source
        best = math.inf
        for _ in range(5):
            os.environ["TRANSFORMER_CACHE_DIR"] = tempfile.mkdtemp(prefix="transformer-bench-")
            source._parsed.clear()        # and parsed again, as a function new to the process would be
            start = time.perf_counter()
            staging.build(fn, (), "python")
            best = min(best, time.perf_counter() - start)
        return {"seconds": best}
    if mode == "compile":                 # cpu target: first call = numba compile (or cache load) + one run
        import numba
        from transformer import backends
        backends.get("cpu")               # importing numba is not part of compiling,
        numba.njit(lambda a: a + 1)(1.0)  # nor is numba's one-time start-up in a process
        args = example_args(name, scale=1 / 64)
        jitted = tr.jit(fn)
        start = time.perf_counter()
        compiled = jitted.compiled(*args)
        staged = time.perf_counter() - start
        try:
            start = time.perf_counter()
            compiled(*args)
            first = time.perf_counter() - start
        except tr.TransformError as err:
            return {"error": str(err).splitlines()[0]}
        return {"staging": staged, "first_call": first - best_time(compiled, *args, repeat=3)}
    raise ValueError(mode)


def in_fresh_process(mode: str, name: str, cache: str, bytecode: bool = True) -> dict:
    """``mode`` measured by a new Python process on the cache directory ``cache``.

    With ``bytecode`` the process runs as Python does by default, keeping
    ``.pyc`` files of what it imports (transformer's modules, the generated
    module in the cache directory); without, as under PYTHONDONTWRITEBYTECODE=1
    on a machine that has never kept one: every import compiles its source.
    """
    env = dict(os.environ, TRANSFORMER_CACHE_DIR=cache)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        # and an empty place to look for .pyc files, so none written by earlier runs is read
        env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONPYCACHEPREFIX=tempfile.mkdtemp(prefix="no-pyc-"))
    result = subprocess.run([sys.executable, __file__, "--worker", mode, name], env=env,
                            capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        return {"error": (result.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(result.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------- tables
def ms(seconds) -> str:
    return f"{seconds * 1e3:8.2f} ms" if seconds is not None else "      n/a"


FRESH_RUNS = 3


def least(results: list[dict]) -> dict:
    """The run with the least seconds, or the first failure."""
    failed = [r for r in results if "error" in r]
    return failed[0] if failed else min(results, key=lambda r: r["seconds"])


def transform_table(functions) -> list[str]:
    rows = [f"{'function':20} {'cold, fresh proc':>16} {'cold, best of 5':>16} {'warm, fresh proc':>16}"
            f" {'warm, no .pyc':>14}   cold/{COLD_TARGET_MS:.0f}ms  warm/{WARM_TARGET_MS:.0f}ms"]
    for name in functions:
        # fresh processes: the least disturbed of three, each cold one with an empty cache directory,
        # each warm one on the directory the first cold one filled
        caches = [tempfile.mkdtemp(prefix="transformer-bench-") for _ in range(FRESH_RUNS)]
        colds = [in_fresh_process("transform", name, cache) for cache in caches]
        in_fresh_process("transform", name, caches[0])      # (its imports leave their .pyc, as any earlier run's)
        warms = [in_fresh_process("transform", name, caches[0]) for _ in range(FRESH_RUNS)]
        no_pyc = [in_fresh_process("transform", name, caches[0], bytecode=False) for _ in range(FRESH_RUNS)]
        repeats = in_fresh_process("transform-repeats", name, tempfile.mkdtemp(prefix="transformer-bench-"))
        cold, warm, no_pyc = least(colds), least(warms), least(no_pyc)
        failed = next((r["error"] for r in (cold, warm, no_pyc, repeats) if "error" in r), None)
        if failed:
            rows.append(f"{name:20} fails: {failed}")
            continue
        rows.append(f"{name:20} {ms(cold['seconds']):>16} {ms(repeats['seconds']):>16} {ms(warm['seconds']):>16}"
                    f" {ms(no_pyc['seconds']):>14}"
                    f"   {cold['seconds'] * 1e3 / COLD_TARGET_MS:9.2f}x  {warm['seconds'] * 1e3 / WARM_TARGET_MS:8.2f}x")
    return rows


def compile_table(functions) -> list[str]:
    rows = [f"{'function':20} {'staging (cpu)':>14} {'numba compile':>14} {'numba cache load':>17}"]
    for name in functions:
        cache = tempfile.mkdtemp(prefix="transformer-bench-")
        cold = in_fresh_process("compile", name, cache)
        if "error" in cold:
            rows.append(f"{name:20} fails: {cold['error']}")
            continue
        warm = in_fresh_process("compile", name, cache)
        rows.append(f"{name:20} {ms(cold['staging']):>14} {ms(cold['first_call']):>14} "
                    f"{ms(warm.get('first_call')):>17}")
    return rows


def runtime_rows(title: str, contenders: dict, args, reference) -> list[str]:
    """Time each contender on ``args``; ratios are transformer's time over each one's."""
    times, notes = {}, {}
    for label, make in contenders.items():
        try:
            fn = make()
            result = np.asarray(fn(*args))
            if not np.allclose(result, reference, rtol=1e-6, atol=1e-9):
                notes[label] = "WRONG RESULT"
            times[label] = best_time(fn, *args)
        except Exception as err:  # a contender that cannot run is reported, not hidden
            notes[label] = f"fails: {type(err).__name__}: {str(err).splitlines()[0][:90]}"
    ours = times.get("transformer jit")
    rows = [title, f"  {'':28} {'time':>12} {'transformer / this':>19}"]
    for label in contenders:
        if label in times:
            ratio = f"{ours / times[label]:18.2f}x" if ours else "               n/a"
            rows.append(f"  {label:28} {times[label] * 1e6:9.1f} us {ratio} {notes.get(label, '')}")
        else:
            rows.append(f"  {label:28} {notes[label]}")
    return rows


def jax_jit(fn_name: str):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    if fn_name == "attention":
        def attention(q, k, v):
            scores = jnp.dot(q, k.T) / jnp.sqrt(q.shape[-1])
            return jnp.dot(jax.nn.softmax(scores, axis=-1), v)
        compiled = jax.jit(attention)
    else:
        compiled = jax.jit(lambda x: jnp.exp(-x ** 2) * jnp.sin(3 * x) + 0.5 * jnp.tanh(x))
    return lambda *args: compiled(*args).block_until_ready()


def runtime_tables(scale: float) -> list[str]:
    import bench_functions
    import hand_numba
    import transformer as tr

    q, k, v = example_args("scaled_dot_product", scale)
    rows = runtime_rows(
        f"jit(attention), q, k, v of shape {q.shape}:",
        {"transformer jit": lambda: tr.jit(bench_functions.scaled_dot_product),
         "NumPy": lambda: bench_functions.scaled_dot_product,
         "hand-written numba": lambda: hand_numba.attention,
         "JAX jit (CPU)": lambda: jax_jit("attention")},
        (q, k, v), bench_functions.scaled_dot_product(q, k, v))
    (x,) = example_args("elementwise_chain", scale)
    rows += [""] + runtime_rows(
        f"elementwise chain exp(-x**2)*sin(3x)+0.5*tanh(x), {x.size} floats:",
        {"transformer jit": lambda: tr.jit(bench_functions.elementwise_chain),
         "NumPy": lambda: bench_functions.elementwise_chain,
         "hand-written numba": lambda: hand_numba.elementwise_chain,
         "JAX jit (CPU)": lambda: jax_jit("chain")},
        (x,), bench_functions.elementwise_chain(x))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, help="limit every library's thread pool (see threads.py)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: check that everything runs")
    parser.add_argument("--worker", nargs=2, metavar=("MODE", "FUNCTION"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return
    import numba
    import transformer
    functions = FUNCTIONS[:2] if args.quick else FUNCTIONS
    print(f"transformer {transformer.__version__}, numba {numba.__version__}, numpy {np.__version__}, "
          f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {threads.describe()}\n")
    print("Transform time (python target: normalize + emit + import; no numba compile):")
    print("\n".join(transform_table(functions)))
    print("\nnumba compile time (first call of jit(f) on small arrays, minus one run):")
    print("\n".join(compile_table(functions)))
    print("\nRun time, best of 7:")
    print("\n".join(runtime_tables(1 / 64 if args.quick else 1.0)))


if __name__ == "__main__":
    main()
