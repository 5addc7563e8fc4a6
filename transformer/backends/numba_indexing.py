"""Array indices for numba: reverse mode's scatter-add and the reads numba lacks.

``rt.add_at(g, index, values)`` is ``np.add.at``, which numba does not have.
Its index is a tuple of parts: integers, slices (``rt.index_slice``), 1-D
integer arrays and boolean masks.  The overload writes, for the part types it
is given, one loop over the positions the arrays name, so a position named
twice is added to twice::

    g[s0, a1[k], s2] += values[:, k]        # index (slice, array, slice)

Masks become the integer arrays of their ``np.nonzero``.  Where arrays are
separated by a slice, NumPy puts their dimension first (``values[k]``).
"""
from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .. import runtime as rt


def _part_kinds(index) -> list:
    """Per part of the index tuple: 'int', 'slice', 'array' (1-D integers) or ('mask', ndim)."""
    kinds = []
    for part in index.types if isinstance(index, types.BaseTuple) else (index,):
        if isinstance(part, types.Integer):
            kinds.append("int")
        elif isinstance(part, types.SliceType):
            kinds.append("slice")
        elif isinstance(part, types.Array) and isinstance(part.dtype, types.Boolean):
            kinds.append(("mask", part.ndim))
        elif isinstance(part, types.Array) and isinstance(part.dtype, types.Integer) and part.ndim == 1:
            kinds.append("array")
        else:
            raise TypingError(f"an index part of type {part} is not supported in compiled reverse mode "
                              f"(integers, slices, 1-D integer arrays and boolean masks are)")
    return kinds


def _add_at_source(kinds) -> str:
    lines = ["def add_at(g, index, values):"]
    target, arrays = [], []
    for j, kind in enumerate(kinds):
        lines.append(f"    p{j} = index[{j}]")
        if isinstance(kind, tuple):                       # a mask: its positions' coordinates
            lines.append(f"    m{j} = np.nonzero(p{j})")
            for d in range(kind[1]):
                arrays.append(len(target))
                target.append(f"m{j}[{d}][k]")
        elif kind == "array":
            arrays.append(len(target))
            target.append(f"p{j}[k]")
        else:
            target.append(f"p{j}")
    if not arrays:
        lines += [f"    g[{', '.join(target)}] += values", "    return g"]
        return "\n".join(lines)
    first = target[arrays[0]].replace("[k]", "")
    adjacent = arrays == list(range(arrays[0], arrays[-1] + 1))
    slices_before = sum(1 for j, kind in enumerate(kinds) if kind == "slice" and target.index(f"p{j}") < arrays[0])
    values_at = ", ".join([":"] * slices_before + ["k"]) if adjacent else "k"
    lines += [f"    for k in range(len({first})):",
              f"        g[{', '.join(target)}] += values[{values_at}]",
              "    return g"]
    return "\n".join(lines)


@overload(rt.index_slice)
def index_slice(start, stop, step):
    return lambda start, stop, step: slice(start, stop, step)


@overload(rt.add_at)
def add_at(g, index, values):
    namespace = {"np": np}
    exec(_add_at_source(_part_kinds(index)), namespace)
    return namespace["add_at"]


@overload(rt.kept_writes)
def kept_writes(g, index):
    _part_kinds(index)

    def keep_last(g, index):
        part = g[index].copy()
        order = np.zeros(g.shape, np.int64)
        positions = np.arange(1, part.size + 1).reshape(part.shape)
        order[index] = positions
        return np.where(order[index] == positions, part, 0.0 * part)
    return keep_last
