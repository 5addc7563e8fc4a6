"""Regression (long differential fuzzing, 2026-12-03): ``jit`` of ``(x + x).sum(axis=0).T`` for a
vector ``x`` did not compile: the sum is a number, and numba's np.transpose takes arrays only.
transposes now lower to ``nl.transpose``, which returns a number as it is."""
import numpy as np

import transformer as tr
from regressions import transpose_of_a_number as case


def test_jit_of_a_transposed_number():
    x = np.random.default_rng(0).random(3)
    np.testing.assert_allclose(tr.jit(case.f)(x, 2), case.f(x, 2), rtol=1e-13)
    batch = np.stack([x, 2.0 * x])
    np.testing.assert_allclose(tr.jit(tr.vmap(case.f, in_axes=(0, None)))(batch, 2),
                               np.stack([case.f(b, 2) for b in batch]), rtol=1e-13)
