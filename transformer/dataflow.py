"""Facts about core-form code that transforms need: who reads and writes
what, where assignments sit, and dead-code removal.

Everything here reads core form only (see ``core_form.py``), so it works on
the output of any transform as well as on normalized user code.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field

import libcst as cst

from . import core_form as cf
from . import primitives


# Fields of a libcst node that hold only punctuation and whitespace: never a name.
_NO_NAMES = frozenset({"lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators",
                       "header", "footer", "equal", "colon", "star", "dot", "lbracket", "rbracket", "lbrace",
                       "rbrace", "operator", "newline", "indent"})
_NAME_FIELDS: dict[type, tuple[str, ...]] = {}


def _name_fields(node_type) -> tuple[str, ...]:
    fields = _NAME_FIELDS.get(node_type)
    if fields is None:
        fields = _NAME_FIELDS[node_type] = tuple(
            f.name for f in dataclasses.fields(node_type)
            if f.name not in _NO_NAMES and not f.name.startswith("whitespace"))
    return fields


def all_names(node) -> set[str]:
    """Every name written anywhere in ``node`` (variables, modules, builtins, keywords).

    A plain walk over the nodes' fields, not a libcst visitor: this is asked of every statement
    by several passes, and a visitor rebuilds each node it passes (five times slower)."""
    return set(_names_written(node))


def name_counts(node) -> Counter:
    """How often each name is written anywhere in ``node``: ``all_names`` counted (an attribute's
    or a keyword's name counts too, so a count is never below a variable's mentions)."""
    return Counter(_names_written(node))


def _names_written(node):
    """Each ``cst.Name`` under ``node``, by a walk over the nodes' fields."""
    pending = [node]
    while pending:
        current = pending.pop()
        if type(current) is cst.Name:
            yield current.value
            continue
        for field_name in _name_fields(type(current)):
            value = getattr(current, field_name)
            if isinstance(value, cst.CSTNode):
                pending.append(value)
            elif isinstance(value, (tuple, list)):
                pending.extend(v for v in value if isinstance(v, cst.CSTNode))


class _Renamed(cst.CSTTransformer):
    def __init__(self, names: dict):
        self.names = names

    def leave_Name(self, original, updated):
        new = self.names.get(updated.value)
        return updated.with_changes(value=new) if new else updated

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)      # np.sin: only an attribute's base is a variable

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)   # axis=...: a keyword is no variable


def renamed(node, names: dict):
    """``node`` with every variable ``old`` of ``names`` read or written as ``names[old]``."""
    return node.visit(_Renamed(names)) if names else node


def atom_names(node) -> list[str]:
    """Variable names inside an atom (a name, or a tuple of atoms)."""
    if isinstance(node, cst.Name):
        return [] if node.value in ("True", "False", "None") else [node.value]
    if isinstance(node, cst.Tuple):
        return [n for el in node.elements for n in atom_names(el.value)]
    return []


def index_names(subscript: cst.Subscript) -> list[str]:
    names = []
    for element in subscript.slice:
        item = element.slice
        if isinstance(item, cst.Index):
            names += atom_names(item.value)
        else:
            for part in (item.lower, item.upper, item.step):
                if part is not None:
                    names += atom_names(part)
    return names


def given_keywords(value) -> set[str]:
    """The keywords a primitive call gives a value other than ``None`` (what picks a rule's variant)."""
    return {k for k, v in cf.keywords(value).items() if not (isinstance(v, cst.Name) and v.value == "None")}


def value_reads(value) -> list[str]:
    names = []
    for op in cf.operands(value):
        names += atom_names(op)
    for kw in cf.keywords(value).values():
        names += atom_names(kw)
    if isinstance(value, cst.Subscript):
        names += index_names(value)
    return names


@dataclass
class Assignment:
    """One simple statement, seen by a transform."""
    line: cst.SimpleStatementLine
    small: cst.BaseSmallStatement
    loop_depth: int
    kind: str                      # "assign" | "write_into" (x[index] = v) | "return" | "other"
    target: str | None = None      # the variable written (the array for setitem)
    value: cst.BaseExpression | None = None


def classify(line: cst.SimpleStatementLine, loop_depth: int = 0) -> Assignment:
    small = line.body[0]
    if isinstance(small, cst.Assign):
        target = small.targets[0].target
        if isinstance(target, cst.Name):
            return Assignment(line, small, loop_depth, "assign", target.value, small.value)
        if isinstance(target, cst.Subscript):
            return Assignment(line, small, loop_depth, "write_into", target.value.value, small.value)
    if isinstance(small, cst.Return):
        return Assignment(line, small, loop_depth, "return", None, small.value)
    return Assignment(line, small, loop_depth, "other")


def reads(a: Assignment) -> list[str]:
    if a.kind == "assign":
        return value_reads(a.value)
    if a.kind == "write_into":
        target = a.small.targets[0].target
        return atom_names(a.value) + index_names(target) + [a.target]
    if a.kind == "return" and a.value is not None:
        return atom_names(a.value)
    return []


def walk(stmts, loop_depth: int = 0):
    """Every simple statement under ``stmts``, in program order."""
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield classify(stmt, loop_depth)
        else:
            inner_depth = loop_depth + 1 if isinstance(stmt, (cst.For, cst.While)) else loop_depth
            for block in cf.blocks(stmt):
                yield from walk(block, inner_depth)


def loops(stmts):
    """Every for and while loop under ``stmts``, outer ones first."""
    for stmt in stmts:
        if isinstance(stmt, (cst.For, cst.While)):
            yield stmt
        for block in cf.blocks(stmt):
            yield from loops(block)


def loop_indices(stmts) -> set[str]:
    """The names for loops under ``stmts`` bind as their index."""
    return {loop.target.value for loop in loops(stmts) if isinstance(loop, cst.For)}


def control_reads(stmts) -> set[str]:
    """Names read by if/while conditions and loop bounds anywhere under ``stmts``."""
    names: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, (cst.If, cst.While)):
            names.update(atom_names(stmt.test))
        elif isinstance(stmt, cst.For):
            for arg in stmt.iter.args:
                names.update(atom_names(arg.value))
        for block in cf.blocks(stmt):
            names |= control_reads(block)
    return names


@dataclass
class WriteCounts:
    """How often each variable is written, and whether inside a loop."""
    count: dict = field(default_factory=dict)
    in_loop: set = field(default_factory=set)

    def unstable(self, name: str) -> bool:
        """Written more than once at run time (so an old value can be lost)."""
        return self.count.get(name, 0) > 1 or name in self.in_loop


def write_counts(func: cst.FunctionDef, include_setitem: bool = True) -> WriteCounts:
    """Writes per variable. With ``include_setitem=False`` only rebindings count
    (``x = ...``), not writes into an array (``x[i] = ...``)."""
    counts = WriteCounts()
    for p in func.params.params:
        counts.count[p.name.value] = 1
    kinds = ("assign", "write_into") if include_setitem else ("assign",)
    _count_block(func.body.body, 0, counts, kinds)
    return counts


def _count_block(stmts, depth, counts, kinds=("assign", "write_into")):
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            a = classify(stmt)
            if a.kind in kinds:
                counts.count[a.target] = counts.count.get(a.target, 0) + 1
                if depth:
                    counts.in_loop.add(a.target)
        else:
            if isinstance(stmt, cst.For):
                name = stmt.target.value
                counts.count[name] = counts.count.get(name, 0) + 1
                counts.in_loop.add(name)
            inner_depth = depth + 1 if isinstance(stmt, (cst.For, cst.While)) else depth
            for block in cf.blocks(stmt):
                _count_block(block, inner_depth, counts, kinds)


def tuple_sizes(statements, of_atoms: bool = True) -> dict[str, int | None]:
    """The variables that hold a tuple at run time, each with its number of elements (None where
    assignments disagree): the results of a primitive that returns several (``np.linalg.eigh``), a
    tuple of atoms (unless ``of_atoms`` is False), a copy of either."""
    sizes: dict[str, int | None] = {}
    changed = True
    while changed:
        changed = False
        for a in statements:
            if a.kind != "assign":
                continue
            prim = None if cf.is_atom(a.value) else cf.primitive_of(a.value)
            if isinstance(a.value, cst.Tuple) and of_atoms:
                size = len(a.value.elements)
            elif isinstance(a.value, cst.Name) and a.value.value in sizes:
                size = sizes[a.value.value]
            elif prim is not None and prim.results:
                size = len(prim.results)
            elif prim is not None and prim.may_alias and prim.kind != primitives.SHAPE \
                    and isinstance(a.value, cst.Call) and a.value.args and (   # (np.asarray((a, b)) is an array)
                    isinstance(a.value.args[0].value, cst.Tuple) and of_atoms
                    or isinstance(a.value.args[0].value, cst.Name) and a.value.args[0].value.value in sizes):
                first = a.value.args[0].value       # its first operand itself: a custom rule's tuple output
                size = len(first.elements) if isinstance(first, cst.Tuple) else sizes[first.value]
            else:
                continue
            known = sizes.get(a.target, "unset")
            agreed = size if known == "unset" else known if known == size else None
            if agreed != known:
                sizes[a.target] = agreed
                changed = True
    return sizes


# ------------------------------------------------------------ dead code removal
# Primitives whose result may share memory with an operand: an array that
# came from one of these (or from a parameter) may be an alias, so writes into
# it are never removed.
def shared_memory(a: Assignment) -> list[str]:
    """The variables whose memory the value ``a`` assigns may share: ``v = s[0]`` (a view of
    ``s``), ``v = s``, ``v = np.reshape(s, ...)``, a tape and the value pushed onto it; empty for
    anything that builds a new array."""
    if a.kind != "assign":
        return []
    if cf.is_atom(a.value):
        return atom_names(a.value)
    if cf.tape_operation(a.value) == "push":
        return [n for op in cf.operands(a.value) for n in atom_names(op)]
    prim = cf.primitive_of(a.value)
    if prim is not None and not prim.may_alias:          # (the registry says which return views)
        return []
    operands = cf.operands(a.value)
    # a tuple display is no array: what is made of one (np.asarray((x, 1.0))) is a new array
    return atom_names(operands[0]) if operands and not isinstance(operands[0], cst.Tuple) else []


def _aliases(func: cst.FunctionDef, roots: list[str]) -> list[set]:
    """Per root variable, the variables that may share its memory (itself included), found to a
    fixpoint over every assignment whose value may alias what it reads (a loop may alias before
    it writes).  ``v = y[i]`` counts: of a 2-d ``y`` it is a row, a view."""
    aliases = [{root} for root in roots]
    sharing = [(a.target, set(shared_memory(a))) for a in walk(func.body.body)]
    sharing = [(target, shared) for target, shared in sharing if shared]
    changed = True
    while changed:
        changed = False
        for target, shared in sharing:
            for names in aliases:
                if names & shared and target not in names:
                    names.add(target)
                    changed = True
    return aliases


def parameters_written_in_place(func: cst.FunctionDef) -> list[str]:
    """The parameters some ``a[...] = v`` may write into: through the parameter itself or through a
    variable that may alias it (``y = x``, ``row = x[i]``, ``y = x.reshape(...)``), in order."""
    params = [p.name.value for p in func.params.params]
    written = {a.target for a in walk(func.body.body) if a.kind == "write_into"}
    return [p for p, names in zip(params, _aliases(func, params)) if names & written]


def writes_through_views(func: cst.FunctionDef) -> list:
    """The ``v[...] = value`` statements whose array ``v`` may be a view of another variable
    (``head = x[:2]``, ``y = x``): the write changes that variable too."""
    targets = {a.target for a in walk(func.body.body) if a.kind == "write_into"}
    if not targets:
        return []
    params = [p.name.value for p in func.params.params]
    assigned = params + list(dict.fromkeys(a.target for a in walk(func.body.body) if a.kind == "assign"))
    handed_off = _handed_off(func, set(params))
    viewed = set()
    for root, names in zip(assigned, _aliases(func, assigned)):
        if root not in handed_off:
            viewed |= (names - {root}) & targets
    return [a.line for a in walk(func.body.body) if a.kind == "write_into" and a.target in viewed]


def writes_through_views_in_order(func: cst.FunctionDef) -> list:
    """``writes_through_views``, flow-sensitive: a write into ``v`` where ``v`` shares memory with
    another variable as the function runs to it, so that ``x = y; x = np.copy(x); x[0] = 0.0`` (a
    helper copying its argument, inlined) writes into a new array, not into ``y``."""
    if not any(a.kind == "write_into" for a in walk(func.body.body)):
        return []
    handed_off = _handed_off(func, {p.name.value for p in func.params.params})
    through: list = []
    _stale_reads(func, lambda a: False, frozenset(), shares=shared_memory, through=(through, handed_off))
    return through


def views_read_after_writes(func: cst.FunctionDef, numbers=frozenset(), arrays=frozenset()) -> list:
    """The statements that read a view of an array (``prev = y[:]``, ``prev = y``, a reshape, a row
    ``y[0]`` known to be an array) after a write into that array (``y[1] = 0.0``) changed what the
    view holds.  ``numbers``: names known to hold numbers (``p = v[0, 1]`` of a 2-d v), which share
    no memory; ``arrays``: names known to hold arrays."""
    return _stale_reads(func, lambda a: a.kind == "write_into", numbers, arrays)


def aliases_read_after_augmented_assignments(func: cst.FunctionDef, augmented: set[str], numbers=frozenset(),
                                             arrays=frozenset()) -> list:
    """The statements that read a name sharing memory with ``y`` after ``y += v`` (written ``y = y +
    v``, ``y`` one of ``augmented``), which NumPy does in place: ``z = y; y *= x; z`` sees the
    product in NumPy, and the old ``y`` where ``y`` is bound to a new array (a helper's argument
    ``a *= 2`` changes its caller's array in NumPy)."""
    def in_place(a: Assignment) -> bool:
        return (a.kind == "assign" and a.target in augmented and isinstance(a.value, cst.BinaryOperation)
                and isinstance(a.value.left, cst.Name) and a.value.left.value == a.target)
    return _stale_reads(func, in_place, numbers, arrays)


def copies_read_after_writes(func: cst.FunctionDef, copied_views: dict) -> list:
    """The statements that read a definition's result NumPy returns as a view and ours computes as
    a copy (``d = np.diagonal(y)``: ``copied_views``, result -> argument) after a write into its
    argument, which NumPy's view would show."""
    def shares(a: Assignment) -> list:
        if a.target in copied_views:
            return [copied_views[a.target]]
        return atom_names(a.value) if a.kind == "assign" and cf.is_atom(a.value) else []
    return _stale_reads(func, lambda a: a.kind == "write_into", frozenset(), shares=shares)


def _picks_by_position(value) -> bool:
    """``v[0, 1]``, ``v[i]``: every part of the index a position, no slice.  Such a pick is most
    often an entry, a number, which shares no memory; it is followed only where its result is known
    to be an array (a row), from the ranks of the arguments the function was called with."""
    return isinstance(value, cst.Subscript) and all(
        isinstance(element.slice, cst.Index) and not isinstance(element.slice.value, cst.Ellipsis)
        and not (isinstance(element.slice.value, cst.Name) and element.slice.value.value == "None")
        for element in value.slice)     # (x[..., 0] and x[None] keep axes: views whatever the rank)


def _stale_reads(func: cst.FunctionDef, writes_in_place, numbers, arrays=frozenset(), shares=None,
                 through=None) -> list:
    """The statements that read a name whose memory a write changed since it was bound, the
    write being a ``write_into`` or an assignment ``writes_in_place`` says NumPy makes in place
    (the name written is then bound afresh).  Flow-sensitive: a name bound again, or to a new
    array, holds nothing stale; a loop is followed twice, so that a write late in one iteration
    reaches a read early in the next.  ``shares``: the names an assignment's value shares memory
    with, where not the views and aliases ``shared_memory`` finds.  ``through``: (a list, names
    exempt): each write into a name that shares memory with another, not exempt, is put in the list."""
    found = []

    def shared(a: Assignment) -> list:
        if shares is not None:
            return shares(a)
        # (a tape's values are generated code's, inlined: its backward sweep puts back what each
        # write overwrote before it reads the tape, so they are not followed)
        if cf.tape_operation(a.value) or a.target in numbers or (_picks_by_position(a.value) and a.target not in arrays):
            return []
        return shared_memory(a)

    def after(stmts, views: dict, stale: set) -> tuple[dict, set]:
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                a = classify(stmt)
                if stale.intersection(reads(a)) and stmt not in found:
                    found.append(stmt)
                if through is not None and a.kind == "write_into" and views.get(a.target, set()) - through[1] \
                        and stmt not in through[0]:
                    through[0].append(stmt)
                if writes_in_place(a):
                    changed = {a.target} | views.get(a.target, set())
                    stale = stale | (changed - {a.target}) | {
                        name for name, roots in views.items() if roots & changed and name != a.target}
                if a.kind == "assign":
                    roots = set()
                    for name in shared(a):
                        roots |= {name} | views.get(name, set())
                    views = {**views, a.target: roots} if roots else {k: v for k, v in views.items() if k != a.target}
                    stale = stale - {a.target}
                continue
            if isinstance(stmt, (cst.If, cst.While)) and stale.intersection(all_names(stmt.test)) and stmt not in found:
                found.append(stmt)
            if isinstance(stmt, cst.If):
                merged_views, merged_stale = {}, set()
                for block in cf.branches(stmt):
                    block_views, block_stale = after(block, dict(views), set(stale))
                    for name, roots in block_views.items():
                        merged_views[name] = merged_views.get(name, set()) | roots
                    merged_stale |= block_stale
                views, stale = merged_views, merged_stale
            elif isinstance(stmt, (cst.For, cst.While)):
                for _ in range(2):
                    body_views, body_stale = after(stmt.body.body, dict(views), set(stale))
                    for name, roots in body_views.items():
                        views = {**views, name: views.get(name, set()) | roots}
                    stale = stale | body_stale
        return views, stale

    after(list(func.body.body), {}, set())
    return found


def _handed_off(func: cst.FunctionDef, params: set) -> set[str]:
    """Variables assigned once and read once, by ``y = v``: only ``y`` sees the array from then on,
    so a write into ``y`` changes nothing else (vmap's ``y = _t15``, a batched np.zeros)."""
    finder = ValueReads()
    func.body.visit(finder)
    # two occurrences: the one assignment and the one read (reads of its shape alone not counted)
    return {a.value.value for a in walk(func.body.body)
            if a.kind == "assign" and isinstance(a.value, cst.Name) and a.value.value not in params
            and finder.counts[a.value.value] == 2}


class ValueReads(cst.CSTVisitor):
    """The names whose values an expression reads (``names``; ``counts``: how often each is named):
    an argument the called primitive reads only for its shape (its registry entry's
    ``shape_only``) does not count."""

    def __init__(self):
        self.names: set[str] = set()
        self.counts: Counter = Counter()

    def visit_Name(self, node):
        self.names.add(node.value)
        self.counts[node.value] += 1

    def visit_Call(self, node: cst.Call):
        prim = primitives.BY_SPELLING.get(cst.Module([]).code_for_node(node.func))
        if prim is None or not prim.shape_only:
            return True
        for i, arg in enumerate(node.args):
            param = arg.keyword.value if arg.keyword is not None else \
                prim.params[i] if i < len(prim.params) else None
            if param not in prim.shape_only:
                arg.visit(self)
        return False


def spelling(value) -> str | None:
    """What a call right-hand side calls, as written (``rt.push``), or None for anything else."""
    return cst.Module([]).code_for_node(value.func) if isinstance(value, cst.Call) else None


def _stack_of(value) -> str | None:
    """The tape a push/pop/top reads or writes."""
    if cf.tape_operation(value) in ("push", "pop", "top") and isinstance(value.args[0].value, cst.Name):
        return value.args[0].value.value
    return None


def _is_effectful(value, live_stacks=None, live=None) -> bool:
    """Pushes and pops change their tape: keep them while anything still reads that tape, and,
    where what is live after them is known (``live``), while anything after them does (the last
    pop of a tape, whose value nothing reads, goes)."""
    prim = cf.primitive_of(value) if isinstance(value, cst.Call) else None
    if prim is not None and prim.checks_input:     # rt.scalar_seed: grad's check that its output is a scalar
        return True
    if cf.tape_operation(value) not in ("push", "pop"):       # they change their tape
        return False
    if live is not None and _stack_of(value) not in live:
        return False
    return live_stacks is None or _stack_of(value) in live_stacks


def _fresh_arrays(func) -> dict[str, set]:
    """Variables every assignment of which builds a new array (so none aliases another), each with
    the variables that may be views of it (``v = y[1:]``): a write into it is read through them."""
    fresh: dict[str, bool] = {p.name.value: False for p in func.params.params}
    for a in walk(func.body.body):
        if a.kind == "assign":
            fresh[a.target] = fresh.get(a.target, True) and not shared_memory(a)
    names = [name for name, ok in fresh.items() if ok]
    return dict(zip(names, _aliases(func, names)))


def remove_dead_code(func: cst.FunctionDef, nested: bool = False) -> cst.FunctionDef:
    """Drop statements whose results nothing later reads (a backward liveness pass).

    A tape none of whose popped values is read is dropped whole: its pushes,
    its pops and its creation.  ``nested``: the statements are a backend's, no
    longer core form (expressions inside expressions), so every name a
    statement mentions counts as read; and no transform follows, so a tape's
    last pops, whose values nothing reads, go too (a transform of the code
    would run the tape the other way and needs as many pops as pushes).
    """
    fresh = _fresh_arrays(func)
    live_stacks: set = set()
    reading = _mentioned if nested else reads
    while True:   # a tape is live once any of its reads survives; grow that set to a fixed point
        body, _ = _sweep(list(func.body.body), set(), fresh, live_stacks, reading)
        read = {_stack_of(a.value) for a in walk(body)
                if a.kind == "assign" and cf.tape_operation(a.value) in ("pop", "top")}
        if read <= live_stacks:
            return func.with_changes(body=cf.block(body))
        live_stacks |= read


def _mentioned(a: Assignment) -> set[str]:
    """Every name a statement mentions but the one it assigns: what it may read, in any form."""
    if a.kind == "assign":
        return all_names(a.value)
    if a.kind == "other":
        return all_names(a.small)
    return all_names(a.small) if a.kind == "return" else all_names(a.small.targets[0].target) | all_names(a.value)


def _test_reads(node, reading) -> set[str]:
    """What a header reads: its atoms in core form, else every name in it."""
    return all_names(node) if reading is _mentioned else set(atom_names(node))


def _sweep(stmts, live_out: set, fresh: dict, live_stacks=None, reading=reads) -> tuple[list, set]:
    """Statements that matter given what is live after them, and what is live before them."""
    live = set(live_out)
    kept: list = []
    for stmt in reversed(stmts):
        if isinstance(stmt, cst.SimpleStatementLine):
            a = classify(stmt)
            if a.kind == "assign" and a.target not in live and \
                    not _is_effectful(a.value, live_stacks, live if reading is _mentioned else None):
                continue
            if a.kind == "write_into" and a.target in fresh and not fresh[a.target] & live:
                continue
            if a.kind == "assign":
                live.discard(a.target)
            if a.kind == "return":
                live = set()
            live |= set(reading(a))
            kept.append(stmt)
        elif isinstance(stmt, cst.If):
            (body, live_body), (orelse, live_else) = (_sweep(block, live, fresh, live_stacks, reading)
                                                      for block in cf.branches(stmt))
            if not _has_statements(body) and not _has_statements(orelse):
                continue
            live = live_body | live_else | _test_reads(stmt.test, reading)
            kept.append(stmt.with_changes(body=cf.block(body),
                                          orelse=cst.Else(cf.block(orelse)) if _has_statements(orelse) else None))
        elif isinstance(stmt, (cst.For, cst.While)):
            new, live = _sweep_loop(stmt, live, fresh, live_stacks, reading)
            if new is not None:
                kept.append(new)
        else:
            kept.append(stmt)
    kept.reverse()
    return kept, live


def _sweep_loop(loop, live_out: set, fresh: dict, live_stacks=None, reading=reads):
    if isinstance(loop, cst.For):
        header_reads = {n for arg in loop.iter.args for n in _test_reads(arg.value, reading)}
        index = {loop.target.value}
    else:
        header_reads = _test_reads(loop.test, reading)
        index = set()
    live = set(live_out) | header_reads
    while True:   # iterate to a fixed point: what one pass needs, the pass before must keep
        body, body_in = _sweep(loop.body.body, live, fresh, live_stacks, reading)
        new_live = live_out | header_reads | (body_in - index)
        if new_live <= live:
            break
        live |= new_live
    if not _has_statements(body) and isinstance(loop, cst.For):
        return None, live_out | header_reads
    if not _has_statements(body):
        body = [cst.SimpleStatementLine([cst.Pass()])]
    return loop.with_changes(body=cf.block(body)), new_live | live_out


def _has_statements(stmts) -> bool:
    return any(not (isinstance(s, cst.SimpleStatementLine) and isinstance(s.body[0], cst.Pass)) for s in stmts)
