"""jacrev, jacfwd and hessian with ``has_aux=True``, as JAX has them: ``fn`` returns ``(output,
aux)`` and the result is ``(derivative of output, aux)``.  Jacobians are checked against central
differences of the output alone, aux against the function run as NumPy."""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_hessian, central_difference_jvp

RNG = np.random.default_rng(3)
X = RNG.normal(size=3)
W = RNG.normal(size=(2, 3))


def layer(x, w):
    y = np.tanh(w @ x)
    return y * 2.0, {"energy": np.sum(y ** 2), "activations": y}


def energy(x):
    return np.sum(np.sin(x) ** 2) * x[0], np.cos(x)


def stacked(x, w):
    return np.stack([x, 2.0 * x])      # an array, not a pair: its first row is no output


def in_a_loss(x, w):
    jacobian, aux = tr.jacfwd(layer, has_aux=True)(x, w)
    return np.sum(jacobian ** 2) + aux["energy"]


def central_difference_jacobian(f, args, argnum):
    """d f / d args[argnum], one column per entry of that argument (shape out + arg)."""
    x = np.asarray(args[argnum], dtype=float)
    columns = []
    for k in range(x.size):
        tangents = [np.zeros_like(np.asarray(a, dtype=float)) for a in args]
        tangents[argnum].reshape(-1)[k] = 1.0
        columns.append(central_difference_jvp(f, args, tangents))
    return np.moveaxis(np.array(columns), 0, -1).reshape(np.shape(f(*args)) + x.shape)


def output_of_layer(x, w):
    return layer(x, w)[0]


@pytest.mark.parametrize("kind", [tr.jacrev, tr.jacfwd], ids=["jacrev", "jacfwd"])
@pytest.mark.parametrize("jit", [False, True], ids=["called", "jit"])
def test_a_jacobian_with_aux(kind, jit):
    derivative = kind(layer, argnums=(0, 1), has_aux=True)
    (d_x, d_w), aux = (tr.jit(derivative) if jit else derivative)(X, W)
    np.testing.assert_allclose(d_x, central_difference_jacobian(output_of_layer, (X, W), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d_w, central_difference_jacobian(output_of_layer, (X, W), 1), rtol=1e-6, atol=1e-8)
    _, expected = layer(X, W)
    assert set(aux) == {"energy", "activations"}
    np.testing.assert_allclose(aux["energy"], expected["energy"], rtol=1e-12)
    np.testing.assert_allclose(aux["activations"], expected["activations"], rtol=1e-12)


def test_a_hessian_with_aux():
    hessian, aux = tr.hessian(energy, has_aux=True)(X)
    np.testing.assert_allclose(hessian, central_difference_hessian(lambda x: energy(x)[0], (X,)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(aux, np.cos(X), rtol=1e-12)


def test_vmap_of_a_jacobian_with_aux():
    xs = RNG.normal(size=(4, 3))
    jacobians, aux = tr.vmap(tr.jacrev(layer, has_aux=True), in_axes=(0, None))(xs, W)
    for i in range(4):
        np.testing.assert_allclose(jacobians[i], central_difference_jacobian(output_of_layer, (xs[i], W), 0),
                                   rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(aux["energy"][i], layer(xs[i], W)[1]["energy"], rtol=1e-12)


def test_called_inside_transformed_code_keeps_the_aux_dict():
    np.testing.assert_allclose(tr.jit(in_a_loss)(X, W), in_a_loss(X, W), rtol=1e-12)


@pytest.mark.parametrize("kind", [tr.jacrev, tr.jacfwd, tr.hessian], ids=["jacrev", "jacfwd", "hessian"])
@pytest.mark.parametrize("jit", [False, True], ids=["called", "jit"])
def test_a_function_not_returning_a_pair_is_refused(kind, jit):
    derivative = kind(stacked, has_aux=True)
    with pytest.raises(tr.TransformError, match=r"test_has_aux.py:\d+: .*needs stacked\(\) to return a pair"):
        (tr.jit(derivative) if jit else derivative)(X, W)
