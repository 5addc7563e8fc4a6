"""vmap on the CPU target in SIMD lanes: a while loop over a group of examples at once.

``cpu_vmap`` runs per-example scalar code once per example.  That is scalar
machine code: one Euler step of one example at a time.  When the code is a
run of arithmetic, then ``while`` loops whose bodies are arithmetic too (an
integrator, a fixed-point iteration), the examples can instead be taken in
groups (``group_size``: 64 to 1024 of them, about four groups a thread),
every step of the loop computed for the whole group by one loop over its
lanes, which LLVM turns into vector instructions::

    t = t_lanes[0]                           # the same in every lane
    while still > 0:                         # while any lane of the group is active
        if 2 * still <= swept:               # half the lanes swept are done:
            moved, swept = active_first(active_lanes, swept)   # the active ones to the front
            x_lanes[:len(moved)] = x_lanes[moved]
            ...
        _t2 = vm.sin(t)                      # the same in every active lane: once a step
        t_next = t + 0.01
        still = 0
        for lane in range(swept):
            on = active_lanes[lane] != 0     # this lane's example is still in the loop
            x = x_lanes[lane]
            ...                              # the rest of the user's loop body, as written
            x_lanes[lane] = x                # only the next step reads x: no mask needed
            if on:                           # a finished lane keeps the values of its last step
                t_lanes[lane] = t_next
            active_lanes[lane] = on & bool(_t0)
            still += active_lanes[lane]
        t = t_next
    restore_lane_order(t_lanes, order)       # the values back at their lanes

**Once a step.**  A value computed only from constants and such values is the
same in every lane that is still in the loop (``_find_uniform``): every
active lane has taken as many steps as the others, so a time ``t = 0.0``
advanced by ``t = t + dt`` is, and so is ``sin(t)``.  Those statements run
once a step, before the loop over the lanes, under a new name where the
step sets a variable again whose old value is still to be read.  For the
benchmark's ODE (a sin of the time in every step) that made
``jit(vmap(f))`` 8x faster.

**Lanes that are done leave the sweep.**  When half the lanes swept have
finished, the active ones move to the front of every array the loop uses
and only they are swept from then on; the arrays code after the loop reads
are put back in lane order when it ends.  So a few slow examples cost
about what they cost alone, and groups can be large.

Each lane does exactly the operations its example does alone, in the same
order, so the results equal the per-example ones to the bit; lanes that are
done compute values nobody keeps.  That is only harmless for operations that
cannot raise or stop, so a body may hold elementwise arithmetic, comparisons,
``where`` and math functions, with divisions and powers only by nonzero
literal constants (numba raises ZeroDivisionError for ``x / 0.0``).  sin and
cos of a value that differs between lanes call the vectorised kernel for
every lane, which is exact up to ``numba_vecmath._TRIG_BOUND``; a group in
which an active lane went beyond it is computed again one example at a time,
by the per-example code (computed once a step, they are the per-example
code's own sin and cos).

Each variable a later step reads lives in an array of one value per lane.
Its dtype is that of the variable's last value when lane 0 is first run on
its own, which is the type the per-example code gives it wherever the lanes
read it if it is set in one place, or in a loop and just before it (numba
unifies those two); a variable set anywhere else again keeps the
per-example loop, as does anything else (``if``, ``for``, ``break``,
indexing, a variable first set inside a loop, an argument not batched);
arguments that are not one scalar per example (``ndim != 1``) take it too,
decided when numba compiles the driver.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
import numba
import numpy as np

from .. import core_form as cf
from .. import dataflow, primitives
from .numba_lowering import cpu_option

GROUP_MIN, GROUP_MAX = 64, 1024   # examples in a group (see group_size and the module's docstring)

# Without a ``lane_safe`` option in the cpu table (templates/cpu.py), these kinds of operation cannot
# raise: a comparison, and a function of one number (NaN or inf where it is undefined)
_LANE_SAFE_KINDS = (primitives.COMPARE, primitives.UNARY)


def _literal_value(node):
    """The number a literal operand spells (``2.0``, ``-1``, ``nl.scalar_like(x, 0.5)``), or None."""
    if isinstance(node, cst.Call) and cf.code_of(node.func) == "nl.scalar_like" and len(node.args) == 2:
        node = node.args[1].value
    negative = isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
    inner = node.expression if negative else node
    if isinstance(inner, (cst.Integer, cst.Float)):
        value = float(inner.value.replace("_", ""))
        return -value if negative else value
    return None


def _operand_ok(node) -> bool:
    return cf.is_atom(node) or _literal_value(node) is not None


def _value_ok(value) -> bool:
    """An operation a lane may do even when its example is finished: it cannot raise."""
    if cf.is_atom(value):
        return True
    prim = cf.primitive_of(value)
    if prim is None:
        return False
    if not isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.Call)) or \
            (isinstance(value, cst.Comparison) and len(value.comparisons) != 1) or cf.keywords(value):
        return False
    operands = cf.operands(value)
    if not all(_operand_ok(op) for op in operands):
        return False
    safe = cpu_option(prim, "lane_safe")
    if safe is None:
        return prim.kind in _LANE_SAFE_KINDS
    if safe in ("by_nonzero_literal", "by_positive_literal"):     # a division: by what?
        divisor = _literal_value(operands[1])
        return divisor is not None and (divisor > 0 if safe == "by_positive_literal" else divisor != 0)
    return safe is True


def _assigned(stmt) -> str | None:
    """The variable a statement assigns, or None (a return, an in-place write)."""
    assignment = dataflow.classify(stmt)
    return assignment.target if assignment.kind == "assign" else None


# (dataflow.value_reads reads a statement's atoms; after the lowering an
# operand may itself be a call, nl.scalar_like(x, 0.5), whose x counts too)
class _VariablesRead(cst.CSTVisitor):
    def __init__(self):
        self.names: set = set()

    def visit_Attribute(self, node):
        return False                     # np.pi, or a function's module: no variable

    def visit_Call(self, node):
        for arg in node.args:
            arg.value.visit(self)
        return False                     # (not its func: np.sin, nl.scalar_like)

    def visit_Name(self, node):
        if node.value not in ("True", "False", "None"):
            self.names.add(node.value)


def _reads(stmt) -> set[str]:
    """The variables a statement's value reads."""
    value = stmt.body[0].value
    if value is None:
        return set()
    reader = _VariablesRead()
    value.visit(reader)
    return reader.names


@dataclass
class Segment:
    """Straight-line statements run for every lane, or a while loop's body run for the active ones."""

    stmts: list
    test: str | None = None              # the while loop's condition variable; None for straight code
    header: list = field(default_factory=list)   # the comment lines above the while
    uniform: set = field(default_factory=set)    # a loop's variables that are the same in every active lane
    live_after: set = field(default_factory=set)  # variables code after the segment reads


@dataclass
class LanesPlan:
    segments: list
    returned: list                       # names, one per result
    state: list                          # variables kept per lane between segments, in first-set order


def plan(core: cf.CoreFunction, in_axes: tuple) -> LanesPlan | None:
    """How ``core`` (per-example, lowered for numba) runs in lanes, or None to keep the per-example loop."""
    if not in_axes or any(axis != 0 for axis in in_axes):
        return None
    body = list(core.node.body.body)
    if not body or not isinstance(body[-1], cst.SimpleStatementLine) or not isinstance(body[-1].body[0], cst.Return):
        return None
    returned = _returned_names(body[-1].body[0].value)
    if returned is None:
        return None
    segments: list = [Segment([])]
    for stmt in body[:-1]:
        if isinstance(stmt, cst.While):
            if stmt.orelse is not None or not (isinstance(stmt.test, cst.Name) and dataflow.atom_names(stmt.test)):
                return None              # (a test that is a constant: while True)
            inner = list(stmt.body.body)
            if not all(_simple_ok(s) for s in inner):
                return None
            segments.append(Segment(inner, test=stmt.test.value, header=list(stmt.leading_lines)))
            segments.append(Segment([]))
        elif _simple_ok(stmt):
            segments[-1].stmts.append(stmt)
        else:
            return None
    if not any(s.test for s in segments):
        return None
    params = set(core.params)
    state = _state(segments, returned, params)
    if not all(_typed_alike(name, segments, name in params) for name in state):
        return None
    _find_uniform(segments)
    _find_live_after(segments, returned)
    return LanesPlan(segments, returned, state)


def _find_uniform(segments) -> None:
    """Each loop's ``uniform``: the variables that hold the same value in every lane still
    in the loop, so that a step computes them once for the group, not once per lane.

    A value is the same in every lane when it is computed from constants and such
    values only.  In straight code that holds for every lane; in a loop for the active
    ones, when a variable the loop carries from one step to the next was the same in
    every lane when the loop began (``t = 0.0`` then ``t = t + dt`` in the loop: the
    active lanes have all taken the same number of steps).  A lane that finishes
    keeps the value of its last step, so after the loop the lanes differ.
    """
    everywhere: set = set()              # the same in every lane, here in the straight code
    for seg in segments:
        if seg.test is None:
            for stmt in seg.stmts:
                if _reads(stmt) <= everywhere:
                    everywhere.add(_assigned(stmt))
                else:
                    everywhere.discard(_assigned(stmt))
            continue
        set_here, carried = set(_set_in(seg.stmts)), set(_live_in(seg.stmts))
        uniform = set_here | everywhere
        changed = True
        while changed:                   # (a loop may set a variable from one set further down)
            before = len(uniform)
            uniform -= {_assigned(stmt) for stmt in seg.stmts if not _reads(stmt) <= uniform}
            uniform -= carried - everywhere
            changed = len(uniform) != before
        seg.uniform = uniform & (set_here | carried | {seg.test})
        everywhere -= set_here | {seg.test}


def _find_live_after(segments, returned) -> None:
    """Each segment's ``live_after``: what later segments or the results read (a loop may
    run no step, so what it sets does not end what comes before it)."""
    live = set(returned)
    for seg in reversed(segments):
        seg.live_after = set(live)
        if seg.test is None:
            live = (live - set(_set_in(seg.stmts))) | set(_live_in(seg.stmts))
        else:
            live |= set(_live_in(seg.stmts)) | {seg.test}


def _typed_alike(name: str, segments: list, is_param: bool) -> bool:
    """Whether every per-lane copy of ``name`` has the type numba gives it in the per-example code.

    Each state array is made with the type of the variable's last value in a
    run of lane 0 (numba types each assignment on its own, unifying them only
    where a loop's iterations meet: ``t = 0`` then ``t = t + 0.01`` in a loop is
    an int, then a float).  That type is the one the per-example code has
    wherever the lanes read the array when the variable is set in one segment
    only, or in one loop body and the straight code just before it (the loop
    unifies the two) and read by nothing earlier.  It must also be set before
    anything reads it, as the per-example code would otherwise fail.
    """
    setting = [k for k, seg in enumerate(segments) if name in _set_in(seg.stmts)]
    reading = [k for k, seg in enumerate(segments) if name in _live_in(seg.stmts) or seg.test == name]
    if is_param:
        setting = sorted({0, *setting})
    if not setting or (reading and reading[0] < setting[0]):
        return False
    first = segments[setting[0]]
    if first.test is not None or (setting[0] in reading and not is_param and name in _live_in(first.stmts)):
        return False                     # first set in a loop body, or read before it is set
    if len(setting) == 1:
        return True
    if len(setting) != 2:
        return False
    before, loop = setting
    return segments[loop].test is not None and before == loop - 1 and (not reading or reading[0] >= before)


def _returned_names(value):
    """The variables returned, one per result, or None for anything else (a literal, ``True``)."""
    elements = [el.value for el in value.elements] if isinstance(value, cst.Tuple) else [value]
    names = dataflow.atom_names(cst.Tuple([cst.Element(el) for el in elements]))
    return names if len(names) == len(elements) and all(isinstance(el, cst.Name) for el in elements) else None


def _simple_ok(stmt) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    return _assigned(stmt) is not None and _value_ok(stmt.body[0].value)


def _live_in(stmts) -> list[str]:
    """Names a run of statements reads before it sets them, in order of first read."""
    seen, live = set(), []
    for stmt in stmts:
        for name in sorted(_reads(stmt)):
            if name not in seen and name not in live:
                live.append(name)
        seen.add(_assigned(stmt))
    return live


def _state(segments, returned, params) -> list[str]:
    """Variables a segment needs from an earlier one (or a loop body from its last iteration)."""
    needed = []
    for seg in segments:
        # (what a loop body reads before it sets it comes from its last iteration: live in too)
        needed += _live_in(seg.stmts) + ([seg.test] if seg.test else [])
    return list(dict.fromkeys(needed + returned))


# ------------------------------------------------------------------ the code
class _LaneMath(cst.CSTTransformer):
    """np.exp(a) -> vm.exp(a), np.sin(a) -> vm.sin_in_range(a) (noting ``a``: its range is
    checked), or with ``exact`` np.sin(a) -> vm.sin(a) as in the per-example code: the scalar paths
    of numba_vecmath, as the cpu table (templates/cpu.py) names them (``lane_math``: the kernel
    alone, its range checked beside it; else ``vector_math``)."""

    def __init__(self, exact: bool):
        self.arguments: list[str] = []
        self.exact = exact

    def leave_Call(self, original, updated):
        prim = primitives.BY_SPELLING.get(cf.code_of(updated.func))
        in_lanes = None if self.exact else cpu_option(prim, "lane_math")
        if in_lanes is not None:
            self.arguments.append(cf.code_of(updated.args[0].value))
            return updated.with_changes(func=cf.callee(in_lanes))
        helper = cpu_option(prim, "vector_math")
        if helper is not None:
            return updated.with_changes(func=cf.callee(helper))
        return updated


def _statement_lines(stmts, indent: str, beyond: str | None, masked: str | None, comments=True) -> list[str]:
    """The statements as source lines, each sin or cos followed by the check of its argument
    into ``beyond`` (made at once: the argument's variable may be set again further on), or,
    for a ``beyond`` of None, sin and cos as the per-example code has them; ``masked``: the
    name of the lane's activity flag, if only active lanes count."""
    lines = []
    for stmt in stmts:
        if comments:
            lines += [indent + line.comment.value for line in stmt.leading_lines if line.comment is not None]
        rewrite = _LaneMath(exact=beyond is None)
        small = stmt.body[0].visit(rewrite)
        lines.append(indent + cf.code_of(small))
        for argument in rewrite.arguments if beyond is not None else ():
            check = f"vm.trig_beyond_range({argument})"
            lines.append(f"{indent}{beyond} = {beyond} | ({masked} & {check})" if masked
                         else f"{indent}{beyond} = {beyond} | {check}")
    return lines


I1, I2, I3, I4 = "    ", "        ", "            ", "                "    # indents of the generated code


@dataclass
class _Names:
    """The names a lanes function is written with."""

    given: dict          # parameter -> the caller's array of it
    arrays: dict         # state variable -> its array of one value per lane
    state: set
    n_lanes: str
    lane: str
    still: str
    on: str
    beyond: str
    swept: str
    order: str
    moved: str


def lanes_function(core: cf.CoreFunction, lanes: LanesPlan, name: str) -> str:
    """Source of the njit function ``name`` running ``core`` on one group of examples.

    It takes one array per parameter (the group's examples) and returns
    ``(beyond, result, ...)``: whether a sin or cos argument went beyond the
    kernel's exact range (the group must then be run one example at a time),
    and one array per result.
    """
    params = core.params
    assigned = {v for seg in lanes.segments for v in _set_in(seg.stmts)}
    in_loops = {v for seg in lanes.segments if seg.test for v in _live_in(seg.stmts)}
    # the caller's arrays are only read: a parameter the code sets again, or a loop reads
    # (a loop moves its lanes' values about), gets an array of its own
    copied = [p for p in params if p in assigned or p in in_loops]
    claim = core.scope.claim
    given = {p: claim(f"{p}_given" if p in copied else f"{p}_lanes") for p in params}
    arrays = {p: given[p] for p in params if p not in copied}
    arrays.update({v: claim(f"{v}_lanes") for v in lanes.state if v not in arrays})
    names = _Names(given, arrays, set(lanes.state),
                   *(claim(n) for n in ("n_lanes", "lane", "still", "on", "beyond", "swept", "order", "moved")))
    own = [v for v in lanes.state if v not in params or v in copied]     # state arrays made here
    out = [f"def {name}({', '.join(given[p] for p in params)}):",
           f"{I1}# strategy: the examples in groups, every step a loop over the group's lanes (see cpu_lanes.py)",
           f"{I1}{names.n_lanes} = len({given[params[0]]})",
           f"{I1}{names.beyond} = False"]
    # lane 0 once, as its example alone, before the arrays exist: the type of each
    # variable's last value there is its state array's dtype (see _typed_alike)
    out.append(f"{I1}# lane 0 alone first: its values give the arrays below their dtypes")
    out += [f"{I1}{p} = {given[p]}[0]" for p in params]
    for seg in lanes.segments:
        if seg.test is None:
            out += _statement_lines(seg.stmts, I1, None, masked=None, comments=False)
        else:
            out.append(f"{I1}while {seg.test}:")
            out += _statement_lines(seg.stmts, I2, None, masked=None, comments=False)
    out += [f"{I1}{arrays[v]} = results_like({v}, {names.n_lanes})" for v in own]
    for k, seg in enumerate(lanes.segments):
        if seg.test is not None:
            out += _masked_loop(seg, names, claim("active_lanes"), claim)
        elif k == 0:                     # the prologue starts from the caller's arrays
            out += _sweep(seg.stmts, names, loads=[f"{p} = {given[p]}" for p in params],
                          stores=[v for v in dict.fromkeys(_set_in(seg.stmts) + copied) if v in own])
        elif seg.stmts:
            out += _sweep(seg.stmts, names,
                          loads=[f"{v} = {arrays[v]}" for v in _live_in(seg.stmts) if v in arrays],
                          stores=[v for v in _set_in(seg.stmts) if v in own])
    results = ", ".join(arrays[v] for v in lanes.returned)
    out.append(f"{I1}return {names.beyond}, {results}")
    return "\n".join(out) + "\n"


def _sweep(stmts, names: _Names, loads: list, stores: list) -> list[str]:
    """Straight-line code, once for every lane: ``loads`` are ``name = array`` (read at the lane)."""
    lane = names.lane
    return ([f"{I1}for {lane} in range({names.n_lanes}):"]
            + [f"{I2}{load}[{lane}]" for load in loads]
            + _statement_lines(stmts, I2, names.beyond, masked=None)
            + [f"{I2}{names.arrays[v]}[{lane}] = {v}" for v in stores])


def _split_step(seg: Segment, claim) -> tuple[list, list, dict]:
    """A loop body as ``(once, per_lane, current)``: the statements computed once a step
    for the whole group (their values are the same in every active lane), those computed
    for each lane, and the name each uniform variable's value is in at the end of the step.

    The statements of ``once`` run before the loop over the lanes, so a uniform
    variable the step sets again while its old value is still to be read gets a new
    name (``t_next = t + dt``; ``t = t_next`` when the step ends).  A user line's
    comment goes with its first statement in each of the two parts.
    """
    carried = set(_live_in(seg.stmts))
    current: dict = {}
    once, per_lane = [], []
    comment, shown = [], {"once": None, "lane": None}
    for stmt in seg.stmts:
        if any(line.comment is not None for line in stmt.leading_lines):
            comment = [line for line in stmt.leading_lines if line.comment is not None]
        small = stmt.body[0]
        small = small.with_changes(value=dataflow.renamed(small.value, current))   # (reads only)
        target = _assigned(stmt)
        part = "once" if target in seg.uniform else "lane"
        if part == "once":
            new = claim(f"{target}_next") if target in carried or target in current else target
            small = small.with_changes(targets=[cst.AssignTarget(cst.Name(new))])
            current[target] = new
        leading = comment if shown[part] is not comment else []
        shown[part] = comment
        (once if part == "once" else per_lane).append(stmt.with_changes(body=[small], leading_lines=leading))
    return once, per_lane, current


def _masked_loop(seg: Segment, names: _Names, active: str, claim) -> list[str]:
    """A while loop run for every lane of the group until none is active, finished lanes masked."""
    arrays, lane, still, on, beyond = names.arrays, names.lane, names.still, names.on, names.beyond
    swept, order, moved = names.swept, names.order, names.moved
    once, per_lane, current = _split_step(seg, claim)
    carried = _live_in(seg.stmts)
    # what each lane reads from its arrays, and what it writes back: a variable code after
    # the loop reads must keep the value of its lane's last step (masked), one only the next
    # step reads can take whatever a finished lane computes, and a uniform one is carried
    # from step to step in a scalar
    loads = [v for v in carried if v in arrays and v not in seg.uniform]
    masked = [v for v in _set_in(seg.stmts) if v in names.state and v in seg.live_after]
    plain = [v for v in _set_in(seg.stmts)
             if v in names.state and v in carried and v not in seg.uniform and v not in masked]
    moving = list(dict.fromkeys(loads + masked + plain))     # the arrays read or written per lane
    from_lane0 = [v for v in seg.uniform if v in carried or (v == seg.test and v not in current)]
    if seg.test in current:              # (the test as this step left it)
        test_now = current[seg.test]
    elif seg.test in _set_in(per_lane) or seg.test in from_lane0 or seg.test in loads:
        test_now = seg.test
    else:                                # a test the loop does not set
        test_now = f"{arrays[seg.test]}[{lane}]"
        moving.append(seg.test)
    out = [I1 + line.comment.value for line in seg.header if line.comment is not None]
    out += [f"{I1}{active} = np.empty({names.n_lanes}, np.uint8)",
            f"{I1}for {lane} in range({names.n_lanes}):",
            f"{I2}{active}[{lane}] = bool({arrays[seg.test]}[{lane}])"]
    out += [f"{I1}{v} = {arrays[v]}[0]   # the same in every lane" for v in sorted(from_lane0)]
    out += [f"{I1}{still} = {names.n_lanes}",
            f"{I1}{swept} = {names.n_lanes}   # places swept: the active lanes are among them",
            f"{I1}{order} = np.arange({names.n_lanes})   # the lane whose values are at each place",
            # a group with a sin or cos out of range is computed again: stop it at once
            f"{I1}while {still} > 0 and not {beyond}:   # while any lane of the group is active",
            f"{I2}if 2 * {still} <= {swept}:",
            f"{I3}# half the lanes swept are done: the active ones move to the front, the next steps sweep them only",
            f"{I3}{moved}, {swept} = active_first({active}, {swept})"]
    out += [f"{I3}{array}[:len({moved})] = {array}[{moved}]" for array in [arrays[v] for v in moving] + [active, order]]
    if once:
        out.append(f"{I2}# the same in every active lane: computed once a step, for all of them")
        out += _statement_lines(once, I2, None, masked=None)
    out += [f"{I2}{still} = 0",
            f"{I2}for {lane} in range({swept}):",
            f"{I3}{on} = {active}[{lane}] != 0"]
    out += [f"{I3}{v} = {arrays[v]}[{lane}]" for v in loads]
    out += _statement_lines(per_lane, I3, beyond, masked=on)
    out += [f"{I3}{arrays[v]}[{lane}] = {current.get(v, v)}" for v in plain]
    if masked:
        out.append(f"{I3}if {on}:   # a finished lane keeps the values of its last step")
        out += [f"{I4}{arrays[v]}[{lane}] = {current.get(v, v)}" for v in masked]
    # bitwise & on the flags and a count: no branch in the loop over lanes
    out += [f"{I3}{active}[{lane}] = {on} & bool({test_now})",
            f"{I3}{still} += {active}[{lane}]"]
    out += [f"{I2}{v} = {current[v]}" for v in carried if v in current and current[v] != v]
    kept_in_order = [arrays[v] for v in moving if v in seg.live_after]
    if kept_in_order:
        out.append(f"{I1}# the values back at their lanes")
        out += [f"{I1}restore_lane_order({array}, {order})" for array in kept_in_order]
    return out


def _set_in(stmts) -> list[str]:
    """The variables the statements assign, in order of first assignment."""
    return list(dict.fromkeys(_assigned(stmt) for stmt in stmts))


# ----------------------------------------------------------------- run time
PREAMBLE = "from transformer.backends.cpu_lanes import active_first, group_size, restore_lane_order\n"


# numba's thread pool size, a constant in compiled code (numba.get_num_threads()
# would keep the driver from its cache); it only sets the size of the groups
_THREADS = numba.config.NUMBA_NUM_THREADS


@numba.njit(cache=True)
def group_size(count):
    """Examples in a group: about four groups a thread, since groups take unequal times,
    in multiples of 64 lanes from GROUP_MIN to GROUP_MAX (a group's arrays stay in L1)."""
    per_group = -(-count // (4 * _THREADS))
    return min(GROUP_MAX, max(GROUP_MIN, -(-per_group // 64) * 64))


@numba.njit(cache=True)
def active_first(active, swept):
    """The places ``0 .. swept-1`` reordered, the active lanes' first (in their order), and
    how many are active: ``values[:swept] = values[moved]`` moves a lane array alike."""
    moved = np.empty(swept, np.intp)
    count = 0
    for place in range(swept):
        if active[place]:
            moved[count] = place
            count += 1
    done = count
    for place in range(swept):
        if not active[place]:
            moved[done] = place
            done += 1
    return moved, count


@numba.njit(cache=True)
def restore_lane_order(values, order):
    """Put each value back at its lane: ``values[place]`` belongs to lane ``order[place]``."""
    held = values.copy()
    for place in range(len(order)):
        values[order[place]] = held[place]
