"""A helper's early returns made one exit, so the helper can be inlined where it is called.

Transformed code inlines the helpers it calls (normalize.inline_bound): the helper's body is
written into its caller, and its result is what its last ``return`` gives.  A ``return`` in the
middle of the body would return from the caller instead.  ``single_exit`` rewrites such a body
into one that returns once, at its end, computing the same result:

    def clipped(x):                         def clipped(x):
        if x > 1.0:                             returned = False
            return 1.0                          if x > 1.0:
        for k in range(3):                          result = 1.0
            if x < k:                               returned = True
                return x * k                    if not returned:
            x = x * x                               for k in range(3):
        return x                                        if x < k:
                                                            result = x * k
                                                            returned = True
                                                            break
                                                        x = x * x
                                                    if not returned:
                                                        result = x
                                                        returned = True
                                                return result

A ``return`` sets the result and the flag, and leaves the loops around it (``break``, and an
``if returned: break`` after each inner loop); what follows a statement that may have returned runs
under ``if not returned``.  Every transform already handles flags, breaks and branches, so the
helper's exits are differentiated, batched and compiled as any branch is.
"""
from __future__ import annotations

import libcst as cst

from . import core_form as cf
from . import walk
from .source import UserFunction


def needs_single_exit(func: cst.FunctionDef) -> bool:
    """Whether ``func`` returns anywhere but at the end of its body."""
    body = func.body.body
    last = body[-1].body[-1] if body and isinstance(body[-1], cst.SimpleStatementLine) else None
    return any(isinstance(node, cst.Return) and node is not last for node in walk.nodes(func.body))


def single_exit(callee: UserFunction) -> tuple[list, set]:
    """The body of ``callee`` rewritten to return once, at its end, and the names it adds (a result
    and a flag, named apart from every name the helper reads or writes).  The rewritten statements
    stand for the user's lines they come from, for comments and errors (``ParsedSource.stand_in``).
    Made once per helper: the parse is shared, and so is its rewrite."""
    cached = callee.parsed.derived.get("single_exit")
    if cached is not None:
        return cached
    used = {node.value for node in walk.nodes(callee.node) if isinstance(node, cst.Name)}
    result, flag = _fresh("result", used), _fresh("returned", used)
    bare = all(node.value is None for node in walk.nodes(callee.node.body) if isinstance(node, cst.Return))
    writer = _SingleExit(callee, result, flag)
    body, _ = writer.block(list(callee.node.body.body), in_loop=False)
    # the flag is set where the helper starts, the result returned where it ends: its def line
    start = writer.stand_in(cf.assign(flag, cst.Name("False")), callee.node)
    end = writer.stand_in(cf.statement(cst.Return(None if bare else cst.Name(result))), callee.node)
    made = ([start, *body, end], {result, flag})
    callee.parsed.derived["single_exit"] = made
    return made


def _fresh(base: str, used: set) -> str:
    name, k = base, 1
    while name in used:
        name, k = f"{base}_{k}", k + 1
    return name


class _SingleExit:
    def __init__(self, callee: UserFunction, result: str, flag: str):
        self.callee, self.result, self.flag = callee, result, flag

    def stand_in(self, made, original):
        """``made`` standing for the user's statement ``original`` (its line, in comments and errors)."""
        self.callee.parsed.stand_in(made, original)
        return made

    def block(self, stmts: list, in_loop: bool) -> tuple[list, bool]:
        """The statements rewritten, and whether they may return."""
        out, any_return = [], False
        for k, stmt in enumerate(stmts):
            written, may_return = self.statement(stmt, in_loop)
            out += written
            any_return |= may_return
            rest = stmts[k + 1:]
            if may_return and rest:
                if _always_returns(stmt):       # what follows a return never runs
                    return out, True
                guarded, _ = self.block(rest, in_loop)
                guard = cst.If(test=cst.UnaryOperation(cst.Not(), cst.Name(self.flag)), body=cf.block(guarded))
                out.append(self.stand_in(guard, stmt))
                return out, True
        return out, any_return

    def statement(self, stmt, in_loop: bool) -> tuple[list, bool]:
        """The statement rewritten, and whether it may return."""
        if isinstance(stmt, cst.SimpleStatementLine):
            if not any(isinstance(small, cst.Return) for small in stmt.body):
                return [stmt], False
            smalls = []
            for small in stmt.body:
                if isinstance(small, cst.Return):
                    if small.value is not None:
                        smalls.append(cst.Assign([cst.AssignTarget(cst.Name(self.result))], small.value))
                    smalls.append(cst.Assign([cst.AssignTarget(cst.Name(self.flag))], cst.Name("True")))
                    if in_loop:
                        smalls.append(cst.Break())
                    break                       # (anything after a return on its line never runs)
                smalls.append(small)
            return [self.stand_in(stmt.with_changes(body=smalls), stmt)], True
        if isinstance(stmt, cst.If):
            return self._if(stmt, in_loop)
        if isinstance(stmt, (cst.For, cst.While)):
            body, body_returns = self.block(_statements(stmt.body), in_loop=True)
            orelse, else_returns = stmt.orelse, False
            if orelse is not None:              # a loop's else belongs to the block around the loop
                else_body, else_returns = self.block(_statements(orelse.body), in_loop)
                orelse = orelse.with_changes(body=cf.block(else_body))
            if not (body_returns or else_returns):
                return [stmt], False
            out = [self.stand_in(stmt.with_changes(body=cf.block(body), orelse=orelse), stmt)]
            if body_returns and in_loop:        # leave the loop around this one too
                leave = cst.If(test=cst.Name(self.flag), body=cf.block([cf.statement(cst.Break())]))
                out.append(self.stand_in(leave, stmt))
            return out, True
        return [stmt], False

    def _if(self, stmt: cst.If, in_loop: bool) -> tuple[list, bool]:
        body, may_return = self.block(_statements(stmt.body), in_loop)
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):          # elif
            written, elif_returns = self._if(orelse, in_loop)
            may_return |= elif_returns
            orelse = written[0]
        elif isinstance(orelse, cst.Else):
            else_body, else_returns = self.block(_statements(orelse.body), in_loop)
            may_return |= else_returns
            orelse = orelse.with_changes(body=cf.block(else_body))
        if not may_return:
            return [stmt], False
        return [self.stand_in(stmt.with_changes(body=cf.block(body), orelse=orelse), stmt)], True


def _statements(suite) -> list:
    return list(suite.body)     # (a body on its header's line was made a block when parsed)


def _always_returns(stmt) -> bool:
    """A statement after which nothing in its block runs: a return, or an if/else returning in every
    branch."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return any(isinstance(small, cst.Return) for small in stmt.body)
    if isinstance(stmt, cst.If) and stmt.orelse is not None:
        ends = any(_always_returns(s) for s in _statements(stmt.body))
        if isinstance(stmt.orelse, cst.If):         # elif
            return ends and _always_returns(stmt.orelse)
        return ends and any(_always_returns(s) for s in _statements(stmt.orelse.body))
    return False
