"""The registry of primitives: the operations every transform has rules for.

A primitive is one NumPy-level operation (``sin``, ``add``, ``sum``,
``getitem``...).  The frontend maps whatever the user wrote — ``np.sin``,
``math.sin``, ``from numpy import sin``, ``x + y`` — onto one registry entry;
the core form then spells it one way (``np.sin(x)``, ``x + y``), and each
transform looks its rule up here by name.

Nothing in this module knows about a backend.  Backends decide how to lower a
primitive (``backends/numba_lowering.py`` for the CPU).
"""
from __future__ import annotations

import builtins
import math
import operator
import sys
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import lax, random, runtime

# Kinds group primitives whose rules look alike.
UNARY = "unary"            # elementwise, one array argument
BINARY = "binary"          # elementwise, two broadcasting arguments
COMPARE = "compare"        # elementwise, boolean result (never differentiable)
REDUCE = "reduce"          # reductions with axis= / keepdims=
LINALG = "linalg"
SHAPE = "shape"            # reshapes, transposes, joins: move values, no arithmetic
CREATE = "create"          # builds new arrays from shapes or values
INDEX = "index"            # getitem / setitem
CAST = "cast"
QUERY = "query"            # shape, len, ndim, size: integer answers
SPECIAL = "special"        # stop_gradient, collectives, runtime helpers


@dataclass(frozen=True)
class Lowering:
    """How a compiled backend runs a call it cannot compile as written (numba has no
    ``np.max(x, axis=...)``): a call of one of its helpers (numba: ``nl.max_axis``) with the call's
    operands, or a rewrite of the backend's own, by name."""
    helper: str = ""
    # what the helper is passed, by position: parameter or keyword names, "axis=None" where the call
    # may leave it out; () passes the primitive's parameters that the call gives
    arguments: tuple[str, ...] = ()
    when_written: tuple[str, ...] = ()   # lower only a call that writes one of these keywords
    when_given: tuple[str, ...] = ()     # lower only a call that gives one of these a value other than None
    rewrite: str = ""                    # the backend's rewrite of that name instead of a helper call


COLLECTIVE_KINDS = ("reduce", "gather", "permute", "index")


@dataclass(frozen=True)
class Collective:
    """What a named-axis collective computes from the values of the devices (or examples) of its
    axis.  The device backends (backends/cpu_threads.py, cpu_devices.py, mpi.py, cuda_devices.py)
    dispatch on this, never on the primitive's name.  ``does`` is one of COLLECTIVE_KINDS:

    - "reduce": every device gets the devices' values combined elementwise by ``reduction``, a
      NumPy ufunc applied in device order (np.add: psum), divided by the device count if ``mean``
      (the mean of ints is a float);
    - "gather": every device gets the devices' values stacked along a new leading axis;
    - "permute": each device gets the value of the device that the ``perm`` operand's
      (source, destination) pairs send to it, zeros where none does;
    - "index": each device gets its own position along the axis; no value is exchanged.

    A device's call of it takes the primitive's parameters and keywords less ``axis_name`` (the
    device belongs to exactly one axis), keywords defaulting as the primitive's ``impl`` says."""
    does: str
    reduction: Callable | None = None
    mean: bool = False

    def __post_init__(self):
        if self.does not in COLLECTIVE_KINDS:
            raise ValueError(f"unknown collective kind {self.does!r}")
        if (self.does == "reduce") != (self.reduction is not None) or (self.mean and self.does != "reduce"):
            raise ValueError("only a reducing collective has a reduction, and it must have one")


@dataclass(frozen=True)
class Primitive:
    name: str                       # registry key, e.g. "sin"
    spelling: str                   # core-form spelling: "np.sin", or an operator such as "+"
    impl: Callable                  # what the python backend runs
    kind: str
    params: tuple[str, ...]         # positional parameter names (rules use them)
    keywords: tuple[str, ...] = ()  # keyword parameters it accepts
    aliases: tuple = field(default=(), repr=False)  # Python objects that mean this primitive
    may_alias: bool = False         # its result may share memory with its first operand (a view)
    # the names of the results of a primitive that returns a tuple (NumPy's field names), in order:
    # the core form binds the tuple to one name and picks each by position (_t0 = np.linalg.eigh(a);
    # w = _t0[0]); reverse mode gives each result a cotangent of its own, vmap a batching of its own
    results: tuple[str, ...] = ()
    # its results are index arrays, one per axis (np.triu_indices): x[iu] reads as x[iu[0], iu[1]]
    index_arrays: bool = False
    # CUDA device code can call it (numba-cuda lowers no np.isinf, which np.nan_to_num needs)
    on_device: bool = True
    # what static shape analysis (transforms/shapes.py) knows of its result, one of SHAPE_RULES;
    # "" takes the rule of its kind (elementwise kinds combine their operands, reductions drop axes)
    shape_rule: str = ""
    # parameters whose value it never reads, only their shape (rt.unbroadcast(g, x) reads x's
    # shape): reverse mode need not tape them for it
    shape_only: tuple[str, ...] = ()
    # a named-axis collective (lax.psum...): vmap and pmap give it meaning over their axis_name, and
    # what it computes across the devices of that axis (a Collective, always truthy); None otherwise
    collective: Collective | None = None
    # reverse mode's tape: "new" makes one, "push" and "pop" change it, "top" reads its last entry
    tape: str = ""
    # backend -> Lowering, where the backend cannot compile the call as written
    lowering: dict = field(default_factory=dict, hash=False, compare=False)
    # operands that, written as a Python number, take the precision of the array operands (NumPy's
    # NEP 50: float32 * 2.0 is float32), which a backend typing literals as float64 must keep
    scalars_follow_arrays: tuple[str, ...] = ()
    # the ndarray methods that mean it, the receiver its first operand (x.sum(axis=1) is
    # np.sum(x, axis=1)); ``spread_argument``: the parameter a method may also take spread out
    # (x.reshape(2, 3) for x.reshape((2, 3))); ``attribute``: the ndarray attribute that means it (x.T)
    methods: tuple[str, ...] = ()
    spread_argument: str = ""
    attribute: str = ""
    # its result is its first operand (a reduction's cotangent) broadcast over its second's shape,
    # the reduced axes named by axis= and keepdims=: where the first already broadcasts (axis=None,
    # or keepdims=True), an elementwise expression that reads the second can read it instead
    expands: bool = False
    # JAX's functional update ``x.at[index].<at_update>(v)`` that means: x with this primitive of its
    # entries there and v written back (maximum: "max")
    at_update: str = ""
    # called with one positional operand, that operand is its stop and its start is 0, as range(n)'s
    range_like: bool = False
    # it raises where its input is refused (rt.scalar_seed: grad of a function whose output is not a
    # scalar), so the call stays where its result is never read
    checks_input: bool = False
    # aliases that always make a new array, where the primitive returns an array argument as it is
    # (np.array and np.asarray): the normalizer copies an argument that is not a display for them
    copying_aliases: tuple = field(default=(), repr=False)

    @property
    def is_operator(self) -> bool:
        return self.spelling == "not" or not self.spelling[0].isalpha()


REGISTRY: dict[str, Primitive] = {}
BY_SPELLING: dict[str, Primitive] = {}
_BY_OBJECT: dict[int, Primitive] = {}
_KEEP_ALIVE: list = []  # objects whose id() keys _BY_OBJECT
# module -> [(attribute, primitive)]: aliases in a library that transformer does not import itself
# (scipy.special), bound once the user has imported it (see lookup)
_LIBRARY_ALIASES: dict[str, list[tuple[str, Primitive]]] = {}


# What shapes.py can say of a result without running the code (``shape_rule``).  A rule with a
# parameter after the colon reads that parameter: "like:x" is shaped like operand x,
# "given_shape:shape" has the shape that the literal tuple (or the scalar) ``shape`` gives.
SHAPE_RULES = ("elementwise", "reduce", "scalar", "shape_tuple", "same", "like", "product", "given_shape",
               "rank", "same_rank", "one_more_axis", "tape_entry", "indexed", "array", "unknown")


def register(name, spelling, impl, kind, params, keywords=(), aliases=(), may_alias=False, results=(),
             library_aliases=(), index_arrays=False, on_device=True, shape_rule="", shape_only=(),
             collective=None, tape="", numba=None, scalars_follow_arrays=(), methods=(), spread_argument="",
             attribute="", expands=False, at_update="", range_like=False, checks_input=False,
             copying_aliases=()) -> Primitive:
    """``library_aliases``: dotted names such as ``"scipy.special.erf"``, for objects of a module
    that importing transformer should not import."""
    prim = Primitive(name, spelling, impl, kind, tuple(params), tuple(keywords), tuple(aliases), may_alias,
                     tuple(results), index_arrays, on_device, shape_rule or _kind_shape_rule(kind, name),
                     tuple(shape_only), collective, tape, {"numba": numba} if numba else {},
                     tuple(scalars_follow_arrays), tuple(methods), spread_argument, attribute, expands, at_update,
                     range_like, checks_input, tuple(copying_aliases))
    if name in REGISTRY:
        raise ValueError(f"primitive {name!r} registered twice")
    if prim.shape_rule.partition(":")[0] not in SHAPE_RULES:
        raise ValueError(f"primitive {name!r}: unknown shape rule {prim.shape_rule!r}")
    if not set(prim.shape_only) <= set(prim.params):
        raise ValueError(f"primitive {name!r}: shape_only names a parameter it does not have")
    REGISTRY[name] = prim
    if not prim.is_operator:  # operators are found by token and arity instead
        BY_SPELLING[spelling] = prim
    for obj in (impl, *aliases, *copying_aliases):
        _bind(obj, prim)
    for dotted in library_aliases:
        module, _, attribute = dotted.rpartition(".")
        _LIBRARY_ALIASES.setdefault(module, []).append((attribute, prim))
    return prim


def _kind_shape_rule(kind: str, name: str) -> str:
    if kind in (UNARY, BINARY, COMPARE):
        return "elementwise"
    if kind == REDUCE:     # cumsum(x) without an axis is flat: how many axes is not known here
        return "unknown" if name.startswith("cum") else "reduce"
    return "array" if kind in (CREATE, SHAPE) else "unknown"


def _bind(obj, prim: Primitive) -> None:
    _BY_OBJECT.setdefault(id(obj), prim)
    _KEEP_ALIVE.append(obj)


def lookup(obj) -> Primitive | None:
    """The primitive a Python object stands for (np.sin, math.sin, abs...), or None."""
    prim = _BY_OBJECT.get(id(obj))
    if prim is None and _LIBRARY_ALIASES:
        # a user's function can only hold scipy.special.erf once scipy.special is imported, so
        # binding its aliases at the first miss after that import misses none
        for module in [m for m in _LIBRARY_ALIASES if m in sys.modules]:
            for attribute, aliased in _LIBRARY_ALIASES.pop(module):
                _bind(getattr(sys.modules[module], attribute), aliased)
        prim = _BY_OBJECT.get(id(obj))
    return prim


def get(name: str) -> Primitive:
    return REGISTRY[name]


# ---------------------------------------------------------------- elementwise
_MATH_TWINS = {  # math-module functions that mean the NumPy ufunc of another name
    "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
    "arccosh": "acosh", "arctanh": "atanh", "arctan2": "atan2",
}

for _name in ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
              "arcsinh", "arccosh", "arctanh", "exp", "expm1", "exp2", "log", "log1p",
              "log2", "log10", "sqrt", "cbrt", "square", "reciprocal", "abs", "sign",
              "floor", "ceil", "rint", "trunc", "isnan", "isinf", "isfinite", "fabs",
              "deg2rad", "rad2deg"]:
    _aliases = [getattr(math, _MATH_TWINS.get(_name, _name))] if hasattr(math, _MATH_TWINS.get(_name, _name)) else []
    if _name == "abs":
        _aliases += [np.absolute, builtins.abs]
    if _name in ("deg2rad",):
        _aliases += [np.radians, math.radians]
    if _name in ("rad2deg",):
        _aliases += [np.degrees, math.degrees]
    register(_name, f"np.{_name}", getattr(np, _name), COMPARE if _name.startswith("is") else UNARY,
             ("x",), aliases=_aliases,
             numba=Lowering("sign") if _name == "sign" else None)   # numba's sign of unsigned ints is -1 above 2**(bits-1)

register("round", "np.round", np.round, UNARY, ("x",), keywords=("decimals",), aliases=(np.around, builtins.round),
         methods=("round",))
register("negative", "-", operator.neg, UNARY, ("x",), aliases=(np.negative,))
register("positive", "+", operator.pos, UNARY, ("x",), aliases=(np.positive,))
# Python's ``not`` (a truth value, for conditions) and np.logical_not (elementwise) differ on arrays.
register("not", "not", operator.not_, COMPARE, ("x",))
register("logical_not", "np.logical_not", np.logical_not, COMPARE, ("x",))
register("invert", "~", operator.invert, COMPARE, ("x",), aliases=(np.invert, np.bitwise_not))

_OPERATORS = {  # name: (operator spelling, operator function, numpy ufunc)
    "add": ("+", operator.add, np.add),
    "subtract": ("-", operator.sub, np.subtract),
    "multiply": ("*", operator.mul, np.multiply),
    "divide": ("/", operator.truediv, np.true_divide),
    "floor_divide": ("//", operator.floordiv, np.floor_divide),
    "mod": ("%", operator.mod, np.mod),
    "power": ("**", operator.pow, np.power),
    "matmul": ("@", operator.matmul, np.matmul),
}
# JAX's x.at[index].<method>(v) for the binary primitives that have one
_AT_UPDATES = {"add": "add", "multiply": "multiply", "divide": "divide", "power": "power", "maximum": "max",
               "minimum": "min"}
for _name, (_spell, _op, _ufunc) in _OPERATORS.items():
    _extra = (np.divide,) if _name == "divide" else (np.remainder,) if _name == "mod" else ()
    if _name == "power":
        _extra = (math.pow,)
    register(_name, _spell, _op, LINALG if _name == "matmul" else BINARY, ("x", "y"), aliases=(_ufunc, *_extra),
             shape_rule="product" if _name == "matmul" else "",
             scalars_follow_arrays=() if _name == "matmul" else ("x", "y"), at_update=_AT_UPDATES.get(_name, ""))

_COMPARISONS = {
    "less": ("<", operator.lt, np.less), "less_equal": ("<=", operator.le, np.less_equal),
    "greater": (">", operator.gt, np.greater), "greater_equal": (">=", operator.ge, np.greater_equal),
    "equal": ("==", operator.eq, np.equal), "not_equal": ("!=", operator.ne, np.not_equal),
}
for _name, (_spell, _op, _ufunc) in _COMPARISONS.items():
    register(_name, _spell, _op, COMPARE, ("x", "y"), aliases=(_ufunc,))

# & | ^ : elementwise logic on booleans (masks), bitwise arithmetic on integers; never differentiable
_BITWISE = {"bitwise_and": ("&", operator.and_, np.bitwise_and), "bitwise_or": ("|", operator.or_, np.bitwise_or),
            "bitwise_xor": ("^", operator.xor, np.bitwise_xor)}
for _name, (_spell, _op, _ufunc) in _BITWISE.items():
    register(_name, _spell, _op, COMPARE, ("x", "y"), aliases=(_ufunc,))

for _name in ["maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "logaddexp",
              "copysign", "logical_and", "logical_or", "logical_xor"]:
    _aliases = []
    if _name == "maximum":
        _aliases = [builtins.max]   # two-argument max(a, b) only; the normalizer checks
    if _name == "minimum":
        _aliases = [builtins.min]
    if _name == "arctan2":
        _aliases = [math.atan2]
    if _name == "hypot":
        _aliases = [math.hypot]
    if _name == "copysign":
        _aliases = [math.copysign]
    register(_name, f"np.{_name}", getattr(np, _name),
             COMPARE if _name.startswith("logical") else BINARY, ("x", "y"), aliases=_aliases,
             scalars_follow_arrays=() if _name.startswith("logical") else ("x", "y"),
             at_update=_AT_UPDATES.get(_name, ""))

# scipy.special's error and gamma functions, spelled by their names in JAX's lax (transformer.lax
# holds them; a compiled target lowers them, numba_special and cuda_lax); polygamma is the
# derivative of digamma, and of itself
_SCIPY_SPECIAL = {  # name: (its lax function, its names in scipy.special, the math function that means it)
    "erf": (lax.erf, ("erf",), math.erf),
    "erfc": (lax.erfc, ("erfc",), math.erfc),
    "erfinv": (lax.erf_inv, ("erfinv",), None),
    "gammaln": (lax.lgamma, ("gammaln",), math.lgamma),
    "digamma": (lax.digamma, ("digamma", "psi"), None),
}
for _name, (_fn, _scipy_names, _math_twin) in _SCIPY_SPECIAL.items():
    register(_name, f"lax.{_fn.__name__}", _fn, UNARY, ("x",), aliases=(_math_twin,) if _math_twin else (),
             library_aliases=tuple(f"scipy.special.{n}" for n in _scipy_names))
# C's fmod: the remainder with x's sign, x - trunc(x / y) * y (templates/misc.py holds its rules)
register("fmod", "np.fmod", np.fmod, BINARY, ("x", "y"), aliases=(math.fmod,), scalars_follow_arrays=("x", "y"),
         numba=Lowering("fmod"))                   # numba's np.fmod of integers takes the divisor's sign
register("polygamma", "lax.polygamma", lax.polygamma, BINARY, ("n", "x"),
         library_aliases=("scipy.special.polygamma",))

register("where", "np.where", np.where, SPECIAL, ("condition", "x", "y"), shape_rule="elementwise",
         scalars_follow_arrays=("x", "y"))
register("clip", "np.clip", np.clip, SPECIAL, ("x", "lo", "hi"), shape_rule="elementwise",
         numba=Lowering("clip"), methods=("clip",))                  # numba clips arrays only


# ----------------------------------------------------------------- reductions
for _name in ["sum", "mean", "prod", "max", "min", "std", "var", "any", "all", "argmax", "argmin"]:
    _aliases = {"max": [np.amax], "min": [np.amin]}.get(_name, [])
    _keywords = ("axis",) if _name in ("argmax", "argmin") else ("axis", "keepdims")
    if _name in ("std", "var"):
        _keywords += ("ddof",)
    # numba compiles np.sum(x) but not np.max(x, axis=...), keepdims= or ddof=; its np.var(x) and
    # np.std(x) of float32 are float64 (NumPy keeps float32); argmax and argmin it compiles as written.
    # Its whole-array sum, mean, max and min are one chain of dependent operations, which LLVM may
    # not split into vector lanes: 5x NumPy's time on 10 MB; numba_reductions' loops vectorise
    _numba = None
    if _name in ("std", "var"):
        _numba = Lowering(f"{_name}_axis", ("x", "axis=None", "keepdims=False", "ddof=0"))
    elif _name in ("sum", "mean", "max", "min"):
        _numba = Lowering(f"{_name}_axis", ("x", "axis=None", "keepdims=False"))
    elif _name not in ("argmax", "argmin"):
        _numba = Lowering(f"{_name}_axis", ("x", "axis=None", "keepdims=False"), when_written=("axis", "keepdims"))
    register(_name, f"np.{_name}", getattr(np, _name), REDUCE, ("x",), keywords=_keywords, aliases=_aliases,
             numba=_numba, methods=(_name,))
register("cumsum", "np.cumsum", np.cumsum, REDUCE, ("x",), keywords=("axis",), methods=("cumsum",))
register("cumprod", "np.cumprod", np.cumprod, REDUCE, ("x",), keywords=("axis",), methods=("cumprod",),
         # numba: np.cumprod(x) only
         numba=Lowering("cumprod_axis", ("x", "axis"), when_given=("axis",)))
register("norm", "np.linalg.norm", np.linalg.norm, REDUCE, ("x",), keywords=("ord", "axis", "keepdims"),
         numba=Lowering("norm_axis", ("x", "axis=None", "keepdims=False", "ord=None")))   # numba: no axis, no ints


# --------------------------------------------------------------------- linalg
# numba's products and LAPACK calls take floats only, one matrix at a time (numba_arrays' helpers
# take integers, scalars and stacks); it has no np.inner
register("dot", "np.dot", np.dot, LINALG, ("x", "y"), shape_rule="product", numba=Lowering("dot"), methods=("dot",))
register("outer", "np.outer", np.outer, LINALG, ("x", "y"), shape_rule="rank:2")
register("inner", "np.inner", np.inner, LINALG, ("x", "y"), numba=Lowering("inner"))
register("vdot", "np.vdot", np.vdot, LINALG, ("x", "y"), shape_rule="scalar", numba=Lowering("vdot"))
register("trace", "np.trace", np.trace, LINALG, ("x",), shape_rule="scalar", numba=Lowering("trace"),
         methods=("trace",))
register("inv", "np.linalg.inv", np.linalg.inv, LINALG, ("x",), shape_rule="same", numba=Lowering("inv"))
register("solve", "np.linalg.solve", np.linalg.solve, LINALG, ("a", "b"), numba=Lowering("solve"))
register("det", "np.linalg.det", np.linalg.det, LINALG, ("x",), shape_rule="scalar", numba=Lowering("det"))
# Decompositions of a matrix or a stack of them (the last two axes).  NumPy reads only the lower
# triangle of cholesky's, eigh's and eigvalsh's argument; their derivatives (templates/) assume it
# is symmetric and are those of the symmetrized matrix, as JAX's are.
register("cholesky", "np.linalg.cholesky", np.linalg.cholesky, LINALG, ("x",), numba=Lowering("cholesky"))
register("slogdet", "np.linalg.slogdet", np.linalg.slogdet, LINALG, ("x",), results=("sign", "logabsdet"),
         numba=Lowering("slogdet"))
register("eigh", "np.linalg.eigh", np.linalg.eigh, LINALG, ("x",), results=("eigenvalues", "eigenvectors"),
         numba=Lowering("eigh"))
register("eigvalsh", "np.linalg.eigvalsh", np.linalg.eigvalsh, LINALG, ("x",), numba=Lowering("eigvalsh"))


# ---------------------------------------------------------------------- shape
# numba reshapes only contiguous arrays (failing at run time otherwise) and broadcasts to no 0-d
# shape; it has np.transpose(x) but no axes=, no np.squeeze, np.flip(x) but no axis=, no
# np.concatenate(..., axis=None) (a bare AssertionError)
register("reshape", "np.reshape", np.reshape, SHAPE, ("x", "shape"), may_alias=True, shape_rule="given_shape:shape",
         numba=Lowering("reshape"), methods=("reshape",), spread_argument="shape")
register("transpose", "np.transpose", np.transpose, SHAPE, ("x",), keywords=("axes",), may_alias=True,
         shape_rule="same_rank", numba=Lowering("transpose", ("x", "axes=None")), methods=("transpose",),
         spread_argument="axes", attribute="T")
register("swapaxes", "np.swapaxes", np.swapaxes, SHAPE, ("x", "axis1", "axis2"), may_alias=True,
         shape_rule="same_rank", methods=("swapaxes",))
register("expand_dims", "np.expand_dims", np.expand_dims, SHAPE, ("x", "axis"), may_alias=True,
         shape_rule="one_more_axis")
register("squeeze", "np.squeeze", np.squeeze, SHAPE, ("x",), keywords=("axis",), may_alias=True,
         numba=Lowering("squeeze", ("x", "axis=None")), methods=("squeeze",))
register("ravel", "np.ravel", np.ravel, SHAPE, ("x",), may_alias=True, shape_rule="rank:1",
         methods=("ravel", "flatten"))
register("broadcast_to", "np.broadcast_to", np.broadcast_to, SHAPE, ("x", "shape"), may_alias=True,
         numba=Lowering("broadcast_to"))
register("flip", "np.flip", np.flip, SHAPE, ("x",), keywords=("axis",), may_alias=True, shape_rule="same_rank",
         numba=Lowering(rewrite="flip_each_axis"))
register("concatenate", "np.concatenate", np.concatenate, SHAPE, ("arrays",), keywords=("axis",),
         numba=Lowering(rewrite="join_flattened"))
register("stack", "np.stack", np.stack, SHAPE, ("arrays",), keywords=("axis",))
register("hstack", "np.hstack", np.hstack, SHAPE, ("arrays",))
register("vstack", "np.vstack", np.vstack, SHAPE, ("arrays",))
register("copy", "np.copy", np.copy, SHAPE, ("x",), shape_rule="same", methods=("copy",))
register("asarray", "np.asarray", np.asarray, SHAPE, ("x",), keywords=("dtype",), copying_aliases=(np.array,),
         may_alias=True, shape_rule="same")
register("astype", "rt.astype", runtime.astype, CAST, ("x", "dtype"), shape_rule="same", methods=("astype",))


# -------------------------------------------------------------------- queries
register("shape", "np.shape", np.shape, QUERY, ("x",), shape_rule="shape_tuple", shape_only=("x",), attribute="shape")
register("ndim", "np.ndim", np.ndim, QUERY, ("x",), shape_rule="scalar", shape_only=("x",),
         numba=Lowering("ndim"), attribute="ndim")            # missing in numba
register("size", "np.size", np.size, QUERY, ("x",), shape_rule="scalar", shape_only=("x",), attribute="size")
register("len", "len", builtins.len, QUERY, ("x",), shape_rule="scalar")


# ------------------------------------------------------------------- creation
for _name in ["zeros", "ones", "empty"]:
    register(_name, f"np.{_name}", getattr(np, _name), CREATE, ("shape",), keywords=("dtype",),
             shape_rule="given_shape:shape")
for _name in ["zeros_like", "ones_like", "empty_like"]:
    register(_name, f"np.{_name}", getattr(np, _name), CREATE, ("x",), keywords=("dtype",), shape_rule="same",
             shape_only=("x",))
register("full", "np.full", np.full, CREATE, ("shape", "fill_value"), keywords=("dtype",),
         shape_rule="given_shape:shape")
register("full_like", "np.full_like", np.full_like, CREATE, ("x", "fill_value"), keywords=("dtype",),
         shape_rule="same")
register("arange", "np.arange", np.arange, CREATE, ("start", "stop", "step"), keywords=("dtype",), shape_rule="rank:1",
         range_like=True)
register("linspace", "np.linspace", np.linspace, CREATE, ("start", "stop", "num"), keywords=("endpoint",),
         shape_rule="rank:1",
         numba=Lowering("linspace", ("start", "stop", "num", "endpoint"), when_written=("endpoint",)))
register("eye", "np.eye", np.eye, CREATE, ("n",), keywords=("dtype",), shape_rule="rank:2")


# ----------------------------------------------------------------------- casts
register("float", "float", builtins.float, CAST, ("x",), shape_rule="scalar")
register("int", "int", builtins.int, CAST, ("x",), shape_rule="scalar")
register("bool", "bool", builtins.bool, CAST, ("x",), shape_rule="scalar")


# ---- layout
# The index arrays and shapes of NumPy's layout functions (np.tile, np.kron, np.repeat, np.pad, np.diag,
# np.diagonal, np.rollaxis, np.atleast_*d, np.broadcast_arrays, np.split: templates/definitions.py; np.squeeze
# without an axis under vmap; np.concatenate's adjoint), computed from a shape at run
# time (runtime.py; numba_runtime.py specializes them on the rank when it compiles): constants to
# every derivative, the same for every example of a vmap.
from inspect import signature as _signature  # noqa: E402

for _name in ["tile_index", "kron_index", "repeat_index", "pad_index", "diag_index", "diagonal_index", "rollaxis_index",
              "atleast_1d_shape", "atleast_2d_shape", "atleast_3d_shape", "broadcast_shape", "squeezed_shape",
              "split_bounds", "concatenate_bounds", "kept_dims_shape", "hsplit_shape"]:
    _impl = getattr(runtime, _name)
    _sig = _signature(_impl)
    register(f"rt.{_name}", f"rt.{_name}", _impl, SPECIAL,
             tuple(p.name for p in _sig.parameters.values() if p.default is p.empty),
             keywords=tuple(p.name for p in _sig.parameters.values() if p.default is not p.empty))


# ----------------------------------------------------------------------- misc
# np.cumprod's tangent (templates/misc.py): a recurrence along the axis, exact where entries are zero
register("rt.cumprod_jvp", "rt.cumprod_jvp", runtime.cumprod_jvp, SPECIAL, ("t", "x"), keywords=("axis",))
# their second derivatives: sums of products of all the entries of a line but two
register("rt.prod_vjp_jvp", "rt.prod_vjp_jvp", runtime.prod_vjp_jvp, SPECIAL, ("g", "x", "v"),
         keywords=("axis", "keepdims"), shape_rule="like:x")
register("rt.cumprod_jvp_jvp", "rt.cumprod_jvp_jvp", runtime.cumprod_jvp_jvp, SPECIAL, ("t", "v", "x"),
         keywords=("axis",))
register("rt.cumprod_vjp_jvp", "rt.cumprod_vjp_jvp", runtime.cumprod_vjp_jvp, SPECIAL, ("g", "v", "x"),
         keywords=("axis",), shape_rule="like:x")
# np.nan_to_num: x where finite, the given (or NumPy's default) constants where not
register("nan_to_num", "np.nan_to_num", np.nan_to_num, UNARY, ("x",), keywords=("nan", "posinf", "neginf"),
         on_device=False)
# scipy.special's normal distribution function and its logarithm (accurate far into the left
# tail), spelled lax.ndtr / lax.log_ndtr as the other special functions are
register("ndtr", "lax.ndtr", lax.ndtr, UNARY, ("x",), library_aliases=("scipy.special.ndtr",))
register("log_ndtr", "lax.log_ndtr", lax.log_ndtr, UNARY, ("x",), library_aliases=("scipy.special.log_ndtr",))


# ---- sorting
# np.sort and its kin (templates/sorting.py holds their rules; np.take, np.median,
# np.percentile and np.quantile are definitions built on these, templates/definitions.py).
# Sorting moves values without arithmetic: sort's derivative is the cotangent sent back through
# the (stable) argsort permutation, with take_along_axis, whose own adjoint is the scatter-add
# rt.add_along_axis.  argsort, argpartition, searchsorted and the triangle indices are integers.
# numba sorts only the last axis of a 1-D array, with no axis=: numba_sorting loops over the rows
register("sort", "np.sort", np.sort, SHAPE, ("x",), keywords=("axis", "kind"),
         numba=Lowering("sort_axis", ("x", "axis=-1")))
register("argsort", "np.argsort", np.argsort, SHAPE, ("x",), keywords=("axis", "kind"),
         numba=Lowering("argsort_axis", ("x", "axis=-1", "kind=None")))
register("partition", "np.partition", np.partition, SHAPE, ("x", "kth"), keywords=("axis",),
         numba=Lowering("partition_axis", ("x", "kth", "axis=-1")))
register("argpartition", "np.argpartition", np.argpartition, SHAPE, ("x", "kth"), keywords=("axis",),
         numba=Lowering("argpartition_axis", ("x", "kth", "axis=-1")))
register("take_along_axis", "np.take_along_axis", np.take_along_axis, SHAPE, ("x", "indices"), keywords=("axis",),
         numba=Lowering("take_along_axis", ("x", "indices", "axis=-1")))
register("searchsorted", "np.searchsorted", np.searchsorted, SPECIAL, ("a", "v"), keywords=("side",))
register("triu_indices", "np.triu_indices", np.triu_indices, CREATE, ("n",), keywords=("k", "m"),
         results=("rows", "columns"), index_arrays=True)
register("tril_indices", "np.tril_indices", np.tril_indices, CREATE, ("n",), keywords=("k", "m"),
         results=("rows", "columns"), index_arrays=True)


# ---- random numbers
# tr.random's keys and samplers (transformer/random.py, JAX's threefry2x32 in NumPy), spelled
# random.normal(key, (3,)) in generated code.  Keys and draws are constants to every derivative
# but three: uniform is linear in minval and maxval, and permutation and choice move their
# array's values (templates/random.py).  numba calls the NumPy functions back (backends/numba_random.py),
# so the numbers are the same ones NumPy computes; CUDA device code cannot call back into Python.
for _name in [name for name in random.__all__ if name != "threefry2x32"]:     # (host-only: refused)
    _impl = getattr(random, _name)
    _sig = _signature(_impl)
    register(f"random.{_name}", f"random.{_name}", _impl, SPECIAL,
             tuple(p.name for p in _sig.parameters.values() if p.default is p.empty),
             keywords=tuple(p.name for p in _sig.parameters.values() if p.default is not p.empty),
             on_device=False)


# ---------------------------------------------------------------------- linalg2
# np.linalg.svd is a definition (templates/definitions.py) that picks one of these by its literal
# keywords; qr, pinv and lstsq (rcond=None) are NumPy's own functions, of a matrix or a stack.
# (numba's svd has no compute_uv and takes full_matrices by position; svd, qr and pinv one matrix)
register("svd", "rt.svd", runtime.svd, LINALG, ("x",), results=("U", "S", "Vh"), numba=Lowering("svd"))
register("svd_complete", "rt.svd_complete", runtime.svd_complete, LINALG, ("x",), results=("U", "S", "Vh"),
         numba=Lowering("svd_complete"))
register("svdvals", "np.linalg.svdvals", np.linalg.svdvals, LINALG, ("x",), numba=Lowering("svdvals"))
register("pinv", "np.linalg.pinv", np.linalg.pinv, LINALG, ("x",), numba=Lowering("pinv"))
register("qr", "np.linalg.qr", np.linalg.qr, LINALG, ("x",), results=("Q", "R"), numba=Lowering("qr"))
register("lstsq", "np.linalg.lstsq", np.linalg.lstsq, LINALG, ("a", "b"), keywords=("rcond",),
         results=("x", "residuals", "rank", "s"), numba=Lowering("lstsq", ("a", "b", "rcond=None")))


# -------------------------------------------------------------------- indexing
# Spelled with subscripts in the core form: ``y = x[i, a:b]`` and ``x[i] = v``.
register("getitem", "[]", operator.getitem, INDEX, ("x", "index"), may_alias=True, shape_rule="indexed")
register("setitem", "[]=", operator.setitem, INDEX, ("x", "index", "value"))


# --------------------------------------------------------------------- special
register("stop_gradient", "lax.stop_gradient", lax.stop_gradient, SPECIAL, ("x",), may_alias=True, shape_rule="same")
# np.moveaxis: vmap moves batch axes with it; a view, as NumPy's (a transpose), so a write into x shows in it
register("moveaxis", "np.moveaxis", np.moveaxis, SHAPE, ("x", "source", "destination"), may_alias=True)
# The named-axis collectives of tr.lax, given meaning by the vmap or pmap whose axis_name they
# name (transforms/vmap.py, transforms/pmap.py); ppermute's permutation is a static tuple of
# (source, destination) pairs, spelled as a literal in core form.
register("psum", "lax.psum", lax.psum, SPECIAL, ("x", "axis_name"), collective=Collective("reduce", np.add))
register("pmean", "lax.pmean", lax.pmean, SPECIAL, ("x", "axis_name"),
         collective=Collective("reduce", np.add, mean=True))
register("pmax", "lax.pmax", lax.pmax, SPECIAL, ("x", "axis_name"), collective=Collective("reduce", np.maximum))
register("pmin", "lax.pmin", lax.pmin, SPECIAL, ("x", "axis_name"), collective=Collective("reduce", np.minimum))
register("all_gather", "lax.all_gather", lax.all_gather, SPECIAL, ("x", "axis_name"),
         collective=Collective("gather"))
register("axis_index", "lax.axis_index", lax.axis_index, SPECIAL, ("axis_name",), collective=Collective("index"))
register("ppermute", "lax.ppermute", lax.ppermute, SPECIAL, ("x", "axis_name", "perm"), keywords=("inverse",),
         collective=Collective("permute"))


# ----------------------------------------------------------------- definitions
# NumPy and scipy functions that transformer defines in NumPy (templates/definitions.py), as
# jax.numpy defines np.roll or np.diff with its primitives: a call to one is inlined as its
# definition, so every transform handles it with the rules of the primitives the definition calls.
DEFINITIONS: dict[str, Callable] = {}           # "np.roll" -> its definition
_DEFINED_OBJECTS: dict[int, Callable] = {}      # id(np.roll) -> its definition
_UNRESOLVED: dict[str, Callable] = {}           # names whose module is not imported yet (scipy.special)
_definitions_loaded = False


_VARIANT_OF: dict[Callable, str] = {}           # trapezoid_sampled -> "np.trapezoid"


def define(*dotted_names: str, when_given: dict | None = None, numpy_view: bool = False):
    """Register the decorated function as the definition of each dotted name ("np.roll",
    "scipy.special.logsumexp").  ``when_given={"x": trapezoid_sampled}``: a call that gives ``x``
    (not as a literal None) is inlined as that variant, so neither tests ``x is None``, which an
    argument known only at run time could not decide.  ``numpy_view``: NumPy's function returns a
    view of its first argument where the definition computes a copy (core_form.copied_views)."""
    def decorate(definition):
        definition.when_given = dict(when_given or {})
        definition.numpy_view = numpy_view
        for variant in definition.when_given.values():
            _VARIANT_OF[variant] = dotted_names[0]
        for dotted in dotted_names:
            if dotted in DEFINITIONS:
                raise ValueError(f"{dotted} defined twice")
            DEFINITIONS[dotted] = definition
            _UNRESOLVED[dotted] = definition
        return definition
    return decorate


class WrittenDefinition:
    """A definition written for each call, from a literal argument: np.einsum's contraction depends on
    its subscripts string, so ``writer(subscripts, operand_count)`` returns the source of a
    definition for that string (``def einsum(subscripts, x0, x1, optimize=False): ...``), written to
    a file of the cache directory, where the normalizer reads and inlines it like any definition and
    ``transformer show`` names its lines.  ``writer`` raises ValueError for an argument NumPy would
    refuse; the normalizer reports it at the user's call.

    ``measure="length"``: the writer is given the number of entries of a list or tuple written in
    the call instead of a literal's value (lax.switch's branches: functions, not literals)."""

    def __init__(self, dotted: str, literal: str, writer: Callable, position: int = 0, default=None,
                 measure: str = "value"):
        self.dotted, self.literal, self.writer = dotted, literal, writer
        self.position, self.default = position, default     # where a call passes it, and its value if not
        self.measure = measure
        self._written: dict = {}

    def function_for(self, literal_value, operand_count: int) -> Callable:
        key = (repr(literal_value), operand_count)
        if key not in self._written:
            from . import emit
            text = (f"# {self.dotted} for {self.literal}={literal_value!r} and {operand_count} operand(s), as written by "
                    f"{self.writer.__module__}.{self.writer.__name__}\n"
                    f"import numpy as np\n\nfrom transformer import runtime as rt\n\n\n"
                    + self.writer(literal_value, operand_count))
            module = emit.load_written(text, self.dotted.replace('.', '_'), {})
            function = getattr(module, self.dotted.rpartition(".")[2])
            _VARIANT_OF[function] = self.dotted            # errors inside it name the user's np.einsum call
            self._written[key] = function
        return self._written[key]


def define_written(dotted: str, literal: str, position: int = 0, default=None, measure: str = "value"):
    """Register the decorated ``writer`` as the definition of ``dotted``, written for each value of
    the literal argument ``literal``, passed at ``position`` or by keyword, ``default`` when the call
    leaves it out (``WrittenDefinition``)."""
    def decorate(writer):
        if dotted in DEFINITIONS:
            raise ValueError(f"{dotted} defined twice")
        DEFINITIONS[dotted] = _UNRESOLVED[dotted] = WrittenDefinition(dotted, literal, writer, position, default,
                                                                      measure)
        return writer
    return decorate


def _module_of(dotted: str) -> str:
    module = dotted.rpartition(".")[0]
    return "numpy" + module[2:] if module == "np" or module.startswith("np.") else module


def definitions() -> dict[str, Callable]:
    """Every definition, by the dotted name it stands for (templates/definitions.py loaded once)."""
    global _definitions_loaded
    if not _definitions_loaded:
        import importlib
        importlib.import_module("transformer.templates.definitions")   # registers them
        _definitions_loaded = True      # only once loaded: a failed import is seen again, not a missing name
    return DEFINITIONS


def definition_of(obj) -> Callable | None:
    """The definition transformer inlines for a NumPy or scipy function (np.roll...), or None.

    A name is matched to its object once its module is imported (never imported here: a
    program that calls scipy.special.logsumexp has imported scipy.special)."""
    definitions()
    found = _DEFINED_OBJECTS.get(id(obj))
    if found is None and _UNRESOLVED:
        import sys
        for dotted, definition in list(_UNRESOLVED.items()):
            module = sys.modules.get(_module_of(dotted))
            if module is None:
                continue
            del _UNRESOLVED[dotted]
            target = getattr(module, dotted.rpartition(".")[2], None)
            if target is None:
                continue
            if lookup(target) is not None:
                raise ValueError(f"{dotted} is a primitive; it cannot have a definition too")
            _DEFINED_OBJECTS.setdefault(id(target), definition)
            _KEEP_ALIVE.append(target)
        found = _DEFINED_OBJECTS.get(id(obj))
    return found


def definition_name(fn) -> str | None:
    """The first name a definition stands for ("np.roll"), or None for any other function."""
    for dotted, definition in DEFINITIONS.items():
        if definition is fn:
            return dotted
    return _VARIANT_OF.get(fn)


def operator_name(spelling: str, arity: int) -> str:
    """The primitive named by an operator token in the core form."""
    for prim in REGISTRY.values():
        if prim.spelling == spelling and len(prim.params) == arity:
            return prim.name
    raise KeyError(spelling)


# ------------------------------------------------------------ runtime helpers
import inspect as _inspect  # noqa: E402  (used only to read the helpers' signatures)

# Generated code calls these (transformer/runtime.py); they are primitives
# too, so transforms of generated code (grad of grad, jvp of grad) have rules.
# Cotangent helpers are shaped like the operand they stand for; the tape's four operations.
_HELPER_FACTS = {
    "zeros_like": dict(shape_rule="like:x", shape_only=("x",)),
    "copy": dict(shape_rule="like:x"),
    "unbroadcast": dict(shape_rule="like:x", shape_only=("x",)),
    "expand_to": dict(shape_rule="like:x", shape_only=("x",), expands=True),
    "cast_like": dict(shape_rule="like:x", shape_only=("x",)),
    "cast_derivative": dict(shape_rule="like:g", shape_only=("like",)),
    "trace_vjp": dict(shape_rule="like:x", shape_only=("x",)),
    "solve_columns": dict(shape_only=("b",)),
    "solve_uncolumns": dict(shape_only=("b",)),
    "scalar_seed": dict(shape_rule="scalar", shape_only=("out",), checks_input=True),
    **{name: dict(shape_rule=f"like:{operand}") for name, operand in [
        ("dot_vjp_x", "x"), ("dot_vjp_y", "y"), ("extremum_vjp", "x"), ("prod_vjp", "x"), ("cumsum_vjp", "x"),
        ("cumprod_vjp", "x"), ("norm_vjp", "x")]},
    "stack": dict(tape="new"),
    "push": dict(tape="push"),
    "pop": dict(tape="pop", shape_rule="tape_entry"),
    "top": dict(tape="top", shape_rule="tape_entry"),
    # reverse over reverse: adds into a cotangent tape's top entry, changing the tape as a push does
    "add_to_top": dict(tape="push"),
}
for _name in ["zeros_like", "scalar_seed", "copy", "align_batch", "has_cotangent", "unbroadcast", "expand_to", "stack", "push", "pop",
              "top", "add_to_top", "dot_vjp_x", "dot_vjp_y", "matmul_vjp_x", "matmul_vjp_y", "inner_vjp_x", "inner_vjp_y", "extremum_vjp", "prod_vjp", "cumsum_vjp", "cumprod_vjp",
              "norm_vjp", "norm_ord_weights", "norm_ord_curvature", "transpose_vjp", "trace_vjp", "solve_columns",
              "solve_uncolumns", "cast_like", "cast_derivative", "index_slice", "add_at", "take_at", "kept_writes", "add_along_axis", "custom_vjp_call", "custom_jvp_call"]:
    _impl = getattr(runtime, _name)
    _sig = _inspect.signature(_impl)
    _params = tuple(p.name for p in _sig.parameters.values() if p.default is _inspect.Parameter.empty)
    _keywords = tuple(p.name for p in _sig.parameters.values() if p.default is not _inspect.Parameter.empty)
    # the helpers that may hand back (a view of) their first argument: a tape's top, an unchanged
    # cotangent, a custom rule's marker (its output itself); rt.copy's array is a copy (a number is
    # handed back as it is, but no write reaches a number)
    register(f"rt.{_name}", f"rt.{_name}", _impl, SPECIAL, _params, keywords=_keywords,
             may_alias=_name in ("unbroadcast", "top", "pop", "custom_vjp_call", "custom_jvp_call"),
             **_HELPER_FACTS.get(_name, {}))

# vmap's checks that each example's number or condition is one value (runtime.py): they return
# nothing and are kept for the error they raise
for _name in ["number_per_example", "truth_value_per_example"]:
    register(f"rt.{_name}", f"rt.{_name}", getattr(runtime, _name), SPECIAL, ("shape",), shape_rule="scalar",
             checks_input=True)

# vmap's products with one batched operand (runtime.py): primitives too, so the transforms of
# vmap's output (grad of vmap, vmap of vmap) have rules for them
for _name in ["dot_batched_x", "dot_batched_y", "matmul_batched_x", "matmul_batched_y", "dot_vjp_x_batched_g",
              "dot_vjp_y_batched_g", "dot_vjp_y_batched_gx", "dot_rows_x", "dot_vjp_y_rows_gx", "dot_identity_y",
              "matmul_vjp_x_batched_g", "matmul_vjp_y_batched_g", "matmul_vjp_y_batched_gx"]:
    _impl = getattr(runtime, _name)
    register(f"rt.{_name}", f"rt.{_name}", _impl, SPECIAL,
             tuple(p.name for p in _inspect.signature(_impl).parameters.values()))
