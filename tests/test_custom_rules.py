"""custom_jvp and custom_vjp rules under every transform, applied from Python to the custom function
itself and through vmap, with rules that differ from the code's own derivative: a transform that
follows the code gives cos(x) where the rule says 3 (the oracle is the rule, written out here).

Before, a transform applied to the custom function itself transformed its code (jvp, jacfwd,
jacrev, vjp of it all gave cos(x)), reverse mode of a custom_jvp function differentiated its code
where JAX transposes the rule, vmap of either refused once a derivative followed, and a cached
module was found again after the custom function a name held was replaced."""
import numpy as np
import pytest

import custom_rule_cases as cases
import transformer as tr

X = np.array([0.1, 0.7, 1.3])
BATCH = np.stack([X, 2.0 * X])
THREES = np.full(3, 3.0)


def _sum_of(fn):
    return lambda v: np.sum(fn(v))


COMPOSITIONS = {
    "jvp": lambda g: tr.jvp(g, (X,), (np.ones(3),))[1],
    "jvp of jit": lambda g: tr.jvp(tr.jit(g, target="python"), (X,), (np.ones(3),))[1],
    "jvp of vmap": lambda g: tr.jvp(tr.vmap(g), (BATCH,), (np.ones_like(BATCH),))[1],
    "grad": lambda g: tr.grad(_sum_of(g))(X),
    "jacfwd (diagonal)": lambda g: np.diag(tr.jacfwd(g)(X)),
    "jacrev (diagonal)": lambda g: np.diag(tr.jacrev(g)(X)),
    "vjp": lambda g: tr.vjp(g, X)[1](np.ones(3))[0],
    "vmap of grad": lambda g: tr.vmap(tr.grad(_sum_of(g)))(BATCH),
    "grad of vmap": lambda g: tr.grad(lambda b: np.sum(tr.vmap(g)(b)))(BATCH),
    "vjp of vmap": lambda g: tr.vjp(tr.vmap(g), BATCH)[1](np.ones_like(BATCH))[0],
    "jacrev of vmap (diagonal)": lambda g: np.einsum("ijij->ij", tr.jacrev(tr.vmap(g))(BATCH)),
}
FORWARD = {"jvp", "jvp of jit", "jvp of vmap", "jacfwd (diagonal)"}


@pytest.mark.parametrize("composition", list(COMPOSITIONS))
@pytest.mark.parametrize("fn", [cases.sin_said_three, cases.sin_told_three], ids=["custom_jvp", "custom_vjp"])
def test_every_transform_follows_the_rule(fn, composition):
    if fn is cases.sin_told_three and composition in FORWARD:
        # as in JAX: a backward rule gives cotangents, and the code is what the rule replaces
        with pytest.raises(tr.TransformError, match=r"custom_rule_cases\.py:\d+: .*has no rule to follow"):
            COMPOSITIONS[composition](fn)
        return
    got = COMPOSITIONS[composition](fn)
    np.testing.assert_allclose(got, np.broadcast_to(THREES, np.shape(got)), rtol=1e-12)


@pytest.mark.parametrize("fn", [cases.sin_said_three, cases.sin_told_three], ids=["custom_jvp", "custom_vjp"])
def test_compiled_per_example_gradients_follow_the_rule(fn):
    got = tr.jit(tr.vmap(tr.grad(_sum_of(fn))))(BATCH)
    np.testing.assert_allclose(got, np.full_like(BATCH, 3.0), rtol=1e-12)
    got = tr.jit(tr.grad(lambda b: np.sum(tr.vmap(fn)(b))))(BATCH)
    np.testing.assert_allclose(got, np.full_like(BATCH, 3.0), rtol=1e-12)


def test_second_derivatives_follow_the_rule():
    # the rule's derivative is constant: its Hessian is zero, where the code's would be -sin(x)
    np.testing.assert_allclose(tr.hessian(_sum_of(cases.sin_said_three))(X), np.zeros((3, 3)), atol=1e-12)
    np.testing.assert_allclose(tr.hessian(_sum_of(cases.sin_told_three))(X), np.zeros((3, 3)), atol=1e-12)


@pytest.mark.parametrize("fn", [cases.scaled_product, cases.scaled_product_vjp], ids=["custom_jvp", "custom_vjp"])
def test_an_argument_the_same_for_every_example_gets_the_sum_of_its_cotangents(fn):
    # vmap with in_axes=(None, 0): a's cotangent adds up every example's, 2 x g by the rule (x g by
    # the code); x's is 5 a g (a g by the code)
    a = 1.5

    def loss(a, batch):
        return np.sum(tr.vmap(fn, in_axes=(None, 0))(a, batch))
    ga, gx = tr.grad(loss, argnums=(0, 1))(a, BATCH)
    np.testing.assert_allclose(ga, 2.0 * np.sum(BATCH), rtol=1e-12)
    np.testing.assert_allclose(gx, np.full_like(BATCH, 5.0 * a), rtol=1e-12)


def test_the_rule_of_a_function_of_two_arguments_under_jvp_of_vmap():
    a, ta = np.array([1.5, -0.5]), np.array([1.0, 2.0])
    tx = np.ones_like(BATCH)
    _, out_dot = tr.jvp(tr.vmap(cases.scaled_product), (a, BATCH), (ta, tx))
    want = 2.0 * BATCH * ta[:, None] + 5.0 * a[:, None] * tx
    np.testing.assert_allclose(out_dot, want, rtol=1e-12)


@pytest.mark.parametrize("fn, want", [(cases.clipped_triple, 1.0), (cases.both_outputs, 2.0 - 50.0)],
                         ids=["residuals with a number and None", "a tuple output"])
def test_rules_of_more_shapes_under_every_order_of_grad_and_vmap(fn, want):
    # grad(vmap) of these failed: a residual tuple holding a number was no structure inside the
    # batched rule, and a tuple output of the marker was one batched value
    expected = np.full_like(BATCH, want)
    np.testing.assert_allclose(tr.grad(fn)(X), expected[0], rtol=1e-12)
    np.testing.assert_allclose(tr.vmap(tr.grad(fn))(BATCH), expected, rtol=1e-12)
    np.testing.assert_allclose(tr.grad(lambda b: np.sum(tr.vmap(fn)(b)))(BATCH), expected, rtol=1e-12)


def test_reverse_mode_of_a_custom_jvp_function_is_its_rule_transposed():
    # as JAX's: the gradient of log1p(exp(x)) at 1000 by its rule is 1; the code's own derivative
    # divides exp(1000) = inf by 1 + inf, which is nan
    x = np.array([1000.0, 0.0, -3.0])
    want = 1.0 / (1.0 + np.exp(-x))
    with np.errstate(over="ignore"):           # the value itself computes exp(1000), as JAX's does
        np.testing.assert_allclose(tr.grad(cases.sum_log1pexp)(x), want, rtol=1e-12)
        np.testing.assert_allclose(tr.jit(tr.grad(cases.sum_log1pexp))(x), want, rtol=1e-12)


def test_a_cached_module_is_not_found_again_for_another_custom_function(monkeypatch, tmp_path):
    # the module's key hashed nothing of a custom function: a name rebound from one to another
    # (or a rule edited) found the module written for the old one, and its numbers
    monkeypatch.setenv("TRANSFORMER_CACHE_DIR", str(tmp_path))
    first = tr.grad(cases.calls_the_global)(X)
    monkeypatch.setattr(cases, "RULED", cases.sin_without_rule)
    second = tr.grad(cases.calls_the_global)(X)
    np.testing.assert_allclose(first, THREES, rtol=1e-12)
    np.testing.assert_allclose(second, np.cos(X), rtol=1e-12)


def test_a_custom_function_with_star_args_transformed_from_python_is_refused():
    @tr.custom_jvp
    def star(*xs):
        return xs[0]
    with pytest.raises(TypeError, match=r"takes \*xs"):
        tr.grad(star)(X)


def test_rules_given_per_argument_by_defjvps():
    x, y = X, np.array([1.5, -2.0, 0.5])
    _, out_dot = tr.jvp(cases.sine_times, (x, y), (np.ones(3), np.ones(3)))
    np.testing.assert_allclose(out_dot, 3.0 * y + np.sin(x), rtol=1e-12)
    gx, gy = tr.grad(lambda a, b: np.sum(cases.sine_times(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, 3.0 * y, rtol=1e-12)
    np.testing.assert_allclose(gy, np.sin(x), rtol=1e-12)
    gx, gy = tr.grad(lambda a, b: np.sum(cases.sine_times_fixed_x(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, np.zeros(3), atol=0)           # None: no derivative in x
    np.testing.assert_allclose(gy, np.full(3, 7.0), rtol=1e-12)


def test_a_backward_rule_s_none_is_a_zero_cotangent():
    # grad gave None for y, where JAX gives zeros
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    gx, gy = tr.grad(lambda a, b: np.sum(cases.product_without_y(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, y, rtol=1e-12)
    np.testing.assert_allclose(gy, np.zeros(2), atol=0)
    # under vmap, y batched and x the same for every example: y's cotangent was nan there
    ys = np.stack([y, 2.0 * y])
    gx, gys = tr.grad(lambda a, b: np.sum(tr.vmap(cases.product_without_y, in_axes=(None, 0))(a, b)),
                      argnums=(0, 1))(x, ys)
    np.testing.assert_allclose(gx, y + 2.0 * y, rtol=1e-12)
    np.testing.assert_allclose(gys, np.zeros((2, 2)), atol=0)
