"""JAX programs with the imports changed: tr.lax's structured control flow (fori_loop, while_loop,
scan, cond, select, map), functions passed by name to a helper, a parameter list sliced, zipped and
rebuilt by a comprehension, tr.grad of it inside jit, and x.at[i] updates.  Oracles: the same code
written out in plain NumPy, and central differences."""
from __future__ import annotations

import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad
from transformer import lax

RNG = np.random.default_rng(7)
XS = RNG.normal(size=(5, 3))
X = np.array([0.3, -0.5, 1.2])


def step(i, v):
    return v * 0.9 + np.sin(v) * i


def by_fori_loop(x):
    return np.sum(lax.fori_loop(1, 4, step, x))


def fori_written_out(x):
    for i in range(1, 4):
        x = x * 0.9 + np.sin(x) * i
    return np.sum(x)


def swap_scale(i, carry):
    a, b = carry
    return b * 1.5, np.tanh(a)


def tuple_carry(x):
    a, b = lax.fori_loop(0, 3, swap_scale, (x, x * 2.0))
    return np.sum(a * b)


def tuple_carry_written_out(x):
    a, b = x, x * 2.0
    for _ in range(3):
        a, b = b * 1.5, np.tanh(a)
    return np.sum(a * b)


def until_large(x):
    v = lax.while_loop(lambda v: np.sum(v * v) < 20.0, lambda v: v * 1.3 + 0.1, x)
    return np.sum(v ** 2)


def until_large_written_out(x):
    while np.sum(x * x) < 20.0:
        x = x * 1.3 + 0.1
    return np.sum(x ** 2)


def decay(carry, x):
    carry = carry * 0.5 + np.sin(x)
    return carry, carry * x


def by_scan(xs):
    last, ys = lax.scan(decay, np.zeros(3), xs)
    return np.sum(last) + np.sum(ys ** 2)


def by_scan_reversed(xs):
    last, ys = lax.scan(decay, np.zeros(3), xs, reverse=True)
    return np.sum(last) + np.sum(ys ** 2)


def scan_written_out(xs, reverse=False):
    carry, ys = np.zeros(3), np.zeros_like(xs)
    for i in (reversed(range(len(xs))) if reverse else range(len(xs))):
        carry = carry * 0.5 + np.sin(xs[i])
        ys[i] = carry * xs[i]
    return np.sum(carry) + np.sum(ys ** 2)


def counter(carry, x):
    return carry * 1.1, carry + 1.0


def scan_without_xs(x):
    last, ys = lax.scan(counter, x, None, length=4)
    return np.sum(ys * last)


def scan_without_xs_written_out(x):
    carry, ys = x, []
    for _ in range(4):
        ys.append(carry + 1.0)
        carry = carry * 1.1
    return np.sum(np.array(ys) * carry)


def by_map(xs):
    return np.sum(lax.map(lambda row: np.tanh(row) * row, xs))


def by_map_with_a_primitive(xs):
    return np.sum(lax.map(np.sin, xs) ** 2)


def by_cond(x):
    y = lax.cond(np.sum(x) > 0.0, lambda v: v * 2.0, np.sin, x)
    return np.sum(lax.select(x > 0.0, y, x * x))


def cond_written_out(x):
    y = x * 2.0 if np.sum(x) > 0.0 else np.sin(x)
    return np.sum(np.where(x > 0.0, y, x * x))


def shrink(v):
    return v * 0.5


def by_switch(x):
    # the branch is chosen by the data; a lambda, a function and a primitive passed by name
    y = lax.switch(np.argmax(x), [lambda v: v * v, shrink, np.sin], x)
    return np.sum(y * x)


def switch_written_out(x):
    k = np.argmax(x)
    y = x * x if k == 0 else (x * 0.5 if k == 1 else np.sin(x))
    return np.sum(y * x)


def by_switch_clamped(x):
    # JAX clamps the index to the branches: -4 takes the first, 9 the last
    return np.sum(lax.switch(-4, [np.tanh, np.cos], x) * lax.switch(9, [np.tanh, lambda v: v + 1.0], x))


CASES = [(by_fori_loop, fori_written_out, X), (tuple_carry, tuple_carry_written_out, X),
         (until_large, until_large_written_out, X), (by_scan, scan_written_out, XS),
         (by_scan_reversed, lambda xs: scan_written_out(xs, reverse=True), XS),
         (scan_without_xs, scan_without_xs_written_out, X),
         (by_map, lambda xs: np.sum(np.tanh(xs) * xs), XS), (by_map_with_a_primitive, lambda xs: np.sum(np.sin(xs) ** 2), XS),
         (by_cond, cond_written_out, X), (by_cond, cond_written_out, -X - 1.0),
         (by_switch, switch_written_out, X), (by_switch, switch_written_out, X[::-1]),
         (by_switch, switch_written_out, np.array([0.1, 0.9, 0.2])),
         (by_switch_clamped, lambda x: np.sum(np.tanh(x) * (x + 1.0)), X)]
IDS = [f"{fn.__name__}{i}" for i, (fn, _, _) in enumerate(CASES)]


@pytest.mark.parametrize("fn, written_out, x", CASES, ids=IDS)
def test_values_and_gradients_match_the_loops_written_out(fn, written_out, x):
    assert fn(x) == pytest.approx(written_out(x))                       # plain Python runs tr.lax as well
    assert tr.jit(fn, target="python")(x) == pytest.approx(written_out(x))
    want = central_difference_grad(written_out, (x.copy(),))
    np.testing.assert_allclose(tr.grad(fn)(x), want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fn, written_out, x", [CASES[1], CASES[2], CASES[3], CASES[8], CASES[12]],
                         ids=IDS[1:4] + IDS[8:9] + IDS[12:13])
def test_compiled_values_and_gradients(fn, written_out, x):
    assert tr.jit(fn)(x) == pytest.approx(written_out(x))
    np.testing.assert_allclose(tr.jit(tr.grad(fn))(x), central_difference_grad(written_out, (x.copy(),)),
                               rtol=1e-6, atol=1e-7)


def test_switch_under_vmap_of_its_index_and_forward_mode():
    def f(i, x):
        return np.sum(lax.switch(i, [lambda v: v * v, np.sin, lambda v: -v], x))
    got = tr.vmap(f, in_axes=(0, None))(np.array([0, 1, 2, 5]), X)
    np.testing.assert_allclose(got, [np.sum(X * X), np.sum(np.sin(X)), -np.sum(X), -np.sum(X)])
    _, tangent = tr.jvp(lambda x: f(1, x), (X,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(np.cos(X)))


def test_switch_branches_must_be_written_in_the_call():
    branches = (np.sin, np.cos)

    def f(x):
        return np.sum(lax.switch(1, branches, x))
    with pytest.raises(tr.TransformError, match="a tuple of functions, used as a value"):
        tr.grad(f)(X)

    def g(x, i):
        return np.sum(lax.switch(i, (), x))
    with pytest.raises(tr.TransformError, match="switch's branches must be a list or tuple written in the call"):
        tr.grad(g)(X, 0)


def test_forward_mode_and_vmap_of_a_scan():
    t = RNG.normal(size=XS.shape)
    _, tangent = tr.jvp(by_scan, (XS,), (t,))
    assert tangent == pytest.approx(np.sum(central_difference_grad(scan_written_out, (XS.copy(),)) * t))
    batch = np.stack([XS, XS * 0.5])
    np.testing.assert_allclose(tr.vmap(by_scan)(batch), [scan_written_out(b) for b in batch])


# A step returning a tuple: JAX stacks each of its arrays on its own.  The tuple was stacked as one
# (n, 2) array, so (ys1, ys2) took its rows: wrong numbers for two steps, a broadcast error otherwise.
def running_sum_and_product(c, x):
    c = c + x
    return c, (c, c * x)


def by_scan_of_pairs(xs):
    last, (sums, products) = lax.scan(running_sum_and_product, 0.0, xs)
    return sums + 10.0 * products + last


def scan_of_pairs_written_out(xs):
    c, sums, products = 0.0, np.zeros(len(xs)), np.zeros(len(xs))
    for i in range(len(xs)):
        c = c + xs[i]
        sums[i], products[i] = c, c * xs[i]
    return sums + 10.0 * products + c


def test_a_scan_whose_step_returns_a_tuple_stacks_each_array():
    for xs in (np.array([0.5, 2.0]), np.array([0.5, 2.0, -1.5, 0.25])):
        np.testing.assert_allclose(tr.jit(by_scan_of_pairs, target="python")(xs), scan_of_pairs_written_out(xs),
                                   rtol=1e-14)
    np.testing.assert_allclose(tr.jit(by_scan_of_pairs)(xs), scan_of_pairs_written_out(xs), rtol=1e-14)
    # its derivatives are refused (each array's rows are written into a tuple's entry), never wrong
    with pytest.raises(tr.TransformError):
        tr.jacrev(by_scan_of_pairs)(xs)


# ---------------------------------------------------------------- a JAX-style parameter list
def predict(params, x):
    h = x
    for w, b in params[:-1]:
        h = np.tanh(h @ w + b)
    w, b = params[-1]
    return h @ w + b


def mlp_loss(params, x):
    return np.sum(predict(params, x) ** 2)


def test_a_slice_of_a_parameter_list_is_decided_by_its_structure():
    params = [(RNG.normal(size=(3, 4)), RNG.normal(size=4)), (RNG.normal(size=(4, 4)), RNG.normal(size=4)),
              (RNG.normal(size=(4, 2)), RNG.normal(size=2))]
    x = RNG.normal(size=(5, 3))
    for grads in (tr.grad(mlp_loss)(params, x), tr.jit(tr.grad(mlp_loss))(params, x)):
        assert isinstance(grads, list) and len(grads) == 3
        for layer, (w, b) in enumerate(params):
            for position, leaf in enumerate((w, b)):
                def of_leaf(value, layer=layer, position=position):
                    changed = [list(p) for p in params]
                    changed[layer][position] = value
                    return mlp_loss([tuple(p) for p in changed], x)
                np.testing.assert_allclose(grads[layer][position], central_difference_grad(of_leaf, (leaf.copy(),)),
                                           rtol=1e-6, atol=1e-8)


def loop_slice_bound_at_run_time(params, x, k):
    h = x
    for w in params[:k]:
        h = h @ w
    return np.sum(h)


def test_a_slice_bound_known_only_at_run_time_is_refused_at_its_line():
    with pytest.raises(tr.TransformError) as err:
        tr.grad(loop_slice_bound_at_run_time)([np.eye(2), np.eye(2)], np.ones(2), 1)
    assert "sliced with a bound known only at run time" in str(err.value)
    assert "test_jax_programs.py:" in str(err.value)


# ------------------------------------------------ a JAX training step, unchanged but for the imports
def softmax_cross_entropy(params, x, y):
    logits = predict(params, x)
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    return -np.mean(np.sum(y * (shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))), axis=1))


def sgd_update(params, x, y):
    grads = tr.grad(softmax_cross_entropy)(params, x, y)
    return [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in zip(params, grads)]


def value_and_first_bias(params, x, y):
    loss, grads = tr.value_and_grad(softmax_cross_entropy)(params, x, y)
    return loss + np.sum(grads[0][1] * params[0][1])


def scaled_layers(params):
    return [w * (k + 1.0) for k, (w, b) in enumerate(params[1:])]


def layer_params(rng):
    return [(rng.normal(size=(3, 4)), rng.normal(size=4)), (rng.normal(size=(4, 4)), rng.normal(size=4)),
            (rng.normal(size=(4, 2)), rng.normal(size=2))]


def test_a_grad_of_a_parameter_list_inside_jit_and_a_comprehension_over_it():
    params, x = layer_params(RNG), RNG.normal(size=(6, 3))
    y = np.eye(2)[RNG.integers(0, 2, 6)]
    grads = [[central_difference_grad(lambda v, k=k, j=j: softmax_cross_entropy(
        [tuple(v if (kk, jj) == (k, j) else leaf for jj, leaf in enumerate(p)) for kk, p in enumerate(params)], x, y),
        (params[k][j].copy(),)) for j in range(2)] for k in range(3)]
    want = [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in zip(params, grads)]
    for target in ("python", "cpu"):
        got = tr.jit(sgd_update, target=target)(params, x, y)
        assert len(got) == 3
        for (w, b), (ww, bw) in zip(got, want):
            np.testing.assert_allclose(w, ww, rtol=1e-7, atol=1e-9)
            np.testing.assert_allclose(b, bw, rtol=1e-7, atol=1e-9)
    expected = softmax_cross_entropy(params, x, y) + np.sum(grads[0][1] * params[0][1])
    assert tr.jit(value_and_first_bias)(params, x, y) == pytest.approx(expected, rel=1e-7)
    scaled = tr.jit(scaled_layers)(params)
    np.testing.assert_allclose(scaled[1], params[2][0] * 2.0)


def comprehension_over_rows(x):
    return [np.sum(r) for r in x]


def test_a_comprehension_over_an_array_is_refused_with_the_hint():
    with pytest.raises(tr.TransformError) as err:
        tr.jit(comprehension_over_rows)(np.ones((2, 2)))
    assert "list comprehension over values known only at run time" in str(err.value)
    assert f"test_jax_programs.py:{comprehension_over_rows.__code__.co_firstlineno + 1}:" in str(err.value)


# ---------------------------------------------------------------- x.at[index] updates
REPEATED = np.array([0, 2, 2])


def at_add(x, v):
    return np.sum(x.at[REPEATED].add(v) ** 2)


def at_add_written_out(x, v):
    y = x.copy()
    np.add.at(y, REPEATED, v)             # a position named twice gets both, as in JAX
    return np.sum(y ** 2)


def at_set_slice(x, v):
    return np.sum(x.at[1:].set(v[:2] * 3.0) ** 2) + np.sum(x)


def at_set_written_out(x, v):
    y = x.copy()
    y[1:] = v[:2] * 3.0
    return np.sum(y ** 2) + np.sum(x)


def at_multiply_and_max(x, v):
    return np.sum(x.at[0].multiply(v[0]) ** 2) + np.sum(x.at[0:2].max(v[:2]) ** 2)


def at_multiply_and_max_written_out(x, v):
    y, z = x.copy(), x.copy()
    y[0] = y[0] * v[0]
    z[0:2] = np.maximum(z[0:2], v[:2])
    return np.sum(y ** 2) + np.sum(z ** 2)


def at_get(x, v):
    return np.sum(x.at[REPEATED].get() * v)


AT_CASES = [(at_add, at_add_written_out), (at_set_slice, at_set_written_out),
            (at_multiply_and_max, at_multiply_and_max_written_out),
            (at_get, lambda x, v: np.sum(x[REPEATED] * v))]


@pytest.mark.parametrize("fn, written_out", AT_CASES, ids=[fn.__name__ for fn, _ in AT_CASES])
def test_at_updates_are_copies_with_the_update(fn, written_out):
    x, v = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.5])
    assert tr.jit(fn, target="python")(x, v) == pytest.approx(written_out(x, v))
    assert np.array_equal(x, [1.0, 2.0, 3.0])                             # the argument is not written
    for gradient in (tr.grad(fn, argnums=(0, 1)), tr.jit(tr.grad(fn, argnums=(0, 1)))):
        gx, gv = gradient(x, v)
        np.testing.assert_allclose(gx, central_difference_grad(written_out, (x.copy(), v), argnum=0), atol=1e-7)
        np.testing.assert_allclose(gv, central_difference_grad(written_out, (x, v.copy()), argnum=1), atol=1e-7)
    batch = np.stack([x, 2.0 * x])
    np.testing.assert_allclose(tr.vmap(fn, in_axes=(0, None))(batch, v), [written_out(b, v) for b in batch])


def at_multiply_by_array_index(x, i):
    return np.sum(x.at[i].multiply(2.0))


def test_an_at_update_other_than_add_with_an_array_index_is_refused():
    with pytest.raises(tr.TransformError) as err:
        tr.jit(at_multiply_by_array_index)(np.ones(3), REPEATED)
    assert "x.at[index].multiply() with an index that may be an array" in str(err.value)
    assert f"test_jax_programs.py:{at_multiply_by_array_index.__code__.co_firstlineno + 1}:" in str(err.value)


# ---------------------------------------------------------------- tr.nn with JAX's names
NN_X = np.linspace(-3.0, 3.0, 12).reshape(3, 4) + 0.01
LABELS = np.array([0, 2, 1])


def _erf(x):
    import math
    return np.vectorize(math.erf)(x)


NN_CASES = {   # name -> (our loss, the same in plain NumPy)
    "relu": (lambda x: np.sum(tr.nn.relu(x) ** 2), lambda x: np.sum(np.maximum(x, 0.0) ** 2)),
    "gelu": (lambda x: np.sum(tr.nn.gelu(x) * x),
             lambda x: np.sum(0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))) * x)),
    "gelu_exact": (lambda x: np.sum(tr.nn.gelu(x, approximate=False) * x),
                   lambda x: np.sum(0.5 * x * (1 + _erf(x / np.sqrt(2))) * x)),
    "silu_swish": (lambda x: np.sum(tr.nn.silu(x) * x + tr.nn.swish(x)),
                   lambda x: np.sum(x / (1 + np.exp(-x)) * x + x / (1 + np.exp(-x)))),
    "log_sigmoid": (lambda x: np.sum(tr.nn.log_sigmoid(x) * x), lambda x: np.sum(np.log(1 / (1 + np.exp(-x))) * x)),
    "elu": (lambda x: np.sum(tr.nn.elu(x, 0.7) * x), lambda x: np.sum(np.where(x > 0, x, 0.7 * (np.exp(x) - 1)) * x)),
    "leaky_relu": (lambda x: np.sum(tr.nn.leaky_relu(x, 0.2) * x), lambda x: np.sum(np.where(x >= 0, x, 0.2 * x) * x)),
    "one_hot": (lambda x: np.sum(tr.nn.one_hot(LABELS, 4) * x), lambda x: np.sum(np.eye(4)[LABELS] * x)),
    "standardize": (lambda x: np.sum(tr.nn.standardize(x, axis=1) * np.sin(x)),
                    lambda x: np.sum((x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * np.sin(x))),
    "logsumexp_keepdims": (lambda x: np.sum(tr.nn.logsumexp(x, axis=1, keepdims=True) * x),
                           lambda x: np.sum(np.log(np.sum(np.exp(x), axis=1, keepdims=True)) * x)),
    "relu6": (lambda x: np.sum(tr.nn.relu6(2.5 * x) * x), lambda x: np.sum(np.clip(2.5 * x, 0, 6) * x)),
    "hard_tanh": (lambda x: np.sum(tr.nn.hard_tanh(x) * x), lambda x: np.sum(np.clip(x, -1, 1) * x)),
    "hard_sigmoid_silu_swish": (lambda x: np.sum(tr.nn.hard_sigmoid(x) * x + tr.nn.hard_silu(x) + tr.nn.hard_swish(x)),
                                lambda x: np.sum(np.clip(x + 3, 0, 6) / 6 * x * 3)),
    "selu": (lambda x: np.sum(tr.nn.selu(x) * x),
             lambda x: np.sum(1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * (np.exp(x) - 1)) * x)),
    "celu": (lambda x: np.sum(tr.nn.celu(x, 0.7) * x), lambda x: np.sum(np.where(x > 0, x, 0.7 * (np.exp(x / 0.7) - 1)) * x)),
    "glu": (lambda x: np.sum(tr.nn.glu(x, axis=1) ** 2), lambda x: np.sum((x[:, :2] / (1 + np.exp(-x[:, 2:]))) ** 2)),
    "mish": (lambda x: np.sum(tr.nn.mish(x) * x), lambda x: np.sum(x * np.tanh(np.log(1 + np.exp(x))) * x)),
    "soft_sign": (lambda x: np.sum(tr.nn.soft_sign(x) * x), lambda x: np.sum(x / (np.abs(x) + 1) * x)),
    "squareplus": (lambda x: np.sum(tr.nn.squareplus(x, 2.0) * x), lambda x: np.sum((x + np.sqrt(x * x + 2)) / 2 * x)),
    "sparse_plus_sigmoid": (lambda x: np.sum(tr.nn.sparse_plus(x) * x + tr.nn.sparse_sigmoid(x) * x * x),
                            lambda x: np.sum(np.where(x <= -1, 0, np.where(x < 1, (x + 1) ** 2 / 4, x)) * x
                                             + np.clip((x + 1) / 2, 0, 1) * x * x)),
    "log1mexp": (lambda x: np.sum(tr.nn.log1mexp(np.abs(x)) * x), lambda x: np.sum(np.log(1 - np.exp(-np.abs(x))) * x)),
    "identity": (lambda x: np.sum(tr.nn.identity(x) * x), lambda x: np.sum(x * x)),
    "logmeanexp": (lambda x: tr.nn.logmeanexp(x) + np.sum(tr.nn.logmeanexp(x, axis=0, keepdims=True) * x[0]),
                   lambda x: np.log(np.mean(np.exp(x))) + np.sum(np.log(np.mean(np.exp(x), axis=0)) * x[0])),
}


@pytest.mark.parametrize("name", sorted(NN_CASES))
def test_nn_functions_with_jax_names_and_keywords(name):
    ours, plain = NN_CASES[name]
    assert tr.jit(ours, target="python")(NN_X) == pytest.approx(plain(NN_X))
    np.testing.assert_allclose(tr.grad(ours)(NN_X), central_difference_grad(plain, (NN_X.copy(),)), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["relu6", "hard_tanh", "hard_sigmoid", "hard_silu", "selu", "celu", "glu", "mish",
                                  "soft_sign", "squareplus", "sparse_plus", "sparse_sigmoid", "log1mexp", "logmeanexp",
                                  "gelu", "elu", "log_sigmoid", "softplus", "standardize", "log_softmax"])
def test_nn_functions_give_jax_s_values_and_gradients(name):
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        x = NN_X if name != "log1mexp" else np.abs(NN_X) + 0.05
        ours, theirs = getattr(tr.nn, name), getattr(jax.nn, name)
        loss = lambda f, a, cos: (f(a) * cos(f(a))).sum()        # noqa: E731
        np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(tr.grad(lambda a: loss(ours, a, np.cos))(x),
                                   jax.grad(lambda a: loss(theirs, a, jax.numpy.cos))(x), rtol=1e-12, atol=1e-14)


def sum_of_jacobian(x):
    return np.sum(tr.jacobian(lambda v: np.sin(v) * v[0])(x))


def test_jacobian_is_jacrev_and_the_device_counts_are_jax_s():
    x = np.array([0.3, 0.7])
    assert tr.jacobian is tr.jacrev
    want = np.cos(x)[:, None] * np.eye(2) * x[0] + np.outer(np.sin(x), [1.0, 0.0])
    np.testing.assert_allclose(tr.jacobian(lambda v: np.sin(v) * v[0])(x), want, rtol=1e-14)
    assert tr.jit(sum_of_jacobian)(x) == pytest.approx(want.sum(), rel=1e-14)
    assert tr.device_count() == len(tr.devices()) == tr.local_device_count() >= 1


def test_relu_has_derivative_zero_at_zero_as_in_jax():
    assert tr.grad(lambda x: tr.nn.relu(x))(0.0) == 0.0


# ---------------------------------------------------------------- tree_util
def tree_map_update(params, x, y):
    grads = tr.grad(softmax_cross_entropy)(params, x, y)
    return tr.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)


def sines_of_leaves(params):
    return tr.tree.map(np.sin, params)


def test_tree_map_inside_jit_is_unrolled_over_the_structure():
    params, x = layer_params(RNG), RNG.normal(size=(6, 3))
    y = np.eye(2)[RNG.integers(0, 2, 6)]
    want = tr.jit(sgd_update, target="python")(params, x, y)          # checked above against differences
    for target in ("python", "cpu"):
        got = tr.jit(tree_map_update, target=target)(params, x, y)
        for a, b in zip(tr.tree_util.tree_leaves(got), tr.tree_util.tree_leaves(want)):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        for a, b in zip(tr.tree.leaves(tr.jit(sines_of_leaves, target=target)(params)), tr.tree.leaves(params)):
            np.testing.assert_allclose(a, np.sin(b))


def test_tree_util_outside_transformed_code_as_in_jax():
    tree = {"b": (np.ones(2), None), "a": [np.zeros(3)]}
    leaves, treedef = tr.tree_util.tree_flatten(tree)
    assert [leaf.shape for leaf in leaves] == [(3,), (2,)]           # dict keys sorted, None has no leaf
    assert tr.tree_util.tree_structure(tree) == treedef
    rebuilt = tr.tree_util.tree_unflatten(treedef, [leaf + 1 for leaf in leaves])
    assert rebuilt["b"][1] is None and np.array_equal(rebuilt["a"][0], np.ones(3))
    assert len(tr.tree_util.tree_leaves(tr.tree_util.tree_map(lambda v: 2 * v, tree))) == 2


# ------------------------------------------- a structure rebound in a loop (a loop's carry)
def carried_structure(params, x):
    val = params
    for _ in range(3):
        w, b = val[0]
        val = [(w * x, b + w)]
    return np.sum(val[0][0] * val[0][1])


def carried_structure_by_fori_loop(params, x):
    val = lax.fori_loop(0, 3, lambda i, p: [(p[0][0] * x, p[0][1] + p[0][0])], params)
    return np.sum(val[0][0] * val[0][1])


@pytest.mark.parametrize("fn", [carried_structure, carried_structure_by_fori_loop])
def test_a_structure_carried_through_a_loop_is_read_at_each_pass(fn):
    # each pass reads the carry the last pass wrote, not the argument (it read the argument's leaves)
    params = [(np.array([1.0, 2.0]), np.array([0.5, 0.1]))]
    w, b = params[0]
    for _ in range(3):
        w, b = w * 1.3, b + w
    want = np.sum(w * b)
    for target in ("python", "cpu"):
        assert tr.jit(fn, target=target)(params, 1.3) == pytest.approx(want)


def test_differentiating_a_carried_structure_is_refused_not_wrong():
    with pytest.raises(tr.TransformError) as err:
        tr.grad(carried_structure)([(np.ones(2), np.ones(2))], 1.3)
    assert "a tuple that holds another tuple" in str(err.value)


def weighted_parts(parts):
    n = len(parts)
    return np.sum(np.stack([p * k for k, p in enumerate(parts)])) / n


def calls_with_a_tuple(x, y):
    return weighted_parts((x, y, x * y))


def test_len_of_a_tuple_and_a_comprehension_over_it_are_decided_when_specialized():
    x, y = np.ones(3), np.arange(3.0)
    assert tr.jit(calls_with_a_tuple)(x, y) == pytest.approx(calls_with_a_tuple(x, y))
    np.testing.assert_allclose(tr.grad(calls_with_a_tuple)(x, y), [0.0, 2.0 / 3.0, 4.0 / 3.0])
    code = tr.jit(calls_with_a_tuple, target="python").source(x, y)
    assert not [line for line in code.splitlines() if "len(" in line.split("#")[0]], code


def test_jax_names_transformer_lacks_say_what_to_use_instead():
    import jax_style_cases as case
    with pytest.raises(AttributeError, match=r"jax\.lax\.dynamic_slice in JAX\): index with a slice"):
        lax.dynamic_slice  # noqa: B018
    with pytest.raises(AttributeError, match=r"jax\.make_jaxpr in JAX\): transformer shows generated Python source"):
        tr.make_jaxpr  # noqa: B018
    with pytest.raises(AttributeError, match=r"^module 'transformer\.nn' has no attribute 'nothing_at_all'$"):
        tr.nn.nothing_at_all  # noqa: B018
    # inside transformed code, at the user's line
    with pytest.raises(tr.TransformError, match=r"jax_style_cases\.py:9.*lax\.dynamic_slice.*index with a slice"):
        tr.grad(case.takes_a_dynamic_slice)(X)
    with pytest.raises(tr.TransformError, match=r"jax_style_cases\.py:13.*dot_product_attention.*write it: tr\.nn\.softmax"):
        tr.jit(case.uses_attention)(X)


_TRANSFORMS = {
    "jit (cpu)": lambda fn: tr.jit(fn),
    "grad (python)": lambda fn: tr.grad(fn),
    "jit(grad) (cpu)": lambda fn: tr.jit(tr.grad(fn)),
    "jvp (python)": lambda fn: lambda x: tr.jvp(fn, (x,), (x,)),
    "vmap (cpu)": lambda fn: tr.jit(tr.vmap(fn)),
}


@pytest.mark.parametrize("transform", list(_TRANSFORMS))
def test_a_tracer_style_mistake_is_told_at_the_user_s_line_with_what_to_write(transform):
    # JAX's ConcretizationTypeError: float() of an array, or an `if` on one.  NumPy refuses both on
    # an array of several elements; transformer says so at the user's line on every target (numba's
    # typing error, numba's run-time error, NumPy's), naming what to write instead.
    import jax_style_cases as case
    apply = _TRANSFORMS[transform]
    x = np.array([0.5, 2.0, 3.0])
    rows = x[None, :].repeat(2, axis=0) if transform.startswith("vmap") else x
    for fn, wants in ((case.number_of_an_array, r"pick one \(`x\[i\]`\), reduce it \(`np\.sum\(x\)`\)"),
                      (case.branch_on_an_array, r"`np\.where\(c, a, b\)`.*`np\.any\(c\)`")):
        line = fn.__code__.co_firstlineno + 1
        with pytest.raises(tr.ConcreteValueError, match=rf"jax_style_cases\.py:{line}: .*{wants}") as err:
            apply(fn)(rows)
        assert isinstance(err.value, (TypeError, ValueError))     # what NumPy itself raises
    # the same calls on one element are numbers, as in NumPy (and in JAX outside jit)
    fn = case.number_of_one_element
    if transform.startswith("vmap"):
        np.testing.assert_allclose(apply(fn)(rows), [fn(r) for r in rows])
    elif transform.startswith("jvp"):
        np.testing.assert_allclose(apply(fn)(x)[0], fn(x))
    elif "grad" in transform:
        # float() passes its derivative through, as np.float64(x[1]) would; int() is a step
        np.testing.assert_allclose(apply(fn)(x), [x[1], x[1] + np.sum(x), x[1]])
    else:
        np.testing.assert_allclose(apply(fn)(x), fn(x))


def test_a_tracer_style_mistake_is_told_when_the_first_calls_run_on_the_python_tier():
    import jax_style_cases as case
    line = case.branch_on_an_array.__code__.co_firstlineno + 1
    with pytest.raises(tr.ConcreteValueError, match=rf"jax_style_cases\.py:{line}: "):
        tr.jit(case.branch_on_an_array, tiered=True)(np.array([1.0, 2.0]))


def test_another_run_time_error_keeps_its_class_and_names_the_user_s_line():
    import jax_style_cases as case
    # x[1] of a two-element row is past the end for a one-element row: NumPy's IndexError, with a
    # note naming the line
    with pytest.raises(IndexError) as err:
        tr.grad(case.number_of_one_element)(np.array([1.0]))
    line = case.number_of_one_element.__code__.co_firstlineno + 1
    assert any(f"jax_style_cases.py:{line}" in note for note in err.value.__notes__)


def _central_differences(fn, args, k, eps=1e-6):
    x = args[k]
    out = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step.flat[i] = eps
        up = [a + step if j == k else a for j, a in enumerate(args)]
        down = [a - step if j == k else a for j, a in enumerate(args)]
        out.flat[i] = (fn(*up) - fn(*down)) / (2 * eps)
    return out


# no operand within 1e-6 of a rounding step, a clamp's bound or a tie of max/min
_X = np.array([0.31, -1.27, 2.43, 0.12])
_Y = np.array([0.74, 0.21, -0.43, 1.52])


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_lax_s_elementwise_names_give_numpy_s_values_and_gradients(target):
    import jax_style_cases as case
    fn = case.uses_lax_elementwise
    np.testing.assert_allclose(tr.jit(fn, target=target)(_X, _Y), fn(_X, _Y), rtol=1e-12)
    grads = tr.jit(tr.grad(fn, argnums=(0, 1)), target=target)(_X, _Y)
    for k in (0, 1):
        np.testing.assert_allclose(grads[k], _central_differences(fn, (_X, _Y), k), rtol=1e-6, atol=1e-6)


def test_lax_s_elementwise_names_give_jax_s_values_and_gradients():
    jax = pytest.importorskip("jax")
    import inspect

    import jax_style_cases as case
    jax.config.update("jax_enable_x64", True)
    source = inspect.getsource(case.uses_lax_elementwise).replace("np.", "jnp.")
    scope = {"lax": jax.lax, "jnp": jax.numpy}
    exec(source, scope)               # the same lines, with jax.lax and jax.numpy
    theirs = scope["uses_lax_elementwise"]
    np.testing.assert_allclose(case.uses_lax_elementwise(_X, _Y), theirs(_X, _Y), rtol=1e-12)
    ours = tr.grad(case.uses_lax_elementwise, argnums=(0, 1))(_X, _Y)
    for mine, jaxs in zip(ours, jax.grad(theirs, argnums=(0, 1))(_X, _Y)):
        np.testing.assert_allclose(mine, np.asarray(jaxs), rtol=1e-12, atol=1e-14)


def test_lax_round_takes_halves_away_from_zero_and_just_below_a_half_down():
    below_half = np.nextafter(0.5, 0.0)
    x = np.array([0.5, -0.5, 1.5, 2.5, -2.5, below_half, -below_half, 0.0])
    np.testing.assert_array_equal(tr.lax.round(x), [1.0, -1.0, 2.0, 3.0, -3.0, 0.0, -0.0, 0.0])
    np.testing.assert_array_equal(tr.lax.round(x, 1), np.rint(x))


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_tree_leaves_and_tree_reduce_inside_transformed_code(target):
    import jax_style_cases as case
    params = [(np.array([1.0, 2.0]), np.array(0.5)), (np.array([[1.0, -1.0]]), np.array([3.0]))]
    wanted = [(2 * w, 2 * b) for w, b in params]
    for fn in (case.sum_of_squares_by_tree_leaves, case.sum_of_squares_by_tree_reduce):
        assert tr.jit(fn, target=target)(params) == pytest.approx(16.25)
        grads = tr.jit(tr.grad(fn), target=target)(params)
        for (gw, gb), (ww, wb) in zip(grads, wanted):
            np.testing.assert_allclose(gw, ww)
            np.testing.assert_allclose(gb, wb)
    assert tr.jit(case.largest_leaf_sum, target=target)(params) == pytest.approx(3.0)
    assert tr.jit(case.sum_by_jax_tree_reduce, target=target)(params) == pytest.approx(6.5)
    # outside transformed code they are plain functions, as JAX's
    assert tr.tree_util.tree_reduce(lambda a, b: a + b, [1, (2, 3)]) == 6
    assert tr.tree_util.tree_all([np.array(True), (1, True)]) and not tr.tree_util.tree_all([1, 0])
    assert tr.tree.reduce(lambda a, b: a * b, (2, [3, 4]), 1) == 24 and tr.tree.all({"a": 1, "b": (2,)})


def test_jax_s_host_utilities():
    tr.config.update("jax_enable_x64", True)
    assert tr.config.read("jax_enable_x64") is True
    with pytest.raises(ValueError, match="no configuration flag 'jax_no_such_flag'"):
        tr.config.update("jax_no_such_flag", 1)
    placed = tr.device_put({"w": [1.0, 2.0], "b": 0.5})       # each leaf an array, as in JAX
    assert isinstance(placed["w"], list) and all(isinstance(v, np.ndarray) for v in placed["w"])
    assert isinstance(placed["b"], np.ndarray)
    assert tr.block_until_ready(placed) is placed


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_config_dict_is_read_when_the_function_is_transformed(target):
    # a global (or closed-over) dict of numbers and arrays was refused as mutable state; JAX reads
    # one when it traces, and so does transformer when it transforms: literal keys, nested dicts
    # and loops over its items are decided then.  A dict holding a list is still refused
    # (tests/test_bad_inputs.py).
    import bad_input_cases as bad
    import jax_style_cases as case
    w, x = np.array([0.3, -0.2]), np.array([1.0, 0.5])
    jit = lambda fn: tr.jit(fn, target=target)      # noqa: E731
    np.testing.assert_allclose(jit(case.configured_loss)(w, x), case.configured_loss(w, x), rtol=1e-12)
    np.testing.assert_allclose(jit(tr.grad(case.configured_loss))(w, x),
                               central_difference_grad(case.configured_loss, (w, x), 0), rtol=1e-6)
    np.testing.assert_allclose(jit(case.configured_step)(w, x), case.configured_step(w, x), rtol=1e-12)
    np.testing.assert_allclose(jit(case.sum_over_the_config)(x), case.sum_over_the_config(x), rtol=1e-12)
    xs = np.array([[1.0, 0.5], [0.2, -0.4], [2.0, 1.0]])
    np.testing.assert_allclose(tr.vmap(case.configured_loss, in_axes=(None, 0))(w, xs),
                               [case.configured_loss(w, v) for v in xs], rtol=1e-12)
    params = {"layers": {"a": np.ones(2), "b": np.arange(2.0)}}
    np.testing.assert_allclose(jit(case.sum_over_a_nested_argument)(params, x),
                               case.sum_over_a_nested_argument(params, x), rtol=1e-12)
    for fn in (bad.reads_config_dict, bad.make_closure_over_config_dict()):
        np.testing.assert_allclose(jit(fn)(x), fn(x), rtol=1e-12)
    assert "CONFIG_layers_gain" in tr.show(jit(case.configured_loss), w, x)   # its entry, by name


# ---------------------------------------------------------------- tr.nn where JAX's numbers differed
# tr.nn.logsumexp summed over the last axis by default (JAX's axis is None) and gave NaN at an
# infinite entry (inf - inf in the shift); sigmoid's and silu's derivatives were NaN below
# x = -709 (exp(-x) overflowed: inf * 0), where JAX's s (1 - s) is 0.

def logsumexp_of_all(x):
    return tr.nn.logsumexp(x)


def logsumexp_of_rows(x):
    return tr.nn.logsumexp(x, axis=1)


def sigmoid_and_silu(x):
    return np.sum(tr.nn.sigmoid(x)) + np.sum(tr.nn.silu(x))


def test_nn_logsumexp_sums_everything_by_default_and_keeps_infinities():
    x = np.arange(6.0).reshape(2, 3)
    expected = np.log(np.sum(np.exp(x)))
    np.testing.assert_allclose(tr.jit(logsumexp_of_all, target="python")(x), expected, rtol=1e-14)
    np.testing.assert_allclose(tr.nn.logsumexp(x), expected, rtol=1e-14)
    masked = np.array([[-np.inf, -np.inf, -np.inf], [1.0, np.inf, 0.0]])
    np.testing.assert_array_equal(tr.jit(logsumexp_of_rows, target="python")(masked), [-np.inf, np.inf])
    rows = np.array([[-np.inf, 0.5, 2.0], [1.0, -1.0, 0.0]])
    np.testing.assert_allclose(tr.grad(lambda v: np.sum(logsumexp_of_rows(v)))(rows),
                               [[0.0, *_softmax(rows[0, 1:])], _softmax(rows[1])], rtol=1e-12)


def _softmax(v):
    e = np.exp(v - np.max(v))
    return e / np.sum(e)


def test_nn_sigmoid_and_silu_derivatives_are_finite_far_below_zero():
    x = np.array([-800.0, -20.0, 0.0, 3.0, 800.0])
    s = 1.0 / (1.0 + np.exp(-np.clip(x, -700, 700)))
    expected = s * (1 - s) + s + x * s * (1 - s)          # d/dx sigmoid + d/dx silu
    for grad in (tr.grad(sigmoid_and_silu), tr.jit(tr.grad(sigmoid_and_silu))):
        np.testing.assert_allclose(grad(x), expected, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(tr.jit(sigmoid_and_silu, target="python")(x), sigmoid_and_silu(x), rtol=1e-14)
