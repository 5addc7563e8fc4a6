"""Normalize a user function into the core form (see ``core_form.py``).

One primitive per statement, methods turned into functions, augmented
assignment expanded, tuple unpacking and chained comparisons made explicit,
``for`` loops turned into ``range`` loops, and calls to other user functions
inlined (each inlined statement keeps a comment naming its own file and line).
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import linecache
import operator
import re
import types

import libcst as cst
import numpy as np

from . import core_form as cf
from . import custom, dataflow, early_returns, fence, methods, primitives, resolve, simplify, source, tree, tuple_picks, walk
from .core_form import CoreFunction
from .custom import custom_jvp, custom_vjp
from .exits import structure_exits
from .held_functions import CALLABLES as _CALLABLES
from .held_functions import FUNCTIONS as _FUNCTIONS
from .held_functions import FunctionChoice, FunctionTuple, LocalDef, LocalLambda, PassedFunction, PulledBack, PushedForward
from .held_functions import function_of
from .errors import TransformError
from .naming import RESERVED, NameScope
from .tree import LEAF as _LEAF
from .tree import TreeDef

_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis)


def normalize(fn, static: dict | None = None, structures: dict | None = None) -> CoreFunction:
    """The core form of a user function (fenced first).  ``static`` holds the values of its static
    arguments: one that is None is None in the body, so that `is None` tests of it are decided.
    ``structures`` (given when the function is specialised for a call) holds the pytree structure
    of its structured arguments; an argument that is None is one (a structure without leaves), so
    every other argument is known not to be None."""
    uf = source.load(fn)
    fence.check(uf)
    scope = NameScope()
    core = CoreFunction(node=uf.node, scope=scope)
    params = [p.name.value for p in uf.node.params.params]
    rename = {p: scope.claim(p) for p in params}
    norm = _Normalizer(uf, core, rename, stack=(uf.fn.__code__,))
    static = static or {}
    none_given = {p for p, treedef in (structures or {}).items() if treedef.kind == "none"}
    for p, treedef in (structures or {}).items():
        if treedef.kind not in ("leaf", "none") and p in rename:
            # (a parameter rebound later, as a scan's carry is, has the structure of what it is bound to then)
            core.structures[rename[p]] = treedef
    for p in params:
        if p in static and static[p] is None or p in none_given:
            if p in _param_only_names(uf.node):
                norm.substitute[p] = cst.Name("None")
            else:
                core.maybe_none.add(rename[p])
        elif p not in static and structures is None:
            core.maybe_none.add(rename[p])      # not specialised for a call: a run-time argument may be None
    body = norm.block(uf.node.body.body, top_level=True)
    core.result_structure = _rebuilt_on_return(norm.returned)
    core.returns_structure = any(r.kind != "leaf" for r in norm.returned)
    core.returned = list(norm.returned)
    # defaults are applied by the caller's Python wrapper; commas are left to
    # libcst so that a transform may drop a parameter (a static argument)
    new_params = [p.with_changes(name=cst.Name(rename[p.name.value]), default=None,
                                 equal=cst.MaybeSentinel.DEFAULT, comma=cst.MaybeSentinel.DEFAULT,
                                 annotation=None)
                  for p in uf.node.params.params]
    core.node = cst.FunctionDef(name=cst.Name(uf.name), params=cst.Parameters(params=new_params),
                                body=cf.block(_results_returned_as_a_tuple(tuple_picks.plain(body, scope), scope)))
    core.node = simplify.name_results(core.node, set(core.structures) | core.maybe_none | set(core.copied_views))
    return core


def _written_as_plain_code(code) -> bool:
    """A code form that is plain code (has_aux's, derived_code.with_aux): inlined as a helper is,
    so that the structure of what it returns (a dict aux) stays known to its caller."""
    return not code.steps and getattr(code.__transformer_fn__, "inlined_as_written", False)


def _rebuilt_on_return(returned: list):
    """The structure the caller rebuilds the result as (generated code returns tuples): when every
    return gives the same one and it holds a list, dict, named tuple or registered class; else None."""
    if not returned or any(r != returned[0] for r in returned):
        return None

    def rebuilt(treedef) -> bool:
        return treedef.kind in ("list", "dict", "namedtuple", "node") or any(rebuilt(c) for c in treedef.children)
    return returned[0] if rebuilt(returned[0]) else None


def _results_returned_as_a_tuple(body: list, scope: NameScope) -> list:
    """``return np.linalg.slogdet(a)`` returns a plain tuple of the results: NumPy's own is a named
    tuple (a pytree node of its own class, ``tree.py``), where the cpu target's is a plain tuple."""
    sizes = dataflow.tuple_sizes(list(dataflow.walk(body)), of_atoms=False)

    def unpacked(atom, out: list):
        if isinstance(atom, cst.Tuple):
            return cf.tuple_of([unpacked(element.value, out) for element in atom.elements])
        if not (isinstance(atom, cst.Name) and sizes.get(atom.value)):
            return atom
        picks = []
        for k in range(sizes[atom.value]):
            pick = scope.temp()
            out.append(cf.assign(pick, cst.Subscript(atom, [cst.SubscriptElement(cst.Index(cf.literal(k)))])))
            picks.append(cst.Name(pick))
        return cf.tuple_of(picks)

    def rewrite(stmts: list) -> list:
        out = []
        for stmt in stmts:
            small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) else None
            if isinstance(small, cst.Return) and small.value is not None:
                picks: list = []
                value = unpacked(small.value, picks)
                out += picks + [stmt.with_changes(body=[small.with_changes(value=value)])]
            else:
                out.append(cf.map_blocks(stmt, rewrite))
        return out
    return rewrite(body) if sizes else body


class _Normalizer:
    def __init__(self, uf: source.UserFunction, core: CoreFunction, rename: dict, stack: tuple,
                 comments: bool = True):
        self.uf = uf
        self.comments = comments                # write origin comments (not for rule templates)
        self.current_origin: str | None = None  # the comment of the user statement being normalized
        self.substitute: dict = {}              # parameter -> the caller's atom (inlined helpers)
        self.lambdas: dict = {}                 # name bound to a function (a lambda, one named, a table...)
        # Which function a name holds is known when the function is specialised: the run-time block
        # (an if's branch, a loop's body) each name was last bound in, to a function or to a value
        self.bound_in: dict = {}
        self.block_path: tuple = ()             # the run-time blocks being normalized, outermost first
        self.frame: dict = {}                   # the parameters of the lambdas being called, as bound
        self.core = core
        self.scope = core.scope
        self.rename = rename                    # user local name -> output name
        self.locals = uf.local_names
        self.stack = stack                      # code objects being inlined (recursion check)
        # transformer's own functions (templates/definitions.py, tr.nn), inlined for the user's call
        self.ours = (getattr(uf.fn, "__module__", None) or "").startswith("transformer.")
        self.index_pairs: set[str] = set()      # names holding np.triu_indices' (rows, columns)
        self.lists: dict[int, cst.Tuple] = {}   # id -> a tuple built for a list (as_list); kept, so no id is reused
        self.returned: list = []                # the structure of each value returned, in order
        self.out: list = []
        self.comment: str | None = None
        self.loop_conditions: list = []         # per enclosing loop: statements recomputing a while-condition
        self.break_flags: list = []             # per enclosing loop: the flag its break sets (for ... else), or None
        core.sources[uf.short_filename] = uf.filename

    # ------------------------------------------------------------- emitting
    def emit(self, stmt):
        if self.comment:   # the user line's comment goes above any the statement already has
            stmt = stmt.with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(self.comment)),
                                                    *stmt.leading_lines])
            self.comment = None
        self.out.append(stmt)

    def assign(self, target: str, value):
        if isinstance(value, cst.Name) and value.value == "None":
            self.core.maybe_none.add(target)
        known = self.core.structures.get(value.value) if isinstance(value, cst.Name) else None
        if isinstance(value, cst.Subscript):          # params[0] of a list of named tuples: a structure too
            known = self.child_structure(value)
        if isinstance(value, cst.Tuple) and all(isinstance(el.value, cst.Name) or _is_number_literal(el.value)
                                                for el in value.elements):     # (lo, None), (x, -1.0)
            known = TreeDef("list" if id(value) in self.lists else "tuple",
                            tuple(self.core.structures.get(el.value.value, _LEAF) if isinstance(el.value, cst.Name)
                                  else _LEAF for el in value.elements))
        if known is not None:
            self.core.structures[target] = known
        else:
            self.core.structures.pop(target, None)
        # np.triu_indices' pair of index arrays, which x[iu] reads as x[iu[0], iu[1]] (see index)
        if isinstance(value, cst.Call) and getattr(cf.primitive_of(value), "index_arrays", False):
            self.index_pairs.add(target)
        else:
            self.index_pairs.discard(target)
        self.emit(cf.assign(target, value))

    def block(self, stmts, top_level=False, run_time=True) -> list:
        """The core form of ``stmts``; ``run_time``: a block that runs or not, or again, as the program
        runs (an if's branch, a loop's body), not one chosen now (an unrolled loop's pass)."""
        saved, self.out = self.out, []
        pending, self.comment = self.comment, None   # the enclosing statement's comment waits for it
        # a function bound inside a run-time block is called only there (see bind)
        outer = self.block_path, dict(self.lambdas), dict(self.bound_in)
        if run_time:
            self.block_path = self.block_path + (object(),)
        try:
            for i, stmt in enumerate(stmts):
                if top_level and i == 0 and _is_docstring(stmt):
                    continue
                self.statement(stmt)
        finally:
            if run_time:
                self.block_path, self.lambdas, self.bound_in = outer
        body, self.out = self.out, saved
        self.comment = pending
        return body

    def error(self, node, message, hint=None):
        return TransformError(message, self.uf.location(node), hint)

    def local(self, user_name: str) -> str:
        atom = self.substitute.get(user_name)
        if atom is not None:
            if not isinstance(atom, cst.Name):
                raise TransformError(f"cannot write into the literal passed as {user_name!r}")
            return atom.value
        if user_name not in self.rename:
            self.rename[user_name] = self.scope.claim(user_name)
        return self.rename[user_name]

    def temp(self) -> str:
        return self.scope.temp()

    def origin(self, node) -> str | None:
        if not self.comments:
            return None
        line = self.uf.line(node)
        text = linecache.getline(self.uf.filename, line).strip()
        if self.ours:   # a line of np.roll's definition: not an origin, so errors name the user's call
            return f"# {text}   ({self.uf.short_filename}:{line})"
        return f"# {text}   [{self.uf.short_filename}:{line}]"

    # ----------------------------------------------------------- statements
    def statement(self, stmt):
        self.comment = self.current_origin = self.origin(stmt)
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small_statement(small)
        elif isinstance(stmt, cst.If):
            self.if_statement(stmt)
        elif isinstance(stmt, cst.For):
            self.for_statement(stmt)
        elif isinstance(stmt, cst.While):
            self.while_statement(stmt)
        else:  # the fence lets nothing else through
            raise self.error(stmt, f"unexpected statement {type(stmt).__name__}")
        self.comment = None

    def small_statement(self, small):
        if isinstance(small, cst.Assign):
            if small.value in self.uf.parsed.nested_defs:     # def step(carry, x): ..., as source.py stands it
                written = self.uf.parsed.nested_defs[small.value]
                self.bind(small.targets[0].target, LocalDef.written(written, self.uf.line(small), self))
                return
            if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                # sq = lambda v: v * v, act = np.tanh if c else g, ops = {"sq": ...}, act = make(2.0):
                # a function, called where the name is; else a value
                target = small.targets[0].target
                self.bind(target, self.bindable(small.value))
                return
            if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Tuple) \
                    and isinstance(small.value, cst.Call) \
                    and resolve.transform_named(small.value.func, self.uf.lookup, self.locals) in ("vjp", "linearize"):
                self.vjp_call(small.value, small.targets[0].target)
                return
            if len(small.targets) == 1 and isinstance(small.targets[0].target, (cst.Tuple, cst.List)) \
                    and isinstance(small.value, (cst.Tuple, cst.List)):
                self.parallel_assign(small.targets[0].target, small.value)
                return
            value = self.operand(small.value)
            for target in small.targets:
                self.store(target.target, value)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.store(small.target, None, small.value)
        elif isinstance(small, cst.AugAssign):
            self.augmented_assign(small)
        elif isinstance(small, cst.Expr):
            if isinstance(small.value, cst.Call):
                self.value(small.value, discard=True)
            # any other bare expression has no effect
        elif isinstance(small, cst.Return):
            returned = self.atom(small.value) if small.value else None
            self.returned.append(self.structure_of(returned))
            self.emit(cf.statement(cst.Return(returned)))
        elif isinstance(small, cst.Break):
            if self.break_flags and self.break_flags[-1] is not None:
                self.assign(self.break_flags[-1], cf.literal(True))
            self.emit(cf.statement(cst.Break()))
        elif isinstance(small, cst.Continue):
            for stmt in self.loop_conditions[-1] if self.loop_conditions else ():
                self.emit(stmt)
            self.emit(cf.statement(cst.Continue()))
        elif isinstance(small, cst.Pass):
            pass
        else:
            raise self.error(small, f"unexpected statement {type(small).__name__}")

    def bind(self, target: cst.Name, held):
        """``name = held``, a value or a function (then calls of ``name`` inline it).  Which function
        a name holds must be known when the function is specialised: a name bound to a function and
        bound again inside a run-time block (an if's branch, a loop's body) entered after the first
        binding, or in another such block, is refused, for Python would choose between the bindings
        as the program runs."""
        name = target.value
        holds_function = isinstance(held, _FUNCTIONS)
        earlier = self.bound_in.get(name, self.block_path)
        # bound again in the same block, or after the block of the last binding: every use that follows
        # sees this binding, whatever ran before
        if (holds_function or name in self.lambdas) and earlier[:len(self.block_path)] != self.block_path:
            raise self.error(target, f"{name!r} is bound to a function and bound again in another block (an "
                                     f"if's branch or a loop's body), so which it holds is known only at run time",
                             "use another name for each, or choose at run time with a conditional "
                             "expression: f = g if c else h")
        self.bound_in[name] = self.block_path
        if holds_function:
            self.substitute.pop(name, None)
            self.lambdas[name] = held
            return
        self.lambdas.pop(name, None)
        self.assign(self.local(name), held)

    def store(self, target, atom, value_node=None):
        """Assign ``atom`` (or the value of ``value_node``) to a user target."""
        if isinstance(target, cst.Name):
            self.bind(target, self.bindable(value_node) if atom is None else atom)
        elif isinstance(target, cst.Subscript):
            if isinstance(target.value, cst.Name) and self.local(target.value.value) in self.core.structures:
                kind = self.core.structures[self.local(target.value.value)].kind
                raise self.error(target, f"writing into an entry of a {kind if kind != 'node' else 'pytree'} "
                                         f"({cst.Module([]).code_for_node(target)} = ...)",
                                 "build a new one with the entry changed, as JAX code does (a display or a "
                                 "comprehension); its structure is fixed when the function is specialised")
            index = self.index(target)
            self.emit(cf.assign(cst.Subscript(cst.Name(self.local(target.value.value)), index),
                                atom if atom is not None else self.atom(value_node)))
        elif isinstance(target, (cst.Tuple, cst.List)):
            if atom is None:
                atom = self.operand(value_node)
            if isinstance(atom, FunctionTuple) and not atom.by_key:     # x0, f = (x, lambda v: v * v)
                if len(atom.entries) != len(target.elements):
                    raise self.error(target, f"cannot unpack {len(atom.entries)} values into "
                                             f"{len(target.elements)} names")
                for element, entry in zip(target.elements, atom.entries):
                    self.store(element.value, entry)
                return
            elif isinstance(atom, _FUNCTIONS):
                raise self.error(target, "unpacking a function", "unpack a tuple or a list")
            written = {self.local(el.value.value) for el in target.elements if isinstance(el.value, cst.Name)}
            if isinstance(atom, cst.Tuple) and len(atom.elements) == len(target.elements):
                # a, b = helper(...) returning a pair of atoms: no tuple at run time
                items = []
                for item in atom.elements:
                    value = item.value
                    if isinstance(value, cst.Name) and value.value in written:   # a, b = (b, a)
                        copy = self.temp()
                        self.assign(copy, value)
                        value = cst.Name(copy)
                    items.append(value)
                for element, value in zip(target.elements, items):
                    self.store(element.value, value)
                return
            if isinstance(atom, cst.Name) and atom.value in written:   # first, x = x
                copy = self.temp()
                self.assign(copy, atom)
                atom = cst.Name(copy)
            for i, element in enumerate(target.elements):
                item = cst.Subscript(atom, [cst.SubscriptElement(cst.Index(cf.literal(i)))])
                if isinstance(element.value, cst.Name):
                    self.bind(element.value, item)
                else:
                    temp = self.temp()
                    self.assign(temp, item)
                    self.store(element.value, cst.Name(temp))
        else:
            raise self.error(target, "unsupported assignment target")

    def parallel_assign(self, targets, values):
        """``a, b = b, a``: every right-hand side is evaluated before any store.

        Stores run left to right, so a value needs a copy only if a target to
        its left overwrites the name it reads: the swap copies one value.
        """
        if len(targets.elements) != len(values.elements):
            raise self.error(targets, f"cannot unpack {len(values.elements)} values into {len(targets.elements)} names")
        atoms = [self.operand(element.value) for element in values.elements]
        written: set = set()
        for i, element in enumerate(targets.elements):
            if isinstance(element.value, cst.Name):
                written.add(self.local(element.value.value))
            if i + 1 < len(atoms) and isinstance(atoms[i + 1], cst.Name) and atoms[i + 1].value in written:
                copy = self.temp()
                self.assign(copy, atoms[i + 1])
                atoms[i + 1] = cst.Name(copy)
        for element, atom in zip(targets.elements, atoms):
            self.store(element.value, atom)

    def augmented_assign(self, node: cst.AugAssign):
        op_class = _AUG_TO_BINARY[type(node.operator)]
        right = self.atom(node.value)
        if isinstance(node.target, cst.Name):
            name = self.local(node.target.value)
            self.assign(name, cst.BinaryOperation(cst.Name(name), op_class(), right))
            self.core.augmented.add(name)
            return
        # x[i] += v  ->  _t = x[i]; _t2 = _t + v; x[i] = _t2
        index = self.index(node.target)
        array = cst.Name(self.local(node.target.value.value))
        old = self.temp()
        self.assign(old, cst.Subscript(array, index))
        new = self.temp()
        self.assign(new, cst.BinaryOperation(cst.Name(old), op_class(), right))
        self.emit(cf.assign(cst.Subscript(array, index), cst.Name(new)))

    def if_statement(self, node: cst.If):
        test = self.atom(node.test)
        if _is_bool_literal(test):          # decided now (an `is None` test): write the branch taken
            if test.value == "True":
                self.out.extend(self.block(node.body.body, run_time=False))
            elif isinstance(node.orelse, cst.If):
                self.if_statement(node.orelse)
            elif isinstance(node.orelse, cst.Else):
                self.out.extend(self.block(node.orelse.body.body, run_time=False))
            return
        body = self.block(node.body.body)
        orelse = None
        if isinstance(node.orelse, cst.If):          # elif -> else: if
            saved_comment = self.comment
            inner = self.block([node.orelse])
            self.comment = saved_comment
            orelse = cst.Else(cf.block(inner))
        elif isinstance(node.orelse, cst.Else):
            orelse = cst.Else(cf.block(self.block(node.orelse.body.body)))
        self.emit(cst.If(test=test, body=cf.block(body), orelse=orelse))

    def for_statement(self, node: cst.For):
        it = node.iter
        if self.iterates_structure(it):
            rows = self.rows_of(it)
            if rows is not None:
                return self.unrolled_loop(node, rows)
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and it.func.attr.value in ("items", "keys", "values"):
            raise self.error(it, f"a loop over .{it.func.attr.value}() of a value that is not a dict argument",
                             "pass the dict in as an argument: its keys are known when the function is specialised")
        kind = None
        if isinstance(it, cst.Call):
            r = resolve.resolve(it.func, self.uf.lookup, self.locals)
            if r.kind == "loop":
                kind = r.value
        header: list = []        # statements at the top of the loop body
        if kind == "range":
            bounds = [self.atom(arg.value) for arg in it.args]
            index = self.local(node.target.value) if isinstance(node.target, cst.Name) else None
            if index is None:
                raise self.error(node.target, "range() yields one number; loop over a plain name")
        elif kind == "enumerate":
            sequence = self.loop_invariant(self.atom(it.args[0].value), node.body)
            length = self.temp()
            self.assign(length, cf.call("len", [sequence]))
            bounds = [cst.Name(length)]
            index_node, item_node = _pair(self, node.target)
            index = self.local(index_node.value)
            header += self._bind_item(item_node, sequence, index)
        elif kind == "zip":
            sequences = [self.loop_invariant(self.atom(arg.value), node.body) for arg in it.args]
            length = self._common_length(sequences)
            bounds = [length]
            index = self.scope.claim("zip_index")
            if len(node.target.elements) != len(sequences):
                raise self.error(node.target, f"zip() of {len(sequences)} sequences unpacked into "
                                              f"{len(node.target.elements)} names")
            for element, sequence in zip(node.target.elements, sequences):
                header += self._bind_item(element.value, sequence, index)
        elif kind == "reversed":
            bounds, index, header = self._reversed(it.args[0].value, node)
        else:                     # rows of an array
            sequence = self.loop_invariant(self.atom(it), node.body)
            length = self.temp()
            self.assign(length, cf.call("len", [sequence]))
            bounds = [cst.Name(length)]
            base = node.target.value if isinstance(node.target, cst.Name) else "row"
            index = self.scope.claim(f"{base}_index")
            header += self._bind_item(node.target, sequence, index)
        flag = self._break_flag(node)
        self.loop_conditions.append(())
        self.break_flags.append(flag)
        body = header + self.block(node.body.body)
        self.break_flags.pop()
        self.loop_conditions.pop()
        loop = cst.For(target=cst.Name(index), iter=cf.call("range", bounds), body=cf.block(body))
        self.emit(loop)
        self._loop_else(node, flag)

    def iterates_structure(self, it) -> bool:
        """Whether a for clause runs over a pytree whose structure is known now (a list of parameter
        tuples, a dict's items, zip or enumerate of one): such a loop is unrolled, as JAX's tracing
        unrolls it, so each pass reads its entry's leaves by name."""
        if isinstance(it, cst.Call):
            if isinstance(it.func, cst.Attribute) and it.func.attr.value in ("items", "keys", "values"):
                return self.iterates_structure(it.func.value)
            return any(self.iterates_structure(arg.value) for arg in it.args)
        if isinstance(it, cst.Subscript):
            return self.iterates_structure(it.value)
        if isinstance(it, (cst.List, cst.Tuple, cst.Dict)):   # for v in (a, b), for f in [np.sin, np.cos]
            return True
        if isinstance(it, cst.Name) and isinstance(self.lambdas.get(it.value), FunctionTuple):
            return True                          # for f in fs, fs holding functions
        if isinstance(it, cst.Name):
            if it.value in self.substitute:      # a helper's parameter: a tuple built by the caller, or a structure
                atom = self.substitute[it.value]
                return isinstance(atom, cst.Tuple) or isinstance(atom, cst.Name) and atom.value in self.core.structures
            if it.value in self.locals:
                return self.local(it.value) in self.core.structures
        if isinstance(it, (cst.Name, cst.Attribute)):      # a module's tuple of arrays or dict (constant_atom)
            r = resolve.resolve(it, self.uf.lookup, self.locals)
            return r.kind == "constant" and (_is_tuple_of_arrays(r.value) or type(r.value) is dict)
        return False

    def unrolled_loop(self, node: cst.For, rows: list):
        """``for w, b in params`` over a structure known now: the body once per entry, the target
        bound to that entry's atoms."""
        targets = {n.value for n in walk.nodes(node.target) if isinstance(n, cst.Name)}
        written = resolve.local_names(node.body)
        for stmt in walk.nodes(node.body):
            if isinstance(stmt, (cst.Break, cst.Continue)):
                raise self.error(stmt, "break or continue in a loop over a structure, which is unrolled",
                                 "loop over range(len(...)) and test inside, or use np.where")
        if targets & written:
            raise self.error(node.target, "assigning the target of a loop over a structure in its body",
                             "assign to another name")
        saved = dict(self.substitute), dict(self.lambdas)
        try:
            for row in rows:
                self.bind_row(node, node.target, row)
                for stmt in self.block(node.body.body, run_time=False):
                    self.emit(stmt)
        finally:
            self.substitute, self.lambdas = saved
        if node.orelse is not None:       # no break: the else block always runs
            for stmt in self.block(node.orelse.body.body, run_time=False):
                self.emit(stmt)

    def _break_flag(self, loop):
        """For a loop with an ``else:``, a flag set False before it, which its own breaks set True."""
        if loop.orelse is None:
            return None
        flag = self.scope.claim("broke")
        self.assign(flag, cf.literal(False))
        return flag

    def _loop_else(self, loop, flag):
        """A loop's ``else:`` block, run when the loop ended without a break."""
        if flag is None:
            return
        finished = self.temp()
        self.comment = self.origin(loop.orelse)
        self.assign(finished, cst.UnaryOperation(cst.Not(), cst.Name(flag)))
        self.emit(cst.If(test=cst.Name(finished), body=cf.block(self.block(loop.orelse.body.body))))

    def _reversed(self, inner, node: cst.For):
        """``range`` bounds, index and header statements of ``for v in reversed(inner)``: the
        numbers of ``range(start, stop)`` from ``stop - 1`` down, or an array's rows from the last."""
        r = resolve.resolve(inner.func, self.uf.lookup, self.locals) if isinstance(inner, cst.Call) else None
        if r is not None and r.kind == "loop":       # reversed(range(...)): the fence let only range through
            atoms = [self.atom(arg.value) for arg in inner.args]
            start, stop = (cf.literal(0), atoms[0]) if len(atoms) == 1 else atoms
            first = self.temp()
            self.assign(first, cst.BinaryOperation(stop, cst.Subtract(), cf.literal(1)))
            if cf.int_literal(start) is not None:
                past = cf.literal(cf.int_literal(start) - 1)
            else:
                past = cst.Name(self.temp())
                self.assign(past.value, cst.BinaryOperation(start, cst.Subtract(), cf.literal(1)))
            return [cst.Name(first), past, cf.literal(-1)], self.local(node.target.value), []
        sequence = self.loop_invariant(self.atom(inner), node.body)
        length, last = self.temp(), self.temp()
        self.assign(length, cf.call("len", [sequence]))
        self.assign(last, cst.BinaryOperation(cst.Name(length), cst.Subtract(), cf.literal(1)))
        base = node.target.value if isinstance(node.target, cst.Name) else "row"
        index = self.scope.claim(f"{base}_index")
        return [cst.Name(last), cf.literal(-1), cf.literal(-1)], index, self._bind_item(node.target, sequence, index)

    def loop_invariant(self, sequence, body):
        """Python iterates the object the loop started with; if the body
        rebinds that name, iterate over a copy of the reference instead."""
        if isinstance(sequence, cst.Name):
            assigned = {self.rename.get(n, n) for n in resolve.local_names(body)}
            if sequence.value in assigned:
                start = self.temp()
                self.assign(start, sequence)
                return cst.Name(start)
        return sequence

    def _common_length(self, sequences):
        lengths = []
        for sequence in sequences:
            length = self.temp()
            self.assign(length, cf.call("len", [sequence]))
            lengths.append(cst.Name(length))
        shortest = lengths[0]
        for other in lengths[1:]:
            smaller = self.temp()
            self.assign(smaller, cf.call("np.minimum", [shortest, other]))
            shortest = cst.Name(smaller)
        return shortest

    def _bind_item(self, target, sequence, index: str) -> list:
        saved, self.out = self.out, []
        item = cst.Subscript(sequence, [cst.SubscriptElement(cst.Index(cst.Name(index)))])
        if isinstance(target, cst.Name):
            self.assign(self.local(target.value), item)
        else:
            row = self.temp()
            self.assign(row, item)
            self.store(target, cst.Name(row))
        stmts, self.out = self.out, saved
        return stmts

    def while_statement(self, node: cst.While):
        # The condition's statements run before the loop and again at the end
        # of each pass (and before each continue), so the test is one name.
        saved, self.out = self.out, []
        comment, self.comment = self.comment, None
        test = self.value(node.test)
        if not isinstance(test, cst.Name) and not cf.is_atom(test):
            condition = self.temp()
            self.assign(condition, test)
            test = cst.Name(condition)
        recompute, self.out = self.out, saved
        self.comment = comment
        for stmt in recompute:
            self.emit(stmt)
        origin = self.origin(node)
        if recompute and origin:   # say why the condition's statements appear again
            recompute = [cf.with_comment(recompute[0], "# again: " + origin[2:]), *recompute[1:]]
        flag = self._break_flag(node)
        self.loop_conditions.append(recompute)
        self.break_flags.append(flag)
        body = self.block(node.body.body) + list(recompute)
        self.break_flags.pop()
        self.loop_conditions.pop()
        self.emit(cst.While(test=test, body=cf.block(body)))
        self._loop_else(node, flag)

    # ---------------------------------------------------------- expressions
    def atom(self, node) -> cst.BaseExpression:
        value = self.value(node)
        if cf.is_atom(value):
            return value
        name = self.temp()
        self.assign(name, value)
        return cst.Name(name)

    def value(self, node, discard=False) -> cst.BaseExpression:
        """An atom, or one primitive applied to atoms, computing ``node``."""
        if isinstance(node, cst.Name):
            return self.name_value(node)
        if isinstance(node, _LITERALS):
            return node.with_changes(lpar=[], rpar=[])
        if isinstance(node, cst.Attribute):
            return self.attribute_value(node)
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Minus) and isinstance(node.expression, (cst.Integer, cst.Float)):
                return cst.UnaryOperation(cst.Minus(), node.expression.with_changes(lpar=[], rpar=[]))
            operand = self.atom(node.expression)
            if isinstance(node.operator, cst.Not) and _is_bool_literal(operand):   # `not keepdims`, decided now
                return cst.Name(str(operand.value != "True"))
            return cst.UnaryOperation(type(node.operator)(), operand)
        if isinstance(node, cst.BinaryOperation):
            left, right = self.atom(node.left), self.atom(node.right)
            folded = simplify.integer_arithmetic(left, node.operator, right)
            if folded is not None:      # k % 4 with k a literal: decided now, so `if k % 4 == 1` is too
                return cf.literal(folded)
            return cst.BinaryOperation(left, type(node.operator)(), right)
        if isinstance(node, cst.BooleanOperation):
            return cst.Name(self.short_circuit(node))
        if isinstance(node, cst.Comparison):
            return self.comparison(node)
        if isinstance(node, cst.IfExp):
            return self.if_expression(node)
        if isinstance(node, cst.Call):
            result = self.call(node, discard)
            if isinstance(result, _FUNCTIONS):      # make(2.0) returning a lambda, where a value is needed
                raise self.error(node, f"{cf.code_of(node)} gives a function, used here as a value",
                                 "call it, bind it to a name, or pass it to a function")
            return result
        if isinstance(node, cst.Subscript):
            return self.subscript(node)
        if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
            return self.comprehension(node)
        if isinstance(node, cst.Dict):
            return self.dict_display(node)
        if isinstance(node, cst.DictComp):
            return self.dict_comprehension(node)
        if isinstance(node, cst.List):
            return self.as_list(cf.tuple_of(self.atom(el.value) for el in node.elements))
        if isinstance(node, cst.Tuple):
            return cf.tuple_of(self.atom(el.value) for el in node.elements)
        if isinstance(node, cst.Lambda):
            raise self.error(node, "a lambda used as a value (returned from the transformed function, or given "
                                   "to NumPy or an operator), which is not supported",
                             "call it, bind it to a name, keep it in a tuple, list or dict, or pass it to a "
                             "function: transformed code computes with numbers and arrays only")
        raise self.error(node, f"{type(node).__name__} expressions are not supported")

    def name_value(self, node: cst.Name):
        text = node.value
        if text in ("True", "False", "None"):
            return cst.Name(text)
        if text in self.lambdas:
            what = {LocalLambda: "the lambda", LocalDef: "the function", FunctionTuple: "the tuple, list or dict of functions"}.get(
                type(self.lambdas[text]), "the function")
            raise self.error(node, f"{what} {text!r} used as a value",
                             "call it here, index it, or pass it to a function: transformed code computes "
                             "with numbers and arrays only")
        if text in self.substitute:
            return self.substitute[text]
        if text in self.locals:
            return cst.Name(self.local(text))
        return self.global_value(node, resolve.resolve(node, self.uf.lookup, self.locals))

    def attribute_value(self, node: cst.Attribute):
        r = resolve.resolve(node, self.uf.lookup, self.locals)
        # x.T on a variable, or on any expression: (a + b).T, np.dot(a, a).T
        if r.kind == "local" or resolve.dotted_name(node.value) is None:
            value = self.atom(node.value)
            treedef = self.core.structures.get(value.value) if isinstance(value, cst.Name) else None
            if treedef is not None and treedef.kind in ("namedtuple", "node"):
                return self.field(node, value, treedef)
            prim_name = methods.ATTRIBUTES.get(node.attr.value)
            if prim_name is None:
                raise self.error(node, f"the attribute .{node.attr.value} is not supported",
                                 "pass the value in as an argument or use a supported array attribute "
                                 "(T, shape, ndim, size)")
            return cf.apply_primitive(primitives.get(prim_name), [value])
        return self.global_value(node, r)

    def global_value(self, node, r: resolve.Resolved):
        if r.dotted in resolve.NAMED_CONSTANTS:
            return cst.parse_expression(r.dotted)
        if resolve.is_newaxis(r):
            return cst.Name("None")
        if r.kind == "constant":
            return self.constant_atom(r.dotted.replace(".", "_"), r.value)
        if r.kind == "dtype":
            return self.dtype_atom(node, r.value)
        if r.kind == "primitive" and isinstance(r.primitive.impl, type):    # float, int, bool as a dtype
            return self.dtype_atom(node, np.dtype(r.primitive.impl).type)
        if r.kind == "unknown":
            raise self.error(node, f"name {r.dotted!r} is not defined")
        what = {"primitive": "a function", "user": "a function", "module": "a module"}.get(r.kind, "this object")
        raise self.error(node, f"{r.dotted!r} is {what} used as a value; transformed functions can only "
                               f"pass numbers, arrays and tuples around",
                         "call it here, or pass its result in as an argument")

    def dtype_atom(self, node, dtype):
        name = np.dtype(dtype).name
        if getattr(np, name, None) is not np.dtype(dtype).type:
            raise self.error(node, f"the dtype {dtype!r} is not supported")
        return cst.Attribute(cst.Name("np"), cst.Name(name))

    def constant_atom(self, hint: str, value):
        """A global's value as an atom: a tuple holding arrays is a tuple of its entries, each a
        constant of its own, so that it is a structure as a tuple written in the code is (a
        tangent held in a module's tuple, passed to tr.jvp); a dict (JAX's config dict, read when
        the function is transformed) is a dict structure of its entries; other values are one
        constant."""
        if type(value) is dict:
            return self.dict_of(None, {key: self.constant_atom(f"{hint}_{_identifier_part(key)}", entry)
                                       for key, entry in value.items()})
        if _is_tuple_of_arrays(value):
            entries = [self.constant_atom(f"{hint}_{k}", entry) for k, entry in enumerate(value)]
            held = self.temp()
            self.assign(held, cf.tuple_of(entries))
            self.core.structures[held] = TreeDef("tuple", tuple(self.core.structures.get(entry.value, _LEAF)
                                                                for entry in entries))
            return cst.Name(held)
        return cst.Name(self.bind_constant(hint, value))

    def bind_constant(self, hint: str, value) -> str:
        for existing, bound in self.core.constants.items():
            if bound is value:
                return existing
        if isinstance(value, (list, dict, set)) or not resolve.is_constant_value(value):
            raise TransformError(f"{hint} is mutable state ({type(value).__name__}); transformed "
                                 f"functions read globals once, when they are transformed")
        name = self.scope.claim(hint)
        self.core.constants[name] = value
        return name

    def short_circuit(self, node: cst.BooleanOperation) -> str:
        result = self.temp()
        self.assign(result, self.value(node.left))
        saved, self.out = self.out, []
        comment, self.comment = self.comment, None
        self.assign(result, self.value(node.right))
        right, self.out = self.out, saved
        self.comment = comment
        if isinstance(node.operator, cst.And):
            self.emit(cst.If(test=cst.Name(result), body=cf.block(right)))
        else:
            negated = self.temp()
            self.assign(negated, cst.UnaryOperation(cst.Not(), cst.Name(result)))
            self.emit(cst.If(test=cst.Name(negated), body=cf.block(right)))
        return result

    def comparison(self, node: cst.Comparison):
        left = self.atom(node.left)
        if len(node.comparisons) == 1:
            target = node.comparisons[0]
            if isinstance(target.operator, (cst.Is, cst.IsNot)):    # the fence let only `is None` through
                return self.none_test(node, left, self.atom(target.comparator), isinstance(target.operator, cst.IsNot))
            right = self.atom(target.comparator)
            decided = _literal_comparison(left, target.operator, right)
            if decided is not None:     # mode == "full" on a parameter given a literal: decided now
                return cst.Name(str(decided))
            return cst.Comparison(left, [cst.ComparisonTarget(type(target.operator)(), right)])
            return cst.Comparison(left, [cst.ComparisonTarget(type(target.operator)(), self.atom(target.comparator))])
        # a < b < c  ->  _t = a < b; if _t: _t = b < c
        result = self.temp()
        first, *rest = node.comparisons
        right = self.atom(first.comparator)
        self.assign(result, cst.Comparison(left, [cst.ComparisonTarget(type(first.operator)(), right)]))
        self._chain(result, right, rest)
        return cst.Name(result)

    def none_test(self, node, left, right, negated: bool) -> cst.Name:
        """``axis is None`` is decided here, when the function is specialized, as JAX decides it when
        tracing: each side must be a literal (which a helper's parameter is when its caller passes one
        or leaves it at its default), a static argument, or a variable that is never None: one that
        holds an array or a number (``logsumexp(a, b=weights)``).  A run-time argument, or a variable
        assigned None, may be None: testing one is refused.  The result is the literal True or False,
        so the branch it tests is the only one written (if_statement)."""
        sides = [_literal_kind(side) or self._value_kind(side) for side in (left, right)]
        if None in sides:
            raise self.error(node, "an `is None` test of a value computed at run time",
                             "`is None` is decided when transformer specializes the function: test a "
                             "parameter that the call gives a literal (or leaves at its default)")
        return cst.Name(str((sides[0] == sides[1]) != negated))

    def _value_kind(self, atom) -> str | None:
        if isinstance(atom, cst.Tuple):     # a tuple, list or dict built here (a structure): never None
            return "value"
        if isinstance(atom, cst.Name) and atom.value not in self.core.maybe_none:
            return "value"
        return None

    def _chain(self, result, left, rest):
        if not rest:
            return
        saved, self.out = self.out, []
        comment, self.comment = self.comment, None
        target, *rest = rest
        right = self.atom(target.comparator)
        self.assign(result, cst.Comparison(left, [cst.ComparisonTarget(type(target.operator)(), right)]))
        self._chain(result, right, rest)
        inner, self.out = self.out, saved
        self.comment = comment
        self.emit(cst.If(test=cst.Name(result), body=cf.block(inner)))

    def if_expression(self, node: cst.IfExp):
        result = self.temp()
        test = self.atom(node.test)
        if _is_bool_literal(test):      # decided now (an `is None` test): only the branch taken
            return self.atom(node.body if test.value == "True" else node.orelse)
        comment, self.comment = self.comment, None
        saved, self.out = self.out, []
        self.assign(result, self.value(node.body))
        body, self.out = self.out, []
        self.assign(result, self.value(node.orelse))
        orelse, self.out = self.out, saved
        self.comment = comment
        self.emit(cst.If(test=test, body=cf.block(body), orelse=cst.Else(cf.block(orelse))))
        return cst.Name(result)

    def subscript(self, node: cst.Subscript):
        table = self.lambdas.get(node.value.value) if isinstance(node.value, cst.Name) else None
        if isinstance(table, FunctionTuple):        # pair[0] of pair = (x, lambda v: ...): the value there
            entry = self.table_entry(node, table)
            if isinstance(entry, _FUNCTIONS):
                raise self.error(node, f"{cf.code_of(node)}, a function, used as a value",
                                 "call it here, or pass it to a function")
            return entry
        entry = self.global_dict_entry(node)
        if entry is not None:
            return entry
        receiver = self.atom(node.value)
        treedef = self.core.structures.get(receiver.value) if isinstance(receiver, cst.Name) else None
        if treedef is not None and treedef.kind == "dict":
            return self.dict_entry(node, receiver, treedef)
        if isinstance(receiver, cst.Tuple):   # pair(x)[0]: a helper's tuple result, indexed
            picked = _tuple_element(receiver, node)
            if picked is not None:
                return picked
            name = self.temp()
            self.assign(name, receiver)
            receiver = cst.Name(name)
        return cst.Subscript(receiver, self.index(node))

    def global_dict_entry(self, node: cst.Subscript):
        """``CONFIG["layers"]["depth"]``, literal keys into a global dict: that entry's constant,
        with no structure built for the rest of the dict; None for any other subscript."""
        keys = []
        while isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
                and isinstance(node.slice[0].slice.value, cst.SimpleString):
            keys.append(node.slice[0].slice.value.evaluated_value)
            node = node.value
        if not keys or not isinstance(node, (cst.Name, cst.Attribute)) or resolve.dotted_name(node) is None:
            return None
        if isinstance(node, cst.Name) and (node.value in self.locals or node.value in self.substitute):
            return None
        r = resolve.resolve(node, self.uf.lookup, self.locals)
        value, hint = r.value, r.dotted.replace(".", "_")
        if r.kind != "constant" or type(value) is not dict:
            return None
        for key in reversed(keys):
            if type(value) is not dict or key not in value:
                return None             # (the general path names what is wrong)
            value, hint = value[key], f"{hint}_{_identifier_part(key)}"
        return self.constant_atom(hint, value)

    def index(self, subscript: cst.Subscript) -> list:
        elements = []
        for element in subscript.slice:
            item = element.slice
            if isinstance(item, cst.Index):
                new = cst.Index(self.atom(item.value))
                if getattr(self.structure_of(new.value), "kind", None) == "list":
                    # x[[0, 1, 1]]: NumPy reads a list as one index array (a tuple, as one index per axis)
                    as_array = self.temp()
                    self.assign(as_array, cf.apply_primitive(primitives.get("asarray"), [new.value]))
                    new = cst.Index(cst.Name(as_array))
                if len(subscript.slice) == 1 and isinstance(new.value, cst.Name) and new.value.value in self.index_pairs:
                    return self.index_pair(new.value)
                if len(subscript.slice) == 1:
                    spread = self.tuple_index(new.value)
                    if spread is not None:
                        return spread
            else:
                new = cst.Slice(lower=self.atom(item.lower) if item.lower else None,
                                upper=self.atom(item.upper) if item.upper else None,
                                step=self.atom(item.step) if item.step else None)
            elements.append(cst.SubscriptElement(new, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
                                                 if len(subscript.slice) > 1 else cst.MaybeSentinel.DEFAULT))
        if len(elements) > 1:
            elements[-1] = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return elements

    def tuple_index(self, atom) -> list | None:
        """``x[(0, 1)]`` and ``x[idx]`` with ``idx = (i, 1)``: a tuple is one index per axis, as NumPy
        reads it, so each of its entries is a part of the index (``x[0, 1]``), which every transform
        then sees as such (a tuple as one part is an index array along the first axis to a rule);
        None for anything else, the empty tuple included (``a[()]``, a 0-d array's element)."""
        if isinstance(atom, cst.Tuple) and atom.elements and id(atom) not in self.lists:
            parts = [element.value for element in atom.elements]
        else:
            treedef = self.structure_of(atom) if isinstance(atom, cst.Name) else None
            if getattr(treedef, "kind", None) != "tuple" or not treedef.children:
                return None
            parts = []
            for k in range(len(treedef.children)):
                part = self.temp()
                self.assign(part, cst.Subscript(atom, [cst.SubscriptElement(cst.Index(cf.literal(k)))]))
                parts.append(cst.Name(part))
        comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        return [cst.SubscriptElement(cst.Index(part), comma=comma if k < len(parts) - 1 else cst.MaybeSentinel.DEFAULT)
                for k, part in enumerate(parts)]

    def index_pair(self, pair: cst.Name) -> list:
        """``x[iu]`` with ``iu = np.triu_indices(n)``: the pair of index arrays is two parts of the
        index, as NumPy reads a tuple, so each transform sees the arrays (never a tuple as an index)."""
        parts = []
        for k in range(2):
            part = self.temp()
            self.assign(part, cst.Subscript(pair, [cst.SubscriptElement(cst.Index(cf.literal(k)))]))
            parts.append(cst.Name(part))
        return [cst.SubscriptElement(cst.Index(parts[0]), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.SubscriptElement(cst.Index(parts[1]))]

    # ----------------------------------------------------------------- calls
    def call(self, node: cst.Call, discard=False):
        func = node.func
        if isinstance(func, cst.Call):       # tr.grad(loss)(w, x), checked by the fence
            given, captured = self.transformed_lambda(func)
            try:
                made = resolve.transform_of_call(func, self.uf.lookup, self.locals, given)
            except (ValueError, TypeError) as err:      # a table or a choice of functions given to it
                raise self.error(func, f"this transform call ({err})", "give it a function's name or a lambda")
            if made is None:                    # make_step(0.1)(x): a helper's result, called
                returned = self.bindable(func)
                if not isinstance(returned, _CALLABLES):
                    raise self.error(node, f"calling the result of {cf.code_of(func)}, which is not a function",
                                     "call a function, a lambda, or a helper that returns one")
                return returned.call(self, node)
            if not isinstance(made, custom_vjp):
                made = self.code_form(node, made)         # tr.jacrev(f)(x): its code form
                if not captured and _written_as_plain_code(made):
                    return self.inline(node, made, discard)
            if captured:
                made = _captured_unbatched(made, len(captured))
            if isinstance(made, custom_vjp):     # tr.checkpoint(step)(h, x)
                if captured:
                    raise self.error(func, "tr.checkpoint of a lambda that reads variables of the code around it",
                                     "pass them to the lambda as arguments")
                return self.custom_vjp_call(node, made)
            return self.inline_transformed(node, made, captured)
        local_lambda = self.lambda_called(func)
        if local_lambda is not None:
            if not isinstance(local_lambda, _CALLABLES):
                raise self.error(node, f"calling {cf.code_of(func)}, a tuple, list or dict of functions",
                                 "call one of its entries: name[key](...)")
            return local_lambda.call(self, node)
        update = methods.at_update(node)
        if update is not None:
            return self.at_update(node, *update)
        r = resolve.resolve(func, self.uf.lookup, self.locals)
        if isinstance(func, cst.Attribute) and (r.kind == "local" or resolve.dotted_name(func.value) is None):
            if func.attr.value in ("items", "keys", "values") and not node.args:
                rows = self.rows_of(node)        # sum(d.values()) of a dict argument: a tuple of its entries
                if rows is None:
                    raise self.error(node, f".{func.attr.value}() of a value that is not a dict argument",
                                     "pass the dict in as an argument: its keys are known when the function "
                                     "is specialised")
                return cf.tuple_of([cf.tuple_of(list(row)) if isinstance(row, tuple) else row for row in rows])
            return self.method_call(node)
        if r.kind == "primitive":
            prim = r.primitive
            if r.value in (max, min) and len(node.args) != 2:       # Python's max(a, b) only: np.maximum
                raise self.error(node, f"{r.dotted}() takes exactly two values here")
            made = self.primitive_call(node, prim, [a for a in node.args])
            if any(r.value is alias for alias in prim.copying_aliases) and \
                    self.structure_of(made.args[0].value) is _LEAF:
                # np.array(y) of an array y is a copy, never y itself, as np.asarray(y) is
                held = self.temp()
                self.assign(held, made)
                made = cf.apply_primitive(primitives.get("copy"), [cst.Name(held)])
            return made
        if r.kind == "dtype":
            if len(node.args) != 1:
                raise self.error(node, f"{r.dotted}() takes one value")
            return cf.call("rt.astype", [self.atom(node.args[0].value), self.dtype_atom(node, r.value)])
        if r.kind == "node":
            return self.construct(node, r.value)
        if r.kind == "user" and r.value in _TREE_MAPS:
            return self.tree_map(node)
        if self.is_tree_leaves(node):
            return self.tree_leaves(node)
        named = resolve.transform_named(func, self.uf.lookup, self.locals) if r.kind == "user" else None
        if named == "jvp":
            return self.jvp_call(node)
        if named in ("vjp", "linearize"):
            raise self.error(node, f"tr.{named} inside transformed code is supported as "
                                   f"`out, {named}_fn = tr.{named}(f, x, ...)`",
                             f"assign its two results to two names, then call {named}_fn")
        if r.kind == "user":
            return self.inline(node, r.value, discard)
        if r.kind == "local" or isinstance(func, cst.Subscript):
            raise self.error(node, f"calling {cf.code_of(func)}, which holds a value here, not a function",
                             "a name called must be bound to a function (f = np.sin, f = lambda v: ..., "
                             "f = make(...)) or be a parameter of a helper given one")
        raise self.error(node, f"cannot call {r.dotted or 'this'}")

    def code_form(self, node: cst.Call, made):
        """The transform ``node.func`` makes, as a chain of steps to inline: a Jacobian's is its code
        form (derived_code.py), written for the structures of the arguments where they are tuples."""
        from .transformed import Transformed
        structures = tuple(self.display_structure(a.value) for a in node.args)
        as_code = getattr(made, "as_code", None)
        try:
            if as_code is not None:      # its code form, for these structures where it is given any
                return as_code(structures if any(t.kind != "leaf" for t in structures) else None)
            stepwise = Transformed.of(made).stepwise()
        except TransformError as err:
            if self.ours and err.location is not None:
                raise    # a call in code transformer wrote (a Jacobian's of a Jacobian): the user's line stays
            raise self.error(node.func, err.bare_message) from None
        return stepwise

    def display_structure(self, value) -> TreeDef:
        """The structure of an argument as written: a tuple or list display's from its elements', a
        name's as recorded, anything else a leaf."""
        if isinstance(value, (cst.Tuple, cst.List)):
            return TreeDef("list" if isinstance(value, cst.List) else "tuple",
                           tuple(self.display_structure(el.value) for el in value.elements))
        if isinstance(value, cst.Name):         # a helper's parameter: the atom it stands for
            atom = self.atom(value)
            return self.core.structures.get(atom.value, _LEAF) if isinstance(atom, cst.Name) else _LEAF
        return _LEAF

    def lambda_called(self, func):
        """The lambda a call calls: written in place, or bound to a name here, or an entry of a list of
        functions passed to a helper (``branches[1]`` in lax.switch's definition)."""
        if isinstance(func, cst.Lambda):
            return LocalLambda.written(func, self)
        if isinstance(func, cst.IfExp):
            return self.function_choice(func)
        if isinstance(func, cst.Name):
            return self.lambdas.get(func.value)
        if isinstance(func, cst.Subscript):
            table = self.lambdas.get(func.value.value) if isinstance(func.value, cst.Name) \
                else self.function_table(func.value)
            if isinstance(table, FunctionTuple):
                entry = self.table_entry(func, table)
                return entry if isinstance(entry, _FUNCTIONS) else None
        return None

    def table_entry(self, node: cst.Subscript, table: "FunctionTuple"):
        """``table[k]``: the entry (a function or an atom) under a key known now, or for a position
        known only at run time, a choice among the table's functions."""
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            raise self.error(node, f"{cf.code_of(node)}: a tuple, list or dict holding functions, sliced",
                             "index it with one key known when the function is specialised")
        index = self.atom(node.slice[0].slice.value)
        key = _literal_key(index)
        if key is _NO_KEY:
            return self.chosen_at_run_time(node, table, index)
        if isinstance(key, int) and not table.by_key and -len(table.keys) <= key < 0:
            key += len(table.keys)          # fs[-1]: counted from the end, as Python does
        if key not in table.keys:
            raise self.error(node, f"{cf.code_of(node)}: no entry is stored under {key!r} "
                                   f"(the keys are {', '.join(map(repr, table.keys))})",
                             "index a tuple, list or dict of functions with a key known when the function "
                             "is specialised")
        return table.entries[table.keys.index(key)]

    def chosen_at_run_time(self, func, table: "FunctionTuple", index):
        """``fs[k](x)`` with ``k`` known only at run time: an if/elif chain over the positions of a list
        or tuple of functions, on ``np.arange(n)[k]``, which refuses a ``k`` out of range as the list
        would (where indices are checked) and counts a negative one from the end."""
        count = len(table.entries)
        if table.by_key:
            raise self.error(func, f"{cf.code_of(func)}: a dict of functions indexed with a key known only at "
                                   f"run time", "index a list or tuple of functions, or use a literal key")
        if not all(isinstance(entry, _FUNCTIONS) for entry in table.entries):
            raise self.error(func, f"{cf.code_of(func)}: a tuple or list holding both functions and values, "
                                   f"indexed with a position known only at run time",
                             "index it with a literal, or keep the functions in a tuple of their own")
        positions, position = self.temp(), self.temp()
        self.assign(positions, cf.call("np.arange", [cf.literal(count)]))
        self.assign(position, cst.Subscript(cst.Name(positions), [cst.SubscriptElement(cst.Index(index))]))
        choice = table.entries[-1]
        for k in reversed(range(count - 1)):
            test = self.temp()
            self.assign(test, cst.Comparison(cst.Name(position), [cst.ComparisonTarget(cst.Equal(), cf.literal(k))]))
            choice = FunctionChoice(cst.Name(test), table.entries[k], choice)
        return choice

    def function_table(self, node):
        """A dict, list or tuple display holding a function (a lambda, a function named, a choice or a
        display of them), as a FunctionTuple of its entries (functions, and atoms for the values among
        them), each read by key (``ops["sq"](x)``, ``pair[0]``); else None, having evaluated nothing."""
        if not self.holds_function(node):
            return None
        if isinstance(node, cst.Dict):
            if not all(isinstance(e, cst.DictElement) for e in node.elements):
                raise self.error(node, "** in a dict display", "write each entry")
            keys = tuple(_literal_key(e.key) for e in node.elements)
            if _NO_KEY in keys:
                raise self.error(node, "a dict holding functions, with a key known only at run time",
                                 "write its keys as literals")
            return FunctionTuple([self.operand(e.value) for e in node.elements], keys, by_key=True)
        entries = [self.operand(e.value) for e in node.elements]
        return FunctionTuple(entries, tuple(range(len(entries))))

    def holds_function(self, node) -> bool:
        """Whether a display holds a function, as written: a lambda, a function named, a name bound
        to one, a choice of them, or a display holding one.  (A helper's call that returns a function
        is found when it is made: see bindable.)"""
        if not isinstance(node, (cst.Dict, cst.List, cst.Tuple)):
            return False
        values = [e.value for e in node.elements if isinstance(e, (cst.DictElement, cst.Element))]
        return any(self.is_function_written(v) for v in values)

    def is_function_written(self, node) -> bool:
        if isinstance(node, cst.Lambda):
            return True
        if isinstance(node, cst.IfExp):
            return self.is_function_written(node.body) and self.is_function_written(node.orelse)
        if isinstance(node, cst.Name) and node.value in self.lambdas:
            return True
        return self.function_named(node) is not None or self.holds_function(node)

    def bindable(self, node):
        """What ``node`` gives where a name is bound or an argument passed: a function (a lambda, one
        named, a choice of them, a tuple, list or dict holding one, or a helper's result that is one),
        or else a value, as ``value`` gives it."""
        function = self.function_passed(node)
        if function is not None:
            return function
        if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
            entries = [self.operand(e.value) for e in node.elements]   # each evaluated once, in order
            if any(isinstance(e, _FUNCTIONS) for e in entries):
                return FunctionTuple(entries, tuple(range(len(entries))))
            built = cf.tuple_of(entries)
            return self.as_list(built) if isinstance(node, cst.List) else built
        if isinstance(node, cst.Dict):
            return self.function_table(node) or self.value(node)
        if isinstance(node, cst.ListComp):
            return self.comprehension(node, functions=True)
        if isinstance(node, cst.Call):
            return self.call(node)
        return self.value(node)

    def operand(self, node):
        """A function, or an atom: ``bindable``, with a value held by a name unless it is an atom."""
        held = self.bindable(node)
        if isinstance(held, _FUNCTIONS) or cf.is_atom(held):
            return held
        name = self.temp()
        self.assign(name, held)
        return cst.Name(name)

    def function_choice(self, node):
        """``f if c else g`` with a function in each branch (a lambda, a function named, or such a
        choice): a FunctionChoice whose test is read here, where Python reads it; else None."""
        if not isinstance(node, cst.IfExp):
            return None
        if_true, if_false = self.function_passed(node.body), self.function_passed(node.orelse)
        if if_true is None or if_false is None:
            return None
        test = self.atom(node.test)
        if _is_bool_literal(test):          # decided now (an `is None` test): the function taken
            return if_true if test.value == "True" else if_false
        held = self.temp()                  # the test as it is now, whatever later rebinds its names
        self.assign(held, test)
        return FunctionChoice(cst.Name(held), if_true, if_false)

    def argument(self, node):
        """What a helper's or a lambda's argument passes: a function (a lambda, or a function
        passed by name, as to ``lax.fori_loop``; lax.switch's list of branches), called where the
        helper calls it, or an atom."""
        return self.operand(node)

    def function_passed(self, node):
        """The function an argument passes (a lambda, or a function named), or None for a value."""
        passed = self.lambda_called(node)
        return passed if passed is not None else self.function_named(node)

    def function_named(self, node):
        """A PassedFunction for a name or dotted name of a function (not a local), else None."""
        if not isinstance(node, (cst.Name, cst.Attribute)) or isinstance(node, cst.Name) and node.value in self.locals:
            return None
        return _passed(resolve.resolve(node, self.uf.lookup, self.locals))

    def at_update(self, node: cst.Call, array, subscript: cst.Subscript, op: str):
        """``x.at[index].op(value)``, JAX's functional update: a copy of ``x`` written at ``index``
        (``get`` reads it).  ``add`` goes through rt.add_at (NumPy's np.add.at), so an array index
        that names a position twice adds twice, as in JAX; the other updates read and write each
        position once, so they take ints and slices only."""
        source = self.atom(array)
        index = self.index(subscript)
        if op == "get":
            if node.args:
                raise self.error(node, "x.at[index].get() takes no arguments here")
            return cst.Subscript(source, index)
        if len(node.args) != 1 or node.args[0].keyword is not None:
            raise self.error(node, f"x.at[index].{op}(value) takes one value",
                             "the mode=, indices_are_sorted= and unique_indices= keywords are not supported")
        value = self.atom(node.args[0].value)
        updated = self.temp()
        self.assign(updated, cf.call("np.copy", [source]))
        parts = [element.slice for element in index]
        combined = methods.AT_PRIMITIVES.get(op)          # None for set
        if combined is not None and combined.impl is operator.add:
            atoms = []
            for part in parts:
                if isinstance(part, cst.Index):
                    atoms.append(part.value)
                    continue
                bounds = [b if b is not None else cst.Name("None") for b in (part.lower, part.upper, part.step)]
                made = self.temp()
                self.assign(made, cf.call("rt.index_slice", bounds))
                atoms.append(cst.Name(made))
            added = self.temp()
            self.assign(added, cf.call("rt.add_at", [cst.Name(updated), cf.tuple_of(atoms), value]))
            return cst.Name(added)
        if combined is not None:
            for part in parts:
                if isinstance(part, cst.Index) and not isinstance(part.value, cst.Integer) \
                        and not _is_negative_literal(part.value):
                    raise self.error(node, f"x.at[index].{op}() with an index that may be an array",
                                     "index with ints and slices, or write the update with np.where")
            old = self.temp()
            self.assign(old, cst.Subscript(cst.Name(updated), index))
            new = self.temp()
            self.assign(new, cf.apply_primitive(combined, [cst.Name(old), value], []))
            value = cst.Name(new)
        self.emit(cf.assign(cst.Subscript(cst.Name(updated), index), value))
        return cst.Name(updated)

    def method_call(self, node: cst.Call):
        method = node.func.attr.value
        prim = primitives.get(methods.METHODS[method])
        receiver = cst.Arg(node.func.value)
        args = list(node.args)
        spread = methods.SPREAD_ARGUMENT_METHODS.get(method)
        positional = [a for a in args if a.keyword is None]
        if spread is not None and positional:
            keywords = [a for a in args if a.keyword is not None]
            if len(positional) == 1 and not isinstance(positional[0].value, (cst.Integer, cst.UnaryOperation)):
                packed = positional[0].value
            else:
                packed = cst.Tuple([cst.Element(a.value) for a in positional])
            if spread == "axes":
                args = [cst.Arg(packed, keyword=cst.Name("axes"))] + keywords
            else:
                args = [cst.Arg(packed)] + keywords
        return self.primitive_call(node, prim, [receiver] + args)

    def primitive_call(self, node, prim: primitives.Primitive, args: list[cst.Arg]):
        positional = [self.atom(a.value) for a in args if a.keyword is None]
        if prim.impl is len and len(positional) == 1 and not any(a.keyword for a in args):
            known = self.known_length(positional[0])
            if known is not None:       # len of a tuple written in the code or of a structure: decided now
                return cf.literal(known)
        keywords = [(a.keyword.value, self.atom(a.value)) for a in args if a.keyword is not None]
        extra = positional[len(prim.params):]
        positional = positional[:len(prim.params)]
        if extra:  # np.sum(x, 0) -> np.sum(x, axis=0)
            if len(extra) > len(prim.keywords):
                raise self.error(node, f"too many arguments to {prim.spelling}")
            keywords = list(zip(prim.keywords, extra)) + keywords
        for key, _ in keywords:
            if key not in prim.keywords and key not in prim.params:
                raise self.error(node, f"{prim.spelling}() does not support the keyword {key}=",
                                 f"supported: {', '.join(prim.keywords) or 'none'}")
        if prim.range_like and len(positional) == 1:
            positional = [cf.literal(0), positional[0]]
        if prim.collective is not None and prim.params[0] == "x" and positional:
            treedef = self.structure_of(positional[0])
            if treedef.kind != "leaf":      # lax.psum(grads, "i") of a dict: each leaf's, rebuilt (JAX's)
                leaves = self.leaves_of(self.held(positional[0]), treedef)
                return self.rebuilt(treedef, iter([self.held(cf.apply_primitive(prim, [leaf] + positional[1:], keywords))
                                                   for leaf in leaves]))
        return cf.apply_primitive(prim, positional, keywords)

    def inline(self, node: cst.Call, fn, discard):
        if getattr(fn, "transform_refusal", None):
            raise self.error(node, fn.transform_refusal)
        if getattr(fn, "as_code", None) is not None:
            # J = tr.jacrev(f) bound outside and called here: its code form, not f's (derived.py)
            code = self.code_form(node, fn)
            if not _written_as_plain_code(code):
                return self.inline_transformed(node, code)
            fn = code
        if isinstance(fn, custom_vjp):
            return self.custom_vjp_call(node, fn)
        if isinstance(fn, custom_jvp):
            return self.custom_jvp_call(node, fn)
        base = getattr(fn, "__transformer_fn__", None)
        if base is not None:
            if getattr(fn, "steps", ()):
                return self.inline_transformed(node, fn)
            fn = base   # jit inside jit: the helper is inlined and compiled with its caller
        if isinstance(fn, primitives.WrittenDefinition):
            fn = self.written_for(node, fn)
        if fn.__code__ in self.stack:
            cycle = " -> ".join(c.co_name for c in self.stack + (fn.__code__,))
            raise self.error(node, f"recursion ({cycle}) cannot be transformed", "write it as a loop")
        fn = _variant_for(node, fn)
        callee = source.load(fn)
        try:
            fence.check(callee, helper=True)
            bound = self.bind_arguments(node, fn, callee)
            result = self.inline_bound(callee, bound)
            first = bound.get(callee.node.params.params[0].name.value) if callee.node.params.params else None
            if getattr(fn, "numpy_view", False) and isinstance(result, cst.Name) and isinstance(first, cst.Name):
                self.core.copied_views[result.value] = first.value       # np.diagonal: NumPy's is a view
        except TransformError as err:
            defined = primitives.definition_name(fn)
            if defined is None or err.location is not None and err.location.filename == self.uf.location(node).filename:
                raise
            # a refusal inside np.roll's definition: named at the user's call
            raise self.error(node, f"{defined}: {err.bare_message}", err.hint) from None
        if result is None:
            if not discard:
                raise self.error(node, f"{fn.__name__}() returns nothing, but its result is used")
            return cst.Name("None")
        return result

    def written_for(self, node: cst.Call, written: primitives.WrittenDefinition):
        """The definition ``written`` writes for this call's literal (np.einsum's subscripts)."""
        positional = [arg.value for arg in node.args if arg.keyword is None]
        by_position = positional[written.position] if len(positional) > written.position else None
        given = next((arg.value for arg in node.args if arg.keyword is not None
                      and arg.keyword.value == written.literal), by_position)
        if given is None and written.default is not None:
            value = written.default
        elif written.measure == "length":
            if not isinstance(given, (cst.List, cst.Tuple)) or not given.elements:
                raise self.error(node, f"{written.dotted}'s {written.literal} must be a list or tuple written in "
                                       f"the call: transformer writes one branch for each of its entries")
            value = len(given.elements)
        else:
            try:
                value = ast.literal_eval(cst.Module([]).code_for_node(given)) if given is not None else None
            except (ValueError, SyntaxError):
                value = None
            if value is None:
                raise self.error(node, f"{written.dotted}'s {written.literal} must be a literal: transformer "
                                       f"writes the computation for it when it transforms the call")
        operands = len(positional) - (1 if given is not None and given is by_position else 0)
        try:
            return written.function_for(value, operands)
        except ValueError as err:
            raise self.error(node, f"{written.dotted}: {err}") from None

    def transformed_lambda(self, func: cst.Call):
        """For ``tr.grad(lambda q: ...)(p)``: the lambda's function object, keyed by its node for
        resolve.transform_of_call, and the atoms of the variables it reads from the code around it.
        Those are passed after the call's own arguments, as parameters the lambda's transformed
        code takes after its own (``__transformer_captured__``): the transform differentiates or
        batches only the lambda's own parameters, as JAX's closures do.  ({}, []) for a named function."""
        first = func.args[0].value if func.args else None
        home = self
        if isinstance(first, cst.Name) and isinstance(self.lambdas.get(first.value), LocalLambda):
            home = self.lambdas[first.value].home       # sq = lambda q: ...; tr.grad(sq)(p)
            node = self.lambdas[first.value].node
        elif isinstance(first, cst.Lambda):
            node = first
        elif isinstance(first, cst.Name) and isinstance(self.lambdas.get(first.value), LocalDef):
            return self.transformed_local_def(first, self.lambdas[first.value])
        elif isinstance(first, cst.Name) and isinstance(self.lambdas.get(first.value), PassedFunction) \
                and self.lambdas[first.value].resolved.kind == "user":
            return {first: self.lambdas[first.value].resolved.value}, []     # a parameter holding loss_fn
        else:
            return {}, []
        code = home.lambda_code(node)
        reads = [name for name in code.co_freevars if name in home.locals or name in home.substitute]
        for name in reads:
            if name in home.lambdas:
                raise self.error(first, f"the lambda given to this transform reads {name!r}, a function of the "
                                        f"code around it", "call it inside the lambda through a module-level def")
        cells = tuple(types.CellType() if name in reads or name not in home.uf.closure
                      else types.CellType(home.uf.closure[name]) for name in code.co_freevars)
        fn = types.FunctionType(code, home.uf.globals, "<lambda>", _literal_defaults(self, node), cells)
        fn.__transformer_captured__ = tuple(reads)
        return {first: fn}, [home.atom(cst.Name(name)) for name in reads]

    def transformed_local_def(self, first: cst.Name, held: LocalDef):
        """``tr.grad(energy)(p)`` of a def written in the code: as for a lambda (transformed_lambda),
        the enclosing variables it reads are passed after the call's arguments, as they are now."""
        if held.defaults:
            raise self.error(first, "a def written in the function, with defaults, given to a transform",
                             "pass those values as arguments, or define it at module level")
        reads = list(held.fn.__transformer_enclosed__)
        atoms = []
        for name in reads:
            now = held.home.held_now(name)
            if now is None or isinstance(now, _FUNCTIONS):
                raise self.error(first, f"{first.value}, given to this transform, reads {name!r} of the code "
                                        f"around it, " + ("which has no value here" if now is None else "a function"),
                                 "pass it as an argument, or call it through a module-level def")
            atoms.append(now)
        fn = function_of(held.fn.__code__, held.fn.__globals__)
        fn.__transformer_captured__ = tuple(reads)
        return {first: fn}, atoms

    def lambda_code(self, node: cst.Lambda):
        """The code object of a lambda written in this function: a constant of its code (or of a
        lambda's within it), told from others on the same line by where its body sits."""
        where = self.uf.location(node)
        found = [code for code in _nested_codes(self.uf.fn.__code__)
                 if code.co_name == "<lambda>" and code.co_firstlineno <= where.line]
        text = "".join(linecache.getlines(self.uf.filename))
        for code in found:
            probe = types.FunctionType(code, {}, "<lambda>", None, tuple(types.CellType() for _ in code.co_freevars))
            lam = source._lambda_in_file(probe, text, self.uf.filename)
            if (lam.lineno, lam.col_offset + 1) == (where.line, where.col):
                return code
        raise self.error(node, "cannot find this lambda's code (was the file edited?)", "write it as a def")

    def jvp_call(self, node: cst.Call):
        """``tr.jvp(f, (x, y), (x_dot, y_dot))`` inside transformed code: the jvp of ``f`` (a function's
        name or a lambda) inlined; its result is the pair ``(out, out_dot)``.  A lambda's variables
        from the code around it are primals too, with zero tangents."""
        from .staging import Step
        from .transformed import Transformed
        if len(node.args) != 3 or any(a.keyword is not None for a in node.args):
            raise self.error(node, "tr.jvp inside transformed code takes (f, primals, tangents) by position")
        primals, tangents = node.args[1].value, node.args[2].value
        if not (isinstance(primals, (cst.Tuple, cst.List)) and isinstance(tangents, (cst.Tuple, cst.List))
                and len(primals.elements) == len(tangents.elements)):
            raise self.error(node, "tr.jvp inside transformed code takes its primals and tangents as tuples of "
                                   "one length written in the call", "write tr.jvp(f, (x,), (v,))")
        given, captured = self.transformed_lambda(node)
        fn = self.function_transformed(node, given, "tr.jvp")
        zeros = []
        for atom in captured:
            zero = self.temp()
            self.assign(zero, cf.call("rt.zeros_like", [atom]))
            zeros.append(cst.Name(zero))
        # each held in a name, so a tuple written in the call is known as a structure
        primal_atoms = [self.held(self.atom(e.value)) for e in primals.elements] + list(captured)
        count = sum(self.leaf_count(atom) for atom in primal_atoms)      # a structure's leaves are the primals
        made = Transformed.of(fn).then(Step("jvp", (("active", tuple(range(count))), ("ndims", None))))
        atoms = primal_atoms + [self.held(self.atom(e.value)) for e in tangents.elements] + zeros
        return self.inline_transformed(node, made, atoms=atoms)

    def function_transformed(self, node: cst.Call, given: dict, what: str):
        """The function tr.jvp or tr.vjp is given inside transformed code: a lambda (``given``), a
        function's name, or a transform made in place (``tr.jvp(tr.grad(f), (x,), (v,))``)."""
        first = node.args[0].value
        if first in given:
            return given[first]
        if isinstance(first, cst.Call):
            made = resolve.transform_of_call(first, self.uf.lookup, self.locals)
            if made is not None and not isinstance(made, custom_vjp):
                return made
        r = resolve.resolve(first, self.uf.lookup, self.locals)
        if r.kind != "user" or isinstance(r.value, (custom_vjp, custom_jvp)):
            raise self.error(first, f"{what} inside transformed code takes a function's name, a lambda or a transform "
                                    f"of one")
        return r.value

    def vjp_call(self, node: cst.Call, target: cst.Tuple):
        """``out, vjp_fn = tr.vjp(f, x, y)`` inside transformed code: ``out`` is ``f``'s output, inlined
        here, and ``vjp_fn`` a function whose calls inline the vjp of ``f`` at the primals as they are
        here (copied, so a later rebinding of ``x`` changes nothing), giving a tuple of cotangents.
        ``out, f_jvp = tr.linearize(f, x, y)`` is the same with ``f_jvp(*tangents)`` the jvp's tangent."""
        from .transformed import Transformed
        named = resolve.transform_named(node.func, self.uf.lookup, self.locals)
        names = [element.value for element in target.elements]
        if len(names) != 2 or not all(isinstance(name, cst.Name) for name in names) \
                or any(a.keyword is not None for a in node.args) or len(node.args) < 2:
            raise self.error(node, f"tr.{named} inside transformed code is supported as "
                                   f"`out, {named}_fn = tr.{named}(f, x, ...)`",
                             "assign its two results to two names, with the primals passed by position")
        given, captured = self.transformed_lambda(node)
        if captured:
            raise self.error(node.args[0], f"tr.{named} of a lambda that reads variables of the code around it",
                             "pass them to the lambda as primals")
        fn = self.function_transformed(node, given, f"tr.{named}")
        primals = []
        for arg in node.args[1:]:
            held = self.temp()
            self.assign(held, self.atom(arg.value))
            primals.append(cst.Name(held))
        out = self.inline_transformed(node, Transformed.of(fn), atoms=primals)
        self.assign(self.local(names[0].value), out)
        self.lambdas[names[1].value] = (PulledBack if named == "vjp" else PushedForward)(fn, primals)

    def inline_transformed(self, node: cst.Call, fn, captured=(), atoms=None):
        """``tr.grad(loss)(w, x)`` called inside transformed code: inline the
        generated function's core form, so ``pmean(grad(loss)(w, x), "i")``
        under pmap, or ``grad`` inside ``vmap``, are one function.  ``captured``:
        the atoms a transformed lambda reads from here, passed after the arguments
        (``atoms``: every argument's atom, made by the caller)."""
        from . import staging       # staging imports this module
        positional = [a for a in node.args if a.keyword is None]
        if atoms is None and len(positional) != len(node.args):
            raise self.error(node, f"pass the arguments of {fn!r} by position inside transformed code")
        if atoms is None:       # a tuple written in the call held in a name, its structure known
            atoms = [self.held(atom) if isinstance(atom, cst.Tuple) else atom
                     for atom in (self.atom(a.value) for a in positional)]
            params = list(inspect.signature(fn.__transformer_fn__).parameters.values())[len(atoms):]
            # tr.grad(lambda q, s=2.0: ...)(p): a literal default where the call gives nothing
            atoms += [cf.literal(p.default) for p in params
                      if p.default is not inspect.Parameter.empty and _literal_default(p.default)]
            atoms += list(captured)
        structured = {i: self.core.structures[a.value] for i, a in enumerate(atoms)
                      if isinstance(a, cst.Name) and a.value in self.core.structures}
        if structured:       # grad(loss)(params, x) with params a list of (w, b): one parameter per leaf
            names = list(inspect.signature(fn.__transformer_fn__).parameters)
            self.check_structured_steps(node, fn, structured)
            callee = staging.make_core(fn.__transformer_fn__, fn.steps, inlined=True,
                                       structures={names[i]: t for i, t in structured.items() if i < len(names)})
            atoms = [leaf for i, atom in enumerate(atoms)
                     for leaf in (self.leaves_of(atom, structured[i]) if i in structured else [atom])]
        else:
            callee = staging.make_core(fn.__transformer_fn__, fn.steps, inlined=True)
        structure_exits(callee)
        if len(atoms) != len(callee.params):
            raise self.error(node, f"{fn!r} takes {len(callee.params)} arguments here, got {len(atoms)}")
        prefix = staging.entry_name(staging.base_name_of(fn.__transformer_fn__), fn.steps)
        rename = {}
        for name in sorted(_names_in(callee.node) | set(callee.constants)):
            rename[name] = self.scope.claim(f"{prefix}_{name}") if not name.startswith("_t") else self.temp()
        for name, value in callee.constants.items():
            self.core.constants[rename[name]] = value
        self.core.functions.update(callee.functions)
        self.core.sources.update(callee.sources)
        for param, atom in zip(callee.params, atoms):
            self.assign(rename[param], atom)
        body = [dataflow.renamed(stmt, rename) for stmt in callee.node.body.body]
        *statements, last = body
        self.out.extend(statements)
        kept = _rebuilt_on_return(callee.returned) if not fn.steps else None
        if kept is not None:
            # plain code returning a dict or list (a Jacobian's code form at dict arguments): its
            # structure stays known here, as a helper's does (plain tuples stay displays, which
            # tuple_picks makes plain for reverse mode)
            held = self.held(last.body[0].value)
            self.core.structures[held.value] = kept
            return held
        if structured:
            return self.regrouped(last.body[0].value, fn, structured)
        return last.body[0].value

    # --------------------------------------------------- Python over structures
    def comprehension(self, node: cst.ListComp | cst.GeneratorExp, functions=False):
        """``[f(w, g) for w, g in zip(params, grads)]`` over structures known when the function is
        specialized: unrolled, one element per entry, as JAX's tracing unrolls it.  A generator
        expression (``sum(np.sum(w * w) for w, b in params)``) is the same tuple of elements.
        ``functions``: where a name is bound, elements may be functions (``[lambda v, k=k: v * k for
        k in range(3)]``), and a FunctionTuple of them is given."""
        comp = node.for_in
        what = "a list comprehension" if isinstance(node, cst.ListComp) else "a generator expression"
        if comp.inner_for_in is not None or comp.ifs or comp.asynchronous is not None:
            raise self.error(node, f"{what} with several for clauses or an if",
                             "write one for clause without if, or a for loop")
        rows = self.rows_of(comp.iter)
        if rows is None:
            raise self.error(node, f"{what} over values known only at run time",
                             "write a for loop that fills a preallocated array; a comprehension runs over "
                             "lists, tuples, zip, enumerate or range of a literal, whose length is known")
        saved = dict(self.substitute), dict(self.lambdas)
        elements = []
        try:
            for row in rows:
                self.bind_row(node, comp.target, row)
                element = self.operand(node.elt) if functions else self.atom(node.elt)
                if isinstance(element, _FUNCTIONS):
                    elements.append(element)
                    continue
                if not isinstance(element, cst.Name) or element.value in ("True", "False", "None"):
                    held = self.temp()
                    self.assign(held, element)
                    if isinstance(element, cst.Tuple):
                        self.core.structures[held] = TreeDef("tuple", tuple(
                            self.core.structures.get(getattr(el.value, "value", None), _LEAF) for el in element.elements))
                    element = cst.Name(held)
                elements.append(element)
        finally:
            self.substitute, self.lambdas = saved
        if any(isinstance(element, _FUNCTIONS) for element in elements):
            return FunctionTuple(elements, tuple(range(len(elements))))
        # a tuple of atoms in place, so np.concatenate([f(a) for a in parts]) reads as np.concatenate((...))
        built = cf.tuple_of(elements)
        return self.as_list(built) if isinstance(node, cst.ListComp) else built

    def rows_of(self, node) -> list | None:
        """The entries a for clause runs over, when their number is known now: atoms (or tuples of
        them, for zip and enumerate); None when it is known only at run time."""
        if self.is_tree_leaves(node):           # for p in tree_leaves(params): one pass per leaf
            return self.leaf_atoms(node)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and not any(a.keyword for a in node.args):
            r = resolve.resolve(node.func, self.uf.lookup, self.locals)
            if r.kind == "loop" and r.value == "zip":
                columns = [self.rows_of(a.value) for a in node.args]
                return None if any(c is None for c in columns) else [tuple(row) for row in zip(*columns)]
            if r.kind == "loop" and r.value == "enumerate" and len(node.args) == 1:
                column = self.rows_of(node.args[0].value)
                return None if column is None else [(cf.literal(k), entry) for k, entry in enumerate(column)]
            if r.kind == "loop" and r.value == "range":
                bounds = [self.atom(a.value) for a in node.args]
                if all(isinstance(b, cst.Integer) or _is_negative_literal(b) for b in bounds):
                    return [cf.literal(k) for k in range(*(int(cst.Module([]).code_for_node(b)) for b in bounds))]
            return None
        which = slice(None)
        if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Slice):
            part = node.slice[0].slice
            bounds = [self.atom(b) if b is not None else None for b in (part.lower, part.upper, part.step)]
            if not all(b is None or isinstance(b, cst.Integer) or _is_negative_literal(b) for b in bounds):
                return None
            which = slice(*(None if b is None else int(cst.Module([]).code_for_node(b)) for b in bounds))
            node = node.value
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not node.args \
                and node.func.attr.value in ("items", "keys", "values"):
            receiver = node.func.value
            table = self.lambdas.get(receiver.value) if isinstance(receiver, cst.Name) \
                else self.function_table(receiver)
            if isinstance(table, FunctionTuple) and table.by_key:     # {"s": np.sin, ...}.items()
                keys = [cf.literal(key) for key in table.keys]
                return {"keys": keys, "values": table.entries,
                        "items": list(zip(keys, table.entries))}[node.func.attr.value]
            atom = self.atom(receiver)
            treedef = self.core.structures.get(atom.value) if isinstance(atom, cst.Name) else None
            if treedef is None or treedef.kind != "dict":
                return None
            keys = [cf.literal(key) for key in treedef.keys]
            values = [self.picked(atom, position, child) for position, child in enumerate(treedef.children)]
            return {"keys": keys, "values": values, "items": list(zip(keys, values))}[node.func.attr.value]
        held = self.lambdas.get(node.value) if isinstance(node, cst.Name) else None
        if not isinstance(held, FunctionTuple):
            held = None
        if isinstance(node, (cst.Tuple, cst.List, cst.Dict)):
            held = self.bindable(node)          # for f in (np.sin, lambda v: v * v), for v in (a, b)
        if isinstance(held, FunctionTuple):
            return (list(map(cf.literal, held.keys)) if held.by_key else held.entries)[which]
        if held is not None:
            atom = held                         # a display of values, built now
        elif isinstance(node, (cst.Name, cst.Attribute)) or isinstance(node, cst.Subscript) and \
                all(isinstance(element.slice, cst.Index) for element in node.slice):
            atom = self.atom(node)              # params["layers"]: an entry of a structure may be one
        else:
            return None
        if isinstance(atom, cst.Tuple):         # a tuple written in the code, or passed to a helper
            return [el.value for el in atom.elements][which]
        treedef = self.core.structures.get(atom.value) if isinstance(atom, cst.Name) else None
        if treedef is not None and treedef.kind == "dict" and which == slice(None):
            return [cf.literal(key) for key in treedef.keys]          # a dict runs over its keys
        if treedef is None or not treedef.is_sequence:
            return None
        return [self.picked(atom, position, treedef.children[position])
                for position in range(len(treedef.children))[which]]

    def tree_map(self, node: cst.Call):
        """``tree_map(f, params, grads)`` over structures known when the function is specialized:
        ``f`` called on each leaf's atoms, the results rebuilt in the first tree's structure."""
        if len(node.args) < 2 or any(a.keyword is not None for a in node.args):
            raise self.error(node, "tree_map(f, tree, *rest) takes a function and trees, by position")
        fn = self.argument(node.args[0].value)
        if not isinstance(fn, _CALLABLES):
            raise self.error(node.args[0], "tree_map's first argument must be a function (a lambda or a name)")
        trees = [self.atom(a.value) for a in node.args[1:]]

        def mapped(atoms, treedef):
            if treedef.kind == "leaf":
                for atom in atoms:          # each leaf read by its own name inside f's call
                    self.substitute[atom.value] = atom
                return fn.call(self, cst.Call(func=cst.Name("f"), args=[cst.Arg(atom) for atom in atoms]))
            children = [mapped([self.picked(atom, k, child) for atom in atoms], child)
                        for k, child in enumerate(treedef.children)]
            held = []
            for child in children:
                if not isinstance(child, cst.Name):
                    name = self.temp()
                    self.assign(name, child)
                    child = cst.Name(name)
                held.append(child)
            built = self.temp()
            self.assign(built, cf.tuple_of(held))
            # the first tree's structure (a dict's keys, a named tuple's class), with f's results as children
            self.core.structures[built] = dataclasses.replace(
                treedef, children=tuple(self.core.structures.get(c.value, _LEAF) for c in held))
            return cst.Name(built)

        first = self.structure_of(trees[0])     # (a helper's parameter may stand for a tuple written in its call)
        atoms = [self.held(t) for t in trees]
        saved = dict(self.substitute)
        try:
            return mapped(atoms, first)
        finally:
            self.substitute = saved

    def tree_leaves(self, node: cst.Call):
        """``tree_leaves(params)`` of a structure known when the function is specialized: a list of
        its leaves, each read by position (a Python loop over it is unrolled, as over any list)."""
        found = self.leaf_atoms(node)
        built = self.temp()
        self.assign(built, cf.tuple_of(found))
        self.core.structures[built] = TreeDef("list", tuple(self.core.structures.get(a.value, _LEAF)
                                                           if isinstance(a, cst.Name) else _LEAF for a in found))
        return cst.Name(built)

    def leaf_atoms(self, node: cst.Call) -> list:
        """The atoms of ``tree_leaves(tree)``'s leaves, each read by position."""
        if len(node.args) != 1 or node.args[0].keyword is not None:
            raise self.error(node, "tree_leaves(tree) takes one tree, by position")
        atom = self.atom(node.args[0].value)
        return self.leaves_of(self.held(atom), self.structure_of(atom))

    def is_tree_leaves(self, node) -> bool:
        if not isinstance(node, cst.Call):
            return False
        r = resolve.resolve(node.func, self.uf.lookup, self.locals)
        return r.kind == "user" and r.value in _TREE_LEAVES

    def snapshot(self, held):
        """``held`` (an atom or a function) as it is now: a name that later statements may rebind is
        copied to a name of its own, as a lambda's default or a closure's variable keeps its value."""
        if isinstance(held, cst.Name) and held.value not in ("True", "False", "None"):
            return self.held(held, fresh=True)
        return held

    def held(self, atom, fresh=False) -> cst.Name:
        if isinstance(atom, cst.Name) and not fresh:
            return atom
        name = self.temp()
        self.assign(name, atom)
        return cst.Name(name)

    def known_length(self, atom) -> int | None:
        if isinstance(atom, cst.Tuple):
            return len(atom.elements)
        treedef = self.core.structures.get(atom.value) if isinstance(atom, cst.Name) else None
        return len(treedef.children) if treedef is not None and treedef.kind not in ("leaf", "none") else None

    # ----------------------------------------- structures built in the code
    # A list, dict, named tuple or dataclass built here is a tuple at run time (a dict's values in
    # the order of its sorted keys), its structure recorded in core.structures; returned, the caller
    # rebuilds it (Transformed, staging.result_structure).
    def structure_of(self, atom):
        """The pytree structure of an atom: a name's recorded one, a tuple's of its elements."""
        if isinstance(atom, cst.Name):
            return self.core.structures.get(atom.value, _LEAF)
        if isinstance(atom, cst.Tuple):
            return TreeDef("list" if id(atom) in self.lists else "tuple",
                           tuple(self.structure_of(el.value) for el in atom.elements))
        return _LEAF

    def as_list(self, built: cst.Tuple) -> cst.Tuple:
        """Mark a tuple of atoms as a list's, so the name assigned it has a list's structure."""
        self.lists[id(built)] = built
        return built

    def structured(self, atoms: list, treedef_of) -> cst.Name:
        """A name for a tuple of ``atoms``, with the structure ``treedef_of(children's structures)``."""
        held = [self.held(atom) for atom in atoms]
        name = self.temp()
        self.assign(name, cf.tuple_of(held))
        self.core.structures[name] = treedef_of(tuple(self.core.structures.get(h.value, _LEAF) for h in held))
        return cst.Name(name)

    def dict_display(self, node: cst.Dict) -> cst.Name:
        """``{"W": w, "b": b}`` with keys known now."""
        entries = {}
        for element in node.elements:
            if isinstance(element, cst.StarredDictElement):
                raise self.error(element, "** in a dict display", "write each entry")
            key = _literal_key(self.atom(element.key))
            if key is _NO_KEY or not isinstance(key, (str, int)):
                raise self.error(element.key, "a dict key that is not a string or an int known now",
                                 "use literal keys: transformed code specialises on a dict's keys")
            entries[key] = self.atom(element.value)
        return self.dict_of(node, entries)

    def dict_of(self, node, entries: dict) -> cst.Name:
        try:
            keys = tuple(sorted(entries))
        except TypeError:
            raise self.error(node, "a dict with keys of several types", "use string keys") from None
        return self.structured([entries[k] for k in keys], lambda children: TreeDef("dict", children, keys))

    def dict_comprehension(self, node: cst.DictComp) -> cst.Name:
        """``{k: f(v) for k, v in params.items()}`` over a structure known now: unrolled."""
        comp = node.for_in
        if comp.inner_for_in is not None or comp.ifs or comp.asynchronous is not None:
            raise self.error(node, "a dict comprehension with several for clauses or an if",
                             "write one for clause without if")
        rows = self.rows_of(comp.iter)
        if rows is None:
            raise self.error(node, "a dict comprehension over values known only at run time",
                             "run it over a dict argument's items(), or a list, tuple or zip of them")
        saved = dict(self.substitute)
        entries = {}
        try:
            for row in rows:
                self.bind_row(node, comp.target, row)
                key = _literal_key(self.atom(node.key))
                if key is _NO_KEY or not isinstance(key, (str, int)):
                    raise self.error(node.key, "a dict key that is not a string or an int known now",
                                     "use the keys of a dict argument, or literal keys")
                entries[key] = self.held(self.atom(node.value))
        finally:
            self.substitute = saved
        return self.dict_of(node, entries)

    def construct(self, node: cst.Call, node_type: type) -> cst.Name:
        """``Dense(W=w, b=b)``: a named tuple or a registered dataclass built from its fields (a
        dataclass's meta fields must be known now: they are part of its structure)."""
        fields, meta_fields = tree.constructor_fields(node_type)
        names = _field_order(node_type)
        given = {}
        positional = [a for a in node.args if a.keyword is None]
        if len(positional) > len(names) or any(a.star for a in node.args):
            raise self.error(node, f"{node_type.__qualname__}() takes its {len(names)} fields by position or name")
        for name, arg in zip(names, positional):
            given[name] = arg.value
        for arg in node.args:
            if arg.keyword is not None:
                if arg.keyword.value not in names or arg.keyword.value in given:
                    raise self.error(arg, f"{node_type.__qualname__}() has no field {arg.keyword.value!r} to set here")
                given[arg.keyword.value] = arg.value
        defaults = _field_defaults(node_type)
        atoms = {}
        for name in names:
            if name in given:
                atoms[name] = self.atom(given[name])
            elif name in defaults and _literal_default(defaults[name]):
                atoms[name] = cf.literal(defaults[name])
            else:
                raise self.error(node, f"{node_type.__qualname__}() is missing the field {name!r}")
        meta = []
        for name in meta_fields:
            value = _literal_key(atoms[name])
            if value is _NO_KEY:
                raise self.error(node, f"the meta field {name!r} of {node_type.__qualname__} must be known now "
                                       f"(a literal, or a meta field read from an argument)")
            meta.append(value)
        return self.structured([atoms[f] for f in fields],
                               lambda children: tree.built(node_type, children, tuple(meta)))

    def dict_entry(self, node: cst.Subscript, receiver: cst.Name, treedef):
        """``d["W"]`` of a dict whose keys are known now: its entry by position, as a dict built in the
        code is a tuple of its values in the order of its sorted keys (an argument's entries are its
        leaves, structure.py)."""
        item = node.slice[0].slice if len(node.slice) == 1 else None
        key = _literal_key(self.atom(item.value)) if isinstance(item, cst.Index) else _NO_KEY
        if key is _NO_KEY:
            raise self.error(node, "a dict indexed with other than one key known now",
                             "index it with a literal key (d['W']), or loop over d.items()")
        if key not in treedef.keys:
            raise self.error(node, f"the dict has no key {key!r} (its keys are {', '.join(map(repr, treedef.keys))})")
        return cst.Subscript(receiver, [cst.SubscriptElement(cst.Index(cf.literal(treedef.keys.index(key))))])

    def child_structure(self, subscript: cst.Subscript):
        """The structure of ``s[k]``, a structure's child read with a literal key, or None (a leaf, or
        not known now)."""
        treedef = self.core.structures.get(subscript.value.value) if isinstance(subscript.value, cst.Name) else None
        if treedef is None or len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
            return None
        try:
            key = ast.literal_eval(cst.Module([]).code_for_node(subscript.slice[0].slice.value))
        except (ValueError, SyntaxError):
            return None
        # by position: the normalizer reads a dict's entry by its key's position (dict_entry)
        if isinstance(key, int) and -len(treedef.children) <= key < len(treedef.children):
            child = treedef.children[key]
        else:
            return None
        return child if child.kind not in ("leaf", "none") else None

    def field(self, node: cst.Attribute, atom: cst.Name, treedef):
        """``params.W`` of a named tuple or a registered class: the child its attribute names."""
        name = node.attr.value
        static, value = tree.static_attribute(treedef, name)
        if static:                 # a dataclass's meta field: part of the structure, a literal here
            if not _literal_default(value):
                raise self.error(node, f"the meta field .{name} of a {treedef.node_type.__qualname__}, a "
                                       f"{type(value).__name__}", "make meta fields numbers, strings, bools or None")
            return cf.literal(value)
        if name not in treedef.keys:
            if treedef.kind == "node" and not treedef.keys:
                raise self.error(node, f"the attribute .{name} of a {treedef.node_type.__qualname__}, whose "
                                       f"children its flatten function gives but no attribute of it holds",
                                 "flatten into children that are the instance's own attributes, or register it "
                                 "with tr.tree_util.register_dataclass")
            raise self.error(node, f"the attribute .{name} of a {treedef.node_type.__qualname__}, which is none "
                                   f"of its children ({', '.join(treedef.keys)})",
                             "pass other values in as arguments")
        position = treedef.keys.index(name)
        return self.picked(atom, position, treedef.children[position])

    def picked(self, atom, position, treedef):
        """A name for the child of the structure ``atom`` at ``position`` (a dict's by its key's position)."""
        name = self.temp()
        self.assign(name, cst.Subscript(atom, [cst.SubscriptElement(cst.Index(cf.literal(position)))]))
        if treedef.kind != "leaf":
            self.core.structures[name] = treedef
        return cst.Name(name)

    def bind_row(self, node, target, row):
        """Bind a comprehension's target (a name or a tuple of them) to an entry it runs over."""
        if isinstance(target, cst.Name):
            if isinstance(row, tuple) and any(isinstance(entry, _FUNCTIONS) for entry in row):
                row = FunctionTuple(list(row), tuple(range(len(row))))     # for pair in zip(fs, ws)
            elif isinstance(row, tuple):
                held = self.temp()
                self.assign(held, cf.tuple_of(row))
                row = cst.Name(held)
            if isinstance(row, _FUNCTIONS):     # for f in (np.sin, np.cos): f called in the pass
                self.substitute.pop(target.value, None)
                self.lambdas[target.value] = row
            else:
                self.lambdas.pop(target.value, None)
                self.substitute[target.value] = row
            return
        if not isinstance(target, (cst.Tuple, cst.List)):
            raise self.error(node, "this comprehension target", "unpack into names: for (w, b), g in ...")
        names = [el.value for el in target.elements]
        if isinstance(row, FunctionTuple) and not row.by_key:
            row = tuple(row.entries)
        if not isinstance(row, tuple):
            treedef = self.core.structures.get(row.value) if isinstance(row, cst.Name) else None
            row = tuple(self.picked(row, k, treedef.children[k] if treedef else _LEAF) for k in range(len(names)))
        if len(row) != len(names):
            raise self.error(node, f"unpacking {len(row)} values into {len(names)} names")
        for name, entry in zip(names, row):
            self.bind_row(node, name, entry)

    def check_structured_steps(self, node, fn, structured):
        """A transform given a tuple, list or dict inside transformed code takes its leaves, one
        parameter each (structure.adapt_steps speaks of them), when its chain is one whose results
        ``regrouped`` can rebuild: grad or value_and_grad then jit, vmap or pmap (the gradients take
        the arguments' structures), jit, vmap and pmap alone (the results are the function's), and
        jvp or vjp alone (the tangents are leaves; the cotangents take the primals' structures)."""
        names = [step.name for step in fn.steps]
        options = dict(fn.steps[0].options) if fn.steps else {}
        rest = names[1:] if names[:1] in (["grad"], ["value_and_grad"], ["jvp"], ["vjp"]) else names
        allowed = {"jit"} if names[:1] in (["jvp"], ["vjp"]) else {"jit", "vmap", "pmap"}
        # regrouped keeps an aux beside the gradients, of the structure the function returns it in
        # (under vmap or pmap, each of its leaves batched)
        aux_kept = names[:1] in (["grad"], ["value_and_grad"]) and set(rest) <= {"jit", "vmap", "pmap"}
        if any(n not in allowed for n in rest) or options.get("has_aux") and not aux_kept:
            raise self.error(node, f"{fn!r} of an argument that is a tuple, list or dict, inside transformed "
                                   f"code: this chain of transforms takes arrays and numbers here",
                             "call the transform outside, or pass the arrays one by one")

    def leaf_count(self, atom) -> int:
        """How many parameters ``atom`` is passed as: one per leaf of a structure, else one."""
        treedef = self.core.structures.get(atom.value) if isinstance(atom, cst.Name) else None
        return 1 if treedef is None else treedef.num_leaves

    def leaves_of(self, atom, treedef) -> list:
        """Atoms for the leaves of the structure ``atom`` holds, each picked by its position
        (``_t1 = params[0]; _t2 = _t1[1]``; a dict's entries in its sorted keys' order), which
        structure.py resolves to leaf parameters."""
        if treedef.kind == "leaf":
            return [atom]
        found = []
        for position, child in enumerate(treedef.children):
            picked = self.temp()
            self.assign(picked, cst.Subscript(atom, [cst.SubscriptElement(cst.Index(cf.literal(position)))]))
            found += self.leaves_of(cst.Name(picked), child)
        return found

    def regrouped(self, returned, fn, structured):
        """The flat gradients generated code returns, rebuilt as the structures of their arguments
        (as differentiate's boundary does for a call from Python)."""
        step = fn.steps[0] if fn.steps else None
        if step is None or step.name not in ("grad", "value_and_grad", "vjp"):
            return returned         # jit, vmap, jvp: the function's own results
        if step.name == "vjp":      # one cotangent per primal, each of its primal's structure
            primals = len(inspect.signature(fn.__transformer_fn__).parameters)
            flat = iter(self.picked_all(returned, sum(structured.get(i, _LEAF).num_leaves for i in range(primals))))
            return cf.tuple_of([self.rebuilt(structured.get(i, _LEAF), flat) for i in range(primals)])
        argnums, has_aux = dict(step.options)["argnums"], dict(step.options).get("has_aux")
        aux = None
        if step.name == "value_and_grad":       # ((value, aux), grads) with has_aux
            value, grads = (el.value for el in returned.elements)
            if has_aux and isinstance(value, cst.Tuple) and len(value.elements) == 2:
                # (value, aux) held in a name: assign records its structure, the aux's in it
                pair = self.temp()
                self.assign(pair, cf.tuple_of([self.held(value.elements[0].value),
                                               self.aux_of(value.elements[1].value, fn, structured)]))
                value = cst.Name(pair)
        elif has_aux and isinstance(returned, cst.Tuple) and len(returned.elements) == 2:    # (grads, aux)
            value, (grads, aux) = None, (el.value for el in returned.elements)
            aux = self.aux_of(aux, fn, structured)
        else:
            value, grads = None, returned
        flat = iter([el.value for el in grads.elements] if isinstance(grads, cst.Tuple) else [grads])
        groups = [self.rebuilt(structured.get(i, _LEAF), flat) for i in (argnums if isinstance(argnums, tuple) else (argnums,))]
        if isinstance(argnums, tuple):
            grouped = self.temp()
            self.assign(grouped, cf.tuple_of(groups))
            result = cst.Name(grouped)
        else:
            result = groups[0]
        if aux is not None:
            return cf.tuple_of([result, aux])
        return result if value is None else cf.tuple_of([value, result])

    def aux_of(self, aux, fn, structured):
        """has_aux's aux, known as the structure the function returns it in (a dict, a tuple), so that
        ``aux["pred"]`` picks from it: read from the function normalized at these arguments."""
        names = list(inspect.signature(fn.__transformer_fn__).parameters)
        own = normalize(fn.__transformer_fn__, None, {names[i]: t for i, t in structured.items() if i < len(names)})
        result = own.result_structure
        treedef = result.children[1] if result is not None and len(result.children) == 2 else None
        if treedef is None or treedef.kind == "leaf":
            return aux
        held = self.held(aux, fresh=True)
        self.core.structures[held.value] = treedef
        return held

    def picked_all(self, returned, count: int) -> list:
        """The ``count`` entries of a tuple generated code returns, as atoms."""
        if isinstance(returned, cst.Tuple):
            return [el.value for el in returned.elements]
        if count == 1:
            return [returned]
        return [self.picked(returned, k, _LEAF) for k in range(count)]

    def rebuilt(self, treedef, flat):
        if treedef.kind == "leaf":
            return next(flat)
        built = self.temp()
        self.assign(built, cf.tuple_of([self.rebuilt(child, flat) for child in treedef.children]))
        self.core.structures[built] = treedef
        return cst.Name(built)

    def custom_vjp_call(self, node: cst.Call, fn: custom_vjp):
        """``y = f(x)`` for a custom_vjp ``f``: inline its forward rule, and mark the
        output with ``rt.custom_vjp_call`` so reverse mode applies the user's backward rule."""
        if fn.fwd is None or fn.fwd.__code__ in self.stack:
            # no rule yet, or f(x) called by f's own forward rule (as JAX's examples write it): plain f
            return self.inline(node, fn.fun, discard=False)
        callee = source.load(fn.fwd)
        fence.check(callee)
        bound = self.bind_arguments(node, fn.fwd, callee)
        pair = self.inline_bound(callee, bound)
        if pair is None:
            raise self.error(node, f"the forward rule {fn.fwd.__name__}() must return (output, residuals)")
        if isinstance(pair, cst.Tuple) and len(pair.elements) == 2:
            out, residuals = (el.value for el in pair.elements)
        else:
            out, residuals = cst.Name(self.temp()), cst.Name(self.temp())
            self.assign(out.value, cst.Subscript(pair, [cst.SubscriptElement(cst.Index(cf.literal(0)))]))
            self.assign(residuals.value, cst.Subscript(pair, [cst.SubscriptElement(cst.Index(cf.literal(1)))]))
        backward = fn.bwd
        if getattr(fn, "checkpointed", False) and isinstance(out, cst.Tuple):   # tr.checkpoint of a tuple output
            backward = fn.backward_for(len(out.elements))
        rule = self.scope.claim(f"{backward.__name__}")
        self.core.functions[rule] = backward
        inputs = cf.tuple_of([bound[p.name.value] for p in callee.node.params.params])
        return cf.call(custom.VJP_CALL, [out, inputs, residuals, cf.literal(rule)])

    def custom_jvp_call(self, node: cst.Call, fn: custom_jvp):
        """``y = f(x)`` for a custom_jvp ``f``: inline its body, and mark the output
        with ``rt.custom_jvp_call`` so forward mode applies the user's jvp rule."""
        if fn.jvp is None or fn.fun.__code__ in self.stack:   # no rule yet, or recursion (inline reports it)
            return self.inline(node, fn.fun, discard=False)
        callee = source.load(fn.fun)
        fence.check(callee)
        bound = self.bind_arguments(node, fn.fun, callee)
        out = self.inline_bound(callee, bound)
        if out is None:
            raise self.error(node, f"{fn.fun.__name__}() returns nothing, but a custom_jvp function must return its output")
        rule = self.scope.claim(f"{fn.jvp.__name__}")
        self.core.functions[rule] = fn.jvp
        inputs = cf.tuple_of([bound[p.name.value] for p in callee.node.params.params])
        return cf.call(custom.JVP_CALL, [out, inputs, cf.literal(rule)])

    def bind_arguments(self, node: cst.Call, fn, callee, supplied=None) -> dict:
        """Parameter name -> atom, for a call of user function ``fn``.  ``supplied``: atoms (or
        functions) for parameters the call may leave out, in place of ``fn``'s defaults (a def
        written in the code: its defaults, and the enclosing variables it reads, which it takes as
        parameters the call never names)."""
        supplied = supplied or {}
        enclosed = getattr(fn, "__transformer_enclosed__", ())
        params = callee.node.params
        names = [p.name.value for p in params.params]
        keyword_names = names + [p.name.value for p in params.kwonly_params if p.name.value not in enclosed]
        bound: dict[str, cst.BaseExpression] = {}
        positional = [a for a in node.args if a.keyword is None]
        if len(positional) > len(names):
            count = f"{len(names)} positional argument{'' if len(names) == 1 else 's'}"
            raise self.error(node, f"{_called_name(fn)}() takes {count} but got {len(positional)}")
        for pname, arg in zip(names, positional):
            bound[pname] = self.argument(arg.value)
        for arg in node.args:
            if arg.keyword is not None:
                key = arg.keyword.value
                if key not in keyword_names:
                    raise self.error(arg, f"{_called_name(fn)}() has no parameter {key!r}")
                bound[key] = self.argument(arg.value)
        defaults = dict(zip(names[len(names) - len(fn.__defaults__ or ()):], fn.__defaults__ or ()))
        defaults.update(fn.__kwdefaults__ or {})
        for pname in keyword_names + list(enclosed):
            if pname not in bound and pname in supplied:
                bound[pname] = supplied[pname]
            elif pname not in bound:
                if pname not in defaults:
                    raise self.error(node, f"{_called_name(fn)}() is missing the argument {pname!r}")
                value = defaults[pname]
                passed = _passed(resolve.classify(value, f"{fn.__name__}'s {pname}")) if callable(value) else None
                if passed is not None:
                    bound[pname] = passed       # def helper(x, act=np.tanh) or act=lambda v: ...
                elif _literal_default(value):
                    bound[pname] = cf.literal(value)
                else:
                    try:
                        bound[pname] = cst.Name(self.bind_constant(f"{fn.__name__}_{pname}", value))
                    except TransformError as err:
                        raise self.error(node, f"{_called_name(fn)}()'s default for {pname!r}: {err.bare_message}",
                                         "pass it in the call") from None
        return bound

    def inline_local_def(self, node: cst.Call, held: LocalDef):
        """A call of a def written in the code: its body inlined here, reading the enclosing
        variables as its home holds them now (Python's late binding)."""
        fn = held.fn
        if fn.__code__ in self.stack:
            cycle = " -> ".join(c.co_name for c in self.stack + (fn.__code__,))
            raise self.error(node, f"recursion ({cycle}) cannot be transformed", "write it as a loop")
        enclosing = {}
        for name in fn.__transformer_enclosed__:
            now = held.home.held_now(name)
            if now is None:
                raise self.error(node, f"{fn.__name__}() reads {name!r} of the function around it, which "
                                       f"has no value where it is called", f"bind {name} before calling {fn.__name__}")
            enclosing[name] = now
        callee = source.load(fn)
        fence.check(callee, helper=True)
        bound = self.bind_arguments(node, fn, callee, {**held.defaults, **enclosing})
        result = self.inline_bound(callee, bound)
        if result is None:
            return cst.Name("None")
        return result

    def held_now(self, user_name: str):
        """What ``user_name`` holds here now (a function or an atom), for a def written here that
        reads it; None if it is bound nowhere here."""
        if user_name in self.lambdas:
            return self.lambdas[user_name]
        if user_name in self.substitute:
            return self.substitute[user_name]
        if user_name in self.rename:
            return cst.Name(self.rename[user_name])
        return None

    def inline_bound(self, callee: source.UserFunction, bound: dict):
        """Emit the body of ``callee`` with its parameters bound to atoms; return its result atom."""
        fn = callee.fn
        body, added = callee.node.body.body, set()
        if early_returns.needs_single_exit(callee.node):    # if x > 1.0: return 1.0 ... return x
            body, added = early_returns.single_exit(callee)
        ends_in_return = bool(body) and isinstance(body[-1], cst.SimpleStatementLine) and \
            isinstance(body[-1].body[-1], cst.Return)
        last_return = body[-1].body[-1] if ends_in_return else None
        rebound = callee.local_names - _param_only_names(callee.node)
        rename: dict = {}
        prefix = fn.__name__.strip("_")
        child = _Normalizer(callee, self.core, rename, self.stack + (fn.__code__,), comments=self.comments)
        child.locals = child.locals | added     # the result and flag of a single exit
        child.lists = self.lists      # a helper's [a, b] returned here is a list
        for pname, atom in bound.items():
            if isinstance(atom, _FUNCTIONS):   # apply(lambda v: 2 * v, x): called by name
                child.lambdas[pname] = atom
            elif pname in rebound:
                copy = self.scope.claim(f"{prefix}_{pname}")
                self.assign(copy, atom)
                rename[pname] = copy
            else:   # never reassigned: use the caller's atom itself (writes into it alias, as in Python)
                child.substitute[pname] = atom
        for user_name in child.locals:
            if user_name not in rename and user_name not in child.substitute:
                rename[user_name] = self.scope.claim(f"{prefix}_{user_name}")
        pending = self.comment
        # the helper's body runs as it is called (not a run-time block): what it binds, such as the
        # function tr.vjp returns, is still bound for its return line
        inner = child.block(body[:-1] if ends_in_return else body, top_level=True, run_time=False)
        result = None
        if last_return is not None and last_return.value is not None:
            child.comment = child.origin(body[-1])
            saved, child.out = child.out, []
            result = child.operand(last_return.value)
            if isinstance(result, _FUNCTIONS):
                # a closure (make_step(0.1) returning lambda x: x - 0.1 * x): the values it reads are
                # the helper's as it returns, whatever the caller rebinds later
                for name, atom in list(child.substitute.items()):
                    child.substitute[name] = child.snapshot(atom)
            inner += child.out
            child.out = saved
        if pending and inner:
            inner[0] = inner[0].with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(pending)),
                                                            *inner[0].leading_lines])
            self.comment = None
        self.out.extend(inner)
        if self.comments and any(_has_comment(stmt) for stmt in inner[1:] or inner):
            # the rest of the caller's line is labelled with the caller's line again
            self.comment = self.current_origin
        return result


def apply_template(core: CoreFunction, template, bound: dict) -> tuple[list, cst.BaseExpression | None]:
    """Inline the rule ``template`` (a function in ``templates/``) with its
    parameters bound to atoms; return its core-form statements and result atom.

    Template lines carry no origin comments: the transform applying the rule
    writes its own (``# vjp of: ...``).
    """
    callee = source.load(template)
    fence.check(callee)
    host = _Normalizer(callee, core, {}, stack=(template.__code__,), comments=False)
    host.locals = set()
    missing = [p.name.value for p in callee.node.params.params if p.name.value not in bound]
    defaults = dict(zip([p.name.value for p in callee.node.params.params][-len(template.__defaults__ or ()):],
                        template.__defaults__ or ()))
    for name in missing:
        if name not in defaults:
            raise TypeError(f"template {template.__name__} needs {name!r}")
        bound[name] = cf.literal(defaults[name])
    result = host.inline_bound(callee, bound)
    return host.out, result


_AUG_TO_BINARY = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power, cst.MatrixMultiplyAssign: cst.MatrixMultiply,
    cst.BitAndAssign: cst.BitAnd, cst.BitOrAssign: cst.BitOr, cst.BitXorAssign: cst.BitXor,
}


def _pair(norm, target):
    if not isinstance(target, cst.Tuple) or len(target.elements) != 2 or \
            not isinstance(target.elements[0].value, cst.Name):
        raise norm.error(target, "enumerate() unpacks into two names: for i, value in enumerate(x)")
    return target.elements[0].value, target.elements[1].value


class _NameCollector(cst.CSTVisitor):
    def __init__(self):
        self.names: set[str] = set()

    def visit_Name(self, node):
        self.names.add(node.value)

    def visit_Attribute(self, node):
        node.value.visit(self)
        return False          # np.sin: 'sin' is no variable






def _captured_unbatched(made, count: int):
    """A transformed lambda with vmap's in_axes None for the ``count`` variables it reads from the
    code around it (parameters after its own, see transformed_lambda): they are the same for every
    example, as a closure's values are in JAX."""
    from .staging import Step
    from .transformed import Transformed
    steps = tuple(Step(step.name, tuple((key, value + (None,) * count if key == "in_axes" else value)
                                        for key, value in step.options)) if step.name in ("vmap", "pmap") else step
                  for step in getattr(made, "steps", ()))
    return made if steps == getattr(made, "steps", ()) else \
        Transformed(made.__transformer_fn__, steps, made.target, made.static_argnums, made.boundaries, made.tiered)


def _nested_codes(code):
    """The code objects defined inside ``code``, at any depth."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _nested_codes(const)


def _tree_maps() -> tuple:
    from . import tree, tree_util
    return (tree.map, tree_util.tree_map)


_TREE_MAPS = _tree_maps()


def _tree_leaves() -> tuple:
    from . import tree, tree_util
    return (tree.leaves, tree_util.tree_leaves)


_TREE_LEAVES = _tree_leaves()


def _is_number_literal(node) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def _identifier_part(key: str) -> str:
    """A dict key as part of a Python name (``"learning-rate"`` -> ``learning_rate``)."""
    part = re.sub(r"\W", "_", key)
    return part if part[:1].isalpha() else f"k{part}"


def _is_tuple_of_arrays(value) -> bool:
    """A global holding a tuple with arrays in it: read as a structure, entry by entry."""
    return isinstance(value, tuple) and any(isinstance(leaf, np.ndarray) for leaf in tree.leaves(value))


def _is_negative_literal(node) -> bool:
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
        and isinstance(node.expression, cst.Integer)


def _called_name(fn) -> str:
    """How the user called ``fn``: ``np.roll`` for a definition, else its own name."""
    return primitives.definition_name(fn) or fn.__name__


def _variant_for(node: cst.Call, fn):
    """The variant of a definition for the arguments a call gives (primitives.define's when_given)."""
    variants = getattr(fn, "when_given", None)
    if not variants:
        return fn
    names = list(inspect.signature(fn).parameters)
    positional = [arg.value for arg in node.args if arg.keyword is None]
    for keyword, variant in variants.items():
        given = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == keyword),
                     None)
        if given is None and names.index(keyword) < len(positional):
            given = positional[names.index(keyword)]
        if given is not None and not (isinstance(given, cst.Name) and given.value == "None"):
            return variant
    return fn


def _passed(r: resolve.Resolved):
    """A PassedFunction for a user function or a primitive (a custom_vjp/jvp one is called, never
    passed), else None."""
    if r.kind in ("user", "primitive") and not isinstance(r.value, (custom_vjp, custom_jvp)):
        return PassedFunction(r)
    return None


def _literal_defaults(normalizer, node: cst.Lambda) -> tuple | None:
    """The defaults of a lambda given to a transform (``tr.grad(lambda q, s=2.0: ...)``), which
    must be literals: its transformed code is made once, apart from the code around it."""
    params = node.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.star_kwarg \
            or params.posonly_params:
        raise normalizer.error(node, "a lambda with *, keyword-only, / or ** parameters, given to a transform",
                               "give it plain parameters")
    defaults = []
    for param in params.params:
        if param.default is None:
            continue
        try:
            defaults.append(ast.literal_eval(cf.code_of(param.default)))
        except (ValueError, SyntaxError):
            raise normalizer.error(param.default, "a lambda given to a transform, with a default that is not "
                                                  "a literal", "pass the value as an argument") from None
    return tuple(defaults) or None


def _literal_default(value) -> bool:
    """A default the call site can spell as a literal (``axes=(0, 1)`` stays a tuple of ints)."""
    if isinstance(value, tuple):
        return all(_literal_default(v) for v in value)
    return isinstance(value, (bool, int, float, str, type(None)))


def _is_bool_literal(node) -> bool:
    return isinstance(node, cst.Name) and node.value in ("True", "False")


def _literal_kind(node) -> str | None:
    """'None' or 'value' for a literal atom (None, a number, a string, True/False, a tuple of them),
    None for anything known only at run time."""
    if isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
        return "None" if node.value == "None" else "value"
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return "value"
    if isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Integer, cst.Float)):
        return "value"
    if isinstance(node, cst.Tuple) and all(_literal_kind(e.value) == "value" for e in node.elements):
        return "value"
    return None


_LITERAL_COMPARISONS = {cst.Equal: operator.eq, cst.NotEqual: operator.ne, cst.LessThan: operator.lt,
                        cst.LessThanEqual: operator.le, cst.GreaterThan: operator.gt,
                        cst.GreaterThanEqual: operator.ge}


def _literal_comparison(left, op, right) -> bool | None:
    """The value of a comparison of two literals (``"full" == "same"``, ``1 < 2``), else None."""
    compare = _LITERAL_COMPARISONS.get(type(op))
    if compare is None or _literal_kind(left) != "value" or _literal_kind(right) != "value":
        return None
    try:
        return bool(compare(ast.literal_eval(_code(left)), ast.literal_eval(_code(right))))
    except (ValueError, TypeError, SyntaxError):
        return None


def _code(node) -> str:
    return cst.Module([]).code_for_node(node)


def _literal_int(node) -> int | None:
    if node is None:
        return None
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
            and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value)
    return None


_NO_KEY = object()


def _field_order(node_type: type) -> list:
    """A named tuple's or a dataclass's fields in the order its constructor takes them."""
    if hasattr(node_type, "_fields"):
        return list(node_type._fields)
    return [f.name for f in dataclasses.fields(node_type) if f.init]


def _field_defaults(node_type: type) -> dict:
    if hasattr(node_type, "_field_defaults"):
        return dict(node_type._field_defaults)
    return {f.name: f.default for f in dataclasses.fields(node_type) if f.default is not dataclasses.MISSING}


def _literal_key(node):
    """The value of a literal key (a string, a number), or _NO_KEY."""
    try:
        return ast.literal_eval(cst.Module([]).code_for_node(node))
    except (ValueError, SyntaxError):
        return _NO_KEY


def _tuple_element(receiver: cst.Tuple, node: cst.Subscript):
    """The element (or a tuple of the elements) that ``(a, b, c)[1]`` or ``[1:]``
    picks, when the index is written as integers; None otherwise."""
    if len(node.slice) != 1:
        return None
    atoms = [el.value for el in receiver.elements]
    item = node.slice[0].slice
    if isinstance(item, cst.Index):
        i = _literal_int(item.value)
        return atoms[i] if i is not None and -len(atoms) <= i < len(atoms) else None
    bounds = [item.lower, item.upper, item.step]
    values = [_literal_int(b) for b in bounds]
    if any(b is not None and v is None for b, v in zip(bounds, values)) or values[2] == 0:
        return None
    return cf.tuple_of(atoms[slice(*values)])


def _names_in(func: cst.FunctionDef) -> set[str]:
    """The variables of a core-form function (not the modules and builtins it calls)."""
    collector = _NameCollector()
    func.params.visit(collector)
    func.body.visit(collector)
    return collector.names - RESERVED   # the generated module's own names and builtins



    def leave_Arg(self, original, updated):
        # keyword names (axis=...) are no variables
        return updated.with_changes(keyword=original.keyword)


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _has_comment(stmt) -> bool:
    return any(line.comment is not None for line in getattr(stmt, "leading_lines", ()))


def _param_only_names(func: cst.FunctionDef) -> set[str]:
    """Parameters that the body never assigns to (they can alias the caller's atom)."""
    params = {p.name.value for p in func.params.params} | {p.name.value for p in func.params.kwonly_params}
    assigned = resolve.local_names(func.with_changes(params=cst.Parameters()))
    return params - assigned

