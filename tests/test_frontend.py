"""The frontend: finding source, and what each name in it means."""
import importlib
import linecache
import math
import sys

import libcst as cst
import numpy as np
import pytest

import frontend_cases as fc
from oracles import central_difference_grad
import transformer as tr
from transformer import NoSourceError, TransformError, resolve, source
from transformer.normalize import normalize

X = np.array([0.25, -0.5, 1.5])


def run_python(fn, *args, **kwargs):
    return tr.jit(fn, target="python")(*args, **kwargs)


# ------------------------------------------------------------- finding source
def test_module_function_positions_are_in_the_users_file():
    uf = source.load(fc.arithmetic_nesting)
    assert uf.filename == fc.__file__
    assert uf.location(uf.node).line == fc.arithmetic_nesting.__code__.co_firstlineno
    body_line = uf.location(uf.node.body.body[0]).line
    assert body_line == fc.arithmetic_nesting.__code__.co_firstlineno + 1


def test_nested_function_reaches_sibling_and_alias_through_closure():
    code = normalize(fc.nested_with_sibling).code()
    assert "np.cos(x)" in code            # jnp (a closure-only alias) became the cos primitive
    assert "sibling" not in code.split("\n", 1)[1].replace("# return sibling", "")  # inlined
    np.testing.assert_allclose(run_python(fc.nested_with_sibling, X), fc.nested_with_sibling(X))


def test_closure_cells_are_bound_as_constants():
    core = normalize(fc.closure)
    assert core.constants == {"power": 3, "shift": 1.5}


def test_lambda_on_its_own_line():
    np.testing.assert_allclose(run_python(fc.lambda_square, X), fc.lambda_square(X))


def test_lambda_spanning_lines_inside_a_call():
    assert "np.sin(x)" in normalize(fc.multiline_lambda).code()
    np.testing.assert_allclose(fc.multiline_lambda(X), np.sin(X) * 2.0)


def test_lambda_default_argument_is_applied():
    assert run_python(fc.lambda_with_default, 2.0) == 6.0
    assert run_python(fc.lambda_with_default, 2.0, k=0.5) == 1.0


def test_two_lambdas_on_one_line_are_told_apart_by_column():
    plus, minus = fc.two_lambdas
    assert run_python(plus, 2.0) == 3.0
    assert run_python(minus, 2.0) == 1.0


# ------------------------------------------- bodies written on their header's line
def test_a_def_on_one_line_is_transformed():
    np.testing.assert_allclose(run_python(fc.one_line_def, X), fc.one_line_def(X))
    np.testing.assert_allclose(tr.jit(tr.grad(lambda x: np.sum(fc.one_line_def(x))))(X), 2.0 * np.cos(X))


@pytest.mark.parametrize("scale", [0.5, 1.0, 10.0])   # the else branch; the if; the if and the while
def test_loop_branch_and_while_bodies_on_one_line(scale):
    x = X * scale
    assert run_python(fc.one_line_bodies, x) == fc.one_line_bodies(x)
    expected = central_difference_grad(fc.one_line_bodies, (x,))
    np.testing.assert_allclose(tr.grad(fc.one_line_bodies)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tr.jit(tr.grad(fc.one_line_bodies))(x), expected, rtol=1e-6, atol=1e-8)


def test_one_line_bodies_keep_the_users_lines_and_columns():
    uf = source.load(fc.one_line_bodies)
    first = fc.one_line_bodies.__code__.co_firstlineno
    _, loop, branch, loop_while, _ = uf.node.body.body
    assert isinstance(loop.body, cst.IndentedBlock)          # every later pass reads blocks
    assert (uf.location(loop).line, uf.location(loop).col) == (first + 2, 5)
    assert uf.location(loop.body.body[0].body[0]).line == first + 2
    assert uf.location(branch.orelse).line == first + 4
    assert uf.line(loop_while.body.body[0]) == first + 5
    # the generated code's origin comments name the same lines
    code = normalize(fc.one_line_bodies).code()
    assert code.count(f"[frontend_cases.py:{first + 5}]") == 3   # the loop, its body, the condition again


def test_a_refusal_in_a_one_line_body_names_its_line_and_column():
    line = fc.one_line_body_refused.__code__.co_firstlineno + 2
    with pytest.raises(TransformError, match="a del statement") as info:
        tr.grad(fc.one_line_body_refused)(X)
    assert f"frontend_cases.py:{line}:40:" in str(info.value)


def test_type_annotations_are_read_past():
    # np.ndarray is a global the function does not compute with; total: float = 0.0 is an assignment
    expected = central_difference_grad(fc.annotated, (X,))
    np.testing.assert_allclose(tr.grad(fc.annotated)(X), expected, rtol=1e-6)
    np.testing.assert_allclose(tr.jit(tr.grad(fc.annotated))(X), expected, rtol=1e-6)
    assert run_python(fc.annotated, X, 0.5) == fc.annotated(X, 0.5)
    uf = source.load(fc.annotated)
    total = uf.node.body.body[0].body[0]
    assert isinstance(total, cst.Assign)
    assert uf.location(total).line == fc.annotated.__code__.co_firstlineno + 1


def test_a_helper_may_take_keyword_only_parameters():
    # inlined, its arguments are bound by name; the transformed function itself keeps positional ones
    expected = X + 3.0 * X ** 2
    np.testing.assert_allclose(tr.grad(fc.calls_keyword_only_helper)(X), expected)
    np.testing.assert_allclose(tr.jit(tr.grad(fc.calls_keyword_only_helper))(X), expected)
    with pytest.raises(TransformError, match=r"scaled_power\(\) takes 1 positional argument but got 2") as info:
        tr.grad(fc.passes_keyword_only_by_position)(X)
    assert f"frontend_cases.py:{fc.passes_keyword_only_by_position.__code__.co_firstlineno + 1}:" in str(info.value)
    with pytest.raises(TransformError, match="keyword-only parameter"):
        tr.grad(fc.scaled_power)(X)


def test_decorated_at_import_time():
    assert normalize(fc.decorated).code().startswith("def decorated(x):")
    assert fc.decorated_with_options(2.0, 3) == 6.0
    assert fc.decorated_inside(1.0) == 1.0 - fc.SCALE


def test_user_decorator_with_functools_wraps_is_seen_through():
    assert "x * 3.0" in normalize(fc.wrapped_by_user_decorator).code()
    assert run_python(fc.wrapped_by_user_decorator, 2.0) == 6.0


def test_static_method_reads_indented_source():
    assert run_python(fc.Holder.static_method, 2.0) == 8.0


def test_bound_method_is_refused():
    with pytest.raises(TransformError, match="bound method"):
        normalize(fc.Holder().method)


def test_calling_a_jitted_helper_inlines_its_function():
    code = normalize(fc.calls_decorated).code()
    assert "np.tanh(x)" in code
    np.testing.assert_allclose(run_python(fc.calls_decorated, X), fc.calls_decorated(X))


# ------------------------------------------------------------------ no source
def test_exec_defined_function_has_no_source():
    namespace = {"np": np}
    exec("def made_by_exec(x):\n    return np.sin(x)\n", namespace)
    with pytest.raises(NoSourceError, match=r"exec\(\)") as info:
        tr.jit(namespace["made_by_exec"], target="python")(1.0)
    assert "define it in a .py file" in str(info.value)


def test_repl_defined_function_has_no_source():
    namespace = {}
    exec(compile("def typed_in(x):\n    return x + 1\n", "<stdin>", "exec"), namespace)
    with pytest.raises(NoSourceError, match="interactive session"):
        normalize(namespace["typed_in"])


def test_deleted_source_file(tmp_path, monkeypatch):
    module_file = tmp_path / "vanishing_module.py"
    module_file.write_text("def f(x):\n    return x * 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("vanishing_module")
    module_file.unlink()
    linecache.clearcache()
    try:
        with pytest.raises(NoSourceError, match="no longer exists"):
            normalize(module.f)
    finally:
        sys.modules.pop("vanishing_module", None)


# ------------------------------------------------------------- name resolution
def _resolve(fn, expression):
    import libcst as cst
    uf = source.load(fn)
    return resolve.resolve(cst.parse_expression(expression), uf.lookup, resolve.local_names(uf.node))


@pytest.mark.parametrize("spelling", ["np.sin", "numpy.sin", "sin", "xp.sin", "math.sin", "math_sin"])
def test_every_spelling_of_sin_is_one_primitive(spelling):
    r = _resolve(fc.aliases, spelling)
    assert r.kind == "primitive" and r.primitive.name == "sin"


def test_builtins_globals_and_user_functions():
    assert _resolve(fc.aliases, "abs").primitive.name == "abs"
    assert _resolve(fc.aliases, "range").kind == "loop"
    assert _resolve(fc.aliases, "x").kind == "local"
    assert _resolve(fc.aliases, "SCALE").kind == "constant"
    assert _resolve(fc.aliases, "_scaled").kind == "user"
    assert _resolve(fc.aliases, "decorated").kind == "user"
    assert _resolve(fc.aliases, "tr.nn.softmax").kind == "user"
    assert _resolve(fc.aliases, "no_such_name").kind == "unknown"
    sibling = _resolve(fc.nested_with_sibling, "sibling")          # a closure cell holding a function
    assert sibling.kind == "user"
    assert _resolve(sibling.value, "jnp.cos").primitive.name == "cos"   # an alias in a closure cell
    assert _resolve(sibling.value, "offset").value == 0.5


def test_all_aliases_give_the_same_code_and_value():
    code = normalize(fc.aliases).code()
    assert code.count("= np.sin(x)") == 4
    np.testing.assert_allclose(run_python(fc.aliases, X), 4 * np.sin(X))
    assert run_python(fc.math_functions, 0.7) == pytest.approx(2 * math.sin(0.7) + math.sqrt(0.7) + math.pi)


def test_module_constants_are_read_at_transform_time(monkeypatch):
    before = tr.jit(fc.module_constants, target="python")
    x = np.array([1.0, 2.0, 3.0])
    old = before(x)
    monkeypatch.setattr(fc, "SCALE", 10.0)
    assert normalize(fc.module_constants).constants["SCALE"] == 10.0
    assert np.allclose(before(x), old)               # already transformed: keeps the value it read
    fresh = tr.jit(fc.module_constants, target="python")
    np.testing.assert_allclose(fresh(x), fc.module_constants(x))   # a new transform reads the new one
    assert not np.allclose(fresh(x), old)
