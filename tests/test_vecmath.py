"""exp, expm1, tanh, sin, cos and log for the CPU target (backends/numba_vecmath.py):
NumPy's results to an ulp or two over the whole range, NumPy's exactly at the
special values, libm's beyond the range where sin's and cos's reduction is
exact enough, loops that compile to vector instructions, and the generated
code that calls them, fused, under jit and jit(grad)."""
import re

import numpy as np
import pytest
from numba import njit, types

import transformer as tr
from transformer.backends import numba_vecmath as vm

FUNCTIONS = {"exp": np.exp, "expm1": np.expm1, "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "log": np.log}


def _compiled(helper):
    """``helper`` (vm.exp, ...) called from numba-compiled code, as generated code calls it."""
    return njit(lambda x: helper(x))


COMPILED = {name: _compiled(getattr(vm, name)) for name in FUNCTIONS}
_exp, _log = COMPILED["exp"], COMPILED["log"]
# where each function is neither constant nor overflowing, and a little beyond;
# for sin and cos, twice the bound past which libm takes the elements over
RANGES = {"exp": (-760.0, 720.0), "expm1": (-50.0, 720.0), "tanh": (-25.0, 25.0),
          "sin": (-2 * vm._TRIG_BOUND, 2 * vm._TRIG_BOUND), "cos": (-2 * vm._TRIG_BOUND, 2 * vm._TRIG_BOUND),
          "log": (0.0, 1e3)}
# the most each was seen to differ from NumPy, over all the samples below
WITHIN_ULP = {"exp": 1.0, "expm1": 1.0, "tanh": 2.0, "sin": 1.0, "cos": 1.0, "log": 1.0}
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e-310, -1e-310, 1e-300,
                    709.78, 709.79, 710.0, -708.4, -720.0, -745.13, -745.14, -746.0, -40.0, -38.0,
                    19.0, 20.0, 21.0, -20.0, 1e300, -1e300, 0.5 * np.log(2.0), -0.5 * np.log(2.0),
                    1.0, -1.0, 2.2250738585072014e-308, 1.7976931348623157e308, np.sqrt(0.5), np.sqrt(2.0),
                    np.pi / 4, np.pi / 2, np.pi, -np.pi, vm._TRIG_BOUND, np.nextafter(vm._TRIG_BOUND, np.inf)])


def ulp_distance(got, want):
    """|got - want| in units of the spacing of floats at ``want`` (0 where both are equal or NaN)."""
    spacing = np.spacing(np.abs(want)).astype(np.float64)
    got, want = got.astype(np.float64), want.astype(np.float64)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        distance = np.abs(got - want) / spacing
    return np.where(same, 0.0, distance)


def samples(name, dtype, rng):
    low, high = RANGES[name]
    if dtype == np.float32:
        low, high = max(low, -110.0), min(high, 100.0)      # float32's exponent range
    values = np.concatenate([rng.uniform(low, high, 400_000), rng.uniform(-1.0, 1.0, 200_000),
                             rng.uniform(-1e-6, 1e-6, 20_000), SPECIAL])
    with np.errstate(over="ignore"):             # 1e300 is inf in float32
        return values.astype(dtype)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float64_is_within_two_ulp_of_numpy_over_the_whole_range(name):
    x = samples(name, np.float64, np.random.default_rng(0))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        want = FUNCTIONS[name](x)
    got = COMPILED[name](x)
    assert got.dtype == np.float64
    assert ulp_distance(got, want).max() <= WITHIN_ULP[name]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_float32_stays_float32_and_rounds_the_exact_result_once(name):
    x = samples(name, np.float32, np.random.default_rng(1))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        exact = FUNCTIONS[name](x.astype(np.float64)).astype(np.float32)
        numpy_float32 = FUNCTIONS[name](x)
    got = COMPILED[name](x)
    assert got.dtype == np.float32
    assert ulp_distance(got, exact).max() <= 1.0
    # NumPy's own float32 functions are less exact than that, by up to 3 ulp here
    assert ulp_distance(got, numpy_float32).max() <= 3.0


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_special_values_are_numpys_exactly(name, dtype):
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        x = SPECIAL.astype(dtype)
        want = FUNCTIONS[name](x)
    got = COMPILED[name](x)
    finite_or_inf = ~np.isnan(want)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(np.isinf(got), np.isinf(want))
    assert np.array_equal(np.signbit(got[finite_or_inf]), np.signbit(want[finite_or_inf]))
    assert np.array_equal(got[want == 0], want[want == 0])          # underflow to 0, and -0.0 kept
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
    assert ulp_distance(got, want).max() <= 2.0                      # subnormal results included


def test_subnormal_results_of_exp_are_numpys_to_an_ulp():
    x = np.random.default_rng(2).uniform(-745.2, -708.3, 100_000)
    got, want = _exp(x), np.exp(x)
    assert (want < 2.2250738585072014e-308).any()
    assert ulp_distance(got, want).max() <= 1.0


def test_log_of_every_binade_and_of_subnormals_is_numpys_to_an_ulp():
    rng = np.random.default_rng(7)
    powers = np.ldexp(1.0, np.arange(-1074, 1024))
    x = np.concatenate([np.exp2(rng.uniform(-1074.0, 1024.0, 200_000)), rng.uniform(0.0, 2.3e-308, 50_000),
                        powers, np.nextafter(powers, 0.0), np.nextafter(powers, np.inf),
                        1.0 + rng.uniform(-1e-3, 1e-3, 50_000)])
    x = x[np.isfinite(x) & (x > 0.0)]
    assert ulp_distance(_log(x), np.log(x)).max() <= 1.0


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_and_cos_near_multiples_of_half_pi_up_to_the_bound(name):
    # the doubles nearest k pi/2, where the result is tiny and the reduction's
    # error shows most; long double (64 bits) rounds k pi/2 once to them
    k = np.arange(-int(vm._TRIG_BOUND / (np.pi / 2)), int(vm._TRIG_BOUND / (np.pi / 2)) + 1)
    nearest = (k.astype(np.longdouble) * np.longdouble("1.5707963267948966192313216916397514")).astype(np.float64)
    x = np.concatenate([nearest, np.nextafter(nearest, np.inf), np.nextafter(nearest, -np.inf)])
    assert np.abs(x).max() <= vm._TRIG_BOUND
    assert ulp_distance(COMPILED[name](x), FUNCTIONS[name](x)).max() <= 1.0


@pytest.mark.parametrize("name", ["sin", "cos"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sin_and_cos_beyond_the_bound_are_libms(name, dtype):
    rng = np.random.default_rng(8)
    large = np.array([1e6, 1e15, 1e300, 1.7976931348623157e308, 3e5, 2**53, 6381956970095103.0 * 2.0**797])
    wide = np.exp2(rng.uniform(np.log2(vm._TRIG_BOUND), 1023.9, 20_000))
    with np.errstate(over="ignore", invalid="ignore"):      # beyond float32's range: inf, nan either way
        x = np.concatenate([large, -large, wide * rng.choice([-1.0, 1.0], wide.size)]).astype(dtype)
        want = FUNCTIONS[name](x)
    # libm's own results in float64 (NumPy's float32 functions are its own)
    exact = 1.0 if dtype == np.float32 else 0.0
    got = COMPILED[name](x)
    assert got.dtype == dtype
    assert ulp_distance(got, want).max() <= exact
    # among small arguments, the pass redoing the large ones leaves the loop's results alone
    mixed = np.concatenate([x, rng.uniform(-3.0, 3.0, x.size).astype(dtype)])
    rng.shuffle(mixed)
    with np.errstate(invalid="ignore"):
        distance = ulp_distance(COMPILED[name](mixed), FUNCTIONS[name](mixed))
    assert distance[np.abs(mixed) > vm._TRIG_BOUND].max() <= exact
    assert distance.max() <= 1.0
    for value in (1e6, 1e15, 1e300, -1e300):
        assert COMPILED[name](value) == FUNCTIONS[name](value)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_any_shape_and_layout_and_scalars(name):
    x = np.random.default_rng(3).normal(size=(6, 8))
    x = np.abs(x) if name == "log" else x            # numbers, not NaN, to compare
    for value in (x, x[:, ::3], x.T, x[2], np.array(0.7), 0.7, np.float32(0.7)):
        got, want = COMPILED[name](value), FUNCTIONS[name](value)
        assert np.shape(got) == np.shape(want)
        assert np.asarray(got).dtype == np.asarray(want).dtype or np.ndim(value) == 0
        np.testing.assert_allclose(got, want, rtol=4e-16 if np.asarray(want).dtype == np.float64 else 1e-7)


OF_TEMPORARY = {name: njit(lambda x, f=getattr(vm, f"{name}_of_temporary"): f(x * 1.0))
                for name in ("exp", "expm1", "tanh", "log")}
OF_NAMED = {name: njit(lambda x, f=getattr(vm, name): f(x * 1.0)) for name in OF_TEMPORARY}


@pytest.mark.parametrize("name", sorted(OF_TEMPORARY))
def test_of_a_temporary_writes_over_it_and_gives_the_same_numbers(name):
    """``vm.exp_of_temporary(x - m)``: the array expression's new array takes the results (float
    arrays of one or more dimensions), anything else goes to vm.exp; the same numbers either way."""
    x = np.abs(np.random.default_rng(6).normal(size=(5, 4))) + 0.1
    for value in (x, x.astype(np.float32), x[:, ::2], x.T, x[1], np.array(0.7), 0.7, np.arange(1, 4)):
        got, want = OF_TEMPORARY[name](value), OF_NAMED[name](value)
        assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)
    before = x.copy()
    OF_TEMPORARY[name](x)
    np.testing.assert_array_equal(x, before)          # x * 1.0 was overwritten, not x


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_integers_and_complex_numbers_get_numbas_own_function(name):
    ints = np.arange(-3, 4)
    complex_values = np.array([0.5 + 1j, -1.0 - 0.25j])
    with np.errstate(invalid="ignore", divide="ignore"):     # log of 0 and of negative integers
        np.testing.assert_allclose(COMPILED[name](ints), FUNCTIONS[name](ints))
    assert COMPILED[name](ints).dtype == np.float64
    np.testing.assert_allclose(COMPILED[name](complex_values), FUNCTIONS[name](complex_values))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_the_loop_over_elements_compiles_to_vector_instructions(name):
    loop = vm.LOOPS[name]
    COMPILED[name](np.ones(16))
    signature = next(s for s in loop.signatures if s[0] == types.float64[::1])
    ir = loop.inspect_llvm(signature)
    # a vectorised loop body computes on <N x double> values (arithmetic, or the
    # fma intrinsic's vector form); a scalar one only on double
    vector_arithmetic = r"(fmul|fadd|fsub) <\d+ x double>|@llvm\.fma\.v\d+f64\("
    assert re.search(vector_arithmetic, ir), "the loop over elements was not vectorised"
    # the polynomials are fused multiply-adds, and stay so in vector form
    assert "@llvm.fma.v" in ir, "the loop's multiply-adds are not vector fmas"
    for libm in ("exp", "tanh", "sin", "cos", "log"):
        assert f"@llvm.{libm}" not in ir and f"@{libm}" not in ir


# ----------------------------------------------------- in the generated code
def softmax(x):
    shifted = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return shifted / np.sum(shifted, axis=-1, keepdims=True)


def chain(x):
    return np.exp(-x ** 2) * np.expm1(x / 3.0) + 0.5 * np.tanh(x)


def tanh_layer_loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2) + np.sum(np.exp(-(x @ w) ** 2))


def waves(x):
    return np.sin(x) * np.cos(2.0 * x) + np.log(1.0 + x ** 2)


def wave_loss(w, x):
    return np.sum(np.sin(x @ w) * np.log(1.0 + np.cos(x @ w) ** 2))


def scalar_loop(x):
    total = 0.0
    for i in range(x.shape[0]):
        total += np.tanh(x[i]) * np.exp(-x[i])
    return total


def test_the_cpu_target_calls_them_and_says_why():
    code = tr.show(tr.jit(chain))
    assert all(re.search(rf"vm\.{f}(_of_temporary)?\(", code) for f in ("exp", "expm1", "tanh"))
    assert "np.exp(" not in code.split("def chain")[1].replace("# return np.exp", "")
    assert "numba_vecmath as vm   # " in code
    # fusion still puts the chain together: one expression, vm calls in it
    # (exp's argument is an array expression, whose new array its result overwrites)
    assert re.search(r"return \(vm\.exp_of_temporary\(-\(x \*\* .*vm\.expm1_of_temporary\(", code), code
    assert "vm." not in tr.show(tr.jit(chain, target="python"))


def test_sin_cos_and_log_are_called_in_one_fused_expression():
    code = tr.show(tr.jit(waves)).split("def waves")[1]
    statements = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith("#"))
    assert "vm.sin(x)" in statements and "vm.cos(" in statements and "vm.log_of_temporary(" in statements
    assert "np.sin(" not in statements and "np.cos(" not in statements and "np.log(" not in statements
    assert re.search(r"return .*vm\.sin\(x\) \* vm\.cos\(.*vm\.log_of_temporary\(", statements), code


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fused_expressions_give_numpys_answers(dtype):
    x = np.random.default_rng(4).normal(size=(5, 7)).astype(dtype)
    tolerance = 1e-14 if dtype == np.float64 else 1e-6
    for fn in (softmax, chain, waves):
        got = tr.jit(fn)(x)
        assert got.dtype == fn(x).dtype
        np.testing.assert_allclose(got, fn(x), rtol=tolerance, atol=tolerance)
        np.testing.assert_allclose(tr.jit(fn)(x[:, ::2]), fn(x[:, ::2]), rtol=tolerance, atol=tolerance)


def test_scalar_calls_in_loops():
    x = np.random.default_rng(5).normal(size=40)
    np.testing.assert_allclose(tr.jit(scalar_loop)(x), scalar_loop(x), rtol=1e-14)
    np.testing.assert_allclose(tr.jit(tr.grad(scalar_loop))(x), tr.grad(scalar_loop)(x), rtol=1e-13)


def test_reverse_mode_through_them_matches_the_python_target():
    rng = np.random.default_rng(6)
    w, x = rng.normal(size=(4, 3)) * 0.5, rng.normal(size=(8, 4))
    code = tr.show(tr.jit(tr.grad(tanh_layer_loss)))
    assert re.search(r"vm\.tanh(_of_temporary)?\(", code) and re.search(r"vm\.exp(_of_temporary)?\(", code)
    np.testing.assert_allclose(tr.jit(tr.grad(tanh_layer_loss))(w, x), tr.grad(tanh_layer_loss)(w, x),
                               rtol=1e-13, atol=1e-15)
    value, grads = tr.jit(tr.value_and_grad(softmax_loss))(w, x)
    ref_value, ref_grads = tr.value_and_grad(softmax_loss)(w, x)
    np.testing.assert_allclose(value, ref_value, rtol=1e-14)
    np.testing.assert_allclose(grads, ref_grads, rtol=1e-12, atol=1e-15)


def test_reverse_mode_through_sin_cos_and_log():
    rng = np.random.default_rng(7)
    w, x = rng.normal(size=(4, 3)), rng.normal(size=(8, 4))
    code = tr.show(tr.jit(tr.grad(wave_loss)))
    # the adjoints call them too: sin's derivative is cos, cos's is -sin
    assert code.count("vm.sin(") == 2 and code.count("vm.cos(") == 2 and re.search(r"vm\.log(_of_temporary)?\(", code)
    np.testing.assert_allclose(tr.jit(tr.grad(wave_loss))(w, x), tr.grad(wave_loss)(w, x),
                               rtol=1e-13, atol=1e-15)


def softmax_loss(w, x):
    return np.sum(softmax(x @ w) ** 2)
