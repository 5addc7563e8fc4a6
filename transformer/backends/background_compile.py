"""The compile a tiered build hands to a background process (transformer/tiers.py).

    python -m transformer.backends.background_compile REQUEST.pickle

The request names a generated cpu module, its entry function and, for each argument of the first
call, what numba types it by: an array's dtype, rank, layout and writeability, a scalar's type.
This process imports the module, wraps the function exactly as ``cpu.finish`` does, and compiles
it for those types; numba writes the machine code to its on-disk cache, where the caller's process
loads it.  Exit status 0 means the cache holds it.

``request`` runs in the caller's process and imports no numba (it takes a tenth of a second or
more to load); only this process does.
"""
from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np


def _describe(value):
    """What numba's ``typeof`` reads of one argument, or None if it is not an array or a number."""
    if isinstance(value, np.ndarray):
        layout = "C" if value.flags.c_contiguous else "F" if value.flags.f_contiguous else "A"
        return ("array", value.dtype.str, value.ndim, layout, bool(value.flags.writeable))
    if type(value) in (bool, int, float):          # numba types a Python number by its type alone
        return ("python", type(value)(1))
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return ("numpy", value.dtype.str)
    return None


def request(path, entry: str, args) -> bytes | None:
    """What the background process needs, or None when an argument's type cannot be carried (the
    caller then compiles in its own process, as without tiering)."""
    described = [_describe(a) for a in args]
    if any(d is None for d in described):
        return None
    return pickle.dumps({"path": str(path), "entry": entry, "arguments": described})


def _example(description):
    """A value numba types exactly as the described argument."""
    kind = description[0]
    if kind == "python":
        return description[1]
    if kind == "numpy":
        return np.dtype(description[1]).type(1)
    _, dtype, ndim, layout, writeable = description
    if layout == "A":             # strided: every other element of the last axis
        value = np.zeros((2,) * max(ndim - 1, 0) + (4,), dtype=dtype)[..., ::2] if ndim else np.zeros((), dtype)
    else:
        value = np.zeros((2,) * ndim, dtype=dtype, order=layout)
    value.flags.writeable = writeable
    return value


def main(request_file: str) -> int:
    path = Path(request_file)
    request_ = pickle.loads(path.read_bytes())
    path.unlink(missing_ok=True)
    from .. import emit
    from . import cpu
    module_path = Path(request_["path"])
    compiled = cpu.finish(getattr(emit.load(module_path), request_["entry"]), module_path)
    dispatcher = compiled.dispatcher
    compiled.compile_for(tuple(dispatcher.typeof_pyval(_example(d)) for d in request_["arguments"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
