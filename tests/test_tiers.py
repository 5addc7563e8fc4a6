"""Tiered execution (transformer/tiers.py): first calls on the python tier, numba compiling aside.

Each test turns tiering on itself: the rest of the suite runs with TRANSFORMER_TIERED=0
(tests/conftest.py) so that it tests compiled code from the first call.  The background compiles
here are real processes writing numba's on-disk cache.
"""
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import numerics_cases
import jit_cases
import tier_cases
import transformer as tr
from transformer import staging, tiers

COMPILE_TIMEOUT_S = 600


def _mlp_args():
    rng = np.random.default_rng(0)
    return (rng.normal(size=(6, 4)), rng.normal(size=4)), rng.normal(size=(5, 6))


def _mlp_value_and_grad_by_differences(params, x, h=1e-6):
    w, b = params
    value = tier_cases.mlp_loss(params, x)
    grads = []
    for which, array in enumerate((w, b)):
        g = np.zeros_like(array)
        for i in np.ndindex(array.shape):
            up, down = [a.copy() for a in (w, b)], [a.copy() for a in (w, b)]
            up[which][i] += h
            down[which][i] -= h
            g[i] = (tier_cases.mlp_loss(tuple(up), x) - tier_cases.mlp_loss(tuple(down), x)) / (2 * h)
        grads.append(g)
    return value, tuple(grads)


def test_first_calls_run_on_the_python_tier_then_on_code_the_background_compile_cached():
    params, x = _mlp_args()
    f = tr.jit(tr.value_and_grad(tier_cases.mlp_loss), tiered=True)
    expected_value, expected_grads = _mlp_value_and_grad_by_differences(params, x)

    value, grads = f(params, x)
    assert tr.tier_of(f) == "python"
    assert tr.show(f, params, x).startswith("# tiered: the last call ran on the python tier")
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    for g, e in zip(grads, expected_grads):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)

    (build,) = f.tiers()
    assert build.wait(COMPILE_TIMEOUT_S)
    assert build.process.returncode == 0
    compiled_value, compiled_grads = f(params, x)
    assert tr.tier_of(f) == "compiled"
    assert tr.show(f, params, x).startswith("# tiered: the last call ran on the compiled tier")
    # the same numbers within reassociation, and numba loaded them from the cache the other process wrote
    np.testing.assert_allclose(compiled_value, value, rtol=1e-12)
    for c, g in zip(compiled_grads, grads):
        np.testing.assert_allclose(c, g, rtol=1e-12, atol=1e-14)
    stats = build.dispatcher.stats
    assert sum(stats.cache_hits.values()) >= 1 and sum(stats.cache_misses.values()) == 0


def test_a_python_tier_call_still_running_when_the_compile_ends_is_answered_by_compiled_code():
    def python_tier_that_never_ends(*args):
        deadline = time.monotonic() + COMPILE_TIMEOUT_S
        while time.monotonic() < deadline:
            time.sleep(0.01)
        return "the python tier ran to its end"

    x = np.linspace(0.0, 1.0, 7)
    build = tiers.Tiered(lambda: python_tier_that_never_ends,
                         lambda: staging.build(tier_cases.scaled_sine, (), "cpu"),
                         lambda: staging.write_modules(tier_cases.scaled_sine, (), ("cpu",))["cpu"])
    result = build(x)
    np.testing.assert_allclose(result, tier_cases.scaled_sine(x), rtol=1e-12)
    assert build.calls == {"python": 0, "compiled": 1} and build.last_tier == "compiled"


def test_a_python_tier_error_is_answered_by_the_compiled_tiers_own_error():
    f = tr.jit(jit_cases.adds_text, tiered=True)
    with pytest.raises(tr.CompileError, match=r"jit_cases\.py:31"):
        f(np.ones(3))


def test_code_numba_cannot_type_answers_on_the_python_tier_then_raises_numbas_error():
    # total starts as the int 0 and becomes an array: NumPy runs it, numba cannot type it
    f = tr.jit(numerics_cases.int_poly, tiered=True)
    k = np.arange(5)
    np.testing.assert_array_equal(f(k, 3), numerics_cases.int_poly(k, 3))
    assert tr.tier_of(f) == "python"
    (build,) = f.tiers()
    assert build.wait(COMPILE_TIMEOUT_S) and build.process.returncode != 0
    with pytest.raises(tr.CompileError, match=r"numerics_cases\.py:20: numba cannot compile this line"):
        f(k, 3)


def test_tiering_is_opted_out_by_jit_or_by_the_environment(monkeypatch):
    x = np.linspace(0.0, 1.0, 4)
    assert not isinstance(tr.jit(tier_cases.scaled_sine, tiered=False).compiled(x), tiers.Tiered)
    monkeypatch.setenv("TRANSFORMER_TIERED", "0")
    untiered = tr.jit(tier_cases.scaled_sine)
    np.testing.assert_allclose(untiered(x), tier_cases.scaled_sine(x), rtol=1e-12)
    assert tr.tier_of(untiered) == "compiled" and not untiered.tiers()     # its only tier
    monkeypatch.setenv("TRANSFORMER_TIERED", "1")
    assert isinstance(tr.jit(tier_cases.scaled_sine).compiled(x), tiers.Tiered)
    assert isinstance(tr.jit(tr.vmap(tier_cases.scaled_sine), tiered=True).compiled(x), tiers.Tiered)


def test_a_first_call_loads_no_numba_and_the_switch_loads_it(tmp_path):
    # numba takes a tenth of a second or more to load: the first call writes the cpu module and
    # answers on the python tier without it (a fresh process, so that nothing loaded it before)
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import transformer as tr
        import tier_cases
        f = tr.jit(tr.grad(tier_cases.mlp_loss), tiered=True)
        params, x = (np.ones((3, 2)), np.zeros(2)), np.ones((4, 3))
        first = f(params, x)
        print(tr.tier_of(f), "numba" in sys.modules)
        f.tiers()[0].wait()
        second = f(params, x)
        print(tr.tier_of(f), "numba" in sys.modules)
        assert all(np.allclose(a, b, rtol=1e-12) for a, b in zip(first, second))
    """)
    env = dict(os.environ, TRANSFORMER_CACHE_DIR=str(tmp_path / "cache"), NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               PYTHONPATH=os.pathsep.join([str(Path(__file__).parent)] + sys.path))
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=COMPILE_TIMEOUT_S)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["python", "False", "compiled", "True"]


def test_background_compiles_queue_for_a_free_slot(monkeypatch):
    # each compile is a process of a few hundred MB: a program's many first calls must not start
    # them all at once (one slot here; the suite's machine may have more)
    monkeypatch.setattr(tiers, "_COMPILE_SLOTS", tiers.threading.BoundedSemaphore(1))
    x = np.linspace(0.0, 1.0, 5)
    first = tr.jit(tier_cases.scaled_sine, tiered=True)
    second = tr.jit(tr.vmap(tier_cases.scaled_sine), tiered=True)
    np.testing.assert_allclose(first(x), tier_cases.scaled_sine(x), rtol=1e-12)
    np.testing.assert_allclose(second(x), tier_cases.scaled_sine(x), rtol=1e-12)
    builds = first.tiers() + second.tiers()
    deadline = time.monotonic() + COMPILE_TIMEOUT_S
    while not all(b.wait(0) for b in builds) and time.monotonic() < deadline:
        running = [b for b in builds if b.process is not None and b.process.poll() is None]
        assert len(running) <= 1
        time.sleep(0.01)
    assert all(b.wait(0) and b.process.returncode == 0 for b in builds)


def test_a_derived_transform_is_tiered_through_the_functions_it_calls():
    # jit(hessian(f)) calls a generated function over the basis vectors: it is a tiered build
    f = tr.jit(tr.hessian(tier_cases.scaled_sine_sum), tiered=True)
    v = np.linspace(0.1, 0.9, 4)
    first = f(v)
    assert tr.tier_of(f) == "python" and f.tiers()
    assert f.wait_until_compiled(COMPILE_TIMEOUT_S)
    np.testing.assert_allclose(f(v), first, rtol=1e-12, atol=1e-14)
    assert tr.tier_of(f) == "compiled"
    np.testing.assert_allclose(first, np.diag(-2.0 * np.sin(v)), rtol=1e-12, atol=1e-14)
