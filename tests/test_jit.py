"""jit on the CPU: static arguments, specialisation, keywords, errors, show."""
import inspect

import numpy as np
import pytest

import jit_cases
import transformer as tr
from transformer import CompileError

X = np.linspace(-1.0, 1.0, 7)


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(getattr(fn, "__transformer_fn__", fn))
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_static_argument_is_baked_in_and_a_new_value_builds_a_new_module(cache_dir):
    f = tr.jit(jit_cases.power_sum, static_argnums=(1,))
    assert f(X, 3) == pytest.approx(jit_cases.power_sum(X, 3))
    assert f(X, 4) == pytest.approx(jit_cases.power_sum(X, 4))
    assert len(_power_sum_modules(cache_dir)) == 2
    source_3 = f.source(X, 3)
    assert "\nn = 3\n" in source_3 and "def power_sum(x):" in source_3   # n is a constant, not a parameter
    assert "\nn = 4\n" in f.source(X, 4)
    assert f(X, 3) == pytest.approx(jit_cases.power_sum(X, 3))       # reuses the first build
    assert len(_power_sum_modules(cache_dir)) == 2


def _power_sum_modules(cache_dir):
    """This file's power_sum modules in the run's shared cache (another test file has a power_sum too)."""
    return [p for p in cache_dir.glob("power_sum-*.py") if "jit_cases.py" in p.read_text()]


def test_unhashable_static_argument_is_a_type_error():
    f = tr.jit(jit_cases.power_sum, static_argnums=1)
    with pytest.raises(TypeError, match="static argument 'n' must be hashable"):
        f(X, [3])
    with pytest.raises(TypeError, match="hashable"):
        f(X, np.array([3]))


def test_source_given_too_few_arguments_for_a_static_one_says_so():
    f = tr.jit(jit_cases.power_sum, static_argnums=1)
    with pytest.raises(TypeError, match="static argument 'n' is argument 1, and only 1 arguments were given"):
        tr.show(f, 3)            # the static value alone: an IndexError from inside, before


def test_static_argnums_out_of_range():
    with pytest.raises(ValueError, match="out of range"):
        tr.jit(jit_cases.power_sum, static_argnums=(2,))


def test_one_module_specialised_per_argument_type(cache_dir):
    f = tr.jit(jit_cases.elementwise)
    for x in (X, X.astype(np.float32), 0.5):
        np.testing.assert_allclose(f(x), jit_cases.elementwise(x), rtol=1e-6)
    cpu_modules = [p for p in cache_dir.glob("elementwise-*.py") if "for target cpu" in p.read_text()]
    assert len(cpu_modules) == 1
    dispatcher = f.compiled(X).dispatcher
    assert len(dispatcher.signatures) == 3
    assert f(X).dtype == np.float64


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_plain_and_pytree_arguments_in_turn_each_get_their_own_module(target):
    # plain arguments take a shortcut to their generated function; a tuple must not take it
    f = tr.jit(jit_cases.first_doubled, target=target)
    assert f(np.array([1.5, 2.0])) == 3.0
    assert f((4.0, np.array([1.0]))) == 8.0
    assert f(np.array([0.25])) == 0.5
    assert f([5.0, 6.0]) == 10.0


def test_keyword_arguments_and_defaults():
    f = tr.jit(jit_cases.keywords)
    np.testing.assert_allclose(f(X), jit_cases.keywords(X))
    np.testing.assert_allclose(f(X, shift=1.0), jit_cases.keywords(X, shift=1.0))
    np.testing.assert_allclose(f(X, shift=1.0, scale=-3.0), jit_cases.keywords(X, -3.0, 1.0))
    np.testing.assert_allclose(f(x=X, scale=0.5), jit_cases.keywords(X, 0.5))


def test_numba_typing_error_names_the_users_line():
    f = tr.jit(jit_cases.adds_text)
    with pytest.raises(CompileError) as info:
        f(X)
    err = info.value
    line = _line_of(jit_cases.adds_text, 'return y + "text"')
    assert err.location is not None, str(err)
    assert err.location.filename == jit_cases.__file__
    assert err.location.line == line
    assert str(err).startswith(f"{jit_cases.__file__}:{line}: numba cannot compile this line")


def test_show_returns_generated_source_with_origin_comments():
    text = tr.show(jit_cases.decorated_cpu)
    line = _line_of(jit_cases.decorated_cpu, "z = np.sin(x) * y")
    assert f"    # z = np.sin(x) * y   [jit_cases.py:{line}]\n" in text
    assert "def decorated_cpu(x, y):" in text
    assert "sources: jit_cases.py=" + jit_cases.__file__ in text
    compile(text, "generated", "exec")     # the shown source is valid Python
    # what show returns is exactly the module that runs
    path = jit_cases.decorated_cpu.compiled(X, 2.0).dispatcher.py_func.__code__.co_filename
    assert open(path).read() == text
