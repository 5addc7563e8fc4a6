"""A named-axis collective of a tuple, list or dict (``lax.psum(grads, "i")``, as data-parallel
training writes it) is the collective of each leaf, in the same structure, as in JAX.  Each is
checked against NumPy's reduction over the mapped axis; its gradient against central
differences."""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad
from transformer import lax

RNG = np.random.default_rng(11)
PARAMS = {"w": RNG.normal(size=(2, 3)), "b": RNG.normal(size=2)}


def summed(params):
    return lax.psum(params, "i")


def averaged_pair(params):
    mean = lax.pmean({"w": params["w"] * 2.0, "b": params["b"] ** 2}, "i")
    return mean["w"] + mean["b"][..., None]


def largest_of_a_tuple(params):
    top_w, top_b = lax.pmax((params["w"], params["b"]), "i")
    return top_w * top_b


@pytest.mark.parametrize("mapping", ["vmap", "jit(vmap)", "pmap"])
def test_psum_of_a_dict_keeps_the_dict(mapping):
    f = {"vmap": tr.vmap(summed, axis_name="i"), "jit(vmap)": tr.jit(tr.vmap(summed, axis_name="i")),
         "pmap": tr.pmap(summed, axis_name="i")}[mapping]
    got = f(PARAMS)
    assert set(got) == {"w", "b"}
    np.testing.assert_allclose(got["w"], np.broadcast_to(PARAMS["w"].sum(0), (2, 3)), rtol=1e-12)
    np.testing.assert_allclose(got["b"], np.broadcast_to(PARAMS["b"].sum(), (2,)), rtol=1e-12)


def test_pmean_of_a_dict_built_in_the_code_and_pmax_of_a_tuple():
    got = tr.vmap(averaged_pair, axis_name="i")(PARAMS)
    expected = 2.0 * PARAMS["w"].mean(0) + (PARAMS["b"] ** 2).mean()
    np.testing.assert_allclose(got, np.broadcast_to(expected, (2, 3)), rtol=1e-12)
    got = tr.jit(tr.vmap(largest_of_a_tuple, axis_name="i"))(PARAMS)
    np.testing.assert_allclose(got, np.broadcast_to(PARAMS["w"].max(0) * PARAMS["b"].max(), (2, 3)), rtol=1e-12)


def loss_of_averaged(w, b):
    return np.sum(tr.vmap(averaged_pair, axis_name="i")({"w": w, "b": b}) ** 2)


def test_gradient_through_a_pmean_of_a_dict():
    grads = tr.grad(loss_of_averaged, argnums=(0, 1))(PARAMS["w"], PARAMS["b"])
    for argnum in (0, 1):
        np.testing.assert_allclose(grads[argnum], central_difference_grad(loss_of_averaged, (PARAMS["w"], PARAMS["b"]), argnum),
                                   rtol=1e-6, atol=1e-8)


def number_indexed(b):
    return np.sum(b[..., None] * 2.0)


def test_per_example_gradient_of_a_number_indexed_with_a_new_axis():
    """``b[..., None]`` of each example's number: its cotangent is a number, added to in place
    (a TypeError from np.add.at before)."""
    b = RNG.normal(size=3)
    np.testing.assert_allclose(tr.vmap(tr.grad(number_indexed))(b), np.full(3, 2.0))
    np.testing.assert_allclose(tr.jit(tr.vmap(tr.grad(number_indexed)))(b), np.full(3, 2.0))
