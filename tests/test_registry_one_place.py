"""One primitive, one place: what transformer knows about a NumPy operation lives in its registry
entry (transformer/primitives.py) and in the rules registered beside it in templates/.

A table elsewhere that names primitives (a set of names, a dict keyed by them, a branch on
``prim.name == "..."``) is a second place that can disagree with the registry, as np.linspace's
missing adjoint once did.  This test finds such tables by reading the package's source: a string
literal that is a primitive's name or spelling, inside a set, list, tuple or dict display or
compared with ``==``/``!=``.

Some displays hold strings that happen to spell a primitive's name without being a table of
primitives (Python's builtin names, libcst's field names): ``NOT_PRIMITIVE_TABLES`` names each, by
file and the name it is bound to, with the reason; an entry that no longer matches anything fails.

Every table has moved: the test allows none (it counted 555 names in 41 files when it was
written, each file's figure allowed to go down only).
"""
import ast
import pathlib

import transformer
from transformer import primitives

PACKAGE = pathlib.Path(transformer.__file__).parent
REGISTRY_FILES = {"primitives.py"}

# (file, the name the display is bound to) -> why the primitive names in it are not a table of primitives
NOT_PRIMITIVE_TABLES = {
    ("naming.py", "RESERVED"): "Python's builtin names (len, float, min...), kept from user variables",
    ("dataflow.py", "_NO_NAMES"): "libcst's fields that hold punctuation (Attribute.dot, Assign's equal)",
    ("__init__.py", "__all__"): "the package's public names; tr.stop_gradient is one",
    ("core_form.py", "_UNARY_NODES"): "Python's unary operator tokens and their libcst nodes ('not')",
}


def _names_primitives(value: str) -> bool:
    prim = primitives.REGISTRY.get(value)
    if prim is not None:
        return True
    return value in primitives.BY_SPELLING


def _tabled_strings(node):
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        return node.elts
    if isinstance(node, ast.Dict):
        return [key for key in node.keys if key is not None]
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
        return [node.left, node.comparators[0]]
    return []


def _bound_name(node) -> str | None:
    """The name an assignment binds, for ``NOT_PRIMITIVE_TABLES``."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    names = [t.id for t in targets if isinstance(t, ast.Name)]
    return names[0] if len(names) == 1 else None


def _scan(path, relative, found, exempted):
    def visit(node, bound):
        bound = _bound_name(node) or bound
        for item in _tabled_strings(node):
            if isinstance(item, ast.Constant) and isinstance(item.value, str) and _names_primitives(item.value):
                if (relative, bound) in NOT_PRIMITIVE_TABLES:
                    exempted.add((relative, bound))
                else:
                    found.setdefault(relative, []).append((item.lineno, item.value))
        for child in ast.iter_child_nodes(node):
            visit(child, bound)
    visit(ast.parse(path.read_text()), None)


def _scan_package():
    found, exempted = {}, set()
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in REGISTRY_FILES or relative.startswith("templates/"):
            continue
        _scan(path, relative, found, exempted)
    return found, exempted


def primitive_tables() -> dict[str, list[tuple[int, str]]]:
    """file (relative to the package) -> [(line, primitive name or spelling)] in tables there."""
    return _scan_package()[0]


def test_no_table_outside_the_registry_names_a_primitive():
    found = {f: [f"line {line}: {name!r}" for line, name in hits] for f, hits in primitive_tables().items()}
    assert not found, (
        "tables outside the registry name primitives (put the fact in the primitive's registry entry, "
        f"or in a rule registered beside it in templates/): {found}")


def test_every_display_said_not_to_be_a_table_is_still_there():
    stale = set(NOT_PRIMITIVE_TABLES) - _scan_package()[1]
    assert not stale, f"NOT_PRIMITIVE_TABLES names displays that no longer spell a primitive: {stale}"


def test_the_scan_sees_a_table_when_there_is_one(tmp_path):
    # the scanner itself: a branch on a primitive's name and a set of spellings are both found
    source = 'if prim.name == "sin":\n    pass\nVECTOR = {"np.exp", "np.tanh"}\nTEXT = "sin"\n'
    tree = ast.parse(source)
    hits = [item.value for node in ast.walk(tree) for item in _tabled_strings(node)
            if isinstance(item, ast.Constant) and isinstance(item.value, str) and _names_primitives(item.value)]
    assert sorted(hits) == ["np.exp", "np.tanh", "sin"]
