"""Reverse mode's analysis: what the backward sweep needs from the forward sweep.

* **activity** — which variables depend on the differentiated inputs *and*
  reach the output (only those get cotangents);
* **needed values** — which variables' values the adjoint rules, branch
  conditions and loop bounds of the backward sweep read (a value made in a
  loop by slicing, reshaping, joining or reducing a variable the loop
  rebinds counts even where a rule reads only its shape: that shape may
  change from one iteration to the next);
* **recomputation** — which of those a loop body can compute again from its
  index and values that never change (so they need no tape);
* **taping** — the rest, when a rebinding would lose them.

It reads core form only; ``vjp.py`` writes the code from these facts.
"""
from __future__ import annotations

import libcst as cst

from .. import core_form as cf
from .. import custom, dataflow, primitives, rules
from ..dataflow import Assignment, ValueReads, atom_names, loops
from ..errors import Location, TransformError
from .shapes import SCALAR, UNKNOWN

GETITEM = "getitem"
# the primitives whose result may have another shape than their operands
_SHAPE_MOVING = frozenset({primitives.INDEX, primitives.SHAPE, primitives.REDUCE})
CUSTOM = custom.MARKERS
# The runtime helpers reverse mode writes for itself, which its later passes recognise: a cotangent's
# zero start, and the sum of a contribution down to its operand's shape (transformer/runtime.py)
ZERO_COTANGENT = "rt.zeros_like"
UNBROADCAST = "rt.unbroadcast"


def rule_for(value, location=None):
    """The adjoint rule of the primitive call ``value`` (None: its derivative is zero); a refusal
    names ``location``, the user's line."""
    prim_name = cf.primitive_of(value).name
    table = rules.table("adjoint")
    if prim_name in rules.ZERO_DERIVATIVE:
        return None
    template = table.get(prim_name)
    if template is None:
        reason = rules.UNSUPPORTED["adjoint"].get(prim_name, "it has no adjoint rule")
        raise TransformError(f"cannot differentiate {prim_name}: {reason}", location)
    return rules.variant(template, dataflow.given_keywords(value))


def rule_wrt(template) -> tuple[str, ...]:
    return template.rule_options.get("wrt", ())


def _template_reads(template, wanted=None, shapes_too=False) -> set[str]:
    """The parameters whose *values* a rule's body reads.

    A parameter passed only where its shape matters (``rt.unbroadcast(g, x)``,
    ``np.shape(x)``...) does not count: any value of the variable has the
    right shape, so the forward sweep need not tape it (unless a loop may
    change that shape: ``shapes_too`` gives every parameter the body names).

    ``wanted``: the ``wrt`` parameters whose cotangents the backward sweep keeps (None: all).
    A rule that returns one expression per ``wrt`` parameter reads, for the others, nothing
    they alone need: ``x * y``'s rule reads ``x`` only for ``y``'s cotangent, so where ``y``
    is a constant, ``x`` need not be taped.
    """
    cached = getattr(template, "_reads", None)
    if cached is None:
        cached = template._reads = (_reads_per_result(template, ValueReads),
                                    _reads_per_result(template, _NameFinder))
    everything, per_result = cached[1 if shapes_too else 0]
    if wanted is None or per_result is None:
        return everything
    wrt = rule_wrt(template)
    return set().union(*(reads for param, reads in zip(wrt, per_result) if param in wanted))


def _reads_per_result(template, finder_class):
    """(the names the whole body reads, those each returned element needs) — the second None
    unless the body is simple assignments and a return of one element per ``wrt`` parameter.
    ``finder_class`` says what a read is (ValueReads: a value; _NameFinder: any mention)."""
    from ..source import load

    def reads_of(node) -> set:
        finder = finder_class()
        node.visit(finder)
        return finder.names
    body = load(template).node.body.body
    everything = set().union(*(reads_of(stmt) for stmt in body))
    last = body[-1].body[0] if body and isinstance(body[-1], cst.SimpleStatementLine) else None
    wrt = rule_wrt(template)
    if not (isinstance(last, cst.Return) and isinstance(last.value, cst.Tuple) and len(wrt) > 1
            and len(last.value.elements) == len(wrt)):
        return everything, None
    made: dict[str, set] = {}            # a local the body assigns -> the names its value reads
    for stmt in body[:-1]:
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)):
            return everything, None
        made[small.targets[0].target.value] = set().union(*(made.get(n, {n}) for n in reads_of(small.value)))
    per_result = [set().union(*(made.get(n, {n}) for n in reads_of(element.value))) & everything
                  for element in last.value.elements]
    return everything, per_result


class _NameFinder(cst.CSTVisitor):
    def __init__(self):
        self.names: set[str] = set()

    def visit_Name(self, node):
        self.names.add(node.value)


class Analysis:
    """Which values are active, which need taping, where cotangents start."""

    def __init__(self, func: cst.FunctionDef, wrt: list[str], outputs: list[str], sources: dict | None = None,
                 shapes=None):
        self.func = func
        self.params = {p.name.value for p in func.params.params}
        self.shapes = shapes            # shapes.Shapes of the function, where known: which shapes never change
        self._same_shapes: dict[str, bool] = {}
        self.outputs = set(outputs)
        self.sources = sources or {}    # short file name in origin comments -> the user's path
        self.statements = list(dataflow.walk(func.body.body))
        self.counts = dataflow.write_counts(func)
        self.rebinds = dataflow.write_counts(func, include_setitem=False)
        self.loop_indices = dataflow.loop_indices(func.body.body)
        self._origins = None
        self.tuples = dataflow.tuple_sizes(self.statements)   # reverse mode gives each element a cotangent
        self.active = self._activity(set(wrt), set(outputs))
        self.check_refusals()
        # in-place writes whose overwritten values no one reads (vjp.py keeps nothing for them)
        self.unread_writes, self.unzeroed_writes = _writes_into_unread_new_arrays(
            func.body.body, lambda a: not self.is_active(a))
        self.needed = self._with_viewed_arrays(self._needed() | self._shapes_that_may_change())
        self.recompute = self._recomputable()
        self.recomputed = {dataflow.classify(stmt).target for plan in self.recompute.values() for stmt in plan}

    def diff_operands(self, a: Assignment) -> list[tuple[str, str]]:
        """(parameter, variable) pairs of operands derivatives flow into."""
        if a.kind == "write_into":
            return [("value", n) for n in atom_names(a.value)]
        if a.kind != "assign":
            return []
        if cf.is_atom(a.value):
            return [("value", n) for n in atom_names(a.value)]
        prim = cf.primitive_of(a.value)
        if prim.name == GETITEM:
            return [("x", n) for n in atom_names(a.value.value)]
        if prim.name in CUSTOM:
            return [("inputs", n) for n in atom_names(a.value.args[1].value)]
        template = rule_for(a.value, self.location(a.line))
        if template is None:
            return []
        params = cf.arguments(a.value, prim)
        return [(p, n) for p in rule_wrt(template) if p in params for n in atom_names(params[p])]

    @staticmethod
    def refused_operands(a: Assignment) -> list[tuple[str, str, str]]:
        """(parameter, variable, reason) of the operands ``a``'s adjoint rule refuses (second
        derivatives it does not implement)."""
        if a.kind != "assign" or cf.is_atom(a.value):
            return []
        template = rules.variant(rules.table("adjoint").get(cf.primitive_of(a.value).name),
                                 dataflow.given_keywords(a.value))
        refused = getattr(template, "rule_options", {}).get("refuse", {}) if template else {}
        params = cf.arguments(a.value) if refused else {}
        return [(p, n, reason) for p, reason in refused.items() if p in params for n in atom_names(params[p])]

    def flow_operands(self, a: Assignment) -> list[tuple[str, str]]:
        """diff_operands, and the operands the rule refuses: a derivative would flow through them, so
        they make the result active and check_refusals reports them (dropping them would be a
        silently wrong zero, as rt.prod_vjp's x was under reverse over reverse)."""
        return self.diff_operands(a) + [(p, n) for p, n, _ in self.refused_operands(a)]

    def _activity(self, wrt: set, outputs: set) -> set:
        varied = set(wrt)
        changed = True
        while changed:
            changed = False
            for a in self.statements:
                if a.target and a.target not in varied and \
                        any(n in varied for _, n in self.flow_operands(a)):
                    varied.add(a.target)
                    changed = True
        useful = outputs & varied
        changed = True
        while changed:
            changed = False
            for a in self.statements:
                if a.target in useful:
                    for _, n in self.flow_operands(a):
                        if n in varied and n not in useful:
                            useful.add(n)
                            changed = True
        # reverse over reverse: every pop of a tape with a cotangent gets one, even a pop whose value
        # nothing reads, so that the cotangent tape's entries stay in step with the tape's
        useful |= {a.target for a in self.statements if a.kind == "assign" and cf.tape_operation(a.value) == "pop"
                   and a.target in varied and set(atom_names(cf.operands(a.value)[0])) & useful}
        return useful

    def check_refusals(self):
        """A rule may refuse an operand it cannot differentiate (second derivatives
        it does not implement): refuse the whole transform rather than drop it."""
        for a in self.statements:
            if a.target not in self.active:
                continue
            for param, name, reason in self.refused_operands(a):
                if name in self.active:
                    raise TransformError(f"cannot differentiate {cf.primitive_of(a.value).spelling}() with respect "
                                         f"to {param}: {reason} is not implemented", self.location(a.line))

    def location(self, line) -> Location | None:
        """Where in the user's file the core statement ``line`` comes from, for an error."""
        if self._origins is None:
            self._origins = cf.origins(self.func.body.body)
        origin = self._origins.get(id(line))
        return Location(self.sources.get(origin[0], origin[0]), origin[1]) if origin else None

    def is_active(self, a: Assignment) -> bool:
        return a.target in self.active and any(n in self.active for _, n in self.diff_operands(a)) \
            or (a.kind == "write_into" and a.target in self.active)

    def _needed(self) -> set:
        """Variables whose values the backward sweep reads."""
        needed = _reversed_control_reads(self.func.body.body)
        for a in self.statements:
            if not self.is_active(a):
                continue
            if a.kind == "write_into":
                needed.update(dataflow.index_names(a.small.targets[0].target))
                # its backward sweep reads v only for its shape (rt.unbroadcast): v needs
                # keeping only where a loop may change that shape
                needed.update(n for n in atom_names(a.value) if not self.same_shape_always(n))
                if id(a.line) not in self.unread_writes:    # the array the write is undone in
                    needed.add(a.target)
                continue
            if cf.is_atom(a.value):
                continue
            prim = cf.primitive_of(a.value)
            params = cf.arguments(a.value, prim)
            if prim.name == GETITEM:
                if not self.picks_element(a.value):    # a tuple's pick adds into one element's cotangent
                    needed.update(dataflow.index_names(a.value))
                    needed.update(atom_names(a.value.value))
                continue
            if prim.name in CUSTOM:      # the backward rule reads the residuals (a custom_jvp's: its inputs)
                needed.update(atom_names(a.value.args[2 if prim.name == custom.VJP_CALL else 1].value))
                continue
            template = rule_for(a.value, self.location(a.line))
            wanted = {p for p in rule_wrt(template) if p in params and
                      any(n in self.active for n in atom_names(params[p]))}
            reads = _template_reads(template, wanted)
            shapes_read = _template_reads(template, wanted, shapes_too=True)
            if "z" in reads:
                needed.add(a.target)
            for pname, atom in params.items():
                if pname in reads and pname != "index":
                    needed.update(atom_names(atom))
                elif pname in shapes_read and pname != "index":
                    for name in atom_names(atom):
                        if not self.same_shape_always(name):
                            needed.add(name)     # the backward sweep needs the shape it had here
        return needed

    def same_shape_always(self, name: str) -> bool:
        known = self._same_shapes.get(name)
        if known is None:
            self._same_shapes[name] = False      # (while deciding: a cycle of names proves nothing)
            known = self._same_shapes[name] = self._same_shape_always(name)
        return known

    def _same_shape_always(self, name: str) -> bool:
        """Whether every value ``name`` is given has one shape: it is set once, or its shape token
        (shapes.py) names one shape class across all its assignments, or it has one shape each
        pass, or it settles after a constant start.  A loop may otherwise change it from one
        pass to the next (``s = s + w`` with a number ``s`` and an array ``w``)."""
        if not self.rebinds.unstable(name):
            return True
        token = self.shapes.of_name(name) if self.shapes is not None else UNKNOWN
        return token == SCALAR or token[1] is not None or self._same_shape_each_pass(name) or \
            self._settles_after_a_constant_start(name)

    def _settles_after_a_constant_start(self, name: str) -> bool:
        """``s = 0.0`` before a loop and ``s = s + term`` in it, the term's shape the same in
        every pass (``x[i] ** 2``): from the first pass on, ``s`` has the one shape of ``s``
        broadcast with the term.  Only the start's shape differs, and a constant start's
        cotangent goes nowhere, so the backward sweep may read the last shape for every pass.
        One statement in the loop sets ``s``: two, adding terms of two shapes, would give
        ``s`` between them a shape of its own in the first pass, and an active one."""
        sets = [a for a in self.statements if a.target == name and a.kind == "assign"]
        if len(sets) != 2 or self.counts.count.get(name) != len(sets):
            return False
        start, updates = sets[0], sets[1:]
        if start.loop_depth != 0 or self.is_active(start) or any(a.loop_depth == 0 for a in updates):
            return False
        for a in updates:
            prim = cf.primitive_of(a.value) if not cf.is_atom(a.value) else None
            if prim is None or prim.shape_rule != "elementwise":
                return False
            operands = set(dataflow.value_reads(a.value))
            if name not in operands or not all(self._same_shape_each_pass(n) for n in operands - {name}):
                return False
        return True

    def _same_shape_each_pass(self, name: str, seen=None) -> bool:
        """Whether ``name`` has one shape in every pass of the loops around it: it is never set
        (a parameter, a constant), a loop index, or set once from such values by elementwise
        operations and reads at numbers or fixed slices (``x[i]``, ``x[i + 1]``, ``x[1:]``)."""
        seen = {} if seen is None else seen          # name -> its answer (None: being decided)
        if name in seen:
            return bool(seen[name])
        seen[name] = None
        seen[name] = self._one_shape_each_pass(name, seen)
        return seen[name]

    def _one_shape_each_pass(self, name: str, seen: dict) -> bool:
        if name in self.loop_indices or self.counts.count.get(name, 0) == 0:
            return True
        if self.counts.count.get(name) != 1:
            return self.same_shape_always(name)      # set more than once, to values of one shape
        a = next((a for a in self.statements if a.target == name and a.kind == "assign"), None)
        if a is None:
            return name in self.params          # a parameter, never set again
        if cf.is_atom(a.value):
            return all(self._same_shape_each_pass(n, seen) for n in dataflow.value_reads(a.value))
        prim = cf.primitive_of(a.value)
        if prim is None:
            return False
        if prim.name == GETITEM:
            base = a.value.value
            if not isinstance(base, cst.Name) or not self._same_shape_each_pass(base.value, seen):
                return False
            for element in a.value.slice:
                part = element.slice
                if isinstance(part, cst.Index):
                    is_number = self.shapes is not None and self.shapes.of_value(part.value) == SCALAR
                    if not is_number or not all(self._same_shape_each_pass(n, seen) for n in dataflow.value_reads(part.value)):
                        return False
                elif not all(b is None or cf.int_literal(b) is not None for b in (part.lower, part.upper, part.step)):
                    return False
            return True
        if prim.shape_rule != "elementwise":
            return False
        return all(self._same_shape_each_pass(n, seen) for n in dataflow.value_reads(a.value))

    def picks_element(self, value) -> bool:
        """Whether ``value`` is ``t[k]`` of a variable ``t`` that holds a tuple."""
        return isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and \
            value.value.value in self.tuples

    def element_of(self, value: cst.Subscript, location) -> int:
        """``k`` of the pick ``t[k]``, made non-negative; a TransformError unless ``k`` is a number
        written in the code (each element of a tuple has its own cotangent)."""
        size = self.tuples[value.value.value]
        item = value.slice[0].slice if len(value.slice) == 1 else None
        k = cf.int_literal(item.value) if isinstance(item, cst.Index) else None
        if size is None or k is None or not -size <= k < size:
            raise TransformError("differentiating through a tuple or list of arrays held in one variable needs "
                                 "each element picked at a position written as a number (t[0], t[-1]), in a "
                                 "variable that holds tuples of one length", location,
                                 "give each array its own name: a, b = t (or sign, logabsdet = np.linalg.slogdet(m))")
        return k % size

    def _with_viewed_arrays(self, needed: set) -> set:
        """``needed`` and the arrays written in place that a needed value may be a view of
        (``_t0 = s[0]`` before ``s[0] = ...``): the backward sweep reads such a view after it
        has put back what later writes overwrote, so those writes must be undone too."""
        viewed, changed = set(needed), True
        while changed:
            changed = False
            for a in self.statements:
                if a.target in viewed:
                    for name in dataflow.shared_memory(a):
                        if name not in viewed:
                            viewed.add(name)
                            changed = True
        written = {a.target for a in self.statements if a.kind == "write_into"}
        return needed | (viewed & written)

    def _shapes_that_may_change(self) -> set:
        """Values made in a loop by slicing, reshaping, joining or reducing a variable the
        loop rebinds (``_t0 = out[1:]`` beside ``out = _t0 - _t1``): their shapes may differ
        from one iteration to the next, so the backward sweep needs each iteration's own
        value, even where a rule reads only its shape."""
        changing: set = set()
        for a in dataflow.walk(self.func.body.body):
            if a.loop_depth == 0 or a.kind != "assign" or cf.is_atom(a.value):
                continue
            prim = cf.primitive_of(a.value)
            if prim is not None and prim.kind in _SHAPE_MOVING and \
                    any(self.rebinds.unstable(n) for n in dataflow.value_reads(a.value)):
                changing.add(a.target)
        return changing

    def taped(self, name: str) -> bool:
        """Rebinding ``name`` loses a value the backward sweep reads.  (Writes into
        an array are undone in place by the backward sweep, so they need no tape.)"""
        return name in self.needed and self.rebinds.unstable(name) and name not in self.loop_indices \
            and name not in self.recomputed

    # ------------------------------------------------------- recomputation
    def _recomputable(self) -> dict:
        """Per block inside a loop: statements whose values the backward sweep
        can compute again at the start of the reversed block, instead of taping.

        A statement qualifies when it assigns a variable written nowhere else
        and read only inside this block, from literals, loop indices, values
        that never change, and earlier qualifying statements — like
        ``_t0 = x[i]`` in a loop over ``i``.  Tapenade stores only what is
        overwritten before it is needed; this is that idea for loop bodies.
        Plans are keyed like block paths: ``(id(statement), branch)``.
        """
        plans: dict = {}
        stable = {n for n, c in self.counts.count.items() if not self.counts.unstable(n)}
        all_reads = _reads_under(self.func.body.body)
        base = set(stable) | self.loop_indices

        def plan_block(key, stmts, known):
            inside = _reads_under(stmts)
            known = set(known)
            plan = []
            for stmt in stmts:
                if isinstance(stmt, cst.SimpleStatementLine):
                    a = dataflow.classify(stmt)
                    if a.kind != "assign" or self.counts.count.get(a.target) != 1 or \
                            all_reads.get(a.target, 0) != inside.get(a.target, 0):
                        continue
                    if cf.tape_operation(a.value):
                        continue
                    if all(n in known for n in dataflow.value_reads(a.value)):
                        plan.append(stmt)
                        known.add(a.target)
                elif isinstance(stmt, cst.If):
                    for branch, block in enumerate(cf.blocks(stmt)):
                        plan_block((id(stmt), branch), block, known)
                elif isinstance(stmt, (cst.For, cst.While)):
                    plan_block((id(stmt), 0), stmt.body.body, base)
            plans[key] = plan

        for stmt in self.func.body.body:
            for loop in ([stmt] if isinstance(stmt, (cst.For, cst.While)) else loops([stmt])):
                if (id(loop), 0) not in plans:
                    plan_block((id(loop), 0), loop.body.body, base)
        return plans


def is_exit_break(stmt) -> bool:
    """``if flag: break`` at the end of a loop body (left by ``structure_exits``)."""
    return isinstance(stmt, cst.If) and stmt.orelse is None and len(stmt.body.body) == 1 and \
        isinstance(stmt.body.body[0], cst.SimpleStatementLine) and isinstance(stmt.body.body[0].body[0], cst.Break)


def isolate_conditions(stmts, scope) -> list:
    """``if c:`` whose branches assign ``c`` again (``a < b < c`` does) tests a copy
    of ``c``, so the backward sweep can read which branch ran."""
    out = []
    for stmt in stmts:
        if isinstance(stmt, cst.If):
            assigned = {a.target for block in cf.blocks(stmt) for a in dataflow.walk(block)}
            blocks = [isolate_conditions(list(block), scope) for block in cf.blocks(stmt)]
            test = stmt.test
            if isinstance(test, cst.Name) and test.value in assigned:
                branch = scope.claim(f"{test.value}_branch")
                out.append(cf.assign(branch, test))
                test = cst.Name(branch)
            stmt = stmt.with_changes(test=test, body=cf.block(blocks[0]),
                                     orelse=cst.Else(cf.block(blocks[1])) if stmt.orelse is not None else None)
        elif isinstance(stmt, (cst.For, cst.While)):
            stmt = stmt.with_changes(body=cf.block(isolate_conditions(list(stmt.body.body), scope)))
        out.append(stmt)
    return out


def _reversed_control_reads(stmts) -> set[str]:
    """Names the backward sweep's control flow reads: if-conditions and for-loop
    bounds (a while loop replays its recorded trip count; ``if flag: break``
    needs nothing)."""
    names: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, cst.If) and not is_exit_break(stmt):
            names.update(atom_names(stmt.test))
        elif isinstance(stmt, cst.For):
            names.update(n for arg in stmt.iter.args for n in atom_names(arg.value))
        for block in cf.blocks(stmt):
            names |= _reversed_control_reads(block)
    return names


def _reads_under(stmts) -> dict:
    """How many statements under ``stmts`` read each name."""
    counts: dict = {}
    for a in dataflow.walk(stmts):
        for name in set(dataflow.reads(a)):
            counts[name] = counts.get(name, 0) + 1
    for name in dataflow.control_reads(stmts):
        counts[name] = counts.get(name, 0) + 1
    return counts


def _mentions(stmt, name: str) -> bool:
    finder = _NameFinder()
    stmt.visit(finder)
    return name in finder.names


def carried(name: str, loop) -> bool:
    """True unless each pass of the loop body assigns ``name`` before reading it."""
    return first_touch(loop.body.body, name) == "use"


def first_touch(stmts, name: str, flows=None) -> str | None:
    """"def" if ``stmts`` surely assign ``name`` before any read, "use" if some
    path may read it first, None if they never mention it.  With ``flows`` (an
    Assignment -> whether a derivative flows from it into ``name``), only such reads
    count: a read for a shape or a test passes no cotangent back."""
    partial = False
    for stmt in stmts:
        if not _mentions(stmt, name):
            continue
        if isinstance(stmt, cst.SimpleStatementLine):
            a = dataflow.classify(stmt)
            read = name in dataflow.value_reads(a.value) if a.kind == "assign" else True
            if flows is not None:
                read = flows(a) or (a.kind != "assign" and a.target == name)    # a write into it
            if a.kind == "assign" and a.target == name and not read:
                # (after a path that may have assigned it, a plain read-free assignment still
                # defines it on every path; without ``flows`` that is left conservative)
                return "use" if partial and flows is None else "def"
            if read or flows is None:
                return "use"
            continue
        if partial and flows is None:
            return "use"
        if isinstance(stmt, cst.If):
            if name in atom_names(stmt.test) and flows is None:
                return "use"
            results = [first_touch(block, name, flows) for block in cf.blocks(stmt)]
            if len(results) == 1:
                results.append(None)
            if "use" in results:
                return "use"
            if results == ["def", "def"]:
                return "def"
            partial = True      # assigned on one path only: a later read may see an older value
        else:                   # a nested loop may run zero times
            if first_touch(stmt.body.body, name, flows) == "use" or (flows is None and isinstance(stmt, cst.For) and
                                                                      name in {n for a in stmt.iter.args
                                                                               for n in atom_names(a.value)}):
                return "use"
            partial = True
    return "def" if partial else None


def _writes_into_unread_new_arrays(stmts, made_inactive=lambda a: False) -> tuple[set[int], set[int]]:
    """The in-place writes (their statements' ids) into an array made in the same block by a
    creating primitive (np.empty_like, np.zeros...) and read by nothing since: what such a write
    overwrites was never read, so the backward sweep need not keep it to put it back (a NumPy
    right-hand side's ``z = np.empty_like(y); z[0] = ...; z[1:] = ...``).  No creating primitive's
    rule reads the array it made, only its cotangent.

    Second, those of them that need no zeroing of the cotangent they read: the array was made by
    an inactive creation (``made_inactive``: no rule reads its cotangent) and every write into it
    since was into a region apart from this one.  Then nothing later in the backward sweep reads
    that region of the cotangent, so it is left as it is and read as a view, with no copy."""
    found: set[int] = set()
    unzeroed: set[int] = set()
    unread: dict[str, list | None] = {}    # made in this block, read by nothing since -> its writes
    for stmt in stmts:                      # (None: made by an active creation)
        if not isinstance(stmt, cst.SimpleStatementLine):
            for name in dataflow.all_names(stmt) & unread.keys():
                del unread[name]
            for block in cf.blocks(stmt):
                inner_found, inner_unzeroed = _writes_into_unread_new_arrays(block, made_inactive)
                found |= inner_found
                unzeroed |= inner_unzeroed
            continue
        a = dataflow.classify(stmt)
        if a.kind == "write_into":
            target = a.small.targets[0].target
            reads = set(dataflow.index_names(target)) | set(atom_names(a.small.value))
            if a.target in unread and a.target not in reads:
                found.add(id(stmt))
                earlier = unread[a.target]
                if earlier is not None and all(_apart(target, other) for other in earlier):
                    unzeroed.add(id(stmt))
                if earlier is not None:
                    earlier.append(target)
            for name in reads & unread.keys():
                del unread[name]
            continue
        if a.kind != "assign":
            for name in dataflow.all_names(stmt) & unread.keys():
                del unread[name]
            continue
        for name in (set(dataflow.value_reads(a.value)) | set(atom_names(a.value))) & unread.keys():
            del unread[name]
        unread.pop(a.target, None)
        prim = cf.primitive_of(a.value)
        if prim is not None and prim.kind == primitives.CREATE:
            unread[a.target] = [] if made_inactive(a) else None
    return found, unzeroed


def _apart(one: cst.Subscript, other: cst.Subscript) -> bool:
    """Whether two index expressions surely name no element in common: on some axis both give
    literal ranges (``z[0]`` and ``z[1:]``, ``z[:, :2]`` and ``z[:, 2]``) that do not meet.  Only
    the parts before any other index count: an array there may take several axes, or add some."""
    for a, b in zip(one.slice, other.slice):
        a, b = _literal_range(a.slice), _literal_range(b.slice)
        if a is None or b is None:
            return False
        if a[1] <= b[0] or b[1] <= a[0]:
            return True
    return False


def _literal_range(part):
    """The [start, stop) an index part takes of its axis, where it is an int or a slice of
    non-negative literals and step 1; else None."""
    if isinstance(part, cst.Index):
        k = cf.int_literal(part.value) if part.star is None else None
        return (k, k + 1) if k is not None and k >= 0 else None
    lower = 0 if part.lower is None else cf.int_literal(part.lower)
    upper = float("inf") if part.upper is None else cf.int_literal(part.upper)
    step = 1 if part.step is None else cf.int_literal(part.step)
    if lower is None or upper is None or lower < 0 or upper < 0 or step != 1:
        return None
    return lower, upper
