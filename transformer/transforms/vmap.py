"""The vmap transform: core form for one example -> core form for a batch.

Batching is decided per variable at transform time (``_infer``): a variable
is batched if any value it is given depends on a batched argument, or if it
is assigned under a condition that differs between examples.  A batched
value keeps its batch axis LAST (see ``templates/batching.py`` for why);
parameters are moved there on entry and results to ``out_axes`` on exit.

Control flow on an unbatched condition stays ordinary Python.  On a batched
condition every example runs through the same code under a *mask*: ``if``
runs both branches, ``while`` runs until no example is active, ``for`` with
batched bounds counts per example; each assignment under a mask keeps the old
value of the inactive examples (``np.where(mask, new, old)``).
"""
from __future__ import annotations

import inspect
from collections import Counter

import libcst as cst

from .. import core_form as cf
from .. import custom, dataflow, primitives, rules
from ..core_form import CoreFunction
from ..errors import Location, TransformError
from ..exits import structure_exits
from ..normalize import apply_template
from . import register
from .loop_names import own_loop_names
from .pmap import ppermutes_as_gathers


@register("vmap")
def vmap_transform(core: CoreFunction, in_axes=(), out_axes=0, axis_name=None, axis_size=None,
                   identity_basis=()) -> CoreFunction:
    """``identity_basis``: positions of arguments that are the identity matrix, its columns the
    examples (vectors; hessian's sweep passes them): a product with one is no product at all."""
    if axis_name is not None:
        # ppermute over this axis, written with the collectives batched below (all_gather, axis_index)
        core.node = core.node.with_changes(body=cf.block(ppermutes_as_gathers(core, list(core.node.body.body),
                                                                              axis_name)))
    core.node = core.node.visit(_CheckpointsAsValues(core.functions))
    as_given = core.node
    batcher = _Batcher(core, tuple(in_axes), out_axes, axis_name, axis_size, identity_basis)
    try:
        return batcher.run()
    except _PassesDifferPerExample as refusal:
        if axis_name is not None or all(axis is None for axis in in_axes):
            raise                       # collectives over the axis, or no batched argument: no loop to run
        core.node = as_given
        return _loop_over_examples(core, tuple(in_axes), out_axes, batcher.state, refusal)


class _PassesDifferPerExample(TransformError):
    """What the vectorized strategies cannot batch: reverse mode's tape in a loop whose passes
    differ per example.  vmap then runs the function once per example (``_loop_over_examples``)."""


def _loop_over_examples(core: CoreFunction, in_axes, out_axes, state, refusal) -> CoreFunction:
    """vmap as a loop that runs the whole function for one example at a time, so each example runs
    its own passes of each loop and pops its own tape: the function's body is written once for
    example 0, which fixes each output's shape and dtype, and once in the loop over the others.
    ``state``: the batching the vectorized strategy inferred, which says which outputs are tuples."""
    core = structure_exits(core)
    body = list(core.node.body.body)
    returns = [a for a in dataflow.walk(body) if a.kind == "return"]
    if len(returns) != 1 or not isinstance(body[-1], cst.SimpleStatementLine) or \
            not isinstance(body[-1].body[0], cst.Return):
        raise refusal
    result = body[-1].body[0].value if body[-1].body[0].value is not None else cst.Name("None")
    body = body[:-1]
    outputs = [el.value for el in result.elements] if isinstance(result, cst.Tuple) else [result]
    if any(isinstance(atom, cst.Name) and isinstance(state.get(atom.value), tuple) for atom in outputs):
        raise refusal                          # a tuple held in a name: its arrays' rows are not written here
    axes = out_axes if isinstance(out_axes, tuple) else (out_axes,) * len(outputs)
    if len(axes) != len(outputs) or any(axis is None for axis in axes):
        raise refusal
    scope, params = core.scope, core.params
    batch_size, example = scope.claim("batch_size"), scope.claim("example")
    batches = {p: scope.claim(f"{p}_batch") for p, axis in zip(params, in_axes) if axis is not None}
    entry = []
    for p, axis in zip(params, in_axes):
        if axis not in (None, 0):         # each example a row of the batch-first argument
            entry.append(cf.assign(batches[p], cf.call("np.moveaxis", [cst.Name(batches[p]), cf.literal(axis),
                                                                      cf.literal(0)])))
    first = next(p for p in params if p in batches)
    shape = scope.temp()
    entry[:0] = [cf.assign(shape, cf.call("np.shape", [cst.Name(batches[first])])),
                 cf.assign(batch_size, cst.Subscript(cst.Name(shape), _index([cst.SubscriptElement(
                     cst.Index(cf.literal(0 if in_axes[params.index(first)] is None else
                                          in_axes[params.index(first)])))])))]

    def one_example(index):
        taken = [cf.assign(p, cst.Subscript(cst.Name(batches[p]), _index([cst.SubscriptElement(cst.Index(index))])))
                 for p in params if p in batches]
        return taken + [stmt.deep_clone() for stmt in body]
    rows = []
    entry += one_example(cf.literal(0))
    for atom in outputs:
        statements, room = apply_template(core, _templates().rows_like, {"x": atom,
                                                                         "batch_size": cst.Name(batch_size)})
        entry += statements
        rows.append(room)
    loop_body = one_example(cst.Name(example)) + [
        cf.assign(cst.Subscript(room, _index([cst.SubscriptElement(cst.Index(cst.Name(example)))])), atom)
        for room, atom in zip(rows, outputs)]
    entry.append(cf.with_comment(cst.For(target=cst.Name(example), iter=cf.call("range", [
        cf.literal(1), cst.Name(batch_size)]), body=cf.block(loop_body)),
        "# strategy: a loop over the examples, each running the function on its own: reverse mode's tape is "
        "used in a loop whose passes differ per example"))
    finished = []
    for room, axis in zip(rows, axes):
        if axis == 0:
            finished.append(room)
        else:
            moved = scope.temp()
            entry.append(cf.assign(moved, cf.call("np.moveaxis", [room, cf.literal(0), cf.literal(axis)])))
            finished.append(cst.Name(moved))
    out = cf.tuple_of(finished) if isinstance(result, cst.Tuple) else finished[0]
    entry.append(cf.statement(cst.Return(out)))
    entry[0] = cf.with_comment(entry[0], "# vmap: the function runs once per example (see the loop below)")
    new_params = [batches.get(p, p) for p in params]
    signature = core.node.params.with_changes(params=[
        param.with_changes(name=cst.Name(new)) for param, new in zip(core.node.params.params, new_params)])
    core.node = core.node.with_changes(params=signature, body=cf.block(entry))
    cf.check(core.node)
    return core


class _CheckpointsAsValues(cst.CSTTransformer):
    """``y = rt.custom_vjp_call(out, ...)`` of a tr.checkpoint is ``y = out`` under vmap: the marker
    only tells reverse mode to recompute, and batching changes no value (a user's custom_vjp keeps
    its marker, whose batching is refused)."""

    def __init__(self, functions):
        self.functions = functions

    def leave_Call(self, original, updated):
        if cf.primitive_of(updated) is not None and cf.primitive_of(updated).name == custom.VJP_CALL:
            rule = updated.args[3].value.evaluated_value
            if getattr(self.functions.get(rule), "recomputes", False):
                return updated.args[0].value
        return updated


def _is_batched(state) -> bool:
    return any(_is_batched(s) for s in state) if isinstance(state, tuple) else bool(state)


def _all_batched(state):
    """The state of a value assigned under a per-example condition: every element batched."""
    return tuple(_all_batched(s) for s in state) if isinstance(state, tuple) else True


def _all_batched_leaves(state) -> bool:
    return all(_all_batched_leaves(s) for s in state) if isinstance(state, tuple) else bool(state)


def _batch_axes(state):
    """vmap's in_axes for a value in this batch's layout: -1 (the batch last) or None, nested as
    ``state`` is."""
    return tuple(_batch_axes(s) for s in state) if isinstance(state, tuple) else (-1 if state else None)


def _merge(old, new):
    if old is None:
        return new
    if isinstance(old, tuple) and isinstance(new, tuple) and len(old) == len(new):
        return tuple(_merge(a, b) for a, b in zip(old, new))
    if isinstance(old, tuple) or isinstance(new, tuple):
        return True if _is_batched(old) or _is_batched(new) else False
    return old or new


def _is_literal(atom) -> bool:
    return cf.is_atom(atom) and not isinstance(atom, (cst.Name, cst.Tuple)) or \
        isinstance(atom, cst.Name) and atom.value in ("True", "False", "None")


# reductions over a tuple of axes that are the same reduction one axis after another
# (NumPy's mean over (a, b) is the mean over b of the means over a: the groups are the same size)


def _shift(axis: int) -> int:
    """A per-example axis as an axis of the batched value (batch axis last)."""
    return axis if axis >= 0 else axis - 1


def _index_atoms(index) -> list:
    atoms = []
    for element in index:
        item = element.slice
        if isinstance(item, cst.Index):
            atoms.append(item.value)
        else:
            atoms += [p for p in (item.lower, item.upper, item.step) if p is not None]
    return atoms


def _is_flag_break(stmt) -> bool:
    """``if flag: break``, the one way ``exits.structure_exits`` leaves a loop."""
    return isinstance(stmt, cst.If) and stmt.orelse is None and isinstance(stmt.test, cst.Name) and \
        len(stmt.body.body) == 1 and isinstance(stmt.body.body[0], cst.SimpleStatementLine) and \
        isinstance(stmt.body.body[0].body[0], cst.Break)


def _full_slice() -> cst.SubscriptElement:
    return cst.SubscriptElement(cst.Slice(lower=None, upper=None))


def _index(items) -> list:
    items = list(items)
    return [el.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                            if i + 1 < len(items) else cst.MaybeSentinel.DEFAULT) for i, el in enumerate(items)]


class _Reads(cst.CSTVisitor):
    """Counts the names a piece of code reads (assignment targets excluded)."""

    def __init__(self):
        self.counts = Counter()

    def visit_AssignTarget(self, node):
        if isinstance(node.target, cst.Name):
            return False
        return True

    def visit_For(self, node):
        node.iter.visit(self)
        node.body.visit(self)
        return False

    def visit_Name(self, node):
        self.counts[node.value] += 1


def _tape_kinds(node) -> set[str]:
    """The tape operations (push, pop, top, new) of the statements under ``node``."""
    return {cf.tape_operation(a.value) for block in cf.blocks(node) for a in dataflow.walk(block)
            if a.kind == "assign"} - {""}


def _reads(node) -> Counter:
    visitor = _Reads()
    node.visit(visitor)
    return visitor.counts


class _Batcher:
    def __init__(self, core, in_axes, out_axes, axis_name, axis_size, identity_basis=()):
        self.core = core
        self.scope = core.scope
        self.in_axes = in_axes
        self.out_axes = out_axes
        self.axis_name = axis_name
        self.axis_size = axis_size
        self.table = rules.table("batching")
        self.state: dict = {}
        self.out: list = []
        self.mask: str | None = None
        self.defined: set = set()
        self.loops: list = []            # (entry mask, names read outside, reads) per enclosing loop
        self.masked_loops = 0            # enclosing loops whose passes differ per example
        self.first_store_flags: dict = {}  # name -> flag set at the start: has this name no value yet?
        self.branch_reads: list = []     # per enclosing batched branch: the names it reads
        self.rows: dict = {}             # batched name -> its batch-first copy (parameters; in a loop over examples)
        self.used_rows: set = set()
        self.identity_basis = identity_basis
        self.identities: set = set()     # unchanged parameters that are the identity basis
        self.origin: Location | None = None
        self.comment: str | None = None
        self.all_reads = _reads(core.node.body)
        self.assignments = Counter(a.target for a in dataflow.walk(core.node.body.body) if a.kind == "assign")
        # names bound to a comparison's result: boolean masks, whose x[mask] has a per-example length
        self.masks = {a.target for a in dataflow.walk(core.node.body.body) if a.kind == "assign"
                      and getattr(cf.primitive_of(a.value), "kind", None) == primitives.COMPARE}

    # ----------------------------------------------------------------- run
    def run(self) -> CoreFunction:
        params = self.core.params
        if len(params) != len(self.in_axes):
            raise ValueError(f"in_axes has {len(self.in_axes)} entries but {self.core.name} takes "
                             f"{len(params)} arguments")
        for param, axis in zip(params, self.in_axes):
            if axis is not None and not isinstance(axis, int):   # a prefix spread over leaves, but no leaves
                raise TransformError(f"vmap's in_axes entry {axis!r} for {param!r}, which is not a tuple, list or "
                                     f"dict whose structure is known here", None,
                                     "give an int or None for an array, or pass a tuple written in the call")
        # batching is decided per name: a reused loop index gets a name per loop first
        self.core = own_loop_names(self.core)
        self.all_reads = _reads(self.core.node.body)
        self._infer_to_fixpoint()
        if self._has_batched_exit(self.core.node.body.body, False, False):
            # Exits that differ per example become flags (one return at the end, loops
            # leaving only through a final `if flag: break`); a flag is then one more mask.
            self.core = structure_exits(self.core)
            self.all_reads = _reads(self.core.node.body)
            self._infer_to_fixpoint()
        self.batch_size = self.scope.claim("batch_size")
        self.one_value = _one_value_per_example(self.core.node, self.table)
        self.defined = set(params) | {self.batch_size}
        # A batched parameter the body never changes keeps its batch-first original for loops over
        # the examples (numba's batch-first copy of a batch-last array is slow).  Any in-place write
        # might reach a parameter through an alias (y = x; y[0] = 1.0), so then none does.
        rebinds = dataflow.write_counts(self.core.node).count
        writes_in_place = any(a.kind == "write_into" for a in dataflow.walk(self.core.node.body.body))
        param_rows = {param: (self.scope.claim(f"{param}_rows"), axis) for param, axis in zip(params, self.in_axes)
                      if axis is not None and rebinds.get(param) == 1 and not writes_in_place}
        self.rows = {param: name for param, (name, _) in param_rows.items()}
        self.identities = {params[i] for i in self.identity_basis
                           if self.in_axes[i] == -1 and rebinds.get(params[i]) == 1 and not writes_in_place}
        # the batch size from the first batched argument as passed
        entry = []
        first = next(((p, a) for p, a in zip(params, self.in_axes) if a is not None), None)
        if first is None:
            entry.append(cf.assign(self.batch_size, cf.literal(self.axis_size)))
        else:
            shape = self.scope.temp()
            entry.append(cf.assign(shape, cf.call("np.shape", [cst.Name(first[0])])))
            entry.append(cf.assign(self.batch_size, cst.Subscript(cst.Name(shape), _index(
                [cst.SubscriptElement(cst.Index(cf.literal(first[1])))]))))
        copies = {}
        for param, axis in zip(params, self.in_axes):
            if axis == -1:        # already batch-last: numba copies a moveaxis view by a slower strided loop
                copies[param] = [cf.assign(param, cf.call("np.copy", [cst.Name(param)]))]
            elif axis is not None:
                moved = self.scope.temp()
                copies[param] = [cf.assign(moved, cf.call("np.moveaxis", [cst.Name(param), cf.literal(axis),
                                                                         cf.literal(-1)])),
                                 cf.assign(param, cf.call("np.copy", [cst.Name(moved)]))]
        for param, axis in zip(params, self.in_axes):
            if axis is None and self.state.get(param) is True:
                # given to every example, but rebound to per-example values (x = x + y; a loop
                # carrying it): each example gets its own copy on entry, so every read sees a batch
                saved, self.out = self.out, []
                self.assign(param, self.broadcast(cst.Name(param)))
                copies[param], self.out = self.out, saved
                copies[param][0] = cf.with_comment(copies[param][0], f"# vmap: {param} is the same for every "
                                                   f"example, but rebound per example: a copy for each")
        body = self.block(self.core.node.body.body)
        # a batch-last copy only of the arguments the batched body reads as such (products
        # may read an unchanged argument's rows instead: then it needs none)
        read = set().union(*(dataflow.all_names(stmt) for stmt in body)) if body else set()
        copied = [stmt for param, stmts in copies.items() if param in read for stmt in stmts]
        if copied:
            copied[0] = cf.with_comment(copied[0], "# vmap: every batched argument keeps its batch axis last "
                                                   "(per-example values broadcast right-aligned)")
        entry += copied       # after the batch size: the copies rebind the arguments' names
        rows = []
        for param, (name, axis) in param_rows.items():
            if name in self.used_rows and axis == 0:
                rows.append(cf.assign(name, cst.Name(param)))
            elif name in self.used_rows:
                moved = self.scope.temp()
                rows.append(cf.assign(moved, cf.call("np.moveaxis", [cst.Name(param), cf.literal(axis),
                                                                     cf.literal(0)])))
                rows.append(cf.assign(name, cf.call("np.copy", [cst.Name(moved)])))
        if rows:
            rows[0] = cf.with_comment(rows[0], "# loops over the examples and products read them as rows of the "
                                               "batch-first argument (contiguous)")
        entry[:0] = rows
        entry += [cf.assign(flag, cst.Name("True")) for flag in self.first_store_flags.values()]
        self.core.node = self.core.node.with_changes(body=cf.block(entry + body))
        cf.check(self.core.node)
        return self.core

    # ------------------------------------------------------------ analysis
    def _infer_to_fixpoint(self):
        self.state = {param: axis is not None for param, axis in zip(self.core.params, self.in_axes)}
        while True:
            before = dict(self.state)
            self._infer(self.core.node.body.body, False)
            if self.state == before:
                return

    def _mark(self, name, state):
        self.state[name] = _merge(self.state.get(name), state)

    def _atom_state(self, atom):
        if isinstance(atom, cst.Name):
            return self.state.get(atom.value, False)
        if isinstance(atom, cst.Tuple):
            return tuple(self._atom_state(el.value) for el in atom.elements)
        return False

    def _value_state(self, value):
        if cf.is_atom(value):
            return self._atom_state(value)
        if isinstance(value, cst.Subscript):
            base = self._atom_state(value.value)
            position = cf.int_literal(value.slice[0].slice.value) if len(value.slice) == 1 and \
                isinstance(value.slice[0].slice, cst.Index) else None
            if isinstance(base, tuple) and position is not None and -len(base) <= position < len(base):
                return base[position]
            return _is_batched(base) or any(_is_batched(self._atom_state(a)) for a in _index_atoms(value.slice))
        prim = cf.primitive_of(value)
        args, keywords = cf.operands(value), cf.keywords(value)
        batched = any(_is_batched(self._atom_state(a)) for a in args + list(keywords.values()))
        options = getattr(self.table.get(prim.name), "rule_options", {})
        if options.get("strategy") == "query":
            return False
        if options.get("strategy") == "custom":     # its output, a tuple's elements each given the batch
            out_state = self._atom_state(args[0])
            return _all_batched(out_state) if batched else out_state
        if options.get("strategy") == "collective" and self._own_axis(prim, args):
            return options.get("batched_result", False)
        if prim.results:          # a tuple (np.linalg.eigh): each result batched as the call is
            return (batched,) * len(prim.results)
        return batched

    def _infer(self, stmts, under_batched: bool):
        for position, stmt in enumerate(stmts):
            if isinstance(stmt, cst.SimpleStatementLine):
                small = stmt.body[0]
                if isinstance(small, cst.Assign):
                    target, value = small.targets[0].target, small.value
                    if isinstance(target, cst.Name):
                        state = self._value_state(value)
                        # under a condition that differs per example, a store keeps each example's
                        # old value where it does not run; but not for a tape entry every example
                        # shares, nor for a name no example reads but where it was just assigned
                        if under_batched and not self._same_entry_for_all(value) and \
                                not (not _is_batched(state) and self._read_only_after(target.value, stmts, position)):
                            state = _all_batched(state)
                        self._mark(target.value, state)
                    elif under_batched or _is_batched(self._atom_state(value)) or \
                            any(_is_batched(self._atom_state(a)) for a in _index_atoms(target.slice)):
                        self._mark(target.value.value, True)
            elif isinstance(stmt, cst.If):
                inner = under_batched or _is_batched(self._atom_state(stmt.test))
                for block in cf.blocks(stmt):
                    self._infer(block, inner)
            elif isinstance(stmt, cst.While):
                self._infer(stmt.body.body, under_batched or self._is_masked_loop(stmt))
            elif isinstance(stmt, cst.For):
                self._mark(stmt.target.value, self._counts_per_example(stmt))
                self._infer(stmt.body.body, under_batched or self._is_masked_loop(stmt))

    def _read_only_after(self, name, stmts, position) -> bool:
        """Whether ``name``, assigned once, by ``stmts[position]``, is read only by the statements after
        it in that block: an example that skips the assignment never reads the name, and one that
        runs it reads that value (a shape or index taken in a branch, or in a loop's pass)."""
        if self.assignments[name] != 1:
            return False
        after = sum((_reads(stmt) for stmt in stmts[position + 1:]), Counter())
        return after[name] == self.all_reads[name]

    def _same_entry_for_all(self, value) -> bool:
        """Whether ``value`` reads an entry of a tape no example batches (``rt.pop(t)``, ``rt.top(t)``):
        the value the forward sweep had there, the same for every example, under any condition."""
        return cf.tape_operation(value) in ("pop", "top") and \
            not _is_batched(self._atom_state(cf.operands(value)[0]))

    def _exit_flags(self, loop) -> list:
        """The flags of the final ``if flag: break`` statements of a loop (``exits.structure_exits``)."""
        flags = []
        for stmt in reversed(loop.body.body):
            if not _is_flag_break(stmt):
                break
            flags.append(stmt.test)
        return flags[::-1]

    def _is_masked_loop(self, loop) -> bool:
        """Whether examples leave ``loop`` after different passes."""
        if any(_is_batched(self._atom_state(flag)) for flag in self._exit_flags(loop)):
            return True
        if isinstance(loop, cst.While):
            return _is_batched(self._atom_state(loop.test))
        return any(_is_batched(self._atom_state(a.value)) for a in loop.iter.args)

    def _counts_per_example(self, loop: cst.For) -> bool:
        """Whether a for loop's index differs per example: batched bounds, or an index read after
        a loop that examples leave at different passes (each keeps the index it left with)."""
        if any(_is_batched(self._atom_state(a.value)) for a in loop.iter.args):
            return True
        return self._is_masked_loop(loop) and loop.target.value in self.read_outside(loop)

    def _has_batched_exit(self, stmts, function_masked: bool, loop_masked: bool) -> bool:
        """Whether a return (a break, a continue) is reached under a condition that differs per example
        since the function's (the loop's) start."""
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                small = stmt.body[0]
                if isinstance(small, cst.Return) and function_masked or \
                        isinstance(small, (cst.Break, cst.Continue)) and loop_masked:
                    return True
            elif isinstance(stmt, cst.If):
                batched = _is_batched(self._atom_state(stmt.test))
                if any(self._has_batched_exit(b, function_masked or batched, loop_masked or batched)
                       for b in cf.blocks(stmt)):
                    return True
            elif isinstance(stmt, (cst.For, cst.While)):
                masked = self._is_masked_loop(stmt)
                if self._has_batched_exit(stmt.body.body, function_masked or masked, masked):
                    return True
        return False

    def _own_axis(self, prim, args) -> bool:
        name_atom = args[-1] if args else None
        return self.axis_name is not None and isinstance(name_atom, cst.SimpleString) and \
            name_atom.evaluated_value == self.axis_name

    # ---------------------------------------------------------- generation
    def error(self, message, hint=None) -> TransformError:
        return TransformError(message, self.origin, hint)

    def emit(self, stmt):
        if self.comment:
            for line in self.comment.split("\n"):
                stmt = cf.with_comment(stmt, line)
            self.comment = None
        self.out.append(stmt)

    def assign(self, target, value):
        self.emit(cf.assign(target, value))

    def temp_of(self, value) -> cst.BaseExpression:
        """An atom holding ``value`` (a new temporary unless it already is one)."""
        if cf.is_atom(value):
            return value
        name = self.scope.temp()
        self.assign(name, value)
        return cst.Name(name)

    def template(self, fn, **bound):
        stmts, result = apply_template(self.core, fn, bound)
        for stmt in stmts:
            self.emit(stmt)
        return result

    def block(self, stmts) -> list:
        saved, self.out = self.out, []
        for stmt in stmts:
            self.statement(stmt)
        body, self.out = self.out, saved
        return body

    def statement(self, stmt):
        origin = cf.origin_of(stmt)
        if origin is not None:
            file, line = origin
            self.origin = Location(self.core.sources.get(file, file), line)
            text = stmt.leading_lines[-1].comment.value.lstrip("# ").strip()
            self.comment = f"# vmap of: {text}" if not text.startswith("vmap") else f"# {text}"
        if isinstance(stmt, cst.If):
            self.if_statement(stmt)
        elif isinstance(stmt, cst.While):
            self.while_statement(stmt)
        elif isinstance(stmt, cst.For):
            self.for_statement(stmt)
        else:
            self.small_statement(stmt.body[0])

    def small_statement(self, small):
        if isinstance(small, cst.Pass):
            return
        if isinstance(small, (cst.Break, cst.Continue)):
            if self.mask is not None:      # run() turned exits under batched conditions into flags
                raise self.error(f"internal: {type(small).__name__.lower()} left under a batched condition")
            self.emit(cf.statement(small))
            return
        if isinstance(small, cst.Return):
            self.return_statement(small)
            return
        target, value = small.targets[0].target, small.value
        if isinstance(target, cst.Subscript):
            self.setitem(target, value)
            return
        if isinstance(value, cst.Call) and cf.primitive_of(value).tape:
            self.tape_statement(target.value, cf.primitive_of(value), value)
            return
        expr, batched = self.batched_value(value)
        self.store(target.value, expr, batched)

    def tape_statement(self, name, prim, value):
        """Reverse mode's tape (grad of a loop that overwrites values): one tape whose entries carry
        the batch axis serves every example while all push and pop in the same order.  They do under
        a condition that differs per example, as both branches run for every example, each keeping
        its own values (``if_statement`` orders the branches so that pops meet their pushes), and
        they do not in a loop whose passes differ: refused there."""
        if self.masked_loops:
            raise _PassesDifferPerExample(
                "grad's tape is used in a loop whose passes differ between examples: batched, the loop runs "
                "every example for the most passes, so in the backward sweep an example with fewer would pop "
                "the entries of passes it never ran", self.origin,
                "vmap runs such a function once per example; with collectives over the vmap's axis it "
                "cannot: give the loop a fixed count and mask its body with np.where")
        args = cf.operands(value)
        tape_batched = bool(args) and _is_batched(self._atom_state(args[0]))
        if prim.tape == "push":
            pushed = args[1]
            if tape_batched and not _is_batched(self._atom_state(pushed)):
                pushed = self.broadcast(pushed)      # every entry batched: numba's list has one type
            self.assign(name, cf.call(prim.spelling, [args[0], pushed]))
        elif prim.tape == "new":
            self.assign(name, value)                 # an empty tape holds whatever is pushed
        elif self.mask is not None and self._same_entry_for_all(value):
            outer, self.mask = self.mask, None      # not masked: every example has this value here
            self.store(name, value, False)
            self.mask = outer
        else:
            self.store(name, value, tape_batched)    # rt.pop / rt.top: an entry, batched as the tape is
        self.defined.add(name)

    # --------------------------------------------------------------- stores
    def store(self, name: str, expr, batched):
        target_state = self.state.get(name, False)
        if isinstance(target_state, tuple):
            expr = self.batched_tuple(expr, batched, target_state)
            if self.mask is not None and any(isinstance(s, tuple) for s in target_state):
                raise self.error(f"a tuple of tuples ({name!r}) is assigned in a loop whose passes differ "
                                 f"between examples", "assign its elements to separate names")
            if self.mask is not None and name in self.defined:     # element by element, as for arrays
                old = [self.temp_of(cst.Subscript(cst.Name(name), _index([cst.SubscriptElement(
                    cst.Index(cf.literal(i)))]))) for i in range(len(target_state))]
                expr = cf.tuple_of([self.temp_of(cf.call("np.where", [cst.Name(self.mask), el.value, o]))
                                    for el, o in zip(expr.elements, old)])
            self.assign(name, expr)
            self.defined.add(name)
            return
        if not target_state:
            self.assign(name, expr)
            self.defined.add(name)
            return
        if self.mask is None or name not in self.defined:
            if self.mask is not None and self.loops:
                entry_mask, read_outside, loop_reads = self.loops[-1]
                # A plain first assignment runs on every pass, for every example: safe only when no
                # example can read a value another pass left behind -- the name is not read after
                # the loop, and if this is a branch, only read inside it.
                branch_only = self.mask == entry_mask or \
                    self.branch_reads and self.branch_reads[-1].get(name, 0) == loop_reads.get(name, 0)
                if not branch_only or name in read_outside:
                    self.first_store_in_loop(name, expr, batched)
                    return
            if not _is_batched(batched):
                expr = self.broadcast(self.temp_of(expr))
            self.assign(name, expr)
        elif name in self.first_store_flags:
            # first given a value in a loop whose store may not have run (a branch no example took):
            # the same flag says whether the name has a value to keep for the inactive examples
            self.first_store_in_loop(name, expr, batched, f"# {name} may have no value yet: its store in a "
                                                          f"loop runs only where a condition holds")
            return
        else:
            self.assign(name, self.masked(expr, batched, name))
        self.defined.add(name)

    def masked(self, expr, batched, name):
        """``np.where(mask, expr, name)``: the new value for the active examples only."""
        atom = self.temp_of(expr)
        if not _is_batched(batched) and not _is_literal(atom):
            atom = self.template(_templates().align, x=atom)
        return cf.call("np.where", [cst.Name(self.mask), atom, cst.Name(name)])

    def first_store_in_loop(self, name, expr, batched, comment=None):
        """The first assignment, under a mask, of a name inside a loop that is read outside it.

        Its first run gives every example the value (an example that never assigns it
        never reads it), later runs only the active ones.  A flag set at the function's
        start says which; it keeps the variable one type for numba, which also needs the
        first branch to be the one that defines it.  A later store of the name, after the loop,
        asks the same flag (``comment``: what it says there): the store in the loop may not have run.
        """
        if name not in self.first_store_flags:
            self.first_store_flags[name] = self.scope.claim(f"{name}_fresh")
        fresh = self.first_store_flags[name]
        atom = self.temp_of(expr)
        saved, self.out = self.out, []
        self.assign(name, atom if _is_batched(batched) else self.broadcast(atom))
        self.assign(fresh, cst.Name("False"))
        first, self.out = self.out, []
        self.assign(name, self.masked(atom, batched, name))
        later, self.out = self.out, saved
        self.emit(cf.with_comment(cst.If(test=cst.Name(fresh), body=cf.block(first), orelse=cst.Else(cf.block(later))),
                                  comment if comment else
                                  f"# {name} is first given a value inside a loop whose passes differ per example"
                                  if self.masked_loops else
                                  f"# {name} is first given a value inside a loop, where a condition that differs "
                                  f"per example runs its assignment"))
        self.defined.add(name)

    def batched_tuple(self, expr, batched, target_state):
        """A tuple value whose elements match the batching the target's elements need."""
        if not isinstance(expr, cst.Tuple) or not isinstance(batched, tuple):
            if _is_batched(batched) == _is_batched(target_state) or batched == target_state:
                return expr
            raise self.error("a tuple whose elements are batched differently on different paths cannot be batched")
        elements = []
        for element, have, want in zip(expr.elements, batched, target_state):
            atom = element.value
            if _is_batched(want) and not _is_batched(have):
                atom = self.broadcast(atom)
            elements.append(atom)
        return cf.tuple_of(elements)

    def broadcast(self, atom):
        """An unbatched value given to every example."""
        if _is_literal(atom) and not isinstance(atom, (cst.Tuple, cst.SimpleString)) and \
                not (isinstance(atom, cst.Name) and atom.value == "None"):
            return self.temp_of(cf.call("np.full", [cf.tuple_of([cst.Name(self.batch_size)]), atom]))
        return self.template(_templates().broadcast_batch, x=atom, batch_size=cst.Name(self.batch_size))

    def setitem(self, target: cst.Subscript, value):
        array = target.value.value
        index_batched = any(_is_batched(self._atom_state(a)) for a in _index_atoms(target.slice))
        if not _is_batched(self.state.get(array, False)):
            self.emit(cf.assign(target, value))
            return
        if index_batched:
            self.setitem_loop(target, value)
            return
        index = _index(list(target.slice) + [_full_slice()])
        new = value
        if not _is_batched(self._atom_state(value)) and not _is_literal(value):
            new = self.template(_templates().align, x=value)
        if self.mask is not None:
            old = self.scope.temp()
            self.assign(old, cst.Subscript(cst.Name(array), index))
            new = self.temp_of(cf.call("np.where", [cst.Name(self.mask), new, cst.Name(old)]))
        self.emit(cf.assign(cst.Subscript(cst.Name(array), index), new))

    def setitem_loop(self, target, value):
        example = self.scope.claim("example")
        saved, self.out = self.out, []
        self.comment, comment = None, self.comment
        row = self.example_of(target.value, cst.Name(example))
        index = self.index_of_example(target.slice, cst.Name(example))
        item = self.example_of(value, cst.Name(example))
        write = cf.assign(cst.Subscript(row, index), item)
        if self.mask is not None:
            active = self.scope.temp()
            self.assign(active, cst.Subscript(cst.Name(self.mask), _index([cst.SubscriptElement(
                cst.Index(cst.Name(example)))])))
            self.emit(cst.If(test=cst.Name(active), body=cf.block([write])))
        else:
            self.emit(write)
        body, self.out = self.out, saved
        self.comment = comment
        self.emit(cf.with_comment(cst.For(target=cst.Name(example), iter=cf.call("rt.parallel_range", [
            cst.Name(self.batch_size)]), body=cf.block(body)),
            "# strategy: a loop over the examples (the index differs per example)"))

    # --------------------------------------------------------------- values
    def batched_value(self, value):
        """(core-form right-hand side, batching state) of ``value`` for the batch."""
        if cf.is_atom(value):
            return value, self._atom_state(value)
        if isinstance(value, cst.Subscript):
            return self.getitem(value)
        prim = cf.primitive_of(value)
        args, keywords = cf.operands(value), cf.keywords(value)
        states = [self._atom_state(a) for a in args]
        any_batched = any(_is_batched(s) for s in states + [self._atom_state(v) for v in keywords.values()])
        rule = self.table.get(prim.name)
        if rule is None:
            reason = rules.UNSUPPORTED["batching"].get(prim.name, "no batching rule")
            if any_batched:
                raise self.error(f"{prim.spelling} cannot be batched: {reason}")
            return value, False
        strategy = rule.rule_options["strategy"]
        if strategy == "collective" and self._own_axis(prim, args):
            return self.collective(prim, rule, args)
        if not any_batched:
            return value, False
        batched_keywords = [k for k, v in keywords.items() if _is_batched(self._atom_state(v))]
        if batched_keywords and not rule.rule_options.get("keywords_per_example"):
            raise self.error(f"the {', '.join(batched_keywords)} argument of {prim.spelling} differs "
                             f"between examples", "keep axis and shape arguments the same for every example")
        method = getattr(self, f"rule_{strategy}")
        return method(prim, rule, args, keywords, states), strategy != "query"   # shapes: one per batch

    def apply(self, template, **operands):
        """``template`` inlined on ``operands``, and the batch size where it takes one; its last value
        comes back as an expression, for the caller to name (``n = len(x)``, not ``_t7 = len(x); n = _t7``)."""
        if "batch_size" in inspect.signature(template).parameters:
            operands["batch_size"] = cst.Name(self.batch_size)
        stmts, result = apply_template(self.core, template, operands)
        last = stmts[-1].body[0] if stmts and isinstance(stmts[-1], cst.SimpleStatementLine) else None
        if isinstance(result, cst.Name) and isinstance(last, cst.Assign) and len(last.targets) == 1 \
                and isinstance(last.targets[0].target, cst.Name) and last.targets[0].target.value == result.value:
            stmts, result = stmts[:-1], last.value
        for stmt in stmts:
            self.emit(stmt)
        return result

    def named_template(self, rule, option: str):
        """The template a rule's option names (``without_axis="flip_examples"``), from the rule's module."""
        return getattr(_templates(), rule.rule_options[option])

    def rule_display(self, prim, rule, args, keywords, states):
        if isinstance(args[0], cst.Tuple):
            # np.array([[1.0, b], [a, 3.0]]) with batched entries: NumPy cannot mix the batch's
            # arrays with numbers in one display, so each entry gets the batch and rows are stacked
            stacked = self.stacked_display(args[0])
            return cf.apply_primitive(prim, [self.temp_of(stacked)], list(keywords.items())) if keywords else stacked
        return self.rule_elementwise(prim, _templates().align, args, keywords, states)

    def rule_elementwise(self, prim, rule, args, keywords, states):
        if len(args) + len(keywords) < len(prim.params):
            # np.where(c) alone is np.nonzero's indices: as many as the values say, for each example
            raise self.error(f"{prim.spelling}() without its {', '.join(prim.params[len(args):])} is not elementwise, "
                             "and its size would differ per example under vmap", f"pass {', '.join(prim.params)}")
        aligned = [a if _is_batched(s) or _is_literal(a) else self.template(rule, x=a) for a, s in zip(args, states)]
        return cf.apply_primitive(prim, aligned, list(keywords.items()))

    def stacked_display(self, display: cst.Tuple):
        """A tuple display as the batch's array: every entry with the batch axis (an unbatched one
        broadcast), stacked along a new first axis, nested displays first."""
        entries = []
        for element in display.elements:
            value = element.value
            if isinstance(value, cst.Tuple):
                entries.append(self.temp_of(self.stacked_display(value)))
            else:
                entries.append(value if _is_batched(self._atom_state(value)) else self.broadcast(value))
        return cf.call("np.stack", [cf.tuple_of(entries)])

    def rule_custom(self, prim, rule, args, keywords, states):
        """A custom function's call: the marker stays, every element of its output given the batch,
        and names the user's rule applied to each example (``custom.batched_rule``), which a later
        derivative inlines as it would the user's own."""
        operands, state = dict(zip(prim.params, args)), dict(zip(prim.params, states))
        for k, input_state in enumerate(state["inputs"]):
            if isinstance(input_state, tuple) and _is_batched(input_state) and not _all_batched_leaves(input_state):
                raise self.error(f"argument {k} of a custom function is a tuple whose arrays are batched "
                                 f"differently: its rule takes the batch in all of them or none",
                                 "pass the arrays of that tuple as arguments of their own")
        operands["out"] = self.given_the_batch(operands["out"], state["out"])
        user_rule = self.core.functions[operands["rule"].evaluated_value]
        if prim.name == custom.VJP_CALL:
            made = custom.batched_rule("vjp", user_rule, _batch_axes(state["residuals"]),
                                       tuple(not _is_batched(s) for s in state["inputs"]))
        else:
            made = custom.batched_rule("jvp", user_rule, _batch_axes(state["inputs"]))
        name = self.scope.claim(f"{operands['rule'].evaluated_value}_batched")
        self.core.functions[name] = made
        operands["rule"] = cf.literal(name)
        return cf.apply_primitive(prim, [operands[p] for p in prim.params])

    def given_the_batch(self, atom, state):
        """``atom`` with every array it holds batched (a tuple display element by element)."""
        if isinstance(atom, cst.Tuple):
            return cf.tuple_of([self.given_the_batch(el.value, s) for el, s in zip(atom.elements, state)])
        if not _is_batched(state):
            return self.broadcast(atom)
        if isinstance(state, tuple) and not _all_batched_leaves(state):
            raise self.error("a custom function's output is a tuple whose arrays are batched differently",
                             "return a tuple written as a display, (a, b)")
        return atom

    def rule_collective(self, prim, rule, args, keywords, states):
        """A collective over another vmap's axis: applied per example, as an elementwise primitive."""
        return self.rule_elementwise(prim, _templates().align, args, keywords, states)

    def rule_batched(self, prim, rule, args, keywords, states):
        """The rule's template computes every example at once from operands that all carry the batch axis."""
        if keywords:
            return self.rule_loop(prim, rule, args, keywords, states)
        shape_only = rule.rule_options.get("shape_only", ())
        if "when_one_value" in rule.rule_options and all(self.holds_one_value(a) for a in args):
            rule = self.named_template(rule, "when_one_value")     # its operand needs no check

        def operand(name, atom, state):
            if _is_batched(state):
                return atom
            if name in shape_only:       # the rule reads only its shape: a view, not a copy per example
                return self.template(_templates().batch_view, x=atom, batch_size=cst.Name(self.batch_size))
            return self.broadcast(atom)
        names = list(inspect.signature(rule).parameters)
        return self.apply(rule, **{name: operand(name, a, s) for name, a, s in zip(names, args, states)})

    def rule_reduce(self, prim, rule, args, keywords, states):
        x = args[0]
        axis = keywords.get("axis", cst.Name("None"))
        keepdims = keywords.get("keepdims", cst.Name("False"))
        if rule.rule_options.get("vector_2_norm_only") and (isinstance(axis, cst.Tuple) or not (
                isinstance(keywords.get("ord", cst.Name("None")), cst.Name)
                and keywords.get("ord", cst.Name("None")).value == "None")):
            return self.rule_loop(prim, rule, args, keywords, states)    # another ord, or a matrix norm
        extra = {"ddof": keywords["ddof"]} if "ddof" in keywords else {}
        if isinstance(axis, cst.Name) and axis.value == "None":
            flat = self.temp_of(cf.call("np.reshape", [self.contiguous(x), cf.tuple_of([cf.literal(-1),
                                                                                         cst.Name(self.batch_size)])]))
            if isinstance(keepdims, cst.Name) and keepdims.value == "True":    # (1, ..., 1, batch)
                reduced = self.temp_of(self.template(rule, x=flat, **extra))
                kept = self.temp_of(cf.call("rt.kept_dims_shape", [self.temp_of(cf.call("np.shape", [x]))]))
                return cf.call("np.reshape", [reduced, kept])
            return self.template(rule, x=flat, **extra)
        keep = isinstance(keepdims, cst.Name) and keepdims.value == "True"
        if isinstance(axis, cst.Tuple):
            axes = [cf.int_literal(el.value) for el in axis.elements]
            if None in axes:
                raise self.error(f"{prim.spelling} under vmap needs a literal int axis, or a literal tuple of them",
                                 "reduce one axis at a time")
            if not rule.rule_options.get("one_axis_at_a_time"):
                return self._reduce_axes_together(prim, rule, x, axes, keep, extra)
            # reduce the axes one at a time: positive ones from the last (the others keep their
            # place), then negative ones from the first (the same); keepdims moves none of them
            order = sorted(a for a in axes if a >= 0)[::-1] + sorted(a for a in axes if a < 0)
            for k in order:
                x = self.temp_of(self._reduce_axis(rule, x, _shift(k), keep, extra))
            return x
        k = cf.int_literal(axis)
        if k is None:
            raise self.error(f"{prim.spelling} under vmap needs a literal int axis (or none)",
                             "reduce one axis at a time")
        return self._reduce_axis(rule, x, _shift(k), keep, extra)

    def _reduce_axes_together(self, prim, rule, x, axes, keepdims, extra):
        """np.var and np.std over a tuple of axes, which cannot be reduced one at a time: the axes are
        moved to the front and merged into one, which the template reduces.  Non-negative axes move
        in increasing order, negative ones in increasing order too, so no move shifts an axis still to
        move; with both signs the example's rank would be needed, which vmap does not know."""
        if min(axes) < 0 <= max(axes):
            raise self.error(f"{prim.spelling} under vmap over axes of both signs {tuple(axes)}",
                             "give the axes all non-negative or all negative")
        for position, k in enumerate(sorted(axes)):
            x = self.temp_of(cf.call("np.moveaxis", [x, cf.literal(_shift(k)), cf.literal(position)]))
        rest = self.temp_of(cst.Subscript(self.temp_of(cf.call("np.shape", [x])), [cst.SubscriptElement(
            cst.Slice(lower=cf.literal(len(axes)), upper=None))]))
        merged_shape = self.temp_of(cst.BinaryOperation(cf.tuple_of([cf.literal(-1)]), cst.Add(), rest))
        merged = self.temp_of(cf.call("np.reshape", [self.contiguous(x), merged_shape]))
        result = self.template(rule, x=merged, **extra)
        if keepdims:    # each reduced axis back as a 1, where it was (negative ones counted before the batch axis)
            for k in sorted(axes, reverse=min(axes) < 0):
                result = cf.call("np.expand_dims", [self.temp_of(result), cf.literal(_shift(k))])
        return result

    def _reduce_axis(self, rule, x, k, keepdims, extra):
        """The template reduces the leading axis, so per-example axis ``k`` (of the batched value) goes first."""
        leading = self.temp_of(cf.call("np.moveaxis", [x, cf.literal(k), cf.literal(0)]))
        result = self.template(rule, x=leading, **extra)
        if rule.rule_options.get("keeps_axis"):
            return cf.call("np.moveaxis", [result, cf.literal(0), cf.literal(k)])
        if keepdims:
            return cf.call("np.expand_dims", [result, cf.literal(k)])
        return result

    # ------------------------------------------------ shape operations (batch axis kept last)
    def rule_join(self, prim, rule, args, keywords, states):
        arrays = args[0]
        if not isinstance(arrays, cst.Tuple):
            raise self.error(f"{prim.spelling} under vmap needs its arrays as a literal tuple")
        elements = [el.value if _is_batched(self._atom_state(el.value)) else self.broadcast(el.value)
                    for el in arrays.elements]
        given = keywords.get("axis")
        if rule.rule_options.get("flattens_without_axis") and isinstance(given, cst.Name) and given.value == "None":
            # the arrays flattened first: each example's entries are a column of (-1, batch)
            columns = [self.temp_of(cf.call("np.reshape", [self.contiguous(el), cf.tuple_of([
                cf.literal(-1), cst.Name(self.batch_size)])])) for el in elements]
            return cf.call(prim.spelling, [cf.tuple_of(columns)], [("axis", cf.literal(0))])
        axis = cf.int_literal(given) if given is not None else 0
        if axis is None:
            raise self.error(f"{prim.spelling} under vmap needs a literal int axis")
        return cf.call(prim.spelling, [cf.tuple_of(elements)], [("axis", cf.literal(_shift(axis)))])

    def batched_operand(self, prim, states):
        if not _is_batched(states[0]):
            raise self.error(f"the shape argument of {prim.spelling} differs between examples")

    def rule_new_shape(self, prim, rule, args, keywords, states):
        self.batched_operand(prim, states)
        x = self.contiguous(args[0]) if rule.rule_options.get("contiguous") else args[0]
        return cf.call(prim.spelling, [x, self.with_batch(args[1])])

    def rule_flatten(self, prim, rule, args, keywords, states):
        self.batched_operand(prim, states)
        columns = cf.tuple_of([cf.literal(-1), cst.Name(self.batch_size)])      # each example's entries a column
        return cf.call("np.reshape", [self.contiguous(args[0]), columns])

    def rule_permute(self, prim, rule, args, keywords, states):
        self.batched_operand(prim, states)
        x, axes = args[0], keywords.get("axes")
        if axes is None or isinstance(axes, cst.Name) and axes.value == "None":
            reversed_ = self.temp_of(cf.call(prim.spelling, [x]))
            return cf.call("np.moveaxis", [reversed_, cf.literal(0), cf.literal(-1)])
        values = [cf.int_literal(el.value) for el in axes.elements] if isinstance(axes, cst.Tuple) else [None]
        if None in values:
            raise self.error(f"{prim.spelling} under vmap needs literal axes")
        n = len(values)
        return cf.call(prim.spelling, [x], [("axes", cf.literal(tuple(v % n for v in values) + (n,)))])

    def rule_axis_arguments(self, prim, rule, args, keywords, states):
        self.batched_operand(prim, states)
        axes = []
        given = list(args[1:]) + [keywords[p] for p in prim.params[len(args):] if p in keywords]
        for a in given:
            value = cf.int_literal(a)
            if value is not None:
                axes.append(cf.literal(_shift(value)))
            elif isinstance(a, cst.Name):         # an int axis known at run time: shifted then, as _shift
                negative = self.temp_of(cst.Comparison(a, [cst.ComparisonTarget(cst.LessThan(), cf.literal(0))]))
                axes.append(self.temp_of(cst.BinaryOperation(a, cst.Subtract(), negative)))
            else:
                raise self.error(f"{prim.spelling} under vmap needs int axes")
        return cf.call(prim.spelling, [args[0]] + axes)

    def rule_axis_keyword(self, prim, rule, args, keywords, states):
        self.batched_operand(prim, states)
        x = args[0]
        if "axis" not in keywords or isinstance(keywords["axis"], cst.Name) and keywords["axis"].value == "None":
            return self.apply(self.named_template(rule, "without_axis"), x=x)
        axis = cf.int_literal(keywords["axis"])
        if axis is None:
            raise self.error(f"{prim.spelling} under vmap needs a literal int axis")
        return cf.call(prim.spelling, [x], [("axis", cf.literal(_shift(axis)))])

    def contiguous(self, x):
        """A C-ordered copy: numba reshapes only contiguous arrays, and a batched view may not be one."""
        return self.temp_of(cf.call("np.copy", [x]))

    def with_batch(self, shape):
        """``shape + (batch_size,)`` as an atom."""
        batch = cf.tuple_of([cst.Name(self.batch_size)])
        if isinstance(shape, cst.Tuple):
            return cf.tuple_of([el.value for el in shape.elements] + [cst.Name(self.batch_size)])
        if cf.int_literal(shape) is not None:
            return cf.tuple_of([shape, cst.Name(self.batch_size)])
        return self.temp_of(cst.BinaryOperation(shape, cst.Add(), batch))

    def rule_query(self, prim, rule, args, keywords, states):
        return self.apply(rule, x=args[0])

    def rule_create(self, prim, rule, args, keywords, states):
        may_batch = rule.rule_options.get("may_batch", ())
        if all(name in may_batch or not _is_batched(state) for name, state in zip(prim.params, states)):
            return cf.apply_primitive(prim, args, list(keywords.items()))
        # values that differ per example where the shape does not (np.full's fill, linspace's ends):
        # every example's array has the same shape, so the plain call per example stacks
        per_example = rule.rule_options.get("values_per_example", ())
        if all(name in may_batch or name in per_example or not _is_batched(state)
               for name, state in zip(prim.params, states)):
            return self.rule_loop(prim, rule, args, keywords, states)
        raise self.error(f"the arguments of {prim.spelling} differ between examples, so the array's shape "
                         f"(or fill) would too", "create the array from per-example shapes of fixed size")

    def rule_products(self, prim, rule, args, keywords, states):
        """np.dot, @ and their adjoint helpers with one batched factor: one product for the whole batch
        (the rule's ``cases``, templates/batching.py); otherwise one product per example."""
        t = _templates()
        batched = tuple(_is_batched(s) for s in states)
        identity = rule.rule_options.get("identity")
        if identity and batched == (False, True) and isinstance(args[1], cst.Name) \
                and args[1].value in self.identities:
            self.add_comment("# strategy: the examples are the identity's columns: the product is the other "
                             "factor itself")
            return self.template(getattr(t, identity), x=args[0], basis=args[1])
        for pattern, name, rows_name, comment in rule.rule_options["cases"]:
            if all(want is None or want == got for want, got in zip(pattern, batched)):
                self.add_comment(comment)
                by_param = dict(zip(prim.params, args))
                template = getattr(t, name)
                if rows_name is not None:
                    rows = getattr(t, rows_name)
                    if all(self.has_rows(by_param[p[:-len("_rows")]])
                           for p in inspect.signature(rows).parameters if p.endswith("_rows")):
                        template = rows
                operands = {}
                for param in inspect.signature(template).parameters:
                    if param.endswith("_rows"):
                        operands[param] = self.rows_of(by_param[param[:-len("_rows")]])
                    elif param.endswith("_example"):
                        operands[param] = self.first_example(by_param[param[:-len("_example")]])
                    else:
                        operands[param] = by_param[param]
                return self.template(template, **operands)
        return self.rule_loop(prim, rule, args, keywords, states)

    def first_example(self, atom):
        """Example 0 of a batched atom (where only its shape matters), the atom itself if unbatched."""
        if not _is_batched(self._atom_state(atom)):
            return atom
        return self.template(_templates().example, x=atom, b=cf.literal(0))

    def rule_loop(self, prim, rule, args, keywords, states):
        # (a keyword differs per example only where the rule allows it: keywords_per_example)
        return self.loop(lambda example: cf.apply_primitive(
            prim, [self.example_of(a, example) for a in args],
            [(k, self.example_of(v, example)) for k, v in keywords.items()]),
            f"{prim.spelling} on batched operands has no batched form numba compiles "
            f"(no 3-D kernels); each example runs the plain call", [*args, *keywords.values()],
            results=len(prim.results))

    def getitem(self, value: cst.Subscript):
        base = self._atom_state(value.value)
        state = self._value_state(value)
        if isinstance(base, tuple) or not _is_batched(state):
            return value, state
        batched_index = [a for a in _index_atoms(value.slice) if _is_batched(self._atom_state(a))]
        if any(isinstance(a, cst.Name) and a.value in self.masks for a in batched_index):
            raise self.error("x[mask] with a boolean mask that differs between examples: each example's "
                             "result would have its own length, which no batch can hold (JAX refuses it too)",
                             "keep the shape fixed: np.where(mask, x, 0.0), then reduce that")
        if batched_index:
            return self.loop(lambda example: cst.Subscript(self.example_of(value.value, example),
                                                           self.index_of_example(value.slice, example)),
                             "indices that differ per example: each example indexes its own row",
                             [value.value] + _index_atoms(value.slice)), True
        return cst.Subscript(value.value, _index(list(value.slice) + [_full_slice()])), True

    def example_of(self, atom, example):
        """Example ``example`` of an atom (unchanged if it is unbatched)."""
        if isinstance(atom, cst.Tuple):
            return cf.tuple_of([self.example_of(el.value, example) for el in atom.elements])
        if not _is_batched(self._atom_state(atom)):
            return atom
        if isinstance(atom, cst.Name) and atom.value in self.rows:
            return self.template(_templates().row, x=self.rows_of(atom), b=example)
        return self.template(_templates().example, x=atom, b=example)

    def has_rows(self, atom) -> bool:
        """Whether a batch-first copy of this atom is at hand (no copy needs making)."""
        return isinstance(atom, cst.Name) and atom.value in self.rows

    def rows_of(self, atom) -> cst.Name:
        """The batch-first copy of a batched name (example b is its row b): an unchanged parameter's
        original, or the copy a loop over the examples made, or a new copy."""
        if atom.value not in self.rows:
            moved = self.temp_of(cf.call("np.moveaxis", [atom, cf.literal(-1), cf.literal(0)]))
            return self.temp_of(cf.call("np.copy", [moved]))
        self.used_rows.add(self.rows[atom.value])
        return cst.Name(self.rows[atom.value])

    def index_of_example(self, index, example):
        items = []
        for element in index:
            item = element.slice
            if isinstance(item, cst.Index):
                item = cst.Index(self.example_of(item.value, example))
            else:
                item = item.with_changes(**{part: self.example_of(getattr(item, part), example)
                                            for part in ("lower", "upper", "step") if getattr(item, part) is not None})
            items.append(cst.SubscriptElement(item))
        return _index(items)

    def loop(self, make_value, why, operands, results=0) -> cst.BaseExpression:
        """A batched value computed one example at a time; example 0 fixes its shape and dtype.
        With ``results`` > 0 the value is a tuple of that many (np.linalg.lstsq's): each gets its
        own rows, and the batched value is the tuple of them.

        The loop runs with the batch axis of its batched ``operands`` and of the result moved to the
        front (a copy each way), so that each example is a contiguous row, not a strided column.
        """
        t = _templates()
        saved_rows, self.rows = self.rows, dict(self.rows)
        for atom in operands:
            for name in ([el.value for el in atom.elements] if isinstance(atom, cst.Tuple) else [atom]):
                if isinstance(name, cst.Name) and _is_batched(self._atom_state(name)):
                    self.rows[name.value] = self.rows_of(name).value    # valid until the loop ends

        def parts(value):
            if not results:
                return [value]
            return [self.temp_of(cst.Subscript(value, _index([cst.SubscriptElement(cst.Index(cf.literal(k)))])))
                    for k in range(results)]
        first = self.temp_of(make_value(cf.literal(0)))
        rows = [self.template(t.rows_like, x=part, batch_size=cst.Name(self.batch_size)) for part in parts(first)]
        example = self.scope.claim("example")
        saved, self.out = self.out, []
        item = self.temp_of(make_value(cst.Name(example)))
        for into, part in zip(rows, parts(item)):
            self.emit(cf.assign(cst.Subscript(into, _index([cst.SubscriptElement(cst.Index(cst.Name(example)))])),
                                part))
        body, self.out = self.out, saved
        self.emit(cf.with_comment(cst.For(target=cst.Name(example), iter=cf.call("rt.parallel_range", [
            cf.literal(1), cst.Name(self.batch_size)]), body=cf.block(body)),
            f"# strategy: a loop over the examples (batch axis first: rows are contiguous): {why}"))
        self.rows = saved_rows
        batched = [self.temp_of(self.template(t.batch_last, x=into)) for into in rows]
        return cf.tuple_of(batched) if results else batched[0]

    def collective(self, prim, rule, args):
        """A collective over this vmap's own axis (templates/batching.py: the rule for a batched x,
        ``unbatched`` the one for an x the same for every example)."""
        batched_result = rule.rule_options.get("batched_result", False)
        if "x" not in prim.params:
            return self.apply(rule), batched_result
        x = args[prim.params.index("x")]
        if _is_batched(self._atom_state(x)):
            return self.apply(rule, x=x), batched_result
        return self.apply(self.named_template(rule, "unbatched"), x=x), batched_result

    # -------------------------------------------------------- control flow
    def batched_condition(self, test) -> str:
        """A boolean per-example mask for ``test``, within the current mask."""
        condition = self.temp_of(self.truth_per_example(test))
        if self.mask is None:
            return condition.value
        return self.temp_of(cf.call("np.logical_and", [cst.Name(self.mask), condition])).value

    def holds_one_value(self, atom) -> bool:
        """Whether ``atom`` is a name known to hold one value per example (``_one_value_per_example``)."""
        return isinstance(atom, cst.Name) and atom.value in self.one_value

    def truth_per_example(self, test):
        """``test != 0``, each example's truth value, once each example's test is checked to be one value
        (unless it is one already: a flag, a ``not``, a comparison of such values)."""
        if not _is_batched(self._atom_state(test)) or self.holds_one_value(test):
            return cst.Comparison(test, [cst.ComparisonTarget(cst.NotEqual(), cf.literal(0))])
        return self.apply(_templates().truth_per_example, x=test)

    def if_statement(self, stmt: cst.If):
        if not _is_batched(self._atom_state(stmt.test)):
            comment, self.comment = self.comment, None
            same_for_all = cf.map_blocks(stmt, self.block).with_changes(leading_lines=())
            self.comment = comment
            self.emit(same_for_all)
            return
        self.add_comment("# strategy: the condition differs per example: run both branches, keep each example's own")
        outer = self.mask
        taken = self.batched_condition(stmt.test)
        branches = [(taken, stmt.body)]
        if stmt.orelse is not None:
            negated = self.temp_of(cst.UnaryOperation(cst.BitInvert(), cst.Name(taken))).value
            skipped = negated if outer is None else \
                self.temp_of(cf.call("np.logical_and", [cst.Name(outer), cst.Name(negated)])).value
            branches.append((skipped, stmt.orelse.body))
        tapes = _tape_kinds(stmt)
        if "push" in tapes and tapes & {"pop", "top"}:
            raise self.error("grad's tape is pushed and popped in branches of one condition that differs per "
                             "example: batched, both branches run, and their entries would not meet in order",
                             "vmap(grad(f)) batches such branches in a function's forward sweep or in its "
                             "backward sweep, not in both at once")
        if tapes & {"pop", "top"}:
            # the backward sweep's branch: the forward sweep ran this if's body's pushes before its
            # else's, so the else's entries are on top
            branches.reverse()
        for mask, block in branches:
            self.mask = mask
            self.branch_reads.append(_reads(block))
            self.out.extend(self.block(block.body))
            self.branch_reads.pop()
        self.mask = outer

    def while_statement(self, stmt: cst.While):
        if not self._is_masked_loop(stmt):
            self.plain_loop(stmt)
            return
        self.add_comment("# strategy: the condition differs per example: loop while any example is active")
        active = self.scope.claim("active")
        forever = isinstance(stmt.test, cst.Name) and stmt.test.value == "True"   # left only by breaks
        if forever:
            self.assign(active, self.all_active())
        else:
            entry = self.batched_condition(stmt.test)
            if not _is_batched(self._atom_state(stmt.test)) and self.mask is None:
                entry = self.broadcast(cst.Name(entry)).value
            self.assign(active, cst.Name(entry))

        def next_pass():
            if forever:
                return
            condition = self.temp_of(self.truth_per_example(stmt.test))
            self.assign(active, cf.call("np.logical_and", [cst.Name(active), condition]))

        going, body = self.masked_body(stmt, active, None, next_pass)
        self.emit(cst.While(test=going, body=cf.block(body)))

    def for_statement(self, stmt: cst.For):
        if not self._is_masked_loop(stmt):
            self.plain_loop(stmt)
            return
        index = stmt.target.value
        if not self._counts_per_example(stmt):
            # Examples leave early (per-example breaks) but count alike: a Python loop over the
            # same range, its body masked, left once no example is active.
            self.add_comment("# strategy: examples leave this loop at different passes: mask the ones that left")
            active = self.scope.claim("active")
            self.assign(active, self.all_active())
            self.defined.add(index)
            going, body = self.masked_body(stmt, active, None, lambda: None)
            stop = self.scope.temp()
            body.append(cf.assign(stop, cst.UnaryOperation(cst.Not(), going)))
            body.append(cst.If(test=cst.Name(stop), body=cf.block([cf.statement(cst.Break())])))
            self.emit(stmt.with_changes(body=cf.block(body)))
            return
        bounds = [a.value for a in stmt.iter.args]
        for bound in bounds:           # range() of each example's bound needs one number, as in NumPy
            if _is_batched(self._atom_state(bound)) and not self.holds_one_value(bound):
                self.apply(_templates().number_per_example, x=bound)
        start, stop, step = ([cf.literal(0)] + bounds + [cf.literal(1)])[:3] if len(bounds) == 1 else \
            (bounds + [cf.literal(1)])[:3]
        if _is_batched(self._atom_state(step)):
            raise self.error("a range step that differs between examples cannot be batched")
        self.add_comment("# strategy: the loop index differs per example: count per example while any is active")
        counter = self.scope.claim(f"{index}_next")
        first = start if _is_batched(self._atom_state(start)) else self.broadcast(start)
        self.assign(counter, cf.call("np.copy", [first]))
        active = self.scope.claim("active")

        def in_range():
            below = cf.call("np.where", [self.temp_of(cst.Comparison(step, [cst.ComparisonTarget(
                cst.GreaterThan(), cf.literal(0))])), self.temp_of(cst.Comparison(cst.Name(counter), [
                    cst.ComparisonTarget(cst.LessThan(), stop)])), self.temp_of(cst.Comparison(cst.Name(counter), [
                        cst.ComparisonTarget(cst.GreaterThan(), stop)]))])
            return self.temp_of(below)

        within = in_range()
        self.assign(active, within if self.mask is None else cf.call("np.logical_and", [cst.Name(self.mask), within]))

        def next_pass():
            self.assign(counter, cst.BinaryOperation(cst.Name(counter), cst.Add(), step))
            self.assign(active, cf.call("np.logical_and", [cst.Name(active), in_range()]))

        going, body = self.masked_body(stmt, active, (index, counter), next_pass)
        self.emit(cst.While(test=going, body=cf.block(body)))

    def all_active(self):
        """A mask of the examples running this code: a copy of the current mask, or all."""
        if self.mask is not None:
            return cf.call("np.copy", [cst.Name(self.mask)])
        return cf.call("np.full", [cf.tuple_of([cst.Name(self.batch_size)]), cst.Name("True")])

    def plain_loop(self, stmt):
        """A loop every example runs through alike: ordinary Python."""
        comment, self.comment = self.comment, None
        if isinstance(stmt, cst.For):
            self.defined.add(stmt.target.value)
        self.loops.append((self.mask, self.read_outside(stmt), _reads(stmt.body)))
        body = self.block(stmt.body.body)
        self.loops.pop()
        self.comment = comment
        self.emit(stmt.with_changes(body=cf.block(body)))

    def masked_body(self, loop, active, index_store, next_pass) -> tuple[cst.Name, list]:
        """``loop``'s body under the mask ``active``, and the name that says whether any example
        is still active (set before the loop and at the end of each pass).

        Examples leave when the loop's own condition says so (``next_pass``) or when a flag of
        a final ``if flag: break`` is set for them (``exits.structure_exits`` left those).
        """
        going = self.scope.claim("any_active")
        self.assign(going, cf.call("np.any", [cst.Name(active)]))
        flags = self._exit_flags(loop)
        outer, self.mask = self.mask, active
        self.masked_loops += 1
        self.loops.append((active, self.read_outside(loop), _reads(loop.body)))
        saved, self.out = self.out, []
        if index_store is not None:
            self.store(index_store[0], cst.Name(index_store[1]), True)
        for inner in loop.body.body[:len(loop.body.body) - len(flags)]:
            self.statement(inner)
        for flag in flags:
            stays = self.temp_of(cst.Comparison(flag, [cst.ComparisonTarget(cst.Equal(), cf.literal(0))]))
            self.assign(active, cf.call("np.logical_and", [cst.Name(active), stays]))
        next_pass()
        self.assign(going, cf.call("np.any", [cst.Name(active)]))
        body, self.out = self.out, saved
        self.loops.pop()
        self.masked_loops -= 1
        self.mask = outer
        return cst.Name(going), body

    def add_comment(self, line):
        self.comment = (self.comment + "\n" if self.comment else "") + line

    def read_outside(self, loop) -> set:
        inside = _reads(loop)
        return {name for name, count in self.all_reads.items() if count > inside.get(name, 0)}

    # --------------------------------------------------------------- return
    def return_statement(self, small: cst.Return):
        if self.mask is not None:      # run() turned returns under batched conditions into flags
            raise self.error("internal: return left under a batched condition")
        value = small.value if small.value is not None else cst.Name("None")
        state = self._atom_state(value)
        out_axes = self.out_axes
        if isinstance(out_axes, tuple):
            if isinstance(value, cst.Name) and isinstance(state, tuple):
                value = cf.tuple_of(self.elements(value, state))
            if not isinstance(value, cst.Tuple) or len(value.elements) != len(out_axes):
                raise ValueError(f"out_axes {out_axes!r} does not match the function's output")
            results = [self.outputs(el.value, axis) for el, axis in zip(value.elements, out_axes)]
            self.emit(cf.statement(cst.Return(cf.tuple_of(results))))
            return
        self.emit(cf.statement(cst.Return(self.outputs(value, out_axes))))

    def outputs(self, value, axis):
        """The output ``value`` with its batch axis at ``axis``: each array of a tuple, and of a
        tuple in it (a Hessian's ``((h00, h01), (h10, h11))``), on its own."""
        state = self._atom_state(value)
        if isinstance(value, cst.Tuple):
            return cf.tuple_of([self.outputs(el.value, axis) for el in value.elements])
        if isinstance(state, tuple):
            return cf.tuple_of([self.outputs(p, axis) for p in self.elements(value, state)])
        return self.output(value, axis)

    def elements(self, name, state) -> list:
        """Atoms for the elements of the tuple ``name``, batched as its elements are."""
        atoms = []
        for i, element_state in enumerate(state):
            atom = self.temp_of(cst.Subscript(name, _index([cst.SubscriptElement(cst.Index(cf.literal(i)))])))
            self.state[atom.value] = element_state
            atoms.append(atom)
        return atoms

    def output(self, atom, axis):
        if isinstance(atom, cst.Name) and atom.value == "None":
            return atom                 # None holds no array (a pytree without leaves, as in JAX)
        batched = _is_batched(self._atom_state(atom))
        if axis is None:
            if batched:
                raise ValueError("vmap has a batched output but out_axes is None for it")
            return atom
        if not batched:
            atom = self.broadcast(atom)
        if axis == -1:
            return atom
        return self.temp_of(cf.call("np.moveaxis", [atom, cf.literal(-1), cf.literal(axis)]))


def _one_value_per_example(function: cst.FunctionDef, table) -> set[str]:
    """The names that hold one value per example wherever they are read, so that a condition on one
    needs no check that it is: every assignment of the name gives a literal, another such name, or
    a primitive whose batching rule makes one value (``one_value``: float(), ``not``...), or an
    elementwise primitive of such operands.  (exits.py's flags are such names.)"""
    body = function.body.body
    values: dict[str, list] = {p.name.value: [None] for p in function.params.params}    # of any rank
    for a in dataflow.walk(body):
        if a.kind == "assign":
            values.setdefault(a.target, []).append(a.value)
        elif a.kind == "write_into":
            values.setdefault(a.target, []).append(None)
    for index in dataflow.loop_indices(body):     # a loop's index counts as an assignment of unknown rank
        values.setdefault(index, []).append(None)
    elementwise = (primitives.UNARY, primitives.BINARY, primitives.COMPARE)

    def one_value(value, known) -> bool:
        if value is None:
            return False
        if isinstance(value, cst.Name):
            return value.value in ("True", "False") or value.value in known
        if cf.is_atom(value):           # a number, or a negative one (a string or a tuple is no condition)
            return isinstance(value, (cst.Integer, cst.Float, cst.UnaryOperation))
        prim = cf.primitive_of(value)
        if prim is None:
            return False
        if (getattr(table.get(prim.name), "rule_options", {}) or {}).get("one_value"):
            return True
        return prim.kind in elementwise and not cf.keywords(value) and \
            all(one_value(operand, known) for operand in cf.operands(value))

    known = set(values)
    while True:                 # the largest set consistent with every assignment
        kept = {name for name in known if all(one_value(v, known) for v in values[name])}
        if kept == known:
            return known
        known = kept


def _templates():
    from ..templates import batching
    return batching
