"""An accumulating loop split in two, so that its gradient part vectorises (CPU target).

Reverse mode's sweep fusion (``transforms/sweep_fusion.py``) writes the
gradient of ``s += term(x, i)`` as one loop: each iteration adds its term to
``s`` and, right after, its adjoint into the gradient arrays::

    for i in range(_t1):
        ...
        s = s + _t12                    # the value
        ...
        _t56 = x_bar[i]
        x_bar[i] = _t56 + _t51          # the gradient, at i
        _t58 = x_bar[_t2]               # (_t2 = i + 1)
        x_bar[_t2] = _t58 + _t44        # and at i + 1

LLVM vectorises neither half there.  The sum is a float reduction, which it
keeps in order, so that half is scalar code whatever happens (``jit(f)`` runs
that way too); and ``x_bar[i + 1]``, written in one iteration, is read back as
``x_bar[i]`` in the next, a dependence through memory.  So for the CPU target
such a loop becomes two, each with the statements it needs (the second
computes again what it reads of the first):

    for i in range(_t1):                # the value alone: f's own loop
        ...
        s = s + _t12
    x_bar_carry = nl.scalar_like(x_bar, 0.0)
    for i in range(_t1):                # the gradient, which vectorises
        ...
        _t56 = x_bar[i]
        _t63 = _t56 + x_bar_carry       # what iteration i - 1 gave x_bar[i]
        x_bar[i] = _t63 + _t51
        x_bar_next = _t44               # x_bar[i + 1]'s share, carried in a scalar
        x_bar_carry = x_bar_next
    if 0 < _t1:
        x_bar[_t1] = x_bar[_t1] + x_bar_carry

Sweep fusion's check after its loop, grad's seed taken again where the loop
ran no iteration, goes: the seed taken between the two loops has made it.

Every element's additions stay in their order, so the gradient is the same
to the bit (but for the sign of a zero).  Rosenbrock's gradient took 2.1-2.4x
``jit(f)`` as one loop, and 1.5-1.7x split so, by hand.

A loop is split only when all of these hold (anything else is left as it was):
it is ``for i in range(stop)`` or ``range(start, stop)`` at the top level, of
simple statements each setting a name once; the names it carries from one
iteration to the next (``s``) are set by the statements of the first loop
only, and the second reads them only for their shapes or through
``rt.scalar_seed`` (grad's 1.0, taken once between the loops, with what its
argument needs of them); every in-place write is an accumulation
``t = g[k]; u = t + c; g[k] = u`` into an array made by ``rt.zeros_like``
before the loop and touched nowhere else in it, at ``i - 1``, ``i`` or
``i + 1``; and nothing after the loop reads what it set other than the
carried names.  An array written at two neighbouring offsets, once at the
higher (``i + 1`` beside ``i``, or ``i`` beside ``i - 1``), has that share
carried in a scalar to the next iteration, which adds it where the lower
offset writes, and the last iteration's goes in after the loop.  Written at
one offset, nothing crosses iterations; at all three, the writes stay as
they were (in the order they were, so still exact).

And it is split only where that was measured to pay (``_pays``): an adjoint
of at least ``SPLIT_FROM_OPERATIONS`` arithmetic operations, and no call in
what the second loop computes again.  A loop of a few operations ran faster
as one, the adjoint's work hidden behind the sum's chain of additions; one
with a sin or an exp lost most, computing it twice.
"""
from __future__ import annotations

import libcst as cst

from .. import core_form as cf
from .. import dataflow, walk
from ..dataflow import ValueReads
from ..transforms.sweep_fusion import COMMENT as FUSED
from ..transforms.sweep_fusion import range_args
from .numba_lowering import cpu_option

COMMENTS = ("# the value alone: its sums in a loop of their own (a reduction in order, as in f)",
            "# the gradient: each iteration's adjoint, in a loop of its own that vectorises")


def split_accumulating_loops(core: cf.CoreFunction) -> cf.CoreFunction:
    body = list(core.node.body.body)
    out: list = []
    taken: dict = {}        # a seed taken between two loops (its code) -> the names it reads and sets
    for position, stmt in enumerate(body):
        split = _split(stmt, body[:position], body[position + 1:], core.scope) if isinstance(stmt, cst.For) else None
        if split is not None:
            statements, seeds = split
            out += statements
            taken.update((cf.code_of(seed.body[0]), dataflow.all_names(seed.body[0])) for seed in seeds)
            continue
        if isinstance(stmt, cst.SimpleStatementLine) and cf.code_of(stmt.body[0]) in taken:
            # sweep fusion's check after its loop that the output is a scalar: the seed
            # taken between the two loops has checked it, also where the loop ran no iteration
            continue
        set_here = {a.target for a in dataflow.walk([stmt]) if a.target is not None}
        taken = {code: names for code, names in taken.items() if not names & set_here}
        out.append(stmt)
    node = core.node.with_changes(body=cf.block(out))
    return cf.CoreFunction(node=node, scope=core.scope, sources=core.sources, constants=core.constants,
                           functions=core.functions)


def _range(loop: cst.For):
    """``(start, stop)`` of ``for i in range([start,] stop)`` with atoms for bounds, or None."""
    args = range_args(loop)
    if args is None or not 1 <= len(args) <= 2 or not all(cf.is_atom(arg) for arg in args):
        return None
    return (cf.literal(0), args[0]) if len(args) == 1 else (args[0], args[1])


class _Body:
    """What a loop body sets, reads and writes, statement by statement."""

    def __init__(self, stmts):
        self.stmts = stmts
        self.parts = [dataflow.classify(s) for s in stmts]
        targets = [a.target for a in self.parts if a.kind == "assign"]
        self.set_twice = len(targets) != len(set(targets))
        self.defined = {a.target: k for k, a in enumerate(self.parts) if a.kind == "assign"}   # name -> its statement
        seen: set = set()
        self.carried: set = set()        # read before (or where) the body sets them
        for a in self.parts:
            self.carried |= (self.reads(a) & set(self.defined)) - seen
            if a.kind == "assign":
                seen.add(a.target)

    def reads(self, a) -> set:
        return dataflow.all_names(a.small.value if a.kind == "assign" else a.small)

    def value_reads(self, a) -> set:
        """The names whose values (not only shapes) the statement reads."""
        finder = ValueReads()
        (a.small.value if a.kind == "assign" else a.small).visit(finder)
        return finder.names


def _split(loop: cst.For, before: list, after: list, scope):
    bounds = _range(loop)
    stmts = list(loop.body.body)
    if bounds is None or not stmts or not all(isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                                              for s in stmts):
        return None
    body = _Body(stmts)
    if any(a.kind not in ("assign", "write_into") for a in body.parts) or \
            body.set_twice or not body.carried:
        return None
    index = loop.target.value
    fresh = _zeroed_arrays(before)
    sites = _accumulations(body, index, fresh)
    writes = [k for k, a in enumerate(body.parts) if a.kind == "write_into"]
    if sites is None or not writes:
        return None
    # grad's seed (rt.scalar_seed of the value so far: 1 of its type, the same in every
    # iteration) is taken once between the loops, from what the carried names end as
    seeds = _needs(body, [k for k, a in enumerate(body.parts) if a.kind == "assign" and _is_seed(a.value)],
                   stop_at=set())
    made_between = body.carried | {body.parts[k].target for k in seeds}
    if any(body.reads(body.parts[k]) & set(body.defined) - made_between for k in seeds):
        return None
    first = _needs(body, [body.defined[name] for name in body.carried], stop_at=set())
    second = _needs(body, writes, stop_at=set(seeds))
    # the second loop may read a carried name for its shape only (rt.unbroadcast(s_bar, s)),
    # and of what the seed needs, only the seed: the rest changes from one iteration to the next
    varying = body.carried | {body.parts[k].target for k in seeds if not _is_seed(body.parts[k].value)}
    if any(body.value_reads(body.parts[k]) & varying for k in second) or set(first) & set(writes):
        return None
    later = set().union(*(dataflow.all_names(s) for s in after)) if after else set()
    if (later & set(body.defined)) - made_between:
        return None                      # something after the loop reads a value of its last iteration
    if not _pays(body, first, second):
        return None
    first_loop = loop.with_changes(body=cf.block([stmts[k] for k in first]))
    middle = [stmts[k].with_changes(leading_lines=[]) for k in seeds]
    second_stmts, setup, finish = _carried_shares(body, second, sites, bounds, scope)
    second_loop = loop.with_changes(body=cf.block(second_stmts), leading_lines=[])
    seeds = [stmt for stmt in middle if _is_seed(dataflow.classify(stmt).value)]
    return [_commented(first_loop, COMMENTS[0]), *middle, *setup, _commented(second_loop, COMMENTS[1]), *finish], seeds


# The split costs a second pass over the arrays and what the second loop computes again;
# it buys an adjoint in vector instructions.  Measured on 100,000 float64 (grad / jit(f),
# one loop -> split): adjoints of 20 to 25 operations gained (Rosenbrock 2.0-2.65 -> 1.64,
# the same at i - 1 2.32 -> 1.61, at i alone 2.04 -> 1.57); of 8, the split lost
# ((x[i + 1] - x[i]) ** 2: 1.64 -> 1.71, at i - 1 1.58 -> 1.89), and where the second loop
# computes a function again it lost most (one sin a term: 1.63-2.03 -> 3.01; one exp 1.18 -> 1.32).
SPLIT_FROM_OPERATIONS = 16


def _is_seed(value) -> bool:
    """Whether ``value`` takes grad's seed (its ``grad_seed`` option in the cpu table, templates/cpu.py)."""
    return isinstance(value, cst.Call) and bool(cpu_option(cf.primitive_of(value), "grad_seed"))


def _free(call: cst.Call) -> bool:
    """Whether computing ``call`` again costs nothing worth counting: a literal's dtype witness
    (``nl.scalar_like``, a lowering helper), or a primitive the cpu table (templates/cpu.py) says is
    ``free_to_recompute``."""
    return dataflow.spelling(call) == "nl.scalar_like" or bool(cpu_option(cf.primitive_of(call), "free_to_recompute"))


def _pays(body: _Body, first: list, second: list) -> bool:
    """Whether splitting is measured to pay: enough arithmetic in the second loop, and no
    call there that the first loop made already (see SPLIT_FROM_OPERATIONS)."""
    again = set(first) & set(second)
    for k in again:
        calls = [node for node in walk.nodes(body.parts[k].small) if isinstance(node, cst.Call)]
        if not all(_free(call) for call in calls):
            return False
    operations = sum(isinstance(node, (cst.BinaryOperation, cst.UnaryOperation))
                     for k in second for node in walk.nodes(body.parts[k].small))
    return operations >= SPLIT_FROM_OPERATIONS


def _commented(loop, comment):
    kept = [line for line in loop.leading_lines if line.comment is None or line.comment.value != FUSED]
    return loop.with_changes(leading_lines=[*kept, cst.EmptyLine(comment=cst.Comment(comment))])


def _zeroed_arrays(stmts) -> set:
    """Names the top-level statements before the loop set to ``rt.zeros_like(...)``."""
    names = set()
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            a = dataflow.classify(stmt)
            if a.kind == "assign":
                zeroed = isinstance(a.value, cst.Call) and bool(cpu_option(cf.primitive_of(a.value), "fresh_zeros"))
                (names.add if zeroed else names.discard)(a.target)
    return names


def _offset(atom, index: str, body: _Body):
    """0 for ``i``, 1 or -1 for a name the body sets to ``i + 1`` or ``i - 1``, else None."""
    if isinstance(atom, cst.Name) and atom.value == index:
        return 0
    if isinstance(atom, cst.Name) and atom.value in body.defined:
        value = body.parts[body.defined[atom.value]].value
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract)) and \
                isinstance(value.left, cst.Name) and value.left.value == index:
            right = value.right
            if isinstance(right, cst.Call) and dataflow.spelling(right) == "nl.scalar_like" and len(right.args) == 2:
                right = right.args[1].value
            if cf.int_literal(right) == 1:
                return 1 if isinstance(value.operator, cst.Add) else -1
    return None


def _accumulations(body: _Body, index: str, fresh: set):
    """Each in-place write as ``(array, offset, read, add, write)`` statement numbers, or None
    when a write is anything else or an array written is read or set anywhere else."""
    sites = []
    used: dict = {}
    for k, a in enumerate(body.parts):
        for name in body.reads(a) | ({a.target} if a.kind == "write_into" else set()):
            used.setdefault(name, set()).add(k)
    for k, a in enumerate(body.parts):
        if a.kind != "write_into":
            continue
        target = a.small.targets[0].target
        if a.target not in fresh or len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
            return None
        at = target.slice[0].slice.value
        offset = _offset(at, index, body)
        u = a.value
        if offset is None or not isinstance(u, cst.Name) or u.value not in body.defined:
            return None
        add = body.defined[u.value]
        added = body.parts[add].value
        if not (isinstance(added, cst.BinaryOperation) and isinstance(added.operator, cst.Add)
                and isinstance(added.left, cst.Name) and added.left.value in body.defined):
            return None
        read = body.defined[added.left.value]
        loaded = body.parts[read].value
        if not (isinstance(loaded, cst.Subscript) and cf.code_of(loaded.value) == a.target and len(loaded.slice) == 1
                and cf.code_of(loaded.slice[0].slice) == cf.code_of(target.slice[0].slice)):
            return None
        if used.get(u.value, set()) != {k} or used.get(added.left.value, set()) != {add}:
            return None                  # the old or new value is read elsewhere too
        sites.append((a.target, offset, read, add, k))
    arrays = {site[0] for site in sites}
    if any(used.get(name, set()) - {n for site in sites if site[0] == name for n in (site[2], site[4])}
           for name in arrays):
        return None                      # an accumulated array read or set elsewhere in the body
    return sites


def _needs(body: _Body, roots: list, stop_at: set) -> list:
    """The statement numbers ``roots`` need within the body (their backward slice), in order;
    the statements in ``stop_at`` are taken as given."""
    needed, work = set(), list(roots)
    while work:
        k = work.pop()
        if k in needed or k in stop_at:
            continue
        needed.add(k)
        # (a carried name read is its value from the iteration before: not followed)
        work += [body.defined[name] for name in body.reads(body.parts[k])
                 if name in body.defined and name not in body.carried]
    return sorted(needed)


def _carried_shares(body: _Body, second: list, sites: list, bounds, scope):
    """The second loop's statements, with each array's share at the higher of two neighbouring
    offsets (``i + 1`` beside ``i``, or ``i`` beside ``i - 1``) carried to the next iteration in
    a scalar; and the statements before and after that loop."""
    stmts = {k: body.stmts[k] for k in second}
    setup, finish, ends = [], [], []
    start, stop = bounds
    for array in dict.fromkeys(site[0] for site in sites):
        offsets = {s[1] for s in sites if s[0] == array}
        low, high = min(offsets), max(offsets)
        at_low = [s for s in sites if s[0] == array and s[1] == low]
        at_high = [s for s in sites if s[0] == array and s[1] == high]
        if high != low + 1 or len(at_high) != 1:
            continue                     # one offset (nothing crosses iterations), or more: kept as written
        carry, following = scope.claim(f"{array}_carry"), scope.claim(f"{array}_next")
        setup.append(cf.assign(carry, cf.call("nl.scalar_like", [cst.Name(array), cst.Float("0.0")])))
        _, _, read, add, _ = at_low[0]
        # (t + carry) + c: iteration i - 1's share joins first, as it did through memory
        added = body.parts[add].value
        joined = scope.temp()
        stmts[add] = body.stmts[add].with_changes(body=[cst.Assign(
            [cst.AssignTarget(cst.Name(body.parts[add].target))],
            added.with_changes(left=cst.Name(joined)))])
        stmts[read] = cst.FlattenSentinel([body.stmts[read], cf.assign(joined, cst.BinaryOperation(
            cst.Name(body.parts[read].target), cst.Add(), cst.Name(carry)))])
        _, _, next_read, next_add, next_write = at_high[0]
        share = body.parts[next_add].value.right
        stmts[next_add] = body.stmts[next_add].with_changes(body=[cst.Assign(
            [cst.AssignTarget(cst.Name(following))], share)])
        del stmts[next_read], stmts[next_write]
        ends.append(cf.assign(carry, cst.Name(following)))
        # the last iteration's share goes where it was headed: array[stop - 1 + high]
        ran = scope.temp()
        at = stop if high == 1 else cst.Name(scope.temp())
        last = scope.temp()
        element = cst.Subscript(cst.Name(array), [cst.SubscriptElement(cst.Index(at))])
        branch = [] if high == 1 else [cf.assign(at.value, cst.BinaryOperation(stop, cst.Subtract(), cst.Integer("1")))]
        branch += [cf.assign(last, element), cf.statement(cst.Assign(
            [cst.AssignTarget(element)], cst.BinaryOperation(cst.Name(last), cst.Add(), cst.Name(carry))))]
        finish += [cf.assign(ran, cst.Comparison(start, [cst.ComparisonTarget(cst.LessThan(), stop)])),
                   cst.If(cst.Name(ran), cf.block(branch))]
    out = []
    for k in sorted(stmts):
        item = stmts[k]
        out += list(item.nodes) if isinstance(item, cst.FlattenSentinel) else [item]
    return out + ends, setup, finish
