"""tr.random for numba: each key function and sampler runs in object mode.

Generated code keeps the spelling it has on every target (``random.normal(key, (3,))``).  numba
knows no such function, so each gets an ``overload`` whose body leaves compiled code for one
call of the NumPy function itself (``numba.objmode``): the numbers a jitted function draws are
the ones ``tr.random`` gives outside it, bit for bit, without a second implementation of
threefry2x32 and XLA's erfinv to keep in step.  A call costs the trip into the interpreter (a few
microseconds), which draws of initial weights or dropout masks can afford.

numba needs the result's type when it compiles the call; it follows from the argument types:
the rank from the ``shape`` tuple (or ``p``'s, ``logits``' or ``x``'s), the dtype from the
literal ``dtype=`` (read here, and handed to the call as that constant).
"""
from __future__ import annotations

import inspect

import numba
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from .. import random


def _given(t) -> bool:
    """Whether the call gives this argument (numba hands a left-out one's default, or Omitted)."""
    return isinstance(t, types.Type) and not isinstance(t, (types.Omitted, types.NoneType))


def _rank_of_shape(t) -> int:
    """The rank a ``shape`` argument gives: a tuple's length, 1 for an int, 0 left out."""
    if not _given(t):
        return 0
    if isinstance(t, types.BaseTuple):
        return len(t)
    if isinstance(t, types.Integer):
        return 1
    raise TypingError(f"tr.random takes a shape as a tuple of ints, not {t}")


def _dtype_of(t, default):
    """The NumPy dtype a ``dtype=`` argument names (a class such as np.float32, or np.dtype(...))."""
    if not _given(t):
        return np.dtype(default)
    if isinstance(t, types.NumberClass):
        return np.dtype(str(t.dtype))
    if isinstance(t, types.DType):
        return np.dtype(str(t.dtype))
    raise TypingError(f"tr.random takes dtype= as a NumPy type such as np.float32, not {t}")


def _rank(t) -> int:
    return t.ndim if isinstance(t, types.Array) else 0


def _dtype(t):
    return np.dtype(str(t.dtype if isinstance(t, types.Array) else t))


# What each function returns, from its arguments' types: (dtype, rank).
def _keys(args):
    return np.uint32, 1


def _split(args):
    num = args["num"]
    return np.uint32, 1 + (len(num) if isinstance(num, types.BaseTuple) else 1)


def _floats(args):
    return _dtype_of(args["dtype"], np.float64), _rank_of_shape(args["shape"])


_RESULTS = {
    "PRNGKey": _keys, "key": _keys, "key_data": _keys, "fold_in": _keys, "split": _split,
    "bits": lambda args: (_dtype_of(args["dtype"], np.uint64), _rank_of_shape(args["shape"])),
    "uniform": _floats, "normal": _floats, "gumbel": _floats,
    "bernoulli": lambda args: (np.bool_, _rank_of_shape(args["shape"]) if _given(args["shape"]) else _rank(args["p"])),
    "categorical": lambda args: (np.int64, _rank_of_shape(args["shape"]) if _given(args["shape"])
                                 else _rank(args["logits"]) - 1),
    "randint": lambda args: (_dtype_of(args["dtype"], np.int64), _rank_of_shape(args["shape"])),
    "permutation": lambda args: ((_dtype(args["x"]), args["x"].ndim) if isinstance(args["x"], types.Array)
                                 else (np.int64, 1)),
    "choice": lambda args: ((_dtype(args["a"]), args["a"].ndim - 1 + _rank_of_shape(args["shape"]))
                            if isinstance(args["a"], types.Array) else (np.int64, _rank_of_shape(args["shape"]))),
}


def _result_type(dtype, rank):
    scalar = numba.from_dtype(np.dtype(dtype))
    return types.Array(scalar, rank, "C") if rank else scalar


def _object_mode(name: str) -> None:
    """Overload ``random.<name>``: type the result from the arguments, then call the NumPy function in
    object mode with the arguments given (a left-out one keeps its default; ``dtype=`` is passed as
    the constant read from its type, which object mode could not receive as a value)."""
    fn = getattr(random, name)
    signature = inspect.signature(fn)
    params = list(signature.parameters)
    result_of = _RESULTS[name]

    def typer(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        given = {p: bound.arguments.get(p) for p in params}
        dtype, rank = result_of(given)
        out_type = _result_type(dtype, rank)
        passed = [p for p in params if p != "dtype" and _given(given[p])]
        call = ", ".join(f"{p}={p}" for p in passed)
        if _given(given.get("dtype")):
            call += ", dtype=dtype_constant"
        pick = ".item()" if not rank else ""
        text = (f"def impl({str(signature)[1:-1]}):\n"
                f"    with numba.objmode(out=out_type):\n"
                f"        out = np.ascontiguousarray(draw({call})){pick}\n"
                f"    return out\n")
        scope = {"numba": numba, "np": np, "draw": fn, "out_type": out_type, "dtype_constant": np.dtype(dtype)}
        exec(text, scope)
        return scope["impl"]

    overload(fn)(_with_signature(typer, signature))


def _with_signature(typer, signature):
    """``typer`` as a function whose code has ``signature`` (numba inspects the code, not
    ``__signature__``)."""
    text = (f"def typed({str(signature)[1:-1]}):\n"
            f"    return typer({', '.join(signature.parameters)})\n")
    scope = {"typer": typer}
    exec(text, scope)
    return scope["typed"]


for _name in _RESULTS:
    _object_mode(_name)
