"""Regression: forward mode through np.linalg.lstsq of a constant matrix raised NameError in the
generated code.  lstsq's tangent rule returns a tuple (solution, residuals, rank, singular values);
with the matrix inactive, the singular values' tangent folded to zero and was dropped, but the
tuple still named it.  Such an element is now written as zeros shaped like the output's."""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad, central_difference_hessian
from regressions import least_squares_of_a_constant_matrix as case

Y = np.linspace(-0.8, 1.1, 8)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_jvp_and_hessian_through_lstsq_of_a_constant_matrix(target):
    direction = np.cos(3.0 * Y)
    _, tangent = tr.jvp(case.fit, (Y,), (direction,))
    assert tangent == pytest.approx(float(central_difference_grad(case.fit, (Y,)) @ direction), rel=1e-7)
    hessian = tr.jit(tr.hessian(case.fit), target=target)(Y)
    np.testing.assert_allclose(hessian, central_difference_hessian(case.fit, (Y,)), rtol=1e-5, atol=1e-6)
