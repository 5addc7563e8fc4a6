"""The shortcuts that keep transforming fast give the answers of the slow
ways they replace (libcst's visitors and metadata providers)."""
import importlib
import importlib.util
import inspect

import libcst as cst
import pytest
from libcst.metadata import ExpressionContext, ExpressionContextProvider, MetadataWrapper

from transformer import fence, normalize, resolve, source, walk
from transformer.errors import TransformError

CORPORA = ("fence_cases", "frontend_cases", "jit_cases", "corpus_grad", "corpus_forward", "corpus_vmap",
           "corpus_extra", "corpus_composition", "corpus_primitives", "bad_input_cases", "numerics_cases")


def corpus_functions():
    """Every plain function defined in the test corpora (the fence's refusals included)."""
    found = []
    for module_name in CORPORA:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if inspect.isfunction(value) and value.__module__ == module_name:
                found.append(pytest.param(value, id=f"{module_name}.{name}"))
    return found


class _Visited(cst.CSTVisitor):
    def __init__(self):
        self.nodes = []

    def on_visit(self, node):
        self.nodes.append(node)
        return True


@pytest.mark.parametrize("fn", corpus_functions())
def test_walk_meets_every_node_the_visitor_meets(fn):
    uf = source.load(fn)
    visitor = _Visited()
    uf.node.visit(visitor)
    walked = list(walk.nodes(uf.node))
    assert len(walked) == len(visitor.nodes)
    assert {id(n) for n in walked} == {id(n) for n in visitor.nodes}


@pytest.mark.parametrize("fn", corpus_functions())
def test_loads_are_libcst_expression_context_loads(fn):
    uf = source.load(fn)
    contexts = MetadataWrapper(cst.Module([uf.node]), unsafe_skip_copy=True).resolve(ExpressionContextProvider)
    libcst_loads = {n for n, c in contexts.items() if c is ExpressionContext.LOAD
                    and isinstance(n, (cst.Name, cst.Attribute))}
    skipped = fence.not_loaded_nodes(uf.node)
    ours = {n for n in walk.nodes(uf.node) if isinstance(n, (cst.Name, cst.Attribute)) and n not in skipped}
    assert ours == libcst_loads


class _OldLocalNames(cst.CSTVisitor):
    """local_names as a libcst visitor (what the walk replaced)."""

    def __init__(self):
        self.names = set()

    def _target(self, node):
        if isinstance(node, cst.Name):
            self.names.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for el in node.elements:
                self._target(el.value)
        elif isinstance(node, cst.StarredElement):
            self._target(node.value)

    def visit_Param(self, node):
        self.names.add(node.name.value)

    def visit_AssignTarget(self, node):
        self._target(node.target)

    def visit_AugAssign(self, node):
        self._target(node.target)

    def visit_AnnAssign(self, node):
        self._target(node.target)

    def visit_For(self, node):
        self._target(node.target)

    def visit_NamedExpr(self, node):
        self._target(node.target)

    def visit_CompFor(self, node):
        # a comprehension's variables are locals too: unrolled comprehensions bind them
        self._target(node.target)


@pytest.mark.parametrize("fn", corpus_functions())
def test_local_names_are_what_the_visitor_found(fn):
    uf = source.load(fn)
    old = _OldLocalNames()
    uf.node.visit(old)
    assert resolve.local_names(uf.node) == old.names


def _import_file(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_edited_and_reimported_function_is_parsed_again(tmp_path):
    path = tmp_path / "edited_user_module.py"
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.sin(x)\n")
    before = source.load(_import_file(path, "edited_user_module").f)
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.tanh(x)\n")   # another size: linecache sees the edit
    after = source.load(_import_file(path, "edited_user_module").f)
    assert "np.sin" in cst.Module([before.node]).code and "np.tanh" in cst.Module([after.node]).code


def test_the_same_function_in_two_files_keeps_each_file(tmp_path):
    text = "def f(x):\n    return x + 1\n"
    (tmp_path / "first_copy.py").write_text(text)
    (tmp_path / "second_copy.py").write_text(text)
    first = source.load(_import_file(tmp_path / "first_copy.py", "first_copy").f)
    second = source.load(_import_file(tmp_path / "second_copy.py", "second_copy").f)
    assert first.location(first.node).filename.endswith("first_copy.py")
    assert second.location(second.node).filename.endswith("second_copy.py")


@pytest.mark.parametrize("fn", corpus_functions())
def test_def_lines_are_what_inspect_reads(fn):
    found = source._def_lines(fn)
    if fn.__name__ == "<lambda>":
        assert found is None
    else:
        assert found == tuple(inspect.getsourcelines(fn))


TRICKY_DEFS = '''\
import functools


def outer(scale):
    def inner(x):
        if x > 0:
            x = x * scale
        else:
            pass
        # a comment at the block's depth
    # a comment back at outer's depth
    return inner


class Holder:
    @staticmethod
    def method(x,
               y=(1,
                  2)):
        return (x +
                y[0]
                )

    def after(self):
        return 1


def ends_in_dead_code(x):
    return x
    x = x + 1


def one_line(x): return x * 2


def every_statement_shape(x, n):
    a = 1; b = (2 +
                3)
    if x > 0: a = 2; b = 3
    elif x < -1:
        a = 4
    elif x < -2: b = 5
    else:
        while n > 0:
            n = n - 1
        else:
            a = 0
    for i in range(n):
        # a comment line above
        b = b + i
    return a + b
'''


def test_def_lines_of_nested_methods_and_odd_endings(tmp_path):
    path = tmp_path / "tricky_defs.py"
    path.write_text(TRICKY_DEFS)
    module = _import_file(path, "tricky_defs")
    for fn in (module.outer, module.outer(2.0), module.Holder.method, module.Holder.after,
               module.ends_in_dead_code, module.one_line):
        assert source._def_lines(fn) == tuple(inspect.getsourcelines(fn)), fn.__qualname__


@pytest.mark.parametrize("fn", corpus_functions())
def test_statement_lines_are_libcst_positions(fn):
    parsed = source.load(fn).parsed
    positions = parsed.positions()
    statements = [n for n in walk.nodes(parsed.node) if isinstance(n, (cst.SimpleStatementLine, cst.If, cst.For,
                                                                          cst.While, cst.BaseSmallStatement))]
    assert {n: positions[n][0] for n in parsed.statement_lines} == {n: positions[n][0] for n in statements
                                                                    if n in parsed.statement_lines}
    fenced = any(isinstance(n, (cst.Try, cst.With, cst.FunctionDef, cst.ClassDef, cst.Match))
                 for n in walk.nodes(parsed.node.body))
    if not fenced and fn.__name__ != "<lambda>":
        # every statement of code the fence lets through has its line without positions
        # (a lambda's positions are found anyway, to tell it from others on its line)
        assert set(statements) <= set(parsed.statement_lines)


def test_statement_lines_of_every_statement_shape(tmp_path):
    path = tmp_path / "tricky_defs.py"
    path.write_text(TRICKY_DEFS)
    module = _import_file(path, "tricky_defs")
    for fn in (module.every_statement_shape, module.one_line, module.Holder.method, module.outer(1.0)):
        parsed = source.load(fn).parsed
        statements = [n for n in walk.nodes(parsed.node) if isinstance(n, (cst.SimpleStatementLine, cst.If, cst.For,
                                                                              cst.While, cst.BaseSmallStatement))]
        assert {n: parsed.statement_lines[n] for n in statements} == {n: parsed.positions()[n][0] for n in statements}


def _fence_outcome(run) -> str:
    try:
        run()
    except TransformError:
        return "refused"
    return "passed"


@pytest.mark.parametrize("fn", corpus_functions())
def test_the_fast_fence_refuses_what_the_ordered_one_refuses(fn):
    uf = source.load(fn)
    fast = _fence_outcome(lambda: walk.visit(uf.node, fence.Fence(uf)))
    ordered = _fence_outcome(lambda: uf.node.visit(fence.Fence(uf)))
    assert fast == ordered


def test_the_fence_names_the_first_refusal_in_source_order(tmp_path):
    # an if-expression holds its test before its body as fields: the walk meets
    # the `is` first (not `is None`, which is decided), the reader meets the set first
    path = tmp_path / "two_refusals.py"
    path.write_text("def f(x):\n    return {1, x} if x is x else x\n")
    uf = source.load(_import_file(path, "two_refusals").f)
    with pytest.raises(TransformError) as walked:
        walk.visit(uf.node, fence.Fence(uf))
    with pytest.raises(TransformError) as checked:
        fence.check(uf)
    assert "'is' comparison" in str(walked.value)
    assert "a set literal" in str(checked.value) and "two_refusals.py:2:12" in str(checked.value)


def test_a_helper_returning_early_is_made_one_exit_once_with_the_users_lines(tmp_path):
    path = tmp_path / "early_returns.py"
    path.write_text("def helper(x):\n"
                    "    if x > 0:\n"
                    "        return x\n"
                    "    while x < 0:\n"
                    "        return -x\n"
                    "    return 0.0\n"
                    "\n\n"
                    "def caller(x):\n"
                    "    return helper(x) * 2.0\n")
    module = _import_file(path, "early_returns")
    normalize.normalize(module.caller)
    callee = source.load(module.helper)
    body, added = callee.parsed.derived["single_exit"]
    normalize.normalize(module.caller)
    assert callee.parsed.derived["single_exit"][0] is body          # the parse's rewrite, made once
    assert added == {"result", "returned"}
    # flag set (def line), the if, what follows it under `if not returned` (the if's line), the return (def line)
    assert [callee.line(stmt) for stmt in body] == [1, 2, 2, 1]
    assert [callee.line(stmt) for stmt in body[2].body.body] == [4, 4]     # the while, and its guard
