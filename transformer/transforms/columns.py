"""``columns``: all the columns of a Hessian from ONE generated function.

``hessian(f)`` is forward over reverse: ``jvp_grad_f(x, x_dot)`` returns the
Hessian times ``x_dot``.  Called once per basis vector from Python, a
100-entry ``x`` costs 100 calls, each computing ``f`` and its gradient
again.  This step puts the jvp function's body in a loop over the basis
vectors instead, so the whole Hessian is one (compiled) call::

    def columns_jvp_grad_f(x):
        <the statements that do not depend on x_dot: f and its gradient, once>
        # one column per entry of x: x_dot sweeps the basis vectors
        for _k in range(_n):
            _e = np.zeros(_n)
            _e[_k] = 1.0
            x_dot = np.reshape(_e, _shape)
            <the statements that do: the tangent sweep>
            columns[_k] = np.reshape(x_bar_dot, -1)
        return (columns,)

Row ``k`` of each returned array is one tangent output, flattened, for the
``k``-th basis tangent.  A statement leaves the loop only when nothing it
reads or writes changes from one basis vector to the next: not the swept
tangent or a value computed from it, not a name (or a tape, or an array
that may be a view of one) that a statement kept in the loop writes, and
not a name a kept statement reads before the statement writes it.
"""
from __future__ import annotations

import libcst as cst

from .. import core_form as cf
from .. import dataflow
from ..core_form import CoreFunction
from ..exits import structure_exits
from . import register

# calls whose result may share memory with (or be) an argument
# helpers of generated code whose results columns treats as possible views, whatever the registry
# says: it only decides what to copy, so it errs on the side of copying
_HELPER_MODULES = ("rt.", "lax.")
# calls that change their first argument (a tape)


@register("columns", internal=True)
def columns(core: CoreFunction, tangent: int = 1, sizes=(0,)) -> CoreFunction:
    """The jvp function's body looped over the basis vectors of its parameter number ``tangent``.

    The jvp function returns ``(out, dots)``, ``dots`` a tuple of tangent
    outputs; output ``j`` has the size of parameter number ``sizes[j]``.
    The result is one array per output, of shape (size of the swept
    tangent, size of that output).
    """
    structure_exits(core)                              # one return, the last statement
    scope = core.scope
    params = list(core.node.params.params)
    names = [p.name.value for p in params]
    swept, primal = names[tangent], names[tangent - len(names) // 2]
    *body, last = list(core.node.body.body)
    dots, unpack = _tangent_outputs(last.body[0].value, len(sizes), scope)
    hoisted, looped = _split(body, swept)

    n, k, basis, shape = (scope.claim(v) for v in ("_n", "_k", "_e", "_shape"))
    results = [scope.claim("columns") for _ in sizes]
    setup = [_line(f"{n} = np.size({primal})", f"# one column per entry of {primal}: {swept} sweeps the basis vectors"),
             _line(f"{shape} = np.shape({primal})")]
    for result, size_of in zip(results, sizes):
        size = scope.temp()
        setup += [_line(f"{size} = np.size({names[size_of]})"), _line(f"{result} = np.zeros(({n}, {size}))")]
    # a parameter the looped statements rebind or write into starts each column from its value on entry
    restart = []
    for name in names:
        if name == swept:
            continue
        found = [_names(stmt) for stmt in looped]
        if any(name in f.writes or name in f.mutates for f in found):
            entry = scope.claim(f"{name}_on_entry")
            setup.append(_line(f"{entry} = {name}", f"# {name} is rebound below: each column starts from this value"))
            copied = any(name in f.mutates for f in found)
            restart.append(_line(f"{name} = np.copy({entry})" if copied else f"{name} = {entry}"))
    loop_body = [_line(f"{basis} = np.zeros({n})"), _line(f"{basis}[{k}] = 1.0"),
                 _line(f"{swept} = np.reshape({basis}, {shape})")] + restart + looped + unpack
    for result, dot in zip(results, dots):
        flat = scope.temp()
        loop_body += [_line(f"{flat} = np.reshape({dot}, -1)"), _line(f"{result}[{k}] = {flat}")]
    loop = cst.For(target=cst.Name(k), iter=cf.call("range", [cst.Name(n)]), body=cf.block(loop_body))
    returned = cf.statement(cst.Return(cf.tuple_of([cst.Name(r) for r in results])))
    core.node = core.node.with_changes(
        params=core.node.params.with_changes(params=[p for i, p in enumerate(params) if i != tangent]),
        body=cf.block(hoisted + setup + [loop, returned]))
    # the primal output and the gradient itself are no column: drop what computed only them
    core.node = dataflow.remove_dead_code(core.node)
    return core


def _line(code: str, comment: str | None = None) -> cst.SimpleStatementLine:
    return cf.with_comment(cst.parse_statement(code), comment) if comment else cst.parse_statement(code)


def _tangent_outputs(returned, count: int, scope) -> tuple[list[str], list]:
    """The tangent outputs' code in ``return (out, dots)``, and the statements that unpack them."""
    unpack = []
    if isinstance(returned, cst.Tuple) and len(returned.elements) == 2:
        dots = returned.elements[1].value
    else:                                               # a name holding the pair
        dots = cst.Name(scope.temp())
        unpack.append(_line(f"{dots.value} = {cf.code_of(returned)}[1]"))
    if isinstance(dots, cst.Tuple):
        return [cf.code_of(el.value) for el in dots.elements], unpack
    atoms = [scope.temp() for _ in range(count)]
    unpack += [_line(f"{atom} = {cf.code_of(dots)}[{j}]") for j, atom in enumerate(atoms)]
    return atoms, unpack


# ------------------------------------------------------------ what to hoist
class _Names(cst.CSTVisitor):
    """Names a statement reads (over-approximated: every name in it) and writes."""

    def __init__(self):
        self.reads, self.writes, self.mutates = set(), set(), set()

    def visit_Name(self, node):
        self.reads.add(node.value)

    def visit_Attribute(self, node):
        node.value.visit(self)
        return False                                    # np.sin: "sin" is no variable

    def visit_Arg(self, node):
        node.value.visit(self)
        return False                                    # keyword names are no variables

    def visit_AssignTarget(self, node):
        target = node.target
        if isinstance(target, cst.Subscript):
            self.mutates.add(target.value.value)
        elif isinstance(target, cst.Name):
            self.writes.add(target.value)

    def visit_For(self, node):
        if isinstance(node.target, cst.Name):
            self.writes.add(node.target.value)

    def visit_Call(self, node):
        if cf.tape_operation(node) in ("push", "pop") and node.args and isinstance(node.args[0].value, cst.Name):
            self.mutates.add(node.args[0].value.value)


def _names(node) -> _Names:
    found = _Names()
    node.visit(found)
    return found


def _may_alias(call: cst.Call) -> bool:
    """A call whose result may share memory with its first argument: a registered view, a helper,
    or a call the registry does not know (np.moveaxis, written by vmap)."""
    prim = cf.primitive_of(call)
    return prim is None or prim.may_alias or _spelling(call.func).startswith(_HELPER_MODULES)


def _spelling(func) -> str:
    return cf.code_of(func) if isinstance(func, (cst.Name, cst.Attribute)) else ""


def _simple_assignments(stmts):
    """(assignment, None) for every assignment and (None, test) for every branch or loop test, nested too."""
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            small = stmt.body[0]
            if isinstance(small, cst.Assign):
                yield small, None
        elif isinstance(stmt, (cst.If, cst.For, cst.While)):
            yield None, stmt.iter if isinstance(stmt, cst.For) else stmt.test
            for block in cf.blocks(stmt):
                yield from _simple_assignments(block)


def _aliases(stmts) -> dict[str, set[str]]:
    """For each name, the names that may share memory with it (a view, or the same object)."""
    groups: dict[str, set[str]] = {}

    def join(a, b):
        merged = groups.get(a, {a}) | groups.get(b, {b})
        for name in merged:
            groups[name] = merged

    for assign, _ in _simple_assignments(stmts):
        if assign is None or not isinstance(assign.targets[0].target, cst.Name):
            continue
        target, value = assign.targets[0].target.value, assign.value
        if isinstance(value, cst.Name):
            join(target, value.value)
        elif isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name):
            join(target, value.value.value)
        elif isinstance(value, cst.Call) and _may_alias(value):
            # a view (or the helper's result) is of the first argument; a tape holds what is pushed
            shared = value.args if cf.tape_operation(value) == "push" else value.args[:1]
            for arg in shared:
                if isinstance(arg.value, cst.Name):
                    join(target, arg.value.value)
    return groups


def _variant(stmts, swept: str, aliases) -> set[str]:
    """Names whose value may change with the basis vector (a fixpoint: loops feed back)."""
    variant = {swept}
    changed = True
    while changed:
        changed = False
        control = set()        # tests of branches and loops found variant so far, by identity
        for _, test in _simple_assignments(stmts):
            if test is not None and _names(test).reads & variant:
                control.add(id(test))
        for stmt in stmts:
            for name in _variant_writes(stmt, variant, aliases, control):
                if name not in variant:
                    variant.add(name)
                    changed = True
    return variant


def _variant_writes(stmt, variant, aliases, control, under_variant=False) -> set[str]:
    """Names ``stmt`` writes with a value that may vary."""
    out: set[str] = set()
    if isinstance(stmt, cst.SimpleStatementLine):
        found = _names(stmt)
        if under_variant or found.reads & variant:
            out |= found.writes
            for name in found.mutates:
                out |= aliases.get(name, {name})
        return out
    if isinstance(stmt, (cst.If, cst.While)):
        under_variant = under_variant or id(stmt.test) in control
    elif isinstance(stmt, cst.For):
        under_variant = under_variant or id(stmt.iter) in control
        if under_variant and isinstance(stmt.target, cst.Name):
            out.add(stmt.target.value)
    for block in cf.blocks(stmt):
        for child in block:
            out |= _variant_writes(child, variant, aliases, control, under_variant)
    return out


def _split(body, swept: str) -> tuple[list, list]:
    """(statements to run once before the loop, statements to run for every basis vector)."""
    aliases = _aliases(body)
    variant = _variant(body, swept, aliases)
    found = [_names(stmt) for stmt in body]

    def changed_by(f):                                   # every name a statement may change
        names = set(f.writes)
        for name in f.mutates:
            names |= aliases.get(name, {name})
        return names

    hoist = [not ((f.reads | changed_by(f)) & variant) and not _returns(stmt) for stmt, f in zip(body, found)]
    changed = True
    while changed:
        changed = False
        kept = [i for i, h in enumerate(hoist) if not h]
        changed_in_loop = set().union(*(changed_by(found[i]) for i in kept)) if kept else set()
        for i, f in enumerate(found):
            if not hoist[i]:
                continue
            read_before = any(changed_by(f) & found[j].reads for j in kept if j < i)
            if (f.reads | changed_by(f)) & changed_in_loop or read_before:
                hoist[i] = False
                changed = True
    return [s for s, h in zip(body, hoist) if h], [s for s, h in zip(body, hoist) if not h]


def _returns(stmt) -> bool:
    return any(isinstance(node, cst.Return) for node in _walk(stmt))


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)
