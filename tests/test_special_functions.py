"""scipy.special's error and gamma functions as primitives: erf, erfc, erfinv, gammaln, digamma, polygamma.

Oracles need nothing of ours: scipy.special's values (the compiled target runs
transformer's own kernels, backends/special_kernels.py), central differences of
scipy's values for first and second derivatives.  The rule table
(tests/rule_table.py) checks every transform of each on small arrays; here are
the wide ranges, the edges, the orders past the second and the dtypes.
"""
import math
import subprocess
import sys

import numpy as np
import pytest
import scipy.special

import transformer as tr


def values(x, t, p):
    """Each function over arrays (the compiled overloads' loops) and, through math, on one number."""
    s = float(x[0])
    return (scipy.special.erf(x), scipy.special.erfc(x), scipy.special.erfinv(t), scipy.special.gammaln(x),
            scipy.special.digamma(x), scipy.special.polygamma(1, p), scipy.special.polygamma(2, p),
            scipy.special.polygamma(3, p), math.erf(s), math.erfc(s), math.lgamma(s))


def wide_ranges():
    rng = np.random.default_rng(7)
    positive = np.concatenate([10.0 ** rng.uniform(-8, 8, 400), rng.uniform(0.0, 30.0, 400),
                               rng.uniform(1.3, 1.6, 200)])         # digamma's positive root is 1.4616...
    negative = np.floor(rng.uniform(-60.0, 0.0, 400)) + rng.uniform(0.02, 0.98, 400)
    x = np.concatenate([positive, negative, rng.uniform(-6.0, 6.0, 200)])
    near_one = 1.0 - 2.0 ** -np.arange(1.0, 54.0)                   # erfinv as 1 - |t| runs down to 2^-53
    t = np.concatenate([rng.uniform(-1.0, 1.0, 1000), near_one, -near_one, 10.0 ** -np.arange(1.0, 300.0, 10.0)])
    p = np.concatenate([positive[::2], negative[::2]])
    return x, t, p


def relative_error(got, want, scale=None):
    scale = np.abs(want) if scale is None else scale
    return np.max(np.abs(np.asarray(got, dtype=np.float64) - want) / scale)


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_values_match_scipy_over_wide_ranges(target):
    x, t, p = wide_ranges()
    got = tr.jit(values, target=target)(x, t, p)
    want = values(x, t, p)
    names = ["erf", "erfc", "erfinv", "gammaln", "digamma", "polygamma1", "polygamma2", "polygamma3",
             "math.erf", "math.erfc", "math.lgamma"]
    for name, g, w in zip(names, got, want):
        assert relative_error(g, w, error_scale(name, w, x if name == "digamma" else p)) < 1e-13, name


def error_scale(name, want, arg):
    """What an error is measured against: the value, except where no implementation keeps relative accuracy."""
    size = np.abs(want)
    if name in ("erfc", "math.erfc"):
        return np.maximum(size, 1e-290)           # past x = 26 erfc underflows into subnormal numbers
    if name in ("gammaln", "math.lgamma"):
        # libm's lgamma (numba's math.lgamma), like scipy's gammaln, is accurate to ~1e-16 absolute near
        # the roots of log|Gamma| (x = 1, 2 and one between every two poles left of zero)
        return np.maximum(size, 1.0)
    if name == "digamma" or name.startswith("polygamma"):
        # left of zero each has a root between every two poles, where scipy's value (a difference of
        # two large terms, as ours) has no relative accuracy: measured against the terms' size there
        return np.where(arg < 0, np.maximum(size, 1.0 / np.abs(arg - np.round(arg)) ** 2), size)
    return np.maximum(size, 1e-300)


def test_digamma_is_accurate_at_its_positive_root():
    """Near 1.4616... psi(x + n) - (1/x + ... ) would cancel its leading digits; the Taylor series there keeps them."""
    x = 1.4616321449683622 + np.linspace(-0.3, 0.3, 601)
    got = tr.jit(digamma)(x)
    assert relative_error(got, scipy.special.digamma(x)) < 2e-14


def edges(x, t):
    return scipy.special.digamma(x), scipy.special.erfinv(t), scipy.special.polygamma(1, x), \
        scipy.special.polygamma(2, x), scipy.special.gammaln(x)


def test_edges_take_scipys_values_when_compiled():
    x = np.array([0.0, -0.0, -1.0, -2.0, np.inf, np.nan, 1e-300, -1e-300])
    t = np.array([1.0, -1.0, 1.5, -1.5, np.nan, 0.0, 5e-324, 1.0 - 2.0 ** -53])
    with np.errstate(all="ignore"):
        want = edges(x, t)
        got = tr.jit(edges)(x, t)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w, err_msg=f"result {k}")


# ------------------------------------------------------------------ derivatives
def erf(x): return scipy.special.erf(x)                          # noqa: E704
def erfc(x): return scipy.special.erfc(x)                        # noqa: E704
def erfinv(x): return scipy.special.erfinv(x)                    # noqa: E704
def gammaln(x): return scipy.special.gammaln(x)                  # noqa: E704
def digamma(x): return scipy.special.digamma(x)                  # noqa: E704
def trigamma(x): return scipy.special.polygamma(1, x)            # noqa: E704
def lgamma(x): return math.lgamma(x)                             # noqa: E704


POINTS = {erf: [-1.7, -0.2, 0.4, 2.1], erfc: [-1.1, 0.3, 1.9], erfinv: [-0.95, -0.3, 0.1, 0.7, 0.99],
          gammaln: [0.05, 0.7, 3.3, 40.0, -0.5, -2.3, -7.6], digamma: [0.05, 1.46, 2.5, 25.0, -0.3, -3.7],
          trigamma: [0.3, 1.2, 9.0, -1.5, -4.25], lgamma: [0.6, 5.5, -1.5]}
CASES = [pytest.param(f, x, id=f"{f.__name__}({x})") for f, xs in POINTS.items() for x in xs]


def central(f, x, h):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("f, x", CASES)
def test_first_and_second_derivatives_match_central_differences(f, x):
    h = 1e-6 * max(1.0, abs(x))
    np.testing.assert_allclose(tr.grad(f)(x), central(f, x, h), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(tr.jvp(f, (x,), (1.0,))[1], central(f, x, h), rtol=1e-7, atol=1e-8)
    # the second derivative against differences of scipy's first derivative (second differences of
    # the function lose half the digits, and near erfinv's pole more)
    np.testing.assert_allclose(tr.grad(tr.grad(f))(x), central(FIRST[f], x, h), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(tr.jvp(tr.grad(f), (x,), (1.0,))[1], central(FIRST[f], x, h), rtol=1e-6, atol=1e-7)


FIRST = {  # each function's first derivative, written with scipy
    erf: lambda v: 2 / np.sqrt(np.pi) * np.exp(-v * v),
    erfc: lambda v: -2 / np.sqrt(np.pi) * np.exp(-v * v),
    erfinv: lambda v: np.sqrt(np.pi) / 2 * np.exp(scipy.special.erfinv(v) ** 2),
    gammaln: scipy.special.digamma,
    lgamma: scipy.special.digamma,
    digamma: lambda v: scipy.special.polygamma(1, v),
    trigamma: lambda v: scipy.special.polygamma(2, v),
}


def test_every_order_of_digamma_has_a_rule():
    """digamma' = polygamma(1, x), and polygamma(n, x)' = polygamma(n + 1, x): the third and fourth
    derivatives are polygamma(3, x) and polygamma(4, x), compiled as well."""
    third = tr.grad(tr.grad(tr.grad(digamma)))
    fourth = tr.grad(third)
    for x in (0.4, 2.7, -1.3):
        np.testing.assert_allclose(third(x), scipy.special.polygamma(3, x), rtol=1e-13)
        np.testing.assert_allclose(tr.jit(third)(x), scipy.special.polygamma(3, x), rtol=1e-13)
        np.testing.assert_allclose(fourth(x), scipy.special.polygamma(4, x), rtol=1e-13)


def loss(x, w):
    t = np.tanh(x) * 0.9
    return np.sum(w * scipy.special.erf(x) + scipy.special.erfc(x * w) + scipy.special.erfinv(t)
                  + scipy.special.gammaln(x * x + 0.5) * scipy.special.digamma(w + 1.0))


def test_jit_of_grad_matches_python_and_differences():
    rng = np.random.default_rng(3)
    x, w = rng.uniform(-1.5, 1.5, 6), rng.uniform(0.2, 2.0, 6)
    compiled = tr.jit(tr.grad(loss, argnums=(0, 1)))(x, w)
    plain = tr.grad(loss, argnums=(0, 1))(x, w)
    for k, arg in enumerate((x, w)):
        np.testing.assert_allclose(compiled[k], plain[k], rtol=1e-12)
        steps = np.eye(arg.size) * 1e-6
        args = lambda step: (x + step, w) if k == 0 else (x, w + step)          # noqa: E731
        differences = [(loss(*args(e)) - loss(*args(-e))) / 2e-6 for e in steps]
        np.testing.assert_allclose(compiled[k], differences, rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------ float32
def all_of_them(x):
    return (scipy.special.erf(x) + scipy.special.erfc(x) + scipy.special.erfinv(x * 0.5)
            + scipy.special.gammaln(x + 1.0) + scipy.special.digamma(x + 1.0) + scipy.special.polygamma(1, x + 1.0))


@pytest.mark.parametrize("target", ["cpu", "python"])
def test_float32_stays_float32_under_every_transform(target):
    x = np.linspace(0.1, 0.9, 6, dtype=np.float32)
    jit = lambda f: tr.jit(f, target=target)                                  # noqa: E731
    want = all_of_them(x.astype(np.float64))
    assert jit(all_of_them)(x).dtype == np.float32
    np.testing.assert_allclose(jit(all_of_them)(x), want, rtol=1e-6)
    assert jit(tr.grad(loss32))(x).dtype == np.float32
    out, tangent = tr.jvp(jit(all_of_them), (x,), (np.ones_like(x),))
    assert out.dtype == tangent.dtype == np.float32
    assert jit(tr.vmap(all_of_them))(x.reshape(3, 2)).dtype == np.float32
    assert np.result_type(jit(tr.grad(tr.grad(scalar32)))(np.float32(0.4))) == np.float32


def loss32(x):
    return np.sum(all_of_them(x))


def scalar32(s):
    return scipy.special.digamma(s) * scipy.special.erfinv(s)


def test_polygamma_keeps_float32_where_scipy_widens():
    """scipy.special.polygamma computes in float64 whatever its argument; transformer keeps float32, as
    jax.scipy.special.polygamma does (and as every other function here does in scipy itself)."""
    x = np.linspace(0.5, 2.0, 4, dtype=np.float32)
    assert scipy.special.polygamma(1, x).dtype == np.float64
    assert tr.jit(trigamma)(x).dtype == tr.jit(trigamma, target="python")(x).dtype == np.float32


# ------------------------------------------------------------------ resolution
def test_importing_transformer_does_not_import_scipy_special():
    """scipy.special's objects are bound to their primitives once the user imports it (primitives.lookup)."""
    code = "import transformer, sys; print('scipy.special' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_scipy_and_math_names_are_one_primitive_each():
    from transformer import primitives
    assert primitives.lookup(scipy.special.psi) is primitives.lookup(scipy.special.digamma) is primitives.get("digamma")
    assert primitives.lookup(math.lgamma) is primitives.lookup(scipy.special.gammaln) is primitives.get("gammaln")
    assert primitives.lookup(math.erf) is primitives.lookup(scipy.special.erf) is primitives.lookup(tr.lax.erf)
    assert primitives.lookup(scipy.special.gamma) is None           # no primitive: refused at the user's line
