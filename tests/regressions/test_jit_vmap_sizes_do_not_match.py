"""Regression (differential fuzzing, seed 412): jit(vmap(f)) on the CPU failed
inside numba with ``AssertionError: Sizes of _t3, _t22 do not match`` while
vmap(f) on the python target gave the right answer.

Cause: vmap's per-example loops were compiled with ``njit(parallel=True)``,
and numba's parallel pipeline rewrites *all* array code of the function and
refuses NumPy broadcasting of a size-1 axis (``x + b[:, None]``), which vmap's
code uses for unbatched operands.  Parallel loops are off until each one is
compiled as a function of its own (backends/numba_parallel.py).
"""
import numpy as np

import transformer as tr
from regressions import dot_keepdims_inplace_loop as case


def batch():
    return np.random.default_rng(412).uniform(-1.0, 1.0, size=(3, 3))


def test_python_target_is_right():
    xb = batch()
    expected = np.stack([case.f(x, 2) for x in xb])
    np.testing.assert_allclose(tr.vmap(case.f, in_axes=(0, None))(xb, 2), expected)


def test_jit_vmap_on_cpu():
    xb = batch()
    expected = np.stack([case.f(x, 2) for x in xb])
    np.testing.assert_allclose(tr.jit(tr.vmap(case.f, in_axes=(0, None)))(xb, 2), expected)
