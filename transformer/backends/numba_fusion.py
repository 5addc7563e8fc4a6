"""Elementwise expressions put back together for numba.

The core form gives every operation its own statement and temporary, which
transforms need.  numba, though, fuses NumPy array expressions into one loop
only within a single statement: ``np.exp(-x ** 2) * np.sin(3 * x)`` is one
pass over memory, while the same work as five statements makes five passes
and allocates four temporary arrays.  On large arrays that is the difference
between a memory-bound chain and a compute-bound one.

So, for the CPU target only, a temporary that is

- written once, by an elementwise operation (arithmetic, comparison, a math
  function), and read exactly once, later in the same block,
- by an elementwise operation (or a copy, or a ``return``) that sees it
  through nothing but elementwise operations,
- with none of the names it reads written between the two statements (reverse
  mode's ``x = rt.pop(t)`` after ``x = rt.top(t)`` gives ``x`` the value it
  has, so it does not count), and no in-place write between them at all
  (the array written may be a view of an operand: ``y = x[1:]; y[0] = 5``
  changes ``x``),

is substituted into its reader::

    _t0 = x ** nl.scalar_like(x, 2)
    _t1 = -_t0                         ->   _t2 = np.exp(-(x ** nl.scalar_like(x, 2)))
    _t2 = np.exp(_t1)

The expression reads as the user wrote it, and the user-line comments of the
removed statements move to the next statement kept.  (After this pass,
``np.exp`` and ``np.tanh`` become ``vm.*`` calls, each a vectorised loop of
its own: their arguments are still fused, their results join the rest.)
A cotangent expanded over an array (``rt.expand_to(g, e, ...)``) joins the
same way where its reader reads ``e``, or an array of ``e``'s shape (a name
made from one array and numbers, ``-e`` or ``e ** 2``, has that array's
shape): as ``g`` itself for the scalar cotangent of a sum over all axes or one
with kept dims, and as the view ``nl.expand_axis(g, axis)`` for a sum over one
literal axis.  Broadcasting against ``e`` gives the same values as the filled
array would.  Its every read must be in that reader; where one only gives a
literal its dtype (``nl.scalar_like(t, 2)``), it reads ``g``, of that dtype.
Values read twice, reductions, products, indexing and anything in another
block keep their statements.  A literal's dtype witness counts as a read
(``x * nl.scalar_like(x, 0.5)`` reads ``x`` twice), so a temporary multiplied
by a constant keeps its statement: substituting it would compute it twice.
"""
from __future__ import annotations

from collections import Counter

import libcst as cst

from .. import core_form as cf
from .. import primitives, walk
from ..dataflow import all_names
from ..dataflow import spelling as dataflow_spelling
from .numba_lowering import cpu_option

_ELEMENTWISE_KINDS = (primitives.UNARY, primitives.BINARY, primitives.COMPARE)


def _is_elementwise(value) -> bool:
    """An operation applied element by element to its operands (numba fuses these)."""
    if not isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.Call)):
        return False
    if isinstance(value, cst.Comparison) and len(value.comparisons) != 1:
        return False
    prim = cf.primitive_of(value)
    # (Python's `not` has a comparison's kind, but asks one truth value: the cpu table says so)
    return prim is not None and prim.kind in _ELEMENTWISE_KINDS and cpu_option(prim, "elementwise") is not False


def _reachable_names(value) -> set[str]:
    """Names that ``value`` reads through elementwise operations only: where a
    substituted expression joins the same fused loop."""
    if isinstance(value, cst.Name):
        return {value.value}
    if not _is_elementwise(value):
        return set()
    names = set()
    for operand in cf.operands(value):
        names |= _reachable_names(operand)
    return names


class _NameCounts(cst.CSTVisitor):
    """How often each name is read and written in a whole function."""

    def __init__(self):
        self.loads: Counter = Counter()
        self.stores: Counter = Counter()

    def visit_Name(self, node):
        self.loads[node.value] += 1

    def visit_AssignTarget(self, node):
        if isinstance(node.target, cst.Name):
            self.stores[node.target.value] += 1
            self.loads[node.target.value] -= 1      # visit_Name will count the target as a read
        elif isinstance(node.target, cst.Subscript) and isinstance(node.target.value, cst.Name):
            self.stores[node.target.value.value] += 1   # an in-place write changes the array

    def visit_For(self, node):
        for name in all_names(node.target):
            self.stores[name] += 1
            self.loads[name] -= 1


def _written_by(stmt) -> set[str]:
    """Names a statement (with everything nested in it) assigns or writes into."""
    written = set()

    class _Writes(cst.CSTVisitor):
        def visit_AssignTarget(self, node):
            target = node.target
            written.update(all_names(target.value if isinstance(target, cst.Subscript) else target))

        def visit_For(self, node):
            written.update(all_names(node.target))

    stmt.visit(_Writes())
    return written


def _parenthesized(expr):
    if isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)) and not expr.lpar:
        return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return expr


class _Substitute(cst.CSTTransformer):
    def __init__(self, name: str, expr):
        self.name, self.expr = name, expr

    def visit_Attribute(self, node):
        return False                              # np.pi, np.float32: never a variable

    def leave_Name(self, original, updated):
        return self.expr if updated.value == self.name else updated

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)   # a keyword is not a read

    # an operator's operand needs parentheses; a call's argument does not
    def leave_BinaryOperation(self, original, updated):
        return updated.with_changes(left=self._wrap(original.left, updated.left),
                                    right=self._wrap(original.right, updated.right))

    def leave_UnaryOperation(self, original, updated):
        return updated.with_changes(expression=self._wrap(original.expression, updated.expression))

    def leave_Comparison(self, original, updated):
        comparison = updated.comparisons[0]
        return updated.with_changes(
            left=self._wrap(original.left, updated.left),
            comparisons=[comparison.with_changes(
                comparator=self._wrap(original.comparisons[0].comparator, comparison.comparator))])

    def _wrap(self, original, updated):
        substituted = isinstance(original, cst.Name) and original.value == self.name
        return _parenthesized(updated) if substituted else updated


def _value_of(stmt):
    """The right-hand side of an assignment to a name, or the value of a return."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.Assign) and isinstance(small.targets[0].target, cst.Name):
        return small.value
    if isinstance(small, cst.Return):
        return small.value
    return None


def _writes_in_place(stmt) -> bool:
    """An in-place write: ``x[i] = v``, or a call made for its effect, as the lowering writes a
    masked write (``nl.put(x, mask, v)``): it changes its array as ``x[mask] = v`` did."""
    small = stmt.body[0] if len(stmt.body) == 1 else None
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        func = small.value.func       # but a tape's push (``h_stack.append(h)``) changes no array
        return not (isinstance(func, cst.Attribute) and func.attr.value == "append")
    return isinstance(small, cst.Assign) and any(isinstance(t.target, cst.Subscript) for t in small.targets)


def _with_value(stmt, value):
    return stmt.with_changes(body=[stmt.body[0].with_changes(value=value)])


def _broadcast_cotangent(value):
    """(g as it broadcasts, g, x) for ``rt.expand_to(g, x, ...)`` (a primitive that ``expands``):
    a reduction's cotangent over all axes (``axis=None``) or with ``keepdims=True``, which already
    broadcasts to ``x``'s shape, or over one literal axis, which does once that axis is put back
    (``nl.expand_axis(g, axis)``, a view); else None.
    Read beside ``x`` in an elementwise expression, ``g`` gives the same values as the full
    array expand_to would fill: NumPy's broadcasting does the expanding, inside the fused loop."""
    prim = cf.primitive_of(value) if isinstance(value, cst.Call) else None
    if prim is None or not prim.expands:
        return None
    operands = cf.operands(value)
    keywords = cf.keywords(value)
    if len(operands) != 2 or not all(isinstance(a, (cst.Name, cst.Float, cst.Integer)) for a in operands) \
            or not isinstance(operands[1], cst.Name):
        return None
    g = operands[0]
    axis, keepdims = keywords.get("axis"), keywords.get("keepdims")
    if axis is None or _is_name(axis, "None") or _is_name(keepdims, "True"):
        return g, g, operands[1].value
    if cf.int_literal(axis) is not None and (keepdims is None or _is_name(keepdims, "False")):
        return cf.call("nl.expand_axis", [g, axis]), g, operands[1].value
    return None


def _shape_source(value):
    """The array a statement's value has the shape of, where it is an elementwise operation of
    one name and numbers (``-a``, ``a ** nl.scalar_like(a, 2)``, ``np.exp(a)``), else None."""
    if not _is_elementwise(value):
        return None
    names = [o for o in cf.operands(value) if isinstance(o, cst.Name)]
    others = [o for o in cf.operands(value) if not isinstance(o, cst.Name)]
    if len(names) != 1 or not all(isinstance(o, (cst.Integer, cst.Float)) or _is_witness(o) for o in others):
        return None
    return names[0].value


def _is_witness(node) -> bool:
    """``nl.scalar_like(x, 2)``: a number literal with x's dtype (a number, not an array)."""
    return isinstance(node, cst.Call) and dataflow_spelling(node) == "nl.scalar_like"


class _SubstituteBroadcast(cst.CSTTransformer):
    """Every read of an expanded cotangent ``name`` as ``expanded`` (a view), except where it only
    gives a literal its dtype (``nl.scalar_like(name, 2)``): ``g`` has that dtype."""

    def __init__(self, name: str, expanded, g):
        self.name, self.expanded, self.g = name, expanded, g

    def leave_Call(self, original, updated):
        if _is_witness(original) and _is_name(original.args[0].value, self.name):
            return updated.with_changes(args=[updated.args[0].with_changes(value=self.g), *updated.args[1:]])
        return updated

    def visit_Attribute(self, node):
        return False

    def leave_Name(self, original, updated):
        return self.expanded if updated.value == self.name else updated

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)


def _reads_of(value, name: str) -> int:
    counts = _NameCounts()
    _value_of_wrapper(value).visit(counts)
    return counts.loads[name]


def _tape_read(stmt):
    """(target, tape, "top" or "pop": the registry's tape operation) of ``x = rt.top(t)`` /
    ``x = rt.pop(t)``, else None."""
    value, target = _value_of(stmt), _single_target(stmt)
    operation = cf.tape_operation(value) if value is not None else ""
    if target is None or operation not in ("top", "pop") or len(value.args) != 1 or \
            not isinstance(value.args[0].value, cst.Name):
        return None
    return target, value.args[0].value.value, operation


def _rereads(stmt, held: dict) -> set:
    """The names ``stmt`` sets to the value they hold already, and ``held`` brought up to date.
    Reverse mode reads a taped value with ``x = rt.top(t)`` before its uses and pops it with
    ``x = rt.pop(t)`` after them: the pop gives ``x`` the same value, so an expression
    reading ``x`` may still move past it into a later statement."""
    read = _tape_read(stmt)
    if read is not None:
        target, tape, operation = read
        same = held.get(target) == tape and operation == "pop"
        for name in [n for n, t in held.items() if t == tape or n == target]:
            del held[name]               # a pop changes the tape's top; the target holds another value
        if operation == "top":
            held[target] = tape
        return {target} if same else set()
    mentioned = all_names(stmt)
    for name in [n for n, t in held.items() if t in mentioned or n in mentioned and n in _written_by(stmt)]:
        del held[name]                   # the tape changes (a push), or the name is set to something else
    return set()


def _fuse_block(stmts: list, counts: _NameCounts, params: set) -> list:
    out: list = []
    pending: dict[str, tuple[int, set]] = {}     # temporary -> (its position in out, names it reads)
    broadcasts: dict[str, tuple] = {}            # temporary -> (position, expanded, g, x) of an expand_to above
    shaped_like: dict[str, str] = {}             # name -> the array it has the shape of (itself, at the root)
    assigned: set[str] = set()                   # names this block has assigned so far
    held: dict[str, str] = {}                    # name -> the tape whose top it was read from

    def root(name):
        while name in shaped_like and shaped_like[name] != name:
            name = shaped_like[name]
        return name
    for stmt in stmts:
        if not isinstance(stmt, cst.SimpleStatementLine):
            pending.clear()                       # only straight-line code is fused
            broadcasts.clear()
            held.clear()
            out.append(_fuse_children(stmt, counts, params))
            continue
        value = _value_of(stmt)
        target = _single_target(stmt)
        like = _shape_source(value) if target is not None and counts.stores[target] == 1 else None
        reachable = _reachable_names(value) if value is not None else set()
        for name in sorted(reachable & set(pending)):
            position, _ = pending.pop(name)
            definition = out[position]
            value = _value_of_wrapper(value).visit(_Substitute(name, definition.body[0].value)).value
            out[position] = _Removed(definition.leading_lines)
        reachable = _reachable_names(value) if value is not None else set()
        for name in sorted(reachable & set(broadcasts)):
            position, expanded, g, x = broadcasts[name]
            # x's shape is the expression's (it reads x, or an array of x's shape), so g broadcasts
            # to it; and every read of the full array is here (an expression substituted into this
            # one may have read it: it stays listed until then)
            if root(x) in {root(r) for r in reachable} and _reads_of(value, name) == counts.loads[name]:
                del broadcasts[name]
                value = _value_of_wrapper(value).visit(_SubstituteBroadcast(name, expanded, g)).value
                out[position] = _Removed(out[position].leading_lines)
        if value is not None:
            stmt = _with_value(stmt, value)
        if _writes_in_place(stmt):
            pending.clear()                       # the array written may be a view of any operand
            broadcasts.clear()
        written = _written_by(stmt) - _rereads(stmt, held)
        for name in [n for n, (_, reads) in pending.items() if reads & written]:
            del pending[name]                     # its operands change before any later use
        for name in [n for n, (_, _, g, x) in broadcasts.items() if ({x} | all_names(g)) & written]:
            del broadcasts[name]
        single_use = (target is not None and target not in params and counts.stores[target] == 1
                      and counts.loads[target] == 1 and target not in all_names(value))
        if single_use and _is_elementwise(value):
            pending[target] = (len(out), all_names(value))
        elif (target is not None and target not in params and counts.stores[target] == 1
              and _broadcast_cotangent(value) is not None):
            broadcasts[target] = (len(out), *_broadcast_cotangent(value))   # (read once, checked at its reader)
        # (both written once, the source above in this block: the two shapes are of one pass)
        if like is not None and counts.stores[like] == 1 and like in assigned:
            shaped_like[target] = like
        if target is not None:
            assigned.add(target)
        out.append(stmt)
    return _carry_comments(out)


class _Removed:
    """Where a substituted statement was: its comment lines go to the next statement kept."""

    def __init__(self, leading_lines):
        self.leading_lines = list(leading_lines)


def _carry_comments(stmts: list) -> list:
    kept, carried = [], []
    for stmt in stmts:
        if isinstance(stmt, _Removed):
            carried += stmt.leading_lines
        else:
            if carried:
                stmt = stmt.with_changes(leading_lines=[*carried, *stmt.leading_lines])
                carried = []
            kept.append(stmt)
    return kept


def _value_of_wrapper(value):
    # a transformer must start from a node that can be replaced as a whole
    return cst.Expr(value=value)


def _single_target(stmt) -> str | None:
    small = stmt.body[0] if len(stmt.body) == 1 else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value
    return None


def _fuse_children(stmt, counts, params):
    return cf.map_blocks(stmt, lambda stmts: _fuse_block(stmts, counts, params))


def fuse(core: cf.CoreFunction) -> cf.CoreFunction:
    """A copy of ``core`` (already lowered for numba) with single-use elementwise temporaries substituted."""
    counts = _NameCounts()
    core.node.visit(counts)
    body = _fuse_block(list(core.node.body.body), counts, set(core.params))
    node = core.node.with_changes(body=core.node.body.with_changes(body=body))
    return cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants,
                           functions=core.functions)


# ------------------------------------------------------------ whole-row fusion
# A softmax along the last axis (tr.nn.softmax inlined, in core form, before
# the fusion above) is five adjacent statements, often after a scale of its
# input:
#
#     scores = _t1 / _t4                           (optional)
#     _t5 = nl.max_axis(scores, -1, True)
#     _t6 = scores - _t5
#     shifted = np.exp(_t6)
#     _t7 = nl.sum_axis(shifted, -1, True)
#     _t8 = shifted / _t7                          ->   _t8 = nl.softmax_last_axis(_t1, _t4)
#
# five passes over the array that ``numba_rows`` does in one loop over rows.
# They are replaced only when each temporary is written once and read only
# there (the scaled input by the max and the subtraction alone), so nothing
# else sees the values that the one call no longer makes.
#
# A sum of squares is two adjacent statements, the squares read by the sum alone:
#
#     _t3 = _t2 ** nl.scalar_like(_t2, 2)
#     distances = nl.sum_axis(_t3, 2, False)      ->   distances = nl.sum_of_squares(_t2, 2, False)

def _call_of(value, spelling: str, n_args: int):
    if not (isinstance(value, cst.Call) and dataflow_spelling(value) == spelling
            and len(value.args) == n_args and all(arg.keyword is None for arg in value.args)):
        return None
    return [arg.value for arg in value.args]


def _is_name(node, name=None) -> bool:
    return isinstance(node, cst.Name) and (name is None or node.value == name)


def _last_axis_reduction(value, spelling: str):
    """The array ``nl.<max|sum>_axis(x, -1, True)`` reduces (a name), or None."""
    args = _call_of(value, spelling, 3)
    if args is None or not _is_name(args[0]) or cf.int_literal(args[1]) != -1 or not _is_name(args[2], "True"):
        return None
    return args[0].value


def _binary(value, operator_type):
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, operator_type):
        return value.left, value.right
    return None


def _softmax_at(stmts: list, i: int, used_only_here):
    """(first statement index, input, divisor) when stmts[i:i+5] are a softmax's five, else None."""
    if not all(isinstance(s, cst.SimpleStatementLine) for s in stmts[i:i + 5]):
        return None
    peak, difference, shifted, total = (_single_target(s) for s in stmts[i:i + 4])
    if None in (peak, difference, shifted, total):
        return None
    x = _last_axis_reduction(_value_of(stmts[i]), "nl.max_axis")
    subtracted = _binary(_value_of(stmts[i + 1]), cst.Subtract)
    if x is None or subtracted is None or not (_is_name(subtracted[0], x) and _is_name(subtracted[1], peak)):
        return None
    exp_args = _call_of(_value_of(stmts[i + 2]), "np.exp", 1)
    if exp_args is None or not _is_name(exp_args[0], difference):
        return None
    if _last_axis_reduction(_value_of(stmts[i + 3]), "nl.sum_axis") != shifted:
        return None
    quotient = _binary(_value_of(stmts[i + 4]), cst.Divide)
    if quotient is None or not (_is_name(quotient[0], shifted) and _is_name(quotient[1], total)):
        return None
    if not all(used_only_here(name, reads) for name, reads in
               ((peak, 1), (difference, 1), (shifted, 2), (total, 1))):
        return None
    # a scale just before, read by nothing else, joins the kernel
    before = stmts[i - 1] if i > 0 else None
    if isinstance(before, cst.SimpleStatementLine) and _single_target(before) == x and used_only_here(x, 2):
        scale = _binary(_value_of(before), cst.Divide)
        if scale is not None:
            return i - 1, scale[0], scale[1]
    return i, cst.Name(x), cst.Name("None")


def _squared(value):
    """The name ``value`` squares (``x ** nl.scalar_like(x, 2)``, the core form of ``x ** 2``), or None."""
    power = _binary(value, cst.Power)
    if power is None or not _is_name(power[0]):
        return None
    witness = _call_of(power[1], "nl.scalar_like", 2)
    if witness is None or not _is_name(witness[0], power[0].value):
        return None
    exponent = witness[1]
    if not (cf.int_literal(exponent) == 2 or (isinstance(exponent, cst.Float) and float(exponent.value) == 2.0)):
        return None
    return power[0]


def _sum_of_squares_at(stmts: list, i: int, used_only_here):
    """The call ``nl.sum_of_squares(x, axis, keepdims)`` when stmts[i:i+2] square x and sum the
    squares (read by nothing else) along an axis, else None."""
    if not all(isinstance(s, cst.SimpleStatementLine) for s in stmts[i:i + 2]):
        return None
    squares = _single_target(stmts[i])
    x = _squared(_value_of(stmts[i]))
    total = _call_of(_value_of(stmts[i + 1]), "nl.sum_axis", 3)
    if squares is None or x is None or total is None or not _is_name(total[0], squares) \
            or not used_only_here(squares, 1):
        return None
    return cf.call("nl.sum_of_squares", [x, total[1], total[2]])


def _merged_comments(stmts: list, note: str) -> list:
    """The user-line comments of the statements one call replaces, each once, and a note saying so."""
    lines, seen = [], set()
    for stmt in stmts:
        for line in stmt.leading_lines:
            text = line.comment.value if line.comment is not None else None
            if text is None or text not in seen:
                seen.add(text)
                lines.append(line)
    return lines + [cst.EmptyLine(comment=cst.Comment(note))]


def _softmax_run(stmts: list, i: int, used_only_here):
    """(statements replaced, the call's statement) for a softmax at ``stmts[i]``, else None."""
    found = _softmax_at(stmts, i, used_only_here) if i + 5 <= len(stmts) else None
    if found is None:
        return None
    first, x, divisor = found
    replaced = stmts[first:i + 5]
    passes = "scale, max, exp, sum and division" if len(replaced) == 6 else "max, exp, sum and division"
    note = f"# (one loop over rows: the {passes} of a softmax together)"
    last = _with_value(stmts[i + 4], cf.call("nl.softmax_last_axis", [x, divisor]))
    return i - first, 5, last.with_changes(leading_lines=_merged_comments(replaced, note))


def _sum_of_squares_run(stmts: list, i: int, used_only_here):
    """(statements replaced, the call's statement) for a sum of squares at ``stmts[i]``, else None."""
    summed = _sum_of_squares_at(stmts, i, used_only_here) if i + 2 <= len(stmts) else None
    if summed is None:
        return None
    note = "# (one loop over rows: each square added as it is computed, none stored)"
    last = _with_value(stmts[i + 1], summed)
    return 0, 2, last.with_changes(leading_lines=_merged_comments(stmts[i:i + 2], note))


def _added_run(stmts: list, i: int, used_only_here):
    """(statements replaced, the call's statement) where ``t = op(...)``, read only by ``y = a + t``
    (or ``t + a``) on the next line, has a helper that adds in its own pass (the cpu table's
    ``added_in_one_pass``): ``y = helper(a, ...)``.  Else None."""
    if i + 2 > len(stmts) or not all(isinstance(s, cst.SimpleStatementLine) for s in stmts[i:i + 2]):
        return None
    target, value = _single_target(stmts[i]), _value_of(stmts[i])
    helper = cpu_option(cf.primitive_of(value), "added_in_one_pass") if isinstance(value, cst.Call) else None
    reader = _value_of(stmts[i + 1])
    # (a name rebound in a loop keeps one layout: the lowering wraps its new value in nl.c_ordered)
    layout = _call_of(reader, "nl.c_ordered", 1)
    total = _binary(layout[0] if layout is not None else reader, cst.Add)
    if helper is None or total is None or _single_target(stmts[i + 1]) is None or not used_only_here(target, 1):
        return None
    names = [operand.value if _is_name(operand) else None for operand in total]
    if target not in names or names[0] == names[1] or None in names:
        return None
    base = total[1] if names[0] == target else total[0]
    call = value.with_changes(func=cst.parse_expression(helper), args=[cst.Arg(base), *value.args])
    last = _with_value(stmts[i + 1], cf.call("nl.c_ordered", [call]) if layout is not None else call)
    return 0, 2, last.with_changes(leading_lines=[*stmts[i].leading_lines, *stmts[i + 1].leading_lines])


def _summed_product_run(stmts: list, i: int, used_only_here, given_new_axes: set):
    """(statements replaced, the call's statement) where ``t = a * b``, read only by
    ``u = op(t, like)`` on the next line, has a helper for op of a product (the cpu table's
    ``of_a_product``): ``u = helper(a, b, like)``; or ``helper(a, b, like, then)`` where the line
    after is ``v = op(u, then)``, u read nowhere else.  Only where the last target is one of
    ``given_new_axes``; else None."""
    if i + 2 > len(stmts) or not all(isinstance(s, cst.SimpleStatementLine) for s in stmts[i:i + 2]):
        return None
    product, factors = _single_target(stmts[i]), _binary(_value_of(stmts[i]), cst.Multiply)
    reader = _value_of(stmts[i + 1])
    if product is None or factors is None or not used_only_here(product, 1) or not isinstance(reader, cst.Call):
        return None
    prim = cf.primitive_of(reader)
    helper = cpu_option(prim, "of_a_product")
    args = _call_of(reader, dataflow_spelling(reader), 2)
    if helper is None or args is None or not _is_name(args[0], product) or _single_target(stmts[i + 1]) is None:
        return None
    factors = [f.with_changes(lpar=[], rpar=[]) if getattr(f, "lpar", None) else f for f in factors]   # call arguments
    call, taken = cf.call(helper, [*factors, args[1]]), 2
    summed = _single_target(stmts[i + 1])
    if i + 3 <= len(stmts) and isinstance(stmts[i + 2], cst.SimpleStatementLine) and used_only_here(summed, 1):
        after = _value_of(stmts[i + 2])
        again = _call_of(after, dataflow_spelling(after), 2) if isinstance(after, cst.Call) else None
        if again is not None and cf.primitive_of(after) is prim and _is_name(again[0], summed) \
                and _single_target(stmts[i + 2]) is not None:
            call, taken = cf.call(helper, [*factors, args[1], again[1]]), 3
    if not (_is_name(call.args[-1].value) and call.args[-1].value.value in given_new_axes):
        return None
    note = "# (one loop over rows where the sum is over leading axes: each product added as it is computed)"
    last = _with_value(stmts[i + taken - 1], call)
    return 0, taken, last.with_changes(leading_lines=_merged_comments(stmts[i:i + taken], note))


def _replace_runs(stmts: list, find, used_only_here) -> list:
    """``stmts`` with each run of statements ``find`` recognises replaced by its one statement:
    ``find(stmts, i, used_only_here)`` gives (how many statements before i the run starts, how
    many from i it takes, the statement) or None."""
    out: list = []
    i = 0
    while i < len(stmts):
        stmt = stmts[i]
        if not isinstance(stmt, cst.SimpleStatementLine):
            out.append(cf.map_blocks(stmt, lambda block: _replace_runs(block, find, used_only_here)))
            i += 1
            continue
        found = find(stmts, i, used_only_here)
        if found is None:
            out.append(stmt)
            i += 1
            continue
        before, taken, replacement = found
        del out[len(out) - before:]
        out.append(replacement)
        i += taken
    return out


def _with_runs_replaced(core: cf.CoreFunction, find) -> cf.CoreFunction:
    counts = _NameCounts()
    core.node.visit(counts)
    params = set(core.params)

    def used_only_here(name: str, reads: int) -> bool:
        return name not in params and counts.stores[name] == 1 and counts.loads[name] == reads

    body = _replace_runs(list(core.node.body.body), find, used_only_here)
    node = core.node.with_changes(body=core.node.body.with_changes(body=body))
    return cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants,
                           functions=core.functions)


def fuse_rows(core: cf.CoreFunction) -> cf.CoreFunction:
    """A copy of ``core`` (lowered for numba, before ``fuse``) with each softmax along the last
    axis one ``nl.softmax_last_axis`` call."""
    return _with_runs_replaced(core, _softmax_run)


def fuse_added_cotangents(core: cf.CoreFunction) -> cf.CoreFunction:
    """A copy of ``core`` with each cotangent that has a helper adding it in its own pass, read only
    by the add on the next line, computed by that helper (the cpu table's ``added_in_one_pass``)."""
    return _with_runs_replaced(core, _added_run)


def fuse_summed_products(core: cf.CoreFunction) -> cf.CoreFunction:
    """A copy of ``core`` with each product read only by an operation that has a helper taking the
    product's factors (the cpu table's ``of_a_product``: a cotangent's unbroadcast) computed by
    that helper: the sum is taken as each product is computed, none written out.

    Only where the sum's target was given a leading axis by indexing with None (``c[None, :, :]``,
    the pairwise broadcast of k-means' distances): there the target is known to be summed over
    rows, and the product is as large as the broadcast.  Elsewhere the ranks are unknown here, and
    the helper would be a compile of its own for each gradient (2 s for a bias's, measured) that
    sums nothing."""
    counts = _NameCounts()
    core.node.visit(counts)
    given_new_axes = {node.targets[0].target.value for node in walk.nodes(core.node)
                      if isinstance(node, cst.Assign) and _leading_new_axis(node.value)
                      and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
                      and counts.stores[node.targets[0].target.value] == 1}
    return _with_runs_replaced(
        core, lambda stmts, i, used_only_here: _summed_product_run(stmts, i, used_only_here, given_new_axes))


def _leading_new_axis(value) -> bool:
    """Whether ``value`` is an index whose first part is None (np.newaxis, after normalize)."""
    return (isinstance(value, cst.Subscript) and bool(value.slice)
            and isinstance(value.slice[0].slice, cst.Index) and _is_name(value.slice[0].slice.value, "None"))


def fuse_sums_of_squares(core: cf.CoreFunction) -> cf.CoreFunction:
    """A copy of ``core`` (after ``fuse``, which removes the reads of the squares that only take their
    shape, as a cotangent's expand_to) with each sum of squares one ``nl.sum_of_squares`` call
    (numba_rows: a loop over rows, where the axis is the last)."""
    return _with_runs_replaced(core, _sum_of_squares_run)
