"""What a transform can know about shapes without running the code.

Each variable gets a *shape token* ``(ndim, same)``.  ``ndim`` is an int, or
``"array"`` (at least one dimension, how many unknown), ``"shape_tuple"`` (the
tuple ``np.shape`` returns) or None (unknown).  ``same`` names a shape class:
two values with the same non-None ``same`` have equal shapes (``x`` and
``np.sin(x) + 1.0`` do).  Forward mode uses tokens to write a zero tangent as
plain ``0.0`` or ``np.zeros_like(x)``, and to skip widening a tangent that
already has its result's shape.  Tokens are joined over every assignment to
a variable, so a variable whose shape changes (``x = x[1:]`` in a loop) is
known only as well as all its assignments agree.

The module also holds the small readers of core form the jvp transform uses.
"""
from __future__ import annotations

import libcst as cst
import numpy as np

from .. import core_form as cf

SCALAR = (0, "()")
UNKNOWN = (None, None)
SHAPE_TUPLE = ("shape_tuple", None)


def atom_names(node) -> set[str]:
    """The variable names an atom (or any core-form expression) reads."""
    finder = _NameFinder()
    node.visit(finder)
    return finder.names


class _NameFinder(cst.CSTVisitor):
    def __init__(self):
        self.names: set[str] = set()

    def visit_Attribute(self, node):
        return False                     # np.pi, np.float64

    def visit_Arg(self, node):
        node.value.visit(self)
        return False                     # not the keyword's name

    def visit_Name(self, node):
        if node.value not in ("True", "False", "None"):
            self.names.add(node.value)


def params_and_keywords(value, prim) -> tuple[dict, dict]:
    """``cf.arguments(value)`` split in two: (declared parameter -> atom, other keyword -> atom)."""
    bound = cf.arguments(value, prim)
    return ({k: v for k, v in bound.items() if k in prim.params},
            {k: v for k, v in bound.items() if k not in prim.params})


def assignments(stmts):
    for stmt in cf.walk(stmts):
        small = stmt.body[0]
        if isinstance(small, cst.Assign):
            yield small.targets[0].target, small.value



def loop_indices(stmts) -> set[str]:
    """The names ``for`` loops count with (always integers)."""
    names = set()
    for stmt in stmts:
        if isinstance(stmt, cst.For):
            names.add(stmt.target.value)
        for block in cf.blocks(stmt):
            names |= loop_indices(block)
    return names


def range_bounds(stmts) -> set[str]:
    """The names the function's top-level ``for`` loops take as ``range``'s bounds.  Those
    ``range`` calls always run, and take integers only: numbers (a 0-d array at most)."""
    names = set()
    for stmt in stmts:
        if isinstance(stmt, cst.For) and isinstance(stmt.iter, cst.Call) and \
                isinstance(stmt.iter.func, cst.Name) and stmt.iter.func.value == "range":
            names |= {arg.value.value for arg in stmt.iter.args if isinstance(arg.value, cst.Name)}
    return names


def join(a, b):
    if a is None:
        return b
    if a == b:
        return a
    arrays = all(isinstance(t[0], int) and t[0] > 0 or t[0] == "array" for t in (a, b))
    return ("array", None) if arrays else UNKNOWN


def is_array(token) -> bool:
    return token[0] == "array" or isinstance(token[0], int) and token[0] > 0


def one_shape(a, b) -> bool:
    """Whether two tokens say their values have one shape: one class, and not numbers (a 0-d
    array and a number share SCALAR, and numba may give either where the other was)."""
    return a == b and a[1] is not None and a != SCALAR


def combine(*tokens):
    """The token of an elementwise result of broadcasting operands."""
    rest = [t for t in tokens if t != SCALAR]
    if not rest:
        return SCALAR
    first = rest[0]
    if all(t == first for t in rest) and first[1] is not None:
        return first
    ndims = [t[0] for t in rest]
    if all(isinstance(n, int) for n in ndims):
        return (max(ndims), None)
    return ("array", None) if any(is_array(t) for t in rest) else UNKNOWN


def _ndim_token(ndim):
    if ndim is None or ndim == "array":
        return (ndim, None)
    return SCALAR if ndim == 0 else (ndim, None)


def _shift(token, by):
    """The token of a value with ``by`` more dimensions (a new shape)."""
    if isinstance(token[0], int):
        return _ndim_token(max(token[0] + by, 0))
    return UNKNOWN if by < 0 else ("array", None)


class Shapes:
    def __init__(self, core: cf.CoreFunction, ndims=None):
        """``ndims``: per parameter, its number of dimensions if known (0 for a scalar)."""
        self.constants = core.constants
        self.tokens: dict[str, tuple] = {}
        self.tape_items: dict[str, tuple] = {}     # a tape (reverse mode's rt.stack) -> what it holds
        for i, p in enumerate(core.params):
            ndim = ndims[i] if ndims and len(ndims) == len(core.params) else None
            self.tokens[p] = SCALAR if ndim == 0 else (ndim, p)
        # a parameter a top-level loop counts to is a number (forward mode is told so in ndims)
        for name in loop_indices(core.node.body.body) | (range_bounds(core.node.body.body) & set(core.params)):
            self.tokens[name] = SCALAR
        writes = list(assignments(core.node.body.body))
        changed = True
        while changed:
            changed = False
            for target, value in writes:
                if isinstance(target, cst.Subscript):
                    continue
                name = target.value
                pushed = _pushed(value)
                if pushed is not None:
                    item = join(self.tape_items.get(name), self.of_value(pushed))
                    changed |= item != self.tape_items.get(name)
                    self.tape_items[name] = item
                new = join(self.tokens.get(name), self.of_value(value))
                if new != self.tokens.get(name):
                    self.tokens[name] = new
                    changed = True

    def of_name(self, name: str):
        if name in self.tokens:
            return self.tokens[name]
        value = self.constants.get(name)
        if isinstance(value, np.ndarray):
            return SCALAR if value.ndim == 0 else (value.ndim, name)
        if isinstance(value, (int, float, np.number)):
            return SCALAR
        return UNKNOWN

    def of_value(self, value):
        """The token of a core-form right-hand side."""
        if isinstance(value, cst.Name):
            if value.value in ("True", "False"):
                return SCALAR
            return self.of_name(value.value)
        if isinstance(value, cst.Tuple):
            return UNKNOWN
        if cf.is_atom(value):
            return SCALAR                 # a number or a named constant such as np.pi
        prim = cf.primitive_of(value)
        if prim is None:
            return UNKNOWN
        rule, _, operand = prim.shape_rule.partition(":")       # the registry's shape_rule
        if rule == "indexed":
            return self.of_getitem(value)
        args, keywords = params_and_keywords(value, prim)
        if rule == "tape_entry":
            tape = args["tape"]
            return self.tape_items.get(tape.value, UNKNOWN) if isinstance(tape, cst.Name) else UNKNOWN
        if rule == "like":                 # reverse mode's helpers: a cotangent shaped like an operand
            return self.of_value(args[operand])
        inputs = [self.of_value(a) for a in args.values()]
        x = inputs[0] if inputs else UNKNOWN
        if rule == "elementwise":
            return combine(*inputs)
        if rule == "scalar":
            return SCALAR
        if rule == "shape_tuple":
            return SHAPE_TUPLE
        if rule == "same":
            return x
        if rule == "reduce":
            if "axis" not in keywords:
                return SCALAR
            if isinstance(keywords.get("keepdims"), cst.Name) and keywords["keepdims"].value == "True":
                return (x[0], None)
            axis = keywords["axis"]
            return _shift(x, -(len(axis.elements) if isinstance(axis, cst.Tuple) else 1))
        if rule == "product":              # np.dot and @ of vectors and matrices
            a, b = inputs
            if isinstance(a[0], int) and isinstance(b[0], int) and 1 <= a[0] <= 2 and 1 <= b[0] <= 2:
                return _ndim_token(a[0] + b[0] - 2)
            return UNKNOWN
        if rule == "given_shape":          # the shape an operand gives: a literal tuple, or an int
            shape = args[operand]
            if isinstance(shape, cst.Tuple):
                return _ndim_token(len(shape.elements))
            return (1, None) if self.of_value(shape) == SCALAR else ("array", None)
        if rule == "rank":
            return (int(operand), None)
        if rule == "same_rank":
            return (x[0], None)
        if rule == "one_more_axis":
            return _shift(x, 1)
        if rule == "array":
            return ("array", None)
        return UNKNOWN

    def of_getitem(self, value: cst.Subscript):
        x = self.of_value(value.value)
        if x[0] == SHAPE_TUPLE[0]:
            whole = all(isinstance(el.slice, cst.Index) for el in value.slice)
            return SCALAR if whole else SHAPE_TUPLE
        trimmed = _trimmed(x, value.slice)
        if trimmed is not None:
            return trimmed
        if not isinstance(x[0], int):
            return UNKNOWN
        ndim = x[0]
        for element in value.slice:
            item = element.slice
            if isinstance(item, cst.Slice):
                continue
            if isinstance(item.value, cst.Name) and item.value.value == "None":
                ndim += 1
            elif self.of_value(item.value) == SCALAR and not isinstance(item.value, cst.Ellipsis):
                ndim -= 1
            else:
                return UNKNOWN            # a fancy index or an ellipsis
        return _ndim_token(ndim) if ndim >= 0 else UNKNOWN


def _trimmed(x, elements):
    """The token of ``x[a:-b]`` (either bound left out, numbers written in the code, ``a`` and ``b``
    not negative) where ``x`` has a shape class: its first axis is ``max(0, n - a - b)`` long for an
    ``n`` long one, whatever ``a`` and ``b`` are apart, so ``x[1:]`` and ``y[:-1]`` of two arrays of
    one class share one (``"x[-1]"``).  None for any other index."""
    if x[1] is None or x == SCALAR or len(elements) != 1 or not isinstance(elements[0].slice, cst.Slice):
        return None
    part = elements[0].slice
    lower = 0 if part.lower is None else cf.int_literal(part.lower)
    upper = 0 if part.upper is None else cf.int_literal(part.upper)
    step = 1 if part.step is None else cf.int_literal(part.step)
    if lower is None or upper is None or step != 1 or lower < 0 or upper > 0 or part.upper is not None and upper == 0:
        return None
    removed = lower - upper
    return x if removed == 0 else (x[0], f"{x[1]}[-{removed}]")


def _pushed(value):
    """The value ``rt.push(tape, value)`` pushes, if ``value`` is a push."""
    prim = cf.primitive_of(value) if isinstance(value, cst.Call) else None
    if prim is not None and prim.tape == "push":
        return value.args[1].value
    return None
