"""tr.checkpoint (tr.remat): the same derivatives as without it, under every transform that
differentiates (grad, jit(grad), jvp, hessian, vmap of grad), with the forward values recomputed in
the backward sweep instead of taped: a loop's tape holds only what the checkpointed body is called
with.  Oracles: the plain function's derivatives and central differences.  benchmarks/bench_checkpoint.py
measures the memory."""
import tracemalloc

import numpy as np
import pytest

import checkpoint_cases as case
import transformer as tr
from oracles import central_difference_grad

RNG = np.random.default_rng(11)
H = RNG.normal(size=6)
W = RNG.normal(size=(6, 6)) / 6.0


@pytest.mark.parametrize("fn", [case.checkpointed_trajectory, case.inline_checkpoint])
def test_the_gradient_is_the_plain_one(fn):
    want = tr.grad(case.trajectory, argnums=(0, 1))(H, W)
    for grad in (tr.grad(fn, argnums=(0, 1)), tr.jit(tr.grad(fn, argnums=(0, 1)))):
        got = grad(H, W)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(want[0], central_difference_grad(case.trajectory, (H, W)), rtol=1e-6)


def test_the_backward_sweep_recomputes_the_body():
    source = tr.jit(tr.grad(case.checkpointed_trajectory), target="python").source(H, W)
    backward = source.split("# backward sweep")[1]
    assert "np.tanh" in backward                 # the body's forward values, computed again
    plain = tr.jit(tr.grad(case.trajectory), target="python").source(H, W)
    assert source.count("_stack = ") < plain.count("_stack = ")      # fewer tapes


def test_the_tape_holds_only_the_body_s_arguments():
    def peak(fn):
        grad = tr.jit(tr.grad(fn, argnums=(0, 1)), target="python")
        grad(H, W)
        tracemalloc.start()
        grad(np.tile(H, 50)[:6], W)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top
    assert peak(case.checkpointed_trajectory) < peak(case.trajectory)


def test_forward_mode_hessian_and_vmap_of_the_gradient():
    direction = RNG.normal(size=6)
    _, plain = tr.jvp(lambda h: case.trajectory(h, W), (H,), (direction,))
    _, checkpointed = tr.jvp(case.checkpointed_trajectory, (H, W), (direction, np.zeros_like(W)))
    assert checkpointed == pytest.approx(plain, rel=1e-10)
    np.testing.assert_allclose(tr.hessian(case.checkpointed_trajectory)(H, W),
                               tr.hessian(case.trajectory)(H, W), rtol=1e-9, atol=1e-12)
    batch = np.stack([H, 2 * H])
    np.testing.assert_allclose(tr.vmap(tr.grad(case.checkpointed_trajectory), in_axes=(0, None))(batch, W),
                               np.stack([tr.grad(case.trajectory)(h, W) for h in batch]), rtol=1e-10)


def test_tuple_outputs_and_integer_arguments():
    x = np.array([0.3, -0.5, 0.9])
    np.testing.assert_allclose(tr.grad(case.with_int_and_pair)(x), tr.grad(case.with_int_and_pair_plain)(x),
                               rtol=1e-12)
    np.testing.assert_allclose(tr.grad(case.with_int_and_pair)(x),
                               central_difference_grad(case.with_int_and_pair_plain, (x,)), rtol=1e-7)
    assert case.two_outputs(x, 2)[1] == pytest.approx(np.sin(x) * 2)     # called from Python: the function


def test_what_checkpoint_does_not_take():
    with pytest.raises(TypeError, match="takes no policy"):
        tr.checkpoint(case.euler_step, policy=object())
    with pytest.raises(TypeError, match="plain positional parameters"):
        tr.checkpoint(lambda h, w=1.0: h * w)
