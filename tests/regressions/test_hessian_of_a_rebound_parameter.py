"""Regression (found while testing tr.checkpoint): ``tr.hessian`` of a function whose parameter the
generated code rebinds (``h = euler_steps(h, w)``, the helper inlined with its loop) was wrong from
its second column on.  The columns step (transforms/columns.py) loops the jvp-of-grad body over the
basis vectors, and each column after the first started from the value the previous one left in ``h``.
Each column now starts from the parameter's value on entry."""
import numpy as np
import pytest

import transformer as tr
from regressions import parameter_rebound_by_a_helper as case

RNG = np.random.default_rng(5)
H = RNG.normal(size=4)
W = RNG.normal(size=(4, 4)) / 4


def gradient_differences(fn, eps=1e-5):
    grad = tr.grad(fn)
    return np.stack([(grad(H + eps * e, W) - grad(H - eps * e, W)) / (2 * eps) for e in np.eye(len(H))], axis=1)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_every_hessian_column_starts_from_the_arguments(target):
    want = gradient_differences(case.rebound_by_a_helper)
    got = tr.jit(tr.hessian(case.rebound_by_a_helper), target=target)(H, W) if target == "cpu" \
        else tr.hessian(case.rebound_by_a_helper)(H, W)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
