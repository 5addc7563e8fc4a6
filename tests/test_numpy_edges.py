"""NumPy-accepted forms of defined functions (templates/definitions.py) whose int-or-tuple or
1-D-or-n-D arguments are known only when numba compiles the call: np.roll with tuple shifts and
axes, np.trapezoid with 1-D sample points along another axis than the last, np.quantile and
np.median over a tuple of axes, np.cross of 1-D 3-vectors (and its refusal of 2-vectors, whose
result has another rank).  Each is checked against NumPy under jit and vmap, and its derivative
against central differences in float64."""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad

RNG = np.random.default_rng(7)
Y = RNG.normal(size=(3, 4))
WEIGHTS = RNG.normal(size=(3, 4))
SAMPLES = np.array([0.0, 1.0, 3.0])
CUBE = RNG.normal(size=(3, 4, 2))


def check_everywhere(f, x):
    """jit against NumPy, grad against central differences, vmap against NumPy per example."""
    np.testing.assert_allclose(tr.jit(f)(x), f(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tr.grad(f)(x), central_difference_grad(f, (x,)), rtol=1e-6, atol=1e-7)
    batch = np.stack([x, 2.0 * x + 1.0])
    np.testing.assert_allclose(tr.vmap(f)(batch), [f(batch[0]), f(batch[1])], rtol=1e-12, atol=1e-12)


def roll_pairs(x):
    # tuple shift with tuple axis, and an int shift applied along a repeated axis (the shifts add up)
    return np.sum(np.roll(x, (1, -2), axis=(0, 1)) * WEIGHTS) + np.sum(np.roll(x, 3, axis=(1, 1)) * WEIGHTS ** 2)


def test_roll_takes_tuples_of_shifts_and_axes():
    assert np.array_equal(tr.jit(lambda x: np.roll(x, (1, -2), axis=(0, 1)))(Y), np.roll(Y, (1, -2), axis=(0, 1)))
    check_everywhere(roll_pairs, Y)


def trapezoid_along_rows(y):
    return np.sum(np.trapezoid(y, SAMPLES, axis=-2) * WEIGHTS[0])


def test_trapezoid_takes_one_dimensional_samples_along_another_axis():
    along = tr.jit(lambda y: np.trapezoid(y, SAMPLES, axis=-2))(Y)
    np.testing.assert_allclose(along, np.trapezoid(Y, SAMPLES, axis=-2), rtol=1e-12)
    assert along.shape == (4,)
    check_everywhere(trapezoid_along_rows, Y)


def quantiles_over_axis_pairs(y):
    return np.sum(np.quantile(y, 0.3, axis=(0, 1)) * WEIGHTS[0, :2]) + np.sum(np.median(y, axis=(0, 2)) ** 2)


def test_quantile_and_median_take_a_tuple_of_axes():
    kept = tr.jit(lambda y: np.quantile(y, [0.3, 0.8], axis=(0, 2), keepdims=True))(CUBE)
    want = np.quantile(CUBE, [0.3, 0.8], axis=(0, 2), keepdims=True)
    assert kept.shape == want.shape
    np.testing.assert_allclose(kept, want, rtol=1e-12)
    check_everywhere(quantiles_over_axis_pairs, CUBE)


def trapezoid_along_axis_1(y, x):
    return np.trapezoid(y, x, axis=1)


@pytest.mark.parametrize("samples", ["1-d", "shaped as y"])
def test_vmap_of_trapezoid_with_batched_samples_along_a_middle_axis(samples):
    """vmap shifts an axis the definition picks at run time (1-D samples lie along ``axis``
    whatever its number), as it shifts a literal one."""
    y = RNG.normal(size=(2, 3, 4, 2))
    x = np.cumsum(RNG.uniform(0.5, 1.0, size=(2, 4) if samples == "1-d" else y.shape), axis=1)
    expected = np.stack([np.trapezoid(y[i], x[i], axis=1) for i in range(2)])
    np.testing.assert_allclose(tr.vmap(trapezoid_along_axis_1)(y, x), expected, rtol=1e-12)
    np.testing.assert_allclose(tr.jit(tr.vmap(trapezoid_along_axis_1))(y, x), expected, rtol=1e-12)

    def loss(y, x):
        return np.sum(trapezoid_along_axis_1(y, x) ** 2)
    per_example = tr.vmap(tr.grad(loss, argnums=(0, 1)))(y, x)
    for i in range(2):
        for argnum in (0, 1):
            np.testing.assert_allclose(per_example[argnum][i], central_difference_grad(loss, (y[i], x[i]), argnum),
                                       rtol=1e-6, atol=1e-7)


def cross_with_fixed(a):
    return np.sum(np.cross(a, np.array([1.0, 2.0, 5.0])) * WEIGHTS[0, :3])


def test_cross_of_one_dimensional_vectors():
    check_everywhere(cross_with_fixed, RNG.normal(size=3))


def cross_of_2_vectors(a):
    return np.cross(a, np.array([[1.0, 2.0]]))


def test_cross_of_two_vectors_is_refused_not_computed():
    # NumPy 2 gives the z component alone (a result of lower rank); reading a third entry that a
    # 2-vector lacks would give numbers from beyond the array
    with pytest.raises(ValueError):
        tr.jit(cross_of_2_vectors)(np.array([[3.0, 4.0]]))
