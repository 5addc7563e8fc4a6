"""NumPy and scipy functions defined with primitives (templates/definitions.py), and the
specialization-time decisions they rely on: `is None`, literal comparisons and `not` of a literal.

Each function's values and derivatives under every transform are the rule table's rows
(tests/rule_table.py); these tests cover what the rows cannot: where errors point, which
branches are written, and the inputs a row cannot hold (NaNs, top-level weights).
"""
import numpy as np
import pytest
import scipy.special

import oracles
import transformer as tr

X = np.array([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]])


def static_branches(x, axis=None, mode="full", k=2):
    if axis is None:
        out = np.sum(x)
    else:
        out = np.sum(x, axis=axis)
    if mode == "same":
        out = out * 2.0
    elif mode == "full":
        out = out * 3.0
    return out * k if k > 1 else out


def calls_static_branches(x):
    return np.sum(static_branches(x) + static_branches(x, 0, mode="same", k=1))


def test_is_none_and_literal_comparisons_are_decided_when_specialized():
    want = calls_static_branches(X)
    assert tr.jit(calls_static_branches)(X) == pytest.approx(want)
    np.testing.assert_allclose(tr.grad(calls_static_branches)(X), np.full_like(X, 3 * (3.0 * 2) + 2.0))   # the scalar term broadcasts over 3 entries
    source = tr.grad(calls_static_branches).source(X)
    assert "is None" not in source and "'same'" not in source    # only the branches taken are written


def branches_on_a_run_time_argument(x, w):
    return np.sum(x) if w is None else np.sum(x * w)


def test_an_argument_that_is_none_is_part_of_the_structure_the_call_specializes_on():
    # as in JAX, None is a pytree without leaves: each call is specialized on which arguments are None
    f = tr.grad(branches_on_a_run_time_argument)
    np.testing.assert_allclose(f(X, X), X)
    np.testing.assert_allclose(f(X, None), np.ones_like(X))
    for source in (f.source(X, None), f.source(X, X)):     # the branch is decided: no test in the code
        assert not [line for line in source.splitlines() if "is None" in line.split("#")[0]]


def maybe_weighted(x, flag):
    w = None
    if flag > 0:
        w = x
    return np.sum(x) if w is None else np.sum(x * w)


def test_an_is_none_test_of_a_value_known_only_at_run_time_is_refused_at_its_line():
    with pytest.raises(tr.TransformError) as err:
        tr.grad(maybe_weighted)(X, 1.0)
    assert f"test_numpy_definitions.py:{maybe_weighted.__code__.co_firstlineno + 4}:" in str(err.value)
    assert "`is None` test of a value computed at run time" in str(err.value)


def test_a_static_none_argument_decides_its_is_none_test():
    f = tr.jit(branches_on_a_run_time_argument, static_argnums=1)
    assert f(X, None) == pytest.approx(np.sum(X))


def weighted_logsumexp(x, w):
    return np.sum(scipy.special.logsumexp(x, axis=1, b=w))


def test_logsumexp_weights_passed_as_an_argument():
    # b is a run-time argument: the definition's weighted variant is chosen because the call gives b
    w = np.array([[1.0, 2.0, 0.5], [0.3, 0.3, 3.0]])
    want = np.sum(scipy.special.logsumexp(X, axis=1, b=w))
    assert tr.jit(weighted_logsumexp)(X, w) == pytest.approx(want)
    for grad in (tr.grad(weighted_logsumexp, argnums=(0, 1)), tr.jit(tr.grad(weighted_logsumexp, argnums=(0, 1)))):
        gx, gw = grad(X, w)
        np.testing.assert_allclose(gx, oracles.central_difference_grad(weighted_logsumexp, (X, w), 0), atol=1e-6)
        np.testing.assert_allclose(gw, oracles.central_difference_grad(weighted_logsumexp, (X, w), 1), atol=1e-6)


def nan_sums(x):
    return np.nansum(x) + np.sum(np.nanmean(x, axis=0))


def test_nan_entries_are_skipped_and_get_no_gradient():
    x = X.copy()
    x[0, 1] = np.nan
    assert tr.jit(nan_sums)(x) == pytest.approx(nan_sums(x))
    g = tr.grad(nan_sums)(x)
    # 1 from the sum, 1 / (entries of its column that are not NaN) from the column's mean
    np.testing.assert_allclose(g, [[1.5, 0.0, 1.5], [1.5, 2.0, 1.5]])


def rolls_with_a_keyword_numpy_does_not_name(x):
    return np.sum(np.roll(x, 1, axes=0))


def test_an_error_inside_a_definition_names_the_users_call():
    with pytest.raises(tr.TransformError) as err:
        tr.grad(rolls_with_a_keyword_numpy_does_not_name)(X)
    line = rolls_with_a_keyword_numpy_does_not_name.__code__.co_firstlineno + 1
    assert f"test_numpy_definitions.py:{line}:" in str(err.value)
    assert "np.roll" in str(err.value) and "axes" in str(err.value)


def logsumexp_keepdims(x):
    return np.sum(tr.nn.logsumexp(x, axis=1, keepdims=True) * x)


def test_nn_logsumexp_takes_keepdims():
    want = np.sum(scipy.special.logsumexp(X, axis=1, keepdims=True) * X)
    assert tr.jit(logsumexp_keepdims)(X) == pytest.approx(want)
    np.testing.assert_allclose(tr.grad(logsumexp_keepdims)(X), oracles.central_difference_grad(logsumexp_keepdims, (X,)),
                               atol=1e-6)


def convolves(a, v):
    return np.sum(np.convolve(a, v) ** 2) + np.sum(np.correlate(a, v, mode="same") * a)


def test_convolution_second_order_needs_no_tape():
    a, v = np.array([0.5, -1.0, 2.0, 0.3, 1.1]), np.array([0.2, 0.7, -0.4])
    hess = tr.hessian(convolves)(a, v)
    np.testing.assert_allclose(hess, oracles.central_difference_hessian(convolves, (a, v)), atol=1e-6)


# ---------------------------------------------------------------- definitions written per call (np.einsum, np.tensordot)
def einsum_with_ellipsis(x):
    return np.einsum("i...->i", x)


def einsum_of_a_variable_string(x, subscripts):
    return np.einsum(subscripts, x)


def einsum_mismatched(x):
    return np.einsum("ij,jk->ik", x)


def tensordot_with_axes_of_both_signs(a, b):
    return np.tensordot(a, b, axes=([-1, 0], [0, 1]))


def einsum_gmm_style(q, x):
    return np.sum(np.einsum("kij,nkj->nki", q, x) ** 2)


@pytest.mark.parametrize("fn, args, words", [
    (einsum_with_ellipsis, (X,), "an output without the '...' of its operands is not supported"),
    (einsum_of_a_variable_string, (X, "ij->ji"), "np.einsum's subscripts must be a literal"),
    (einsum_mismatched, (X,), "np.einsum: the subscripts 'ij,jk->ik' name 2 operands, but 1 are given"),
    (tensordot_with_axes_of_both_signs, (X, X.T), "np.tensordot: axes=([-1, 0], [0, 1]): give each axis list all "
                                                  "non-negative or all negative"),
])
def test_a_written_definition_refuses_at_the_users_call(fn, args, words):
    with pytest.raises(tr.TransformError, match=r"test_numpy_definitions\.py:\d+") as info:
        tr.jit(fn)(*args)
    assert words in str(info.value)


def test_a_written_definition_is_a_file_its_generated_lines_name():
    # the contraction is written for its subscripts to a file of the cache directory, inlined like
    # any definition: transformer show names that file's lines under the user's line
    rng = np.random.default_rng(0)
    q, x = rng.normal(size=(3, 2, 4)), rng.normal(size=(5, 3, 4))
    source = tr.show(tr.jit(einsum_gmm_style, target="python"), q, x)
    assert "# return np.sum(np.einsum(\"kij,nkj->nki\", q, x) ** 2)   [test_numpy_definitions.py:" in source
    # a batched matrix product, its operands in the order that makes the output's last letter (i)
    # the product's last axis: (k, n, i) products, so the result's rows are contiguous
    assert "# p1_a = np.transpose(x1, (1, 0, 2))   (np_einsum_" in source
    assert "einsum_p1 = einsum_p1_a @ einsum_p1_b" in source
    np.testing.assert_allclose(tr.grad(einsum_gmm_style)(q, x),
                               2 * np.einsum("nki,nkj->kij", np.einsum("kij,nkj->nki", q, x), x), rtol=1e-12)


# ---------------------------------------------------------------- definitions that gave wrong numbers
# np.median added the two middle entries in the input's dtype (int8 overflowed: 105 came out -23,
# and True + True stayed True); np.correlate(mode="same") of a shorter first array of even length
# took its window one place over; logsumexp's shift ignored b, so a large entry weighted 0 made
# every other term underflow (-inf, and NaN derivatives).

def median_of(a):
    return np.median(a), np.median(a, axis=0)


def correlate_same(a, v):
    return np.correlate(a, v, mode="same")


def squared_correlation(a, v):
    return np.sum(correlate_same(a, v) ** 2)


def logsumexp_weighted(a, b):
    return scipy.special.logsumexp(a, b=b)


def logsumexp_weighted_rows(a, b):
    return scipy.special.logsumexp(a, axis=1, b=b)


@pytest.mark.parametrize("a", [np.array([[100, 120], [90, 110], [110, 100], [95, 127]], dtype=np.int8),
                               np.array([[2 ** 62, 2 ** 62 + 2], [2 ** 62 + 2, 2 ** 62]], dtype=np.int64),
                               np.array([[True, False], [False, False], [True, True]]),
                               np.array([[1.5, -2.0], [0.25, 3.0]], dtype=np.float32)],
                         ids=["int8", "int64", "bool", "float32"])
def test_the_median_of_integers_and_booleans_is_numpys(a):
    for got, expected in zip(tr.jit(median_of, target="python")(a), median_of(a)):
        assert np.asarray(got).dtype == np.asarray(expected).dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("a, v", [(np.array([1.0, 2.0]), np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])),
                                  (np.array([1.0, 2.0, 3.0, -1.0]), np.array([0.5, 10.0, -100.0, 1000.0, 3.0, 7.0])),
                                  (np.array([1.0, 2.0, 3.0]), np.array([1.0, 10.0, 100.0, 1000.0])),
                                  (np.array([1.0, 10.0, 100.0, 1000.0]), np.array([1.0, 2.0]))])
def test_correlate_same_of_a_shorter_first_array_is_numpys(a, v):
    np.testing.assert_allclose(tr.jit(correlate_same, target="python")(a, v), correlate_same(a, v), rtol=1e-14)
    a, v = a / np.max(np.abs(a)), v / np.max(np.abs(v))      # scaled, for the differences' sake
    for argnum in (0, 1):
        np.testing.assert_allclose(tr.grad(squared_correlation, argnums=argnum)(a, v),
                                   oracles.central_difference_grad(squared_correlation, (a, v), argnum), rtol=1e-6)


def summed_weighted_rows(a, b):
    return np.sum(logsumexp_weighted_rows(a, b))


def test_a_zero_weight_leaves_its_term_out_of_logsumexp():
    a, b = np.array([1000.0, 1.0, 2.0]), np.array([0.0, 1.0, 1.0])
    np.testing.assert_allclose(tr.jit(logsumexp_weighted, target="python")(a, b), scipy.special.logsumexp(a, b=b),
                               rtol=1e-14)
    # the derivative in a is the weighted softmax, 0 where the weight is 0 (JAX's)
    np.testing.assert_allclose(tr.grad(logsumexp_weighted)(a, b), [0.0, *scipy.special.softmax(a[1:])], rtol=1e-12)
    rows, weights = np.array([[1000.0, 1.0, 2.0], [0.5, -3.0, 800.0]]), np.array([[0.0, 1.0, 1.0], [2.0, 1.0, 0.0]])
    np.testing.assert_allclose(tr.jit(logsumexp_weighted_rows, target="python")(rows, weights),
                               scipy.special.logsumexp(rows, axis=1, b=weights), rtol=1e-14)
    small = np.array([[0.3, 1.0, 2.0], [0.5, -3.0, 0.8]])
    np.testing.assert_allclose(tr.grad(summed_weighted_rows)(small, weights),
                               oracles.central_difference_grad(summed_weighted_rows, (small, weights)), rtol=1e-6,
                               atol=1e-10)


def test_the_three_under_jit():
    a8 = np.array([100, 120, 90, 110], dtype=np.int8)
    np.testing.assert_array_equal(tr.jit(median_of)(a8)[0], np.median(a8))
    a, v = np.array([1.0, 2.0]), np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])
    np.testing.assert_allclose(tr.jit(correlate_same)(a, v), correlate_same(a, v), rtol=1e-14)
    a, v = a / 2.0, v / 1e4
    np.testing.assert_allclose(tr.jit(tr.grad(squared_correlation))(a, v),
                               oracles.central_difference_grad(squared_correlation, (a, v)), rtol=1e-6)
    a, b = np.array([1000.0, 1.0, 2.0]), np.array([0.0, 1.0, 1.0])
    np.testing.assert_allclose(tr.jit(tr.grad(logsumexp_weighted))(a, b), [0.0, *scipy.special.softmax(a[1:])],
                               rtol=1e-12)
