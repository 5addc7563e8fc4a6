"""Regression (differential fuzzing, seed 412): jit(vmap(f)) on the CPU fails
inside numba with ``AssertionError: Sizes of _t3, _t22 do not match`` — a raw
numba error, neither the right answer nor a CompileError naming the user's
line — while vmap(f) on the python target gives the right answer.  Not yet
minimized (each step is a numba compile); suspects: the batched
``np.dot(v0, v0)`` of a keepdims sum, or the batched in-place loop writing
``v6[i7]``.  Fix belongs to the CPU lowering of vmap's output
(backends/numba_*.py or transforms/vmap.py), not to this test's owner.
"""
import numpy as np
import pytest

import transformer as tr
from regressions import dot_keepdims_inplace_loop as case


def batch():
    return np.random.default_rng(412).uniform(-1.0, 1.0, size=(3, 3))


def test_python_target_is_right():
    xb = batch()
    expected = np.stack([case.f(x, 2) for x in xb])
    np.testing.assert_allclose(tr.vmap(case.f, in_axes=(0, None))(xb, 2), expected)


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="bug: jit(vmap(f)) fails inside numba: 'Sizes of _t3, _t22 do not match'")
def test_jit_vmap_on_cpu():
    xb = batch()
    expected = np.stack([case.f(x, 2) for x in xb])
    np.testing.assert_allclose(tr.jit(tr.vmap(case.f, in_axes=(0, None)))(xb, 2), expected)
