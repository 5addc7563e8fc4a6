"""One naming scheme for all generated code.

``x_dot`` is the tangent of ``x``, ``x_bar`` its cotangent, ``_t0, _t1, ...``
are temporaries, and a generated function is named after its transform
(``grad_loss``, ``jvp_f``, ``vmap_f``).  Every name a transform invents comes
from a ``NameScope``, so no two values ever share a name.
"""
from __future__ import annotations

# Names that generated modules use for themselves; user variables that happen
# to be called this are renamed.  Besides builtins, these are the names the
# backends' preambles import (a test holds every preamble to this list): the
# core does not import a backend to ask.
RESERVED = frozenset({
    "len", "float", "int", "bool", "range", "min", "max", "abs", "round", "True", "False", "None",
    "np", "math", "rt", "lax", "random",                         # every target
    "nl", "vm", "List", "numba", "prange", "results_like",       # the CPU target (numba)
    "active_first", "group_size", "restore_lane_order",          # vmap's SIMD lanes
    "dev", "mpi_dev",                                            # pmap on CPU devices and over MPI
    "cuda", "cu", "cdev", "tape_peek", "tape_push",              # the CUDA target
})


class NameScope:
    """Hands out names that are unique within one generated function."""

    def __init__(self, taken=()):
        self.taken: set[str] = set(RESERVED) | set(taken)
        self._temp_counter = 0

    def claim(self, name: str) -> str:
        """``name`` itself if it is free, else ``name_1``, ``name_2``, ..."""
        candidate, n = name, 0
        while candidate in self.taken:
            n += 1
            candidate = f"{name}_{n}"
        self.taken.add(candidate)
        return candidate

    def temp(self) -> str:
        while True:
            name = f"_t{self._temp_counter}"
            self._temp_counter += 1
            if name not in self.taken:
                self.taken.add(name)
                return name


def tangent(name: str) -> str:
    return f"{name}_dot"


def cotangent(name: str) -> str:
    return f"{name}_bar"

