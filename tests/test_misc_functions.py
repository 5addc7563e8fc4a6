"""Named tests of the misc family (nan_to_num, gradient, average, interp, vander, ndtr, log_ndtr,
the tangents of prod and cumprod) and of the refusal of complex arguments, for what the rule
table's rows cannot show."""
import re

import numpy as np
import pytest

import transformer as tr
from transformer.errors import TransformError


def _f(x, y):
    return np.sum(np.sin(x) * y)


_C = np.array([1.0 + 2.0j, 0.5 - 1.0j])
_R = np.array([1.0, 2.0])


@pytest.mark.parametrize("call, name", [
    (lambda: tr.grad(_f)(_C, _R), "x"),
    (lambda: tr.grad(_f, argnums=1)(_R, _C), "y"),
    (lambda: tr.value_and_grad(_f)(_R, _C), "y"),
    (lambda: tr.vjp(_f, _C, _R), "x"),
    (lambda: tr.jvp(_f, (_C, _R), (_C, _R)), "x"),
    (lambda: tr.jvp(_f, (_R, _R), (_C, _R)), "the tangent of x"),
    (lambda: tr.vmap(_f)(_R, _C.astype(np.complex64)), "y"),
    (lambda: tr.vmap(_f, in_axes=(0, None))(_R, 1j), "y"),
    (lambda: tr.jit(_f)(_C, _R), "x"),
    (lambda: tr.jit(_f, target="python")(_R, np.complex128(1j)), "y"),
    (lambda: tr.jit(tr.grad(_f))(_C, _R), "x"),
])
def test_complex_arguments_are_refused_naming_them(call, name):
    with pytest.raises(TransformError, match=rf"argument '{name}' of '_f' is complex") as info:
        call()
    assert "test_misc_functions.py" in str(info.value)      # the function's own file and line


def test_complex_leaf_of_a_pytree_is_refused():
    def loss(params):
        return np.sum(params["w"])
    with pytest.raises(TransformError, match="argument 'params' of .* is complex"):
        tr.grad(loss)({"w": _C, "b": _R})
    assert np.allclose(tr.grad(loss)({"w": _R, "b": _R})["w"], 1.0)   # real pytrees still work


# ------------------------------------------------------------------ ndtr, log_ndtr
def test_log_ndtr_is_accurate_far_in_the_left_tail():
    import scipy.special
    x = np.array([-40.0, -37.0, -25.0, -20.0, -19.5, -5.0, -1.0, 0.0, 3.0, 9.0, 40.0])

    def fn(x):
        return scipy.special.log_ndtr(x)
    want = scipy.special.log_ndtr(x)
    for target in ("python", "cpu"):
        np.testing.assert_allclose(tr.jit(fn, target=target)(x), want, rtol=1e-14, atol=1e-300)
    # the derivative nears -x on the left (ndtr'/ndtr), and exp(-x^2/2)/sqrt(2 pi) on the right
    slope = tr.jit(tr.grad(lambda x: np.sum(scipy.special.log_ndtr(x))))(x)
    assert np.all(np.isfinite(slope))
    np.testing.assert_allclose(slope[0], 40.02496885, rtol=1e-8)
    h = 1e-5
    finite = (scipy.special.log_ndtr(x + h) - scipy.special.log_ndtr(x - h)) / (2 * h)
    np.testing.assert_allclose(slope, finite, rtol=1e-6, atol=1e-12)


def test_ndtr_matches_scipy_compiled_and_in_float32():
    import scipy.special
    x = np.linspace(-38.0, 9.0, 101)

    def fn(x):
        return scipy.special.ndtr(x)
    np.testing.assert_allclose(tr.jit(fn)(x), scipy.special.ndtr(x), rtol=1e-13, atol=1e-300)
    x32 = x.astype(np.float32)
    assert tr.jit(fn)(x32).dtype == np.float32


# -------------------------------------------------------------------- nan_to_num
def test_nan_to_num_defaults_and_its_derivative_where_replaced():
    x = np.array([np.nan, np.inf, -np.inf, 0.5, np.float64(-2.0)])

    def fn(x):
        return np.nan_to_num(x)
    for target in ("python", "cpu"):
        np.testing.assert_array_equal(tr.jit(fn, target=target)(x), np.nan_to_num(x))
    np.testing.assert_array_equal(tr.grad(lambda x: np.sum(np.nan_to_num(x, nan=1.0) * 3.0))(x), [0, 0, 0, 3, 3])
    np.testing.assert_array_equal(tr.jvp(fn, (x,), (np.ones(5),))[1], [0, 0, 0, 1, 1])


# ------------------------------------------------------------------------- interp
def test_interp_at_the_knots_takes_jaxs_slopes():
    """At a knot the slope on its right, at the last knot the last interval's, 0 outside (JAX's)."""
    def fn(x):
        return np.interp(x, np.array([0.0, 1.0, 3.0]), np.array([0.0, 2.0, 3.0]))
    x = np.array([0.0, 1.0, 3.0, -1.0, 4.0])
    value, slope = tr.jvp(fn, (x,), (np.ones(5),))
    np.testing.assert_array_equal(value, [0.0, 2.0, 3.0, 0.0, 3.0])
    np.testing.assert_array_equal(slope, [2.0, 0.5, 0.5, 0.0, 0.0])


# ---------------------------------------------------------------------- refusals
@pytest.mark.parametrize("source, words", [
    ("np.gradient(x, edge_order=2)", "np.gradient() has no parameter 'edge_order'"),
    ("np.average(x, returned=True)", "np.average() has no parameter 'returned'"),
    ("np.interp(x, x, x, left=0.0)", "np.interp() has no parameter 'left'"),
    ("np.nan_to_num(x, copy=False)", "does not support the keyword copy="),
])
def test_forms_not_implemented_are_refused_at_the_users_line(tmp_path, source, words):
    import importlib.util
    path = tmp_path / "user_code.py"
    path.write_text(f"import numpy as np\n\n\ndef fn(x):\n    return np.sum({source})\n")
    spec = importlib.util.spec_from_file_location("user_code", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(TransformError, match=re.escape(words)) as info:
        tr.grad(module.fn)(np.array([0.1, 0.5, 0.9]))
    assert "user_code.py:5" in str(info.value)


# ------------------------------------------------------------ products with zeros
def _prod_all(x): return np.prod(x)                    # noqa: E704
def _prod_0(x): return np.prod(x, axis=0)              # noqa: E704
def _prod_1(x): return np.prod(x, axis=1)              # noqa: E704
def _cumprod_all(x): return np.cumprod(x)              # noqa: E704
def _cumprod_0(x): return np.cumprod(x, axis=0)        # noqa: E704
def _cumprod_1(x): return np.cumprod(x, axis=1)        # noqa: E704


@pytest.mark.parametrize("fn", [_prod_all, _prod_0, _prod_1, _cumprod_all, _cumprod_0, _cumprod_1])
def test_prod_and_cumprod_tangents_with_one_and_two_zeros(fn):
    """(compiled: the rule table's jit_jvp cells of prod_zeros_axes and cumprod_zeros_axes)"""
    rng = np.random.default_rng(1)
    for zeros in ([(0, 1)], [(0, 1), (0, 2)], [(0, 1), (1, 2)]):
        x = rng.uniform(0.5, 1.5, (3, 4))
        for place in zeros:
            x[place] = 0.0
        t = rng.normal(size=x.shape)
        h = 1e-6
        want = (fn(x + h * t) - fn(x - h * t)) / (2 * h)
        np.testing.assert_allclose(tr.jvp(fn, (x,), (t,))[1], want, rtol=1e-7, atol=1e-9)
