"""Regression: jacfwd, jacrev, hessian, hvp, linearize and pmap applied inside transformed code were
refused by name ("call it outside the transformed function"), and a transform of the function
jacfwd, jacrev or hessian returns was refused ("cannot be transformed again").  Both now take the
Jacobian's code form (transformer/derived_code.py: vmap of jvp, vmap of grad).  Checked against
closed forms; what the code form cannot take (a tuple output) is refused at the user's line.

A Jacobian's function bound outside and called inside transformed code (``J = tr.jacrev(f)``, then
``J(x)``) was inlined as ``f`` itself: a wrong number, the value where the Jacobian belongs.  It now
takes the code form as ``tr.jacrev(f)(x)`` written in place does.

Also here: the gradient of vmap of a function that writes in place was refused as "a write into a
view", because vmap binds the batched array to the user's name by an alias (``y = _t15``) of a
temporary read nowhere else."""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad, ring_of_sines_gradient, ring_of_sines_hessian

X = np.array([0.3, -0.6, 1.1])
M = np.array([[0.5, -0.2], [0.1, 0.9]])


def ring(x):
    y = np.zeros(3)
    for k in range(3):
        y[k] = x[k] * x[(k + 1) % 3]
    return np.sum(np.sin(y))


def scaled(x, s):
    return np.tanh(x) * s ** 2


def matrix_map(a):
    return a @ a


def jacobians_inside(x, s):
    jf = tr.jacfwd(scaled, argnums=(0, 1))(x, s)
    jr = tr.jacrev(scaled, argnums=1)(x, s)
    return np.sum(jf[0]) + np.sum(jf[1]) * np.sum(jr) + np.sum(tr.hessian(ring)(x) * tr.hvp(ring)(x, x))


RING_JACREV = tr.jacrev(ring)
RING_JACFWD = tr.jacfwd(ring)
RING_HESSIAN = tr.hessian(ring)


def bound_outside(x):
    return RING_JACREV(x) + RING_JACFWD(x) + RING_HESSIAN(x) @ x


def matrix_jacobian_inside(a):
    return tr.jacrev(matrix_map)(a)


def linearized_and_pmapped_inside(xs):
    out, f_jvp = tr.linearize(ring, xs[0])
    return out + f_jvp(xs[1]) + np.sum(tr.pmap(ring)(xs))


def jacobian_of_a_pair(x):
    return tr.jacfwd(lambda v: (np.sin(v), v))(x)


def jacobian_at_a_pair(x):
    return tr.jacrev(lambda p: p[0] * p[1])((x, x))


def summed_rows(xs):
    return np.sum(tr.vmap(ring)(xs))


def jacobians_reference(x, s):
    jf0 = np.diag((1 - np.tanh(x) ** 2) * s ** 2)
    jf1 = np.tanh(x) * 2 * s
    return np.sum(jf0) + np.sum(jf1) * np.sum(jf1) + np.sum(ring_of_sines_hessian(x) * (ring_of_sines_hessian(x) @ x))


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_jacobians_inside_jitted_code(target):
    np.testing.assert_allclose(tr.jit(jacobians_inside, target=target)(X, 1.5), jacobians_reference(X, 1.5),
                               rtol=1e-12)
    eye = np.eye(2)
    want = np.einsum("ik,lj->ijkl", eye, M) + np.einsum("ik,jl->ijkl", M, eye)     # d(a @ a) / d a
    np.testing.assert_allclose(tr.jit(matrix_jacobian_inside, target=target)(M), want, rtol=1e-12)
    xs = np.stack([X, 0.5 - X])
    want = ring(X) + ring_of_sines_gradient(X) @ xs[1] + ring(xs[0]) + ring(xs[1])
    np.testing.assert_allclose(tr.jit(linearized_and_pmapped_inside, target=target)(xs), want, rtol=1e-12)


def test_gradient_through_jacobians_inside():
    # the outer gradient differentiates the inlined Jacobians: against central differences
    eps = 1e-6
    want = [(jacobians_reference(X + eps * e, 1.5) - jacobians_reference(X - eps * e, 1.5)) / (2 * eps)
            for e in np.eye(3)]
    np.testing.assert_allclose(tr.grad(jacobians_inside)(X, 1.5), want, rtol=1e-6, atol=1e-8)


def test_transforms_of_derived_functions():
    batch = np.stack([X, 0.5 * X])
    np.testing.assert_allclose(tr.jit(tr.vmap(tr.hessian(ring)))(batch), [ring_of_sines_hessian(x) for x in batch],
                               rtol=1e-12)
    np.testing.assert_allclose(tr.jit(tr.hvp(ring))(X, X), ring_of_sines_hessian(X) @ X, rtol=1e-12)
    np.testing.assert_allclose(tr.jacfwd(tr.jacrev(ring))(X), ring_of_sines_hessian(X), rtol=1e-12)
    np.testing.assert_allclose(tr.vmap(tr.jacfwd(ring))(batch), [ring_of_sines_gradient(x) for x in batch], rtol=1e-12)


def test_gradient_of_vmap_of_in_place_writes():
    batch = np.stack([X, 2 * X])
    np.testing.assert_allclose(tr.grad(summed_rows)(batch), [ring_of_sines_gradient(x) for x in batch], rtol=1e-12)
    np.testing.assert_allclose(tr.jit(tr.grad(summed_rows))(batch), [ring_of_sines_gradient(x) for x in batch],
                               rtol=1e-12)


@pytest.mark.parametrize("fn, words", [
    (jacobian_of_a_pair, "returns a tuple, list or dict"),
])
def test_what_the_code_form_cannot_take_is_refused_at_the_line(fn, words):
    line = fn.__code__.co_firstlineno + 1           # the line that applies the transform
    with pytest.raises(tr.TransformError, match=rf"test_jacobians_as_code\.py:{line}:\d+: .*{words}"):
        tr.jit(fn, target="python")(X)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_jacobian_at_a_tuple_written_in_the_call(target):
    """Its code form is written for the tuple's structure: d (p0 * p1) / d p is (diag p1, diag p0)."""
    got = tr.jit(jacobian_at_a_pair, target=target)(X)
    assert isinstance(got, tuple) and len(got) == 2
    np.testing.assert_allclose(got[0], np.diag(X), rtol=1e-15)
    np.testing.assert_allclose(got[1], np.diag(X), rtol=1e-15)


def test_a_transform_of_a_jacobian_of_a_pair():
    with pytest.raises(tr.TransformError, match="returns a tuple, list or dict"):
        tr.jit(tr.jacfwd(lambda v: (np.sin(v), v)))(X)
    np.testing.assert_allclose(tr.jit(tr.jacrev(lambda p: p[0] * p[1]))((X, 2 * X))[1], np.diag(X), rtol=1e-12)
    # vmap maps the code form written for the pair (it was refused: "takes arrays and numbers")
    batch = np.stack([X, 2 * X])
    rows = tr.vmap(tr.jacrev(lambda p: p[0] * p[1]))((batch, 3 * batch))
    np.testing.assert_allclose(rows[0], [np.diag(3 * x) for x in batch], rtol=1e-12)
    np.testing.assert_allclose(rows[1], [np.diag(x) for x in batch], rtol=1e-12)


def test_transforms_of_the_function_linearize_returns():
    # it was refused ("cannot be transformed yet"); its code form is the jvp at the primals
    v = np.array([1.0, 2.0, -1.0])
    out, f_jvp = tr.linearize(ring, X)
    assert np.isclose(out, ring(X))
    np.testing.assert_allclose(tr.jit(f_jvp)(v), ring_of_sines_gradient(X) @ v, rtol=1e-12)
    directions = np.stack([v, 2 * v, np.ones(3)])
    np.testing.assert_allclose(tr.vmap(f_jvp)(directions), directions @ ring_of_sines_gradient(X), rtol=1e-12)
    np.testing.assert_allclose(tr.grad(f_jvp)(v), ring_of_sines_gradient(X), rtol=1e-12)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_jacobians_bound_outside_and_called_inside(target):
    want = 2 * ring_of_sines_gradient(X) + ring_of_sines_hessian(X) @ X
    np.testing.assert_allclose(tr.jit(bound_outside, target=target)(X), want, rtol=1e-12)
    np.testing.assert_allclose(tr.grad(lambda x: np.sum(bound_outside(x)))(X),
                               np.sum(2 * ring_of_sines_hessian(X), axis=0)
                               + central_difference_grad(lambda x: np.sum(ring_of_sines_hessian(x) @ x), (X,)),
                               rtol=1e-6, atol=1e-8)
