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
from .. import dataflow, primitives, rules
from ..transforms.shapes import SCALAR, Shapes

# The modules whose functions generated modules call as ``nl.<name>``, each with its numba overload.
# The backends that compile import them all (``load_helpers``) before numba compiles anything, and
# generated code finds a helper through ``__getattr__`` below, as the function of that name one of
# these modules defines: this pass itself imports no numba, so writing a cpu module (a tiered first
# call, transformer/tiers.py) does not wait for numba to load.
_HELPER_MODULES = ("numba_arrays", "numba_reductions", "numba_indexing", "numba_rows", "numba_sorting")


def load_helpers() -> None:
    """Import every helper module, registering their overloads before numba compiles a module that
    calls them (an overload registered while numba is typing a function is not seen by that typing)."""
    for module_name in _HELPER_MODULES:
        importlib.import_module(f"{__package__}.{module_name}")


def __getattr__(name: str):
    # (no helper's name starts with "_": the import system asks for __path__ and its kin, which must
    # not load numba)
    for module_name in _HELPER_MODULES if not name.startswith("_") else ():
        module = importlib.import_module(f"{__package__}.{module_name}")
        helper = getattr(module, name, None)
        # a function the module defines (not one it imports: np, overload...)
        if callable(helper) and getattr(helper, "__module__", None) == module.__name__:
            globals()[name] = helper          # looked up once
            return helper
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _helper(name: str, *atoms) -> cst.Call:
    return cf.call(f"nl.{name}", atoms)


def _is_none(node) -> bool:
    return node is None or (isinstance(node, cst.Name) and node.value == "None")


# ------------------------------------------------------------------ lowering
# What numba cannot compile as written is in each primitive's registry entry (``numba=Lowering(...)``):
# a call of one of the helpers above, or one of these rewrites, by name.

def _flip_each_axis(prim, args):
    # numba has np.flip(x) (every axis) but no axis=; flips along different
    # axes commute, so a literal tuple of axes becomes nested calls
    axis = args.get("axis")
    if axis is None:
        return None
    if _is_none(axis):          # axis=None: every axis, which numba's np.flip(x) does without the keyword
        return cf.call(prim.spelling, [args["x"]])
    axes = [el.value for el in axis.elements] if isinstance(axis, cst.Tuple) else [axis]
    result = args["x"]
    for each in axes:
        result = _helper("flip_axis", result, each)
    return result


def _join_flattened(prim, args):
    # numba's np.concatenate has no axis=None (it fails with a bare AssertionError): join the flattened arrays
    if not _is_none(args.get("axis", cst.Integer("0"))) or not isinstance(args["arrays"], cst.Tuple):
        return None
    flat = [cst.Element(cf.call("np.ravel", [el.value])) for el in args["arrays"].elements]
    return cf.call(prim.spelling, [cst.Tuple(flat)])


_REWRITES = {"flip_each_axis": _flip_each_axis, "join_flattened": _join_flattened}


def _lowered(prim, lowering, args):
    """The helper call ``lowering`` (primitives.Lowering) makes of a call with ``args``, or None where
    numba compiles the call as written."""
    if lowering.rewrite:
        return _REWRITES[lowering.rewrite](prim, args)
    if lowering.when_written and not any(k in args for k in lowering.when_written):
        return None
    if lowering.when_given and all(_is_none(args.get(k)) for k in lowering.when_given):
        return None
    if not lowering.arguments:
        return _helper(lowering.helper, *(args[p] for p in prim.params if p in args))
    atoms = []
    for spec in lowering.arguments:
        name, _, default = spec.partition("=")
        atoms.append(args[name] if name in args else cst.parse_expression(default))
    return _helper(lowering.helper, *atoms)


def _is_int_literal(node) -> bool:
    return isinstance(node, cst.Integer) or (isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
                                             and isinstance(node.expression, cst.Integer))


def _is_literal_exponent(node) -> bool:
    """A number written in the code: a literal, or its dtype witness ``nl.scalar_like(x, 2)``."""
    if _is_number_literal(node):
        return True
    return isinstance(node, cst.Call) and cf.code_of(node.func) == "nl.scalar_like" and len(node.args) == 2 \
        and _is_number_literal(node.args[1].value)


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
        if prim.scalars_follow_arrays:
            # numba types a float literal as float64 where NumPy (NEP 50) takes the array's precision:
            # float32 * 2.0 stays float32 in NumPy (np.where's condition is not among these operands)
            positions = [i for i, arg in enumerate(updated.args) if arg.keyword is None
                         and i < len(prim.params) and prim.params[i] in prim.scalars_follow_arrays]
            weak = dict(zip(positions, _weak_literals([updated.args[i].value for i in positions])))
            updated = updated.with_changes(args=[arg.with_changes(value=weak.get(i, arg.value))
                                                 for i, arg in enumerate(updated.args)])
        lowering = prim.lowering.get("numba")
        if lowering is None:
            return updated
        return _lowered(prim, lowering, cf.arguments(updated, prim)) or updated

    def leave_BinaryOperation(self, original, updated):
        if isinstance(updated.operator, cst.MatrixMultiply):
            # numba's @ is 2-D and floats only; nl.matmul also batches and multiplies integers
            return _helper("matmul", updated.left, updated.right)
        left, right = _weak_literals([updated.left, updated.right])
        if isinstance(updated.operator, cst.Power) and (_is_int_literal(updated.left) or (
                _is_int_literal(updated.right) and isinstance(updated.right, cst.UnaryOperation))
                or not _is_literal_exponent(updated.right)):
            # an integer literal's power, a negative integer power or one held in a name (2 ** k,
            # k ** -1, i ** j): numba's integer power of a negative exponent is 0, which nl.power
            # refuses as NumPy does (x ** 2 and x ** 0.5 stay operators, which numba's array
            # expressions and the fusions read)
            return _helper("power", left, right)
        return updated.with_changes(left=left, right=right)


def lower(core: cf.CoreFunction) -> cf.CoreFunction:
    """A copy of ``core`` whose calls numba can compile."""
    node = core.node.visit(_Lower(Shapes(core)))
    return cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants)


class _LowerTape(cst.CSTTransformer):
    """Tapes as numba's own lists (``[]``: see numba_runtime), and variables of one layout.

    numba types a list from its first entry: a transposed (F-ordered) first entry would refuse the
    C-ordered ones pushed after it.  numba types a variable from all of its values, and one holding
    both F- and C-ordered arrays is an array of "any" layout, which numba's array expressions
    cannot allocate.  F-ordered arrays come from transposes and from F-ordered arguments: a
    rebound parameter is made C-ordered on entry (``nl.c_ordered``, free for a C-ordered array),
    and in code that transposes, so is what a tape holds and every value of a rebound variable.
    A variable written in place is left alone, since a copy would not see the writes."""

    def __init__(self, rebound: set, transposes: bool):
        super().__init__()
        self.rebound = rebound
        self.transposes = transposes

    def leave_Assign(self, original, updated):
        value = updated.value
        if _is_call(value, "rt.stack"):
            return updated.with_changes(value=cst.List([]))
        target = updated.targets[0].target
        if self.transposes and isinstance(target, cst.Name) and target.value in self.rebound and \
                not cf.tape_operation(value):
            return updated.with_changes(value=_helper("c_ordered", value))
        return updated

    def leave_FunctionDef(self, original, updated):
        entry = [cf.assign(p.name.value, _helper("c_ordered", p.name)) for p in updated.params.params
                 if p.name.value in self.rebound]
        return updated.with_changes(body=cf.block(entry + list(updated.body.body))) if entry else updated

    def leave_SimpleStatementLine(self, original, updated):
        # ``s = rt.push(s, v)`` -> ``s.append(v)``: numba infers an empty
        # list's item type only from a method call on the list.  (``t = rt.push(s, v)``, a
        # cotangent tape's push in reverse over reverse, is ``s.append(v)`` then ``t = s``.)
        if len(updated.body) != 1 or not isinstance(updated.body[0], cst.Assign):
            return updated
        assign = updated.body[0]
        if cf.tape_operation(assign.value) != "push":
            return updated
        tape, value = (arg.value for arg in assign.value.args)
        target = assign.targets[0].target
        same = isinstance(target, cst.Name) and isinstance(tape, cst.Name) and target.value == tape.value
        if not _is_call(assign.value, "rt.push"):     # another change of the tape in place (its top entry)
            return updated.with_changes(body=[cst.Expr(assign.value)]) if same else updated
        entry = _helper("c_ordered", value) if self.transposes else value
        append = updated.with_changes(body=[cst.Expr(cst.Call(cst.Attribute(tape, cst.Name("append")),
                                                              [cst.Arg(entry)]))])
        if same:
            return append
        return cst.FlattenSentinel([append, cst.SimpleStatementLine([assign.with_changes(value=tape)])])


def _calls(value) -> list:
    """The calls in a right-hand side, nested ones included."""
    found = []

    class _Finder(cst.CSTVisitor):
        def visit_Call(self, node):
            found.append(node)
    if value is not None:
        value.visit(_Finder())
    return found


def _is_call(node, spelling: str) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and isinstance(node.func.value, cst.Name)
            and f"{node.func.value.value}.{node.func.attr.value}" == spelling)


def lower_tapes(core: cf.CoreFunction, layouts: bool = True) -> cf.CoreFunction:
    """A copy of ``core`` whose tapes are numba lists (``[]``, typed by their appends),
    with its arrays kept in one layout where ``layouts`` (see _LowerTape; code of numbers alone,
    as cpu_lanes writes, has none to keep)."""
    assignments = list(dataflow.walk(core.node.body.body))
    rebinds = dataflow.write_counts(core.node, include_setitem=False).count
    writes = dataflow.write_counts(core.node).count
    rebound = {name for name, count in rebinds.items() if count > 1 and layouts and writes[name] == count}
    transposes = layouts and any(_is_call(node, "nl.transpose") for a in assignments for node in _calls(a.value))
    node = core.node.visit(_LowerTape(rebound, transposes))
    return cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants)


class _SliceWrites(cst.CSTTransformer):
    def leave_SimpleStatementLine(self, original, updated):
        small = updated.body[0] if len(updated.body) == 1 else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
            return updated
        target = small.targets[0].target
        if not (isinstance(target, cst.Subscript) and _is_basic_slicing(target)):
            return updated
        return updated.with_changes(body=[cst.Expr(_helper("assign_into", target, small.value))])


def _is_basic_slicing(subscript: cst.Subscript) -> bool:
    """``x[1:]``, ``x[:, 2:4]``, ``x[0, ::2]``: slices and integer literals, at least one slice (the
    target is a view of x)."""
    parts = [element.slice for element in subscript.slice]
    return any(isinstance(part, cst.Slice) for part in parts) and all(
        isinstance(part, cst.Slice) or (isinstance(part, cst.Index) and cf.int_literal(part.value) is not None)
        for part in parts)


def slice_writes(core: cf.CoreFunction) -> cf.CoreFunction:
    """A copy of ``core`` whose slice writes ``x[1:] = v`` are ``nl.assign_into(x[1:], v)`` (numba's
    own slice write is 2-3x a loop over the elements: numba_indexing), and whose sums into a slice
    (``s = x[1:]; t = s + g; x[1:] = t``, reverse mode's cotangent of a slice read) are
    ``nl.add_into(x[1:], g)``.  Run last: the passes before it know a write by its subscript target."""
    counts = dataflow.name_counts(core.node)
    core.scope.taken.update(counts)          # the loops' view and index names are new to the function
    node = core.node.with_changes(body=cf.block(_sums_into_slices(list(core.node.body.body), counts, core.scope)))
    node = node.with_changes(body=cf.block(_loops_into_slices(list(node.body.body), counts, core.scope)))
    node = node.visit(_SliceWrites())
    return cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants,
                           functions=core.functions)


def _rewrite_runs(stmts, width: int, rewritten) -> list:
    """``stmts``, and the blocks inside them, with each run of ``width`` statements for which
    ``rewritten(run)`` gives a list of statements replaced by that list."""
    stmts = [cf.map_blocks(stmt, lambda block: _rewrite_runs(block, width, rewritten)) for stmt in stmts]
    out = []
    k = 0
    while k < len(stmts):
        new = rewritten(stmts[k:k + width]) if k + width <= len(stmts) else None
        if new is None:
            out.append(stmts[k])
            k += 1
        else:
            out += new
            k += width
    return out


def _sums_into_slices(stmts, counts, scope) -> list:
    """``s = x[1:]; t = s + g; x[1:] = t`` -> ``nl.add_into(x[1:], g)`` where ``s`` and ``t`` are
    named nowhere else: the sum is made in the slice itself, with no array for ``t``.  Where ``g``
    is arithmetic fusion made (``g_out * (1.0 - y * y)``, a cotangent of tanh), it is added element
    by element, as ``_loops_into_slices`` writes, where every operand fits the view; else it is
    computed whole before the call."""
    def rewritten(three):
        added = _sum_into_slice(three, counts)
        if added is None:
            part = _sum_into_part(three, counts)
            if part is None:
                return None
            return [three[0].with_changes(body=[cst.Expr(_helper("add_into_part", *part))])]
        target, value = added
        whole = three[0].with_changes(body=[cst.Expr(_helper("add_into", target, value))])
        if not (isinstance(value, (cst.BinaryOperation, cst.UnaryOperation)) and _is_arithmetic(value)
                and _arithmetic_names(value)):
            return [whole]
        view = scope.claim("view")
        return [cf.assign(view, target).with_changes(leading_lines=three[0].leading_lines),
                _element_by_element(view, value, "+=", cf.statement(cst.Expr(_helper("add_into", cst.Name(view), value))),
                                    scope)]
    return _rewrite_runs(stmts, 3, rewritten)


def _element_by_element(view: str, value, update: str, whole, scope):
    """``for i in range(len(view)): view[i] <update> value's element i`` where each operand of the
    arithmetic ``value`` fits the view (``nl.fits``: a number, or a 1-d array of its shape apart from
    its memory), ``whole`` otherwise."""
    i = scope.claim("i")
    operands = sorted(_arithmetic_names(value))
    test = _helper("fits", cst.Name(view), cst.Name(operands[0]))
    for name in operands[1:]:
        test = cst.BooleanOperation(test, cst.And(), _helper("fits", cst.Name(view), cst.Name(name)))
    element = value.visit(_AtElement(set(operands), i))
    operator = cst.AddAssign() if update == "+=" else None
    place = cst.Subscript(cst.Name(view), [cst.SubscriptElement(cst.Index(cst.Name(i)))])
    write = (cst.SimpleStatementLine([cst.AugAssign(target=place, operator=operator, value=element)])
             if operator else cf.assign(place, element))
    loop = cst.For(target=cst.Name(i), iter=cf.call("range", [cf.call("len", [cst.Name(view)])]),
                   body=cf.block([write]))
    return cf.with_comment(cst.If(test=test, body=cf.block([loop]), orelse=cst.Else(cf.block([whole]))),
                           "# element by element where each operand fits the view: no array for the result")


def _sum_into_part(three, counts):
    """(the array, the index, what is added) where ``three`` is ``s = x[i]; t = s + g; x[i] = t`` with
    ``i`` one name (a row of x, or an entry: ``nl.add_into_part`` tells when numba types it), ``s``
    and ``t`` named nowhere else, else None."""
    if not all(isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 for s in three):
        return None
    view, total, write = (s.body[0] for s in three)
    if not (isinstance(view, cst.Assign) and isinstance(total, cst.Assign) and isinstance(write, cst.Assign)
            and isinstance(view.value, cst.Subscript) and isinstance(view.value.value, cst.Name)
            and len(view.value.slice) == 1 and isinstance(view.value.slice[0].slice, cst.Index)
            and isinstance(view.value.slice[0].slice.value, cst.Name)):
        return None
    view_name, total_name, target = view.targets[0].target, total.targets[0].target, write.targets[0].target
    if not (isinstance(view_name, cst.Name) and isinstance(total_name, cst.Name)
            and isinstance(target, cst.Subscript) and cf.code_of(target) == cf.code_of(view.value)
            and isinstance(write.value, cst.Name) and write.value.value == total_name.value
            and isinstance(total.value, cst.BinaryOperation) and isinstance(total.value.operator, cst.Add)
            and counts[view_name.value] == 2 and counts[total_name.value] == 2):
        return None
    left, right = total.value.left, total.value.right
    added = right if isinstance(left, cst.Name) and left.value == view_name.value else None
    array, index = view.value.value, view.value.slice[0].slice.value
    if added is None or {view_name.value, array.value, index.value} & dataflow.all_names(added):
        return None
    return array, index, added


def _sum_into_slice(three, counts):
    """(the slice, what is added) where ``three`` is a sum into a slice, else None."""
    if not all(isinstance(s, cst.SimpleStatementLine) for s in three):
        return None
    view, total, write = (s.body[0] if len(s.body) == 1 else None for s in three)
    if not (isinstance(view, cst.Assign) and isinstance(total, cst.Assign) and isinstance(write, cst.Assign)):
        return None
    view_name, total_name = view.targets[0].target, total.targets[0].target
    target = write.targets[0].target
    if not (isinstance(view_name, cst.Name) and isinstance(total_name, cst.Name)
            and isinstance(view.value, cst.Subscript) and isinstance(view.value.value, cst.Name)
            and _is_basic_slicing(view.value) and isinstance(target, cst.Subscript)
            and cf.code_of(target) == cf.code_of(view.value)
            and isinstance(write.value, cst.Name) and write.value.value == total_name.value
            and isinstance(total.value, cst.BinaryOperation) and isinstance(total.value.operator, cst.Add)
            and counts[view_name.value] == 2 and counts[total_name.value] == 2):
        return None
    left, right = total.value.left, total.value.right
    added = right if isinstance(left, cst.Name) and left.value == view_name.value else \
        left if isinstance(right, cst.Name) and right.value == view_name.value else None
    if added is None or view_name.value in dataflow.all_names(added):
        return None
    return target, added


def _loops_into_slices(stmts, counts, scope) -> list:
    """``t = a * b; x[1:] = t`` (``t`` named nowhere else, the expression arithmetic on names and
    numbers) -> a loop writing each element of the view ``x[1:]`` from the operands' elements,
    where at run time every operand is a number or a 1-d array of the view's shape apart from its
    memory (``nl.fits``); ``nl.assign_into`` of the whole expression otherwise.  The loop makes no
    array for ``t``: the RK4 right-hand side ``z[1:] = x[1:] * y[:-1]`` took 40% less time so."""
    def rewritten(two):
        found = _write_of_arithmetic(two, counts)
        if found is None:
            return None
        target, value = found
        view = scope.claim("view")
        whole = cst.SimpleStatementLine([cst.Expr(_helper("assign_into", cst.Name(view), value))])
        return [cf.assign(view, target).with_changes(leading_lines=[*two[0].leading_lines, *two[1].leading_lines]),
                _element_by_element(view, value, "=", whole, scope)]
    return _rewrite_runs(stmts, 2, rewritten)


def _write_of_arithmetic(two, counts):
    """(the slice written, the expression) where ``two`` is ``t = <arithmetic>; x[...] = t``."""
    if not all(isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 for s in two):
        return None
    made, write = two[0].body[0], two[1].body[0]
    if not (isinstance(made, cst.Assign) and isinstance(write, cst.Assign)
            and isinstance(made.targets[0].target, cst.Name) and isinstance(write.value, cst.Name)
            and write.value.value == made.targets[0].target.value and counts[write.value.value] == 2):
        return None
    target = write.targets[0].target
    if not (isinstance(target, cst.Subscript) and _is_basic_slicing(target)
            and isinstance(made.value, (cst.BinaryOperation, cst.UnaryOperation))
            and _is_arithmetic(made.value) and _arithmetic_names(made.value)):
        return None
    return target, made.value


# (operators whose numba scalar form gives each element NumPy's array form gives; // and % of
# negative or zero operands, comparisons and calls are left to the whole expression's write)
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)


def _is_arithmetic(value) -> bool:
    """Operators on names, number literals and ``nl.scalar_like`` (what an element of it is the
    same expression of the elements)."""
    if isinstance(value, (cst.Name, cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.BinaryOperation):
        return isinstance(value.operator, _ARITHMETIC) and _is_arithmetic(value.left) and _is_arithmetic(value.right)
    if isinstance(value, cst.UnaryOperation):
        return isinstance(value.operator, (cst.Minus, cst.Plus)) and _is_arithmetic(value.expression)
    return _is_scalar_like(value)


def _is_scalar_like(value) -> bool:
    return isinstance(value, cst.Call) and cf.code_of(value.func) == "nl.scalar_like" \
        and all(isinstance(arg.value, (cst.Name, cst.Integer, cst.Float)) for arg in value.args)


def _arithmetic_names(value) -> set[str]:
    """The names an arithmetic expression reads as operands (not those inside nl.scalar_like)."""
    if isinstance(value, cst.Name):
        return {value.value}
    if isinstance(value, cst.BinaryOperation):
        return _arithmetic_names(value.left) | _arithmetic_names(value.right)
    if isinstance(value, cst.UnaryOperation):
        return _arithmetic_names(value.expression)
    return set()


class _AtElement(cst.CSTTransformer):
    """Each operand name ``a`` as ``nl.at(a, i)``; a literal's dtype witness stays whole."""

    def __init__(self, names, i):
        self.names, self.i = names, i

    def visit_Call(self, node):
        return False                    # nl.scalar_like(a, 0.5): a's dtype, not an element

    def leave_Name(self, original, updated):
        if updated.value in self.names:
            return _helper("at", updated, cst.Name(self.i))
        return updated


def cpu_option(prim, option: str):
    """The value of ``option`` that the cpu table (templates/cpu.py) gives ``prim``: None where it
    gives none, or ``prim`` is None (no primitive)."""
    found = None if prim is None else rules.options("cpu", prim.name)
    return None if found is None else found.get(option)


class _VectorMath(cst.CSTTransformer):
    def leave_Call(self, original, updated):
        prim = primitives.BY_SPELLING.get(cf.code_of(updated.func))
        helper = cpu_option(prim, "vector_math")
        if helper is None:
            return updated
        in_place = cpu_option(prim, "vector_math_of_temporary")
        if in_place is not None and len(updated.args) == 1 and _is_new_array_expression(updated.args[0].value):
            helper = in_place
        return updated.with_changes(func=cf.callee(helper))


def _is_new_array_expression(value) -> bool:
    """Arithmetic whose value numba computes into an array made for it (where it is an array): no
    name but the expression's own result holds that array."""
    return isinstance(value, (cst.BinaryOperation, cst.UnaryOperation))


def vector_math(core: cf.CoreFunction) -> cf.CoreFunction:
    """A copy of ``core`` whose calls of exp, expm1, tanh, sin, cos and log go to ``numba_vecmath``
    (their ``vector_math`` option in the cpu table, templates/cpu.py): numba compiles NumPy's to one
    libm call per element, which no loop around it can vectorise.  Run after fusion, which knows
    these functions by their NumPy names."""
    node = core.node.visit(_VectorMath())
    return cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants,
                           functions=core.functions)
