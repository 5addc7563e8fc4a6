"""Regressions of linear-algebra and dtype rules (issue "No wrong numbers"): norms of every ord,
np.inner, batched matmul, float32 kept float32, and a power's exponent cotangent without a log.
Oracles need nothing of ours: central differences in float64, NumPy itself, Python loops."""
import warnings

import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad, central_difference_hessian, central_difference_jvp

RNG = np.random.default_rng(7)


def _vjp_reference(f, x, u):
    """The vjp of f at x applied to u, by central differences of <f(x), u>."""
    return central_difference_grad(lambda x: float(np.sum(np.asarray(f(x)) * u)), [x])


def _check_rules(f, x, target="python"):
    """vjp and jvp of f at x against central differences; vmap of f and of its vjp against loops."""
    out = f(x)
    u = RNG.standard_normal(np.shape(out))
    t = RNG.standard_normal(np.shape(x))
    _, vjp_fn = tr.vjp(f, x)
    np.testing.assert_allclose(vjp_fn(u)[0], _vjp_reference(f, x, u), rtol=1e-6, atol=1e-7)
    value, tangent = tr.jvp(f, (x,), (t,))
    np.testing.assert_allclose(value, out, rtol=1e-12)
    np.testing.assert_allclose(tangent, central_difference_jvp(f, [x], [t]), rtol=1e-6, atol=1e-7)
    batch = np.stack([x, 2.0 * x + 0.25, -x])
    np.testing.assert_allclose(tr.vmap(f)(batch), np.stack([f(b) for b in batch]), rtol=1e-12)
    if np.ndim(out) == 0:
        grads = tr.vmap(tr.grad(f))(batch)
        np.testing.assert_allclose(grads, np.stack([central_difference_grad(f, [b]) for b in batch]),
                                   rtol=1e-6, atol=1e-7)


# ------------------------------------------------------------------ 1. norms
def vector_None(x): return np.linalg.norm(x)
def vector_2(x): return np.linalg.norm(x, 2)
def vector_1(x): return np.linalg.norm(x, 1)
def vector_inf(x): return np.linalg.norm(x, np.inf)
def vector_minus_inf(x): return np.linalg.norm(x, -np.inf)
def vector_0(x): return np.linalg.norm(x, 0)
def vector_3(x): return np.linalg.norm(x, 3)
def vector_0_5(x): return np.linalg.norm(x, ord=0.5)
def vector_minus_1_5(x): return np.linalg.norm(x, ord=-1.5)
VECTOR_NORMS = {  # every vector ord NumPy accepts, on a 1-D x or along one axis
    "None": vector_None,
    "2": vector_2,
    "1": vector_1,
    "inf": vector_inf,
    "-inf": vector_minus_inf,
    "0": vector_0,
    "3": vector_3,
    "0.5": vector_0_5,
    "-1.5": vector_minus_1_5,
}
def along_1_axis0(x): return np.linalg.norm(x, 1, axis=0)
def along_inf_axis1(x): return np.linalg.norm(x, np.inf, axis=1)
def along_minus_inf_axis_1_keepdims(x): return np.linalg.norm(x, -np.inf, axis=-1, keepdims=True)
def along_3_axis0_keepdims(x): return np.linalg.norm(x, 3, axis=0, keepdims=True)
def along_None_axis1(x): return np.linalg.norm(x, axis=1)
AXIS_NORMS = {  # vector norms along one axis
    "1-axis0": along_1_axis0,
    "inf-axis1": along_inf_axis1,
    "-inf-axis-1-keepdims": along_minus_inf_axis_1_keepdims,
    "3-axis0-keepdims": along_3_axis0_keepdims,
    "None-axis1": along_None_axis1,
}
def matrix_fro(x): return np.linalg.norm(x, "fro")
def matrix_nuc(x): return np.linalg.norm(x, "nuc")
def matrix_1(x): return np.linalg.norm(x, 1)
def matrix_minus_1(x): return np.linalg.norm(x, -1)
def matrix_inf(x): return np.linalg.norm(x, np.inf)
def matrix_minus_inf(x): return np.linalg.norm(x, -np.inf)
def matrix_2(x): return np.linalg.norm(x, 2)
def matrix_minus_2(x): return np.linalg.norm(x, -2)
def matrix_1_axes10(x): return np.linalg.norm(x, 1, axis=(1, 0))
def matrix_inf_axes10_keepdims(x): return np.linalg.norm(x, np.inf, axis=(1, 0), keepdims=True)
def matrix_None_axes01(x): return np.linalg.norm(x, axis=(0, 1))
MATRIX_NORMS = {  # on a 2-D x (axis None) or over two axes
    "fro": matrix_fro,
    "nuc": matrix_nuc,
    "1": matrix_1,
    "-1": matrix_minus_1,
    "inf": matrix_inf,
    "-inf": matrix_minus_inf,
    "2": matrix_2,
    "-2": matrix_minus_2,
    "1-axes10": matrix_1_axes10,
    "inf-axes10-keepdims": matrix_inf_axes10_keepdims,
    "None-axes01": matrix_None_axes01,
}
def stacked_1_axes02(x): return np.linalg.norm(x, 1, axis=(0, 2))
def stacked_minus_inf_axes20_keepdims(x): return np.linalg.norm(x, -np.inf, axis=(2, 0), keepdims=True)
def stacked_nuc_axes12(x): return np.linalg.norm(x, "nuc", axis=(1, 2))
def stacked_2_axes_1_2(x): return np.linalg.norm(x, 2, axis=(-1, -2))
BATCHED_MATRIX_NORMS = {  # matrix norms over two axes of a 3-D x
    "1-axes02": stacked_1_axes02,
    "-inf-axes20-keepdims": stacked_minus_inf_axes20_keepdims,
    "nuc-axes12": stacked_nuc_axes12,
    "2-axes-1-2": stacked_2_axes_1_2,
}


def test_norm_inf_and_1_gradients_are_not_the_2_norms():
    x = np.array([.5, -3.0, 1.0, 2.0])
    np.testing.assert_array_equal(tr.grad(VECTOR_NORMS["inf"])(x), [0.0, -1.0, 0.0, 0.0])
    np.testing.assert_array_equal(tr.grad(VECTOR_NORMS["1"])(x), np.sign(x))


@pytest.mark.parametrize("name", VECTOR_NORMS)
def test_vector_norm_rules(name):
    _check_rules(VECTOR_NORMS[name], RNG.standard_normal(5))


@pytest.mark.parametrize("name", AXIS_NORMS)
def test_vector_norm_along_an_axis_rules(name):
    _check_rules(AXIS_NORMS[name], RNG.standard_normal((3, 4)))


@pytest.mark.parametrize("name", MATRIX_NORMS)
def test_matrix_norm_rules(name):
    _check_rules(MATRIX_NORMS[name], RNG.standard_normal((3, 4)))


@pytest.mark.parametrize("name", BATCHED_MATRIX_NORMS)
def test_matrix_norm_over_two_of_three_axes_rules(name):
    _check_rules(BATCHED_MATRIX_NORMS[name], RNG.standard_normal((3, 4, 2)))


def test_norm_ties_and_zeros_follow_jax():
    """JAX: |x| has slope +1 at 0; entries tied for a max or min share its derivative equally."""
    np.testing.assert_array_equal(tr.grad(VECTOR_NORMS["inf"])(np.array([3.0, -3.0, 1.0])), [0.5, -0.5, 0.0])
    np.testing.assert_array_equal(tr.grad(VECTOR_NORMS["-inf"])(np.array([3.0, -1.0, 1.0])), [0.0, -0.5, 0.5])
    np.testing.assert_array_equal(tr.grad(VECTOR_NORMS["1"])(np.array([0.0, -2.0])), [1.0, -1.0])
    np.testing.assert_array_equal(tr.grad(VECTOR_NORMS["0"])(np.array([0.0, -2.0])), [0.0, 0.0])
    # columns 0 and 1 tie for the largest absolute column sum
    np.testing.assert_array_equal(tr.grad(MATRIX_NORMS["1"])(np.array([[1.0, -2.0, 0.5], [-2.0, 1.0, 0.5]])),
                                  [[0.5, -0.5, 0.0], [-0.5, 0.5, 0.0]])


def test_norm_with_ord_under_jit_of_grad_and_jvp():
    x = RNG.standard_normal(5)
    for name in ("1", "inf", "-inf", "0", "3", "2"):
        f = VECTOR_NORMS[name]
        np.testing.assert_allclose(tr.jit(tr.grad(f))(x), central_difference_grad(f, [x]), rtol=1e-6, atol=1e-7)
    m = RNG.standard_normal((3, 4))
    f = AXIS_NORMS["inf-axis1"]
    t = RNG.standard_normal(m.shape)
    np.testing.assert_allclose(tr.jvp(tr.jit(f), (m,), (t,))[1],      # the jvp compiled for the CPU
                               central_difference_jvp(f, [m], [t]), rtol=1e-6, atol=1e-7)


def test_second_derivatives_of_norms_with_ord():
    """rt.norm_ord_curvature: a p-norm's and 'fro''s Hessians against differences of their
    gradients, and the 1-norm's gradient piecewise constant (its derivative 0, as in JAX)."""
    from oracles import central_difference_hessian
    # a point of its own (the module's RNG gives each test what the tests before it left): entries
    # away from 0, where a negative order's curvature outgrows the differences' accuracy
    x = np.array([0.8, -1.3, 0.6])
    for name in ("3", "0.5", "-1.5"):
        np.testing.assert_allclose(tr.hessian(VECTOR_NORMS[name])(x),
                                   central_difference_hessian(VECTOR_NORMS[name], [x]), rtol=1e-5, atol=1e-6)
        _, hv = tr.jvp(tr.grad(VECTOR_NORMS[name]), (x,), (x[::-1].copy(),))
        np.testing.assert_allclose(hv, central_difference_hessian(VECTOR_NORMS[name], [x]) @ x[::-1],
                                   rtol=1e-5, atol=1e-6)
    a = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(tr.hessian(matrix_fro)(a).reshape(12, 12),
                               central_difference_hessian(matrix_fro, [a]).reshape(12, 12), rtol=1e-5, atol=1e-6)
    # d/dx sum(sign(x) * x) = sign(x): the gradient of the 1-norm contributes no derivative of its own
    np.testing.assert_allclose(tr.grad(_gradient_of_the_1_norm_against_x)(x), np.sign(x), rtol=1e-12)


def test_hessian_of_a_singular_value_norm():
    # it was a run-time ValueError; now the singular vectors are differentiated (more cases, and
    # reverse over reverse, in tests/regressions/test_singular_norms_and_shared_stacks.py)
    def nuclear(a):
        return np.linalg.norm(a, "nuc")
    a = RNG.standard_normal((3, 3))
    np.testing.assert_allclose(tr.hessian(nuclear)(a), central_difference_hessian(nuclear, [a]), rtol=1e-5, atol=1e-6)


def _gradient_of_the_1_norm_against_x(x):
    return np.sum(tr.grad(vector_1)(x) * x)


# ------------------------------------------------------------------ 2. np.inner
def _check_two(f, x, y, jit=False):
    """vjp and jvp of f(x, y) against central differences; vmap over both against a loop."""
    out = f(x, y)
    u = RNG.standard_normal(np.shape(out))
    _, vjp_fn = tr.vjp(f, x, y)
    x_bar, y_bar = vjp_fn(u)
    np.testing.assert_allclose(x_bar, _vjp_reference(lambda x: f(x, y), x, u), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(y_bar, _vjp_reference(lambda y: f(x, y), y, u), rtol=1e-6, atol=1e-7)
    tx, ty = RNG.standard_normal(np.shape(x)), RNG.standard_normal(np.shape(y))
    value, tangent = tr.jvp(f, (x, y), (tx, ty))
    np.testing.assert_allclose(value, out, rtol=1e-12)
    np.testing.assert_allclose(tangent, central_difference_jvp(f, [x, y], [tx, ty]), rtol=1e-6, atol=1e-7)
    xs, ys = np.stack([x, 2.0 * x]), np.stack([y, y - 1.0])
    np.testing.assert_allclose(tr.vmap(f)(xs, ys), np.stack([f(a, b) for a, b in zip(xs, ys)]), rtol=1e-12)
    loss = _weighted_loss(f, u)
    grads = tr.vmap(tr.grad(loss, argnums=(0, 1)))(xs, ys)
    for k, (a, b) in enumerate(zip(xs, ys)):
        np.testing.assert_allclose(grads[0][k], central_difference_grad(loss, [a, b], 0), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(grads[1][k], central_difference_grad(loss, [a, b], 1), rtol=1e-6, atol=1e-7)
    if jit:
        compiled = tr.jit(tr.grad(loss, argnums=(0, 1)))(x, y)
        np.testing.assert_allclose(compiled[0], central_difference_grad(loss, [x, y], 0), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(compiled[1], central_difference_grad(loss, [x, y], 1), rtol=1e-6, atol=1e-7)


def _weighted_loss(f, weights):
    """sum(f(x, y) * weights), the weights a constant of the transformed function."""
    def loss(x, y):
        return np.sum(f(x, y) * weights)
    return loss


def inner(x, y): return np.inner(x, y)


INNER_SHAPES = {"vectors": ((4,), (4,)), "square matrices": ((3, 3), (3, 3)),
                "matrices": ((2, 4), (3, 4)), "3-D and 2-D": ((2, 3, 4), (5, 4)),
                "vector and 3-D": ((4,), (2, 3, 4)), "scalar and matrix": ((), (2, 3))}


@pytest.mark.parametrize("name", INNER_SHAPES)
def test_inner_rules(name):
    xs, ys = INNER_SHAPES[name]
    x, y = RNG.standard_normal(xs), RNG.standard_normal(ys)
    _check_two(inner, x if xs else float(x), y, jit=name in ("square matrices", "matrices"))


def test_inner_of_square_matrices_gradient_of_b_is_not_transposed():
    a, b = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))
    w = RNG.standard_normal((3, 3))
    loss = _weighted_loss(inner, w)
    np.testing.assert_allclose(tr.grad(loss, argnums=1)(a, b), w.T @ a, rtol=1e-12)


def _inner_square(a):
    return np.sum(np.inner(a, a) ** 2)


def test_inner_second_derivative():
    from oracles import central_difference_hessian
    a = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(tr.hessian(_inner_square)(a), central_difference_hessian(_inner_square, [a]),
                               rtol=1e-5, atol=1e-6)


# --------------------------------------------------- 3. matmul and np.dot past two dimensions
def matmul(x, y): return x @ y
def np_matmul(x, y): return np.matmul(x, y)
def np_dot(x, y): return np.dot(x, y)


def stacked_times(a):
    return np.sum(np.stack([a, a]) @ a)


MATMUL_SHAPES = {"stack @ matrix": ((2, 3, 4), (4, 5)), "matrix @ stack": ((3, 4), (2, 4, 5)),
                 "stack @ stack": ((2, 3, 4), (2, 4, 5)), "broadcast stacks": ((2, 1, 3, 4), (5, 4, 2)),
                 "vector @ stack": ((4,), (2, 4, 5)), "stack @ vector": ((2, 3, 4), (4,)),
                 "matrix @ vector": ((3, 4), (4,))}


@pytest.mark.parametrize("name", MATMUL_SHAPES)
def test_matmul_of_stacks_rules(name):
    xs, ys = MATMUL_SHAPES[name]
    f = np_matmul if "broadcast" in name else matmul
    _check_two(f, RNG.standard_normal(xs), RNG.standard_normal(ys))


def _five_products(a3, m2, v, b3):
    """Every rank of @ the CPU target compiles, in one function (one compile)."""
    return a3 @ m2, m2 @ b3, v @ b3, a3 @ v, a3 @ b3


def test_matmul_of_stacks_under_jit_of_grad_and_vmap():
    a3, m2, v, b3 = (RNG.standard_normal(s) for s in ((2, 3, 4), (4, 4), (4,), (2, 4, 4)))
    args = (a3, m2, v, b3)
    weights = [RNG.standard_normal(np.shape(out)) for out in _five_products(*args)]
    w0, w1, w2, w3, w4 = weights

    def loss(a3, m2, v, b3):
        p0, p1, p2, p3, p4 = _five_products(a3, m2, v, b3)
        return np.sum(p0 * w0) + np.sum(p1 * w1) + np.sum(p2 * w2) + np.sum(p3 * w3) + np.sum(p4 * w4)
    got = tr.jit(tr.grad(loss, argnums=(0, 1, 2, 3)))(*args)
    for k in range(4):
        np.testing.assert_allclose(got[k], central_difference_grad(loss, args, k), rtol=1e-6, atol=1e-7)
    batches = [np.stack([a, 2.0 * a]) for a in args]
    outs = tr.jit(tr.vmap(_five_products))(*batches)
    for k, out in enumerate(outs):
        np.testing.assert_allclose(out, np.stack([_five_products(*(b[i] for b in batches))[k] for i in range(2)]),
                                   rtol=1e-12)


def test_stack_of_a_matrix_times_it():
    a = RNG.standard_normal((3, 3))
    np.testing.assert_allclose(tr.grad(stacked_times)(a), central_difference_grad(stacked_times, [a]),
                               rtol=1e-6, atol=1e-7)


DOT_SHAPES = {"stack . matrix": ((2, 3, 4), (4, 5)), "matrix . stack": ((3, 4), (2, 4, 5)),
              "stack . stack": ((2, 3, 4), (5, 4, 2)), "vector . stack": ((4,), (2, 4, 3)),
              "stack . vector": ((2, 3, 4), (4,))}


@pytest.mark.parametrize("name", DOT_SHAPES)
def test_dot_of_stacks_rules(name):
    """np.dot contracts x's last axis with y's second-to-last: not @'s stacks of matrices."""
    xs, ys = DOT_SHAPES[name]
    _check_two(np_dot, RNG.standard_normal(xs), RNG.standard_normal(ys))


def matmul_square_sum(a, b):
    return np.sum((a @ b) ** 2)


def test_matmul_of_stacks_second_derivative():
    from oracles import central_difference_hessian
    a, b = RNG.standard_normal((2, 2, 3)), RNG.standard_normal((3, 2))
    np.testing.assert_allclose(tr.hessian(matmul_square_sum)(a, b),
                               central_difference_hessian(matmul_square_sum, [a, b]), rtol=1e-5, atol=1e-5)


# ------------------------------------------------------ 4. float32 stays float32 (as in JAX)
W32 = RNG.standard_normal((4, 3)).astype(np.float32)


def f32_sin(x): return np.sum(np.sin(x) * np.exp(x))
def f32_log(x): return np.sum(np.log(np.abs(x) + 1.0) + np.sqrt(x * x + 2.0))
def f32_tanh(x): return np.sum(np.tanh(x) / 3.0 - 1.5 * np.arctan(x))
def f32_power(x): return np.sum(x ** 3)
def f32_square(x): return np.sum(np.square(x) + np.reciprocal(x + 3.0))
def f32_relu(x): return np.sum(np.maximum(x, 0.0))
def f32_minimum(x): return np.sum(np.minimum(x, 0.5) + np.abs(x))
def f32_where(x): return np.sum(np.where(x > 0, x, 0.1 * x))
def f32_clip(x): return np.sum(np.clip(x, -0.5, 0.5))
def f32_logaddexp(x): return np.sum(np.logaddexp(x, 0.5) + np.hypot(x, 1.0))
def f32_mean_by_shape(x): return np.sum(x) / x.shape[0]
def f32_mean(x): return np.mean(x * x)
def f32_max(x): return np.max(x)
def f32_min(x): return np.min(x * x)
def f32_var(x): return np.var(x, axis=0) + np.std(x, axis=0)
def f32_cumsum(x): return np.sum(np.cumsum(x) * x)
def f32_norm(x): return np.linalg.norm(x)
def f32_norm_1(x): return np.linalg.norm(x, 1) + np.linalg.norm(x, np.inf)
def f32_matmul(x): return np.sum(np.tanh(x @ W32))
def f32_dot(x): return np.dot(x, x) + np.sum(np.dot(x, W32))
def f32_inner(x): return np.inner(x, x) + np.vdot(x, x)
def f32_outer(x): return np.sum(np.outer(x, x) * 0.5)


FLOAT32_CASES = [f32_sin, f32_log, f32_tanh, f32_power, f32_square, f32_relu, f32_minimum, f32_where, f32_clip,
                 f32_logaddexp, f32_mean_by_shape, f32_mean, f32_max, f32_min, f32_var, f32_cumsum,
                 f32_norm, f32_norm_1, f32_matmul, f32_dot, f32_inner, f32_outer]


@pytest.mark.parametrize("f", FLOAT32_CASES, ids=lambda f: f.__name__)
def test_float32_stays_float32(f):
    x = np.array([0.3, -1.25, 2.0, 0.75], dtype=np.float32)   # no ties with clip's or minimum's 0.5
    xs = np.stack([x, x + 0.5, -x])
    assert np.result_type(f(x)) == np.float32, "NumPy's own result is float32"
    assert tr.grad(f)(x).dtype == np.float32
    value, tangent = tr.jvp(f, (x,), (np.ones_like(x),))
    assert np.result_type(value) == np.float32 and np.result_type(tangent) == np.float32
    assert tr.vmap(f)(xs).dtype == np.float32
    assert tr.vmap(tr.grad(f))(xs).dtype == np.float32


def f32_many(x):
    """Many primitives in one function: one compile for jit(grad).  (Not np.sum(x) / x.shape[0]: numba
    divides a float32 by an int64 in float64, where NumPy keeps float32; not fixed yet.)"""
    return (f32_sin(x) + f32_log(x) + f32_tanh(x) + f32_power(x) + f32_square(x) + f32_relu(x) + f32_minimum(x)
            + f32_where(x) + f32_clip(x) + f32_mean(x) + f32_max(x) + f32_var(x)
            + f32_norm(x) + f32_matmul(x) + f32_dot(x) + f32_inner(x))


def test_float32_stays_float32_under_jit_of_grad():
    x = np.array([0.3, -1.25, 2.0, 0.75], dtype=np.float32)   # no ties with clip's or minimum's 0.5
    got = tr.jit(tr.grad(f32_many))(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, central_difference_grad(f32_many, [x.astype(np.float64)]), rtol=1e-3,
                               atol=1e-3)


# ------------------------------------------- 5. x ** n: the exponent's cotangent only when it has one
def power_of(x, n): return x ** n


def test_power_with_an_integer_exponent_takes_no_log_of_negative_x():
    x = np.array([-1.5, 2.0, -0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # np.log of a negative x would warn
        _, vjp_fn = tr.vjp(power_of, x, 3)
        x_bar, _ = vjp_fn(np.ones(3))
        np.testing.assert_allclose(x_bar, 3 * x ** 2, rtol=1e-12)
        np.testing.assert_allclose(tr.jvp(power_of, (x, 3), (np.ones(3), 0))[1], 3 * x ** 2, rtol=1e-12)
        np.testing.assert_allclose(tr.vmap(tr.grad(f32_power))(np.stack([x, -x])), 3 * np.stack([x, -x]) ** 2,
                                   rtol=1e-12)


def test_power_exponent_cotangent_at_a_zero_base_follows_jax():
    """JAX takes log(1) where x == 0: 0 ** y is 0 for every y > 0, so the exponent's cotangent is 0."""
    x, y = np.array([0.0, 2.0]), np.array([1.5, 0.5])
    _, vjp_fn = tr.vjp(power_of, x, y)
    _, y_bar = vjp_fn(np.ones(2))
    np.testing.assert_allclose(y_bar, [0.0, 2.0 ** 0.5 * np.log(2.0)], rtol=1e-12)
    np.testing.assert_allclose(tr.jvp(power_of, (x, y), (np.zeros(2), np.ones(2)))[1], y_bar, rtol=1e-12)


def power_sum(x, y):
    return np.sum(x ** y)


def test_power_second_derivative_in_the_exponent():
    from oracles import central_difference_hessian
    x, y = np.array([1.5, 2.0]), np.array([0.5, 1.5])
    np.testing.assert_allclose(tr.hessian(power_sum, argnums=1)(x, y),
                               central_difference_hessian(power_sum, [x, y], argnum=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tr.jacrev(tr.grad(power_sum, argnums=1), argnums=0)(x, y),
                               np.diag(x ** (y - 1) * (1 + y * np.log(x))), rtol=1e-6)


# ----------------------------------------------- trace, det, inv of stacks of matrices (NumPy's meaning)
def trace_of_stack(x): return np.trace(x)          # x[i, i, :] summed: one trace per trailing index
def det_of_stack(x): return np.linalg.det(x)
def inv_of_stack(x): return np.linalg.inv(x)


@pytest.mark.parametrize("f, shape", [(trace_of_stack, (3, 3, 2)), (trace_of_stack, (2, 4)),
                                      (det_of_stack, (2, 3, 3)), (inv_of_stack, (2, 3, 3))],
                         ids=["trace-3d", "trace-rectangular", "det-stack", "inv-stack"])
def test_matrix_functions_of_stacks_rules(f, shape):
    x = RNG.standard_normal(shape)
    if f is not trace_of_stack:
        x = x + 3.0 * np.eye(shape[-1])     # well-conditioned matrices
    _check_rules(f, x)


def det_inv_trace(x):
    return np.linalg.det(x) + np.sum(np.linalg.inv(x) * x) + np.trace(x @ x)


def test_det_inv_trace_under_jit_of_grad():
    x = RNG.standard_normal((3, 3)) + 3.0 * np.eye(3)
    np.testing.assert_allclose(tr.jit(tr.grad(det_inv_trace))(x), central_difference_grad(det_inv_trace, [x]),
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["fro", "nuc", "1", "-1", "inf", "-inf", "2", "-2", "None-axes01"])
def test_matrix_norms_compile_for_the_cpu(name):
    f = MATRIX_NORMS[name]
    for x in (RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2)).astype(np.float32)):
        got, want = tr.jit(f)(x), f(x)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=1e-5 if x.dtype == np.float32 else 1e-12)
