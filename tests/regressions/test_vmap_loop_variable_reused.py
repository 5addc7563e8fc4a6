"""Regression (differential fuzzing): vmap of a function whose two loops reuse
the loop variable ``i``, the second with a per-example ``break``.

vmap decides per *name* whether a variable is batched, so ``i`` — batched in
the second loop, whose trip count differs per example — is also treated as
batched in the first loop, where it is a plain int: the generated code reads
``i[..., 0]`` and fails with ``TypeError: 'int' object is not subscriptable``.
Fix (transforms/vmap.py, not ours): track batching per definition (or rename
each loop's target to a fresh name in normalize) so a name rebound by a later
loop does not change how earlier uses are batched.
"""
import numpy as np
import pytest

import transformer as tr
from regressions import loop_variable_reused as case


@pytest.mark.xfail(strict=True, raises=TypeError,
                   reason="bug: vmap treats a loop variable as batched everywhere once a later loop reusing "
                          "its name has a per-example trip count ('int' object is not subscriptable)")
def test_vmap_with_a_reused_loop_variable():
    xb = np.random.default_rng(0).uniform(-1.0, 1.0, size=(2, 3))
    expected = np.stack([case.f(x, 2) for x in xb])
    np.testing.assert_allclose(tr.vmap(case.f, in_axes=(0, None))(xb, 2), expected)
