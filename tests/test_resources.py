"""Resources: repeated calls of generated code do not leak.

An MPI rank that fails alone ending the whole job with its error (rather than
hanging) is tested with the MPI backend, under ``mpiexec``, in
tests/test_pmap_mpi.py::test_a_rank_that_fails_alone_ends_the_job_with_its_error.
"""
import gc
import os

import numpy as np
import pytest

import numerics_cases as c
import transformer as tr


def resident_bytes() -> int:
    """This process's resident set size, from /proc (Linux)."""
    with open(f"/proc/{os.getpid()}/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc to read the resident set size")
def test_ten_thousand_jitted_gradient_calls_do_not_grow_memory():
    step = tr.jit(tr.grad(c.scaled_tanh_sum))
    x = np.linspace(-1.0, 1.0, 64)
    for _ in range(1000):                 # warm-up: compile, allocator pools, numba's caches
        step(x, 0.3)
    gc.collect()
    before = resident_bytes()
    for _ in range(10_000):
        step(x, 0.3)
    gc.collect()
    grown = resident_bytes() - before
    # a leak of even one 64-float array per call would be 5 MB; allow 1 MB of allocator noise
    assert grown < 1 << 20, f"resident memory grew by {grown / 1024:.0f} KiB over 10,000 calls"


def test_ten_thousand_python_target_gradient_calls_do_not_grow_memory():
    step = tr.jit(tr.grad(c.scaled_tanh_sum), target="python")
    x = np.linspace(-1.0, 1.0, 64)
    for _ in range(1000):
        step(x, 0.3)
    gc.collect()
    before = resident_bytes()
    for _ in range(10_000):
        step(x, 0.3)
    gc.collect()
    grown = resident_bytes() - before
    assert grown < 1 << 20, f"resident memory grew by {grown / 1024:.0f} KiB over 10,000 calls"
