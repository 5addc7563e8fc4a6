"""The CPU target keeps arrays of a few elements whose shape the code fixes as a number per element
(backends/numba_small_arrays.py).  Its results must be the python target's (the generated NumPy,
not compiled), to the bit where NumPy's order of addition is kept, and an array used in a way the
pass cannot follow keeps its array."""
import numpy as np
import pytest

import small_array_cases as cases
import small_array_programs
import transformer as tr
from oracles import central_difference_grad
from transformer import rules
from transformer.backends import numba_small_arrays


def compiled_and_python(fn, *args):
    compiled = tr.jit(fn)
    return compiled, compiled(*args), fn(*args), tr.show(compiled, *args)


def test_a_particle_loop_and_its_gradient_are_numbers_per_element():
    for transform in (lambda f: f, tr.grad):
        compiled, got, want, code = compiled_and_python(transform(cases.particle), 0.2)
        assert "np.asarray" not in code and "x_0 = 0.0" in code and "x_1 = 8.0" in code
        np.testing.assert_allclose(got, want, rtol=1e-13)
    # the gradient against an oracle that needs nothing of ours
    np.testing.assert_allclose(tr.jit(tr.grad(cases.particle))(0.2),
                               central_difference_grad(cases.particle, (0.2,), argnum=0), rtol=1e-6)
    # the tape of a two-element array holds tuples of its elements; the position's tape, read
    # by the backward sweep only for its shape (which the numbers no longer need), is dropped
    code = tr.show(tr.jit(tr.grad(cases.particle)), 0.2)
    assert "velocity_stack.append((velocity_0, velocity_1))" in code
    assert "x_stack" not in code


def test_the_particle_s_forward_mode_derivative_is_numbers_per_element():
    compiled, got, want, code = compiled_and_python(cases.particle_by_forward_mode, 0.2)
    assert "np.asarray" not in code and "np.zeros_like" not in code
    np.testing.assert_allclose(got, want, rtol=1e-13)
    np.testing.assert_allclose(got, central_difference_grad(cases.particle, (0.2,), argnum=0), rtol=1e-6)


def test_a_for_loop_over_three_vectors_and_its_gradient():
    compiled, got, want, code = compiled_and_python(cases.damped_spring, 1.3)
    assert "np.asarray" not in code and "v_2 = 0.5" in code
    np.testing.assert_allclose(got, want, rtol=1e-13)
    gradient = tr.jit(tr.grad(cases.damped_spring))
    assert "np.asarray" not in tr.show(gradient, 1.3)
    np.testing.assert_allclose(gradient(1.3), tr.grad(cases.damped_spring)(1.3), rtol=1e-12)
    np.testing.assert_allclose(gradient(1.3), central_difference_grad(cases.damped_spring, (1.3,), argnum=0),
                               rtol=1e-6)


@pytest.mark.parametrize("fn", [cases.sums_in_numpy_order, cases.sums_along_axes])
def test_sums_add_in_numpy_s_order(fn):
    for x in (0.7, -3.25, 1e9):
        compiled, got, want, code = compiled_and_python(fn, x)
        assert "np.asarray" not in code
        assert got == want                       # to the bit


def test_a_float32_element_is_cast_as_np_array_casts_it():
    compiled, got, want, code = compiled_and_python(cases.float32_element, np.float32(0.1))
    assert "nl.as_float64(w)" in code
    assert got == want and np.asarray(got).dtype == np.float64


def test_division_by_zero_gives_inf_as_the_array_did():
    compiled, got, want, code = compiled_and_python(cases.division_by_zero, 2.0)
    assert "np.asarray" not in code and "np.divide(" in code
    assert got == want == np.inf


@pytest.mark.parametrize("fn", [cases.returned, cases.shared_then_written, cases.shared_then_written_in_a_loop])
def test_arrays_used_another_way_stay_arrays(fn):
    compiled, got, want, code = compiled_and_python(fn, 1.5)
    assert "np.asarray" in code
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fn", [cases.written_while_fresh, cases.written_after_made_from_a_tuple,
                                cases.names_like_elements])
def test_an_array_written_while_nothing_else_holds_it_is_numbers(fn):
    compiled, got, want, code = compiled_and_python(fn, 1.5)
    assert "np.asarray" not in code
    assert got == want


def test_a_read_out_of_bounds_keeps_its_array():
    # numba reads arrays unchecked: the pass does not make that read a number
    assert "np.asarray" in tr.show(tr.jit(cases.read_out_of_bounds), 1.0)
    with pytest.raises(IndexError):
        cases.read_out_of_bounds(1.0)


def test_an_array_inside_the_tuple_is_refused_as_before():
    with pytest.raises(tr.TransformError):
        tr.jit(cases.element_is_an_array)(np.ones(2))


def test_the_cpu_table_names_only_forms_the_pass_has():
    named = {options["small_arrays"] for name in rules.table("cpu")
             if (options := rules.options("cpu", name)) and "small_arrays" in options}
    assert named and named <= set(numba_small_arrays._FORMS)


@pytest.mark.parametrize("stiffnesses", [(1.3, np.float32(1.3), 2, np.array(1.3), np.array([1.0, 2.0, 3.0])),
                                         (np.array([1.0, 2.0, 3.0]), 1.3)])
def test_an_argument_met_by_a_small_array_is_checked_to_be_a_number(stiffnesses):
    # numbers per element while k is a number; where it is an array the function kept with its
    # arrays runs (from then on), giving what NumPy gives either way
    compiled = tr.jit(cases.spring_of_stiffness, tiered=False)
    code = tr.show(compiled, 1.3)
    assert "nl.number(_t0) * x_0" in code and "def spring_of_stiffness_with_arrays(k):" in code
    for k in stiffnesses:
        assert compiled(k) == cases.spring_of_stiffness(k)
        if not isinstance(k, int):                             # (grad takes no integer)
            gradient = tr.jit(tr.grad(cases.spring_of_stiffness), tiered=False)(k)
            np.testing.assert_allclose(gradient, tr.grad(cases.spring_of_stiffness)(k), rtol=1e-13)


def test_a_tiered_first_call_compiles_the_function_that_runs():
    # the background compile meets the refused check too, and compiles the function with arrays
    compiled = tr.jit(cases.spring_of_stiffness, tiered=True)
    k = np.array([1.0, 2.0, 3.0])
    assert compiled(k) == cases.spring_of_stiffness(k) and tr.tier_of(compiled) == "python"
    (build,) = compiled.tiers()
    assert build.wait(120) and build.process.returncode == 0
    assert compiled(k) == cases.spring_of_stiffness(k) and tr.tier_of(compiled) == "compiled"


# ------------------------------------------------------------------ random programs
@pytest.mark.parametrize("seed", range(16))
def test_random_programs_give_numpy_s_numbers_to_the_bit(seed, tmp_path):
    f = small_array_programs.load(small_array_programs.program(seed), tmp_path, f"small_arrays_{seed}")
    compiled = tr.jit(f, tiered=False)
    for a, b, k in [(0.3, -1.2, 0.7), (2.5, 0.5, np.float32(-1.5)), (-0.75, 3.0, 2)]:
        want = f(a, b, k)
        assert compiled(a, b, k) == want or (np.isnan(want) and np.isnan(compiled(a, b, k)))


@pytest.mark.parametrize("seed", range(100, 106))
def test_random_programs_gradients_agree_with_the_python_target(seed, tmp_path):
    f = small_array_programs.load(small_array_programs.program(seed, shared_writes=False), tmp_path, f"small_arrays_{seed}")
    for argnum in (0, 2):
        want = tr.grad(f, argnums=argnum)(0.3, -1.2, 0.7)
        got = tr.jit(tr.grad(f, argnums=argnum), tiered=False)(0.3, -1.2, 0.7)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got, central_difference_grad(f, (0.3, -1.2, 0.7), argnum=argnum),
                                   rtol=1e-5, atol=1e-7)
