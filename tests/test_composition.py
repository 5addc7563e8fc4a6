"""Transforms of transforms: grad of grad, jvp of grad (Hessian-vector
products), hessian = jacfwd(jacrev), grad of a jvp function (reverse over
forward), custom_jvp, and ordered pairs and triples of {jit, grad, jvp,
vmap} — all against central differences that need nothing of ours."""
import numpy as np
import pytest

import corpus_composition as corpus
import transformer as tr
from oracles import central_difference_grad, central_difference_hessian, central_difference_jvp
from transformer.staging import Step
from transformer.transformed import Transformed
from transformer.transforms import pick as _registers_pick  # noqa: F401

TARGETS = ["python", "cpu"]
_IDS = [f"{fn.__name__}-{i}" for i, (fn, _) in enumerate(corpus.ARRAY_CASES)]


def _with_targets(cases, ids):
    """(fn, args, target) for every case on every target."""
    out = []
    for (fn, args), name in zip(cases, ids):
        for target in TARGETS:
            out.append(pytest.param(fn, args, target, id=f"{name}-{target}"))
    return out
# The four-point Hessian is good to about 1e-7 here; a wrong rule is off by far more.
RTOL, ATOL = 1e-5, 1e-5


def _on(target, f):
    return f if target == "python" else tr.jit(f, target=target)


def _direction(x, seed=5):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, np.shape(x))


def _second_difference(f, t, h=1e-4):
    return (f(t + h) - 2.0 * f(t) + f(t - h)) / (h * h)


def _rest(args):
    return tuple(0.0 if np.ndim(a) == 0 else np.zeros_like(a) for a in args[1:])


# ------------------------------------------------------------- grad of grad
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, args", corpus.SCALAR_CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_grad_of_grad(fn, args, target):
    got = _on(target, tr.grad(tr.grad(fn)))(*args)
    np.testing.assert_allclose(got, _second_difference(fn, args[0]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_grad_of_grad_through_a_tape(target):
    # the inner backward sweep pops what its forward sweep taped; the outer one runs a tape of
    # cotangents the other way (templates/adjoints.py, "The tape")
    x = corpus.vec()
    direction = np.linspace(0.5, -1.0, x.size)
    got = _on(target, tr.grad(lambda y: np.sum(tr.grad(corpus.taped_loop)(y) * direction)))(x)
    np.testing.assert_allclose(got, central_difference_hessian(corpus.taped_loop, (x,)) @ direction,
                               rtol=RTOL, atol=ATOL)


# Reverse over reverse through second derivatives not written is refused with the way out
# (forward over reverse).
@pytest.mark.parametrize("fn, args", corpus.ARRAY_CASES, ids=_IDS)
def test_jacrev_of_grad_is_reverse_over_reverse(fn, args):
    # branchy: the outer sweep's cotangents of values made in one branch start at zero in that branch
    expected = central_difference_hessian(fn, args)
    np.testing.assert_allclose(tr.jacrev(tr.grad(fn))(*args), expected, rtol=RTOL, atol=ATOL)


def test_jit_of_jacrev_of_grad_through_a_branch():
    fn, args = corpus.ARRAY_CASES[2]
    assert fn is corpus.branchy
    np.testing.assert_allclose(tr.jit(tr.jacrev(tr.grad(fn)))(*args), central_difference_hessian(fn, args),
                               rtol=RTOL, atol=ATOL)


# ------------------------------------------------------- hessian and its kin
@pytest.mark.parametrize("fn, args, target", _with_targets(corpus.ARRAY_CASES, _IDS))
def test_hessian(fn, args, target):
    got = _on(target, tr.hessian(fn))(*args)
    expected = central_difference_hessian(fn, args)
    assert np.shape(got) == np.shape(args[0]) * 2
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("fn, args, target", _with_targets(corpus.ARRAY_CASES, _IDS))
def test_jvp_of_grad_and_hvp(fn, args, target):
    v = _direction(args[0])
    expected = np.tensordot(central_difference_hessian(fn, args), v, axes=np.ndim(v))
    _, hv = tr.jvp(_on(target, tr.grad(fn)), args, (v,) + _rest(args))
    np.testing.assert_allclose(hv, expected, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(_on(target, tr.hvp(fn))(*args, v), expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("fn, args, target", _with_targets(corpus.ARRAY_CASES, _IDS))
def test_hvp_called_again_and_with_other_dtypes(fn, args, target):
    # the second call with float64 arrays takes hvp's short path; float32 and int-valued
    # directions the general one: all three agree with the Hessian
    v = _direction(args[0])
    expected = np.tensordot(central_difference_hessian(fn, args), v, axes=np.ndim(v))
    hvp = _on(target, tr.hvp(fn))
    for direction in (v, v, v.astype(np.float32), np.ones_like(v, dtype=np.int64)):
        want = expected if direction is v else np.tensordot(central_difference_hessian(fn, args),
                                                            np.asarray(direction, float), axes=np.ndim(v))
        np.testing.assert_allclose(hvp(*args, direction), want, rtol=1e-4 if direction.dtype == np.float32
                                   else RTOL, atol=1e-4 if direction.dtype == np.float32 else ATOL)


def test_hvp_computes_no_gradient_it_does_not_return():
    code = tr.show(tr.hvp(corpus.ARRAY_CASES[0][0]), *corpus.ARRAY_CASES[0][1], corpus.ARRAY_CASES[0][1][0])
    body = code.split("def ")[-1]
    assert body.rstrip().splitlines()[-1].strip().startswith("return (") and "_bar_dot" in body.splitlines()[-1]
    returned = body.rstrip().splitlines()[-1]
    assert "x_bar," not in returned and "x_bar)" not in returned


@pytest.mark.parametrize("target", TARGETS)
def test_jacfwd_of_jacrev_of_a_vector_function(target):
    x = corpus.vec()
    got = _on(target, tr.jacfwd(tr.jacrev(corpus.vector_valued)))(x)
    assert got.shape == (4, 4, 4)
    for i in range(4):
        expected = central_difference_hessian(lambda y, i=i: corpus.vector_valued(y)[i], (x,))
        np.testing.assert_allclose(got[i], expected, rtol=RTOL, atol=ATOL)


def test_hessian_argnums_tuple_matches_blocks():
    a, x = corpus.ARRAY_CASES[7][1]
    blocks = tr.hessian(corpus.norm_and_solve, argnums=(0, 1))(a, x)
    np.testing.assert_allclose(blocks[1][1], central_difference_hessian(corpus.norm_and_solve, (a, x), 1),
                               rtol=RTOL, atol=ATOL)
    assert blocks[0][1].shape == (3, 3, 3) and blocks[1][0].shape == (3, 3, 3)
    np.testing.assert_allclose(blocks[0][1], np.moveaxis(blocks[1][0], 0, -1), rtol=1e-12, atol=1e-12)


# ---------------------------------------------- grad of a jvp-based function
def _directional(fn):
    """x, v -> grad f(x) . v: the tangent output of the generated jvp function."""
    return Transformed.of(fn).then(Step("jvp", (("active", (0,)), ("ndims", None)))).then(Step("pick", (("index", 1),)))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn, args", corpus.ARRAY_CASES[:3], ids=_IDS[:3])
def test_grad_of_a_jvp_function_is_reverse_over_forward(fn, args, target):
    x, v = args[0], _direction(args[0])
    expected = np.tensordot(central_difference_hessian(fn, args), v, axes=np.ndim(v))
    got = _on(target, tr.grad(_directional(fn)))(x, v)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


def test_jvp_of_a_jvp_function_is_u_h_v():
    fn, (x,) = corpus.ARRAY_CASES[0]
    u, v = _direction(x, 1), _direction(x, 2)
    twice = _directional(fn).then(Step("jvp", (("active", (0,)), ("ndims", None))))
    _, uhv = twice(x, v, u, np.zeros_like(v))
    np.testing.assert_allclose(uhv, u @ central_difference_hessian(fn, (x,)) @ v, rtol=RTOL, atol=ATOL)


# ----------------------------------------------------------------- custom_jvp
def test_custom_jvp_rule_is_what_jvp_uses():
    x, v = corpus.vec(), _direction(corpus.vec())
    _, got = tr.jvp(corpus.uses_softplus, (x,), (v,))
    expected = central_difference_jvp(corpus.uses_softplus, (x,), (v,))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    assert "softplus_jvp" in tr.show(tr.hvp(corpus.uses_softplus))


def test_custom_jvp_rule_is_used_even_when_it_differs_from_the_body():
    from corpus_composition_rules import halved_sin_user
    x = corpus.vec()
    _, got = tr.jvp(halved_sin_user, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(got, 0.5 * np.sum(np.cos(x)), rtol=1e-12)
    # reverse mode transposes the rule, as JAX's does (it differentiated the body before: cos(x))
    np.testing.assert_allclose(tr.grad(halved_sin_user)(x), 0.5 * np.cos(x), rtol=1e-12)


# -------------------------------------------- ordered pairs and triples
PAIR_CASES = corpus.ARRAY_CASES[:3] + corpus.ARRAY_CASES[5:6]


@pytest.mark.parametrize("fn, args", PAIR_CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_every_ordered_pair_of_jit_grad_jvp(fn, args):
    x, v = args[0], _direction(args[0])
    grad_ref = np.array([central_difference_jvp(fn, (x,), (e,)) for e in np.eye(x.size)]).reshape(x.shape)
    hess_v = np.tensordot(central_difference_hessian(fn, args), v, axes=1)
    jvp_ref = central_difference_jvp(fn, (x,), (v,))
    # jit . grad and grad . jit compile the same generated function
    np.testing.assert_allclose(tr.jit(tr.grad(fn))(x), grad_ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tr.grad(tr.jit(fn))(x), grad_ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tr.jvp(tr.jit(fn), (x,), (v,))[1], jvp_ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tr.jit(_directional(fn))(x, v), jvp_ref, rtol=1e-6, atol=1e-6)   # jit . jvp
    np.testing.assert_allclose(tr.jvp(tr.grad(fn), (x,), (v,))[1], hess_v, rtol=RTOL, atol=ATOL)  # jvp . grad
    np.testing.assert_allclose(tr.grad(_directional(fn))(x, v), hess_v, rtol=RTOL, atol=ATOL)      # grad . jvp
    twice = _directional(fn).then(Step("jvp", (("active", (0,)), ("ndims", None))))             # jvp . jvp
    np.testing.assert_allclose(twice(x, v, v, np.zeros_like(v))[1], v @ hess_v, rtol=RTOL, atol=ATOL)


def test_jit_of_grad_of_grad():
    fn, (t,) = corpus.SCALAR_CASES[0]
    np.testing.assert_allclose(tr.jit(tr.grad(tr.grad(fn)))(t), _second_difference(fn, t), rtol=1e-5)


@pytest.mark.parametrize("fn, args", PAIR_CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_vmap_rows_of_grad(fn, args):
    x = args[0]
    batch = np.stack([x, 0.5 * x, -x])
    expected = np.array([tr.grad(fn)(row) for row in batch])
    np.testing.assert_allclose(expected, _grad_rows(fn, batch), rtol=1e-6, atol=1e-6)   # grad itself, by differences
    np.testing.assert_allclose(tr.vmap(tr.grad(fn))(batch), expected, rtol=1e-10, atol=1e-12)   # vmap . grad
    np.testing.assert_allclose(tr.jit(tr.vmap(tr.grad(fn)))(batch), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("fn", [corpus.early_exit, corpus.until_large], ids=lambda f: f.__name__)
def test_vmap_of_grad_runs_a_loop_whose_passes_differ_once_per_example(fn, target):
    # each example's tape pops in its own order, so vmap runs the function once per example (it
    # was refused: "grad's tape is used in a loop whose passes differ between examples")
    batch = _batch(dict(corpus.ARRAY_CASES)[fn][0])
    got = _on(target, tr.vmap(tr.grad(fn)))(batch)
    np.testing.assert_allclose(got, _grad_rows(fn, batch), rtol=1e-6, atol=1e-6)
    assert "a loop over the examples, each running the function on its own" in tr.show(tr.vmap(tr.grad(fn)))
    # and differentiated again through that loop: the gradient of a sum of squared per-example gradients
    twice = tr.grad(lambda b: np.sum(tr.vmap(tr.grad(fn))(b) ** 2))(batch)
    np.testing.assert_allclose(twice, [tr.grad(lambda r: np.sum(tr.grad(fn)(r) ** 2))(row) for row in batch],
                               rtol=1e-10, atol=1e-12)


def test_vmap_of_jvp_of_grad_is_the_hessian_in_one_call():
    fn, (x,) = corpus.ARRAY_CASES[0]
    jvp_of_grad = tr.grad(fn).then(Step("jvp", (("active", (0,)), ("ndims", (1, 1)))))
    expected = central_difference_hessian(fn, (x,))
    hessian = tr.vmap(jvp_of_grad, in_axes=(None, 0))     # in_axes count (x, x_dot): what vmap wraps
    _, columns = hessian(x, np.eye(x.size))
    np.testing.assert_allclose(columns, expected, rtol=RTOL, atol=ATOL)


# ------------------------------------------------------------- the vmap rows
# Each pair with vmap against a Python loop over the examples of the plain function, or
# central differences of each example: references that need nothing of ours.  The compiled
# runs take two of the functions (a numba compile is seconds each here).
JIT_PAIR_CASES = [PAIR_CASES[0], PAIR_CASES[2]]


def _batch(x):
    return np.stack([x, 0.5 * x, -x])


def _loop_rows(fn, batch):
    return np.array([fn(row) for row in batch])


def _grad_rows(fn, batch):
    return np.array([central_difference_grad(fn, (row,)) for row in batch])


def _jvp_rows(fn, batch, tangents):
    return np.array([central_difference_jvp(fn, (row,), (t,)) for row, t in zip(batch, tangents)])


def _jvp_function(fn):
    """x, x_dot -> (f(x), grad f(x) . x_dot): the generated jvp function itself."""
    return Transformed.of(fn).then(Step("jvp", (("active", (0,)), ("ndims", None))))


def _pair_params(cases):
    """(fn, args, target): every case on the python target, the compiled cases on cpu too."""
    out = [pytest.param(fn, args, "python", id=f"{fn.__name__}-python") for fn, args in cases]
    return out + [pytest.param(fn, args, "cpu", id=f"{fn.__name__}-cpu") for fn, args in JIT_PAIR_CASES]


@pytest.mark.parametrize("fn, args, target", _pair_params(PAIR_CASES))
def test_vmap_with_jit_and_vmap(fn, args, target):
    batch = _batch(args[0])
    expected = _loop_rows(fn, batch)
    np.testing.assert_allclose(_on(target, tr.vmap(fn))(batch), expected, rtol=1e-12, atol=1e-12)  # jit . vmap
    np.testing.assert_allclose(tr.vmap(_on(target, fn))(batch), expected, rtol=1e-12, atol=1e-12)  # vmap . jit
    twice = np.stack([batch, 2.0 * batch], axis=1)             # the outer vmap maps axis 1
    expected_twice = np.stack([_loop_rows(fn, twice[:, j]) for j in range(2)], axis=1)
    got = _on(target, tr.vmap(tr.vmap(fn), in_axes=1, out_axes=1))(twice)                   # vmap . vmap
    np.testing.assert_allclose(got, expected_twice, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn, args, target", _pair_params(PAIR_CASES))
def test_jvp_of_vmap_and_vmap_of_jvp(fn, args, target):
    batch = _batch(args[0])
    tangents = _direction(batch)
    expected = _jvp_rows(fn, batch, tangents)
    out, out_dot = tr.jvp(_on(target, tr.vmap(fn)), (batch,), (tangents,))                      # jvp . vmap
    np.testing.assert_allclose(out, _loop_rows(fn, batch), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out_dot, expected, rtol=1e-6, atol=1e-6)
    _, out_dot = _on(target, tr.vmap(_jvp_function(fn)))(batch, tangents)                      # vmap . jvp
    np.testing.assert_allclose(out_dot, expected, rtol=1e-6, atol=1e-6)


def _block_diagonal(rows):
    """The Jacobian of a batch of scalars by the batch: example i's gradient at [i, i], zeros elsewhere."""
    jacobian = np.zeros((len(rows),) + rows.shape)
    for i, row in enumerate(rows):
        jacobian[i, i] = row
    return jacobian


@pytest.mark.parametrize("fn, args, target", _pair_params(PAIR_CASES))
def test_grad_of_vmap(fn, args, target):
    batch = _batch(args[0])
    got = _on(target, tr.jacrev(tr.vmap(fn)))(batch)                                                # grad . vmap
    np.testing.assert_allclose(got, _block_diagonal(_grad_rows(fn, batch)), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("summed, fn", [
    pytest.param(corpus.summed_rows, corpus.tanh_quartic, id="straight"),
    pytest.param(corpus.summed_branchy_rows, corpus.branchy, id="branchy")])
def test_grad_of_a_vmap_inside_the_code(summed, fn, target):
    batch = _batch(PAIR_CASES[0][1][0])
    np.testing.assert_allclose(_on(target, tr.grad(summed))(batch), _grad_rows(fn, batch), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fn, args, target", _pair_params(PAIR_CASES))
def test_vmap_of_jvp_of_grad_gives_per_example_hessian_vector_products(fn, args, target):
    batch = _batch(args[0])
    tangents = _direction(batch)
    jvp_of_grad = tr.grad(fn).then(Step("jvp", (("active", (0,)), ("ndims", (1, 1)))))
    expected = np.array([central_difference_hessian(fn, (row,)) @ v for row, v in zip(batch, tangents)])
    _, got = _on(target, tr.vmap(jvp_of_grad))(batch, tangents)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("fn", [corpus.early_exit, corpus.until_large], ids=lambda f: f.__name__)
def test_vmap_of_jvp_of_grad_through_a_loop_whose_passes_differ(fn):
    batch = _batch(dict(corpus.ARRAY_CASES)[fn][0])
    tangents = _direction(batch)
    jvp_of_grad = tr.grad(fn).then(Step("jvp", (("active", (0,)), ("ndims", (1, 1)))))
    _, got = tr.vmap(jvp_of_grad)(batch, tangents)
    expected = np.array([central_difference_hessian(fn, (row,)) @ v for row, v in zip(batch, tangents)])
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
