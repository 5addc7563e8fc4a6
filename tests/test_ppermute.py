"""lax.ppermute on 2 local CPU devices: values, loops and branches, derivatives, refusals.

Oracles are NumPy: on two devices the ring ((0, 1), (1, 0)) swaps the shards;
gradients are central differences of every device's loss summed, each device
holding its own copy of the unmapped weights (what pmap(grad(f)) computes in
JAX: the cotangent that reaches a device's copy from every device's output).
"""
import os

import numpy as np
import pytest

import pmap_cases as cases
import transformer as tr
from oracles import central_difference_grad
from transformer.backends import cpu_threads
from transformer.forward import _forward
from transformer.staging import Step

os.environ["TRANSFORMER_CPU_DEVICES"] = "2"
X = np.arange(6.0).reshape(2, 3) * np.array([[1.0], [2.0]]) / 10.0
W = np.array([0.3, -0.2, 0.5])


def swap(a):
    return a[::-1]


def test_ring_shift_swaps_the_shards_on_python_and_jit():
    assert np.array_equal(tr.pmap(cases.ring_shift, axis_name="i")(X), swap(X))


def test_devices_no_pair_sends_to_receive_zeros():
    found = tr.pmap(cases.send_right_only, axis_name="i")(X)
    assert np.array_equal(found, [0.0, X[0].sum()])


def test_ppermute_in_a_loop_under_a_device_branch():
    expected = np.zeros_like(X)
    x = X.copy()
    for k in range(3):
        x = swap(x)
        expected[0] += x[0] * (k + 1)
        expected[1] -= x[1]
    assert np.allclose(tr.pmap(cases.ring_in_loop, axis_name="i")(X), expected)


def ring_losses_summed(weights, x):
    """Every device's ring_loss, each device using its own row of ``weights``."""
    y = np.tanh(x * weights)
    for _ in range(2):
        y = swap(y) * weights + y
    return float(np.sum(y * y))


@pytest.mark.parametrize("wrap", [lambda f: f, tr.jit], ids=["python", "jit"])
def test_grad_through_ppermute_sends_cotangents_back(wrap):
    found = tr.pmap(wrap(tr.grad(cases.ring_loss)), axis_name="i", in_axes=(None, 0))(W, X)
    weights = np.stack([W, W])
    expected = central_difference_grad(ring_losses_summed, (weights, X), 0)
    assert np.allclose(found, expected, atol=1e-6)


def test_jvp_through_ppermute_is_ppermute_of_the_tangent():
    """The forward-mode code tr.jvp runs, jvp_ring_loss(w, x, w_dot, x_dot) -> (loss, loss_dot),
    run as pmap's shard on two devices (pmap's API maps the user's own signature)."""
    shard = _forward(cases.ring_loss, (0, 1), (1, 2)).then(Step("pmap_shard", (("axis_name", "i"),)))
    w_dot = np.array([1.0, -2.0, 0.5])
    x_dot = np.array([[0.5, 1.0, -1.0], [2.0, 0.0, 1.0]])
    results = cpu_threads.run(shard.on_target("pmap-cpu"), [(W, X[d], w_dot, x_dot[d]) for d in (0, 1)])
    weights = np.stack([W, W])
    per_copy = central_difference_grad(ring_losses_summed, (weights, X), 0)
    total_dot = np.sum(per_copy * w_dot) + np.sum(central_difference_grad(ring_losses_summed, (weights, X), 1) * x_dot)
    assert np.isclose(results[0][1] + results[1][1], total_dot, atol=1e-6)


def test_a_perm_that_is_not_a_permutation_names_the_user_line():
    with pytest.raises(tr.TransformError, match=r"pmap_cases.py:\d+: lax.ppermute perm names a device twice "
                                                r"as a destination"):
        tr.pmap(cases.bad_perm, axis_name="i")(X)


def test_a_perm_naming_a_device_beyond_the_axis_fails_on_the_devices():
    with pytest.raises(ValueError, match="perm names a device outside the pmapped axis"):
        tr.pmap(cases.ring_shift, axis_name="i")(X[:1])      # one device: device 1 does not exist


def test_a_perm_computed_at_run_time_is_refused_with_the_user_line():
    with pytest.raises(tr.TransformError, match=r"pmap_cases.py:\d+: lax.ppermute needs perm as \(source, "
                                                r"destination\) pairs of device numbers known when the code"):
        tr.pmap(cases.perm_from_data, axis_name="i")(X)


# ------------------------------------------- transforms OF a pmapped function
# They run the pmapped function as vmap (JAX: pmap(f) computes vmap(f)), where
# the pmap step writes each ppermute as a gather of every device's value.
def test_grad_of_a_pmapped_function_with_ppermute():
    total = tr.pmap(cases.ring_total, axis_name="i", in_axes=(None, 0), out_axes=None)

    def oracle(w, x):
        return ring_losses_summed(np.stack([w, w]), x)

    assert np.isclose(total(W, X), oracle(W, X))
    for argnums in (0, 1):
        expected = central_difference_grad(oracle, (W, X), argnums)
        assert np.allclose(tr.grad(total, argnums=argnums)(W, X), expected, atol=1e-6)
    assert np.allclose(tr.jit(tr.grad(total))(W, X), central_difference_grad(oracle, (W, X), 0), atol=1e-6)


def test_vmap_and_jvp_of_a_pmapped_ppermute():
    batch = np.stack([X, 2.0 * X, -X])
    assert np.array_equal(tr.vmap(tr.pmap(cases.ring_shift, axis_name="i"))(batch), batch[:, ::-1])
    partial = tr.pmap(cases.send_right_only, axis_name="i")
    assert np.array_equal(tr.vmap(partial)(batch), [[0.0, b[0].sum()] for b in batch])
    looped = tr.pmap(cases.ring_in_loop, axis_name="i")
    out, out_dot = tr.jvp(looped, (X,), (2.0 * X,))          # linear in x: the tangent is twice the value
    assert np.allclose(out, looped(X)) and np.allclose(out_dot, 2.0 * out)


def test_vmap_over_another_axis_name_refuses_ppermute_clearly():
    with pytest.raises(tr.TransformError, match="pmap_cases.py:[0-9]+: lax.ppermute cannot be batched"):
        tr.vmap(cases.ring_shift, axis_name="j")(X)


@pytest.mark.parametrize("wrap", [lambda f: f, tr.jit], ids=["python", "jit"])
def test_ppermute_over_a_vmapped_axis_name(wrap):
    # the same shard code under vmap: the examples are the devices (JAX's meaning of ppermute in vmap)
    batch = np.arange(12.0).reshape(4, 3)
    found = wrap(tr.vmap(cases.ring_of_four, axis_name="i"))(batch)
    np.testing.assert_array_equal(found, batch[[3, 0, 1, 2]])     # example k receives example k - 1's row
