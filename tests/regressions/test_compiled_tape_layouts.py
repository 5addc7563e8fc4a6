"""Regression (found by the fuzzer): ``tr.jit(tr.grad(f))`` of a loop-carried value whose first
value is a transpose raised numba's bare AssertionError.  numba types a tape (a list) from
its first entry, an F-ordered array, and then cannot append the C-ordered values of later
iterations.  Every value of a taped variable is now C-ordered under numba (``nl.tape_entry``,
free for a C-ordered array).  The python target was always right; the compiled gradient must
equal it."""
import numpy as np
import pytest

import transformer as tr
from regressions import transposed_on_a_tape as case


def test_transposed_first_value_of_a_carried_variable():
    x = np.array([0.3])
    np.testing.assert_allclose(tr.jit(tr.grad(case.transposed_then_carried))(x),
                               tr.grad(case.transposed_then_carried)(x), rtol=1e-12)


@pytest.mark.parametrize("order", ["C", "F"])
def test_an_argument_in_either_order_rebound_in_a_loop(order):
    a = np.asarray(np.random.default_rng(2).normal(size=(3, 3)), order=order)
    np.testing.assert_allclose(tr.jit(tr.grad(case.rebinds_its_argument))(a),
                               tr.grad(case.rebinds_its_argument)(a), rtol=1e-12)
