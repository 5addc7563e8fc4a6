"""Where generated modules live, and how they are named.

A generated module is a real ``.py`` file, so tracebacks, pdb, ``inspect``
and numba's own on-disk cache all work on it.  Its name carries a hash of
everything it was made from — the user's source, every helper and constant it
reads, the transform chain, and the versions of the code that wrote it — so a
second import finds it without running libcst at all.
"""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import contextlib
import os
import stat
import sys
import tempfile
import threading
import types
import warnings
from pathlib import Path

try:
    import fcntl
except ImportError:      # not POSIX: the in-process lock in staging still holds
    fcntl = None

import numpy as np

from . import primitives, resolve
from .custom import custom_jvp, custom_vjp

_PACKAGE_ROOT = Path(__file__).resolve().parent
_code_hash: str | None = None


def cache_dir() -> Path:
    """The per-user cache directory, created private (0700) if missing.

    Importing a generated module runs it, so whoever can write into this
    directory could make our imports run their code.  A directory another
    user owns, or that group or others can write, is refused with a warning;
    the process then uses a private temporary directory instead.
    """
    configured = os.environ.get("TRANSFORMER_CACHE_DIR")
    if configured:
        path = Path(configured)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = Path(base) / "transformer"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    problem = unsafe_reason(path)
    if problem is None:
        return path
    with _fallback_lock:
        if path not in _fallbacks:
            _fallbacks[path] = private_tempdir()
            warnings.warn(f"transformer: not using cache directory {path}: {problem}; "
                          f"using the private temporary directory {_fallbacks[path]} instead",
                          RuntimeWarning, stacklevel=2)
        return _fallbacks[path]


_fallbacks: dict[Path, Path] = {}   # refused directory -> this process's private replacement
_fallback_lock = threading.Lock()


def unsafe_reason(path: Path) -> str | None:
    """Why ``path`` is not safe to import generated code from, or None if it is."""
    if not hasattr(os, "getuid"):        # no POSIX owners or modes to check (Windows)
        return None
    info = os.stat(path)
    if info.st_uid != os.getuid():
        return f"it is owned by another user (uid {info.st_uid}, we are uid {os.getuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"group or others can write to it (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def code_version() -> str:
    """A hash of transformer's own source: generated code changes when it does."""
    global _code_hash
    if _code_hash is None:
        stamps = [f"{sys.version_info[:2]} numpy {np.__version__}"]
        for root in (_PACKAGE_ROOT, _templates_dir()):
            if root is not None:
                _file_stamps(str(root), "", stamps)
        _code_hash = hashlib.sha256("\n".join(stamps).encode()).hexdigest()
    return _code_hash


def _templates_dir() -> str | None:
    """Where ``transformer.templates`` is installed, found without importing it
    (a source checkout keeps it beside the package, not inside)."""
    spec = importlib.util.find_spec("transformer.templates")
    return spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else None


def _file_stamps(directory: str, relative: str, stamps: list) -> None:
    """Name, size and modification time of every ``.py`` file under ``directory``.

    Each file's stat, not its bytes: the walk runs once per process, on every
    warm start.  ``os.scandir`` rather than ``Path.rglob`` (pathlib's per-file
    objects made it five times slower), and one hash of all the lines at the end.
    """
    with os.scandir(directory) as entries:
        for entry in sorted(entries, key=_entry_name):
            if entry.name.endswith(".py"):
                info = entry.stat()
                stamps.append(f"{relative}{entry.name}:{info.st_size}:{info.st_mtime_ns}")
            elif entry.name != "__pycache__" and entry.is_dir(follow_symlinks=False):
                _file_stamps(entry.path, f"{relative}{entry.name}/", stamps)


def _entry_name(entry) -> str:
    return entry.name


def fingerprint(fn, chain: str) -> str:
    """A key for the generated module of ``fn`` under ``chain``, found without libcst.

    It walks code objects: the source of ``fn`` and of every user function it
    can reach by name, and the value of every constant those names read.
    """
    digest = hashlib.sha256(code_version().encode())
    digest.update(chain.encode())
    seen: set = set()
    _visit(fn, digest, seen)
    return digest.hexdigest()


def _visit(fn, digest, seen):
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None or code in seen:
        return
    seen.add(code)
    # where the source sits, too: generated comments and error messages cite file:line
    digest.update(f"{code.co_filename}:{code.co_firstlineno}".encode())
    _hash_code(code, digest)
    digest.update(repr((fn.__defaults__, fn.__kwdefaults__)).encode())
    closure = {}
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:
            pass
    names = _all_names(code)
    for name in sorted(names):
        if name in closure:
            value = closure[name]
        elif name in fn.__globals__:
            value = fn.__globals__[name]
        else:
            continue
        _visit_value(name, value, digest, seen, names)


def _visit_value(name, value, digest, seen, attributes=()):
    """Hash what the generated code will read from ``value`` (``attributes``:
    the attribute names the code mentions, for objects such as a config class)."""
    inner = getattr(value, "__transformer_fn__", None)
    primitive = primitives.lookup(value) if callable(value) else None
    if primitive is not None:
        # which primitive a name stands for is baked into the generated code: ``f = np.max``
        # after ``f = np.sum`` must not find the module written for the sum
        digest.update(f"{name}=primitive {primitive.name}".encode())
    elif inner is not None:
        digest.update(repr(getattr(value, "__transformer_chain__", "")).encode())
        _visit(inner, digest, seen)
    elif hasattr(value, "cache_parts"):
        # an object whose code form holds values of its own (linearize's primals): they and its
        # functions are what the code calling it computes with
        described, functions = value.cache_parts()
        _hash_value(f"{name}={type(value).__name__}", described, digest)
        for function in functions:
            _visit(function, digest, seen)
    elif isinstance(value, (custom_vjp, custom_jvp)):
        # its rules are inlined as well as its own code: a name rebound to another custom function,
        # or a rule edited, must not find the module written for the old one
        digest.update(f"{name}={type(value).__name__}".encode())
        for part in (value.fun, getattr(value, "fwd", None), getattr(value, "bwd", None), getattr(value, "jvp", None)):
            if part is not None:
                digest.update(repr(getattr(part, "__qualname__", "")).encode())
                _visit(part, digest, seen)
    elif isinstance(value, types.FunctionType) and primitives.lookup(value) is None:
        if not value.__module__ or not value.__module__.startswith(("numpy", "math")):
            _visit(value, digest, seen)
    elif isinstance(value, types.ModuleType):
        if not value.__name__.startswith(("numpy", "math", "transformer")):
            _visit_attributes(name, value, digest, seen, attributes)   # a user module: mod.NAME
    elif resolve.is_constant_value(value):
        _hash_value(name, value, digest)
    elif not isinstance(value, (types.BuiltinFunctionType, np.ufunc)):
        # a config object or class, or an object that is also callable: the attributes the code
        # reads are baked into the generated code (OBJ.k), so a change to one must not find it
        _visit_attributes(name, value, digest, seen, attributes)


def _visit_attributes(name, value, digest, seen, attributes):
    """Hash the attributes the code names that ``value`` has (a user module, class or object)."""
    if id(value) in seen:
        return
    seen.add(id(value))
    for attr in sorted(attributes):
        item = getattr(value, attr, None)
        if item is not None:
            _visit_value(f"{name}.{attr}", item, digest, seen, attributes)


def _hash_value(name, value, digest):
    digest.update(name.encode())
    if isinstance(value, tuple):        # each entry on its own: an array's repr elides all but its ends
        digest.update(f"tuple of {len(value)}".encode())
        for k, entry in enumerate(value):
            _hash_value(f"{name}[{k}]", entry, digest)
        return
    if isinstance(value, dict):         # a config dict: each key and its entry
        digest.update(f"dict of {len(value)}".encode())
        for key in sorted(value):
            _hash_value(f"{name}[{key!r}]", value[key], digest)
        return
    if isinstance(value, np.ndarray):
        digest.update(f"{value.dtype}{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    else:
        digest.update(repr((type(value).__name__, value)).encode())


def _hash_code(code, digest) -> None:
    """What a function's source compiles to, and where each line sits.

    Bytecode, names, constants and the line table change whenever the source
    changes in a way that matters (an edit, a line moved), and reading them
    needs no file: ``inspect.getsource`` would read and tokenize the file.
    """
    digest.update(code.co_code)
    digest.update(repr((code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars)).encode())
    digest.update(code.co_linetable)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _hash_code(const, digest)
        else:
            digest.update(repr((type(const).__name__, const)).encode())


def _all_names(code) -> set[str]:
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _all_names(const)
    return names


def private_tempdir() -> Path:
    """A fresh directory only this user can read or write (mkdtemp makes it 0700)."""
    return Path(tempfile.mkdtemp(prefix="transformer-"))



@contextlib.contextmanager
def file_lock(directory: Path):
    """Hold the exclusive lock of the cache ``directory``, across processes.

    Two processes that miss the cache at once would both generate the same
    module; with the lock the second waits, then finds the first one's file
    intact.  One lock file for the directory: generating is brief, and a lock
    file per module would outlive `transformer cache clear`.
    """
    if fcntl is None:
        yield
        return
    fd = os.open(directory / ".transformer.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)          # closing releases the lock
