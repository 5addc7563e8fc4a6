"""GPU check for target="cuda": correctness against NumPy and speed against the CPU path.

    python benchmarks/gpu_check.py          # on a machine with an NVIDIA GPU (well under 5 minutes)
    python benchmarks/gpu_check.py --sim    # numba's CUDA simulator, tiny sizes (checks correctness only)

Three workloads:
1. an elementwise chain on 10^7 float64 elements (one fused kernel);
2. a 2048 x 2048 float32 matmul (the tiled shared-memory kernel);
3. vmap of an ODE integrator (200 RK2 steps of a damped pendulum) over 10^6
   initial conditions, one thread per example.

Each row: the largest error against NumPy, seconds per call for NumPy, for
``tr.jit(f)`` (target cpu) and for ``tr.jit(f, target="cuda")`` with device
inputs (kernels only) and with host inputs (copies included), best of 3.
Simulator timings measure a Python interpreter pretending to be a GPU: they
are printed for completeness, never as GPU figures.
"""
import argparse
import os
import sys
import time

import numpy as np

import transformer as tr       # importing transformer never imports numba.cuda


def chain(x, y):
    a = np.tanh(x * 1.5 + y)
    b = np.exp(-x * x) * a
    return b + 0.5 * np.sqrt(y * y + 1.0)


def matmul(a, b):
    return a @ b


def pendulum(theta, omega, damping, steps):
    dt = 0.005
    for step in range(steps):
        alpha = -np.sin(theta) - damping * omega
        theta_mid = theta + 0.5 * dt * omega
        omega_mid = omega + 0.5 * dt * alpha
        alpha_mid = -np.sin(theta_mid) - damping * omega_mid
        theta = theta + dt * omega_mid
        omega = omega + dt * alpha_mid
    return theta, omega


def best_of(fn, *args, repeat=3, sync=None):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        if sync:
            sync()
        best = min(best, time.perf_counter() - start)
    return best


def max_error(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    return max(float(np.max(np.abs(np.asarray(g, np.float64) - np.asarray(w, np.float64)))) for g, w in zip(got, want))


def row(name, error, tolerance, numpy_s, cpu_s, gpu_device_s, gpu_host_s):
    ok = "ok" if error <= tolerance else f"WRONG (tolerance {tolerance:g})"
    print(f"{name:<34} {error:>10.2e} {ok:<6} {numpy_s:>10.4f} {cpu_s:>10.4f} {gpu_device_s:>10.4f} {gpu_host_s:>10.4f}"
          f"   cpu/gpu {cpu_s / gpu_device_s:>7.1f}x")
    return error <= tolerance


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sim", action="store_true", help="run on numba's CUDA simulator with tiny sizes")
    args = parser.parse_args()
    if args.sim:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"        # before numba.cuda is first imported
    from numba import cuda

    if not args.sim and not cuda.is_available():
        sys.exit("no CUDA GPU is available here; run with --sim to check correctness on the simulator")
    n_elements, n_matrix, n_examples, steps = (4096, 40, 256, 20) if args.sim else (10 ** 7, 2048, 10 ** 6, 200)
    sync = cuda.synchronize
    rng = np.random.default_rng(0)
    print(f"device: {'numba CUDA simulator (not a GPU: timings are meaningless)' if args.sim else cuda.get_current_device().name}")
    print(f"{'workload':<34} {'max error':>10} {'':<6} {'numpy s':>10} {'cpu jit s':>10} {'gpu dev s':>10} "
          f"{'gpu host s':>10}")
    all_ok = True

    # 1. elementwise chain
    x, y = rng.standard_normal(n_elements), rng.standard_normal(n_elements)
    cpu, gpu = tr.jit(chain), tr.jit(chain, target="cuda")
    want = chain(x, y)
    cpu(x, y), gpu(x, y)                                 # compile both
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    all_ok &= row(f"elementwise chain, n={n_elements:.0e}", max_error(gpu(x, y), want), 1e-12,
                  best_of(chain, x, y), best_of(cpu, x, y), best_of(gpu, dx, dy, sync=sync), best_of(gpu, x, y))

    # 2. matmul
    a = rng.standard_normal((n_matrix, n_matrix)).astype(np.float32)
    b = rng.standard_normal((n_matrix, n_matrix)).astype(np.float32)
    cpu, gpu = tr.jit(matmul), tr.jit(matmul, target="cuda")
    want = a.astype(np.float64) @ b.astype(np.float64)
    cpu(a, b), gpu(a, b)
    da, db = cuda.to_device(a), cuda.to_device(b)
    all_ok &= row(f"matmul {n_matrix}x{n_matrix} float32", max_error(gpu(a, b), want), 2e-3 * np.sqrt(n_matrix),
                  best_of(matmul, a, b), best_of(cpu, a, b), best_of(gpu, da, db, sync=sync), best_of(gpu, a, b))

    # 3. per-example vmap of an ODE integrator
    theta, omega = rng.uniform(-2, 2, n_examples), rng.uniform(-1, 1, n_examples)
    batched = tr.vmap(pendulum, in_axes=(0, 0, None, None))
    cpu, gpu = tr.jit(batched), tr.jit(batched, target="cuda")
    want = pendulum(theta, omega, 0.1, steps)            # plain NumPy: the same code on whole arrays
    cpu(theta, omega, 0.1, steps), gpu(theta, omega, 0.1, steps)
    dt_, do_ = cuda.to_device(theta), cuda.to_device(omega)
    all_ok &= row(f"vmap ODE, {n_examples:.0e} examples x {steps}", max_error(gpu(theta, omega, 0.1, steps), want),
                  1e-9, best_of(pendulum, theta, omega, 0.1, steps), best_of(cpu, theta, omega, 0.1, steps),
                  best_of(gpu, dt_, do_, 0.1, steps, sync=sync), best_of(gpu, theta, omega, 0.1, steps))
    print("all correct" if all_ok else "SOME RESULTS ARE WRONG")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
