"""Regression (issue 18's point 4, lambdas and functions in any expression position).  These were
refused: a lambda kept in a tuple with values, a name bound to a named function (``act =
np.tanh``), a helper returning a closure, a loop over a list of functions, a tuple unpacked into a
value and a lambda, lambdas with defaults, keywords or ``*args``, a helper's default that is a
lambda, a list of lambdas made by a comprehension, the items of a dict of functions looped over,
and tr.grad of a lambda with a default.  A function is now a value that
exists while the function is specialised: bound, kept, passed, returned by a helper and looped over
as Python does, with the values a closure reads fixed where Python fixes them.  Which function a
name holds must be known then: a name rebound in a loop or a branch is refused at its line, and so
is a function used as a number."""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad
from regressions import functions_as_values as case

X = np.array([0.3, 0.7, 1.1])

WORKING = [case.named_function_bound, case.closure_from_a_helper, case.closure_called_in_place,
           case.lambda_kept_with_values, case.lambda_unpacked_with_a_value, case.pair_from_a_helper_unpacked,
           case.pair_passed_to_a_helper, case.loop_over_functions, case.loop_over_functions_and_weights,
           case.loop_over_pairs, case.loop_over_a_dict_of_functions, case.loop_over_values,
           case.bound_in_each_branch, case.lambda_default_read_where_written, case.lambda_called_by_keyword,
           case.lambda_with_star_arguments, case.lambda_returning_a_lambda, case.late_binding,
           case.last_function_of_a_tuple, case.helper_default_a_lambda, case.lambdas_made_by_a_comprehension,
           case.gradient_of_a_lambda_with_a_default, case.loop_over_the_items_of_a_dict_of_functions]


@pytest.mark.parametrize("fn", WORKING, ids=lambda fn: fn.__name__)
@pytest.mark.parametrize("target", ["python", "cpu"])
def test_functions_held_as_values_compute_what_python_computes(fn, target):
    for x in (X, -X):
        assert tr.jit(fn, target=target)(x) == pytest.approx(fn(x), rel=1e-12)
        np.testing.assert_allclose(tr.jit(tr.grad(fn), target=target)(x), central_difference_grad(fn, (x,)),
                                   rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("fn", [case.closure_from_a_helper, case.loop_over_pairs, case.lambda_returning_a_lambda],
                         ids=lambda fn: fn.__name__)
def test_forward_mode_and_batching_agree(fn):
    direction = np.array([0.5, -1.0, 2.0])
    _, tangent = tr.jvp(fn, (X,), (direction,))
    assert tangent == pytest.approx(float(central_difference_grad(fn, (X,)) @ direction), rel=1e-6)
    batch = np.stack([X, -X, 0.5 * X])
    np.testing.assert_allclose(tr.vmap(fn)(batch), [fn(row) for row in batch], rtol=1e-12)


def where(fn, offset):
    return rf"functions_as_values\.py:{fn.__code__.co_firstlineno + offset}:"


@pytest.mark.parametrize("fn, offset, message", [
    (case.rebound_in_a_loop, 5, "'f' is bound to a function and bound again in another block"),
    (case.rebound_in_a_branch, 3, "'f' is bound to a function and bound again in another block"),
    (case.function_added, 2, "the function 'f' used as a value"),
], ids=lambda v: getattr(v, "__name__", None))
def test_a_function_python_would_choose_at_run_time_or_use_as_a_number_is_refused(fn, offset, message):
    with pytest.raises(tr.TransformError, match=where(fn, offset) + ".*" + message):
        tr.grad(fn)(X)


def test_a_value_called_is_refused_at_the_call():
    with pytest.raises(tr.TransformError, match=where(case.value_called, 1) + r"12: calling g, which holds a value"):
        tr.grad(case.value_called)(X, X)
