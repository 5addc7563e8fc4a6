"""Tapes pushed together become one tape of tuples: one list push and one pop a step, not one per value.

Reverse mode records each value its backward sweep needs on a tape of its own (numba_lowering makes
each a numba list).  In a loop, the values one iteration records are pushed one after another and
popped together in the backward iteration, and every list push and pop pays for a length check, a
possible resize and a store: 14 tapes of a few numbers each were most of particle's gradient.  This
pass takes the tapes of one block that are pushed once there and read only in one other block, and
makes them one tape whose entry is the tuple of their values::

    _t1_stack.append((_t1_0, _t1_1))            tape.append(((_t1_0, _t1_1), _t16))
    _t16_stack.append(_t16)              ->
    ...                                          tape_entry = rt.pop(tape)
    _t16 = rt.top(_t16_stack)                    _t16 = tape_entry[1]
    _t1 = rt.pop(_t1_stack)                      _t1 = tape_entry[0]
    _t16 = rt.pop(_t16_stack)                    _t16 = tape_entry[1]

A tape is merged only where the move cannot be seen:

- it is made once, at the function's top level, and is used by nothing but one push (of a name or
  a tuple of names, not written again before the merged push) and reads ``x = rt.top(t)`` /
  ``x = rt.pop(t)``, all in one block, its one pop after its tops;
- the merged push is at the last member's push, with nothing between that leaves the block early
  (break, continue, return, raise), and the entry is taken at the first member's read, with nothing
  between it and the last read that leaves early or pushes a member;
- every read comes after the merged push in program order.

Anything else keeps its own tape.  Run last: the passes before it know a tape by its reads.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .. import core_form as cf
from .. import dataflow, resolve, walk


@dataclass
class _Tape:
    name: str
    init: int = -1                     # its ``t = []``'s index in the function's body
    pushes: list = field(default_factory=list)    # (block, index, order, value names)
    reads: list = field(default_factory=list)     # (block, index, order, "top" or "pop")
    other_uses: bool = False


_EXITS = (cst.Break, cst.Continue, cst.Return, cst.Raise)


def _effects(stmt, known: dict) -> tuple:
    """(the names ``stmt`` binds, whether anything in it can leave its block early), worked out once a
    statement (the fence refuses ``del`` and ``:=``, so the names are its assignments' targets)."""
    found = known.get(id(stmt))
    if found is None:
        found = (resolve.local_names(stmt), any(isinstance(node, _EXITS) for node in walk.nodes(stmt)))
        known[id(stmt)] = found
    return found


def _block_key(stmts) -> tuple:
    return tuple(id(stmt) for stmt in stmts)


def _only_expression(stmt):
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        return stmt.body[0]
    return None


def _pushed(stmt):
    """(tape, value) of ``tape.append(value)``, else None."""
    expr = _only_expression(stmt)
    if not (isinstance(expr, cst.Expr) and isinstance(expr.value, cst.Call)):
        return None
    call = expr.value
    if not (isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
            and call.func.attr.value == "append" and len(call.args) == 1 and call.args[0].keyword is None):
        return None
    return call.func.value.value, call.args[0].value


def _read(stmt):
    """(tape, target, "top" or "pop") of ``target = rt.top(tape)`` / ``rt.pop(tape)``, else None."""
    assign = _only_expression(stmt)
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name) and isinstance(assign.value, cst.Call)):
        return None
    kind = cf.tape_operation(assign.value)
    args = assign.value.args
    if kind not in ("top", "pop") or len(args) != 1 or not isinstance(args[0].value, cst.Name):
        return None
    return args[0].value.value, assign.targets[0].target.value, kind


def _value_names(value):
    """The names a pushed value is made of (a name, or a tuple of names), else None."""
    if isinstance(value, cst.Name):
        return {value.value}
    if isinstance(value, cst.Tuple) and all(isinstance(e.value, cst.Name) for e in value.elements):
        return {e.value.value for e in value.elements}
    return None


class _Survey:
    """Where each tape is made, pushed and read, and every block by its statements."""

    def __init__(self, body: list):
        self.tapes: dict = {}
        self.blocks: dict = {}         # block key -> its statements
        self.order = 0
        self.shared = False            # one statement object in two places: the survey's keys fail
        for index, stmt in enumerate(body):
            made = _only_expression(stmt)
            if isinstance(made, cst.Assign) and len(made.targets) == 1 and isinstance(made.targets[0].target, cst.Name) \
                    and isinstance(made.value, cst.List) and not made.value.elements:
                name = made.targets[0].target.value
                if name in self.tapes:
                    self.tapes[name].other_uses = True
                self.tapes[name] = _Tape(name, init=index)
        self.visit(body)

    def visit(self, stmts: list):
        key = _block_key(stmts)
        if key in self.blocks:
            self.shared = True
        self.blocks[key] = stmts
        for index, stmt in enumerate(stmts):
            self.order += 1
            pushed, read = _pushed(stmt), _read(stmt)
            if pushed is not None and pushed[0] in self.tapes:
                self.tapes[pushed[0]].pushes.append((key, index, self.order, _value_names(pushed[1])))
            elif read is not None and read[0] in self.tapes:
                self.tapes[read[0]].reads.append((key, index, self.order, read[2]))
            for inner in cf.blocks(stmt):
                self.visit(list(inner))


def _mergeable(tape: _Tape, uses) -> bool:
    """One push of names, reads in one block with one pop after the tops, and no other use."""
    if tape.other_uses or tape.init < 0 or len(tape.pushes) != 1 or tape.pushes[0][3] is None or not tape.reads:
        return False
    if uses[tape.name] != 2 + len(tape.reads):          # made, pushed, read: nothing else names it
        return False
    read_blocks = {block for block, *_ in tape.reads}
    pops = [read for read in tape.reads if read[3] == "pop"]
    if len(read_blocks) != 1 or len(pops) != 1 or max(read[1] for read in tape.reads) != pops[0][1]:
        return False
    return min(read[2] for read in tape.reads) > tape.pushes[0][2] and read_blocks != {tape.pushes[0][0]}


def _groups(tapes: list, blocks: dict) -> list:
    """Runs of tapes (in push order) of one push block and one read block that can share a tape."""
    by_blocks: dict = {}
    for tape in sorted(tapes, key=lambda t: t.pushes[0][2]):
        by_blocks.setdefault((tape.pushes[0][0], tape.reads[0][0]), []).append(tape)
    known: dict = {}
    groups = []
    for (push_block, _), members in by_blocks.items():
        stmts = blocks[push_block]
        group, names = [], set()
        for tape in members:
            if group and not _joins(group[-1].pushes[0][1], tape.pushes[0][1], names, stmts, known):
                groups.append(group)
                group, names = [], set()
            group.append(tape)
            names |= tape.pushes[0][3]
        groups.append(group)
    return [group for group in groups if len(group) > 1 and _reads_together(group, blocks, known)]


def _joins(end: int, push: int, names: set, stmts: list, known: dict) -> bool:
    """Whether a push at ``push`` can join a group whose pushes end at ``end``: nothing between
    leaves the block early or binds a name the group pushes (the statements before ``end`` were
    checked as the group grew)."""
    for stmt in stmts[end + 1:push]:
        bound, leaves = _effects(stmt, known)
        if leaves or bound & names:
            return False
    return True


def _reads_together(group: list, blocks: dict, known: dict) -> bool:
    """Whether the group's reads, all in one block, have nothing between the first and the last that
    leaves early or pushes a member."""
    reads = [read for tape in group for read in tape.reads]
    stmts = blocks[reads[0][0]]
    first, last = min(read[1] for read in reads), max(read[1] for read in reads)
    member_pushes = {id(blocks[tape.pushes[0][0]][tape.pushes[0][1]]) for tape in group}
    for stmt in stmts[first:last + 1]:
        if _effects(stmt, known)[1]:
            return False
        if not isinstance(stmt, cst.SimpleStatementLine) and any(id(inner) in member_pushes
                                                                 for inner in cf.walk([stmt])):
            return False
    return True


def merge_tapes(core: cf.CoreFunction) -> cf.CoreFunction:
    """A copy of ``core`` whose tapes pushed together in one block and read together in another are
    one tape of tuples (see the module's docstring)."""
    body = list(core.node.body.body)
    survey = _Survey(body)
    if survey.shared:
        return core
    uses = dataflow.name_counts(core.node)
    candidates = [tape for tape in survey.tapes.values() if _mergeable(tape, uses)]
    groups = _groups(candidates, survey.blocks)
    if not groups:
        return core
    edits: dict = {}       # block key -> {index: the statements that replace it}
    made: dict = {}        # index in the body of a member's ``t = []`` -> what replaces it
    for group in groups:
        tape = core.scope.claim("tape")
        entry = core.scope.claim("tape_entry")
        names = ", ".join(member.name for member in group)
        push_block = group[0].pushes[0][0]
        stmts = survey.blocks[push_block]
        values = [_pushed(stmts[member.pushes[0][1]])[1] for member in group]
        for member in group[:-1]:
            edits.setdefault(push_block, {})[member.pushes[0][1]] = []
            made[member.init] = []
        made[group[-1].init] = []
        made[group[0].init] = [cf.assign(tape, cst.List([]), comment=f"# the tapes {names} as one: pushed and popped together")]
        last = stmts[group[-1].pushes[0][1]]
        edits.setdefault(push_block, {})[group[-1].pushes[0][1]] = [last.with_changes(body=[cst.Expr(cst.Call(
            cst.Attribute(cst.Name(tape), cst.Name("append")),
            [cst.Arg(cst.Tuple([cst.Element(v) for v in values]))]))])]
        read_block = group[0].reads[0][0]
        read_stmts = survey.blocks[read_block]
        first = min(read[1] for member in group for read in member.reads)
        for position, member in enumerate(group):
            for _, index, _, _ in member.reads:
                target = _read(read_stmts[index])[1]
                picked = read_stmts[index].with_changes(body=[cst.Assign(
                    [cst.AssignTarget(cst.Name(target))],
                    cst.Subscript(cst.Name(entry), [cst.SubscriptElement(cst.Index(cst.Integer(str(position))))]))])
                edits.setdefault(read_block, {})[index] = [picked]
        taken = edits[read_block][first]
        edits[read_block][first] = [cf.assign(entry, cf.call("rt.pop", [cst.Name(tape)])), *taken]

    def rewritten(stmts: list, top: bool = False) -> list:
        changes = edits.get(_block_key(stmts), {})
        out = []
        for index, stmt in enumerate(stmts):
            if top and index in made:
                out += made[index]
                continue
            if index in changes:
                out += changes[index]
                continue
            out.append(_with_blocks_rewritten(stmt, rewritten))
        return out
    node = core.node.with_changes(body=cf.block(rewritten(body, top=True)))
    return cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants,
                           functions=core.functions)


def _with_blocks_rewritten(stmt, rewritten):
    """``stmt`` with each block nested in it rewritten (by the block's original statements)."""
    if isinstance(stmt, cst.If):
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):
            new = rewritten([orelse])
            orelse = new[0] if len(new) == 1 and isinstance(new[0], cst.If) else cst.Else(cf.block(new))
        elif orelse is not None:
            orelse = orelse.with_changes(body=cf.block(rewritten(list(orelse.body.body))))
        return stmt.with_changes(body=cf.block(rewritten(list(stmt.body.body))), orelse=orelse)
    if isinstance(stmt, (cst.For, cst.While)):
        return stmt.with_changes(body=cf.block(rewritten(list(stmt.body.body))))
    return stmt
