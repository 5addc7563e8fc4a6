"""Arrays of a few elements whose shape the code fixes, kept as one number per element (CPU target).

A particle's position ``np.array([0.0, 8.0])`` moved a step at a time, a 3-vector rotated once per
observation: numba gives every such array a heap allocation and every operation on it a loop of two
or three passes, so a loop over small arrays spends its time allocating.  Where the code fixes an
array's shape (a tuple of numbers made an array, and what elementwise operations, sums, reads at
literal positions and reverse mode's cotangent helpers make of it) and uses it in no other way, this
pass gives it one variable per element::

    x = np.asarray((0.0, 8.0))            x_0 = 0.0
    v = x * dt                       ->   x_1 = 8.0
    s = np.sum(v)                         v_0 = x_0 * dt
                                          v_1 = x_1 * dt
                                          s = v_0 + v_1

Reverse mode's tape of such an array holds tuples of its elements.

Every value the pass touches is a float64, so each element computes what the array's element did:
the tuples that make the arrays hold a float literal (a tuple of a float and any numbers is float64,
in NumPy and in numba); their other elements are cast as ``np.asarray`` would (``nl.as_float64``,
which refuses what np.asarray refuses, an array); and the numbers met beside the arrays are float64s
the pass has followed (float literals, elements, sums).  An operation that may raise on numbers (a
division) calls its ufunc, which gives inf and nan as the array operation did.  Sums add in NumPy's
order.

An array used in any other way (returned, passed to a call the pass does not know, read at a
position not written as a literal, written into while another name may see it) keeps its array, and
so does every array it is computed from or with.  What the pass knows of each primitive is the cpu
table's ``small_arrays`` option (templates/cpu.py) and, for elementwise ones, its ufunc.
"""
from __future__ import annotations

import ast
import itertools
import math

import libcst as cst
import numpy as np

from .. import core_form as cf
from .. import primitives
from ..dataflow import remove_dead_code
from ..transforms.shapes import atom_names, loop_indices
from .numba_lowering import cpu_option

MAX_ELEMENTS = 16          # beyond this an array's loops beat a statement per element
_ELEMENTWISE = (primitives.UNARY, primitives.BINARY)

# A fact about a name: ("array", shape) a float64 array of that shape, () a float64 number;
# ("tape", shape) a tape of such values; ("shape value", shape) np.shape of such an array.
ARRAY, TAPE, SHAPE = "array", "tape", "shape value"
NEUTRAL = ("neutral",)     # a new empty tape: it agrees with whatever is pushed on it


def scalarize(core: cf.CoreFunction, check_numbers: bool = False) -> tuple[cf.CoreFunction, bool]:
    """``core`` with its small arrays as numbers, and whether it checks that some arguments are
    numbers (``check_numbers``: allowed to; see ``with_arrays_name``)."""
    body = list(core.node.body.body)
    check_numbers = check_numbers and with_arrays_name(core.name) not in core.scope.taken | set(core.constants)
    facts = _facts(core, body, check_numbers)
    if not any(_is_small_array(f) for f in facts.values()):
        return core, False
    core.scope.taken |= atom_names(core.node)          # every name the function has: no element takes one
    writer = _Writer(core.scope, facts)
    node = core.node.with_changes(body=cf.block(writer.block(body)))
    # a reverse sweep read its tapes of small arrays as shapes too (``rt.unbroadcast(g, x)``); as
    # numbers they need none, and a tape whose elements nothing reads is dropped whole
    node = remove_dead_code(node, nested=True)
    return cf.CoreFunction(**{**vars(core), "node": node}), writer.checks_numbers


def with_arrays_name(name: str) -> str:
    """The name of the function kept with its arrays beside one that checks numbers: an argument
    met in arithmetic by a small array may be an array of any shape (a stiffness per axis), or a
    number (the usual case).  The function with numbers per element checks it is a number
    (``nl.number``, which refuses anything else with ``NOT_A_NUMBER``) and the cpu target then
    runs this one instead."""
    return f"{name}_with_arrays"


NOT_A_NUMBER = "transformer small arrays: not a number"


# ----------------------------------------------------------------------------- what is known
def _is_small_array(fact) -> bool:
    """An array the pass gives a variable per element (a number, shape (), is one already)."""
    return fact is not None and fact[0] in (ARRAY, TAPE) and len(fact[1]) > 0


class _Facts(dict):
    """name -> fact, and which names without one may be checked to be numbers where they meet a
    small array in arithmetic (``maybe_numbers``: the arguments, loop indices and arithmetic of
    those; none unless ``check_numbers``)."""

    def __init__(self, maybe_numbers=frozenset()):
        super().__init__()
        self.maybe_numbers = maybe_numbers


def _facts(core, body, check_numbers) -> _Facts:
    """name -> fact, for the names whose every definition and every use the pass can follow."""
    assigned: dict[str, list] = {}
    for stmt in cf.walk(body):
        small = stmt.body[0]
        if isinstance(small, cst.Assign) and isinstance(small.targets[0].target, cst.Name):
            assigned.setdefault(small.targets[0].target.value, []).append(small.value)
    unknown = set(core.params) | loop_indices(body)
    maybe_numbers = _maybe_numbers(assigned, unknown) if check_numbers else frozenset()
    poisoned: set[str] = set()
    while True:
        facts = _propagate(assigned, unknown | poisoned, maybe_numbers - poisoned)
        bad = _disagreeing(assigned, facts) | _misused(body, facts)
        if not bad - poisoned:
            final = _Facts(facts.maybe_numbers)
            final.update((n, f) for n, f in facts.items() if n not in bad)
            return final
        poisoned |= bad


def _maybe_numbers(assigned, unknown) -> frozenset:
    """The arguments and loop indices, and names every definition of which is arithmetic of those
    and of number literals: what may be a number when the function runs (or may not)."""
    names = set(unknown)
    changed = True
    while changed:
        changed = False
        for name, values in assigned.items():
            if name not in names and all(
                    not cf.is_atom(v) and ufunc_of(cf.primitive_of(v)) is not None and not cf.keywords(v)
                    and all(_number(o) is not None or (isinstance(o, cst.Name) and o.value in names)
                            for o in cf.operands(v)) for v in values):
                names.add(name)
                changed = True
    return frozenset(names)


def _propagate(assigned, excluded, maybe_numbers) -> _Facts:
    """Facts learnt from the first definition of each name that gives one, until nothing changes."""
    facts = _Facts(maybe_numbers)
    changed = True
    while changed:
        changed = False
        for name, values in assigned.items():
            if name in excluded or name in facts:
                continue
            for value in values:
                fact = _fact_of(value, facts)
                if fact is not None and fact is not NEUTRAL:
                    facts[name] = fact
                    changed = True
                    break
    return facts


def _disagreeing(assigned, facts) -> set:
    """Names with a definition that does not give their fact."""
    return {name for name, fact in facts.items()
            if any(_fact_of(v, facts) not in (fact, NEUTRAL) for v in assigned[name])}


def _misused(body, facts) -> set:
    """Small arrays (and tapes of them) read where the pass cannot follow them, and arrays written
    into that another name may see."""
    bad: set[str] = set()
    written: set[str] = set()
    for stmt in _all_statements(body):
        if not isinstance(stmt, cst.SimpleStatementLine):
            bad |= {n for n in _header_names(stmt) if _is_small_array(facts.get(n))}
            continue
        small = stmt.body[0]
        mentioned = {n for n in atom_names(small) if _is_small_array(facts.get(n))}
        if not mentioned:
            continue
        if isinstance(small, cst.Assign) and isinstance(small.targets[0].target, cst.Subscript):
            target = small.targets[0].target
            array = target.value.value if isinstance(target.value, cst.Name) else None
            if array is not None and _element_write(target, small.value, facts) is not None:
                written.add(array)
                continue
            bad |= mentioned
            continue
        if not (isinstance(small, cst.Assign) and isinstance(small.targets[0].target, cst.Name)):
            bad |= mentioned
            continue
        target, value = small.targets[0].target.value, small.value
        fact = _fact_of(value, facts)
        if fact is NEUTRAL and facts.get(target, (None,))[0] == TAPE:
            continue
        if fact is None or fact is NEUTRAL or facts.get(target) != fact:
            bad |= mentioned
    return bad | {name for name in written if not _written_while_unshared(body, name, facts, False)}


def _written_while_unshared(stmts, name, facts, fresh) -> bool:
    """Whether every element write into ``name`` in ``stmts`` writes an array that nothing else
    holds: one made since the last time a copy, a view or a tape took it (``fresh``: so it is on
    entry).  A copy per element sees no later write, where the array's sharer would."""
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            small = stmt.body[0]
            target = small.targets[0].target if isinstance(small, cst.Assign) else None
            if isinstance(target, cst.Subscript) and atom_names(target.value) == {name}:
                if not fresh:
                    return False
            elif isinstance(target, cst.Name) and target.value == name:
                fresh = not cf.is_atom(small.value) and not _shared_operands(small.value, facts.get(name), facts)
            if isinstance(small, cst.Assign) and name in _shared_operands(small.value, _fact_of(small.value, facts), facts):
                fresh = False
            continue
        inner = [s for block in cf.blocks(stmt) for s in _all_statements(block)]
        touched = any(isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Assign)
                      and (name in _shared_operands(s.body[0].value, _fact_of(s.body[0].value, facts), facts)
                           or atom_names(s.body[0].targets[0].target) & {name}) for s in inner)
        loops = isinstance(stmt, (cst.For, cst.While))
        for block in cf.blocks(stmt):
            if not _written_while_unshared(block, name, facts, fresh and not (loops and touched)):
                return False
        if touched:
            fresh = False
    return True


def _all_statements(stmts):
    for stmt in stmts:
        yield stmt
        for inner in cf.blocks(stmt):
            yield from _all_statements(inner)


def _header_names(stmt) -> set:
    if isinstance(stmt, (cst.If, cst.While)):
        return atom_names(stmt.test)
    if isinstance(stmt, cst.For):
        return atom_names(stmt.iter) | atom_names(stmt.target)
    return set()


def _shared_operands(value, fact, facts) -> set:
    """The small arrays a definition may leave its target sharing memory with: a copy's source, a
    primitive's first operand where its result may be a view of it, what a tape keeps."""
    if cf.is_atom(value):
        return atom_names(value)
    if fact is None:
        return set()
    prim = cf.primitive_of(value)
    operands = cf.operands(value)
    if prim.tape == "push":
        return atom_names(operands[1])
    # (a tuple display is no array: np.asarray((x, 1.0)) is a new one)
    if prim.may_alias and operands and fact[0] == ARRAY and fact[1] and not isinstance(operands[0], cst.Tuple):
        return atom_names(operands[0])
    return set()


# ----------------------------------------------------------------------------- one definition
def _number(node):
    """The value of a number literal (``2``, ``-0.5``), else None."""
    if isinstance(node, (cst.Integer, cst.Float)) or (
            isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
            and isinstance(node.expression, (cst.Integer, cst.Float))):
        return ast.literal_eval(cf.code_of(node))
    return None


def _operand_shape(node, facts):
    """The shape of an elementwise operand the pass follows (a number literal is ()), else None."""
    if _number(node) is not None:
        return ()
    if isinstance(node, cst.Name):
        fact = facts.get(node.value)
        if fact is not None and fact[0] == ARRAY:
            return fact[1]
    return None


def _checked_number(node, facts) -> bool:
    """Whether an elementwise operand is a name the pass knows nothing of that may be a number:
    the function then checks it is (``nl.number``) where it meets a small array."""
    return isinstance(node, cst.Name) and node.value not in facts and node.value in facts.maybe_numbers


def _broadcast(*shapes):
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        return None
    return shape if math.prod(shape) <= MAX_ELEMENTS else None


def ufunc_of(prim):
    """The NumPy ufunc an elementwise primitive applies, where it gives float64 for float64."""
    if prim is None or prim.kind not in _ELEMENTWISE:
        return None
    ufunc = prim.impl if isinstance(prim.impl, np.ufunc) else getattr(np, prim.name, None)
    if not isinstance(ufunc, np.ufunc) or ufunc.nout != 1 or ufunc.nin != len(prim.params):
        return None
    try:
        result = ufunc.resolve_dtypes((np.dtype(np.float64),) * ufunc.nin + (None,))[-1]
    except (TypeError, np.exceptions.DTypePromotionError):
        return None
    return ufunc if result == np.float64 else None


def _fact_of(value, facts):
    """What the definition ``name = value`` makes ``name``, where the pass can follow it."""
    if isinstance(value, cst.Name):
        fact = facts.get(value.value)
        return fact if fact is not None and fact[0] in (ARRAY, SHAPE) else None
    if isinstance(value, cst.Float) or (_number(value) is not None and isinstance(_number(value), float)):
        return (ARRAY, ())
    if cf.is_atom(value):
        return None
    prim = cf.primitive_of(value)
    if prim is None:
        return None
    keywords = cf.keywords(value)
    operands = cf.operands(value)
    if prim.tape == "new":
        return NEUTRAL
    if prim.tape == "push":
        shape = _operand_shape(operands[1], facts)
        return None if shape is None or _number(operands[1]) is not None else (TAPE, shape)
    if prim.tape in ("pop", "top"):
        tape = facts.get(operands[0].value) if isinstance(operands[0], cst.Name) else None
        return (ARRAY, tape[1]) if tape is not None and tape[0] == TAPE else None
    if ufunc_of(prim) is not None and not keywords:
        shapes = [_operand_shape(o, facts) for o in operands]
        checked = [_checked_number(o, facts) for o in operands]
        shapes = [() if c else s for s, c in zip(shapes, checked)]
        if None in shapes or all(_number(o) is not None and not isinstance(_number(o), float) for o in operands):
            return None
        shape = _broadcast(*shapes)
        # a checked number beside a small array: its result is no number, whatever the check says
        return None if shape is None or (any(checked) and not shape) else (ARRAY, shape)
    form = cpu_option(prim, "small_arrays")
    if form is None:
        return None
    return _FORMS[form].fact(prim, cf.arguments(value, prim), facts)


def _array_shape(node, facts):
    """The shape of a name the pass follows as an array (() for a float64 number), else None."""
    return _operand_shape(node, facts) if isinstance(node, cst.Name) else None


def _literal(node):
    """A literal's value (a number, None, a bool, a tuple of those), or raise ValueError."""
    return ast.literal_eval(cf.code_of(node))


def _reduction(args, ndim):
    """(axes counted from 0, keepdims) of a reduction's literal ``axis=`` and ``keepdims=``, or None
    where they are no literals the pass can read."""
    try:
        axis, keepdims = _literal(args.get("axis", cst.Name("None"))), _literal(args.get("keepdims", cst.Name("False")))
    except (ValueError, SyntaxError):
        return None
    axes = _axes(axis, ndim)
    return None if axes is None or not isinstance(keepdims, bool) else (axes, keepdims)


def _axes(axis, ndim):
    """A reduction's axes, counted from 0, or None where the pass cannot tell them."""
    axes = range(ndim) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    if not all(isinstance(a, int) and -ndim <= a < ndim for a in axes):
        return None
    axes = tuple(sorted({a % ndim for a in axes}))
    return axes


def _element_write(target: cst.Subscript, value, facts):
    """The element ``x[i, j] = v`` writes (its index), where x is a small array, every position a
    literal within its shape and v a number; else None."""
    shape = _array_shape(target.value, facts)
    if not shape or (not isinstance(value, cst.Name) and _number(value) is None):
        return None
    if isinstance(value, cst.Name) and _is_small_array(facts.get(value.value)):
        return None
    return _literal_position(target.slice, shape, whole=True)


def _literal_position(elements, shape, whole):
    """The index literal ints give (every axis of ``shape`` if ``whole``), within range, else None."""
    position = []
    for element in elements:
        index = element.slice
        if not isinstance(index, cst.Index) or not isinstance(_number(index.value), int):
            return None
        position.append(_number(index.value))
    if len(position) > len(shape) or (whole and len(position) != len(shape)):
        return None
    if not all(-n <= i < n for i, n in zip(position, shape)):
        return None
    return tuple(i % n for i, n in zip(position, shape))


# ----------------------------------------------------------------------------- the forms
class _Form:
    """One kind of definition the pass follows: what it makes its target (``fact``), and the
    statements that compute the target's elements (``elements``: target element -> expression
    by position, ``element(target_index)``)."""

    def fact(self, prim, args, facts):
        raise NotImplementedError

    def element(self, prim, args, facts, elements_of, target_shape, index):
        raise NotImplementedError


class _FromTuple(_Form):
    """np.asarray((a, b), ...) of numbers, with a float literal among them."""

    def fact(self, prim, args, facts):
        if set(args) != {"x"} or not isinstance(args["x"], cst.Tuple):
            return None
        shape, leaves = _nested(args["x"])
        if shape is None or not shape or math.prod(shape) > MAX_ELEMENTS:
            return None
        if not any(isinstance(_number(leaf), float) for leaf in leaves):
            return None
        for leaf in leaves:
            if _number(leaf) is None and not (isinstance(leaf, cst.Name) and facts.get(leaf.value) in (None, (ARRAY, ()))):
                return None
        return (ARRAY, shape)

    def element(self, prim, args, facts, elements_of, target_shape, index):
        leaf = _nested(args["x"])[1][np.ravel_multi_index(index, target_shape)]
        number = _number(leaf)
        if number is not None:
            return cf.literal(float(number))
        if facts.get(leaf.value) == (ARRAY, ()):
            return leaf
        return cf.call("nl.as_float64", [leaf])


def _nested(node):
    """(shape, leaves in C order) of a rectangular nest of tuples, or (None, None)."""
    if not isinstance(node, cst.Tuple):
        return (), [node]
    parts = [_nested(e.value) for e in node.elements]
    if not parts or any(p[0] is None or p[0] != parts[0][0] for p in parts):
        return None, None
    return (len(parts), *parts[0][0]), [leaf for p in parts for leaf in p[1]]


class _Sum(_Form):
    """np.sum(x, axis=..., keepdims=...): the elements of each output added in NumPy's order."""

    def fact(self, prim, args, facts):
        shape = _array_shape(args.get("x"), facts)
        reduction = _reduction(args, len(shape)) if shape and not set(args) - {"x", "axis", "keepdims"} else None
        return None if reduction is None else (ARRAY, _reduced(shape, *reduction))

    def terms(self, args, facts, target_shape, index):
        shape = _array_shape(args["x"], facts)
        axes, keepdims = _reduction(args, len(shape))
        kept = [i for i in range(len(shape)) if i not in axes]
        out = [index[i] for i in kept] if keepdims else list(index)
        positions = []
        for summed in itertools.product(*(range(shape[a]) for a in axes)):
            full = [0] * len(shape)
            for a, i in zip(kept, out):
                full[a] = i
            for a, i in zip(axes, summed):
                full[a] = i
            positions.append(tuple(full))
        # NumPy adds along the last axis pairwise where it is contiguous, elsewhere one by one
        pairwise = axes[-1] == len(shape) - 1 and axes == tuple(range(axes[0], len(shape)))
        return args["x"], positions, pairwise


def _reduced(shape, axes, keepdims):
    return tuple(1 if i in axes else n for i, n in enumerate(shape)) if keepdims else \
        tuple(n for i, n in enumerate(shape) if i not in axes)


class _SumToShapeOf(_Form):
    """rt.unbroadcast(g, x): g summed over the axes broadcasting gave it, to x's shape."""

    def fact(self, prim, args, facts):
        g, x = _array_shape(args.get("g"), facts), _array_shape(args.get("x"), facts)
        if g is None or x is None or _broadcast(g, x) != g:
            return None
        return (ARRAY, x)

    def terms(self, args, facts, target_shape, index):
        g = _array_shape(args["g"], facts)
        lead = len(g) - len(target_shape)
        positions = [p for p in np.ndindex(*g)
                     if all(target_shape[i] == 1 or p[lead + i] == index[i] for i in range(len(target_shape)))]
        return args["g"], positions, False


class _Expand(_Form):
    """rt.expand_to(g, x, axis, keepdims): a reduction's cotangent g, repeated over x's shape."""

    def fact(self, prim, args, facts):
        g, x = _array_shape(args.get("g"), facts), _array_shape(args.get("x"), facts)
        reduction = None if g is None or x is None else _reduction(args, len(x))
        if reduction is None or g != _reduced(x, *reduction):
            return None
        return (ARRAY, x)

    def element(self, prim, args, facts, elements_of, target_shape, index):
        axes, keepdims = _reduction(args, len(target_shape))
        position = tuple(0 if i in axes else n for i, n in enumerate(index)) if keepdims else \
            tuple(n for i, n in enumerate(index) if i not in axes)
        return elements_of(args["g"], position)


class _Broadcast(_Form):
    """np.broadcast_to(x, shape), the shape a literal or np.shape of a small array."""

    def fact(self, prim, args, facts):
        x, shape = _array_shape(args.get("x"), facts), _shape_value(args.get("shape"), facts)
        if x is None or shape is None or _broadcast(x, shape) != shape or set(args) != set(prim.params):
            return None
        return (ARRAY, shape)

    def element(self, prim, args, facts, elements_of, target_shape, index):
        return elements_of(args["x"], index)


def _shape_value(node, facts):
    if isinstance(node, cst.Name):
        fact = facts.get(node.value)
        return fact[1] if fact is not None and fact[0] == SHAPE else None
    try:
        value = _literal(node)
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, int):
        value = (value,)
    return value if isinstance(value, tuple) and all(isinstance(n, int) and n >= 0 for n in value) else None


class _Zeros(_Form):
    """rt.zeros_like(x), np.zeros_like(x): zeros of its shape (a cotangent's, a tangent's)."""

    def fact(self, prim, args, facts):
        shape = _array_shape(args.get("x"), facts)
        return None if shape is None or set(args) != {"x"} else (ARRAY, shape)

    def element(self, prim, args, facts, elements_of, target_shape, index):
        return cf.literal(0.0)


class _Seed(_Form):
    """rt.scalar_seed(out): grad's 1.0 for a float64 number."""

    def fact(self, prim, args, facts):
        return (ARRAY, ()) if _array_shape(args.get("out"), facts) == () else None


class _ShapeOf(_Form):
    """np.shape(x): a literal tuple."""

    def fact(self, prim, args, facts):
        shape = _array_shape(args.get("x"), facts)
        return None if not shape else (SHAPE, shape)


class _Index(_Form):
    """x[i] and x[i, j] with literal positions: an element, or the elements of a row."""

    def fact(self, prim, args, facts):
        shape = _array_shape(args.get("x"), facts)
        if not shape or set(args) != {"x", "index"}:
            return None
        position = _literal_position(args["index"], shape, whole=False)
        return None if position is None else (ARRAY, shape[len(position):])

    def element(self, prim, args, facts, elements_of, target_shape, index):
        shape = _array_shape(args["x"], facts)
        return elements_of(args["x"], _literal_position(args["index"], shape, whole=False) + tuple(index))


_FORMS = {"from_tuple": _FromTuple(), "summed": _Sum(), "sum_to_shape_of": _SumToShapeOf(),
          "expand": _Expand(), "broadcast": _Broadcast(), "zero_filled": _Zeros(), "seed": _Seed(),
          "literal_shape": _ShapeOf(), "index": _Index()}


# ----------------------------------------------------------------------------- the rewrite
class _Writer:
    """Writes each statement over small arrays as statements over their elements."""

    def __init__(self, scope, facts):
        self.scope = scope
        self.facts = facts
        self._names: dict[tuple, str] = {}
        self.checks_numbers = False

    def element_name(self, name: str, index: tuple) -> str:
        key = (name, index)
        if key not in self._names:
            self._names[key] = self.scope.claim("_".join([name, *map(str, index)]))
        return self._names[key]

    def elements_of(self, node, index):
        """The expression for element ``index`` of an operand broadcast to a shape ending in it."""
        if _number(node) is not None:
            return node
        fact = self.facts.get(node.value)
        if fact is None or not fact[1]:
            return node
        shape = fact[1]
        index = index[len(index) - len(shape):]
        return cst.Name(self.element_name(node.value, tuple(0 if n == 1 else i for i, n in zip(index, shape))))

    def block(self, stmts):
        out = []
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                rewritten = self.statement(stmt)
                if rewritten and stmt.leading_lines:
                    rewritten[0] = rewritten[0].with_changes(leading_lines=stmt.leading_lines)
                out.extend(rewritten)
            else:
                out.append(cf.map_blocks(stmt, self.block))
        return out

    def statement(self, stmt):
        small = stmt.body[0]
        if not isinstance(small, cst.Assign):
            return [stmt]
        target = small.targets[0].target
        if isinstance(target, cst.Subscript):
            if not _is_small_array(self.facts.get(getattr(target.value, "value", None))):
                return [stmt]
            position = _element_write(target, small.value, self.facts)
            value = small.value
            if isinstance(value, cst.Name) and self.facts.get(value.value) != (ARRAY, ()):
                value = cf.call("nl.as_float64", [value])
            elif _number(value) is not None:
                value = cf.literal(float(_number(value)))
            return [cf.assign(self.element_name(target.value.value, position), value)]
        name, value = target.value, small.value
        fact = self.facts.get(name)
        reads_small = any(_is_small_array(self.facts.get(n)) for n in atom_names(value))
        if fact is None or not (_is_small_array(fact) or (reads_small and fact[0] in (ARRAY, SHAPE))):
            return [stmt]
        if fact[0] == SHAPE:
            return [cf.assign(name, cf.literal(fact[1]))]
        if fact[0] == TAPE and _fact_of(value, self.facts) is NEUTRAL:     # a new tape
            return [stmt]
        if fact[0] == TAPE:                              # stack = rt.push(stack, x): x's elements
            pushed = cf.operands(value)[1]
            entry = cf.tuple_of(cst.Name(self.element_name(pushed.value, i)) for i in np.ndindex(*fact[1]))
            return [cf.assign(name, value.with_changes(args=[value.args[0], value.args[1].with_changes(value=entry)]))]
        return self.definition(name, value, fact[1])

    def definition(self, name, value, shape):
        facts = self.facts
        if isinstance(value, cst.Name):
            return [cf.assign(self.element_name(name, i) if shape else name, self.elements_of(value, i))
                    for i in _indices(shape)]
        prim = cf.primitive_of(value)
        if prim.tape in ("pop", "top"):                  # the tuple of elements, then each element
            return [cf.assign(name, value)] + [
                cf.assign(self.element_name(name, i), cst.Subscript(cst.Name(name), [cst.SubscriptElement(
                    cst.Index(cf.literal(k)))])) for k, i in enumerate(np.ndindex(*shape))]
        ufunc = ufunc_of(prim)
        target = (lambda i: self.element_name(name, i)) if shape else (lambda i: name)
        if ufunc is not None and not cf.keywords(value):
            return [cf.assign(target(i), self.elementwise(prim, ufunc, value, i)) for i in _indices(shape)]
        form = _FORMS[cpu_option(prim, "small_arrays")]
        args = cf.arguments(value, prim)
        if hasattr(form, "terms"):
            out = []
            for i in _indices(shape):
                source, positions, pairwise = form.terms(args, facts, shape, i)
                terms = [self.elements_of(source, p) for p in positions]
                out += _added(target(i), terms, pairwise, self.scope)
            return out
        return [cf.assign(target(i), form.element(prim, args, facts, self.elements_of, shape, i))
                for i in _indices(shape)]

    def elementwise(self, prim, ufunc, value, index):
        operands = []
        for operand in cf.operands(value):
            if _checked_number(operand, self.facts):
                self.checks_numbers = True
                operands.append(cf.call("nl.number", [operand]))
            else:
                operands.append(self.elements_of(operand, index))
        safe = cpu_option(prim, "lane_safe")
        if safe is True or (safe is None and ufunc.nin == 1):   # cannot raise on numbers: as written
            if isinstance(value, cst.BinaryOperation):
                return value.with_changes(left=_parenthesized(operands[0]), right=_parenthesized(operands[1]))
            if isinstance(value, cst.UnaryOperation):
                return value.with_changes(expression=_parenthesized(operands[0]))
            return value.with_changes(args=[a.with_changes(value=o) for a, o in zip(value.args, operands)])
        return cf.call(f"np.{ufunc.__name__}", operands)   # a division of numbers raises; its ufunc does not


def _indices(shape):
    return list(np.ndindex(*shape)) if shape else [()]


def _parenthesized(node):
    if isinstance(node, cst.UnaryOperation) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def _added(target, terms, pairwise, scope):
    """``target = `` the terms' sum in NumPy's order: one by one, or (pairwise, from 8 terms on)
    eight running sums combined as a tree, then the rest one by one."""
    if len(terms) == 1:
        return [cf.assign(target, terms[0])]
    if not pairwise or len(terms) < 8:
        out = [cf.assign(target, cst.BinaryOperation(terms[0], cst.Add(), terms[1]))]
        return out + [cf.assign(target, cst.BinaryOperation(cst.Name(target), cst.Add(), t)) for t in terms[2:]]
    blocks = len(terms) - len(terms) % 8
    partial = [scope.claim(f"{target}_partial") for _ in range(8)]
    out = []
    for k in range(8):
        column = terms[k:blocks:8]
        out += _added(partial[k], column, False, scope)
    pairs = [scope.claim(f"{target}_pair") for _ in range(2)]
    quads = [scope.claim(f"{target}_quad") for _ in range(4)]
    out += [cf.assign(quads[k], cst.BinaryOperation(cst.Name(partial[2 * k]), cst.Add(), cst.Name(partial[2 * k + 1])))
            for k in range(4)]
    out += [cf.assign(pairs[k], cst.BinaryOperation(cst.Name(quads[2 * k]), cst.Add(), cst.Name(quads[2 * k + 1])))
            for k in range(2)]
    out.append(cf.assign(target, cst.BinaryOperation(cst.Name(pairs[0]), cst.Add(), cst.Name(pairs[1]))))
    return out + [cf.assign(target, cst.BinaryOperation(cst.Name(target), cst.Add(), t)) for t in terms[blocks:]]
