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
from numba.extending import overload, register_jitable

from .. import runtime as rt


def _part_kinds(index) -> list:
    """Per part of the index tuple: 'scalar' (an integer), 'slice', 'none' (np.newaxis), 'ellipsis',
    'array' (1-D integers), ('integers', ndim) (integers of more dimensions) or ('mask', ndim)."""
    kinds = []
    for part in index.types if isinstance(index, types.BaseTuple) else (index,):
        if isinstance(part, types.Integer):
            kinds.append("scalar")
        elif isinstance(part, types.NoneType):
            kinds.append("none")
        elif isinstance(part, types.EllipsisType):
            kinds.append("ellipsis")
        elif isinstance(part, types.SliceType):
            kinds.append("slice")
        elif isinstance(part, types.Array) and isinstance(part.dtype, types.Boolean):
            kinds.append(("mask", part.ndim))
        elif isinstance(part, types.Array) and isinstance(part.dtype, types.Integer) and part.ndim == 1:
            kinds.append("array")
        elif isinstance(part, types.Array) and isinstance(part.dtype, types.Integer):
            kinds.append(("integers", part.ndim))
        else:
            raise TypingError(f"an index part of type {part} is not supported in compiled reverse mode "
                              f"(integers, slices, integer arrays and boolean masks are)")
    if any(isinstance(k, tuple) and k[0] == "integers" for k in kinds) and \
            sum(1 for k in kinds if k == "array" or isinstance(k, tuple)) > 1:
        raise TypingError("an index with an integer array of other than one dimension beside another array or "
                          "mask is not supported in compiled reverse mode")
    return kinds


def _add_at_source(kinds) -> str:
    """The scatter-add for an index of these part kinds.  An integer array of d != 1 dimensions (the
    index's only array) is read flat, and the d axes of ``values`` it gave are made one."""
    for j, kind in enumerate(kinds):
        if isinstance(kind, tuple) and kind[0] == "integers":
            return _add_at_flat_source(kinds, j, kind[1])
    lines = ["def add_at(g, index, values):"]
    target, arrays, kinds_of_target = [], [], []     # the parts of g's index in the loop
    # values' axes in a basic index: one per slice and per new axis (read at 0: its length is 1)
    values_axes = [":" if kind == "slice" else "0" for kind in kinds if kind in ("slice", "none")]
    if "none" in kinds and any(kind not in ("scalar", "slice", "none") for kind in kinds):
        raise TypingError("an index with np.newaxis and an array or mask is not supported in compiled reverse mode")
    for j, kind in enumerate(kinds):
        if kind == "none":
            continue
        if isinstance(kind, tuple) and kind[0] == "ellipsis":      # the whole of the axes it stands for
            target += [":"] * kind[1]
            kinds_of_target += ["slice"] * kind[1]
            continue
        lines.append(f"    p{j} = index[{j}]")
        if isinstance(kind, tuple):                       # a mask: its positions' coordinates
            lines.append(f"    m{j} = np.nonzero(p{j})")
            for d in range(kind[1]):
                arrays.append(len(target))
                target.append(f"m{j}[{d}][k]")
                kinds_of_target.append("array")
        else:
            if kind == "array":
                arrays.append(len(target))
            target.append(f"p{j}[k]" if kind == "array" else f"p{j}")
            kinds_of_target.append(kind)
    if not arrays:
        read = f"values[{', '.join(values_axes)}]" if "none" in kinds else "values"
        lines += [f"    g[{', '.join(target)}] += {read}", "    return g"]
        return "\n".join(lines)
    first = target[arrays[0]].replace("[k]", "")
    # next to an array, an integer is an array index too (NumPy broadcasts them together)
    advanced = [i for i, part in enumerate(target) if i in arrays or kinds_of_target[i] == "scalar"]
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    slices_before = sum(1 for i in range(advanced[0]) if kinds_of_target[i] == "slice")
    values_at = ", ".join([":"] * slices_before + ["k"]) if adjacent else "k"
    lines += [f"    for k in range(len({first})):",
              f"        g[{', '.join(target)}] += values[{values_at}]",
              "    return g"]
    return "\n".join(lines)


def _add_at_loops_source(kinds, ndim: int, values_ndim: int) -> str | None:
    """The scatter-add for one 1-D integer array beside slices (``g[:, idx] += v``, ``g[idx] += v``
    of rows), as loops over single elements in ``values``' order, for ``values`` with an axis for
    each of ``g``'s (not broadcast); None for any other index.
    The general loop above adds ``values[:, k]`` or ``values[k]`` as a whole for each position
    ``k``: a view and an array expression per position, which costs more than the few elements
    they move where rows are short (a point's 3 coordinates)."""
    parts = []                  # per axis of g: ("slice", part) | ("array", part) | ("whole",)
    for j, kind in enumerate(kinds):
        if kind in ("slice", "array"):
            parts.append((kind, j))
        elif isinstance(kind, tuple) and kind[0] == "ellipsis":
            parts += [("whole",)] * kind[1]
        else:
            return None
    if [part[0] for part in parts].count("array") != 1 or values_ndim != ndim:
        return None
    parts += [("whole",)] * (ndim - len(parts))
    lines, loops, at = ["def add_at(g, index, values):"], [], []
    for axis, part in enumerate(parts):
        if part[0] == "slice":                  # the positions the slice names on this axis
            lines.append(f"    r{axis} = np.arange(g.shape[{axis}])[index[{part[1]}]]")
            loops.append(f"for i{axis} in range(len(r{axis})):")
            at.append(f"r{axis}[i{axis}]")
        elif part[0] == "array":
            lines.append(f"    p = index[{part[1]}]")
            loops.append(f"for i{axis} in range(len(p)):")
            at.append(f"p[i{axis}]")
        else:
            loops.append(f"for i{axis} in range(g.shape[{axis}]):")
            at.append(f"i{axis}")
    lines += ["    " * (depth + 1) + loop for depth, loop in enumerate(loops)]
    lines.append("    " * (len(loops) + 1)
                 + f"g[{', '.join(at)}] += values[{', '.join(f'i{axis}' for axis in range(len(parts)))}]")
    lines.append("    return g")
    return "\n".join(lines)


def _add_at_flat_source(kinds, at: int, ndim: int) -> str:
    """``g[..., a, ...] += values`` for one integer array ``a`` of ``ndim`` dimensions (0: one
    position): ``a`` flattened, and the ``ndim`` axes of ``values`` that ``a`` gave made one of
    ``a.size``, so the 1-D loop of ``_add_at_source`` applies."""
    flat_kinds = ["array" if j == at else kind for j, kind in enumerate(kinds)]
    loop = _add_at_source(flat_kinds).split("\n")
    # where a's axes are in values: after the leading slices when the advanced parts are adjacent
    advanced = [j for j, kind in enumerate(kinds) if kind == "scalar" or j == at]
    adjacent = advanced == list(range(advanced[0], advanced[-1] + 1))
    first = sum(1 if kinds[j] == "slice" else kinds[j][1] if isinstance(kinds[j], tuple) and kinds[j][0] == "ellipsis"
                else 0 for j in range(advanced[0])) if adjacent else 0
    header = [f"    a{at} = np.ascontiguousarray(index[{at}]).reshape(-1)",
              "    vs = values.shape",
              f"    flat_values = np.ascontiguousarray(values).reshape(vs[:{first}] + (a{at}.size,) + vs[{first + ndim}:])"]
    body = [line.replace(f"p{at} = index[{at}]", f"p{at} = a{at}").replace("+= values[", "+= flat_values[")
            for line in loop[1:]]
    return "\n".join(loop[:1] + header + body)


def take(x, index):
    """``x[index]`` for one index part (numba's own read of a mask of two or more dimensions is wrong)."""
    return x[index]


def whole(x):
    """``x[...]`` read: numba cannot lower an index that is a bare Ellipsis."""
    return x[...]


@overload(whole)
def _whole(x):
    if isinstance(x, types.Array):
        return lambda x: x          # the same memory, as the view x[...] is
    return None


def _is_mask(t) -> bool:
    return isinstance(t, types.Array) and isinstance(t.dtype, types.Boolean)


@overload(take)
def _take(x, index):
    if not (_is_mask(index) and index.ndim >= 2 and isinstance(x, types.Array)):
        return lambda x, index: x[index]
    if index.ndim == x.ndim:
        return lambda x, index: np.ascontiguousarray(x).reshape(-1)[np.ascontiguousarray(index).reshape(-1)]
    rest = x.ndim - index.ndim

    def leading(x, index):      # the mask picks along the leading axes: one row of the rest per True
        rows = np.ascontiguousarray(x).reshape((index.size,) + x.shape[index.ndim:])
        return rows[np.ascontiguousarray(index).reshape(-1)]
    return leading if rest >= 0 else None


def put(x, index, value):
    """``x[index] = value`` for one index part, as a call (see ``take``)."""
    x[index] = value


@overload(put)
def _put(x, index, value):
    if not (_is_mask(index) and index.ndim >= 2 and isinstance(x, types.Array)):
        def write(x, index, value):
            x[index] = value
        return write
    # one value per True (its rows, for a mask over leading axes), or one value broadcast to all
    per_position = isinstance(value, types.Array) and value.ndim == x.ndim - index.ndim + 1
    at = ", ".join(f"where[{d}][k]" for d in range(index.ndim))
    source = "\n".join(["def write(x, index, value):",
                        "    where = np.nonzero(index)",
                        "    for k in range(len(where[0])):",
                        f"        x[{at}] = value{'[k]' if per_position else ''}"])
    namespace = {"np": np}
    exec(source, namespace)   # noqa: S102  (code built from the fixed lines here)
    return namespace["write"]


def assign_into(view, value):
    """``view[...] = value``: a slice write ``x[1:] = value`` as a call on the view ``x[1:]``."""
    view[...] = value


def add_into(view, value):
    """``view[...] += value``: a cotangent summed into a slice of another (``x_bar[1:]``), in one
    pass over the view with no temporary array."""
    view[...] = view + value


def add_into_part(x, index, value):
    """``x[index] = x[index] + value``, reverse mode's cotangent of ``x[i]`` added in: where ``index``
    is an integer and ``x`` has more than one dimension, the row ``x[index]`` is a view, and the sum
    is made in it (add_into: no array for it); else as written."""
    x[index] = x[index] + value


@overload(add_into_part)
def _add_into_part(x, index, value):
    if isinstance(x, types.Array) and x.ndim >= 2 and isinstance(index, types.Integer):
        def add_into_row(x, index, value):
            add_into(x[index], value)
        return add_into_row

    def as_written(x, index, value):
        x[index] = x[index] + value
    return as_written


# numba's own slice write (``z[1:] = w``) took 2.4 us for 10,000 floats where a loop over them
# takes 0.9 us, and 5.6 us inside the RK4 benchmark's loop: 40 writes of its right-hand side took
# 220 us so and 76 us this way.  The loop runs where value has view's shape and their memory is
# apart; numba's write, which broadcasts and copies an overlapping value first, does the rest.
def _write_source(ndim: int, update: str) -> str:
    """A loop writing ``view[i] {update} value[i]`` (update: ``=`` or ``+=``), numba's own
    broadcasting write where the shapes differ or the memory overlaps."""
    at = ", ".join(f"i{d}" for d in range(ndim))
    lines = ["def write(view, value):",
             "    if view.shape == value.shape and _apart(view, value):"]
    for d in range(ndim):
        lines.append("    " * (d + 2) + f"for i{d} in range(view.shape[{d}]):")
    lines.append("    " * (ndim + 2) + f"view[{at}] {update} value[{at}]")
    lines += ["    else:", "        view[...] = value" if update == "=" else "        view[...] = view + value"]
    return "\n".join(lines)


def _extent(a):
    """The lowest and one past the highest byte address ``a`` reads."""
    low = high = a.ctypes.data
    for d in range(a.ndim):
        step = (a.shape[d] - 1) * a.strides[d]
        if step < 0:
            low += step
        else:
            high += step
    return low, high + a.itemsize


def _apart(a, b) -> bool:
    if a.size == 0 or b.size == 0:
        return True
    a_low, a_high = _extent(a)
    b_low, b_high = _extent(b)
    return a_high <= b_low or b_high <= a_low


_extent = register_jitable(_extent)
_apart = register_jitable(_apart)


@overload(assign_into)
def _assign_into(view, value):
    return _written(view, value, "=")


@overload(add_into)
def _add_into(view, value):
    return _written(view, value, "+=")


def _written(view, value, update: str):
    if not isinstance(view, types.Array):
        return None
    if isinstance(value, types.Array) and value.ndim == view.ndim and 1 <= view.ndim <= 3:
        namespace = {"_apart": _apart}
        exec(_write_source(view.ndim, update), namespace)   # noqa: S102  (code built from the fixed lines here)
        return namespace["write"]
    if update == "=":
        def write(view, value):
            view[...] = value
    else:
        def write(view, value):
            view[...] = view + value
    return write


def fits(view, value) -> bool:
    """Whether ``view[i] = f(value[i])`` element by element gives what ``view[...] = f(value)``
    does: ``value`` a number, or a 1-d array of the view's shape apart from its memory."""
    return not isinstance(value, np.ndarray) or (view.ndim == value.ndim == 1 and view.shape == value.shape
                                                  and _apart(view, value))


def at(value, i):
    """``value[i]`` for an array, the number itself otherwise (its broadcast)."""
    return value[i] if isinstance(value, np.ndarray) and value.ndim else value


@overload(fits)
def _fits(view, value):
    if not isinstance(value, types.Array):
        return lambda view, value: True
    if not (isinstance(view, types.Array) and view.ndim == value.ndim == 1):
        return lambda view, value: False
    return lambda view, value: view.shape == value.shape and _apart(view, value)


@overload(at)
def _at(value, i):
    if not isinstance(value, types.Array):
        return lambda value, i: value
    if value.ndim == 0:
        return lambda value, i: value[()]
    return lambda value, i: value[i]


@overload(rt.index_slice)
def index_slice(start, stop, step):
    return lambda start, stop, step: slice(start, stop, step)


def _ellipsis_expanded(kinds, ndim: int) -> list:
    """``...`` as the number of whole axes it stands for in an array of ``ndim`` dimensions."""
    if "ellipsis" not in kinds:
        return kinds
    # g's axes the other parts index: a mask its own dimensions, a new axis none, the rest one each
    taken = sum(k[1] if isinstance(k, tuple) and k[0] == "mask" else 0 if k in ("none", "ellipsis") else 1
                for k in kinds)
    return [("ellipsis", ndim - taken) if k == "ellipsis" else k for k in kinds]


@overload(rt.add_at)
def add_at(g, index, values):
    if isinstance(g, types.Number):
        # a number's cotangent (``x[..., None]`` of a number reads its one entry): every value adds to it
        return lambda g, index, values: g + np.sum(np.asarray(values))
    namespace = {"np": np}
    kinds = _ellipsis_expanded(_part_kinds(index), g.ndim)
    values_ndim = values.ndim if isinstance(values, types.Array) else 0
    exec(_add_at_loops_source(kinds, g.ndim, values_ndim) or _add_at_source(kinds), namespace)
    return namespace["add_at"]


@overload(rt.kept_writes)
def kept_writes(g, index):
    kinds = _part_kinds(index)
    if len(kinds) == 1 and isinstance(kinds[0], tuple):    # a mask names each position once
        return lambda g, index: take(g, index[0])

    def keep_last(g, index):
        part = g[index].copy()
        order = np.zeros(g.shape, np.int64)
        positions = np.arange(1, part.size + 1).reshape(part.shape)
        order[index] = positions
        return np.where(order[index] == positions, part, 0.0 * part)
    return keep_last


@overload(rt.take_at)
def take_at(g, index):
    kinds = _part_kinds(index)
    if len(kinds) == 1 and isinstance(kinds[0], tuple):    # a mask: numba's own read of 2-D ones is wrong
        return lambda g, index: take(g, index[0])
    return lambda g, index: g[index]
