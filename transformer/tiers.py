"""Tiered execution of the ``cpu`` target: the first calls are answered at once, numba compiles aside.

A jitted function's first call used to wait for numba (seconds: typing, lowering, LLVM).  Under
tiering, the first call of a ``cpu`` build

1. writes the python and cpu modules (one pass of the transforms, ``staging.write_modules``; writing
   the cpu module loads no numba), and hands numba's work to a **background process**
   (``python -m transformer.backends.background_compile``) that compiles the cpu module for these
   arguments' types and writes the machine code to numba's on-disk cache;
2. answers the call on the **python tier**: the python module, plain NumPy, which needs no compile.

Later calls keep using the python tier until the background compile is done; then they run the
compiled code, loaded from the cache (numba is loaded then, once).  A separate process, not a
thread, so the compile never holds the caller's GIL; at most half the cores' worth of them run at
once (``_COMPILE_SLOTS``), the others queue.

**Code that is slow in Python** (a long scalar loop): a python-tier call still running when the
compile finishes is interrupted and answered by the compiled code instead, so a call never waits
much longer than the compile would have made it wait.  This is safe to abandon half-way because
generated code never writes into the caller's arrays (an argument written in place is copied on
entry, ``staging.copy_written_arguments``); only side effects of the user's own code (a ``print``)
may be seen twice.

**Results** of the two tiers agree within floating-point reassociation: numba may fuse and
vectorise sums (``numba_vecmath``, ``numba_fusion``) in an order NumPy does not use.  **Errors** are
the compiled tier's: a python-tier call that raises waits for the compile and is answered by the
compiled code, which raises its own error (numba's, at the user's line).  A compile that fails in the
background is redone in this process at the next call, which raises numba's error as an untiered
build does; so code that NumPy runs but numba cannot type (a variable that changes type) answers
its first calls and then raises.  A call with argument types the background compile did not
cover compiles in this process, as without tiering.

**Opt out** with ``tr.jit(f, tiered=False)`` or ``TRANSFORMER_TIERED=0`` (the test suite does, to test
compiled code from its first call); ``tr.tier_of(f)`` and ``tr.show(f)`` say which tier ran last.
"""
from __future__ import annotations

import ctypes
import itertools
import os
import subprocess
import sys
import tempfile
import threading

ENVIRONMENT_SWITCH = "TRANSFORMER_TIERED"
PYTHON, COMPILED = "python", "compiled"
_call_order = itertools.count(1)    # which of a function's builds ran last
# Background compiles run at most this many at once (each is a process of a few hundred MB, busy on
# one core); the rest queue, their functions answered on the python tier meanwhile.  Half the
# cores leaves the others to the caller.
_COMPILE_SLOTS = threading.BoundedSemaphore(max(1, (os.cpu_count() or 2) // 2))


def enabled(tiered: bool | None) -> bool:
    """``tiered`` as given to ``jit``, else the environment's choice (on unless set to 0)."""
    if tiered is not None:
        return bool(tiered)
    return os.environ.get(ENVIRONMENT_SWITCH, "1").strip().lower() not in ("0", "false", "no", "off")


class _CompiledIsReady(BaseException):
    """Raised inside a python-tier call when the compiled code became ready (a BaseException, so
    that no ``except Exception`` in NumPy or in the user's code swallows it)."""


def _interrupt(thread_id: int, exception=_CompiledIsReady) -> None:
    """Raise ``exception`` in thread ``thread_id`` at its next bytecode (None: cancel a pending one)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id),
                                               ctypes.py_object(exception) if exception else None)


class Tiered:
    """One generated function under tiering: its python tier, its compiled tier and the compile aside.

    ``build_python()`` and ``build_compiled()`` build the two callables; ``write_compiled_module()``
    only writes the cpu module and returns its (path, entry function), without importing numba.
    They are called when first needed, so nothing is generated for a function never called, and
    the compiled tier is built (numba loaded, the machine code read from its cache) only when the
    background compile is done."""

    def __init__(self, build_python, build_compiled, write_compiled_module):
        self._build_python = build_python
        self._build_compiled = build_compiled
        self._write_compiled_module = write_compiled_module
        self._python = None
        self._compiled = None
        self._state = "new"               # new -> compiling -> compiled (or in-process)
        self._lock = threading.Lock()       # the state and the threads in python-tier calls
        self._building = threading.Lock()   # building the compiled tier
        self._done = threading.Event()      # the background compile ended (or none will run)
        self._python_threads: set = set()   # threads now running a python-tier call
        self._interrupted: set = set()      # ... to whom _CompiledIsReady was sent
        self.process = None
        self.last_tier, self.last_call = None, 0
        self.calls = {PYTHON: 0, COMPILED: 0}

    # ------------------------------------------------------------------ the calls
    def __call__(self, *args):
        if self._state == "new":
            self._start(args)
        if self._state != "compiling":
            return self._run_compiled(args)
        if self._python is None:                 # the python tier could not be built: wait for numba
            self.wait()
            return self._run_compiled(args)
        me = threading.get_ident()
        with self._lock:
            python_tier = self._state == "compiling"     # else finished meanwhile
            if python_tier:
                self._python_threads.add(me)
        if not python_tier:
            return self._run_compiled(args)
        try:
            try:
                result = self._python(*args)
            finally:
                with self._lock:
                    self._python_threads.discard(me)
                    if me in self._interrupted:   # sent, maybe not yet raised: cancel it
                        self._interrupted.discard(me)
                        _interrupt(me, None)
        except _CompiledIsReady:
            with self._lock:
                self._python_threads.discard(me)
                self._interrupted.discard(me)
            return self._run_compiled(args)
        except Exception:
            # errors are the compiled code's to raise (numba's at the user's line, or its own result)
            self.wait()
            return self._run_compiled(args)
        self.last_tier, self.last_call = PYTHON, next(_call_order)
        self.calls[PYTHON] += 1
        return result

    def _run_compiled(self, args):
        result = self._compiled_tier()(*args)
        self.last_tier, self.last_call = COMPILED, next(_call_order)
        self.calls[COMPILED] += 1
        return result

    @property
    def dispatcher(self):
        """The compiled tier's numba dispatcher (building the compiled tier if not yet built)."""
        return self._compiled_tier().dispatcher

    def _compiled_tier(self):
        if self._compiled is None:
            with self._building:
                if self._compiled is None:
                    self._compiled = self._build_compiled()
        return self._compiled

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the background compile is done (True) or ``timeout`` seconds passed (False)."""
        if self._state == "new":
            return False
        return self._done.wait(timeout)

    # ------------------------------------------------------------------ the compile aside
    def _start(self, args) -> None:
        with self._lock:
            if self._state != "new":
                return
            from .backends import background_compile   # imports no numba
            request = background_compile.request(*self._write_compiled_module(), args)
            if request is None:                  # argument types the request cannot carry
                self._state = "in-process"
                self._done.set()
                return
            descriptor, request_file = tempfile.mkstemp(prefix="transformer-compile-", suffix=".pickle")
            with os.fdopen(descriptor, "wb") as file:
                file.write(request)
            self._state = "compiling"
        threading.Thread(target=self._compile_aside, args=(request_file,), daemon=True,
                         name="transformer-compile-aside").start()
        try:
            self._python = self._build_python()     # while the compile has started
        except Exception:
            self._python = None                     # the compiled tier answers, and raises what it raises

    def _compile_aside(self, request_file: str) -> None:
        """Run the background compile when a slot is free, and wait for it (outside the GIL)."""
        with _COMPILE_SLOTS:
            # the child finds transformer where this process did (installed or on a sys.path entry)
            environment = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
            try:
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "transformer.backends.background_compile", request_file],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                    env=environment)
            except OSError:               # no process could be started: compile in this one instead
                returncode = -1
            else:
                returncode = self.process.wait()
        self._finished(returncode)

    def _finished(self, returncode: int) -> None:
        with self._lock:
            if self._state != "compiling":
                return
            # a failed compile is redone here at the next call, to raise numba's error at the user's line
            self._state = "compiled" if returncode == 0 else "in-process"
            if returncode == 0:
                for thread_id in self._python_threads:
                    self._interrupted.add(thread_id)
                    _interrupt(thread_id)
            self._done.set()


def last_called(builds) -> Tiered | None:
    """Of a function's tiered builds (one per static values and argument structure), the one called last."""
    called = [b for b in builds if b.last_tier is not None]
    return max(called, key=lambda b: b.last_call) if called else None


def describe(tiered: Tiered | None) -> str:
    """One comment line for ``tr.show``: which tier ran, and how often."""
    if tiered is None:
        return ("# tiered: not called yet; its first calls will run on the python tier while numba compiles "
                "in a background process (TRANSFORMER_TIERED=0 or jit(..., tiered=False) turns this off)\n")
    compile_state = {"compiling": "still compiling", "compiled": "done",
                     "in-process": "done in this process"}.get(tiered._state, tiered._state)
    return (f"# tiered: the last call ran on the {tiered.last_tier} tier ({tiered.calls[PYTHON]} python-tier "
            f"and {tiered.calls[COMPILED]} compiled calls so far; background compile {compile_state})\n")
