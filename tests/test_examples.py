"""Every script in examples/ runs to completion and prints what it promises.

Each example is run as a user runs it (``python examples/NAME.py``) in a
subprocess that shares this test run's fresh cache directory.  A new example
is picked up automatically; add the phrases it must print to KEY_OUTPUT.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

KEY_OUTPUT = {
    "quickstart.py": [
        "jit(scaled_dot_product) on q, k, v of shape (256, 64): output shape (256, 64)",
        "largest difference from NumPy:",
        "def scaled_dot_product(q, k, v):",
        "[quickstart.py:19]",                       # generated code names the user's line
    ],
    "attention.py": [
        "each row sums to 1: True",
        "jit(scaled_dot_product) matches NumPy",
        "jit(causal_attention) matches NumPy",
        "output row 0 == v[0]: True",
        "scores[i, j] = -np.inf",
        "(nn.py:",                                  # softmax inlined from transformer/nn.py
        "nl.softmax_last_axis(scores, None)",        # and one loop over rows for numba
    ],
    "cuda_target.py": [
        "jit(gelu_layer, target='cuda') matches NumPy: True",
        "def gelu_layer_fused0_kernel(",             # the fused kernel is printed
        "[cuda_target.py:23]",
        "matches a Python loop: True",
        "match central differences: True",
    ],
    "grad_vjp_jvp.py": [
        "grad(loss) has shape (2, 6); matches finite differences: True",
        "same gradient: True",
        "vjp(predict) returns one cotangent per argument: (2, 6), (5, 2); matches finite differences: True",
        "jvp(predict) along a random direction matches finite differences: True",
        "def grad_loss(w, x, y):",
        "# vjp of: return np.mean(error ** 2)   [grad_vjp_jvp.py:",
    ],
    "data_parallel_mlp.py": [
        "2 CPU devices",
        "loss fell: True",
        "parameters match single-device training: True",
    ],
    "newton.py": [
        "Newton-CG with hvp reaches the same point: True",
        "the Hessian at the minimum is symmetric: True, positive definite: True",
        "def pick_jvp_grad_energy(x, x_dot):",
    ],
    "batching.py": [
        "vmap(linear_step): (8, 3) inputs -> (8, 4) outputs; matches a Python loop: True",
        "jit(vmap(linear_step)) matches too: True",
        "per-example gradients: shape (8, 3); match one grad call per example: True",
        "# strategy: one factor is the same for every example: one product for the whole batch",
    ],
    "from_jax.py": [
        "jit(train) matches 200 steps run without compiling: True",
        "loss fell: True",
    ],
    "control_flow.py": [
        "data-dependent while under jit: [9.304, 4.706, 2.411, 1.272]",
        "matches a Python loop: True",
        "grad through in-place writes matches finite differences: True",
        "# vjp of: for i in range(len(x)):   [control_flow.py:",
    ],
}


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_example_runs_and_prints_its_key_output(script):
    result = subprocess.run([sys.executable, str(EXAMPLES / script)], capture_output=True, text=True,
                            env=dict(os.environ), timeout=600, cwd=EXAMPLES.parent)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert result.stdout.strip(), "an example must say what it computes"
    for phrase in KEY_OUTPUT.get(script, []):
        assert phrase in result.stdout, f"{script} did not print {phrase!r}"


def test_every_example_has_key_output_listed():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(KEY_OUTPUT)


def test_from_jax_trains_as_the_same_script_does_under_jax():
    """examples/from_jax.py with its JAX imports back: the same data, initial weights and minibatches
    (jax.random's numbers, which tr.random reproduces), and the same weights after training."""
    jax = pytest.importorskip("jax")
    import importlib.util
    import types

    import numpy as np
    from jax.scipy.special import logsumexp
    jax.config.update("jax_enable_x64", True)
    spec = importlib.util.spec_from_file_location("from_jax_example", EXAMPLES / "from_jax.py")
    ours = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ours)
    under_jax = dict(vars(ours), jax=jax, jnp=jax.numpy, grad=jax.grad, jit=jax.jit, lax=jax.lax,
                     random=jax.random, logsumexp=logsumexp)
    for name in ("init_params", "make_data", "predict", "loss", "update", "sgd_step", "train"):
        under_jax[name] = types.FunctionType(getattr(ours, name).__code__, under_jax, name,
                                             getattr(ours, name).__defaults__)
    runs = []
    for script in (vars(ours), under_jax):
        k_data, k_init, k_train = script["random"].split(script["random"].PRNGKey(0), 3)
        x, y = script["make_data"](k_data)
        params = script["init_params"]([2, 32, 32, 3], k_init)
        runs.append((x, params, script["jit"](script["train"])(params, x, y, k_train)))
    (x_ours, init_ours, trained_ours), (x_jax, init_jax, trained_jax) = runs
    np.testing.assert_allclose(x_ours, np.asarray(x_jax), rtol=1e-14, atol=1e-15)   # (XLA's cos and sin)
    for a, b in zip(jax.tree_util.tree_leaves(init_ours), jax.tree_util.tree_leaves(init_jax)):
        np.testing.assert_allclose(a, np.asarray(b), rtol=4e-16, atol=0)   # XLA divides by sqrt(m) as a product
    for a, b in zip(jax.tree_util.tree_leaves(trained_ours), jax.tree_util.tree_leaves(trained_jax)):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-8, atol=1e-10)
