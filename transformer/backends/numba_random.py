"""tr.random for numba: each key function and sampler is a call back into NumPy.

Generated code keeps the spelling it has on every target (``random.normal(key, (3,))``).  numba
knows no such function, so each gets an ``overload`` whose compiled body hands its arguments to the
NumPy function itself, through a C callback registered as a named symbol (as pmap's collectives
are, ``cpu_threads``): the numbers a jitted function draws are the ones ``tr.random`` gives outside
it, bit for bit, without a second implementation of threefry2x32 and XLA's erfinv to keep in step.
A call costs a trip into the interpreter (microseconds), which draws of initial weights, dropout
masks or minibatches can afford.

Why not ``numba.objmode``: its code needs a run-time environment that numba names with a counter
of the process that compiled it, so a function loaded from numba's on-disk cache in another process
(every tiered first call, transformer/tiers.py) cannot find it.  A named symbol and plain integers
stay valid across processes.

The call goes in two steps.  The compiled code packs the arguments into one byte buffer and a frame
of int64s that describes them (which parameter, array or tuple or scalar, dtype, shape) and the
result it typed, all of it stable across processes; the host rebuilds them, calls the NumPy
function, checks that the result has the typed dtype and rank, keeps it and writes its shape.  The compiled code then allocates the result (its dtype and rank were fixed when
numba typed the call: ``_RESULTS``) and the host copies the kept result into it.
"""
from __future__ import annotations

import ctypes
import inspect
import sys
import threading

import numba
import numpy as np
from llvmlite import binding as llvm
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
    if isinstance(t, (types.NumberClass, types.DType)):
        return np.dtype(str(t.dtype))
    raise TypingError(f"tr.random takes dtype= as a NumPy type such as np.float32, not {t}")


def _rank(t) -> int:
    return t.ndim if isinstance(t, types.Array) else 0


def _dtype(t):
    return np.dtype(str(t.dtype if isinstance(t, types.Array) else t))


# What each function returns, from its arguments' types: (dtype, rank).  Its order numbers the
# functions in compiled (cached) code's frames: append only, never reorder.
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
    "exponential": _floats, "laplace": _floats, "logistic": _floats,
    "rademacher": lambda args: (_dtype_of(args["dtype"], np.int64), _rank_of_shape(args["shape"])),
}

# ------------------------------------------------------------------ the frame
# Codes compiled into cached machine code: append only, never reorder.
_FUNCTIONS = tuple(_RESULTS)
_DTYPES = tuple(np.dtype(d) for d in (np.bool_, np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16,
                                      np.int32, np.int64, np.float16, np.float32, np.float64))
ARRAY, TUPLE, SCALAR, DTYPE = range(4)          # how an argument travels
_HEADER = 4                                     # function code, number of arguments, result dtype code, rank
_MAX_RANK = 8
_RECORD = 5 + _MAX_RANK                         # parameter, kind, dtype code, byte offset, ndim, shape...


def _dtype_code(dtype) -> int:
    try:
        return _DTYPES.index(np.dtype(dtype))
    except ValueError:
        raise TypingError(f"tr.random in compiled code takes booleans, integers and floats, not {dtype}") from None


# ------------------------------------------------------------------ host side
_kept = threading.local()            # the result of step one, per calling thread (pmap's devices)


def _arguments(frame, payload):
    function = getattr(random, _FUNCTIONS[frame[0]])
    params = list(inspect.signature(function).parameters)
    kwargs = {}
    for i in range(frame[1]):
        param, kind, dtype_code, offset, ndim, *shape = frame[_HEADER + i * _RECORD: _HEADER + (i + 1) * _RECORD]
        dtype = _DTYPES[dtype_code]
        if kind == DTYPE:
            kwargs[params[param]] = dtype
            continue
        shape = tuple(int(n) for n in shape[:ndim])
        count = int(np.prod(shape, dtype=np.int64))
        value = np.frombuffer(payload, dtype, count, offset).reshape(shape).copy()
        kwargs[params[param]] = (tuple(int(v) for v in value) if kind == TUPLE else
                                 value[()] if kind == SCALAR else value)
    return function, kwargs


def _host_call(frame_address, payload_address, payload_size, shape_address, out_address):
    """Step one (``out_address`` 0): call the function, keep its result, write its shape.  Step two:
    copy the kept result to ``out_address``.  Returns 0, or -1 after printing the function's error."""
    try:
        if out_address == 0:
            count = ctypes.cast(frame_address, ctypes.POINTER(ctypes.c_int64))[1]
            frame = np.ctypeslib.as_array(ctypes.cast(frame_address, ctypes.POINTER(ctypes.c_int64)),
                                          shape=(_HEADER + count * _RECORD,))
            payload = ctypes.string_at(payload_address, payload_size) if payload_size else b""
            function, kwargs = _arguments(frame.tolist(), payload)
            result = np.asarray(function(**kwargs), order="C")       # (ascontiguousarray makes 0-d 1-d)
            expected = (_DTYPES[frame[2]], int(frame[3]))
            if (result.dtype, result.ndim) != expected:       # the compiled code allocates what it typed
                raise TypeError(f"{function.__name__} gave {result.dtype}[{result.ndim}-d] where compiled code "
                                f"expected {expected[0]}[{expected[1]}-d]")
            _kept.result = result
            shape = np.ctypeslib.as_array(ctypes.cast(shape_address, ctypes.POINTER(ctypes.c_int64)),
                                          shape=(max(result.ndim, 1),))
            shape[:result.ndim] = result.shape
            if not result.ndim:
                shape[0] = 1
            return 0
        result = _kept.result
        _kept.result = None
        ctypes.memmove(out_address, result.ctypes.data, result.nbytes)
        return 0
    except Exception as err:           # noqa: BLE001  (it cannot cross the C boundary: say it here)
        print(f"tr.random in compiled code: {type(err).__name__}: {err}", file=sys.stderr)
        return -1


_CALLBACK_TYPE = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                  ctypes.c_int64)
_CALLBACK = _CALLBACK_TYPE(_host_call)          # kept alive for the life of the process
_SYMBOL = "transformer_random_call"
llvm.add_symbol(_SYMBOL, ctypes.cast(_CALLBACK, ctypes.c_void_p).value)
_host = types.ExternalFunction(_SYMBOL, types.int64(types.intp, types.intp, types.int64, types.intp, types.intp))


# ------------------------------------------------------------------ compiled side
def _packing(param_index: int, name: str, t, record: int) -> tuple[list[str], str]:
    """(statements, byte count expression) that put argument ``name`` (numba type ``t``) in the frame
    and, from offset ``at``, in the payload."""
    base = _HEADER + record * _RECORD
    if isinstance(t, (types.NumberClass, types.DType)):
        return [f"frame[{base}] = {param_index}; frame[{base + 1}] = {DTYPE}; "
                f"frame[{base + 2}] = {_dtype_code(_dtype_of(t, None))}"], "0"
    if isinstance(t, types.BaseTuple):
        lines = [f"{name}_v = np.empty({len(t)}, np.int64)"] + [f"{name}_v[{k}] = {name}[{k}]" for k in range(len(t))]
        kind, dtype = TUPLE, np.int64
    elif isinstance(t, types.Array):
        if t.ndim > _MAX_RANK:
            raise TypingError(f"tr.random in compiled code takes arrays of rank {_MAX_RANK} at most")
        lines = [f"{name}_v = np.ascontiguousarray({name})"]
        kind, dtype = ARRAY, _dtype(t)
    elif isinstance(t, (types.Boolean, types.Integer, types.Float)):
        dtype = _dtype(t)
        lines = [f"{name}_v = np.empty(1, np.{dtype.name})", f"{name}_v[0] = {name}"]
        kind = SCALAR
    else:
        raise TypingError(f"tr.random in compiled code cannot take {t} as {name}")
    lines += [f"frame[{base}] = {param_index}; frame[{base + 1}] = {kind}; frame[{base + 2}] = {_dtype_code(dtype)}",
              f"frame[{base + 3}] = at; frame[{base + 4}] = {0 if kind == SCALAR else f'{name}_v.ndim'}"]
    if kind != SCALAR:
        lines += [f"for k in range({name}_v.ndim): frame[{base + 5} + k] = {name}_v.shape[k]"]
    lines += [f"payload[at:at + {name}_v.nbytes] = np.ascontiguousarray({name}_v).reshape(-1).view(np.uint8)",
              f"at += {name}_v.nbytes"]
    return lines, f"{name}_v.nbytes"


def _overload(name: str) -> None:
    """Overload ``random.<name>``: type the result from the arguments, and compile the two-step call."""
    fn = getattr(random, name)
    signature = inspect.signature(fn)
    params = list(signature.parameters)
    result_of = _RESULTS[name]

    def typer(*args, **kwargs):
        given = signature.bind(*args, **kwargs).arguments
        given = {p: given.get(p) for p in params}
        dtype, rank = result_of(given)
        passed = [(i, p) for i, p in enumerate(params) if _given(given[p])]
        packing, sizes = [], []
        for record, (i, p) in enumerate(passed):
            lines, size = _packing(i, p, given[p], record)
            packing += lines
            sizes.append(size)
        # the payload's size is known once the arguments' copies are made: make them first
        copies = [line for line in packing if line.startswith(tuple(f"{p}_v" for _, p in passed))]
        rest = [line for line in packing if line not in copies]
        body = [f"frame = np.zeros({_HEADER + len(passed) * _RECORD}, np.int64)",
                f"frame[0] = {_FUNCTIONS.index(name)}; frame[1] = {len(passed)}; "
                f"frame[2] = {_dtype_code(dtype)}; frame[3] = {rank}",
                *copies,
                f"payload = np.empty(max({' + '.join(s for s in sizes if s != '0') or '0'}, 1), np.uint8)",
                "at = 0",
                *rest,
                f"shape = np.empty({max(rank, 1)}, np.int64)",
                "if host(frame.ctypes.data, payload.ctypes.data, at, shape.ctypes.data, 0) < 0:",
                f"    raise ValueError('tr.random.{name} failed in compiled code (its error is printed above)')",
                f"out = np.empty(to_fixed_tuple(shape, {max(rank, 1)}), np.{np.dtype(dtype).name})",
                "host(frame.ctypes.data, payload.ctypes.data, at, shape.ctypes.data, out.ctypes.data)",
                f"return out{'[0]' if not rank else ''}"]
        text = f"def impl({str(signature)[1:-1]}):\n" + "".join(f"    {line}\n" for line in body)
        scope = {"np": np, "host": _host, "to_fixed_tuple": _to_fixed_tuple}
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


from numba.np.unsafe.ndarray import to_fixed_tuple as _to_fixed_tuple  # noqa: E402

for _name in _FUNCTIONS:
    _overload(_name)
