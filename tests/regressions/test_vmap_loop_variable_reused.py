"""Regression (differential fuzzing): vmap of a function whose two loops reuse
the loop variable ``i``, the second with a per-example ``break``.

vmap decides per *name* whether a variable is batched, so ``i`` — batched in
the second loop, whose trip count differs per example — is also treated as
batched in the first loop, where it is a plain int: the generated code reads
``i[..., 0]`` and fails with ``TypeError: 'int' object is not subscriptable``.
Fixed: vmap first gives each reused loop index a name of its own
(transforms/loop_names.py), so a name rebound by a later loop does not change
how earlier uses are batched.
"""
import numpy as np
import pytest

import transformer as tr
from regressions import loop_variable_reused as case


@pytest.mark.parametrize("fn", [case.f, case.g], ids=lambda f: f.__name__)
def test_vmap_with_a_reused_loop_variable(fn):
    xb = np.random.default_rng(0).uniform(-1.0, 1.0, size=(4, 3)) + np.array([[0.0], [1.0], [2.0], [3.0]])
    expected = np.stack([fn(x, 4) for x in xb])
    np.testing.assert_allclose(tr.vmap(fn, in_axes=(0, None))(xb, 4), expected)
    np.testing.assert_allclose(tr.jit(tr.vmap(fn, in_axes=(0, None)))(xb, 4), expected)
