"""jit(vmap(f)) of per-example arithmetic with while loops runs groups of examples
in SIMD lanes (backends/cpu_lanes.py): its results must equal, to the bit, those
of the per-example code (a Python loop of jit(f) calls) for every example."""
import numpy as np
import pytest

import corpus_vmap
import lanes_cases as cases
import transformer as tr
from transformer.backends import cpu_lanes

IN_LANES = "in SIMD lanes"


def one_at_a_time(fn, *columns):
    single = tr.jit(fn)
    results = [single(*(c[i] for c in columns)) for i in range(len(columns[0]))]
    if isinstance(results[0], tuple):
        return tuple(np.array([r[k] for r in results]) for k in range(len(results[0])))
    return np.array(results)


def assert_same(got, want):
    for g, w in zip(*((r if isinstance(r, tuple) else (r,)) for r in (got, want))):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("count", [1, cpu_lanes.GROUP_MIN - 1, cpu_lanes.GROUP_MIN, cpu_lanes.GROUP_MIN + 1,
                                   300, 9000])
def test_the_lanes_equal_the_examples_run_alone(count):
    x0 = np.random.default_rng(count).uniform(0.005, 10.0, size=count)   # some below 0.01: no step at all
    batched = tr.jit(tr.vmap(corpus_vmap.ode_steps))
    assert_same(batched(x0), one_at_a_time(corpus_vmap.ode_steps, x0))
    assert IN_LANES in tr.show(batched, x0)


def test_an_integer_counter_and_two_results():
    x = np.random.default_rng(1).uniform(0.1, 1e6, size=100)
    got = tr.jit(tr.vmap(cases.halvings))(x)
    assert got[0].dtype.kind == "i"
    assert_same(got, one_at_a_time(cases.halvings, x))


def test_two_arguments_and_two_loops():
    rng = np.random.default_rng(2)
    position, velocity = rng.uniform(0.5, 2.0, size=90), rng.uniform(-1.0, 1.0, size=90)
    batched = tr.jit(tr.vmap(cases.spring))
    assert_same(batched(position, velocity), one_at_a_time(cases.spring, position, velocity))
    assert tr.show(batched, position, velocity).count("while any lane of the group is active") == 2


@pytest.mark.parametrize("slow", [1, 3, 9])
def test_a_few_slow_examples_are_swept_on_their_own(slow):
    x = np.random.default_rng(slow).uniform(1.0, 2.0, size=200)
    x[::200 // slow][:slow] = 1e12             # thousands of steps where the others take dozens
    batched = tr.jit(tr.vmap(cases.halvings_then_countdown))
    assert_same(batched(x), one_at_a_time(cases.halvings_then_countdown, x))


def test_a_value_the_same_in_every_active_lane_is_computed_once_a_step():
    x0 = np.random.default_rng(8).uniform(0.005, 10.0, size=500)
    batched = tr.jit(tr.vmap(corpus_vmap.ode_steps))
    code = tr.show(batched, x0)
    once = code[code.index("computed once a step"):code.index("for lane in range(swept)")]
    assert "vm.sin(t)" in once and "t_next = t +" in once      # not a sin per lane
    assert_same(batched(x0), one_at_a_time(corpus_vmap.ode_steps, x0))


def test_a_uniform_value_read_before_and_after_the_step_sets_it_again():
    x = np.random.default_rng(9).uniform(0.6, 50.0, size=400)
    batched = tr.jit(tr.vmap(cases.uniform_read_before_and_after_its_step))
    assert_same(batched(x), one_at_a_time(cases.uniform_read_before_and_after_its_step, x))
    assert "computed once a step" in tr.show(batched, x)


def test_values_stay_at_their_examples_when_the_active_lanes_move_to_the_front():
    x = np.random.default_rng(10).uniform(0.5, 1e9, size=3000)      # 0 to 30 halvings
    batched = tr.jit(tr.vmap(cases.kept_beside_a_loop))
    assert "active_first(" in tr.show(batched, x)
    assert_same(batched(x), one_at_a_time(cases.kept_beside_a_loop, x))


def test_the_callers_arrays_are_left_as_they_were():
    rng = np.random.default_rng(11)
    x, rate = rng.uniform(0.5, 5.0, size=700), rng.uniform(0.01, 0.5, size=700)
    x_before, rate_before = x.copy(), rate.copy()
    got = tr.jit(tr.vmap(cases.decay_at_a_rate))(x, rate)
    np.testing.assert_array_equal(x, x_before)
    np.testing.assert_array_equal(rate, rate_before)
    assert_same(got, one_at_a_time(cases.decay_at_a_rate, x, rate))


@pytest.mark.parametrize("count", [1, 100, 512, 513, 10_000, 10**7])
def test_a_group_is_a_multiple_of_64_examples_within_its_bounds(count):
    size = cpu_lanes.group_size(count)
    assert cpu_lanes.GROUP_MIN <= size <= cpu_lanes.GROUP_MAX and size % 64 == 0
    if count >= 4 * cpu_lanes._THREADS * cpu_lanes.GROUP_MAX:
        assert size == cpu_lanes.GROUP_MAX


def test_a_variable_that_becomes_a_float_in_the_loop_is_a_float_in_every_lane():
    x = np.random.default_rng(7).uniform(0.5, 1e4, size=80)
    got = tr.jit(tr.vmap(cases.count_that_becomes_a_float))(x)
    assert got.dtype == np.float64
    assert_same(got, one_at_a_time(cases.count_that_becomes_a_float, x))


def test_float32_examples_keep_their_dtype():
    # as NumPy runs the function on float32 scalars (halving is exact: equal to the bit)
    x0 = np.random.default_rng(3).uniform(0.05, 500.0, size=70).astype(np.float32)
    counts, rests = tr.jit(tr.vmap(cases.halvings))(x0)
    expected = [cases.halvings(v) for v in x0]
    assert rests.dtype == np.float32
    np.testing.assert_array_equal(counts, [e[0] for e in expected])
    np.testing.assert_array_equal(rests, np.array([e[1] for e in expected], dtype=np.float32))


def test_sin_beyond_the_kernels_range_is_computed_one_example_at_a_time():
    # groups whose arguments pass 2e5 take the per-example path: still equal to the bit
    t0 = np.concatenate([np.linspace(0.0, 10.0, 64), np.linspace(1e6, 2e6, 64), np.array([np.inf, 5e5])])
    assert_same(tr.jit(tr.vmap(cases.sin_of_large_times))(t0), one_at_a_time(cases.sin_of_large_times, t0))


@pytest.mark.parametrize("fn", [cases.divides_by_a_variable, cases.branches_inside,
                                cases.set_again_after_a_loop])
def test_what_a_finished_lane_could_not_compute_keeps_the_per_example_loop(fn):
    x = np.random.default_rng(4).uniform(0.5, 40.0, size=20)
    batched = tr.jit(tr.vmap(fn))
    assert IN_LANES not in tr.show(batched, x)
    assert_same(batched(x), one_at_a_time(fn, x))


def test_an_argument_shared_by_every_example_keeps_the_per_example_loop():
    x = np.random.default_rng(5).uniform(0.5, 4.0, size=20)
    batched = tr.jit(tr.vmap(cases.scaled_steps, in_axes=(0, None)))
    assert IN_LANES not in tr.show(batched, x, 0.5)
    np.testing.assert_array_equal(batched(x, 0.5), [cases.scaled_steps(v, 0.5) for v in x])


def test_examples_that_are_arrays_take_the_per_example_loop():
    # one generated driver: numba keeps the lanes for one scalar per example, and compiles
    # the per-example loop for rows (the lanes would be the wrong code for them)
    batched = tr.jit(tr.vmap(cases.scaled_by_a_count))
    scalars = np.linspace(0.5, 3.0, 70)
    rows = np.linspace(0.5, 3.0, 21).reshape(7, 3)
    assert_same(batched(scalars), one_at_a_time(cases.scaled_by_a_count, scalars))
    np.testing.assert_array_equal(batched(rows), np.array([cases.scaled_by_a_count(r) for r in rows]))
    assert IN_LANES in tr.show(batched, scalars)
