"""Lowering for numba: rewrite core-form calls numba does not compile.

numba's NumPy support lacks most ``axis=`` / ``keepdims=`` forms, ``np.squeeze``,
``np.ndim``, integer matrix products, batched ``@`` and a few more.  Such calls
are rewritten into helpers that generated modules import as ``nl``::

    m = np.max(x, axis=-1, keepdims=True)   ->   m = nl.max_axis(x, -1, True)

Each helper is written twice: its NumPy meaning in plain Python, and a numba
``overload`` (in ``numba_reductions`` and ``numba_arrays``), so the lowered
module still reads — and runs — as NumPy.  The choice of helper is made here
from the literal keywords of the core form; everything that depends on types
(ndim, dtype) is decided by the overload when numba types the call.  Calls
numba compiles correctly as written are left alone.
"""
from __future__ import annotations

import importlib

import libcst as cst

from .. import core_form as cf
from ..transforms.shapes import SCALAR, Shapes

# The helpers generated modules call as ``nl.<name>``, each with its numba overload, by the module
# that defines them.  The backends that compile import them all (``load_helpers``) before numba
# compiles anything, and generated code finds them through ``__getattr__`` below: this pass itself
# imports no numba, so writing a cpu module (a tiered first call, transformer/tiers.py) does not
# wait for numba to load.
_HELPERS = {
    "numba_arrays": ("broadcast_to", "cholesky", "clip", "det", "dot", "eigh", "eigvalsh", "flip_axis", "inner",
                     "inv", "linspace", "matmul", "ndim", "reshape", "scalar_like", "slogdet", "solve", "squeeze",
                     "trace", "transpose", "vdot", "lstsq", "pinv", "qr", "svd", "svd_complete", "svdvals"),
    "numba_reductions": ("all_axis", "any_axis", "cumprod_axis", "max_axis", "mean_axis", "min_axis", "norm_axis",
                         "prod_axis", "std_axis", "sum_axis", "var_axis"),
    "numba_indexing": ("put", "take", "whole"),
    "numba_rows": ("softmax_last_axis",),
    "numba_sorting": ("argpartition_axis", "argsort_axis", "partition_axis", "sort_axis", "take_along_axis"),
}


def load_helpers() -> None:
    """Import every helper module, registering their overloads before numba compiles a module that
    calls them (an overload registered while numba is typing a function is not seen by that typing)."""
    for module_name in _HELPERS:
        importlib.import_module(f"{__package__}.{module_name}")


def __getattr__(name: str):
    for module_name, names in _HELPERS.items():
        if name in names:
            helper = getattr(importlib.import_module(f"{__package__}.{module_name}"), name)
            globals()[name] = helper          # looked up once
            return helper
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Built when first needed: a warm start from the cache builds no libcst nodes.
def _none():
    return cst.Name("None")


def _false():
    return cst.Name("False")


def _helper(name: str, *atoms) -> cst.Call:
    return cf.call(f"nl.{name}", atoms)


def _is_none(node) -> bool:
    return node is None or (isinstance(node, cst.Name) and node.value == "None")


# ----------------------------------------------------------------- the rules
# Each takes (primitive, arguments by name) and returns the lowered call, or
# None to keep the call as numba compiles it.

def _reduction(prim, args):
    # numba compiles np.sum(x) but not np.max(x, axis=...), keepdims= or ddof=;
    # its np.var(x) and np.std(x) of float32 are float64 (NumPy keeps float32)
    if set(args) == {"x"} and prim.name not in ("std", "var"):
        return None
    atoms = [args["x"], args.get("axis", _none()), args.get("keepdims", _false())]
    if prim.name in ("std", "var"):
        atoms.append(args.get("ddof", cst.Integer("0")))
    return _helper(f"{prim.name}_axis", *atoms)


def _cumprod(prim, args):
    # numba has np.cumsum(x, axis=k) but only np.cumprod(x)
    if _is_none(args.get("axis")):
        return None
    return _helper("cumprod_axis", args["x"], args["axis"])


def _norm(prim, args):
    # numba's norm has no axis/keepdims and rejects integer arrays
    return _helper("norm_axis", args["x"], args.get("axis", _none()), args.get("keepdims", _false()),
                   args.get("ord", _none()))


def _transpose(prim, args):
    return _helper("transpose", args["x"], args.get("axes", _none()))


def _squeeze(prim, args):
    return _helper("squeeze", args["x"], args.get("axis", _none()))


def _flip(prim, args):
    # numba has np.flip(x) (every axis) but no axis=; flips along different
    # axes commute, so a literal tuple of axes becomes nested calls
    axis = args.get("axis")
    if axis is None:
        return None
    if _is_none(axis):          # axis=None: every axis, which numba's np.flip(x) does without the keyword
        return cf.call("np.flip", [args["x"]])
    axes = [el.value for el in axis.elements] if isinstance(axis, cst.Tuple) else [axis]
    result = args["x"]
    for each in axes:
        result = _helper("flip_axis", result, each)
    return result


def _linspace(prim, args):
    # numba's np.linspace has no endpoint=
    if "endpoint" not in args:
        return None
    return _helper("linspace", args["start"], args["stop"], args["num"], args["endpoint"])


def _concatenate(prim, args):
    # numba's np.concatenate has no axis=None (it fails with a bare AssertionError): join the flattened arrays
    if not _is_none(args.get("axis", cst.Integer("0"))) or not isinstance(args["arrays"], cst.Tuple):
        return None
    flat = [cst.Element(cf.call("np.ravel", [el.value])) for el in args["arrays"].elements]
    return cf.call("np.concatenate", [cst.Tuple(flat)])


def _minus_one():
    return cst.UnaryOperation(cst.Minus(), cst.Integer("1"))


def _sorting(helper_name, *params):
    """np.sort and its kin along any axis (numba's: the last axis of a 1-D array, no axis=): a
    loop over the rows of numba_sorting, with NumPy's default axis -1 when none is given."""
    def rule(prim, args):
        defaults = {"axis": _minus_one(), "kind": _none()}
        return _helper(helper_name, *(args[p] if p in args else defaults[p] for p in params))
    return rule


def _same_arguments(helper_name):
    """A rule that calls ``nl.<helper_name>`` with the primitive's own arguments."""
    def rule(prim, args):
        return _helper(helper_name, *(args[p] for p in prim.params if p in args))
    return rule


_RULES = {name: _reduction for name in ("sum", "mean", "prod", "max", "min", "std", "var", "any", "all")}
_RULES.update({
    "cumprod": _cumprod,
    "norm": _norm,
    "squeeze": _squeeze,
    "transpose": _transpose,
    "flip": _flip,
    "linspace": _linspace,
    "concatenate": _concatenate,
    # numba reshapes only contiguous arrays, failing at run time otherwise
    "reshape": _same_arguments("reshape"),
    "broadcast_to": _same_arguments("broadcast_to"),   # numba: no 0-d target shape
    "ndim": _same_arguments("ndim"),               # missing in numba
    "clip": _same_arguments("clip"),               # numba clips arrays only
    "dot": _same_arguments("dot"),                 # numba: floats only, no scalars
    "inner": _same_arguments("inner"),             # missing in numba
    "vdot": _same_arguments("vdot"),               # numba: vectors only
    "trace": _same_arguments("trace"),             # numba: floats only
    "inv": _same_arguments("inv"),                 # numba's LAPACK calls: floats only, one matrix
    "det": _same_arguments("det"),
    "solve": _same_arguments("solve"),
    "cholesky": _same_arguments("cholesky"),
    "slogdet": _same_arguments("slogdet"),
    "eigh": _same_arguments("eigh"),
    "eigvalsh": _same_arguments("eigvalsh"),
    # ---- sorting (numba_sorting)
    "sort": _sorting("sort_axis", "x", "axis"),
    "argsort": _sorting("argsort_axis", "x", "axis", "kind"),
    "partition": _sorting("partition_axis", "x", "kth", "axis"),
    "argpartition": _sorting("argpartition_axis", "x", "kth", "axis"),
    "take_along_axis": _sorting("take_along_axis", "x", "indices", "axis"),

    # linalg2: numba's svd has no compute_uv and takes full_matrices by position; svd, qr and pinv one matrix
    "svd": _same_arguments("svd"),
    "svd_complete": _same_arguments("svd_complete"),
    "svdvals": _same_arguments("svdvals"),
    "pinv": _same_arguments("pinv"),
    "qr": _same_arguments("qr"),
    "lstsq": lambda prim, args: _helper("lstsq", args["a"], args["b"], args.get("rcond") or _none()),
})

# Elementwise primitives whose result dtype numba takes from a Python float
# literal where NumPy (NEP 50) takes it from the array: float32 * 2.0 stays
# float32 in NumPy but becomes float64 in numba.
_WEAK_LITERAL_PRIMITIVES = {"add", "subtract", "multiply", "divide", "floor_divide", "mod", "power",
                            "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "logaddexp",
                            "copysign", "where"}


def _is_number_literal(node) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, (cst.Float, cst.Integer))


def _weak_literals(operands: list) -> list:
    """Operands with each number literal next to a variable given that variable's precision."""
    names = [op for op in operands if isinstance(op, cst.Name) and op.value not in ("True", "False", "None")]
    if not names:
        return operands
    return [_helper("scalar_like", names[0], op) if _is_number_literal(op) else op for op in operands]


def _is_whole(node) -> bool:
    return isinstance(node, cst.Subscript) and len(node.slice) == 1 \
        and isinstance(node.slice[0].slice, cst.Index) and isinstance(node.slice[0].slice.value, cst.Ellipsis)


class _Lower(cst.CSTTransformer):
    def __init__(self, shapes: Shapes):
        super().__init__()
        self.shapes = shapes

    def leave_Assign(self, original, updated):
        # numba reads and writes x[mask] wrongly for a mask of two or more dimensions (a 3-D
        # array, or a bare AssertionError): a one-part index that may be an array goes to
        # nl.take and nl.put, which numba compiles as written for anything but such a mask
        target = updated.targets[0].target
        if self._may_be_mask(target):
            return cst.Expr(_helper("put", target.value, target.slice[0].slice.value, updated.value))
        if self._may_be_mask(updated.value):
            return updated.with_changes(value=_helper("take", updated.value.value, updated.value.slice[0].slice.value))
        if _is_whole(updated.value):             # y = x[...]: numba cannot lower a bare Ellipsis index
            return updated.with_changes(value=_helper("whole", updated.value.value))
        return updated

    def _may_be_mask(self, node) -> bool:
        if not isinstance(node, cst.Subscript) or len(node.slice) != 1:
            return False
        item = node.slice[0].slice
        return isinstance(item, cst.Index) and isinstance(item.value, cst.Name) \
            and self.shapes.of_value(item.value) != SCALAR

    def leave_Call(self, original, updated):
        prim = cf.primitive_of(updated)
        if prim is None:
            return updated
        if prim.name in _WEAK_LITERAL_PRIMITIVES:
            values = [arg.value for arg in updated.args]
            # np.where's condition is boolean: the literal meets the other branch
            args = values[:1] + _weak_literals(values[1:]) if prim.name == "where" else _weak_literals(values)
            updated = updated.with_changes(args=[arg.with_changes(value=value)
                                                 for arg, value in zip(updated.args, args)])
        rule = _RULES.get(prim.name)
        if rule is None:
            return updated
        return rule(prim, cf.arguments(updated, prim)) or updated

    def leave_BinaryOperation(self, original, updated):
        if isinstance(updated.operator, cst.MatrixMultiply):
            # numba's @ is 2-D and floats only; nl.matmul also batches and multiplies integers
            return _helper("matmul", updated.left, updated.right)
        left, right = _weak_literals([updated.left, updated.right])
        return updated.with_changes(left=left, right=right)


def lower(core: cf.CoreFunction) -> cf.CoreFunction:
    """A copy of ``core`` whose calls numba can compile."""
    node = core.node.visit(_Lower(Shapes(core)))
    return cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants)


class _LowerTape(cst.CSTTransformer):
    def leave_Assign(self, original, updated):
        value = updated.value
        if _is_call(value, "rt.stack"):
            return updated.with_changes(value=cst.Call(cst.Name("List")))
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        # ``s = rt.push(s, v)`` -> ``s.append(v)``: numba infers a typed
        # List's item type only from a method call on the list.
        if len(updated.body) != 1 or not isinstance(updated.body[0], cst.Assign):
            return updated
        assign = updated.body[0]
        if not _is_call(assign.value, "rt.push"):
            return updated
        tape, value = (arg.value for arg in assign.value.args)
        append = cst.Call(cst.Attribute(tape, cst.Name("append")), [cst.Arg(value)])
        return updated.with_changes(body=[cst.Expr(append)])


def _is_call(node, spelling: str) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and isinstance(node.func.value, cst.Name)
            and f"{node.func.value.value}.{node.func.attr.value}" == spelling)


def lower_tapes(core: cf.CoreFunction) -> cf.CoreFunction:
    """A copy of ``core`` whose tapes are typed numba lists (``List`` comes from the CPU preamble)."""
    node = core.node.visit(_LowerTape())
    return cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants)


# numba compiles these to one libm call per element, which no loop around
# them can vectorise; numba_vecmath's versions are plain arithmetic that LLVM
# turns into SIMD code, with NumPy's results to an ulp or two.
VECTOR_MATH = {"np.exp": "vm.exp", "np.expm1": "vm.expm1", "np.tanh": "vm.tanh",
                "np.sin": "vm.sin", "np.cos": "vm.cos", "np.log": "vm.log"}


class _VectorMath(cst.CSTTransformer):
    def leave_Call(self, original, updated):
        spelling = cst.Module([]).code_for_node(updated.func)
        if spelling in VECTOR_MATH:
            return updated.with_changes(func=cf.callee(VECTOR_MATH[spelling]))
        return updated


def vector_math(core: cf.CoreFunction) -> cf.CoreFunction:
    """A copy of ``core`` with exp, expm1, tanh, sin, cos and log calls going to ``numba_vecmath``
    (run after fusion, which knows these functions by their NumPy names)."""
    node = core.node.visit(_VectorMath())
    return cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants,
                           functions=core.functions)
