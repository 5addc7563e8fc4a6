"""Numerics: NaN and inf propagate as in NumPy through jit, grad, jvp and vmap;
float32 stays float32 through generated code; integer inputs work under jit.

The references are NumPy itself (for values) and the derivative written by
hand (for derivatives at NaN and infinities, where differences mean nothing).
"""
import numpy as np
import pytest

import numerics_cases as c
import transformer as tr

SPECIAL = np.array([0.5, np.nan, np.inf, -np.inf])


def hand_derivative(x):
    """d/dx (2 exp(x) + x), as NumPy evaluates it."""
    return 2.0 * np.exp(x) + 1.0


@pytest.fixture(autouse=True)
def quiet_floating_point():
    with np.errstate(all="ignore"):
        yield


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_nan_and_inf_propagate_through_jit(target):
    np.testing.assert_array_equal(tr.jit(c.exp_affine, target=target)(SPECIAL), c.exp_affine(SPECIAL))


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_nan_and_inf_propagate_through_grad(target):
    got = tr.jit(tr.grad(c.exp_affine_sum), target=target)(SPECIAL)
    np.testing.assert_array_equal(got, hand_derivative(SPECIAL))    # [.., nan, inf, 1.0]


def test_nan_and_inf_propagate_through_jvp():
    out, tangent = tr.jvp(c.exp_affine, (SPECIAL,), (np.ones(4),))
    np.testing.assert_array_equal(out, c.exp_affine(SPECIAL))
    np.testing.assert_array_equal(tangent, hand_derivative(SPECIAL))


def test_nan_and_inf_propagate_through_vmap():
    batch = np.stack([SPECIAL, SPECIAL[::-1]])
    np.testing.assert_array_equal(tr.vmap(c.exp_affine)(batch), c.exp_affine(batch))


def test_nan_in_one_example_stays_in_that_example():
    batch = np.array([[0.1, 0.2], [np.nan, 0.3]])
    got = tr.vmap(tr.grad(c.exp_affine_sum))(batch)
    assert np.all(np.isfinite(got[0])) and np.isnan(got[1, 0]) and np.isfinite(got[1, 1])


# ------------------------------------------------------------------ float32
X32 = np.linspace(-1.0, 1.0, 4, dtype=np.float32)
W32 = np.float32(0.7)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_float32_stays_float32(target):
    value = tr.jit(c.scaled_tanh, target=target)(X32, W32)
    assert value.dtype == np.float32
    np.testing.assert_allclose(value, c.scaled_tanh(X32, W32), rtol=1e-6)
    gradient = tr.jit(tr.grad(c.exp_affine_sum), target=target)(X32)
    assert gradient.dtype == np.float32
    np.testing.assert_allclose(gradient, hand_derivative(X32), rtol=1e-6)
    batched = tr.jit(tr.vmap(c.scaled_tanh, in_axes=(0, None)), target=target)(np.stack([X32, -X32]), W32)
    assert batched.dtype == np.float32


def test_float32_through_jvp():
    out, tangent = tr.jvp(c.scaled_tanh, (X32, W32), (np.ones_like(X32), np.float32(0.0)))
    assert out.dtype == np.float32 and tangent.dtype == np.float32


# ----------------------------------------------------------------- integers
@pytest.mark.parametrize("target", ["python", "cpu"])
def test_integer_inputs_under_jit(target):
    k = np.arange(5)
    f = tr.jit(c.int_poly_array, target=target)
    got = f(k, 3)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, c.int_poly_array(k, 3))
    assert f(np.int64(7), 4) == c.int_poly_array(np.int64(7), 4)


def test_integer_scalar_inputs_under_jit():
    assert tr.jit(c.int_poly)(7, 3) == c.int_poly(7, 3)


def test_a_variable_that_changes_type_is_a_compile_error_at_its_line():
    # total starts as the int 0 and becomes an array: numba cannot type it
    with pytest.raises(tr.CompileError, match=r"numerics_cases\.py:20: numba cannot compile this line"):
        tr.jit(c.int_poly)(np.arange(5), 3)


def test_integer_remainders_and_powers_compiled_are_numpys():
    a, x = np.array([7, -7, 8, -9, 0]), np.array([0.5, 2.0])
    got = tr.jit(c.integer_remainders_and_powers)(a, -7, x)
    for mine, numpys in zip(got, c.integer_remainders_and_powers(a, np.int64(-7), x)):
        np.testing.assert_array_equal(mine, numpys)
    # NumPy refuses an integer to a negative integer power; compiled code raises rather than give 0
    with pytest.raises(ValueError, match="negative integer powers"):
        tr.jit(c.negative_integer_power)(np.int64(-7))


def test_logaddexp_derivatives_at_infinite_arguments_are_their_limits():
    """d/dx logaddexp(x, y) = 1 / (1 + exp(y - x)): 1 at x = inf, 0 at x = -inf, 1/2 where x = y (both
    infinite too); exp(x - z) gave exp(inf - inf), NaN, and so did softplus and log_sigmoid."""
    x = np.array([np.inf, -np.inf, 1.0, np.inf, 3.0, -np.inf])
    y = np.array([0.0, 0.0, 2.0, np.inf, np.inf, -np.inf])
    dx = np.array([1.0, 0.0, 1.0 / (1.0 + np.e), 0.5, 0.0, 0.5])
    gx, gy = tr.grad(c.summed_logaddexp, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, dx, rtol=1e-15)
    np.testing.assert_allclose(gy, 1.0 - dx, rtol=1e-15)
    np.testing.assert_allclose(tr.jvp(c.summed_logaddexp, (x, y), (np.ones(6), np.zeros(6)))[1], np.sum(dx))
    # sigmoid(x) + sigmoid(-x) = 1 everywhere, infinities included
    np.testing.assert_array_equal(tr.grad(c.softplus_and_log_sigmoid)(np.array([np.inf, -np.inf, 0.0, 800.0])),
                                  np.ones(4))
