"""``--threads N``: every contender on the same number of threads.

Import this before NumPy, numba or JAX: the thread pools of OpenBLAS (NumPy's
and numba's matrix products), numba and XLA read their sizes from the
environment once, when they load.

On a machine whose cores are busy with other work, BLAS's spinning threads
slow a 256x64 matrix product a hundredfold while XLA's pool barely suffers, so
ratios measured with default pools there say more about the load than about
the code.  ``--threads 1`` compares like with like; without the option each
library keeps its defaults.
"""
from __future__ import annotations

import os
import sys


def requested() -> int | None:
    """The N of ``--threads N`` on the command line (also passed on to worker processes)."""
    for i, arg in enumerate(sys.argv):
        if arg == "--threads" and i + 1 < len(sys.argv):
            return int(sys.argv[i + 1])
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
    value = os.environ.get("BENCH_THREADS")
    return int(value) if value else None


def limit(count: int) -> None:
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[variable] = str(count)
    os.environ["BENCH_THREADS"] = str(count)          # fresh worker processes inherit it
    if count == 1:
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1").strip()
    # XLA's CPU runtime keeps a pool of its own whatever the flags say (its process used
    # 1.6 cores with them), so the process is also held to ``count`` cores, which every
    # thread it starts inherits
    if hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, cores[:count])


def describe() -> str:
    count = requested()
    return "library default thread pools" if count is None else f"every library limited to {count} thread(s)"


if requested() is not None:
    limit(requested())
