"""Named tests of the sorting family (templates/sorting.py) for what the rule table's rows cannot
show: JAX's convention at ties and even counts, refusals at the user's line, NaN, index pairs."""
from __future__ import annotations

import numpy as np
import pytest

import transformer as tr
from transformer.errors import TransformError


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def weighted_sort(x):
    return np.sum(np.sort(x) * np.array([1.0, 2.0, 3.0, 4.0]))


def test_sort_gradient_at_a_tie_is_the_stable_permutation_as_in_jax():
    # x[0] == x[2]: the stable sort puts x[0] first, so it gets the smaller weight
    x = np.array([0.3, 0.1, 0.3, 0.7])
    grad = tr.grad(weighted_sort)(x)
    np.testing.assert_array_equal(grad, [2.0, 1.0, 3.0, 4.0])
    jax = _jax()
    jnp = jax.numpy
    np.testing.assert_array_equal(grad, jax.grad(lambda x: jnp.sum(jnp.sort(x) * jnp.array([1.0, 2.0, 3.0, 4.0])))(x))


def median_of(x):
    return np.median(x)


def test_median_of_an_even_count_sends_half_to_each_middle_entry():
    x = np.array([0.4, 0.1, 0.9, 0.2])
    np.testing.assert_allclose(tr.grad(median_of)(x), [0.5, 0.0, 0.0, 0.5])
    jax = _jax()
    np.testing.assert_allclose(tr.grad(median_of)(x), jax.grad(jax.numpy.median)(x))


def test_median_of_a_tie_in_the_middle_follows_jax():
    x = np.array([0.4, 0.1, 0.4, 0.9, 0.2])
    jax = _jax()
    np.testing.assert_allclose(tr.grad(median_of)(x), jax.grad(jax.numpy.median)(x))


def quantile_at_a_whole_position(x):
    return np.quantile(x, 0.5)


def test_quantile_at_a_whole_position_sends_everything_to_that_entry():
    x = np.array([0.4, 0.1, 0.9])        # position 0.5 * 2 = 1: the middle entry, 0.4
    np.testing.assert_allclose(tr.grad(quantile_at_a_whole_position)(x), [1.0, 0.0, 0.0])


def median_with_nan(x):
    return np.median(x, axis=1), np.quantile(x, 0.25, axis=1)


def test_nan_along_the_axis_gives_nan_as_numpy():
    x = np.array([[0.3, np.nan, 0.1], [0.2, 0.5, 0.4]])
    got = tr.jit(median_with_nan, target="python")(x)
    want = median_with_nan(x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def quantile_with_a_method(x):
    return np.quantile(x, 0.5, method="nearest")


def test_quantile_methods_other_than_linear_are_refused_at_the_users_line():
    with pytest.raises(TransformError) as caught:
        tr.grad(quantile_with_a_method)(np.ones(3))
    assert "test_sorting.py" in str(caught.value) and "method" in str(caught.value)


def take_far_axis(x):
    return np.sum(np.take(x, np.array([0]), axis=4))


def test_take_along_an_axis_past_four_dimensions_is_refused_at_the_users_line():
    with pytest.raises(TransformError) as caught:
        tr.grad(take_far_axis)(np.ones((1, 1, 1, 1, 2)))
    assert "test_sorting.py" in str(caught.value) and "np_take_needs_a_literal_axis" in str(caught.value)


def take_repeated(x):
    return np.sum(np.take(x, np.array([1, 1, 1, 2]), axis=0) * np.array([1.0, 2.0, 3.0, 4.0]))


def test_take_adjoint_adds_where_indices_repeat():
    np.testing.assert_allclose(tr.grad(take_repeated)(np.ones(3)), [0.0, 6.0, 4.0])


def along_repeated(x):
    return np.sum(np.take_along_axis(x, np.array([[0, 0], [1, 1]]), axis=1))


def test_take_along_axis_adjoint_adds_where_indices_repeat():
    np.testing.assert_allclose(tr.grad(along_repeated)(np.ones((2, 3))), [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]])


def upper_sum(x):
    return np.sum(x[np.triu_indices(3)] ** 2)


def test_triangle_indices_index_as_numpys_pair():
    x = np.arange(9.0).reshape(3, 3)
    assert tr.jit(upper_sum, target="python")(x) == upper_sum(x)
    np.testing.assert_allclose(tr.grad(upper_sum)(x), np.triu(2 * x))


def partition_kth(x):
    return np.partition(x, 2)[2]


def test_partition_derivative_follows_the_kth_value():
    x = np.array([0.5, 0.9, 0.1, 0.3, 0.7])      # third smallest: 0.5, at position 0
    np.testing.assert_allclose(tr.grad(partition_kth)(x), [1.0, 0.0, 0.0, 0.0, 0.0])
    _, tangent = tr.jvp(partition_kth, (x,), (np.arange(5.0),))
    assert tangent == 0.0
