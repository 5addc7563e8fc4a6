"""hessian(f) as ONE generated function looping over basis vectors (transforms/columns.py):
the statements that do not depend on the swept tangent run once, before the loop."""
import numpy as np
import pytest

import corpus_columns
import corpus_composition
import transformer as tr
from oracles import central_difference_hessian
from transformer import core_form
from transformer.staging import Step, make_core

RTOL, ATOL = 1e-5, 1e-5


def _columns_core(fn, nargs=1):
    steps = (Step("grad", (("argnums", (0,)), ("has_aux", False))),
             Step("jvp", (("active", (0,)), ("ndims", (1,) * nargs))),
             Step("columns", (("sizes", (0,)), ("tangent", nargs))))
    return make_core(fn, steps)


def test_f_and_its_gradient_are_computed_once_before_the_loop():
    core = _columns_core(corpus_composition.tanh_quartic)
    core_form.check(core.node)
    code = core.code()
    before, loop = code.split("for _k in range(_n):")
    assert any(line.endswith("= W @ x") for line in before.splitlines())
    assert not any(line.endswith("= W @ x") for line in loop.splitlines())
    assert any(line.endswith("= W @ x_dot") for line in loop.splitlines()) and "columns[_k] = " in loop
    assert "# one column per entry of x: x_dot sweeps the basis vectors" in before


def test_a_value_read_before_it_is_reassigned_stays_in_the_loop():
    code = _columns_core(corpus_columns.reassigned).code()
    _, loop = code.split("for _k in range(_n):")
    assert "np.cos(x)" in loop      # its a is assigned after the tangent sweep read the first a


@pytest.mark.parametrize("target", ["python", "cpu"])
@pytest.mark.parametrize("fn, args", [
    (corpus_columns.reassigned, (np.linspace(-0.9, 0.8, 5),)),
    (corpus_columns.filled_in_a_loop, (np.linspace(-0.9, 0.8, 4), np.linspace(0.3, -0.5, 4))),
], ids=["reassigned", "filled_in_a_loop"])
def test_hessian_matches_central_differences(fn, args, target):
    hessian = tr.hessian(fn, argnums=(0, 1) if len(args) == 2 else 0)
    got = (hessian if target == "python" else tr.jit(hessian))(*args)
    if len(args) == 1:
        np.testing.assert_allclose(got, central_difference_hessian(fn, args), rtol=RTOL, atol=ATOL)
        return
    for i in range(2):
        np.testing.assert_allclose(got[i][i], central_difference_hessian(fn, args, i), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(got[0][1], np.transpose(got[1][0]), rtol=1e-12, atol=1e-12)


def test_a_scalar_argument_takes_one_call_per_column():
    t = 0.7
    h = 1e-4
    f = corpus_composition.wave
    expected = (f(t + h) - 2.0 * f(t) + f(t - h)) / (h * h)
    np.testing.assert_allclose(tr.hessian(f)(t), expected, rtol=1e-5)


def test_show_with_arguments_prints_what_a_call_runs():
    x = corpus_composition.vec()
    code = tr.show(tr.hessian(corpus_composition.tanh_quartic), x)
    assert "def columns_jvp_grad_tanh_quartic(x):" in code and "for _k in range(_n):" in code


def _diagonal_hessian(x):
    """The Hessian of corpus_columns.quartic_sine: diag(3 x^2 - sin x), shaped x.shape * 2."""
    return np.reshape(np.diag(np.ravel(3.0 * x ** 2 - np.sin(x))), np.shape(x) * 2)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_call_with_another_shape_dtype_or_rank_gets_its_own_hessian(target):
    # what a call runs is kept by its arguments' types, shapes and dtypes: each new one builds its own
    hessian = tr.hessian(corpus_columns.quartic_sine)
    hessian = hessian if target == "python" else tr.jit(hessian)
    calls = [np.linspace(-0.9, 0.8, 20),                            # vmap over the basis
             np.linspace(-0.7, 0.6, 20).reshape(4, 5),              # another rank
             np.linspace(-0.5, 0.9, 6),                             # few entries: the columns loop
             np.linspace(-0.8, 0.4, 20).astype(np.float32),         # another dtype
             np.linspace(0.9, -0.2, 20)]                            # the first layout again, other values
    for x in calls:
        got = hessian(x)
        assert got.shape == x.shape * 2
        tolerance = 1e-5 if x.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, _diagonal_hessian(x.astype(float)), rtol=tolerance, atol=tolerance)


def test_a_repeated_call_of_two_arguments_gives_the_hessian_of_its_own_values():
    # the second call runs the kept sweeps: every block must come from its own arguments
    hessian = tr.hessian(corpus_columns.filled_in_a_loop, argnums=(0, 1))
    first = (np.linspace(-0.9, 0.8, 4), np.linspace(0.3, -0.5, 4))
    second = (np.linspace(0.2, -0.7, 4), np.linspace(-0.4, 0.6, 4))
    hessian(*first)
    got = hessian(*second)
    fresh = tr.hessian(corpus_columns.filled_in_a_loop, argnums=(0, 1))(*second)
    for i in range(2):
        np.testing.assert_allclose(got[i][i], central_difference_hessian(corpus_columns.filled_in_a_loop, second, i),
                                   rtol=RTOL, atol=ATOL)
        for j in range(2):
            np.testing.assert_array_equal(got[i][j], fresh[i][j])
