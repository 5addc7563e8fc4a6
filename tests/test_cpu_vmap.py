"""jit(vmap(f)) of per-example code with loops: the CPU compiles a loop over
examples running the un-batched code (backends/cpu_vmap.py), checked against
a Python loop over examples of the user's own function."""
import numpy as np
import pytest

import corpus_vmap
import cpu_vmap_cases as cases
import transformer as tr

STRATEGY = "strategy: per-example code with loops runs as written"


def test_data_dependent_while_runs_once_per_example():
    x0 = np.random.default_rng(0).uniform(0.05, 5.0, size=37)
    batched = tr.jit(tr.vmap(corpus_vmap.ode_steps))
    np.testing.assert_allclose(batched(x0), [corpus_vmap.ode_steps(x) for x in x0], rtol=1e-12)
    assert STRATEGY in tr.show(batched, x0)


def test_integer_code_with_two_results_and_an_unbatched_argument():
    n = np.arange(1, 30)
    steps, last = tr.jit(tr.vmap(cases.collatz_steps, in_axes=(0, None)))(n, 50)
    expected = [cases.collatz_steps(int(k), 50) for k in n]
    np.testing.assert_array_equal(steps, [e[0] for e in expected])
    np.testing.assert_array_equal(last, [e[1] for e in expected])
    assert steps.dtype.kind == "i"


def test_each_example_may_be_an_array():
    rows = np.random.default_rng(1).uniform(0.5, 1.5, size=(6, 4))
    got = tr.jit(tr.vmap(cases.row_power_sum, in_axes=(0, None)))(rows, 3)
    np.testing.assert_allclose(got, [cases.row_power_sum(r, 3) for r in rows], rtol=1e-12)


def test_per_example_gradients_of_a_taped_loop():
    # batched, reverse mode's tape has no batching rule; once per example it is the ordinary tape
    x = np.linspace(-1.0, 1.0, 9)
    got = tr.jit(tr.vmap(tr.grad(cases.taped_loop)))(x)
    np.testing.assert_allclose(got, [tr.grad(cases.taped_loop)(v) for v in x], rtol=1e-12)


def test_straight_line_code_keeps_the_batched_strategy():
    # no loop: one vectorised pass per operation beats a call per example
    x = np.linspace(0.0, 1.0, 5)
    batched = tr.jit(tr.vmap(cases.straight_line, in_axes=(0, None)))
    np.testing.assert_allclose(batched(x, 2.0), [cases.straight_line(v, 2.0) for v in x], rtol=1e-12)
    assert STRATEGY not in tr.show(batched, x, 2.0)


def test_zero_examples_is_a_clear_error():
    with pytest.raises(ValueError, match="zero examples"):
        tr.jit(tr.vmap(corpus_vmap.ode_steps))(np.zeros(0))


def test_an_error_in_one_example_reaches_the_caller_as_itself():
    # the loop over examples is a prange: numba wraps what a parallel loop raises in a SystemError
    with pytest.raises(ZeroDivisionError):
        tr.jit(tr.vmap(cases.inverse_steps))(np.array([1.0, 2.0, 0.0, 3.0]))
