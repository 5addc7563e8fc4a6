"""Regression (issues 18 and 24): a helper that returns early (``if x > 1: return 1.0``, a return in
a loop, ``while True`` with a return) was refused ("a function called from a transformed function
must return only at its end"); ADBench's hand tracking has one.  Such a helper is now rewritten to
one exit (a result, a flag, breaks, and what follows under ``if not returned``) and inlined: each
case agrees with Python and with central differences under grad, jvp, vmap and jit, on either side
of each exit."""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad
from regressions import helpers_returning_early as case

CASES = [case.uses_clipped, case.uses_first_large_power, case.uses_searched_twice, case.uses_newton_sqrt,
         case.uses_in_the_else_of_a_loop, case.uses_one_line, case.uses_a_helper_returning_nothing_early,
         case.helper_in_a_loop]
# points on each side of the exits: clipped's bounds, the first power past 2, the search's 3.0,
# the loop's else taken or not
POINTS = [np.array([0.3, -0.6, 0.9]), np.array([1.4, -1.7, 0.2]), np.array([1.2, 1.6, -0.8]),
          np.array([0.9, 1.05, 1.3])]


@pytest.mark.parametrize("fn", CASES, ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("target", ["python", "cpu"])
def test_helpers_returning_early_agree_with_python_and_differences(fn, target):
    for x in POINTS:
        assert tr.jit(fn, target=target)(x) == pytest.approx(fn(x.copy()), rel=1e-12)
        np.testing.assert_allclose(tr.jit(tr.grad(fn), target=target)(x), central_difference_grad(fn, (x,)),
                                   rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", CASES, ids=lambda fn: fn.__name__)
def test_forward_mode_and_batches_take_each_examples_exit(fn):
    direction = np.array([0.3, -0.7, 1.1])
    batch = np.stack(POINTS)
    for x in POINTS:
        _, tangent = tr.jvp(fn, (x,), (direction,))
        assert tangent == pytest.approx(float(central_difference_grad(fn, (x,)) @ direction), rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(tr.vmap(fn)(batch), [fn(x.copy()) for x in POINTS], rtol=1e-12)


@pytest.mark.parametrize("fn", [case.uses_clipped, case.uses_a_helper_returning_nothing_early, case.helper_in_a_loop],
                         ids=lambda fn: fn.__name__)
def test_batched_gradients_through_exits(fn):
    # (the other cases tape values under exits that differ between examples, which vmap(grad) refuses,
    # as it refuses the same loops written without a helper: issue 21)
    batch = np.stack(POINTS)
    np.testing.assert_allclose(tr.vmap(tr.grad(fn))(batch), [tr.grad(fn)(x) for x in POINTS], rtol=1e-12)


def test_the_inlined_exit_reads_as_the_users_lines():
    shown = tr.show(tr.jit(case.uses_clipped, target="python"), POINTS[0])
    for line in ("# def clipped(v):   [helpers_returning_early.py:5]", "clipped_returned = False",
                 "# return 1.0   [helpers_returning_early.py:7]", "clipped_result = 1.0", "_t5 = not clipped_returned"):
        assert line in shown


@pytest.mark.parametrize("fn", [case.uses_settled, case.set_in_a_branch_then_in_a_loop], ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_value_set_in_a_branch_before_a_loop_and_in_the_loop(fn, n):
    # found by the fuzzer (hessian of the first): the backward sweep read the value the loop's write
    # replaced from the tape, which held none where the branch before the loop had not run (IndexError)
    for x in (np.array([0.05, -0.1, 0.02]), np.array([0.9, 0.8, 0.7]), np.array([0.3, -0.6, 0.9])):
        want = central_difference_grad(lambda v: fn(v, n), (x,))
        np.testing.assert_allclose(tr.grad(fn)(x, n), want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(tr.jit(tr.grad(fn))(x, n), want, rtol=1e-6, atol=1e-8)
        hessian = tr.hessian(fn)(x, n)
        columns = [(tr.grad(fn)(x + 1e-6 * e, n) - tr.grad(fn)(x - 1e-6 * e, n)) / 2e-6 for e in np.eye(3)]
        np.testing.assert_allclose(hessian, np.array(columns).T, rtol=1e-5, atol=1e-6)
