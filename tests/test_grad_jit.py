"""Reverse mode compiled by numba: jit(grad(f)) against grad(f) on the python target.

The python target runs the plain-NumPy helpers of ``transformer.runtime``;
the CPU target runs their numba overloads (``backends/numba_runtime.py``)
and keeps its tapes in numba's own lists.  Both run the same generated algorithm,
so they must agree to rounding.  The helpers themselves are also checked one
by one against the NumPy versions, on the shapes and axes the corpus does
not reach.
"""
import numba
import numpy as np
import pytest

import transformer as tr
from corpus_grad import CASES
from transformer import runtime as rt
from transformer.backends import numba_runtime  # noqa: F401  (registers the overloads the wrappers below call)
from transformer.errors import CompileError

# Why a case cannot compile yet; each is checked to fail with a CompileError, nothing else.
NOT_COMPILABLE: dict = {}


def _args(name, dtype=np.float64):
    fn, make = CASES[name]
    args = make(np.random.default_rng(len(name)))
    return fn, tuple(np.asarray(a, dtype) if isinstance(a, np.ndarray) else a for a in args)


def _cases():
    for name in sorted(CASES):
        marks = []
        if name in NOT_COMPILABLE:
            marks.append(pytest.mark.xfail(reason=NOT_COMPILABLE[name], raises=CompileError, strict=True))
        yield pytest.param(name, marks=marks)


def _assert_same(got, want, rtol=1e-12):
    """Same structure, same array dtype, values equal to rounding (numba returns scalars as Python numbers)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w, rtol)
        return
    assert np.shape(got) == np.shape(want)
    if isinstance(want, np.ndarray) and want.ndim:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-2)


@pytest.mark.parametrize("name", _cases())
def test_jit_grad_matches_python_target(name):
    fn, args = _args(name)
    _assert_same(tr.jit(tr.grad(fn))(*args), tr.grad(fn)(*args))


# loops with tapes, branches, while, early return, helpers, two arguments
VALUE_AND_GRAD = ["rnn", "rosenbrock", "loop_over_rows", "nested_data_loops", "return_in_loop",
                  "branch_on_value", "helper_inplace", "two_arguments", "max_reduce", "concat_stack"]


@pytest.mark.parametrize("name", VALUE_AND_GRAD)
def test_jit_value_and_grad_matches_python_target(name):
    fn, args = _args(name)
    value, gradient = tr.jit(tr.value_and_grad(fn))(*args)
    expected_value, expected_gradient = tr.value_and_grad(fn)(*args)
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    _assert_same(gradient, expected_gradient)


# float32 in: the gradient's dtype is NumPy's (float32 kept, or widened as by matmul_chain's float64 weights)
FLOAT32 = ["sin_sum", "tanh_square", "max_reduce", "mean_axis0", "var_std", "mean_std_normalize", "prod_reduce",
           "cumsum_chain", "matmul_chain", "concat_stack", "rnn", "sum_axis1_keepdims"]


@pytest.mark.parametrize("name", FLOAT32)
def test_jit_grad_float32(name):
    fn, args = _args(name, np.float32)
    got, want = tr.jit(tr.grad(fn))(*args), tr.grad(fn)(*args)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert got.dtype == want.dtype


@pytest.mark.parametrize("name", ["uses_safe_log", "uses_clip_gradient", "with_stop_gradient"])
def test_jit_grad_of_custom_vjp_and_stop_gradient(name):
    import corpus_extra
    fn = getattr(corpus_extra, name)
    x = np.array([0.5, -2.0, 3.0, 0.01])
    _assert_same(tr.jit(tr.grad(fn))(x), tr.grad(fn)(x))


def test_tapes_are_numba_lists_in_compiled_code():
    code = tr.show(tr.jit(tr.grad(CASES["rnn"][0])))
    assert "h_stack = []" in code and "h_stack.append(h)" in code
    assert "rt.stack" not in code and "rt.push" not in code
    assert "rt.pop(h_stack)" in code      # pop and top stay calls, compiled by their overloads


# ------------------------------------------------------------- helpers one by one
# One compiled wrapper per helper; numba compiles it once per argument type.
@numba.njit
def _unbroadcast(g, x):
    return rt.unbroadcast(g, x)


@numba.njit
def _expand_to(g, x, axis, keepdims):
    return rt.expand_to(g, x, axis, keepdims)


@numba.njit
def _extremum_vjp(g, x, peak, axis, keepdims):
    return rt.extremum_vjp(g, x, peak, axis, keepdims)


@numba.njit
def _prod_vjp(g, x, axis, keepdims):
    return rt.prod_vjp(g, x, axis, keepdims)


@numba.njit
def _cumsum_vjp(g, x, axis):
    return rt.cumsum_vjp(g, x, axis)


@numba.njit
def _cumprod_vjp(g, x, products, axis):
    return rt.cumprod_vjp(g, x, products, axis)


@numba.njit
def _dot_vjps(g, x, y):
    return rt.dot_vjp_x(g, x, y), rt.dot_vjp_y(g, x, y)


RNG = np.random.default_rng(7)


def _normal(*shape):
    return RNG.normal(size=shape)


@pytest.mark.parametrize("g_shape, x_shape", [((3, 4), (4,)), ((3, 4), (3, 1)), ((2, 3, 4), (3, 1)),
                                              ((2, 3, 4), (1, 4)), ((3, 4), ()), ((), (3,)), ((4,), (3, 4)),
                                              ((2, 3, 4), (3, 4)), ((2, 3, 4), (1, 3, 4)), ((2, 3, 4), (4,)),
                                              ((3, 0), (0,)), ((0, 4), (4,)), ((3, 1, 4), (1, 4))])
def test_unbroadcast(g_shape, x_shape):
    g = _normal(*g_shape) if g_shape else 1.5
    x = _normal(*x_shape) if x_shape else 0.5
    _assert_same(_unbroadcast(g, x), rt.unbroadcast(g, x))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("g_shape, x_shape", [((128, 256), (256,)), ((5, 3, 7), (1, 7)), ((4, 6, 5), (6, 5))])
def test_unbroadcast_over_leading_rows_adds_the_rows_in_order(g_shape, x_shape, dtype):
    # a bias's cotangent: its own loop, whose sums are the general walk's to the bit
    g = _normal(*g_shape).astype(dtype)
    expected = np.zeros(int(np.prod(x_shape)), dtype)
    for row in g.reshape(-1, expected.size):
        expected += row
    got = _unbroadcast(g, _normal(*x_shape).astype(dtype))
    assert got.dtype == dtype and got.shape == x_shape
    np.testing.assert_array_equal(got.reshape(-1), expected)
    # a transposed view is read in C order all the same
    np.testing.assert_array_equal(_unbroadcast(np.asfortranarray(g), _normal(*x_shape)).reshape(-1),
                                  _unbroadcast(np.ascontiguousarray(g), _normal(*x_shape)).reshape(-1))


def test_unbroadcast_of_matching_shapes_returns_g_itself():
    g = _normal(3, 4)
    assert _unbroadcast(g, _normal(3, 4)) is g


@pytest.mark.parametrize("g_shape, x_shape, axis, keepdims", [
    ((), (3, 4), None, False), ((4,), (3, 4), 0, False), ((3,), (3, 4), -1, False),
    ((3, 1), (3, 4), 1, True), ((4,), (2, 3, 4), (0, 1), False), ((3,), (2, 3, 4), (0, 2), False),
    ((1, 3, 1), (2, 3, 4), (0, -1), True), ((1, 1), (3, 4), None, True)])
def test_expand_to(g_shape, x_shape, axis, keepdims):
    g = _normal(*g_shape) if g_shape else 2.0
    x = _normal(*x_shape)
    got = _expand_to(g, x, axis, keepdims)
    _assert_same(got, rt.expand_to(g, x, axis, keepdims), rtol=0)
    assert got is not g


@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), ((0, 1), False)])
def test_extremum_vjp_splits_among_ties(axis, keepdims):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]])
    peak = np.max(x, axis=axis, keepdims=keepdims)
    g = np.ones_like(peak) * 2.0 if np.ndim(peak) else 2.0
    _assert_same(_extremum_vjp(g, x, peak, axis, keepdims), rt.extremum_vjp(g, x, peak, axis, keepdims), rtol=0)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), (-1, False)])
def test_prod_vjp_is_exact_with_zeros(axis, keepdims):
    x = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 2.0], [0.5, 2.0, 4.0, 1.5]])
    z = np.prod(x, axis=axis, keepdims=keepdims)
    g = np.arange(1.0, 1.0 + np.size(z)).reshape(np.shape(z)) if np.ndim(z) else 3.0
    _assert_same(_prod_vjp(g, x, axis, keepdims), rt.prod_vjp(g, x, axis, keepdims), rtol=0)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_cumsum_and_cumprod_vjp(axis):
    x = np.array([[1.5, 0.0, 2.0, -1.0], [0.5, 3.0, 0.0, 0.0], [0.5, 2.0, 4.0, 1.5]])
    g = _normal(x.size) if axis is None else _normal(*x.shape)
    z = np.cumprod(x, axis=axis)
    _assert_same(_cumsum_vjp(g, x, axis), rt.cumsum_vjp(g, x, axis), rtol=0)
    _assert_same(_cumprod_vjp(g, x, z, axis), rt.cumprod_vjp(g, x, z, axis), rtol=1e-12)


@pytest.mark.parametrize("x_shape, y_shape", [((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((3,), (3,)),
                                              ((), (3,)), ((2, 3), ())])
def test_dot_vjps(x_shape, y_shape):
    x = _normal(*x_shape) if x_shape else 1.5
    y = _normal(*y_shape) if y_shape else -0.5
    z = np.dot(x, y)
    g = _normal(*np.shape(z)) if np.ndim(z) else 2.0
    _assert_same(_dot_vjps(g, x, y), (rt.dot_vjp_x(g, x, y), rt.dot_vjp_y(g, x, y)))


@numba.njit
def _shape_helpers(g3, g2, x2, axes):
    return rt.transpose_vjp(g3, axes), rt.transpose_vjp(g2), rt.trace_vjp(1.5, x2), rt.norm_vjp(g2[0], x2, g2[1], 0, False)


def test_transpose_trace_norm_vjps():
    g3, g2, x2 = _normal(2, 3, 4), _normal(3, 4), _normal(3, 4)
    want = (rt.transpose_vjp(g3, (2, 0, 1)), rt.transpose_vjp(g2), rt.trace_vjp(1.5, x2),
            rt.norm_vjp(g2[0], x2, g2[1], 0, False))
    _assert_same(_shape_helpers(g3, g2, x2, (2, 0, 1)), want, rtol=0)


@numba.njit
def _solve_columns(x, b):
    columns = rt.solve_columns(x, b)
    return columns, rt.solve_uncolumns(columns, b)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((3, 2), (3, 2)), ((2, 3, 2), (2, 3, 2))])
def test_solve_columns(shapes):
    # solve's result as columns and back: a vector b gets an axis of one column, a matrix b none
    x_shape, b_shape = shapes
    x, b = _normal(*x_shape), _normal(*b_shape)
    want = (rt.solve_columns(x, b), rt.solve_uncolumns(rt.solve_columns(x, b), b))
    _assert_same(_solve_columns(x, b), want, rtol=0)
    assert want[1].shape == x.shape and want[0].ndim == x.ndim + (len(b_shape) == 1)


@numba.njit
def _basics(x):
    return rt.zeros_like(x), rt.copy(x), rt.cast_like(x * 2.0, x), rt.astype(x, np.float32)


@pytest.mark.parametrize("x", [np.arange(3), np.arange(3.0, dtype=np.float32), np.float32(1.5), 2.5],
                         ids=["int64", "float32", "float32-scalar", "float"])
def test_zeros_copy_and_casts(x):
    got = _basics(x)
    want = (rt.zeros_like(x), rt.copy(x), rt.cast_like(x * 2.0, x), rt.astype(x, np.float32))
    _assert_same(got, want, rtol=0)
    if isinstance(x, np.ndarray):
        assert got[1] is not x


@numba.njit
def _seed(out):
    return rt.scalar_seed(out)


def test_scalar_seed():
    assert _seed(np.float32(3.0)) == 1.0 and _seed(3) == 1.0
    with pytest.raises(TypeError, match="grad requires a scalar output, but the function returned a 2-D array"):
        _seed(np.ones((2, 2)))
