"""Regression (issue 18's point 4, lambdas in any expression position): a lambda held by a dict or
list display was refused ("a lambda here is not supported"), and ``[f, g][1](x)`` was refused as a
call of "a NoneType from builtins".  A display of functions is now a table whose entries are called
by a key known when the function is specialised; a key it lacks is refused at the user's line."""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad
from regressions import lambdas_in_displays as case

X = np.array([0.3, -0.4, 0.9])


@pytest.mark.parametrize("fn", [case.table_of_functions, case.list_of_lambdas_called_in_place])
@pytest.mark.parametrize("target", ["python", "cpu"])
def test_functions_held_by_displays_are_called_by_key(fn, target):
    assert tr.jit(fn, target=target)(X) == pytest.approx(fn(X))
    np.testing.assert_allclose(tr.jit(tr.grad(fn), target=target)(X), central_difference_grad(fn, (X,)),
                               rtol=1e-7, atol=1e-9)


def test_a_key_the_table_lacks_is_refused_at_its_line():
    with pytest.raises(tr.TransformError, match=r"lambdas_in_displays\.py:22.*no entry is stored under 'cube'"):
        tr.grad(case.missing_key)(X)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_table_indexed_at_run_time_is_an_if_chain(target):
    # it was refused ("indexed with a key known only at run time"); negative keys count from the end
    fn = case.table_indexed_at_run_time
    assert tr.jit(fn, target=target)(X) == pytest.approx(fn(X))
    np.testing.assert_allclose(tr.jit(tr.grad(fn), target=target)(X), central_difference_grad(fn, (X,)),
                               rtol=1e-7, atol=1e-9)


def test_a_key_out_of_range_raises_as_the_list_would():
    with pytest.raises(IndexError):
        tr.jit(case.out_of_range, target="python")(X, 2)


def test_a_dict_indexed_at_run_time_is_refused_with_advice():
    with pytest.raises(tr.TransformError, match=r"lambdas_in_displays\.py:35.*a dict of functions indexed with a key "
                                                r"known only at run time"):
        tr.grad(case.dict_indexed_at_run_time)(X, 1)
