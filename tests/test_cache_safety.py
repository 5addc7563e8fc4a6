"""The cache under abuse: many first calls at once, two processes sharing a
directory, a tampered module, and cache directories someone else could write.

Importing a generated module runs it, so a cache directory that another user
owns or that anyone can write is refused (with a warning naming it and why)
in favour of a private temporary directory.
"""
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import jit_cases
import transformer as tr
from transformer import cache, emit, staging

TESTS_DIR = Path(__file__).parent
X = np.linspace(0.0, 1.0, 5)


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty private cache directory of this test's own, and no built functions in memory."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("TRANSFORMER_CACHE_DIR", str(directory))
    monkeypatch.setattr(staging, "_finished", {})
    return directory


@pytest.fixture
def counted_writes(monkeypatch):
    """How many generated modules this process writes."""
    written = []
    original = emit.write

    def counting(path, text, arrays=None):
        written.append(path)
        time.sleep(0.05)            # widen the window in which a racing caller could slip in
        return original(path, text, arrays)
    monkeypatch.setattr(emit, "write", counting)
    return written


# ------------------------------------------------------------- concurrency
def test_first_call_from_eight_threads_generates_and_compiles_once(fresh_cache, counted_writes):
    f = tr.jit(jit_cases.elementwise)          # numba, target "cpu"
    barrier = threading.Barrier(8)
    results, errors = [], []

    def first_call():
        barrier.wait()
        try:
            results.append(f(X))
        except Exception as err:   # noqa: BLE001  (collected and asserted below)
            errors.append(err)
    threads = [threading.Thread(target=first_call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(counted_writes) == 1
    for result in results:
        np.testing.assert_allclose(result, jit_cases.elementwise(X))
    dispatcher = f.compiled(X).dispatcher
    assert len(dispatcher.signatures) == 1      # one numba compile, shared by all eight
    assert len({id(tr.jit(jit_cases.elementwise).compiled(X)), id(f.compiled(X))}) == 1


_RACER = r'''
import os, sys, time, json
import numpy as np
from transformer import emit
written = []
original = emit.write
def slow_write(path, text, arrays=None):
    written.append(str(path))
    time.sleep(0.5)                       # a slow disk: the other process must wait, not race
    return original(path, text, arrays)
emit.write = slow_write
import transformer as tr
import jit_cases
start = float(sys.argv[1])
while time.time() < start:                # both processes make their first call together
    time.sleep(0.001)
x = np.linspace(0.0, 1.0, 5)
value = tr.jit(jit_cases.keywords, target="python")(x)
print(json.dumps({"written": written, "value": np.asarray(value).tolist()}))
'''


def test_two_processes_sharing_a_cache_generate_once(tmp_path):
    import json
    directory = tmp_path / "shared-cache"
    env = dict(os.environ, TRANSFORMER_CACHE_DIR=str(directory),
               PYTHONPATH=os.pathsep.join([str(TESTS_DIR), os.environ.get("PYTHONPATH", "")]))
    start = time.time() + 4.0                  # time for both interpreters to import numpy and libcst
    racers = [subprocess.Popen([sys.executable, "-c", _RACER, repr(start)], env=env, cwd=str(TESTS_DIR),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [racer.communicate(timeout=120) for racer in racers]
    for racer, (out, err) in zip(racers, outputs):
        assert racer.returncode == 0, err
    reports = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert sum(len(r["written"]) for r in reports) == 1        # one process generated, the other read it
    for report in reports:
        np.testing.assert_allclose(report["value"], jit_cases.keywords(X))
    modules = list(directory.glob("keywords-*.py"))
    assert len(modules) == 1 and emit.is_intact(modules[0])
    assert not list(directory.glob(".*.tmp"))                    # no temporary left behind


def test_the_lock_is_held_while_generating(fresh_cache, monkeypatch):
    """A second process cannot take the cache's lock while this one writes a module."""
    import fcntl
    seen = []
    original = emit.write

    def probing(path, text, arrays=None):
        fd = os.open(path.parent / ".transformer.lock", os.O_RDWR)
        try:                              # a different open file description: as another process would
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append("free")
        except BlockingIOError:
            seen.append("held")
        finally:
            os.close(fd)
        return original(path, text, arrays)
    monkeypatch.setattr(emit, "write", probing)
    tr.jit(jit_cases.keywords, target="python")(X)
    assert seen == ["held"]


# --------------------------------------------------------- tampered modules
def test_tampered_module_is_not_run(fresh_cache, tmp_path):
    fn = jit_cases.elementwise
    tr.jit(fn, target="python")(X)
    path, _ = staging.module_path(fn, (), "python", None)
    marker = tmp_path / "ran"
    good = path.read_text()
    # someone appends code but cannot fix the hash in the header
    path.write_text(good + f"\nopen({str(marker)!r}, 'w').close()\n")
    staging._finished.clear()
    np.testing.assert_allclose(tr.jit(fn, target="python")(X), fn(X))
    assert not marker.exists()
    assert path.read_text() == good


def test_empty_module_file_is_regenerated(fresh_cache):
    fn = jit_cases.elementwise
    tr.jit(fn, target="python")(X)
    path, _ = staging.module_path(fn, (), "python", None)
    good = path.read_text()
    path.write_text("")
    np.testing.assert_allclose(tr.jit(fn, target="python")(X), fn(X))
    assert path.read_text() == good


# ---------------------------------------------------- whose directory it is
def test_new_cache_dir_is_private(fresh_cache):
    directory = cache.cache_dir()
    assert directory == fresh_cache
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700


def test_world_writable_cache_dir_is_refused_with_a_warning(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("TRANSFORMER_CACHE_DIR", str(shared))
    monkeypatch.setattr(cache, "_fallbacks", {})
    monkeypatch.setattr(staging, "_finished", {})
    with pytest.warns(RuntimeWarning, match=rf"{shared}.*group or others can write to it \(mode 777\)"):
        used = cache.cache_dir()
    assert used != shared
    assert stat.S_IMODE(used.stat().st_mode) == 0o700 and used.stat().st_uid == os.getuid()
    # the transforms use the fallback: nothing is written into (or imported from) the shared directory
    np.testing.assert_allclose(tr.jit(jit_cases.elementwise, target="python")(X), jit_cases.elementwise(X))
    assert list(shared.iterdir()) == []
    assert list(used.glob("elementwise-*.py"))


def test_group_writable_cache_dir_is_refused(tmp_path, monkeypatch):
    shared = tmp_path / "group"
    shared.mkdir()
    shared.chmod(0o770)
    monkeypatch.setenv("TRANSFORMER_CACHE_DIR", str(shared))
    monkeypatch.setattr(cache, "_fallbacks", {})
    with pytest.warns(RuntimeWarning, match="group or others can write"):
        assert cache.cache_dir() != shared


def test_cache_dir_owned_by_another_user_is_refused(tmp_path, monkeypatch):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    real_stat = os.stat
    other_uid = os.getuid() + 1

    def stat_as_if_theirs(path, *args, **kwargs):
        result = real_stat(path, *args, **kwargs)
        if os.path.realpath(path) == str(theirs):
            fields = list(result)
            fields[stat.ST_UID] = other_uid
            return os.stat_result(fields)
        return result
    monkeypatch.setattr(os, "stat", stat_as_if_theirs)
    monkeypatch.setenv("TRANSFORMER_CACHE_DIR", str(theirs))
    monkeypatch.setattr(cache, "_fallbacks", {})
    with pytest.warns(RuntimeWarning, match=rf"{theirs}.*owned by another user \(uid {other_uid}"):
        used = cache.cache_dir()
    assert used != theirs and real_stat(used).st_uid == os.getuid()


def test_refused_dir_warns_once_and_keeps_one_fallback(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("TRANSFORMER_CACHE_DIR", str(shared))
    monkeypatch.setattr(cache, "_fallbacks", {})
    with pytest.warns(RuntimeWarning):
        first = cache.cache_dir()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # a second warning would raise here
        assert cache.cache_dir() == first


def test_private_existing_dir_is_used_without_warning(tmp_path, monkeypatch):
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    monkeypatch.setenv("TRANSFORMER_CACHE_DIR", str(mine))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.cache_dir() == mine


# The key of a function's module hashes what the code reads: a Jacobian's argnums and a
# linearization's primals held in a closure are part of what the code computes, so functions of
# one source holding different ones must not share a module (each gave the first one's result).

def test_closures_holding_jacobians_of_other_argnums_do_not_share_a_module(fresh_cache):
    x, y = np.array([0.3, -1.2]), np.array([1.5, 0.5])
    by_x = tr.jit(jit_cases.calling_a_jacobian(0), tiered=False)(x, y)
    by_y = tr.jit(jit_cases.calling_a_jacobian(1), tiered=False)(x, y)
    np.testing.assert_allclose(by_x, np.diag(np.cos(x) * y), rtol=1e-14)
    np.testing.assert_allclose(by_y, np.diag(np.sin(x)), rtol=1e-14)


def test_closures_holding_linearizations_at_other_primals_do_not_share_a_module(fresh_cache):
    t = np.array([1.0, 1.0])
    for x0 in (np.array([0.3, -1.2]), np.array([2.0, 0.5])):
        got = tr.jit(jit_cases.calling_a_linearization(x0), tiered=False)(t)
        np.testing.assert_allclose(got, np.cos(x0) * x0 + np.sin(x0), rtol=1e-14)


@pytest.mark.parametrize("kind", ["jacrev", "jacfwd"])
def test_has_aux_at_other_argnums_does_not_share_a_module(fresh_cache, kind):
    x, y = np.array([0.3, -1.2, 0.9]), np.array([1.5, 0.5, -2.0])
    transform = getattr(tr, kind)
    by_x, _ = tr.jit(transform(jit_cases.sine_times_with_aux, argnums=0, has_aux=True), tiered=False)(x, y)
    by_y, _ = tr.jit(transform(jit_cases.sine_times_with_aux, argnums=1, has_aux=True), tiered=False)(x, y)
    both, _ = tr.jit(transform(jit_cases.sine_times_with_aux, argnums=(0, 1), has_aux=True), tiered=False)(x, y)
    np.testing.assert_allclose(by_x, np.diag(np.cos(x) * y), rtol=1e-14)
    np.testing.assert_allclose(by_y, np.diag(np.sin(x)), rtol=1e-14)
    np.testing.assert_allclose(both[0], by_x, rtol=1e-14)
    np.testing.assert_allclose(both[1], by_y, rtol=1e-14)
