"""The CUDA target's kernels as the real CUDA compiler sees them: PTX, with or without a GPU.

numba's simulator (``NUMBA_ENABLE_CUDASIM=1``) runs kernels as Python
threads, so it accepts code that NVVM refuses: calls it cannot lower, Python
objects, types it cannot infer.  Passing on the simulator proves the values;
compiling to PTX proves a GPU would run the code.  NVVM ships as a wheel
(``pip install "numba-cuda[cu12]"``), so no GPU is needed for either step:

1. **record** (``recording_launches``): while kernels run on the simulator,
   note each launch: the kernel (its module and the global name bound to it),
   the numba types of its arguments, and the user line whose code launched it;
2. **compile** (``compile_launch``): in a process *without* the simulator
   (the setting is fixed for a process's life), compile each recorded kernel
   with ``numba.cuda.compile_ptx`` for a compute capability, and, where the
   toolkit wheel brings ``ptxas``, assemble the PTX to read the registers each
   thread uses and the bytes it spills.

A launch record is plain JSON, so the two steps meet through a file.
``transformer show --target cuda --ptx`` and tests/test_cuda.py use both.
"""
from __future__ import annotations

import contextlib
import dataclasses
import importlib
import re
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numpy as np

ARCHITECTURES = ((9, 0), (8, 0))     # Hopper (sm_90) and Ampere (sm_80)


@dataclasses.dataclass(frozen=True)
class KernelLaunch:
    """One kernel at one argument signature, and where the user's code launched it."""

    module: str                 # an importable module name, or the path of a generated module
    name: str                   # the global name the kernel is bound to there
    arguments: tuple            # one descriptor per argument (see ``describe``)
    where: str | None = None    # "file.py:LINE" of the user code behind the launch

    def to_json(self) -> dict:
        # dict(...), not a display: the field "where" (the user's line) is no np.where to the registry's test
        return dict(module=self.module, name=self.name, arguments=[list(a) for a in self.arguments], where=self.where)

    @classmethod
    def from_json(cls, record: dict) -> "KernelLaunch":
        return cls(record["module"], record["name"], tuple(tuple(a) for a in record["arguments"]), record["where"])

    def signature_text(self) -> str:
        return ", ".join(_type_text(a) for a in self.arguments)


def describe(value) -> tuple:
    """A JSON-able descriptor of a kernel argument's numba type: arrays by dtype, rank and layout."""
    host = getattr(value, "_ary", value)          # the simulator's device arrays wrap a NumPy array
    if isinstance(host, np.ndarray) or hasattr(value, "__cuda_array_interface__"):
        array = host if isinstance(host, np.ndarray) else value
        contiguous = array.flags["C_CONTIGUOUS"] if hasattr(array, "flags") else True
        return ("array", np.dtype(array.dtype).str, array.ndim, "C" if contiguous else "A")
    if isinstance(value, (bool, np.bool_)):
        return ("scalar", "?")
    if isinstance(value, int):
        return ("scalar", np.dtype(np.int64).str)
    if isinstance(value, float):
        return ("scalar", np.dtype(np.float64).str)
    if isinstance(value, np.generic):
        return ("scalar", value.dtype.str)
    raise TypeError(f"a kernel argument of type {type(value).__name__} has no CUDA type")


def _type_text(descriptor) -> str:
    if descriptor[0] == "array":
        _, dtype, ndim, layout = descriptor
        strided = "" if layout == "C" else " strided"
        return f"{np.dtype(dtype).name}[{', '.join([':'] * int(ndim))}]{strided}"
    return np.dtype(descriptor[1]).name


def numba_type(descriptor):
    from numba.core import types
    from numba.np.numpy_support import from_dtype
    if descriptor[0] == "array":
        _, dtype, ndim, layout = descriptor
        return types.Array(from_dtype(np.dtype(dtype)), int(ndim), layout)
    return from_dtype(np.dtype(descriptor[1]))


# ------------------------------------------------------------------ recording
@contextlib.contextmanager
def recording_launches():
    """Collect a ``KernelLaunch`` for each distinct kernel and signature launched on the simulator."""
    from numba.cuda.simulator import kernel as simulated

    launches: dict = {}
    original = simulated.FakeCUDAKernel.__call__

    def launch(self, *args):
        if not self._device and not simulated._kernel_context:       # a launch from the host
            record = _launch_record(self, args)
            launches.setdefault((record.module, record.name, record.arguments), record)
        return original(self, *args)

    simulated.FakeCUDAKernel.__call__ = launch
    found: list = []
    try:
        yield found
    finally:
        simulated.FakeCUDAKernel.__call__ = original
        found.extend(launches.values())


def _launch_record(kernel, args) -> KernelLaunch:
    fn = kernel.fn
    module = fn.__globals__.get("__name__", "")      # (device code runs on a copy of its module's globals)
    names = [name for name, value in vars(sys.modules[module]).items() if value is kernel]
    if not names:
        raise RuntimeError(f"kernel {fn.__qualname__} is not bound to a module-level name, so a compiler in "
                           f"another process cannot find it")
    if module.startswith("transformer_generated."):
        module = fn.__globals__["__file__"]
    return KernelLaunch(module, names[0], tuple(describe(a) for a in args), _user_line())


def _user_line() -> str | None:
    """The user line behind the innermost frame of generated code on the caller's stack."""
    from ..emit import user_location
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("transformer_generated."):
            where = user_location(frame.f_code.co_filename, frame.f_lineno)
            if where is not None:
                return f"{Path(where.filename).name}:{where.line}"
        frame = frame.f_back
    return None


def write_launches(launches, path) -> None:
    import json
    Path(path).write_text("\n".join(json.dumps(launch.to_json()) for launch in launches) + "\n")


def read_launches(path) -> list[KernelLaunch]:
    import json
    return [KernelLaunch.from_json(json.loads(line)) for line in Path(path).read_text().splitlines() if line]


# ------------------------------------------------------------------ compiling
@dataclasses.dataclass
class CompiledKernel:
    launch: KernelLaunch
    cc: tuple
    ptx: str
    registers: int | None = None        # per thread, from ptxas (None without ptxas)
    spill_bytes: int | None = None


class PtxCompileError(Exception):
    """The real CUDA compiler refused a kernel that the simulator ran."""


def kernel_of(launch: KernelLaunch):
    """The compiled-on-demand numba.cuda kernel a launch record names (imports its module)."""
    if launch.module.endswith(".py"):
        from ..emit import load
        module = load(Path(launch.module))
    else:
        module = importlib.import_module(launch.module)
    return getattr(module, launch.name)


def compile_launch(launch: KernelLaunch, cc=ARCHITECTURES[0], assemble: bool = True) -> CompiledKernel:
    """PTX of one recorded kernel for compute capability ``cc``; a refusal names the user's line."""
    from numba import cuda
    kernel = kernel_of(launch)
    signature = tuple(numba_type(a) for a in launch.arguments)
    try:
        with _device_functions_compiled_for(cc):
            ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=cc)
    except Exception as err:
        where = f" (launched for {launch.where})" if launch.where else ""
        raise PtxCompileError(f"{launch.name}({launch.signature_text()}){where} does not compile for "
                              f"sm_{cc[0]}{cc[1]}: {type(err).__name__}: {str(err).strip()[:2000]}") from err
    compiled = CompiledKernel(launch, tuple(cc), ptx)
    if assemble and ptxas() is not None:
        compiled.registers, compiled.spill_bytes = assembled_resources(ptx, cc, launch)
    return compiled


@contextlib.contextmanager
def _device_functions_compiled_for(cc):
    """numba-cuda compiles the device functions a kernel calls for the *current GPU's* compute
    capability, which it asks the driver for; with no GPU there is no driver to ask, so while
    compiling for ``cc`` the answer is ``cc``.  (Device functions are cached per argument types,
    so one process compiles for one ``cc``: see ``main``.)"""
    from numba import cuda
    from numba.cuda import dispatcher
    if cuda.is_available():
        yield
        return
    asked = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=tuple(cc))
    try:
        yield
    finally:
        dispatcher.get_current_device = asked


def ptxas() -> str | None:
    """The ptxas of the CUDA toolkit wheel (nvidia-cuda-nvcc-cu12), or one on PATH."""
    try:
        import nvidia.cuda_nvcc
        for root in nvidia.cuda_nvcc.__path__:
            candidate = Path(root) / "bin" / "ptxas"
            if candidate.exists():
                return str(candidate)
    except ImportError:
        pass
    return shutil.which("ptxas")


_REGISTERS = re.compile(r"Used (\d+) registers")
_SPILLS = re.compile(r"(\d+) bytes spill stores")


def assembled_resources(ptx: str, cc, launch: KernelLaunch) -> tuple[int, int]:
    """Assemble PTX to machine code with ptxas (what the driver does at load time): registers and spills."""
    with tempfile.TemporaryDirectory(prefix="transformer-ptx-") as directory:
        source = Path(directory) / "kernel.ptx"
        source.write_text(ptx)
        run = subprocess.run([ptxas(), f"-arch=sm_{cc[0]}{cc[1]}", "-v", str(source), "-o",
                              str(Path(directory) / "kernel.cubin")], capture_output=True, text=True)
    if run.returncode != 0:
        raise PtxCompileError(f"ptxas refused the PTX of {launch.name}: {run.stderr.strip()[:2000]}")
    registers = [int(n) for n in _REGISTERS.findall(run.stderr)]
    spills = [int(n) for n in _SPILLS.findall(run.stderr)]
    return max(registers, default=0), max(spills, default=0)


def describe_compiled(compiled: CompiledKernel) -> str:
    """A header a reader can scan: kernel, types, user line, registers; then the PTX."""
    launch = compiled.launch
    lines = [f"// kernel {launch.name}({launch.signature_text()})",
             f"// launched for {launch.where or 'library code'}; compiled for sm_{compiled.cc[0]}{compiled.cc[1]}"]
    if compiled.registers is not None:
        lines.append(f"// ptxas: {compiled.registers} registers per thread, {compiled.spill_bytes} bytes spilled")
    approximate = sorted(set(re.findall(r"\b((?:ex2|lg2|sin|cos|rcp|rsqrt|sqrt)\.approx)", compiled.ptx)))
    calls = sorted(set(re.findall(r"call(?:\.uni)?\s*(?:\([^)]*\),\s*)?(\w+)", compiled.ptx)))
    lines.append(f"// hardware approximations: {', '.join(approximate) or 'none'}; "
                 f"calls left in the PTX: {', '.join(calls) or 'none (everything inlined)'}")
    return "\n".join(lines) + "\n" + compiled.ptx


# ------------------------------------------------------------- as a program
def main(argv=None) -> int:
    """``python -m transformer.backends.cuda_ptx LAUNCHES.jsonl --cc 9.0 [--ptx]``: compile every
    recorded launch for one compute capability, one JSON line each (``"ok"`` or the compiler's
    refusal), or with ``--ptx`` each kernel's PTX under its header (``transformer show --ptx``).
    One process per capability: numba-cuda caches device functions per argument types only."""
    import argparse
    import json
    parser = argparse.ArgumentParser(prog="python -m transformer.backends.cuda_ptx")
    parser.add_argument("launches")
    parser.add_argument("--cc", default="9.0", help="compute capability, e.g. 9.0 (sm_90) or 8.0")
    parser.add_argument("--ptx", action="store_true", help="print each kernel's PTX instead of a JSON line")
    args = parser.parse_args(argv)
    cc = tuple(int(part) for part in args.cc.split("."))
    refused = 0
    for launch in read_launches(args.launches):
        record = dict(kernel=launch.name, signature=launch.signature_text(), where=launch.where)
        try:
            compiled = compile_launch(launch, cc)
            record.update(outcome="ok", registers=compiled.registers, spill_bytes=compiled.spill_bytes)
        except PtxCompileError as err:
            refused += 1
            record.update(outcome=str(err))
            if args.ptx:
                print(f"transformer: refused by the CUDA compiler: {err}", file=sys.stderr)
                continue
        print(describe_compiled(compiled) if args.ptx else json.dumps(record), flush=True)
    return 1 if args.ptx and refused else 0


if __name__ == "__main__":
    sys.exit(main())
