"""Generated modules: real files in a private cache directory, named by a hash,
written atomically, checked on read, and reused by a second process without
any libcst work."""
import json
import os
import re
import stat
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import frontend_cases as fc
import jit_cases
import transformer as tr
from transformer import cache, emit, staging

TESTS_DIR = Path(__file__).parent
X = np.linspace(0.0, 1.0, 5)


def _module_files(directory: Path, stem: str) -> list[Path]:
    return sorted(p for p in directory.glob(f"{stem}-*.py"))


def test_generated_module_is_a_real_file_named_by_hash(cache_dir):
    f = tr.jit(jit_cases.elementwise, target="python")
    np.testing.assert_allclose(f(X), jit_cases.elementwise(X))
    path, _ = staging.module_path(jit_cases.elementwise, (), "python", None)
    assert path.parent == cache_dir
    assert re.fullmatch(r"elementwise-[0-9a-f]{24}\.py", path.name)
    text = path.read_text()
    assert "# return np.exp(-x) * 3.0   [jit_cases.py:" in text
    assert emit.is_intact(path)
    generated = f.compiled(X)
    assert Path(generated.__code__.co_filename) == path     # tracebacks and pdb point at the file


def test_default_cache_dir_is_per_user_and_private(tmp_path, monkeypatch):
    monkeypatch.delenv("TRANSFORMER_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    path = cache.cache_dir()
    assert path == tmp_path / ".cache" / "transformer"
    assert stat.S_IMODE(path.stat().st_mode) == 0o700


def test_configured_cache_dir_is_created_private(tmp_path, monkeypatch):
    target = tmp_path / "somewhere" / "cache"
    monkeypatch.setenv("TRANSFORMER_CACHE_DIR", str(target))
    assert cache.cache_dir() == target
    assert stat.S_IMODE(target.stat().st_mode) == 0o700


# ----------------------------------------------------------------- cache keys
def test_key_is_stable_and_names_the_chain():
    key = cache.fingerprint(fc.helper_defaults_keywords, "normalize")
    assert key == cache.fingerprint(fc.helper_defaults_keywords, "normalize")
    assert key != cache.fingerprint(fc.helper_defaults_keywords, "grad(argnums=(0,))")


def test_key_follows_constants_helpers_and_closures(monkeypatch):
    key = cache.fingerprint(fc.module_constants, "normalize")
    monkeypatch.setattr(fc, "SCALE", 7.0)
    assert cache.fingerprint(fc.module_constants, "normalize") != key
    monkeypatch.setattr(fc, "WEIGHTS", fc.WEIGHTS * 2)
    key_arrays = cache.fingerprint(fc.module_constants, "normalize")
    monkeypatch.setattr(fc, "WEIGHTS", fc.WEIGHTS + 1)
    assert cache.fingerprint(fc.module_constants, "normalize") != key_arrays
    # a helper's defaults are part of what the caller's module is made from
    key = cache.fingerprint(fc.helper_defaults_keywords, "normalize")
    monkeypatch.setattr(fc._scaled, "__defaults__", (5.0, 0.0))
    assert cache.fingerprint(fc.helper_defaults_keywords, "normalize") != key
    assert cache.fingerprint(fc.make_closure(2), "n") != cache.fingerprint(fc.make_closure(3), "n")


def test_key_follows_attributes_of_config_objects():
    # a function that reads config.SCALE, compiled as if it lived in frontend_cases.py
    code = compile("def f(x):\n    return x * config.SCALE\n", fc.__file__, "exec")
    fn_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    keys = []
    for scale in (1.0, 2.0):
        config = types.SimpleNamespace(SCALE=scale)
        keys.append(cache.fingerprint(types.FunctionType(fn_code, {"config": config}), "n"))
    assert keys[0] != keys[1]


class _CallableConfig:
    def __init__(self, scale):
        self.SCALE = scale

    def __call__(self, x):
        return x * self.SCALE


def test_key_follows_attributes_of_objects_that_are_also_callable():
    # the same, of an object with __call__: its attributes were not hashed, so OBJ.SCALE changed
    # from 3 to 5 found the module written for 3, and gave its numbers
    code = compile("def f(x):\n    return x * config.SCALE\n", fc.__file__, "exec")
    fn_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    keys = [cache.fingerprint(types.FunctionType(fn_code, {"config": _CallableConfig(scale)}), "n")
            for scale in (3.0, 5.0)]
    assert keys[0] != keys[1]


def test_key_follows_every_entry_of_a_tuple_holding_a_large_array():
    # a tuple was hashed by its repr, which elides all but the ends of a large array: an entry
    # changed in the middle found the module and the constants written for the old values
    code = compile("def f(x):\n    return x * np.sum(T[0])\n", fc.__file__, "exec")
    fn_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    big = np.zeros(5000)
    before = cache.fingerprint(types.FunctionType(fn_code, {"T": (big, 1.0), "np": np}), "n")
    big[2500] = 1.0
    assert cache.fingerprint(types.FunctionType(fn_code, {"T": (big, 1.0), "np": np}), "n") != before


chosen_reduction = np.sum


def _reduce_with_the_chosen(x):
    return chosen_reduction(x)


def test_key_follows_which_numpy_function_a_name_stands_for(monkeypatch):
    # ``chosen_reduction = np.sum``, then ``= np.max``: the same source, a different primitive baked
    # into the generated code; one key for both gave the max the sum's module (a wrong number)
    assert tr.jit(_reduce_with_the_chosen, target="python")(X) == np.sum(X)
    key = cache.fingerprint(_reduce_with_the_chosen, "n")
    monkeypatch.setattr(sys.modules[__name__], "chosen_reduction", np.max)
    assert cache.fingerprint(_reduce_with_the_chosen, "n") != key
    assert tr.jit(_reduce_with_the_chosen, target="python")(X) == np.max(X)


# ---------------------------------------------------- integrity and atomicity
def test_truncated_module_is_detected_and_regenerated(cache_dir):
    fn = jit_cases.keywords
    tr.jit(fn, target="python")(X)
    path, _ = staging.module_path(fn, (), "python", None)
    good = path.read_text()
    path.write_text(good[: len(good) // 2])
    assert not emit.is_intact(path)
    np.testing.assert_allclose(tr.jit(fn, target="python")(X), fn(X))
    assert path.read_text() == good


def test_edited_module_is_detected_and_regenerated(cache_dir):
    fn = jit_cases.elementwise
    tr.jit(fn, target="python")(X)
    path, _ = staging.module_path(fn, (), "python", None)
    good = path.read_text()
    path.write_text(good.replace("* 3.0", "* 4.0"))
    assert not emit.is_intact(path)
    np.testing.assert_allclose(tr.jit(fn, target="python")(X), fn(X))
    assert path.read_text() == good


def test_corrupted_array_constants_are_detected_and_regenerated(cache_dir):
    fn = fc.module_constants
    x = np.array([1.0, 2.0, 3.0])
    tr.jit(fn, target="python")(x)
    path, _ = staging.module_path(fn, (), "python", None)
    npz = path.with_suffix(".npz")
    assert npz.exists() and emit.is_intact(path)
    npz.write_bytes(npz.read_bytes()[:40])
    assert not emit.is_intact(path)
    np.testing.assert_allclose(tr.jit(fn, target="python")(x), fn(x))
    assert emit.is_intact(path)


def test_atomic_write_leaves_old_file_or_new_file(tmp_path, monkeypatch):
    path = tmp_path / "module.py"
    emit.write(path, "old = 1\n")
    assert path.read_text() == "old = 1\n"

    def failing_replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        emit.write(path, "new = 2\n")
    assert path.read_text() == "old = 1\n"                 # never half-written
    assert [p.name for p in tmp_path.iterdir()] == ["module.py"]   # no temporary left behind
    monkeypatch.undo()
    emit.write(path, "new = 2\n")
    assert path.read_text() == "new = 2\n"
    assert [p.name for p in tmp_path.iterdir()] == ["module.py"]


# ------------------------------------------------------- a second process
_PROCESS = r'''
import json, time
start = time.perf_counter()
import libcst

counts = {"parse": 0, "nodes": 0, "normalize": 0}

def counting(kind, original):
    def wrapper(*args, **kwargs):
        counts[kind] += 1
        return original(*args, **kwargs)
    return wrapper

# every libcst parse, every libcst node built, every call of the normalizer
for name in ("parse_module", "parse_expression", "parse_statement"):
    setattr(libcst, name, counting("parse", getattr(libcst, name)))
libcst.CSTNode.__post_init__ = counting("nodes", libcst.CSTNode.__post_init__)
import transformer.staging
transformer.staging.normalize = counting("normalize", transformer.staging.normalize)

import numpy as np
import jit_cases
x = np.linspace(0.0, 1.0, 5)
cpu = jit_cases.decorated_cpu(x, 2.0)
python = jit_cases.decorated_python(x)
stats = jit_cases.decorated_cpu.compiled(x, 2.0).dispatcher.stats
from transformer import cache
print(json.dumps({"counts": counts, "seconds": time.perf_counter() - start,
                  "code_version": cache.code_version(),
                  "numba_cache_hits": sum(stats.cache_hits.values()),
                  "cpu": cpu.tolist(), "python": python.tolist()}))
'''


def _run_process(cache: Path) -> dict:
    env = dict(os.environ, TRANSFORMER_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", _PROCESS], env=env, capture_output=True, text=True,
                          timeout=300, cwd=str(TESTS_DIR))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_second_process_does_no_libcst_work(tmp_path):
    cold = _run_process(tmp_path / "cache")
    warm = _run_process(tmp_path / "cache")
    if warm["code_version"] != cold["code_version"]:
        # someone edited transformer's source between the runs: the key rightly
        # changed and the cache missed; measure again against the new version
        cold, warm = warm, _run_process(tmp_path / "cache")
    # the counters see the work a cold cache needs ...
    assert cold["counts"]["parse"] > 0 and cold["counts"]["nodes"] > 0 and cold["counts"]["normalize"] == 2
    # ... and a warm cache needs none of it
    assert warm["counts"] == {"parse": 0, "nodes": 0, "normalize": 0}
    assert warm["numba_cache_hits"] >= 1          # numba's own on-disk cache works on the real file
    assert warm["cpu"] == cold["cpu"] and warm["python"] == cold["python"]
    np.testing.assert_allclose(warm["cpu"], np.sin(X) * 2.0 + 1.0)
    print(f"cold process {cold['seconds']:.2f} s, warm process {warm['seconds']:.2f} s")


# ------------------------------------------ transformer's own source in the key
def _fresh_code_version(monkeypatch, package: Path, templates: Path) -> str:
    monkeypatch.setattr(cache, "_PACKAGE_ROOT", package)
    monkeypatch.setattr(cache, "_templates_dir", lambda: str(templates))
    monkeypatch.setattr(cache, "_code_hash", None)
    return cache.code_version()


def test_code_version_follows_every_source_file_of_the_package_and_its_templates(tmp_path, monkeypatch):
    package, templates = tmp_path / "transformer", tmp_path / "templates"
    (package / "transforms").mkdir(parents=True)
    templates.mkdir()
    for path in (package / "staging.py", package / "transforms" / "vjp.py", templates / "adjoints.py"):
        path.write_text("x = 1\n")
    versions = {_fresh_code_version(monkeypatch, package, templates)}
    for path in (package / "staging.py", package / "transforms" / "vjp.py", templates / "adjoints.py"):
        path.write_text("x = 22\n")                      # an edit: the size changes
        versions.add(_fresh_code_version(monkeypatch, package, templates))
    os.utime(package / "staging.py", ns=(1, 1))           # a touch: the modification time changes
    versions.add(_fresh_code_version(monkeypatch, package, templates))
    (package / "transforms" / "new_pass.py").write_text("")  # a new module
    versions.add(_fresh_code_version(monkeypatch, package, templates))
    (package / "notes.txt").write_text("not code")           # not source: no new version
    versions.add(_fresh_code_version(monkeypatch, package, templates))
    assert len(versions) == 6


def test_templates_dir_is_where_transformer_templates_imports_from():
    import transformer.templates
    assert Path(cache._templates_dir()).resolve() == Path(transformer.templates.__file__).resolve().parent


_WARM_IMPORTS = r'''
import json, sys
import transformer as tr
import jit_cases
before = set(sys.modules)
tr.jit(jit_cases.elementwise, target="python")(1.0)
from transformer import cache
print(json.dumps({"new": sorted(set(sys.modules) - before), "code_version": cache.code_version()}))
'''


def test_a_warm_start_imports_only_its_backend_and_the_generated_module(tmp_path):
    env = dict(os.environ, TRANSFORMER_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")]))

    def run():
        done = subprocess.run([sys.executable, "-c", _WARM_IMPORTS], env=env, capture_output=True, text=True,
                              timeout=300, cwd=str(TESTS_DIR))
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])
    cold, warm = run(), run()
    if warm["code_version"] != cold["code_version"]:     # transformer edited between the runs: a rightful miss
        warm = run()
    assert "libcst" in cold["new"] or "libcst.native" in cold["new"]     # the counter-check: a cold start parses
    assert [m for m in warm["new"] if not m.startswith("transformer_generated.")] == ["transformer.backends.python"]


def test_key_follows_every_entry_of_a_config_dict():
    # a global dict is read when the function is transformed: an entry changed, a large array's
    # middle too, must not find the module written for the old values
    code = compile("def f(x):\n    return x * np.sum(D['w']) * D['k']\n", fc.__file__, "exec")
    fn_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    big = np.zeros(5000)
    config = {"w": big, "k": 1.0}
    before = cache.fingerprint(types.FunctionType(fn_code, {"D": config, "np": np}), "n")
    big[2500] = 1.0
    after_array = cache.fingerprint(types.FunctionType(fn_code, {"D": config, "np": np}), "n")
    config["k"] = 2.0
    after_number = cache.fingerprint(types.FunctionType(fn_code, {"D": config, "np": np}), "n")
    assert len({before, after_array, after_number}) == 3
