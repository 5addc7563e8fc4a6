"""Valid NumPy code never meets an internal error: regressions found in the frontend
(method chains on expressions, lambdas, tuple results of helpers, identity functions,
refusals that name the user's line)."""
import statistics

import numpy as np
import pytest
import scipy.special

from oracles import central_difference_grad
import transformer as tr

A = np.linspace(-1.0, 1.5, 16)
M = np.array([[1.0, 0.5], [-0.25, 2.0]])


def check_grad_vmap_jit(f, x):
    """grad against central differences, vmap against a loop, jit against NumPy."""
    np.testing.assert_allclose(tr.grad(f)(x), central_difference_grad(f, (x,)), rtol=1e-6, atol=1e-8)
    batch = np.stack([x, 2.0 * x, -x])
    np.testing.assert_allclose(tr.vmap(f)(batch), [f(b) for b in batch], rtol=1e-12)
    np.testing.assert_allclose(tr.jit(f, target="python")(x), f(x), rtol=1e-12)


# ------------------------------------------------- 1. chains on expressions
def reshape_then_transpose(a):
    return np.sum(a.reshape(2, 8).T * np.arange(2.0))


def dot_then_transpose(a):
    return np.sum(np.dot(a, a).T * np.array([[1.0, 2.0], [3.0, 4.0]]))


def sum_then_transpose(a):
    return np.sum(a.sum(0).T ** 2)


def sum_of_transpose_twice(a):
    return np.sum((a + a * a).T.T * np.array([[1.0, 2.0], [3.0, 4.0]]))


def helper(a):
    return np.sin(a)


def call_reshape_sum(a):
    return helper(a).reshape(4, 4).T.sum(1)[1:].sum() + helper(a).reshape(4, 4).shape[0]


@pytest.mark.parametrize("f, x", [(reshape_then_transpose, A), (dot_then_transpose, M),
                                  (sum_then_transpose, M), (sum_of_transpose_twice, M),
                                  (call_reshape_sum, A)])
def test_attribute_and_method_chains_on_expressions(f, x):
    check_grad_vmap_jit(f, x)


def test_attribute_chains_compile_with_numba():
    g = tr.jit(tr.grad(dot_then_transpose))
    np.testing.assert_allclose(g(M), central_difference_grad(dot_then_transpose, (M,)), rtol=1e-6)


# ------------------------------------------- 3. a helper's tuple result, indexed
def pair(x):
    return np.sin(x), np.cos(x)


def first_of_pair(x):
    return np.sum(pair(x)[0] * pair(x)[-1])


def last_of_slice(x):
    a, = pair(x)[1:]
    return np.sum(a ** 2) + np.sum(pair(x)[::-1][0])


@pytest.mark.parametrize("f", [first_of_pair, last_of_slice])
def test_indexing_a_helpers_tuple_result(f):
    check_grad_vmap_jit(f, M)


# ------------------------------------------------- 4. arguments returned as they are
def identity(x):
    return x


def identity_twice(x):
    return x, x


def argument_and_product(x, y):
    return x, np.sin(y) * x


def constant(x):
    return 3.0


X3 = np.array([0.5, -1.0, 2.0])


def test_vjp_of_functions_returning_their_arguments():
    out, vjp_fn = tr.vjp(identity, X3)
    np.testing.assert_array_equal(out, X3)
    np.testing.assert_array_equal(vjp_fn(np.array([1.0, 2.0, 3.0]))[0], [1.0, 2.0, 3.0])
    _, vjp_fn = tr.vjp(identity_twice, X3)
    np.testing.assert_array_equal(vjp_fn((np.ones(3), np.array([0.0, 1.0, 2.0])))[0], [1.0, 2.0, 3.0])
    y = np.array([0.1, 0.2, 0.3])
    _, vjp_fn = tr.vjp(argument_and_product, X3, y)
    u, v = np.array([1.0, -1.0, 0.5]), np.array([2.0, 0.5, 1.0])
    x_bar, y_bar = vjp_fn((u, v))
    np.testing.assert_allclose(x_bar, u + v * np.sin(y), rtol=1e-12)
    np.testing.assert_allclose(y_bar, v * X3 * np.cos(y), rtol=1e-12)
    _, vjp_fn = tr.vjp(constant, X3)
    np.testing.assert_array_equal(vjp_fn(1.0)[0], np.zeros(3))


def test_jacobians_of_the_identity():
    np.testing.assert_array_equal(tr.jacrev(identity)(X3), np.eye(3))
    np.testing.assert_array_equal(tr.jacfwd(identity)(X3), np.eye(3))
    np.testing.assert_array_equal(tr.jacrev(constant)(X3), np.zeros(3))
    np.testing.assert_allclose(tr.hessian(lambda x: np.sum(identity(x) ** 3))(X3), np.diag(6 * X3), rtol=1e-12)
    np.testing.assert_array_equal(tr.jit(tr.grad(lambda x: np.sum(identity(x))))(X3), np.ones(3))


# ------------------------------------------------- 2. lambdas wherever they are written
IDX = np.array([0, 2])
GRAD_OF_PICKED, GRAD_OF_SIN = tr.grad(lambda x: np.sum(x[IDX] ** 2)), tr.grad(lambda x: np.sum(np.sin(x)))
LOSSES = {
    "square": lambda v: np.sum(
        v ** 2),
    "cube": lambda v: np.sum(v ** 3),
}
MAKES_A_LAMBDA = (lambda scale: (lambda b: np.sum(b * scale)))(3.0)
PARENTHESISED = lambda x: (x + 1.0)


def test_two_lambdas_on_one_line_are_told_apart():
    np.testing.assert_allclose(GRAD_OF_PICKED(X3), [1.0, 0.0, 4.0])
    np.testing.assert_allclose(GRAD_OF_SIN(X3), np.cos(X3), rtol=1e-12)


def test_lambdas_as_values_of_a_multi_line_dict():
    np.testing.assert_allclose(tr.grad(LOSSES["square"])(X3), 2 * X3, rtol=1e-12)
    np.testing.assert_allclose(tr.grad(LOSSES["cube"])(X3), 3 * X3 ** 2, rtol=1e-12)


def test_a_lambda_made_by_a_lambda_and_one_with_a_parenthesised_body():
    np.testing.assert_allclose(tr.grad(MAKES_A_LAMBDA)(X3), [3.0, 3.0, 3.0])
    np.testing.assert_allclose(tr.grad(lambda x: np.sum(PARENTHESISED(x) ** 2))(X3), 2 * (X3 + 1.0), rtol=1e-12)
    np.testing.assert_allclose(tr.vmap(PARENTHESISED)(np.ones((2, 3))), 2 * np.ones((2, 3)))


# ------------------------------------------------- 5. every refusal names the user's line
def joined(x):
    return np.sum(np.hstack((x, x * x)) ** 2)


def taped_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.sin(x * s + i))
    return s


def solved(x):
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    return np.sum(np.linalg.solve(a + np.outer(x, x), x))


def where(fn, offset):
    return f"test_regressions_frontend.py:{fn.__code__.co_firstlineno + offset}"


@pytest.mark.parametrize("fn", [joined, taped_loop])
def test_reverse_over_reverse_once_refused(fn):
    # np.hstack's cotangents are slices of z_bar now, whose rules are all written; the taped loop's
    # inner backward sweep has its tape run the other way by a tape of cotangents: both were refused
    g = lambda y: np.sum(tr.grad(fn)(y))        # noqa: E731
    x = np.array([0.3, 0.7])
    want = [(g(x + 1e-6 * e) - g(x - 1e-6 * e)) / 2e-6 for e in np.eye(2)]
    np.testing.assert_allclose(tr.grad(g)(x), want, rtol=1e-6, atol=1e-8)


def product(y):
    return np.prod(y)


def product_gradient(x):
    return np.sum(tr.grad(product)(x) * x)


def test_reverse_over_reverse_of_solve_is_the_hessian():
    # refused until np.linalg.solve's adjoint was written with primitives that have rules
    x = np.array([0.3, 0.7])
    second = tr.grad(lambda y: np.sum(tr.grad(solved)(y)))
    g = tr.grad(solved)
    columns = [(g(x + 1e-6 * e) - g(x - 1e-6 * e)) / 2e-6 for e in np.eye(2)]
    np.testing.assert_allclose(second(x), np.sum(np.array(columns), axis=1), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(tr.hessian(solved)(x), np.array(columns).T, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn, offset, refused", [(product_gradient, 1, product)])
def test_second_order_refusals_name_the_users_line(fn, offset, refused):
    # the second derivative of a function holding a gradient of np.prod is prod's third, not written
    second = tr.grad(lambda y: np.sum(tr.grad(fn)(y)))
    with pytest.raises(tr.TransformError, match="third derivatives of np.prod") as info:
        second(np.array([0.3, 0.7, 1.1]))
    assert where(refused, offset) in str(info.value)


# ------------------------------------------------- 2. lambdas inside transformed functions
def apply(f, v):
    return f(v)


def apply_twice(f, v):
    return apply(f, apply(f, v))


def local_lambda(x):
    scale = np.sum(x)
    sq = lambda v: v * v * scale       # reads scale when called, as Python does
    total = 0.0
    for i in range(2):
        total = total + np.sum(sq(x) * (i + 1.0))
        scale = scale + 1.0
    return total


def lambda_arguments(x):
    shift = 0.5
    return np.sum(apply(lambda v: np.sin(v + shift), x)) + np.sum(apply_twice(lambda v: 2.0 * v, x) ** 2)


def lambda_called_in_place(x):
    return np.sum((lambda a, b: a * b)(x, np.cos(x)))


@pytest.mark.parametrize("f", [local_lambda, lambda_arguments, lambda_called_in_place])
def test_lambdas_inside_transformed_functions(f):
    check_grad_vmap_jit(f, X3)


def test_lambdas_inside_compile_with_numba():
    np.testing.assert_allclose(tr.jit(tr.grad(lambda_arguments))(X3),
                               central_difference_grad(lambda_arguments, (X3,)), rtol=1e-6)


def returns_a_lambda(x):
    f = lambda v: v
    return f


def lambda_with_keywords_gathered(x):
    f = lambda v, **options: v
    return np.sum(f(x))


def test_lambdas_transformed_code_cannot_inline_are_refused_at_their_line():
    with pytest.raises(tr.TransformError, match="the lambda 'f' used as a value") as info:
        tr.grad(returns_a_lambda)(X3)
    assert where(returns_a_lambda, 2) in str(info.value)
    with pytest.raises(tr.TransformError, match=r"a lambda with / or \*\* parameters") as info:
        tr.grad(lambda_with_keywords_gathered)(X3)
    assert where(lambda_with_keywords_gathered, 1) in str(info.value)


# ------------------------------- found by the fuzzer: a view read after its array is written
def slice_then_written(x0):
    v1 = np.copy(x0)
    v1[1:] = v1[1:] * np.tanh(x0[:-1])
    return np.sum(v1) + 0.5 * np.sum(np.sin(x0))


def test_a_slice_read_before_its_array_is_written_keeps_its_value_for_the_backward_sweep():
    # the backward sweep puts v1's old values back, which the view v1[1:] sees: that write
    # was dropped as dead (v1 is read no more), so the adjoint read the new values
    x = np.array([0.3, -0.5, 0.8])
    np.testing.assert_allclose(tr.grad(slice_then_written)(x), central_difference_grad(slice_then_written, (x,)),
                               rtol=1e-6)


# ------------------------------------ 6. everyday forms that were refused
def outer_by_newaxis(a):
    return np.sum(a[:, np.newaxis] * np.sin(a)[np.newaxis, :])


def masks_combined(a):
    keep = (a > -0.45) & (a < 0.95) | ~(a > 0.05) ^ (a > 1.22)    # no threshold on a point of A
    keep &= a != 0.0
    keep |= a > 1.38
    return np.sum(np.where(keep, a * a, np.cos(a)))


def integer_bits(a):
    n = a.shape[0] & 7          # 16 & 7 == 0
    return np.sum(a) * (n | 2) + (n ^ 3)


@pytest.mark.parametrize("f", [outer_by_newaxis, masks_combined, integer_bits])
def test_newaxis_and_boolean_operators_work_under_every_transform(f):
    check_grad_vmap_jit(f, A)
    np.testing.assert_allclose(tr.jit(f)(A), f(A), rtol=1e-12)          # numba compiles them too


def calls_scipy_comb(a):
    return np.sum(a) + scipy.special.comb(a, 2)


def calls_a_standard_library_function(a):
    return np.sum(a) * statistics.fmean(a)


def test_a_library_function_is_refused_at_the_users_line_never_inlined():
    for f, name, package in [(calls_scipy_comb, "scipy.special.comb", "scipy"),
                             (calls_a_standard_library_function, "statistics.fmean", "statistics")]:
        for transform in (tr.grad, tr.jit, tr.vmap):
            with pytest.raises(tr.TransformError) as err:
                transform(f)(A)
            assert f"test_regressions_frontend.py:{f.__code__.co_firstlineno + 1}:" in str(err.value), str(err.value)
            assert f"a call to {name} (a function of the installed package {package})" in str(err.value)
            assert "never inlines a library's source" in str(err.value)


def reduces_tuples_of_axes(x):
    return (np.sum(x, axis=(0, 2)), np.mean(x, axis=(-1, 0), keepdims=True), np.max(x, axis=(1, -1)),
            np.min(x, axis=(2, 0, 1)), np.prod(x, axis=(-2, -1), keepdims=True), np.any(x > 0.5, axis=(0, 1)))


def loss_of_tuple_axes(x):
    return np.sum(np.mean(np.sin(x), axis=(0, 2)) ** 2) + np.sum(np.max(x * x, axis=(1, -1)))


def test_reductions_over_a_tuple_of_axes_under_vmap():
    x = np.random.default_rng(3).random((5, 2, 3, 4))
    want = [np.stack(out) for out in zip(*[reduces_tuples_of_axes(e) for e in x])]
    for got in (tr.vmap(reduces_tuples_of_axes)(x), tr.jit(tr.vmap(reduces_tuples_of_axes))(x),
                tr.vmap(reduces_tuples_of_axes, in_axes=2)(np.moveaxis(x, 0, 2))):
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-13)
    per_example = np.stack([central_difference_grad(loss_of_tuple_axes, (e,)) for e in x])
    for vmapped_grad in (tr.vmap(tr.grad(loss_of_tuple_axes)), tr.jit(tr.vmap(tr.grad(loss_of_tuple_axes)))):
        np.testing.assert_allclose(vmapped_grad(x), per_example, rtol=1e-6, atol=1e-8)


# ------------------------------------------------- a helper's result copied to its user's name
def doubled(x):
    y = x * 2.0
    return y


def doubles_until_large(x):
    # the result takes the name ``a`` only where no exit lies between: a break before the copy
    # leaves ``a`` with the value of the pass before
    a = x
    for i in range(5):
        t = doubled(x * i)
        if np.sum(t) > 3.0:
            break
        a = t
    return np.sum(a * a)


def sigmoid_rows(x):
    gate = tr.nn.sigmoid(x)           # the inlined sigmoid's result is made as `gate`
    return np.sum(gate * x)


def test_a_result_is_made_under_its_user_s_name_where_that_changes_nothing():
    x = np.array([0.4, 1.0])
    for f in (doubles_until_large, sigmoid_rows):
        np.testing.assert_allclose(tr.jit(f)(x), f(x), rtol=1e-13)
        np.testing.assert_allclose(tr.jit(tr.grad(f))(x), central_difference_grad(f, (x,)), rtol=1e-6)
    # the second pass's doubling is kept: the third one's sum, 5.6, breaks before its copy
    assert tr.jit(doubles_until_large)(x) == doubles_until_large(x) == np.sum((2.0 * x) ** 2)
    code = tr.show(tr.grad(sigmoid_rows))
    assert "gate = " in code and "gate_stack" not in code.replace("gate_bar", "")
    assert "a = t" in tr.show(tr.jit(doubles_until_large), x)
