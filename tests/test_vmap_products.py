"""vmap's products with one batched factor (rt.dot_batched_x and friends): one product for the
whole batch, never a loop over the examples; checked against a Python loop over the examples of
the user's own function (or of the plain runtime helper), on the python and cpu targets."""
import numpy as np
import pytest

import corpus_columns
import corpus_vmap as c
import transformer as tr
from oracles import central_difference_hessian
from transformer import runtime as rt

B = 6
LOOP = "strategy: a loop over the examples"
ONE_PRODUCT = "strategy: one factor is the same for every example: one product for the whole batch"
TARGETS = ["python", "cpu"]

# per-example shapes of the two factors of np.dot: examples of rank 0, 1 and 2, either factor
SHAPES = [((), (3,)), ((3,), ()), ((3,), (3,)), ((3,), (3, 2)), ((4, 3), (3,)), ((4, 3), (3, 2))]
SHAPE_IDS = ["scalar-vector", "vector-scalar", "vector-vector", "vector-matrix", "matrix-vector",
             "matrix-matrix"]


def _array(shape, dtype, seed):
    value = np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(dtype)
    return value if shape else dtype(value)


def _products_in_loops(code) -> list:
    """The loops over the examples that generated code runs for a product (np.dot, @, rt.dot_*)."""
    return [line for line in code.splitlines() if LOOP in line and ("dot" in line or "@" in line)]


def _on(target, fn):
    return fn if target == "python" else tr.jit(fn)


def _tolerance(dtype):
    return {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}


# ------------------------------------------------------------ user functions
def tanh_of_dot(w, x):
    return np.sum(np.tanh(np.dot(x, w)))


def tanh_of_dot_left(w, x):
    return np.sum(np.tanh(np.dot(w, x)))


def tanh_quartic_20(x):
    return np.sum(np.tanh(np.dot(W20, x) + 0.1)) + 0.25 * np.sum(x ** 4)


def two_arguments_20(x, y):
    return np.sum(np.tanh(np.dot(W20, x) * y)) + np.sum(x * x * y)


def matrix_argument(m):
    return np.sum(np.tanh(np.dot(m, V5))) + 0.25 * np.sum(m ** 4)


W20 = np.random.default_rng(7).uniform(-1.0, 1.0, (20, 20))
V5 = np.random.default_rng(8).uniform(-1.0, 1.0, 5)


# ------------------------------------------------------------ np.dot, both orders
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shapes", SHAPES, ids=SHAPE_IDS)
def test_dot_of_a_batched_and_an_unbatched_factor_is_one_product(shapes, target, dtype):
    x_shape, w_shape = shapes
    xs, w = _array((B,) + x_shape, dtype, 0), _array(w_shape, dtype, 1)
    batched_left = _on(target, tr.vmap(c.dot_weights, in_axes=(0, None)))
    np.testing.assert_allclose(batched_left(xs, w), [np.dot(x, w) for x in xs], **_tolerance(dtype))
    w_left, ys = _array(x_shape, dtype, 2), _array((B,) + w_shape, dtype, 3)
    batched_right = _on(target, tr.vmap(c.dot_weights, in_axes=(None, 0)))
    np.testing.assert_allclose(batched_right(w_left, ys), [np.dot(w_left, y) for y in ys], **_tolerance(dtype))
    for code in (tr.show(batched_left, xs, w), tr.show(batched_right, w_left, ys)):
        assert ONE_PRODUCT in code and not _products_in_loops(code)


@pytest.mark.parametrize("target", TARGETS)
def test_matmul_with_one_batched_factor_is_one_product(target):
    a, xs = _array((3, 4), np.float64, 0), _array((B, 4), np.float64, 1)
    batched = _on(target, tr.vmap(c.matvec, in_axes=(None, 0)))
    np.testing.assert_allclose(batched(a, xs), [a @ x for x in xs], rtol=1e-12)
    assert not _products_in_loops(tr.show(batched, a, xs))


def test_both_factors_batched_still_loop_over_the_examples():
    xs, ys = _array((B, 4, 3), np.float64, 0), _array((B, 3, 2), np.float64, 1)
    batched = tr.vmap(c.dot_weights)
    np.testing.assert_allclose(batched(xs, ys), [np.dot(x, y) for x, y in zip(xs, ys)], rtol=1e-12)
    assert _products_in_loops(tr.show(batched, xs, ys))


# ------------------------------------------------------------ the runtime helpers themselves
def _helper_cases():
    for x_shape, y_shape in SHAPES + [((), ())]:
        yield x_shape, y_shape


@pytest.mark.parametrize("x_shape, y_shape", list(_helper_cases()))
def test_batched_dot_adjoint_helpers_match_the_plain_helpers_per_example(x_shape, y_shape):
    x, y = _array(x_shape, np.float64, 0), _array(y_shape, np.float64, 1)
    g = _array(np.shape(np.dot(x, y)) + (B,), np.float64, 2)       # batch axis last, as in generated code
    for batched, plain in ((rt.dot_vjp_x_batched_g, rt.dot_vjp_x), (rt.dot_vjp_y_batched_g, rt.dot_vjp_y)):
        got = batched(g, x, y)
        want = np.stack([plain(g[..., b], x, y) for b in range(B)], axis=-1)
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("x_shape, y_shape", list(_helper_cases()))
def test_rows_helpers_match_the_plain_helpers_per_example(x_shape, y_shape):
    # the batched factor batch-first (x_rows[b] is example b), the result batch-last
    x_rows, y = _array((B,) + x_shape, np.float64, 0), _array(y_shape, np.float64, 1)
    g = _array(np.shape(np.dot(x_rows[0], y)) + (B,), np.float64, 2)
    for got, want in ((rt.dot_rows_x(x_rows, y), [np.dot(x_rows[b], y) for b in range(B)]),
                      (rt.dot_vjp_y_rows_gx(g, x_rows, y), [rt.dot_vjp_y(g[..., b], x_rows[b], y) for b in range(B)])):
        want = np.stack(want, axis=-1)
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_the_numba_rows_helpers_match_the_python_helpers():
    from numba import njit
    import transformer.backends.numba_runtime  # noqa: F401  (the overloads)
    dot_rows = njit(lambda a, b: rt.dot_rows_x(a, b))
    vjp_rows = njit(lambda g, a, b: rt.dot_vjp_y_rows_gx(g, a, b))
    for dtype in (np.float64, np.float32):
        for x_shape, y_shape in _helper_cases():
            x_rows, y = _array((B,) + x_shape, dtype, 0), _array(y_shape, dtype, 1)
            g = _array(np.shape(np.dot(x_rows[0], y)) + (B,), dtype, 2)
            for got, want in ((dot_rows(x_rows, y), rt.dot_rows_x(x_rows, y)),
                              (vjp_rows(g, x_rows, y), rt.dot_vjp_y_rows_gx(g, x_rows, y))):
                assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == dtype
                np.testing.assert_allclose(got, want, **_tolerance(dtype))


@pytest.mark.parametrize("x_shape", [(), (5,), (3, 5), (2, 3, 5)])
def test_a_product_with_the_identity_basis_is_the_product_it_stands_for(x_shape):
    from numba import njit
    import transformer.backends.numba_runtime  # noqa: F401  (the overloads)
    x, basis = _array(x_shape, np.float64, 0), np.eye(5)
    want = np.stack([np.dot(x, basis[:, k]) for k in range(5)], axis=-1)
    for helper in (rt.dot_identity_y, njit(lambda a, b: rt.dot_identity_y(a, b))):
        got = helper(x, basis)
        assert np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)
    if x_shape:
        with pytest.raises(ValueError, match="not aligned"):
            rt.dot_identity_y(x, np.eye(4))


def test_the_numba_helpers_match_the_python_helpers():
    from numba import njit
    import transformer.backends.numba_runtime  # noqa: F401  (the overloads)
    compiled = {name: njit(lambda a, b, c, f=getattr(rt, name): f(a, b, c))
                for name in ("dot_vjp_x_batched_g", "dot_vjp_y_batched_g")}
    compiled_dot = {name: njit(lambda a, b, f=getattr(rt, name): f(a, b)) for name in ("dot_batched_x", "dot_batched_y")}
    for dtype in (np.float64, np.float32):
        for x_shape, y_shape in _helper_cases():
            x, y = _array(x_shape, dtype, 0), _array(y_shape, dtype, 1)
            xs, ys = _array(x_shape + (B,), dtype, 2), _array(y_shape + (B,), dtype, 3)
            g = _array(np.shape(np.dot(x, y)) + (B,), dtype, 4)
            pairs = [(compiled_dot["dot_batched_x"](xs, y), rt.dot_batched_x(xs, y)),
                     (compiled_dot["dot_batched_y"](x, ys), rt.dot_batched_y(x, ys))]
            pairs += [(compiled[name](g, x, y), getattr(rt, name)(g, x, y)) for name in compiled]
            for got, want in pairs:
                assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == dtype
                np.testing.assert_allclose(got, want, **_tolerance(dtype))


# ------------------------------------------------------------ under composition
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, w_shape, x_shape", [(tanh_of_dot, (3,), (B, 4, 3)), (tanh_of_dot_left, (2, 3), (B, 3))],
                         ids=["x-batched-left", "x-batched-right"])
def test_vmap_of_grad_wrt_the_batched_factor_has_no_loop(fn, w_shape, x_shape, target):
    w, xs = _array(w_shape, np.float64, 0), _array(x_shape, np.float64, 1)
    per_example = _on(target, tr.vmap(tr.grad(fn, argnums=1), in_axes=(None, 0)))
    np.testing.assert_allclose(per_example(w, xs), [tr.grad(fn, argnums=1)(w, x) for x in xs], rtol=1e-12)
    code = tr.show(per_example, w, xs)
    assert ONE_PRODUCT in code and not _products_in_loops(code)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("x_shape", [(B, 3), (B, 4, 3)], ids=["vector-examples", "matrix-examples"])
def test_vmap_of_grad_wrt_the_unbatched_factor(target, x_shape):
    # per-example gradients of a linear model: rt.dot_vjp_y of a batched cotangent and batched x
    w, xs = _array((3,), np.float64, 0), _array(x_shape, np.float64, 1)
    per_example = _on(target, tr.vmap(tr.grad(tanh_of_dot), in_axes=(None, 0)))
    np.testing.assert_allclose(per_example(w, xs), [tr.grad(tanh_of_dot)(w, x) for x in xs], rtol=1e-12)
    code = tr.show(per_example, w, xs)
    # both products read x as passed (its rows): no batch-last copy of x is made
    assert "rt.dot_rows_x(x_rows, w)" in code and "rt.dot_vjp_y_rows_gx(" in code
    assert "np.moveaxis(x," not in code and not _products_in_loops(code)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("x_shape", [(B, 3), (B, 4, 3)], ids=["vector-examples", "matrix-examples"])
def test_reverse_mode_of_per_example_gradients_gives_per_example_hessians(target, x_shape):
    w, xs = _array((3,), np.float64, 0), _array(x_shape, np.float64, 1)
    got = _on(target, tr.jacrev(tr.vmap(tr.grad(tanh_of_dot), in_axes=(None, 0))))(w, xs)
    want = np.stack([tr.hessian(tanh_of_dot)(w, x) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("argnums", [0, 1])
def test_reverse_mode_of_vmap_through_the_batched_products(target, argnums):
    w, xs = _array((2, 3), np.float64, 0), _array((B, 3), np.float64, 1)
    batched = tr.vmap(tanh_of_dot_left, in_axes=(None, 0))
    got = _on(target, tr.jacrev(batched, argnums=argnums))(w, xs)
    if argnums == 0:
        want = np.stack([tr.grad(tanh_of_dot_left)(w, x) for x in xs])
    else:
        want = np.zeros((B,) + xs.shape)
        for b in range(B):
            want[b, b] = tr.grad(tanh_of_dot_left, argnums=1)(w, xs[b])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("target", TARGETS)
def test_vmap_of_vmap_of_a_product(target):
    xs, w = _array((2, B, 3), np.float64, 0), _array((3, 2), np.float64, 1)
    twice = _on(target, tr.vmap(tr.vmap(c.dot_weights, in_axes=(0, None)), in_axes=(0, None)))
    np.testing.assert_allclose(twice(xs, w), np.dot(xs, w), rtol=1e-12)


# ------------------------------------------------ the Hessian: vmap of jvp of grad over the basis
@pytest.mark.parametrize("target", TARGETS)
def test_hessian_of_twenty_entries_is_vmap_over_the_basis(target):
    x = _array((20,), np.float64, 0)
    hessian = _on(target, tr.hessian(tanh_quartic_20))
    np.testing.assert_allclose(hessian(x), central_difference_hessian(tanh_quartic_20, (x,)), rtol=1e-5, atol=1e-5)
    code = tr.show(hessian, x)
    # the basis is the identity: its product with W20 is W20 itself, no product
    assert "rt.dot_identity_y(W20, x_dot)" in code and "rt.dot_vjp_y_batched_g(" in code
    assert "rt.dot_batched_y(W20" not in code
    assert LOOP not in code and "for _k in range" not in code


@pytest.mark.parametrize("target", TARGETS)
def test_hessian_of_a_matrix_argument_by_vmap(target):
    m = _array((4, 5), np.float64, 0)
    got = _on(target, tr.hessian(matrix_argument))(m)
    want = central_difference_hessian(lambda flat: matrix_argument(np.reshape(flat, (4, 5))), (np.ravel(m),))
    np.testing.assert_allclose(np.reshape(got, (20, 20)), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_hessian_blocks_of_two_arguments_by_vmap(target):
    x, y = _array((20,), np.float64, 0), _array((20,), np.float64, 1)
    got = _on(target, tr.hessian(two_arguments_20, argnums=(0, 1)))(x, y)
    for i in range(2):
        np.testing.assert_allclose(got[i][i], central_difference_hessian(two_arguments_20, (x, y), i),
                                   rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[0][1], np.transpose(got[1][0]), rtol=1e-12, atol=1e-12)


def test_an_argument_of_few_entries_keeps_the_loop_over_the_basis():
    m = _array((1, 5), np.float64, 0)      # 5 entries: below derived._VMAP_FROM
    assert "for _k in range(_n):" in tr.show(tr.hessian(matrix_argument), m)


@pytest.mark.parametrize("target", TARGETS)
def test_what_vmap_cannot_batch_is_swept_by_the_columns_loop(target):
    x = _array((20,), np.float64, 0)
    hessian = _on(target, tr.hessian(corpus_columns.sums_over_each_axis))
    np.testing.assert_allclose(hessian(x), central_difference_hessian(corpus_columns.sums_over_each_axis, (x,)),
                               rtol=1e-5, atol=1e-5)
    assert "for _k in range(_n):" in tr.show(hessian, x)
