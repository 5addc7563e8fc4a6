"""Reverse over reverse through a backward sweep that tapes values (issue "Composition without
exceptions").  ``tr.grad(tr.grad(f))`` of such a loop used to be refused ("cannot differentiate
rt.push"); JAX cannot do it either (``lax.while_loop`` has no reverse rule).  The inner sweep's
pops now have adjoints: the outer backward sweep runs a tape of cotangents the other way
(templates/adjoints.py, "The tape").  Each is checked against forward over reverse, an independent
route (tr.hessian: jvp of the gradient), and against differences of the gradient."""
import numpy as np
import pytest

import transformer as tr
from regressions import taped_loops as case

X = np.array([0.3, 0.7, 1.1])
DIRECTION = np.array([1.0, -0.5, 2.0])


def on(target, fn):
    return tr.jit(fn) if target == "cpu" else fn


def gradient_differences(fn, x, direction, eps=1e-6):
    grad = tr.grad(fn)
    return (grad(x + eps * direction) - grad(x - eps * direction)) / (2 * eps)


def hessian_times_direction(fn, target):
    def projected(x, direction):
        return tr.grad(lambda y: np.sum(tr.grad(fn)(y) * direction))(x)
    return on(target, projected)


@pytest.mark.parametrize("target", ["python", "cpu"])
@pytest.mark.parametrize("fn", [case.until_large, case.with_a_break, case.euler, case.rows_in_place],
                         ids=lambda f: f.__name__)
def test_grad_of_grad_matches_forward_over_reverse(fn, target):
    got = hessian_times_direction(fn, target)(X, DIRECTION)
    np.testing.assert_allclose(got, tr.hessian(fn)(X) @ DIRECTION, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got, gradient_differences(fn, X, DIRECTION), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_jacrev_of_grad_is_the_hessian(target):
    got = on(target, tr.jacrev(tr.grad(case.euler)))(X)
    np.testing.assert_allclose(got, tr.hessian(case.euler)(X), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_a_loop_that_may_run_no_passes(n):
    # the inner forward loop's values are read again by its backward loop: their cotangents start
    # in each loop, not above both, where no value exists when the loops run no passes
    def projected(x):
        return np.sum(tr.grad(case.steps)(x, n) * DIRECTION)
    got = tr.grad(projected)(X)
    want = tr.jvp(lambda y: tr.grad(case.steps)(y, n), (X,), (DIRECTION,))[1]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_matrix_power_by_repeated_squaring():
    # the rule table's differences cannot resolve second derivatives of a^260; a finer step can
    rng = np.random.default_rng(3)
    a = 0.98 * np.eye(3) + 0.004 * rng.normal(size=(3, 3))
    v = rng.normal(size=(3, 3))
    got = tr.vjp(tr.grad(case.power_260), a)[1](v)[0]
    np.testing.assert_allclose(got, tr.jvp(tr.grad(case.power_260), (a,), (v,))[1], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got, gradient_differences(case.power_260, a, v, eps=1e-7), rtol=1e-5)


def projected_hessian(y):
    return tr.grad(lambda z: np.sum(tr.grad(case.euler)(z) * DIRECTION))(y)


def test_third_order_through_the_cotangent_tape():
    # grad of grad of grad: the outer sweep differentiates the cotangent tape's own pushes and pops
    def second(y):
        return np.sum(projected_hessian(y) * DIRECTION)
    differences = np.array([(second(X + 1e-5 * e) - second(X - 1e-5 * e)) / 2e-5 for e in np.eye(len(X))])
    np.testing.assert_allclose(tr.grad(second)(X), differences, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_forward_over_reverse_over_reverse(target):
    # jvp of the code above: a tape first pushed under another name gets an empty tangent tape
    got = on(target, lambda x, d: tr.jvp(projected_hessian, (x,), (d,))[1])(X, DIRECTION)
    differences = (projected_hessian(X + 1e-6 * DIRECTION) - projected_hessian(X - 1e-6 * DIRECTION)) / 2e-6
    np.testing.assert_allclose(got, differences, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_vmap_of_reverse_over_reverse(target):
    xs = np.stack([X, 1.1 * X, X - 0.2])
    got = on(target, tr.vmap(projected_hessian))(xs)
    np.testing.assert_allclose(got, np.stack([projected_hessian(x) for x in xs]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("x", [-0.4, 0.1, 0.3, 1.2, 2.0])
@pytest.mark.parametrize("fn", [case.return_from_nested_loops, case.return_then_while], ids=lambda f: f.__name__)
def test_values_an_early_return_skips(fn, x):
    # the inner backward sweep reads a value again only where the forward sweep made it (the
    # return skipped the rest): its cotangent starts in that block, not above it, where the
    # value would not exist
    _, back = tr.vjp(tr.grad(fn), x)
    np.testing.assert_allclose(back(1.0)[0], tr.jvp(tr.grad(fn), (x,), (1.0,))[1], rtol=1e-10, atol=1e-12)
