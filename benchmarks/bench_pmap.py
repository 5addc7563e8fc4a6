"""pmap benchmarks, as ratios measured in one run.

    TRANSFORMER_CPU_DEVICES=2 python benchmarks/bench_pmap.py          # CPU devices + dispatch
    python benchmarks/bench_pmap.py --mpi                               # also 1 vs 2 MPI ranks

1. A compute-bound training step (gradient of a 2-layer MLP loss on 4096
   rows): one device on the whole batch vs 2 local CPU devices on half each.
2. The same step on 1 vs 2 MPI ranks (each rank its share of the batch).
3. Dispatch overhead: pmap of a tiny function on 1 device vs jit of it.

Best of several repeats; on a shared machine the numbers move, so read the
ratios, not the absolute times.
"""
import os
import subprocess
import sys
import sysconfig
import time

# One BLAS thread per device: otherwise the 1-device baseline's matrix products
# already use every core and the comparison measures BLAS, not pmap.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import transformer as tr  # noqa: E402

ROWS, FEATURES, HIDDEN = 4096, 64, 256


def loss(w1, w2, x, y):
    h = np.tanh(x @ w1)
    return np.mean((h @ w2 - y) ** 2)


def tiny(x):
    return x + 1.0


def best_seconds(fn, *args, repeats=20):
    fn(*args)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best


def cores_used(fn, *args, repeats=10):
    """CPU seconds this process spent per wall second while running ``fn``: how many cores it had."""
    fn(*args)
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeats):
        fn(*args)
    return (time.process_time() - cpu) / (time.perf_counter() - wall)


def problem(rows=ROWS, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((FEATURES, HIDDEN)) / 8, rng.standard_normal(HIDDEN) / 16,
            rng.standard_normal((rows, FEATURES)), rng.standard_normal(rows))


def local_devices():
    w1, w2, x, y = problem()
    step = tr.grad(loss, argnums=(0, 1))
    one = tr.pmap(tr.jit(step), in_axes=(None, None, 0, 0), devices=tr.devices()[:1])
    two = tr.pmap(tr.jit(step), in_axes=(None, None, 0, 0), devices=tr.devices()[:2])
    t1 = best_seconds(one, w1, w2, x[None], y[None])
    t2 = best_seconds(two, w1, w2, x.reshape(2, -1, FEATURES), y.reshape(2, -1))
    print(f"training step, 1 CPU device : {t1 * 1e3:8.2f} ms")
    print(f"training step, 2 CPU devices: {t2 * 1e3:8.2f} ms   speed-up {t1 / t2:.2f}x (target >= 1.7x)")
    busy = cores_used(two, w1, w2, x.reshape(2, -1, FEATURES), y.reshape(2, -1))
    print(f"  cores the 2-device step got: {busy:.2f} of 2 (CPU time / wall time; below 2 the machine "
          f"was busy with other work, and the speed-up measures that)")


def dispatch():
    x = np.ones((1, 4))
    jitted = tr.jit(tiny)
    mapped = tr.pmap(tiny, devices=tr.devices()[:1])
    t_jit = best_seconds(jitted, x[0], repeats=2000)
    t_pmap = best_seconds(mapped, x, repeats=2000)
    mapped2 = tr.pmap(tiny, devices=tr.devices()[:2])
    t_pmap2 = best_seconds(mapped2, np.ones((2, 4)), repeats=2000)
    print(f"dispatch: jit {t_jit * 1e6:.1f} us, pmap on 1 device {t_pmap * 1e6:.1f} us "
          f"(+{(t_pmap - t_jit) * 1e6:.1f} us), on 2 devices {t_pmap2 * 1e6:.1f} us (target <= 100 us)")


def mpi_rank_main():
    """Run under mpiexec: each rank times its share of the batch."""
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    w1, w2, x, y = problem()
    share = ROWS // comm.Get_size()
    r = comm.Get_rank()
    step = tr.pmap(tr.jit(tr.grad(loss, argnums=(0, 1))), in_axes=(None, None, 0, 0), backend="mpi")
    seconds = best_seconds(step, w1, w2, x[None, r * share:(r + 1) * share], y[None, r * share:(r + 1) * share])
    if r == 0:
        print(f"{seconds:.6f}")


def mpi_ranks():
    mpiexec = os.path.join(sysconfig.get_path("scripts"), "mpiexec")
    times = {}
    for n in (1, 2):
        out = subprocess.run([mpiexec, "-n", str(n), sys.executable, __file__, "--mpi-rank"], capture_output=True,
                             text=True, timeout=900, check=True).stdout
        times[n] = float(out.strip().splitlines()[-1])
        print(f"training step, {n} MPI rank(s): {times[n] * 1e3:8.2f} ms")
    print(f"MPI speed-up 1 -> 2 ranks: {times[1] / times[2]:.2f}x")


if __name__ == "__main__":
    if "--mpi-rank" in sys.argv:
        mpi_rank_main()
    else:
        local_devices()
        dispatch()
        if "--mpi" in sys.argv:
            mpi_ranks()
