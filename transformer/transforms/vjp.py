"""Reverse mode: the source transform behind grad, value_and_grad and vjp.

The generated function has two sweeps, in the order Tangent writes them:

* the **forward sweep** is the user's code, plus the bookkeeping the backward
  sweep needs: the number of times each loop ran, and — for variables that are
  overwritten while the backward sweep still needs an old value — a push of
  each new value onto that variable's stack (the tape);
* the **backward sweep** walks the statements in reverse.  Each primitive's
  rule (``templates/adjoints.py``) turns the cotangent of its result into
  contributions to the cotangents of its operands, ``x_bar``.  ``if`` becomes
  the same ``if`` on the recorded condition, loops run their iterations
  backwards, and in-place writes put back the values they overwrote.

Only values that depend on the differentiated inputs *and* reach the output
get cotangents (activity analysis), only overwritten values that a rule reads
are taped, and whatever the gradient does not need is removed at the end.
"""
from __future__ import annotations

import copy
import inspect

import libcst as cst

from .. import core_form as cf
from .. import custom, dataflow, naming, simplify
from ..core_form import CoreFunction
from ..dataflow import Assignment, atom_names
from ..errors import Location, TransformError
from ..exits import structure_exits
from ..normalize import apply_template
from . import register
from .shapes import SCALAR, Shapes, one_shape
from .shapes import atom_names as names_in
from .sweep_fusion import fuse_backward_loops
from ..dataflow import ValueReads
from .reverse_analysis import (CUSTOM, GETITEM, UNBROADCAST, ZERO_COTANGENT, Analysis, carried, first_touch,
                               is_exit_break, isolate_conditions, loops, rule_for, rule_wrt)


class _Reverse:
    def __init__(self, core: CoreFunction, analysis: Analysis):
        self.core = core
        self.scope = core.scope
        self.a = analysis
        self.stacks: dict[str, str] = {}          # variable -> its stack's name
        self.overwritten: dict[tuple, str] = {}   # (array, index form) -> the key of its tape
        self.bars: dict[str, str] = {}            # variable -> its cotangent's name
        self.element_bars: dict[str, list] = {}   # variable holding a tuple -> its elements' cotangents
        self.scope.taken.update(dataflow.all_names(analysis.func))   # e.g. an inner grad's x_bar
        self.loop_info: dict[int, dict] = {}      # id(loop) -> names recorded by the forward sweep
        self.loops = {id(loop): loop for loop in loops(analysis.func.body.body)}
        self.branches = {id(stmt): stmt for stmt in _ifs(analysis.func.body.body)}
        self.init_guards: dict[str, list] = {}    # variable -> the branches its value exists in
        # reverse over reverse: the tapes of the code differentiated (an inner grad's), whose
        # cotangents are tapes too (templates/adjoints.py, "The tape")
        self.tapes = {a.target for a in analysis.statements
                      if a.kind == "assign" and cf.tape_operation(a.value) in ("new", "push")}
        self.homes = self._homes()
        self.unread_writes, self.unzeroed_writes = analysis.unread_writes, analysis.unzeroed_writes
        self._shapes: Shapes | None = None        # which index atoms are numbers, found when first asked

    # ------------------------------------------------------------- helpers
    def location(self, line) -> Location | None:
        """Where in the user's file the statement ``line`` comes from, for an error."""
        return self.a.location(line)

    def _set_before_its_loop(self, a: Assignment) -> bool:
        """Whether ``a``'s variable is surely set before the loop ``a`` is in, so that its tape holds
        an older value whenever ``a`` has run (a value made only in the loop has none at first, nor
        one set before it only in a branch that did not run).  Surely: by a statement of a block
        that holds that loop, ahead of it, outside any branch or loop of its own."""
        def surely_set(stmts, loops_around: int):
            """(whether set, the loops around ``a``) once ``a`` is found under ``stmts``, else None."""
            set_here = False
            for stmt in stmts:
                if stmt is a.line:              # (set ahead of it in its own block is not before its loop)
                    return False, loops_around
                if isinstance(stmt, cst.SimpleStatementLine):
                    b = dataflow.classify(stmt)
                    set_here |= b.kind == "assign" and b.target == a.target
                    continue
                inner = loops_around + isinstance(stmt, (cst.For, cst.While))
                for block in cf.blocks(stmt):
                    found = surely_set(block, inner)
                    if found is not None:       # a is under this statement, in a loop this block is outside?
                        was_set, loops_at_a = found
                        return was_set or (set_here and loops_at_a > loops_around), loops_at_a
            return None
        found = surely_set(list(self.a.func.body.body), 0)
        return found is not None and found[0]

    def bar(self, name: str) -> str:
        """``x_bar``, or ``x_bar_1`` when the code already has an ``x_bar`` (grad of grad)."""
        if name not in self.bars:
            self.bars[name] = self.scope.claim(naming.cotangent(name))
        return self.bars[name]

    # A variable may hold a tuple (a primitive's several results, a tuple of atoms, a copy of one).
    # Its cotangent is one variable per element, t_bar0, t_bar1...: no tuple is built at run time.
    # A pick ``w = t[k]`` adds w's cotangent into t_bar{k}; a rule of the primitive that made ``t``
    # gets ``z_bar = (t_bar0, t_bar1, ...)`` and unpacks it like any tuple of atoms.
    def elements(self, name: str) -> list[str]:
        """The cotangents of the elements of the tuple ``name`` holds."""
        if name not in self.element_bars:
            size = self.a.tuples[name]
            if size is None:
                raise TransformError(f"differentiating through {name!r}, which holds tuples of different lengths, "
                                     "is not supported", hint="give each tuple its own name")
            self.element_bars[name] = [self.scope.claim(f"{naming.cotangent(name)}{k}") for k in range(size)]
        return self.element_bars[name]

    def cotangent(self, name: str):
        """The atom of ``name``'s cotangent: its name, or the tuple of its elements' for a tuple."""
        if name in self.a.tuples:
            return cf.tuple_of([cst.Name(bar) for bar in self.elements(name)])
        return cst.Name(self.bar(name))

    def zero_cotangent(self, name: str) -> list:
        """``x_bar = rt.zeros_like(x)``, or for a tuple, zeros shaped like each element; for a
        tape, an empty tape."""
        if name in self.tapes:
            return [cf.assign(self.bar(name), cf.call("rt.stack"))]
        if name not in self.a.tuples:
            return [cf.assign(self.bar(name), cf.call(ZERO_COTANGENT, [cst.Name(name)]))]
        out = []
        for k, bar in enumerate(self.elements(name)):
            element = self.scope.temp()
            out += [cf.assign(element, _pick(cst.Name(name), k)),
                    cf.assign(bar, cf.call(ZERO_COTANGENT, [cst.Name(element)]))]
        return out

    def stack(self, name: str) -> str:
        if name not in self.stacks:
            self.stacks[name] = self.scope.claim(f"{name}_stack")
        return self.stacks[name]

    def overwritten_tape(self, a: Assignment) -> str:
        """The tape of what ``y[idx] = v`` overwrites: one per array and form of index, since
        ``y[0]`` and ``y[1:3]`` of a 1-d ``y`` overwrite a number and an array, and a compiled
        tape holds values of one type."""
        index = a.small.targets[0].target.slice
        form = tuple(isinstance(el.slice, cst.Slice) for el in index)
        forms = [f for (name, f) in self.overwritten if name == a.target]
        key = f"{a.target}_overwritten" + (f"{len(forms)}" if forms and form not in forms else "")
        return self.stack(self.overwritten.setdefault((a.target, form), key))

    def _homes(self) -> dict:
        """For each active variable, the block (by path) where its cotangent starts at zero."""
        sites: dict[str, list] = {}
        for a, path in _paths(self.a.func.body.body):
            if a.target in self.a.active:
                sites.setdefault(a.target, []).append(path)
            for _, n in self.a.diff_operands(a):
                if n in self.a.active:
                    sites.setdefault(n, []).append(path)
        definitions: dict[str, list] = {}
        for a, path in _paths(self.a.func.body.body):
            if a.kind == "assign":
                definitions.setdefault(a.target, []).append(path)
        homes = {}
        params = {p.name.value for p in self.a.func.params.params}
        for name in params & set(self.a.active):   # a parameter returned as it is (def f(x): return x)
            sites.setdefault(name, [()])
        for name, paths in sites.items():
            if name in params or name in self.a.outputs:   # an output's seed is added at the top level
                homes[name] = [()]
                continue
            homes[name] = [self._hoist_carried(name, prefix) for prefix in self._per_block(name, paths)]
            for home in homes[name]:
                self._guard_initialisation(name, home, definitions.get(name, []))
        return homes

    def _per_block(self, name: str, paths: list) -> list:
        """The blocks under which ``name``'s cotangent lives: where its sites meet, or, when every
        site is inside loops or branches below that and each of those blocks assigns ``name``
        before reading it, each of those blocks on its own.  (Grad of grad: a value of the inner
        forward loop is read again in the inner backward loop; a cotangent started above both
        would read a value that does not exist when the loops run no passes, or when an early
        return skipped them.)"""
        prefix = _common_prefix(paths)
        depth = len(prefix)
        if any(len(path) <= depth for path in paths):
            return [prefix]
        groups: dict = {}
        for path in paths:
            groups.setdefault(path[depth], []).append(path)
        blocks = [self._block(stmt_id, branch) for stmt_id, branch in groups]

        def flows(a):
            return any(n == name for _, n in self.a.flow_operands(a))
        if len(groups) < 2 or any(block is None or first_touch(block, name, flows) != "def" for block in blocks):
            return [prefix]
        return [home for group in groups.values() for home in self._per_block(name, group)]

    def _block(self, stmt_id, branch):
        """The statements of a loop's body or of an if's branch, by their path element."""
        if stmt_id in self.loops:
            return self.loops[stmt_id].body.body
        if stmt_id in self.branches:
            blocks = cf.blocks(self.branches[stmt_id])
            return blocks[branch] if branch < len(blocks) else None
        return None

    def _guard_initialisation(self, name: str, home: tuple, definition_paths: list) -> None:
        """A value made in one branch but read in another block under the same test
        (grad of grad: the inner backward sweep repeats the forward ``if``) has its
        cotangent's home above both; there it starts at zero only where the value exists."""
        if not definition_paths:
            return
        deeper = _common_prefix(definition_paths)[len(home):]
        if not deeper or any(stmt_id not in self.branches for stmt_id, _ in deeper):
            return
        tests = [self.branches[stmt_id].test for stmt_id, _ in deeper]
        if all(not self.a.counts.unstable(n) for test in tests for n in atom_names(test)):
            self.init_guards[name] = [(self.branches[stmt_id].test, branch) for stmt_id, branch in deeper]

    def _hoist_carried(self, name: str, path: tuple) -> tuple:
        """A cotangent carried from one iteration to the next starts outside that loop."""
        for depth, (stmt_id, _) in enumerate(path):
            loop = self.loops.get(stmt_id)
            if loop is not None and carried(name, loop):
                return path[:depth]
        return path

    def mutated_bars(self) -> set:
        """Cotangents written in place (scatter into x_bar[idx]); they must never alias.  (A write's
        adjoint zeroes the region it read of its array's cotangent, unless nothing reads it again.)"""
        names = set()
        for a in self.a.statements:
            if a.kind == "write_into" and id(a.line) not in self.unzeroed_writes:
                names.add(self.bar(a.target))
            elif a.kind == "assign" and isinstance(a.value, cst.Subscript) and not self.a.picks_element(a.value):
                names.update(self.bar(n) for n in atom_names(a.value.value))
        return names

    def read(self, name: str) -> list:
        """Statements that make ``name`` hold its forward-sweep value here."""
        if self.a.taped(name):
            return [cf.assign(name, cf.call("rt.top", [cst.Name(self.stack(name))]))]
        return []

    # ------------------------------------------------------------ forward
    def forward(self, stmts, depth=0) -> list:
        out = []
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                a = dataflow.classify(stmt)
                if a.kind == "write_into" and a.target in self.a.needed and id(stmt) not in self.unread_writes:
                    target = a.small.targets[0].target
                    old = self.scope.temp()
                    out.append(cf.assign(old, cst.Subscript(target.value, target.slice)))
                    saved = self.scope.temp()
                    out.append(cf.assign(saved, cf.call("rt.copy", [cst.Name(old)])))
                    tape = self.overwritten_tape(a)
                    out.append(cf.assign(tape, cf.call("rt.push", [cst.Name(tape), cst.Name(saved)])))
                if a.kind == "assign" and cf.primitive_of(a.value) is not None and \
                        cf.primitive_of(a.value).name == custom.VJP_CALL:
                    # the custom rule is spent on this sweep: what the forward sweep computes is the
                    # output its fwd function made, and a transform of this code differentiates that
                    # code and the backward rule as written, as JAX's nested transforms do
                    stmt = stmt.with_changes(body=[a.small.with_changes(value=a.value.args[0].value)])
                out.append(stmt)
                if a.kind == "assign" and self.a.taped(a.target):
                    stack = self.stack(a.target)
                    out.append(cf.assign(stack, cf.call("rt.push", [cst.Name(stack), cst.Name(a.target)])))
            elif isinstance(stmt, cst.If):
                out.append(cf.map_blocks(stmt, lambda block: self.forward(block, depth)))
            elif isinstance(stmt, (cst.For, cst.While)):
                out += self.forward_loop(stmt, depth)
            else:
                out.append(stmt)
        return out

    def forward_loop(self, loop, depth) -> list:
        info: dict = {}
        self.loop_info[id(loop)] = info
        before, after = [], []
        body = self.forward(loop.body.body, depth + 1)
        has_break = bool(loop.body.body) and is_exit_break(loop.body.body[-1])
        if isinstance(loop, cst.For):
            args = [arg.value for arg in loop.iter.args]
            start, stop, step = (cf.literal(0), args[0], cf.literal(1)) if len(args) == 1 else \
                (args[0], args[1], args[2] if len(args) == 3 else cf.literal(1))
            index = loop.target.value
            info.update(index=index)
            recorded = {}
            for role, atom in (("start", start), ("stop", stop), ("step", step)):
                if isinstance(atom, cst.Name) and self.a.counts.unstable(atom.value):
                    copy_name = self.scope.claim(f"{index}_{role}")
                    before.append(cf.assign(copy_name, atom))
                    atom = cst.Name(copy_name)
                    recorded[role] = copy_name
                info[role] = atom
            counted = has_break or not (isinstance(step, cst.Integer) and step.value == "1")
        else:
            counted = True
            recorded = {}
        if counted:
            trips = self.scope.claim(f"{info.get('index', 'while')}_trips")
            info["trips"] = trips
            before.append(cf.assign(trips, cf.literal(0)))
            body = [cf.assign(trips, cst.BinaryOperation(cst.Name(trips), cst.Add(), cf.literal(1)))] + body
            recorded["trips"] = trips
        if depth > 0:          # the loop runs again: keep each run's bookkeeping on a stack
            info["stacked"] = list(recorded.values())
            for name in recorded.values():
                stack = self.stack(name)
                after.append(cf.assign(stack, cf.call("rt.push", [cst.Name(stack), cst.Name(name)])))
        return before + [loop.with_changes(body=cf.block(body))] + after

    # ----------------------------------------------------------- backward
    def backward(self, stmts, path=()) -> list:
        out = []
        out += self.zero_cotangents(sorted(n for n, homes in self.homes.items() if path in homes), path)
        if path == ():
            self.top_level_inits = len(out)     # the seeds go right after these
        groups = _origin_groups(stmts)
        shown = None
        for position, stmt in reversed(list(enumerate(stmts))):
            if isinstance(stmt, cst.SimpleStatementLine):
                produced = self.backward_simple(dataflow.classify(stmt))
            elif isinstance(stmt, cst.If):
                produced = [] if is_exit_break(stmt) else self.backward_if(stmt, path)
            elif isinstance(stmt, (cst.For, cst.While)):
                produced = self.backward_loop(stmt, path + ((id(stmt), 0),))
            else:
                produced = []
            if produced and groups[position] and groups[position] != shown:
                shown = groups[position]
                produced[0] = _prepend_comment(produced[0], f"# vjp of: {shown}")
            out += produced
        recompute = self.recomputation(path[-1] if path else None, out)
        if recompute and _has_code(out):
            recompute[0] = _prepend_comment(recompute[0].with_changes(leading_lines=()),
                                            "# recompute this iteration's values instead of taping them")
            out = recompute + out
        return out

    def zero_cotangents(self, names, path=()) -> list:
        """``x_bar = rt.zeros_like(x)`` for each name; a value that exists only when some
        branches ran gets its zero inside one ``if`` per set of branches.  Inside a loop or a
        branch, a taped ``x`` is read from its tape first: the variable still holds the value of
        the iteration run last, whose shape may not be this one's (``y = np.append(y, v)``)."""
        out, guarded = [], {}
        for name in names:
            init = (self.read(name) if path and name not in self.tapes else []) + self.zero_cotangent(name)
            guards = self.init_guards.get(name)
            if guards is None:
                out += init
            else:
                key = tuple((cst.Module([]).code_for_node(test), branch) for test, branch in guards)
                guarded.setdefault(key, (guards, []))[1].extend(init)
        start = len(out)
        for guards, inits in guarded.values():
            stmts = inits
            for test, branch in reversed(guards):
                flip = []
                if branch == 1:
                    flipped = self.scope.temp()
                    flip, test = [cf.assign(flipped, cst.UnaryOperation(cst.Not(), test))], cst.Name(flipped)
                stmts = flip + [cst.If(test=test, body=cf.block(stmts))]
            out += stmts
        if guarded:
            out[start] = _prepend_comment(out[start], "# cotangents of values made in a branch: they exist only when it ran")
        return out

    def backward_if(self, stmt: cst.If, path) -> list:
        pre = []
        for name in atom_names(stmt.test):
            pre += self.read(name)
        body, orelse = (self.backward(block, path + ((id(stmt), which),))
                        for which, block in enumerate(cf.branches(stmt)))
        if not (_has_code(body) or _has_code(orelse)):
            return []
        if not _has_code(body):     # keep the if readable: negate rather than leave an empty branch
            flipped = self.scope.temp()
            return pre + [cf.assign(flipped, cst.UnaryOperation(cst.Not(), stmt.test)),
                          cst.If(test=cst.Name(flipped), body=cf.block(orelse))]
        return pre + [cst.If(test=stmt.test, body=cf.block(body),
                             orelse=cst.Else(cf.block(orelse)) if _has_code(orelse) else None)]

    def backward_loop(self, loop, path) -> list:
        info = self.loop_info[id(loop)]
        body = self.backward(loop.body.body, path)
        out = []
        for name in reversed(info.get("stacked", [])):
            out.append(cf.assign(name, cf.call("rt.pop", [cst.Name(self.stack(name))])))
        if not _has_code(body):
            return out
        if isinstance(loop, cst.While):
            counter = self.scope.claim("iteration")
            out.append(cst.For(target=cst.Name(counter), iter=cf.call("range", [cst.Name(info["trips"])]),
                               body=cf.block(body)))
            return out
        start, stop, step = info["start"], info["stop"], info["step"]
        index = info["index"]
        if "trips" in info:
            # last = start + (trips - 1) * step
            t1, t2, last, end, neg = (self.scope.temp() for _ in range(5))
            out += [cf.assign(t1, cst.BinaryOperation(cst.Name(info["trips"]), cst.Subtract(), cf.literal(1))),
                    cf.assign(t2, cst.BinaryOperation(cst.Name(t1), cst.Multiply(), step)),
                    cf.assign(last, cst.BinaryOperation(start, cst.Add(), cst.Name(t2))),
                    cf.assign(end, cst.BinaryOperation(start, cst.Subtract(), step)),
                    cf.assign(neg, cst.UnaryOperation(cst.Minus(), step))]
            bounds = [cst.Name(last), cst.Name(end), cst.Name(neg)]
        else:   # step 1, no break: range(start, stop) backwards is range(stop - 1, start - 1, -1)
            first, end = self.scope.temp(), self.scope.temp()
            out += [cf.assign(first, cst.BinaryOperation(stop, cst.Subtract(), cf.literal(1))),
                    cf.assign(end, cst.BinaryOperation(start, cst.Subtract(), cf.literal(1)))]
            bounds = [cst.Name(first), cst.Name(end), cf.literal(-1)]
        out.append(cst.For(target=cst.Name(index), iter=cf.call("range", bounds), body=cf.block(body)))
        return out

    def recomputation(self, block_key, body) -> list:
        """The block's recomputable statements that its reversed body reads, in forward order.
        A read for a shape counts (``rt.unbroadcast(g, t)``): the shape is this pass's, which
        may not be the last pass's (``t = w[:i + 1] * x``)."""
        plan = self.a.recompute.get(block_key, [])

        def reads(node) -> set:
            finder = ValueReads()
            node.visit(finder)
            return finder.names | {n for n in names_in(node) if not self.a.same_shape_always(n)}
        used = set().union(*(reads(stmt) for stmt in body))
        wanted = []
        for stmt in reversed(plan):
            a = dataflow.classify(stmt)
            if a.target in used:
                wanted.append(stmt)
                used |= reads(a.value)
        return list(reversed(wanted))

    def backward_simple(self, a: Assignment) -> list:
        if a.kind not in ("assign", "write_into"):
            return []
        active = self.a.is_active(a)
        if a.kind == "write_into":
            return self.restore(a) + (self.backward_setitem(a) if active else [])
        out = []
        result_atom = cst.Name(a.target)
        if self.a.taped(a.target):
            popped = a.target if a.target not in dataflow.value_reads(a.value) else self.scope.temp()
            out.append(cf.assign(popped, cf.call("rt.pop", [cst.Name(self.stack(a.target))])))
            result_atom = cst.Name(popped)
        if not active:
            if a.target in self.a.active and self.a.counts.unstable(a.target):
                out += self.restart_cotangent(a)      # v = np.sin(c) in a branch: the old v gets none
            return out
        for name in set(dataflow.value_reads(a.value)):
            if name != a.target or result_atom.value != a.target:
                out += self.read(name)
        contributions = self.contributions(a, result_atom, out)
        if self.a.counts.unstable(a.target):
            # the old value's cotangent starts again at zero below: what flows on from it is held first
            own = set(atom_names(self.cotangent(a.target)))
            contributions = [(name, self.held(atom, own, out)) for name, atom in contributions]
            out += self.restart_cotangent(a)
        for name, atom in contributions:
            out += self.accumulate(name, atom)
        return out

    def held(self, atom, names: set, out: list):
        """``atom`` with each of ``names`` in it copied to a temporary (a tuple's element by element)."""
        if isinstance(atom, cst.Tuple):
            return cf.tuple_of([self.held(el.value, names, out) for el in atom.elements])
        if isinstance(atom, cst.Name) and atom.value in names:
            held = self.scope.temp()
            out.append(cf.assign(held, atom))
            return cst.Name(held)
        return atom

    def restart_cotangent(self, a: Assignment) -> list:
        """The cotangent of the value ``a`` rebinds: zeros of that value's shape, which a loop
        may have changed (out = out[1:] - out[:-1]) where it is on the tape.  A tape's cotangent
        is one tape throughout: ``s = rt.push(s, v)`` rebinds the same tape."""
        if a.target in self.tapes:
            return []
        if self.a.taped(a.target) and self._set_before_its_loop(a):
            return self.read(a.target) + self.zero_cotangent(a.target)
        return [cf.assign(bar, cf.call(ZERO_COTANGENT, [cst.Name(bar)]))
                for bar in atom_names(self.cotangent(a.target))]

    def contributions(self, a: Assignment, result_atom, out: list) -> list:
        """(variable, contribution atom) pairs for the active operands of ``a``; the variable is
        (name, k) for element k of a tuple."""
        z_bar = self.cotangent(a.target)
        if isinstance(a.value, cst.Tuple):      # t = (u, v): each element's cotangent to its atom
            pairs = []
            for element, part in zip(a.value.elements, z_bar.elements):
                name = element.value.value if isinstance(element.value, cst.Name) else None
                if name in self.a.tuples:
                    raise TransformError("differentiating through a tuple that holds another tuple is not "
                                         "supported", self.location(a.line), "give each tuple its own name")
                if name in self.a.active:
                    pairs.append((name, part.value))
            return pairs
        if cf.is_atom(a.value):
            return [(n, z_bar) for n in atom_names(a.value) if n in self.a.active]
        prim = cf.primitive_of(a.value)
        if prim.name == GETITEM and self.a.picks_element(a.value):
            tuple_name = a.value.value.value
            if tuple_name not in self.a.active:
                return []
            return [((tuple_name, self.a.element_of(a.value, self.location(a.line))), z_bar)]
        if prim.name == GETITEM:
            return self.scatter(a.value, z_bar, out)
        if prim.name in CUSTOM:
            return self.custom_rule(a.value, z_bar, out)
        template = rule_for(a.value, self.location(a.line))
        bound = {"z_bar": z_bar, "z": result_atom}
        bound.update(cf.arguments(a.value, prim))
        wanted = [(p, n) for p, n in self.a.diff_operands(a) if n in self.a.active]
        on_tape = template.rule_options.get("tape", False)
        if on_tape:      # a tape rule reads the cotangent tapes of its tape operands
            for param in inspect.signature(template).parameters:
                operand = bound.get(param[:-len("_bar")]) if param.endswith("_bar") and param != "z_bar" else None
                if isinstance(operand, cst.Name) and operand.value in self.tapes:
                    bound[param] = cst.Name(self.bar(operand.value))
        if not wanted:
            if on_tape and prim.tape == "push" and a.target in self.a.active:
                statements, _ = apply_template(self.core, template, bound)   # pop the constant's entry too
                out += statements
            return []
        statements, result = apply_template(self.core, template, bound)
        if on_tape:
            statements, result = _in_place(statements, result)
        if prim.shape_rule == "elementwise":
            statements, result = _without_identity_unbroadcasts(statements, result, self.shaped_like_result(a))
        out += statements
        wrt = list(rule_wrt(template))
        atoms = [el.value for el in result.elements] if isinstance(result, cst.Tuple) and len(wrt) > 1 else [result]
        by_param = dict(zip(wrt, atoms))
        pairs = []
        for param in dict.fromkeys(p for p, _ in wanted):
            operand = bound[param]
            if isinstance(operand, cst.Tuple):   # np.concatenate((a, b)): one piece per element
                pairs += self.element_pieces(operand, by_param[param], out)
            else:
                pairs += [(n, by_param[param]) for p, n in wanted if p == param]
        return pairs

    def shape_token(self, value):
        """shapes.py's token of a core-form value (a name, ``y[1:]``...) in the differentiated code."""
        if self._shapes is None:
            self._shapes = Shapes(self.core)
        return self._shapes.of_value(value)

    def shaped_like_result(self, a: Assignment) -> set:
        """The operands of ``a`` (an elementwise operation) that have its result's shape, so that
        summing a cotangent down to one of them does nothing: each operand of the result's shape
        class (shapes.py's tokens; not numbers, whose sum is cheap), and the one operand that may
        be an array where every other is a number (``1.0 + e``, ``x * h``: the result has its
        shape, whatever it is; a 0-d array's cotangent may come as a number, which the sum would
        only have made a 0-d array again)."""
        operands = set(dataflow.value_reads(a.value))
        may_be_arrays = {name for name in operands if self.shape_token(cst.Name(name)) != SCALAR}
        if len(may_be_arrays) == 1:
            return may_be_arrays
        token = self.shape_token(cst.Name(a.target))
        return {name for name in operands if one_shape(self.shape_token(cst.Name(name)), token)}

    def element_pieces(self, display: cst.Tuple, cotangent, out: list) -> list:
        """(variable, its piece) for each active name in a tuple display, however deeply nested:
        element j's piece is the cotangent's ``[j]`` (``np.array([[1.0, w], [2.0, 3.0]])``: w's is
        ``[0][1]``)."""
        pairs = []
        for j, element in enumerate(display.elements):
            part = cst.Subscript(cotangent, [cst.SubscriptElement(cst.Index(cf.literal(j)))])
            if isinstance(element.value, cst.Tuple):
                inner = self.scope.temp()
                out.append(cf.assign(inner, part))
                pairs += self.element_pieces(element.value, cst.Name(inner), out)
            elif isinstance(element.value, cst.Name) and element.value.value in self.a.active:
                piece = self.scope.temp()
                out.append(cf.assign(piece, part))
                pairs.append((element.value.value, cst.Name(piece)))
        return pairs

    def custom_rule(self, value: cst.Call, z_bar, out: list) -> list:
        """A custom function's output: the user's backward rule gives one cotangent per input (a
        custom_jvp's: its jvp rule transposed, at the inputs)."""
        inputs = value.args[1].value
        if cf.primitive_of(value).name == custom.VJP_CALL:
            residuals, rule = value.args[2].value, value.args[3].value
            bwd = self.core.functions[rule.evaluated_value]
        else:
            output, residuals, rule = value.args[0].value, inputs, value.args[2].value
            bwd = custom.transposed_rule(self.core.functions[rule.evaluated_value], len(inputs.elements),
                                         len(output.elements) if isinstance(output, cst.Tuple) else None)
        for name in atom_names(residuals):
            out += self.read(name)
        params = list(inspect.signature(bwd).parameters)
        statements, result = apply_template(self.core, bwd, {params[0]: residuals, params[1]: z_bar})
        if statements:              # the lines that follow are the user's rule, not the function's code
            what = "backward rule" if cf.primitive_of(value).name == custom.VJP_CALL else "jvp rule, transposed:"
            statements[0] = cf.with_comment(statements[0], f"# the custom {what} {rule.evaluated_value}")
        out += statements
        elements = [el.value for el in inputs.elements]
        if not (isinstance(result, cst.Tuple) and len(result.elements) == len(elements)):
            pieces = []
            for j in range(len(elements)):
                piece = self.scope.temp()
                out.append(cf.assign(piece, cst.Subscript(result, [cst.SubscriptElement(cst.Index(cf.literal(j)))])))
                pieces.append(cst.Name(piece))
        else:
            pieces = [el.value for el in result.elements]
        for j, (element, piece) in enumerate(zip(elements, pieces)):
            if _is_none(piece, statements):                                # as in JAX: a zero cotangent
                zero = self.scope.temp()
                out.append(cf.assign(zero, cf.call(ZERO_COTANGENT, [element])))
                pieces[j] = cst.Name(zero)
        return [(el.value, piece) for el, piece in zip(elements, pieces)
                if isinstance(el, cst.Name) and el.value in self.a.active]

    def scatter(self, value: cst.Subscript, z_bar, out: list) -> list:
        """``z = x[idx]``: add z_bar into x_bar[idx] in place."""
        x = value.value.value
        if x not in self.a.active:
            return []
        for name in dataflow.index_names(value):
            out += self.read(name)
        x_bar = cst.Name(self.bar(x))
        parts = self.array_index_parts(value, out)
        if parts is not None:   # an array index may name a position twice: each one adds
            out.append(cf.assign(x_bar.value, cf.call("rt.add_at", [x_bar, parts, z_bar])))
            return []
        part, total = self.scope.temp(), self.scope.temp()
        out += [cf.assign(part, cst.Subscript(x_bar, value.slice)),
                cf.assign(total, cst.BinaryOperation(cst.Name(part), cst.Add(), z_bar)),
                cf.assign(cst.Subscript(x_bar, value.slice), cst.Name(total))]
        return []

    def array_index_parts(self, subscript: cst.Subscript, out: list):
        """The index of ``subscript`` as a tuple of atoms (slices made by rt.index_slice) when
        a part of it may be an array; None when every part is a number or a slice."""
        if self._shapes is None:
            self._shapes = Shapes(self.core)
        items = [element.slice for element in subscript.slice]
        if all(isinstance(item, cst.Slice) or self._shapes.of_value(item.value) == SCALAR
               or isinstance(item.value, cst.Tuple) and not item.value.elements for item in items):
            return None         # (``a[()]``: a 0-d array's element, indexed in place as it is)
        parts = []
        for item in items:
            if isinstance(item, cst.Index):
                parts.append(cst.Element(item.value))
                continue
            bounds = [bound if bound is not None else cst.Name("None") for bound in (item.lower, item.upper, item.step)]
            made = self.scope.temp()
            out.append(cf.assign(made, cf.call("rt.index_slice", bounds)))
            parts.append(cst.Element(cst.Name(made)))
        return cst.Tuple(parts)

    def accumulate(self, name, atom) -> list:
        """``x_bar = x_bar + atom``.  ``name`` may be (tuple, k): element k's cotangent; a whole
        tuple's contribution is a tuple of atoms or a name holding a tuple (vjp's ``out_bar``)."""
        if isinstance(name, tuple):
            bar = self.elements(name[0])[name[1]]
            return [cf.assign(bar, cst.BinaryOperation(cst.Name(bar), cst.Add(), atom))]
        if name in self.a.tuples:
            out = []
            for k in range(len(self.elements(name))):
                if isinstance(atom, cst.Tuple):
                    part = atom.elements[k].value
                else:
                    part = cst.Name(self.scope.temp())
                    out.append(cf.assign(part.value, _pick(atom, k)))
                out += self.accumulate((name, k), part)
            return out
        bar = self.bar(name)
        if name in self.tapes:      # a tape rule's result is the cotangent tape itself, changed in place
            return [] if isinstance(atom, cst.Name) and atom.value == bar else [cf.assign(bar, atom)]
        return [cf.assign(bar, cst.BinaryOperation(cst.Name(bar), cst.Add(), atom))]

    def restore(self, a: Assignment) -> list:
        """Put back what ``y[idx] = v`` overwrote, where the backward sweep reads ``y``
        (or a view of it) as it was before: active or not, the write is undone."""
        if a.target not in self.a.needed or id(a.line) in self.unread_writes:
            return []
        target = a.small.targets[0].target
        out = []
        for name in dataflow.index_names(target):
            out += self.read(name)
        old = self.scope.temp()
        return out + [cf.assign(old, cf.call("rt.pop", [cst.Name(self.overwritten_tape(a))])),
                      cf.assign(cst.Subscript(target.value, target.slice), cst.Name(old))]

    def backward_setitem(self, a: Assignment) -> list:
        target = a.small.targets[0].target
        out = []
        for name in dataflow.index_names(target):
            out += self.read(name)
        y_bar = cst.Name(self.bar(a.target))
        parts = self.array_index_parts(target, out)
        if parts is not None:   # a position an array index names twice keeps only its last write
            part = self.scope.temp()
            out.append(cf.assign(part, cf.call("rt.kept_writes", [y_bar, parts])))
        elif id(a.line) in self.unzeroed_writes:     # nothing reads this region of y_bar again
            part = self.scope.temp()
            out.append(cf.assign(part, cst.Subscript(y_bar, target.slice)))
        else:
            view, part = self.scope.temp(), self.scope.temp()
            # copy: the slice of y_bar is zeroed below, and a view would see that
            out += [cf.assign(view, cst.Subscript(y_bar, target.slice)),
                    cf.assign(part, cf.call("rt.copy", [cst.Name(view)]))]
        region = self.shape_token(target)
        for name in atom_names(a.value):
            if name in self.a.active:
                out += self.read(name)
                if one_shape(self.shape_token(cst.Name(name)), region):
                    out += self.accumulate(name, cst.Name(part))     # v fills the region: nothing to sum
                    continue
                contribution = self.scope.temp()
                out.append(cf.assign(contribution, cf.call(UNBROADCAST, [cst.Name(part), cst.Name(name)])))
                out += self.accumulate(name, cst.Name(contribution))
        if id(a.line) not in self.unzeroed_writes:
            out.append(cf.assign(cst.Subscript(y_bar, target.slice), cf.literal(0.0)))
        return out


def _kept_copy(kept: str, name: str, size, scope) -> list:
    """``kept = rt.copy(name)``; for a name holding a tuple of ``size`` (an aux's leaves), a tuple
    of its elements' copies, which a transform of this code still sees as a tuple (vmap batches
    each element, where a copied tuple would read as one array)."""
    if size is None:
        return [cf.assign(kept, cf.call("rt.copy", [cst.Name(name)]))]
    out, copies = [], []
    for k in range(size):
        element, copied = scope.temp(), scope.temp()
        out += [cf.assign(element, _pick(cst.Name(name), k)),
                cf.assign(copied, cf.call("rt.copy", [cst.Name(element)]))]
        copies.append(cst.Name(copied))
    return out + [cf.assign(kept, cf.tuple_of(copies))]


class _IdentityUnbroadcasts(cst.CSTTransformer):
    """``rt.unbroadcast(c, x)`` is ``c`` where ``x`` is in ``names``."""

    def __init__(self, names: set):
        self.names = names

    def leave_Call(self, original, updated):
        if dataflow.spelling(updated) == UNBROADCAST and len(updated.args) == 2 and \
                isinstance(updated.args[1].value, cst.Name) and updated.args[1].value.value in self.names:
            return updated.args[0].value
        return updated


def _without_identity_unbroadcasts(statements: list, result, names: set):
    """An elementwise rule's statements and result without the sums of a cotangent down to an
    operand that has the result's shape.  Every contribution such a rule makes combines the
    result's cotangent with operands that broadcast to the result's shape, so it has that
    shape already; the call would be a no-op, and it would keep the operand alive (and so
    unfused in the forward sweep) only to read its shape."""
    if not names:
        return statements, result
    rewrite = _IdentityUnbroadcasts(names)
    return [stmt.visit(rewrite) for stmt in statements], result.visit(rewrite)


def _in_place(statements: list, result):
    """A tape rule's last statement ``t = rt.push(s_bar, v)`` written ``s_bar = rt.push(s_bar, v)``:
    the cotangent tape changes in place and keeps its one name (numba types a list from the
    appends to one variable)."""
    if not (statements and isinstance(result, cst.Name)):
        return statements, result
    last = dataflow.classify(statements[-1])
    if last.kind != "assign" or last.target != result.value or cf.tape_operation(last.value) != "push":
        return statements, result
    tape = cf.operands(last.value)[0]
    if not isinstance(tape, cst.Name):
        return statements, result
    return statements[:-1] + [cf.assign(tape.value, last.value)], tape


def _pick(atom, k: int) -> cst.Subscript:
    """``atom[k]``: element ``k`` of a tuple."""
    return cst.Subscript(atom, [cst.SubscriptElement(cst.Index(cf.literal(k)))])


def _origin_text(stmt) -> str | None:
    """The text of a statement's origin comment (``z = f(x)   [file.py:3]``), if any."""
    for line in reversed(getattr(stmt, "leading_lines", ())):
        if line.comment is not None:
            text = line.comment.value.lstrip("#").strip()
            if cf.ORIGIN_COMMENT.search(text):
                return text.split(": ", 1)[1] if text.startswith(("vjp of: ", "jvp of: ")) else text
    return None


def _origin_groups(stmts) -> list:
    """For each statement, the origin of the user line it belongs to."""
    groups, current = [], None
    for stmt in stmts:
        current = _origin_text(stmt) or current
        groups.append(current)
    return groups


def _prepend_comment(stmt, comment: str):
    return stmt.with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(comment)), *stmt.leading_lines])


def _paths(stmts, path=()):
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield dataflow.classify(stmt), path
        else:
            for branch, block in enumerate(cf.blocks(stmt)):
                yield from _paths(block, path + ((id(stmt), branch),))


def _ifs(stmts):
    for stmt in stmts:
        if isinstance(stmt, cst.If):
            yield stmt
        if not isinstance(stmt, cst.SimpleStatementLine):
            for block in cf.blocks(stmt):
                yield from _ifs(block)


def _common_prefix(paths: list) -> tuple:
    prefix = paths[0]
    for path in paths[1:]:
        n = 0
        while n < min(len(prefix), len(path)) and prefix[n] == path[n]:
            n += 1
        prefix = prefix[:n]
    return prefix


def _is_none(atom, statements) -> bool:
    """Whether ``atom`` is None: the literal, or a pick ``t[k]`` in ``statements`` of a tuple
    display there whose entry ``k`` is (a batched custom rule's cotangents, ``(g * y, None)``)."""
    if isinstance(atom, cst.Name) and atom.value == "None":
        return True
    bound = {a.target: a.value for a in dataflow.walk(statements) if a.kind == "assign"}
    value = bound.get(atom.value) if isinstance(atom, cst.Name) else None
    if not (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and len(value.slice) == 1
            and isinstance(value.slice[0].slice, cst.Index)):
        return False
    display, k = bound.get(value.value.value), cf.int_literal(value.slice[0].slice.value)
    return isinstance(display, cst.Tuple) and k is not None and -len(display.elements) <= k < len(display.elements) \
        and _is_none(display.elements[k].value, [])


def _has_code(stmts) -> bool:
    return any(not (isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Pass)) for s in stmts)


# ------------------------------------------------------------------ transform
def reverse_mode(core: CoreFunction, argnums=0, has_aux=False, returns="grad") -> CoreFunction:
    """grad / value_and_grad / vjp of ``core`` (see the module docstring).

    ``argnums`` as an int gives one gradient; as a tuple, a tuple of them.
    """
    single = not isinstance(argnums, tuple)
    argnums = (argnums,) if single else argnums
    core = CoreFunction(node=core.node, scope=copy.deepcopy(core.scope), sources=dict(core.sources),
                        constants=dict(core.constants), functions=dict(core.functions))
    core = structure_exits(core)
    core.node = core.node.with_changes(body=cf.block(isolate_conditions(list(core.node.body.body), core.scope)))
    func = core.node
    params = [p.name.value for p in func.params.params]
    for i in argnums:
        if not -len(params) <= i < len(params):
            raise ValueError(f"argnums {i} is out of range for {func.name.value}() with {len(params)} parameters")
    wrt = [params[i] for i in argnums]
    body = list(func.body.body)
    last = body[-1] if body else None
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return)
            and last.body[0].value is not None):
        raise TransformError(f"{func.name.value}() returns nothing to differentiate")
    returned = last.body[0].value
    forward_stmts = body[:-1]
    aux = None
    if has_aux:
        if not (isinstance(returned, cst.Tuple) and len(returned.elements) == 2):
            raise TransformError(f"has_aux=True needs {func.name.value}() to return a pair (output, aux)")
        returned, aux = returned.elements[0].value, returned.elements[1].value
    if returns != "vjp" and isinstance(returned, cst.Tuple):
        raise TypeError(f"grad requires a scalar output, but {func.name.value}() returns a tuple")
    outputs = _output_leaves(returned)          # (path into the output, atom), a pytree's leaves
    output_names = [n for _, atom in outputs for n in atom_names(atom)]
    analysis = Analysis(func.with_changes(body=cf.block(forward_stmts)), wrt if returns != "vjp" else params,
                         output_names, core.sources, Shapes(core))
    reverse = _Reverse(core, analysis)
    forward = reverse.forward(forward_stmts)
    for name in params:      # a reassigned parameter's first value goes on its tape too
        if analysis.taped(name):
            stack = reverse.stack(name)
            forward.insert(0, cf.assign(stack, cf.call("rt.push", [cst.Name(stack), cst.Name(name)])))
    # Values the generated function returns are copied before the backward
    # sweep, which puts back overwritten values into variables and arrays.
    kept: dict[str, str] = {}
    if returns == "value_and_grad" or has_aux:
        kept_atoms = ([returned] if returns == "value_and_grad" else []) + ([aux] if has_aux else [])
        for name in dict.fromkeys(n for atom in kept_atoms for n in atom_names(atom)):
            kept[name] = core.scope.claim(f"{name}_value")
            forward += _kept_copy(kept[name], name, analysis.tuples.get(name), core.scope)
        returned_value = dataflow.renamed(returned, kept)
        aux = dataflow.renamed(aux, kept) if aux is not None else None
    else:
        returned_value = returned
    seed_param = core.scope.claim("out_bar") if returns == "vjp" else None
    backward = reverse.backward(forward_stmts)
    # The seeds go right after the top-level zero initialisations.
    seed_stmts = []
    for path, atom in outputs:
        if not (isinstance(atom, cst.Name) and atom.value in analysis.active):
            continue
        if seed_param is None:
            held = core.scope.temp()
            seed_stmts.append(cf.assign(held, cf.call("rt.scalar_seed", [atom])))
        elif not path:
            held = core.scope.temp()
            seed_stmts.append(cf.assign(held, cst.Name(seed_param)))
        else:     # the output's cotangent has its structure: out_bar[1][0] for output[1][0]
            held = seed_param
            for i in path:
                part = core.scope.temp()
                seed_stmts.append(cf.assign(part, cst.Subscript(cst.Name(held), [
                    cst.SubscriptElement(cst.Index(cf.literal(i)))])))
                held = part
        seed_stmts += reverse.accumulate(atom.value, cst.Name(held))
    n_init = reverse.top_level_inits
    backward = backward[:n_init] + seed_stmts + backward[n_init:]
    if backward:
        backward[0] = _prepend_comment(backward[0], "# backward sweep: cotangents flow from the output back to the inputs")
    grads_of = wrt if returns != "vjp" else params
    grad_atoms = []
    for name in grads_of:
        if name in analysis.active:
            grad_atoms.append(cst.Name(reverse.bar(name)))
        else:
            zero = core.scope.claim(reverse.bar(name))
            backward.append(cf.assign(zero, cf.call(ZERO_COTANGENT, [cst.Name(name)])))
            grad_atoms.append(cst.Name(zero))
    grads = grad_atoms[0] if (returns != "vjp" and single) else cf.tuple_of(grad_atoms)
    if returns == "grad":
        result = cf.tuple_of([grads, aux]) if has_aux else grads
    elif returns == "value_and_grad":
        value = cf.tuple_of([returned_value, aux]) if has_aux else returned_value
        result = cf.tuple_of([value, grads])
    else:
        result = grads
    inits = [cf.assign(stack, cf.call("rt.stack")) for stack in reverse.stacks.values()]
    if forward:
        forward[0] = _prepend_comment(forward[0], "# forward sweep: the original computation, recording what the backward sweep needs")
    new_body = inits + forward + backward + [cf.statement(cst.Return(result))]
    new_params = list(func.params.params)
    if seed_param:
        new_params.append(cst.Param(cst.Name(seed_param)))
    func = func.with_changes(params=func.params.with_changes(params=new_params), body=cf.block(new_body))
    func = dataflow.remove_dead_code(func)
    func = simplify.merge_first_contributions(func, reverse.mutated_bars(), ZERO_COTANGENT)
    func = simplify.fold_constants(func)
    core.node = dataflow.remove_dead_code(fuse_backward_loops(dataflow.remove_dead_code(func)))
    return core


def _output_leaves(returned, path=()) -> list:
    """(path, atom) of each leaf of a returned value: ``return a, (b, c)`` has leaves at (0,),
    (1, 0) and (1, 1)."""
    if isinstance(returned, (cst.Tuple, cst.List)):
        return [leaf for i, el in enumerate(returned.elements) for leaf in _output_leaves(el.value, path + (i,))]
    return [(path, returned)]


@register("grad")
def grad_transform(core, argnums=0, has_aux=False):
    return reverse_mode(core, argnums, has_aux, "grad")


@register("value_and_grad")
def value_and_grad_transform(core, argnums=0, has_aux=False):
    return reverse_mode(core, argnums, has_aux, "value_and_grad")


@register("vjp")
def vjp_transform(core, has_aux=False):
    return reverse_mode(core, (), has_aux, "vjp")
