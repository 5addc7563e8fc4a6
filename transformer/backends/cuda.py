"""The CUDA target: generated numba.cuda kernels plus a host driver.

Two kinds of generated module, both readable with ``tr.show(f, target="cuda")``:

* array code (``cuda_fusion``): runs of consecutive elementwise statements
  become one fused kernel each; ``sum``/``mean``/``max``/``min`` and
  ``dot``/``@`` launch the library kernels of ``cuda_kernels``; a host
  driver (plain Python) launches them in order, arrays staying on the device;
* ``vmap`` of per-example scalar code (``cuda_vmap``): one thread per example.

Results come back as NumPy arrays when every array argument was a NumPy
array; when any argument is already a device array (``numba.cuda.to_device``)
results stay on the device (see ``cuda_runtime``).  Without a GPU, run with
``NUMBA_ENABLE_CUDASIM=1`` (set before numba.cuda is first imported): numba's
simulator runs the same kernels on the CPU, slowly.
"""
from __future__ import annotations

import functools

from ..emit import MODULE_PREAMBLE, user_location_in
from ..errors import CompileError
from . import cuda_fusion, cuda_vmap, per_example
from .cuda_runtime import CudaTargetError

NAME = "cuda"
PREAMBLE = MODULE_PREAMBLE + (
    "from numba import cuda\n"
    "from transformer.backends import cuda_runtime as cu\n"
    "from transformer.backends.cuda_kernels import tape_peek, tape_push\n"
)


def take_last_step(core, step):
    """vmap as the outermost step of per-example scalar code: one thread per example."""
    if step.name == "vmap":
        return per_example.take_vmap(core, dict(step.options))
    return None


def source(core):
    if isinstance(core, per_example.PerExampleVmap):
        return cuda_vmap.source(core), PREAMBLE
    return cuda_fusion.source(core), PREAMBLE


def finish(function, path):
    """The driver, with errors raised while it runs traced back to the user's line."""

    @functools.wraps(function)
    def run(*args):
        try:
            return function(*args)
        except CudaTargetError as err:
            import traceback
            where = user_location_in("".join(traceback.format_tb(err.__traceback__)), str(path))
            if where is None:
                raise
            raise CompileError(f"on the cuda target: {err}", where,
                               f"see `transformer show --target cuda` for the generated code ({path})") from err

    return run
