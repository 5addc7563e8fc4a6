"""The long differential-fuzzing run: many more random programs than CI.

    python benchmarks/fuzz_long.py            # 5000 programs across every property
    python benchmarks/fuzz_long.py 20000 -k grad

It runs tests/test_fuzz.py with TRANSFORMER_FUZZ_EXAMPLES set (randomized,
not the fixed CI examples), shares the budget across properties in the CI
proportions, and prints each failing program.  Turn every failure into a
named test in tests/regressions/.

It fuzzes the checkout it sits in, templates included, even when another
checkout is the one installed in editable mode: a long run from a second
working tree (``git worktree add``) is not disturbed by edits in the first.
(templates/ installs as ``transformer.templates``, which an editable install
maps to its own checkout whatever comes first on ``sys.path``.)
"""
import os
import subprocess
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
TESTS = CHECKOUT / "tests"

# pytest, with transformer and transformer.templates imported from CHECKOUT first
_THIS_CHECKOUT = """
import importlib.util, sys
root = sys.argv.pop(1)
sys.path.insert(0, root)
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
import transformer
spec = importlib.util.spec_from_file_location("transformer.templates", root + "/templates/__init__.py",
                                              submodule_search_locations=[root + "/templates"])
templates = importlib.util.module_from_spec(spec)
sys.modules["transformer.templates"] = transformer.templates = templates
spec.loader.exec_module(templates)
import pytest
sys.exit(pytest.main(sys.argv[1:]))
"""


def main(argv):
    total = argv[0] if argv and argv[0].isdigit() else "5000"
    extra = argv[1:] if argv and argv[0].isdigit() else argv
    env = dict(os.environ, TRANSFORMER_FUZZ_EXAMPLES=total)
    command = [sys.executable, "-c", _THIS_CHECKOUT, str(CHECKOUT), "-q", str(TESTS / "test_fuzz.py"),
               "-p", "no:cacheprovider", "--hypothesis-show-statistics", *extra]
    print(f"fuzzing {total} programs of {CHECKOUT}: pytest {' '.join(command[4:])}", flush=True)
    return subprocess.call(command, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
