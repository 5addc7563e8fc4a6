"""One primitive, one place: what transformer knows about a NumPy operation lives in its registry
entry (transformer/primitives.py) and in the rules registered beside it in templates/.

A table elsewhere that names primitives (a set of names, a dict keyed by them, a branch on
``prim.name == "..."``) is a second place that can disagree with the registry, as np.linspace's
missing adjoint once did.  This test finds such tables by reading the package's source: a string
literal that is a primitive's name or spelling, inside a set, list, tuple or dict display or
compared with ``==``/``!=``.

The tables not moved yet are counted per file in ``STILL_TO_MOVE``.  A count may only go down:
a new table (or a new name in an old one) fails the test, and so does a count that went down
without lowering the figure here, so the figures stay exact.  The aim is an empty dict.
"""
import ast
import pathlib

import transformer
from transformer import primitives

PACKAGE = pathlib.Path(transformer.__file__).parent
REGISTRY_FILES = {"primitives.py"}

# file -> primitive names written in tables there, still to move into registry entries or rules
STILL_TO_MOVE = {
    "backends/cuda_fusion.py": 47,
    "methods.py": 6,
    "backends/numba_lowering.py": 32,
    "backends/cpu_lanes.py": 26,
    "backends/per_example.py": 16,
    "backends/mpi.py": 15,
    "normalize.py": 15,
    "backends/cpu_threads.py": 14,
    "backends/cuda_vmap.py": 9,
    "backends/cuda_runtime.py": 11,
    "backends/numba_loops.py": 10,
    "dataflow.py": 10,
    "backends/device_code.py": 8,
    "fence.py": 8,
    "naming.py": 8,
    "backends/numba_vecmath.py": 6,
    "transforms/sweep_fusion.py": 6,
    "backends/cpu_devices.py": 5,
    "backends/numba_reductions.py": 5,
    "transforms/jvp.py": 4,
    "transforms/reverse_analysis.py": 4,
    "transforms/vjp.py": 4,
    "backends/background_compile.py": 3,
    "backends/numba_indexing.py": 3,
    "transforms/shapes.py": 3,
    "backends/cuda_ptx.py": 2,
    "core_form.py": 2,
    "simplify.py": 2,
    "transforms/pmap.py": 2,
    "transforms/vmap.py": 2,
    "__init__.py": 1,
    "backends/cpu_vmap.py": 1,
    "backends/cuda_devices.py": 1,
    "backends/numba_fusion.py": 1,
    "backends/numba_runtime.py": 1,
    "custom.py": 1,
    "jax_names.py": 1,
    "staging.py": 1,
    "structure.py": 1,
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


def primitive_tables() -> dict[str, list[tuple[int, str]]]:
    """file (relative to the package) -> [(line, primitive name or spelling)] in tables there."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in REGISTRY_FILES or relative.startswith("templates/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            for item in _tabled_strings(node):
                if isinstance(item, ast.Constant) and isinstance(item.value, str) and _names_primitives(item.value):
                    found.setdefault(relative, []).append((item.lineno, item.value))
    return found


def test_no_new_table_names_a_primitive_outside_the_registry():
    found = primitive_tables()
    grown = {f: [f"line {line}: {name!r}" for line, name in hits]
             for f, hits in found.items() if len(hits) > STILL_TO_MOVE.get(f, 0)}
    assert not grown, (
        "tables outside the registry name primitives (put the fact in the primitive's registry entry, "
        f"or in a rule registered beside it in templates/): {grown}")


def test_the_figures_of_tables_still_to_move_are_exact():
    counts = {f: len(hits) for f, hits in primitive_tables().items()}
    shrunk = {f: (budget, counts.get(f, 0)) for f, budget in STILL_TO_MOVE.items() if counts.get(f, 0) < budget}
    assert not shrunk, f"lower STILL_TO_MOVE to what is left (file: (figure, count now)): {shrunk}"


def test_the_scan_sees_a_table_when_there_is_one(tmp_path):
    # the scanner itself: a branch on a primitive's name and a set of spellings are both found
    source = 'if prim.name == "sin":\n    pass\nVECTOR = {"np.exp", "np.tanh"}\nTEXT = "sin"\n'
    tree = ast.parse(source)
    hits = [item.value for node in ast.walk(tree) for item in _tabled_strings(node)
            if isinstance(item, ast.Constant) and isinstance(item.value, str) and _names_primitives(item.value)]
    assert sorted(hits) == ["np.exp", "np.tanh", "sin"]
