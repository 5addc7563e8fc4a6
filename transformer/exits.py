"""Structured exits: rewrite ``return``/``break``/``continue`` into flags.

Reverse mode has to replay a loop's iterations backwards, which is only easy
when every iteration runs its body from top to bottom.  This pass (core form
in, core form out) leaves

* one ``return`` — the last statement of the function;
* ``break`` only as ``if flag: break`` at the very end of a loop body;
* no ``continue`` at all;

by setting flags where the exits were and guarding the statements after them
with ``if not flag``.  Functions without early exits come out unchanged.
"""
from __future__ import annotations

import libcst as cst

from . import core_form as cf
from .core_form import CoreFunction


def _small(stmt):
    return stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) else None


def _contains(stmts, kinds, into_loops: bool) -> bool:
    for stmt in stmts:
        small = _small(stmt)
        if small is not None:
            if isinstance(small, kinds):
                return True
        elif isinstance(stmt, cst.If):
            if any(_contains(block, kinds, into_loops) for block in cf.blocks(stmt)):
                return True
        elif isinstance(stmt, (cst.For, cst.While)) and into_loops:
            if _contains(stmt.body.body, kinds, into_loops):
                return True
    return False


def needs_rewrite(func: cst.FunctionDef) -> bool:
    body = list(func.body.body)
    last = _small(body[-1]) if body else None
    head = body[:-1] if isinstance(last, cst.Return) else body
    if _contains(head, (cst.Return,), into_loops=True):
        return True
    return _has_loose_loop_exits(body)


def _has_loose_loop_exits(stmts) -> bool:
    """True if some loop has a break/continue other than a final ``if flag: break``."""
    for stmt in stmts:
        if isinstance(stmt, (cst.For, cst.While)):
            body = list(stmt.body.body)
            if body and _is_final_break(body[-1]):
                body = body[:-1]
            if _contains(body, (cst.Break, cst.Continue), into_loops=False) or _has_loose_loop_exits(body):
                return True
        elif isinstance(stmt, cst.If):
            if any(_has_loose_loop_exits(block) for block in cf.blocks(stmt)):
                return True
    return False


def _is_final_break(stmt) -> bool:
    return isinstance(stmt, cst.If) and stmt.orelse is None and cf.is_atom(stmt.test) and \
        len(stmt.body.body) == 1 and isinstance(_small(stmt.body.body[0]), cst.Break)


class _Rewriter:
    def __init__(self, core: CoreFunction):
        self.scope = core.scope
        self.result = None          # name holding the return value
        self.returned = None        # flag: the function has returned

    # A context says which flag to set for each kind of exit at this point.
    def block(self, stmts, ctx) -> tuple[list, bool]:
        """Rewrite ``stmts``; return them and whether they may set ctx['skip']."""
        out: list = []
        may_skip = False
        for i, stmt in enumerate(stmts):
            new, skips = self.statement(stmt, ctx)
            out.extend(new)
            if skips and i + 1 < len(stmts):
                rest, rest_skips = self.block(stmts[i + 1:], ctx)
                if rest:
                    go = self.scope.temp()
                    out.append(cf.assign(go, cst.UnaryOperation(cst.Not(), cst.Name(ctx["skip"]))))
                    out.append(cst.If(test=cst.Name(go), body=cf.block(rest)))
                return out, True
            may_skip = may_skip or skips
        return out, may_skip

    def statement(self, stmt, ctx) -> tuple[list, bool]:
        small = _small(stmt)
        keep = stmt.leading_lines
        if isinstance(small, cst.Return):
            value = small.value or cst.Name("None")
            out = [cf.assign(self.result, value).with_changes(leading_lines=keep),
                   cf.assign(self.returned, cst.Name("True"))]
            if ctx["skip"] != self.returned:
                out.append(cf.assign(ctx["skip"], cst.Name("True")))
            ctx["returns"] = True
            return out, True
        if isinstance(small, cst.Break):
            ctx["breaks"] = True
            out = [cf.assign(ctx["broke"], cst.Name("True")).with_changes(leading_lines=keep),
                   cf.assign(ctx["skip"], cst.Name("True"))]
            return out, True
        if isinstance(small, cst.Continue):
            return [cf.assign(ctx["skip"], cst.Name("True")).with_changes(leading_lines=keep)], True
        if isinstance(stmt, cst.If):
            skips = []

            def rewrite(block):
                new, skipped = self.block(block, ctx)
                skips.append(skipped)
                return new
            return [cf.map_blocks(stmt, rewrite)], any(skips)
        if isinstance(stmt, (cst.For, cst.While)):
            return self.loop(stmt, ctx)
        return [stmt], False

    def loop(self, stmt, outer) -> tuple[list, bool]:
        body = list(stmt.body.body)
        if not _contains(body, (cst.Return, cst.Break, cst.Continue), into_loops=True):
            return [stmt], False
        ctx = {"skip": self.scope.claim("_skip"), "broke": self.scope.claim("_broke"),
               "breaks": False, "returns": False}
        new_body, _ = self.block(body, ctx)
        new_body.insert(0, cf.assign(ctx["skip"], cst.Name("False")))
        before = []
        if ctx["breaks"]:
            before.append(cf.assign(ctx["broke"], cst.Name("False")))
            new_body.append(cst.If(test=cst.Name(ctx["broke"]), body=cf.block([cf.statement(cst.Break())])))
        if ctx["returns"]:
            new_body.append(cst.If(test=cst.Name(self.returned), body=cf.block([cf.statement(cst.Break())])))
        loop = stmt.with_changes(body=cf.block(new_body))
        out = before + [loop]
        if ctx["returns"]:
            outer["returns"] = True
            if outer["skip"] != self.returned:
                out.append(cf.assign(outer["skip"], cst.Name(self.returned)))
            return out, True
        return out, False


def structure_exits(core: CoreFunction) -> CoreFunction:
    func = core.node
    if not needs_rewrite(func):
        return core
    rewriter = _Rewriter(core)
    rewriter.result = core.scope.claim("_result")
    rewriter.returned = core.scope.claim("_returned")
    ctx = {"skip": rewriter.returned, "broke": None, "breaks": False, "returns": False}
    body, _ = rewriter.block(list(func.body.body), ctx)
    body.insert(0, cf.assign(rewriter.returned, cst.Name("False")))
    body.append(cf.statement(cst.Return(cst.Name(rewriter.result))))
    core.node = func.with_changes(body=cf.block(body))
    return core
