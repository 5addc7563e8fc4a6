"""Regression: vmap(grad(f)) of a function whose loop holds a branch on per-example values was
refused ("grad's tape is used here under a condition ... which vmap cannot batch yet").  Batched,
both branches run for every example, each keeping its own values, so every example pushes and pops
the tape in the same order, provided the backward sweep runs the branches in the reverse order of the
forward sweep's (vmap.py's if_statement).  A loop whose passes differ per example stays refused,
with the reason.  Checked against central differences per example."""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad, central_difference_hessian

BATCH = np.array([[0.3, -0.6, 1.1], [0.7, 0.2, -0.4], [-0.5, -0.9, 0.8], [0.9, 0.6, 0.55]])


def ring_with_a_branch(x):
    y = np.zeros(3)
    for k in range(3):
        y[k] = x[k] * x[(k + 1) % 3]
    total = 0.0
    i = 0
    while i < 3:
        if y[i] > 0.0:
            total = total + np.sin(y[i])
        else:
            total = total + y[i] ** 3
        i += 1
    return total


def nested_branches(x):
    s = 0.0
    for k in range(3):
        if x[k] > 0:
            if x[k] > 0.5:
                s = s + np.exp(x[k]) * s
            else:
                s = s * x[k] + 1.0
        else:
            s = np.sin(s + x[k])
    return s


def until_small(x):
    while np.sum(x * x) > 0.1:
        x = 0.5 * x
    return np.sum(np.sin(x))


@pytest.mark.parametrize("f", [ring_with_a_branch, nested_branches])
@pytest.mark.parametrize("jit", [False, True])
def test_vmap_of_grad_through_per_example_branches(f, jit):
    batched = tr.vmap(tr.grad(f))
    got = (tr.jit(batched) if jit else batched)(BATCH)
    np.testing.assert_allclose(got, [central_difference_grad(f, (x,)) for x in BATCH], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("f", [ring_with_a_branch, nested_branches])
def test_vmap_of_hessian_through_per_example_branches(f):
    np.testing.assert_allclose(tr.vmap(tr.hessian(f))(BATCH), [central_difference_hessian(f, (x,)) for x in BATCH],
                               rtol=1e-5, atol=1e-6)


def test_a_loop_whose_passes_differ_runs_once_per_example():
    # it was refused ("grad's tape is used in a loop whose passes differ between examples")
    np.testing.assert_allclose(tr.vmap(tr.grad(until_small))(BATCH),
                               [central_difference_grad(until_small, (x,)) for x in BATCH], rtol=1e-7, atol=1e-9)
