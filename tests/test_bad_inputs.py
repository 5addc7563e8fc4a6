"""Every bad input is refused: the right exception type, a message that says
what is wrong and, where the fault is in the user's code, names the user's
file and line.  None of these may return a number.

User functions live in ``bad_input_cases.py``; the offending line of each is
marked ``# refused: NAME``, so the expected line number is read from the file.
"""
import re
from pathlib import Path

import numpy as np
import pytest

import bad_input_cases as bad
from oracles import central_difference_grad
import transformer as tr

CASES_FILE = Path(bad.__file__)
X = np.linspace(0.1, 1.0, 3)
_MARKED = {m.group(1): number for number, line in enumerate(CASES_FILE.read_text().splitlines(), 1)
           for m in [re.search(r"# refused: (\w+)", line)] if m}


def refused_line(name: str) -> str:
    return f"bad_input_cases.py:{_MARKED[name]}:"


def python_jit(fn):
    return tr.jit(fn, target="python")


# ------------------------------------------- faults in the user's own source
# (marker, user function, how it is called, words the message must contain)
SOURCE_FAULTS = [
    ("try", bad.with_try, "try/except"),
    ("raise", bad.with_raise, "raise statement"),
    ("yield", bad.with_yield, "yield"),
    ("with", bad.with_with, "with-statement"),
    ("global", bad.with_global, "global statement"),
    ("del", bad.with_del, "del statement"),
    ("class", bad.with_class, "class definition"),
    ("star_args", bad.with_star_args, r"\*args"),
    ("kwargs", bad.with_kwargs, r"\*\*kwargs"),
    ("set", bad.with_set_literal, "set literal"),
    ("comprehension", bad.with_list_comprehension, "list comprehension"),
    ("string_method", bad.with_string_method, r"\.upper\(\)"),
    ("walrus", bad.walrus, r"assignment expression"),
    ("lambda", bad.with_lambda_inside, "'square' is bound to a function and bound again in another block"),
    ("assert", bad.with_assert, "assert statement"),
    ("fstring", bad.with_fstring, "f-string"),
    ("dict_write", bad.with_dict_update, "writing into an entry of a dict"),
    ("import", bad.with_import, "import"),
    ("nonlocal", bad.with_nonlocal_maker(), "nonlocal statement"),
    ("print", bad.calls_print, r"call to print.*neither a supported primitive"),
    ("open", bad.calls_open, r"call to open"),
    ("gamma", bad.calls_unknown_math, r"math\.gamma"),
    ("undefined", bad.calls_undefined, r"'not_defined_anywhere' is not defined"),
    ("global_dict", bad.reads_mutable_dict, r"'REGISTRY', a dict \(mutable state\)"),
    ("global_list", bad.reads_mutable_list, r"'HISTORY', a list \(mutable state\)"),
    ("append", bad.appends, r"\.append\(\)"),
    ("closure_list", bad.make_closure_over_list(), r"'seen', a list \(mutable state\)"),
    ("closure_dict", bad.make_closure_over_dict(), r"'config', a dict \(mutable state\)"),
    ("reversed_enumerate", bad.reversed_enumerate, r"reversed\(\) of enumerate\(\)"),
    ("reversed_step", bad.reversed_stepped_range, r"reversed\(\) of a range with a step.*negative step"),
]


# vmap refuses *args/**kwargs earlier, in its argument check (in_axes has one entry per parameter)
_SOURCE_RUNS = [(transform, *case) for case in SOURCE_FAULTS for transform in ("jit", "grad", "vmap")
                if not (transform == "vmap" and case[0] in ("star_args", "kwargs"))]


@pytest.mark.parametrize("transform, marker, fn, words", _SOURCE_RUNS, ids=[f"{r[1]}-{r[0]}" for r in _SOURCE_RUNS])
def test_unsupported_source_is_refused_at_its_line(transform, marker, fn, words):
    transformed = {"jit": python_jit, "grad": tr.grad, "vmap": tr.vmap}[transform](fn)
    args = (X[None, :].repeat(2, 0),) if transform == "vmap" else (X,)
    with pytest.raises(tr.TransformError, match=words) as info:
        transformed(*args)
    assert refused_line(marker) in str(info.value)
    assert str(CASES_FILE) in str(info.value)                 # the full path, so editors can jump there


@pytest.mark.parametrize("fn, marker, chain", [(bad.recursive, "recursion", "recursive -> recursive"),
                                                 (bad.ping, "mutual_recursion", "ping -> pong -> ping")])
def test_recursion_is_refused_naming_the_cycle(fn, marker, chain):
    for transformed in (python_jit(fn), tr.grad(fn)):
        with pytest.raises(tr.TransformError, match=f"recursion \\({chain}\\)") as info:
            transformed(X, 2)
        assert refused_line(marker) in str(info.value)


def test_unknown_numpy_call_is_named():
    with pytest.raises(tr.TransformError, match=r"np\.fft\.fft") as info:
        python_jit(bad.calls_unknown_numpy)(X)
    assert refused_line("fft") in str(info.value)


def test_unknown_numpy_call_is_refused_at_its_line():
    with pytest.raises(tr.TransformError) as info:
        tr.grad(bad.calls_unknown_numpy)(X)
    assert refused_line("fft") in str(info.value)


@pytest.mark.parametrize("nested", [lambda f: tr.jacrev(tr.jacrev(f)), lambda f: tr.jacfwd(tr.jacfwd(f)),
                                    lambda f: tr.jacrev(tr.jacfwd(f))], ids=["jacrev2", "jacfwd2", "jacrev-jacfwd"])
def test_unknown_numpy_call_under_nested_jacobians_is_refused_at_its_line(nested):
    # the outer Jacobian transforms code transformer wrote around the inner one: the error named a
    # line of that file in the cache, not the user's
    with pytest.raises(tr.TransformError) as info:
        nested(bad.calls_unknown_numpy)(X)
    assert refused_line("fft") in str(info.value)


def test_where_of_a_condition_alone_is_refused_by_vmap_at_its_line():
    # np.nonzero's indices, as many as the values say: an elementwise rule took it for np.where(c, x, y)
    # and the generated code failed (a tuple indexed as an array)
    batch = np.stack([X, X[::-1] - 0.3])
    with pytest.raises(tr.TransformError, match=r"np\.where\(\) without its x, y") as info:
        tr.vmap(bad.where_of_a_condition_alone)(batch)
    assert refused_line("where_alone") in str(info.value)
    assert python_jit(bad.where_of_a_condition_alone)(X) == bad.where_of_a_condition_alone(X)


def test_a_loop_over_a_list_of_arrays_is_unrolled_and_differentiated():
    # once refused ("a tuple or list of arrays held in one variable"): a loop over a list whose
    # length is known when the function is specialised is now unrolled, as JAX's tracing unrolls it
    assert python_jit(bad.sums_a_list_of_arrays)(X) == pytest.approx(bad.sums_a_list_of_arrays(X))
    for transformed in (tr.grad(bad.sums_a_list_of_arrays), tr.jit(tr.grad(bad.sums_a_list_of_arrays))):
        np.testing.assert_allclose(transformed(X), central_difference_grad(bad.sums_a_list_of_arrays, (X,)),
                                   rtol=1e-7, atol=1e-9)


# ------------------------------------------------ functions without source
def test_function_made_by_exec_has_no_source():
    namespace = {"np": np}
    exec("def made(x):\n    return np.sum(x)\n", namespace)
    for transform in (python_jit, tr.grad):
        with pytest.raises(tr.NoSourceError, match="made has no source"):
            transform(namespace["made"])(X)


def test_builtin_function_is_not_a_python_function():
    with pytest.raises(tr.TransformError, match="not a Python function"):
        python_jit(np.sin)(X)


def test_bound_method_is_refused():
    class Model:
        def loss(self, x):
            return np.sum(x)
    with pytest.raises(tr.TransformError, match="bound method"):
        tr.grad(Model().loss)(X)


# ------------------------------------------------------------------- grad
def test_grad_of_vector_output():
    with pytest.raises(TypeError, match="scalar"):
        tr.grad(bad.vector_out)(X)


def test_grad_of_tuple_output_without_has_aux():
    with pytest.raises(TypeError, match="scalar"):
        tr.grad(bad.tuple_out)(X)


def test_grad_argnums_at_an_int_argument():
    with pytest.raises(TypeError, match="argument 1|int"):
        tr.grad(bad.two_args, argnums=1)(X, 3)


def test_grad_of_int_array_argument():
    with pytest.raises(TypeError, match="int"):
        tr.grad(bad.plain_sum)(np.arange(3))


def test_grad_argnums_out_of_range():
    with pytest.raises(ValueError, match="argnums 2 is out of range"):
        tr.grad(bad.two_args, argnums=2)


def test_grad_argnums_not_an_int():
    with pytest.raises(TypeError, match="argnums must be an int"):
        tr.grad(bad.two_args, argnums=1.5)


def test_value_and_grad_of_vector_output():
    with pytest.raises(TypeError, match="scalar"):
        tr.value_and_grad(bad.vector_out)(X)


# -------------------------------------------------------------------- vjp
def test_vjp_fn_with_wrong_structure():
    _, vjp_fn = tr.vjp(bad.pair_out, X)
    with pytest.raises((ValueError, TypeError), match="cotangent|structure"):
        vjp_fn(np.ones(3))                 # the output is a pair


def test_vjp_fn_with_too_many_leaves():
    _, vjp_fn = tr.vjp(bad.pair_out, X)
    with pytest.raises((ValueError, TypeError), match="cotangent|structure"):
        vjp_fn((np.ones(3), np.ones(3), np.ones(3)))


def test_vjp_fn_with_wrong_shape():
    _, vjp_fn = tr.vjp(bad.vector_out, X)
    with pytest.raises((ValueError, TypeError), match="shape|cotangent"):
        vjp_fn(np.ones(4))


# -------------------------------------------------------------------- jvp
def test_jvp_tangent_of_wrong_shape():
    with pytest.raises(ValueError, match="tangent for argument 0 has shape"):
        tr.jvp(bad.vector_out, (X,), (np.ones(4),))


def test_jvp_tangent_count_differs():
    with pytest.raises(ValueError, match="1 primals but 2 tangents"):
        tr.jvp(bad.vector_out, (X,), (X, X))


def test_jvp_primals_not_a_tuple():
    with pytest.raises(TypeError, match="must be a tuple"):
        tr.jvp(bad.vector_out, X, X)


def test_jvp_tangent_not_a_number():
    with pytest.raises(TypeError, match="tangent for argument 0 must be a number or array"):
        tr.jvp(bad.vector_out, (X,), ("x",))


def test_jvp_wrong_number_of_primals():
    with pytest.raises(TypeError, match="2 arguments got 1 primals"):
        tr.jvp(bad.elementwise, (X,), (X,))


# ------------------------------------------------------------------- vmap
def test_vmap_mismatched_batch_sizes():
    with pytest.raises(ValueError, match="inconsistent batch sizes"):
        tr.vmap(bad.elementwise)(np.ones((2, 3)), np.ones((4, 3)))


def test_vmap_in_axes_out_of_range():
    with pytest.raises(ValueError, match="out of range"):
        tr.vmap(bad.elementwise, in_axes=(2, None))(np.ones((2, 3)), 1.0)


def test_vmap_in_axes_wrong_length():
    with pytest.raises(ValueError, match="in_axes has 3 entries but the function takes 2"):
        tr.vmap(bad.elementwise, in_axes=(0, 0, 0))


def test_vmap_all_none_in_axes():
    with pytest.raises(ValueError, match="at least one non-None"):
        tr.vmap(bad.elementwise, in_axes=None)


def test_vmap_of_a_scalar_with_axis_zero():
    with pytest.raises(ValueError, match="out of range"):
        tr.vmap(bad.elementwise)(np.ones((2, 3)), 1.0)


def test_vmap_in_axes_of_wrong_type():
    with pytest.raises(ValueError, match="in_axes must be"):
        tr.vmap(bad.elementwise, in_axes="rows")


# -------------------------------------------------------------------- jit
def test_jit_unknown_target():
    with pytest.raises(ValueError, match="unknown target 'tpu'"):
        tr.jit(bad.plain_sum, target="tpu")


def test_jit_static_argnums_out_of_range():
    with pytest.raises(ValueError, match="static_argnums 3 is out of range"):
        tr.jit(bad.two_args, static_argnums=3)


def test_jit_unhashable_static_argument():
    with pytest.raises(TypeError, match="must be hashable"):
        tr.jit(bad.two_args, static_argnums=1, target="python")(X, [1, 2])


def test_jit_wrong_number_of_arguments():
    with pytest.raises(TypeError, match="missing a required argument"):
        python_jit(bad.two_args)(X)


# ------------------------------------------------------ derived transforms
def test_hvp_with_wrong_argument_count():
    with pytest.raises(TypeError, match="hvp"):
        tr.hvp(bad.plain_sum)(X)


def test_jacfwd_argnums_out_of_range():
    with pytest.raises(ValueError, match="argnums 3 is out of range"):
        tr.jacfwd(bad.vector_out, argnums=3)(X)


def test_hessian_of_int_input():
    with pytest.raises(TypeError, match="real-valued|int"):
        tr.hessian(bad.plain_sum)(np.arange(3))
