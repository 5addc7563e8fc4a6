"""Forward mode: jvp and jacfwd against central differences, golden generated
code, rule coverage and bad inputs."""
import os
from pathlib import Path

import numpy as np
import pytest

import corpus_forward as corpus
import transformer as tr
from oracles import central_difference_jvp
from transformer import core_form, primitives, rules
from transformer.errors import CompileError
from transformer.staging import Step, make_core

GOLDEN = Path(__file__).parent / "golden_jvp"
GOLDEN_FUNCTIONS = [corpus.rosenbrock, corpus.squares_into, corpus.branch_on_value, corpus.mlp,
                    corpus.while_until_large, corpus.loop_with_break]


def _tangents(args, seed=1):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(np.shape(a)) if np.issubdtype(np.result_type(a), np.floating) else None
                 for a in args)


def _reference(fn, args, tangents):
    out = fn(*args)
    if isinstance(out, tuple):
        return tuple(central_difference_jvp(lambda *a, j=j: fn(*a)[j], args, tangents) for j in range(len(out)))
    return central_difference_jvp(fn, args, tangents)


def _check(fn, f, args):
    tangents = _tangents(args)
    out, out_dot = tr.jvp(f, args, tuple(0 if t is None else t for t in tangents))
    expected_out, expected_dot = fn(*args), _reference(fn, args, tangents)
    if isinstance(expected_out, tuple):
        for o, d, eo, ed in zip(out, out_dot, expected_out, expected_dot):
            np.testing.assert_allclose(o, eo, rtol=1e-12, atol=1e-12)
            assert np.shape(d) == np.shape(eo)
            np.testing.assert_allclose(d, ed, rtol=1e-6, atol=1e-7)
        return
    np.testing.assert_allclose(out, expected_out, rtol=1e-12, atol=1e-12)
    assert np.shape(out_dot) == np.shape(expected_out), "a tangent has its output's shape"
    np.testing.assert_allclose(out_dot, expected_dot, rtol=1e-6, atol=1e-7)


_IDS = [f"{fn.__name__}-{i}" for i, (fn, _) in enumerate(corpus.CASES)]


def test_corpus_is_large_enough():
    assert len({fn for fn, _ in corpus.CASES}) >= 40


@pytest.mark.parametrize("fn, args", corpus.CASES, ids=_IDS)
def test_jvp_python(fn, args):
    _check(fn, fn, args)


@pytest.mark.parametrize("fn, args", corpus.CASES, ids=_IDS)
def test_jvp_jit(fn, args):
    try:
        tr.jit(fn)(*args)
    except CompileError as err:       # numba's axis=/keepdims= gaps are the CPU backend's to lower
        pytest.xfail(f"the primal itself does not compile yet: {err.bare_message[:120]}")
    _check(fn, tr.jit(fn), args)


def test_stop_gradient_has_zero_tangent():
    x = corpus.vec()
    dx = np.ones_like(x)
    _, got = tr.jvp(corpus.partly_constant, (x,), (dx,))
    expected = central_difference_jvp(corpus.partly_constant_reference, (x, x), (dx, None))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


def test_integer_tangent_is_ignored():
    x = corpus.vec()
    dx = np.arange(5.0)
    _, got = tr.jvp(corpus.integer_scale, (x, 3), (dx, 123))
    np.testing.assert_allclose(got, 3 * dx)


def test_jvp_of_jit_compiles():
    f = tr.jit(corpus.rosenbrock)
    x = corpus.vec(6)
    _, got = tr.jvp(f, (x,), (np.ones(6),))
    np.testing.assert_allclose(got, central_difference_jvp(corpus.rosenbrock, (x,), (np.ones(6),)), rtol=1e-6)
    assert "njit" not in tr.show(f) and "jvp_rosenbrock" in tr.show(tr.forward._forward(f, (0,), (1,)))


def test_jacfwd_matches_columns_of_differences():
    a, x = corpus.mat(), corpus.vec(4)
    for f in (corpus.matvec, tr.jit(corpus.matvec)):
        jac_a, jac_x = tr.jacfwd(f, argnums=(0, 1))(a, x)
        assert jac_a.shape == (3, 3, 4) and jac_x.shape == (3, 4)
        for k in range(4):
            e = np.zeros(4)
            e[k] = 1.0
            np.testing.assert_allclose(jac_x[:, k], central_difference_jvp(corpus.matvec, (a, x), (None, e)),
                                       rtol=1e-6, atol=1e-8)
        da = np.zeros((3, 4))
        da[1, 2] = 1.0
        np.testing.assert_allclose(jac_a[:, 1, 2], central_difference_jvp(corpus.matvec, (a, x), (da, None)),
                                   rtol=1e-6, atol=1e-8)


def test_jacfwd_scalar_output_and_input():
    jac = tr.jacfwd(corpus.scalar_math)(0.7, 0.4)
    assert np.shape(jac) == ()
    np.testing.assert_allclose(jac, central_difference_jvp(corpus.scalar_math, (0.7, 0.4), (1.0, None)), rtol=1e-6)


def test_jacfwd_refuses_integer_argument():
    with pytest.raises(TypeError, match="argument 1 has dtype int"):
        tr.jacfwd(corpus.integer_scale, argnums=1)(corpus.vec(), 3)


# ----------------------------------------------------------------- bad inputs
def test_wrong_tangent_shape_names_the_argument():
    with pytest.raises(ValueError, match="tangent for argument 1 has shape \\(3,\\).*primal has shape \\(5,\\)"):
        tr.jvp(corpus.quotient, (corpus.vec(), corpus.vec()), (np.ones(5), np.ones(3)))


def test_wrong_tangent_count():
    with pytest.raises(ValueError, match="2 primals but 1 tangents"):
        tr.jvp(corpus.quotient, (corpus.vec(), corpus.vec()), (np.ones(5),))


def test_wrong_primal_count():
    with pytest.raises(TypeError, match="function of 2 arguments got 1 primals"):
        tr.jvp(corpus.quotient, (corpus.vec(),), (np.ones(5),))


def test_primals_must_be_a_tuple():
    with pytest.raises(TypeError, match="primals must be a tuple"):
        tr.jvp(corpus.sin_exp, corpus.vec(), np.ones(5))


def test_non_numeric_tangent():
    with pytest.raises(TypeError, match="tangent for argument 0 must be a number or array"):
        tr.jvp(corpus.sin_exp, (corpus.vec(),), ("fast",))


def test_refused_primitive_names_the_user_line():
    x = np.array([[1.0, 2.0], [0.5, 3.0], [1.5, -1.0]])
    with pytest.raises(tr.TransformError, match=r"corpus_forward_refusals.py:\d+.*svd"):
        tr.jvp(_refusals.complete_singular_vectors, (x,), (x,))


import corpus_forward_refusals as _refusals  # noqa: E402


# ------------------------------------------------------------------- coverage
def test_every_primitive_has_a_tangent_rule_or_a_refusal():
    table = rules.table("tangent")
    missing = [name for name in primitives.REGISTRY if name not in table and name not in rules.UNSUPPORTED["tangent"]]
    assert not missing, f"primitives without a tangent rule or documented refusal: {missing}"
    for name, reason in rules.UNSUPPORTED["tangent"].items():
        assert len(reason) > 20, name


def test_templates_take_known_parameters():
    import inspect
    table = rules.table("tangent")
    for name, template in table.items():
        prim = primitives.REGISTRY.get(name)
        if prim is None or template.rule_options.get("nondifferentiable") or template.rule_options.get("by_transform"):
            continue
        # a keyword operand may carry a tangent too (random.uniform's minval=)
        allowed = set(prim.params) | set(prim.keywords) | {"z"} | {f"{p}_dot" for p in (*prim.params, *prim.keywords)}
        assert set(inspect.signature(template).parameters) <= allowed, name


# ------------------------------------------------------------ generated code
@pytest.mark.parametrize("fn", GOLDEN_FUNCTIONS, ids=lambda f: f.__name__)
def test_golden_generated_code(fn):
    args = next(a for f, a in corpus.CASES if f is fn)
    active = tuple(i for i, a in enumerate(args) if np.issubdtype(np.result_type(a), np.floating))
    core = make_core(fn, (Step("jvp", (("active", active), ("ndims", tuple(np.ndim(a) for a in args)))),))
    core_form.check(core.node)
    text = core.code()
    path = GOLDEN / f"{fn.__name__}.py"
    if os.environ.get("TRANSFORMER_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"generated code changed; rerun with TRANSFORMER_UPDATE_GOLDEN=1 and review {path}"
    assert f"jvp of: " in text and "_dot" in text


@pytest.mark.parametrize("fn, args", corpus.CASES[::7], ids=_IDS[::7])
def test_output_is_core_form_with_no_dead_tangents(fn, args):
    core = make_core(fn, (Step("jvp", ()),))
    core_form.check(core.node)
    text = core.code()
    for line in text.splitlines():
        stripped = line.strip()
        if "=" in stripped and not stripped.startswith(("#", "return")):
            target = stripped.split("=")[0].strip().split("[")[0]
            if target.endswith("_dot"):
                assert text.count(target) >= 2, f"{target} is computed but never used"


# ------------------------------------------------- forward over reverse (hvp)
@pytest.mark.parametrize("fn, args", [(corpus.classifier_loss, (corpus.vec(),)),
                                      (corpus.absolute, (corpus.vec(),)),
                                      (corpus.scalar_math, (0.7, 0.4)),
                                      (corpus.largest, (corpus.vec(),))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_jvp_of_grad_is_a_hessian_vector_product(fn, args):
    g = tr.grad(fn)
    v = np.linspace(-1.0, 1.0, np.size(args[0])).reshape(np.shape(args[0])) if np.ndim(args[0]) else 0.5
    rest = tuple(0.0 for _ in args[1:])
    _, hv = tr.jvp(g, args, (v,) + rest)
    expected = central_difference_jvp(g, args, (v,) + tuple(None for _ in args[1:]))
    np.testing.assert_allclose(hv, expected, rtol=1e-5, atol=1e-6)
