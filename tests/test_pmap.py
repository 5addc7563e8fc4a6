"""pmap on 2 local CPU devices: collectives, derivatives, faults, the example.

Oracles need nothing of ours where they can (NumPy formulas, central
differences); for collectives in loops and branches the oracle is vmap with
the same axis_name, which JAX defines pmap to equal.
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pmap_cases as cases
import transformer as tr
from oracles import central_difference_grad
from transformer.backends import cpu_threads

os.environ["TRANSFORMER_CPU_DEVICES"] = "2"
X = np.arange(6.0).reshape(2, 3) * np.array([[1.0], [2.0]])


def test_devices_follow_the_environment(monkeypatch):
    assert [d.id for d in tr.devices()] == [0, 1]
    monkeypatch.setenv("TRANSFORMER_CPU_DEVICES", "3")
    assert len(tr.devices("cpu")) == 3
    monkeypatch.setenv("TRANSFORMER_CPU_DEVICES", "zero")
    with pytest.raises(ValueError, match="TRANSFORMER_CPU_DEVICES"):
        tr.devices()


def test_psum_and_pmean_match_numpy():
    assert np.allclose(tr.pmap(cases.normalize_rows, axis_name="i")(X), X / X.sum())
    assert np.allclose(tr.pmap(cases.centered, axis_name="i")(X), X - X.mean(axis=0))
    assert np.allclose(tr.pmap(cases.extremes, axis_name="i")(X), [X.max() - X.min()] * 2)


@pytest.mark.parametrize("fn", [cases.gather_and_index, cases.collective_in_loop])
def test_collectives_in_loops_and_branches_match_vmap(fn):
    expected = tr.vmap(fn, axis_name="i")(X)
    assert np.allclose(tr.pmap(fn, axis_name="i")(X), expected)


def test_shards_call_special_functions_and_random_draws():
    """A shard compiles with every overload cpu code has: lax's special functions and tr.random's
    draws (each device draws with its own key), not only the nl.* helpers."""
    import scipy.special
    x = np.linspace(0.5, 2.0, 6).reshape(2, 3)
    keys = tr.random.split(tr.random.PRNGKey(1), 2)
    got = tr.pmap(lambda x, k: tr.lax.erf(x) + tr.lax.digamma(x) + tr.random.normal(k, (3,)))(x, keys)
    want = scipy.special.erf(x) + scipy.special.digamma(x) + np.stack([tr.random.normal(k, (3,)) for k in keys])
    assert np.allclose(got, want, rtol=1e-12)


def test_in_axes_none_out_axes_and_jit_of_pmap():
    x = np.arange(6.0).reshape(3, 2)                 # mapped along axis 1
    mapped = tr.pmap(cases.scale_shift, in_axes=(1, None), out_axes=1)
    expected = np.tanh(x * 0.5) + 1.0
    assert np.allclose(mapped(x, 0.5), expected)
    assert np.allclose(tr.jit(mapped)(x, 0.5), expected)     # jit(pmap(f)) is pmap(f)


def test_fewer_shards_than_devices_use_the_first_devices():
    assert np.allclose(tr.pmap(cases.centered, axis_name="i")(X[:1]), 0.0)


def test_data_parallel_gradient_with_pmean_inside_is_the_full_batch_gradient():
    rng = np.random.default_rng(0)
    w, x, y = rng.standard_normal(3), rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5))
    local = tr.pmap(tr.jit(tr.grad(cases.loss)), in_axes=(None, 0, 0))(w, x, y)
    for d in range(2):
        shard_loss = lambda v: cases.loss(v, x[d], y[d])     # noqa: E731
        assert np.allclose(local[d], central_difference_grad(shard_loss, (w,)), atol=1e-6)
    averaged = tr.pmap(tr.jit(tr.grad(cases.data_parallel_loss)), axis_name="i", in_axes=(None, 0, 0))(w, x, y)
    full_batch = central_difference_grad(lambda v: cases.loss(v, x.reshape(10, 3), y.reshape(10)), (w,))
    assert np.allclose(averaged, [full_batch, full_batch], atol=1e-6)
    expected = tr.vmap(tr.grad(cases.data_parallel_loss), axis_name="i", in_axes=(None, 0, 0))(w, x, y)
    assert np.allclose(averaged, expected)            # JAX: pmap(grad(f)) == vmap(grad(f))


def test_grad_of_a_pmapped_function():
    rng = np.random.default_rng(1)
    w, x = rng.standard_normal(3), rng.standard_normal((2, 3))
    total = tr.pmap(cases.replicated_total, axis_name="i", in_axes=(None, 0), out_axes=None)

    def oracle_total(w, x):
        return float(np.sum(np.tanh(x * w)))

    assert np.isclose(total(w, x), oracle_total(w, x))
    assert np.allclose(tr.grad(total)(w, x), central_difference_grad(oracle_total, (w, x), 0), atol=1e-6)
    assert np.allclose(tr.grad(total, argnums=1)(w, x), central_difference_grad(oracle_total, (w, x), 1), atol=1e-6)


# ------------------------------------------------------------------ faults
def test_a_failing_device_ends_every_device_and_reraises():
    with pytest.raises(ZeroDivisionError) as caught:
        tr.pmap(cases.fails_on_device_one, axis_name="i")(X)    # device 0 waits in psum meanwhile
    assert "(raised on pmap device 1)" in caught.value.__notes__
    assert np.allclose(tr.pmap(cases.centered, axis_name="i")(X), X - X.mean(axis=0))   # devices still usable


def test_different_shapes_at_a_collective_fail_clearly():
    with pytest.raises(ValueError, match=r"lax.psum needs the same shape on every pmap device: "
                                         r"device 0 has \(1,\), device 1 has \(2,\)"):
        tr.pmap(cases.ragged, axis_name="i")(X)


def test_a_device_returning_while_another_waits_fails_clearly():
    with pytest.raises(RuntimeError, match="every device must reach the same collectives"):
        tr.pmap(cases.one_sided, axis_name="i")(X)


def test_bad_mapped_sizes_and_options_are_refused():
    with pytest.raises(ValueError, match="mapped axis has size 3 but only 2 devices exist"):
        tr.pmap(cases.centered, axis_name="i")(np.ones((3, 2)))
    with pytest.raises(ValueError, match="given 2 devices but the mapped axis has size 1"):
        tr.pmap(cases.centered, axis_name="i", devices=tr.devices())(np.ones((1, 2)))
    with pytest.raises(ValueError, match="different sizes along the mapped axis"):
        tr.pmap(cases.scale_shift)(np.ones((2, 3)), np.ones((1, 3)))
    with pytest.raises(ValueError, match="in_axes=0 is out of range for argument 1 of rank 0"):
        tr.pmap(cases.scale_shift)(np.ones((2, 3)), 2.0)
    with pytest.raises(ValueError, match="unknown pmap backend"):
        tr.pmap(cases.centered, backend="tpu")


def test_an_unbound_axis_name_names_the_user_line():
    with pytest.raises(tr.TransformError, match=r"pmap_cases.py:\d+: unbound axis name: 'j'"):
        tr.pmap(cases.wrong_axis, axis_name="i")(X)


def test_collective_outside_pmap_threads_is_refused():
    assert cpu_threads._callback(cpu_threads.OP["axis_index"], 0, 0, 0, 0, 0, -1) == cpu_threads.FAILED


# ------------------------------------------------------------------ example
def test_data_parallel_mlp_example_trains_and_matches_single_device():
    script = Path(__file__).resolve().parent.parent / "examples" / "data_parallel_mlp.py"
    env = dict(os.environ, TRANSFORMER_CPU_DEVICES="2")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                            timeout=900, cwd=script.parent.parent)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "2 CPU devices, 256 points each" in result.stdout
    assert "loss fell: True" in result.stdout
    assert "parameters match single-device training: True" in result.stdout


@pytest.mark.parametrize("fn", [cases.dict_of_results, cases.nested_results], ids=lambda f: f.__name__)
def test_a_dict_or_list_returned_comes_back_as_built(fn):
    """One device's result per row, in the structure the function built (was a tuple in sorted keys'
    order, so that res["a"] failed and res[0] was not the first key written)."""
    x = np.arange(6.0).reshape(2, 3) + 1.0
    result = tr.pmap(fn)(x)             # plain arguments: the compiled function is called directly
    expected = tr.tree_util.tree_map(lambda *rows: np.stack(rows), *[fn(row) for row in x])
    assert tr.tree_util.tree_structure(result) == tr.tree_util.tree_structure(expected)
    for got, want in zip(tr.tree_util.tree_leaves(result), tr.tree_util.tree_leaves(expected)):
        np.testing.assert_array_equal(got, want)
    structured = tr.pmap(lambda d: fn(d["x"]))({"x": x})   # a structured argument: each device's call rebuilds
    assert isinstance(structured, dict) and set(structured) == set(fn(x[0]))


def test_a_collective_outside_any_map_names_the_user_line():
    """lax.psum under jit or grad alone: JAX's unbound axis name, at the line (numba's error named lax)."""
    for transform in (tr.jit, lambda f: tr.jit(f, target="python"), tr.grad):
        with pytest.raises(tr.TransformError, match=r"pmap_cases.py:\d+: unbound axis name: 'j'"):
            transform(cases.wrong_axis)(1.5)


def test_static_broadcasted_argnums_are_constants_every_device_gets():
    summed = tr.pmap(cases.powered, axis_name="i", static_broadcasted_argnums=(1, 2))
    np.testing.assert_allclose(summed(X, 2, "sum"), np.broadcast_to((X ** 2).sum(0), X.shape))
    np.testing.assert_allclose(summed(X, 3, "none"), X ** 3)
    one = tr.pmap(cases.powered, axis_name="i", in_axes=(0, None, None), static_broadcasted_argnums=2)
    np.testing.assert_allclose(one(X, 1.5, "sum"), np.broadcast_to((X ** 1.5).sum(0), X.shape))

    def loss(x):
        return np.sum(summed(x, 2, "sum") ** 2)
    np.testing.assert_allclose(tr.grad(loss)(X), central_difference_grad(loss, (X,)), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="static_broadcasted_argnums"):
        tr.pmap(cases.powered, static_broadcasted_argnums=(3,))
