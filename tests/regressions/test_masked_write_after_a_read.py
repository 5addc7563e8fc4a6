"""Regression: ``tr.jit`` of a function that reads an array, then writes into it through a boolean
mask, then uses what it read, gave the value read *after* the write.  The CPU target lowers
``y[mask] = v`` to a call, ``nl.put(y, mask, v)``, before its fusion pass puts single-use
elementwise temporaries back into the expressions that read them; that pass saw an assignment to
a subscript as a write, but not the call, and moved ``np.sin(y)`` past it (index 2 came back 0.0
instead of sin(4) = -0.757).  A call made for its effect now ends fusion as a write does."""
import numpy as np
import pytest

import transformer as tr

from regressions.masked_write_after_a_read import sine_then_masked_write, sine_then_row_write


def test_a_read_is_not_moved_past_a_masked_write():
    x, mask = np.arange(4.0), np.array([True, False, True, False])
    np.testing.assert_allclose(tr.jit(sine_then_masked_write)(x, mask), sine_then_masked_write(x, mask), rtol=1e-15)


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_a_read_is_not_moved_past_a_slice_write(target):
    x = np.linspace(0.0, 1.0, 5)
    np.testing.assert_allclose(tr.jit(sine_then_row_write, target=target)(x), sine_then_row_write(x), rtol=1e-15)
