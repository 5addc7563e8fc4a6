"""Pytree arguments: specialise core form on the structure of its arguments.

Numba compiles neither dicts nor nested lists, and transforms reason better
about plain arrays.  So, as JAX does when it traces, a function called with
``params = {"W": ..., "b": ...}`` is specialised for that structure: the
parameter becomes one parameter per leaf (``params_W, params_b``) and each
``params["W"]`` with a literal key becomes that leaf.  A loop over a list of
structured items (``for layer in params["layers"]``) is unrolled, since the
list's length is part of the structure.  Anything else done with a whole
structure is refused with the user's line.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import libcst as cst

from . import core_form as cf
from . import dataflow
from .core_form import CoreFunction
from .errors import TransformError
from .tree import LEAF, TreeDef


def leaf_paths(treedef: TreeDef, prefix=()):
    """(path, leaf) pairs in flatten order."""
    if treedef.kind == "leaf":
        yield prefix, treedef
        return
    for key, child in zip(_path_keys(treedef), treedef.children):
        yield from leaf_paths(child, prefix + (key,))


def _path_keys(treedef: TreeDef):
    """How a path names each child: a dict's key, a named tuple's or a node's attribute (so the leaf
    parameter of ``params.W`` is ``params_W``), else its position."""
    if treedef.kind in ("dict", "namedtuple", "node") and treedef.keys:
        return treedef.keys
    return range(len(treedef.children))


def _leaf_name(param: str, path) -> str:
    parts = [param] + [re.sub(r"\W", "_", str(p)) for p in path]
    return "_".join(parts)


class _Node:
    """A structured value during rewriting: its treedef and its leaves' names."""

    def __init__(self, treedef: TreeDef, leaves: dict):
        self.treedef = treedef
        self.leaves = leaves          # path tuple -> leaf variable name

    def child(self, key):
        t = self.treedef
        if t.kind == "dict" and not isinstance(key, int) and key in t.keys:
            # a dict's key: normalize reads those of a structure it knows as positions, but a dict
            # reached here first (an element of a list a loop unrolls over) is read by its key
            key = t.keys.index(key)
        if t.kind in ("tuple", "list", "namedtuple", "node", "dict"):   # by position
            if not isinstance(key, int):
                raise KeyError(key)
            position = key if key >= 0 else len(t.children) + key
            if not 0 <= position < len(t.children):
                raise KeyError(key)
            key = list(_path_keys(t))[position]
        else:
            raise KeyError(key)
        sub = t.children[position]
        leaves = {path[1:]: name for path, name in self.leaves.items() if path[:1] == (key,)}
        return sub, leaves

    def __len__(self):
        return len(self.treedef.children)

    def part(self, which: slice):
        """The structure of ``node[which]`` (a list or tuple sliced), or None for a dict."""
        t = self.treedef
        if t.kind not in ("tuple", "list"):
            return None
        positions = range(len(t.children))[which]
        sub = TreeDef(t.kind, tuple(t.children[p] for p in positions))
        leaves = {(k, *path[1:]): name for k, p in enumerate(positions)
                  for path, name in self.leaves.items() if path[:1] == (p,)}
        return _Node(sub, leaves)


def flatten_parameters(core: CoreFunction, structures: dict) -> CoreFunction:
    """Replace each structured parameter by its leaves (see the module docstring)."""
    if not structures:
        return core
    env: dict[str, _Node] = {}
    new_params = []
    carried = _bound_in_loops(core.node.body.body)
    prologue: list = []
    for param in core.node.params.params:
        name = param.name.value
        treedef = structures.get(name)
        if treedef is None or treedef.kind == "leaf":
            new_params.append(param)
            continue
        leaves = {}
        for path, _ in leaf_paths(treedef):
            leaves[path] = core.scope.claim(_leaf_name(name, path))
            new_params.append(cst.Param(cst.Name(leaves[path])))
        if name in carried:
            # rebound in a loop (its carry): a tuple of its leaves from the start, so that a read early
            # in a pass sees what the pass before bound (normalize reads a structure it knows by position)
            built = _Rewriter(core, {}).materialized(None, _Node(treedef, leaves), prologue)
            prologue.append(cf.assign(name, built))
        else:
            env[name] = _Node(treedef, leaves)
    core.node = core.node.with_changes(body=cf.block(prologue + list(core.node.body.body)))
    rewriter = _Rewriter(core, env)
    body = rewriter.block(list(core.node.body.body))
    core.node = core.node.with_changes(params=core.node.params.with_changes(params=new_params),
                                       body=cf.block(body))
    return core


def _bound_in_loops(stmts, inside=False) -> set[str]:
    """The names assigned inside a loop's body."""
    found: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            if inside:
                a = dataflow.classify(stmt)
                if a.kind == "assign" and a.target:
                    found.add(a.target)
            continue
        in_loop = inside or isinstance(stmt, (cst.For, cst.While))
        for inner in cf.blocks(stmt):
            found |= _bound_in_loops(inner, in_loop)
    return found


def _literal_key(node):
    try:
        return ast.literal_eval(cst.Module([]).code_for_node(node))
    except (ValueError, SyntaxError):
        return None


class _Rewriter:
    def __init__(self, core, env):
        self.core = core
        self.env = env
        self.lengths: dict[str, int] = {}     # name -> literal length from len(structure)
        self.renames: dict[str, str] = {}     # a name bound once to a leaf -> that leaf
        self.counts = dataflow.write_counts(core.node)

    def where(self, stmt) -> str:
        origin = cf.origin_of(stmt)
        return f"{origin[0]}:{origin[1]}: " if origin else ""

    def refuse(self, stmt, name, what):
        raise TransformError(f"{self.where(stmt)}the argument structure {name!r} is {what}; "
                             f"index it with literal keys (x['W'], x[0]) or loop over it with range(len(x))")

    def block(self, stmts) -> list:
        out = []
        comment_carry = None
        for stmt in stmts:
            produced = self.statement(stmt)
            if comment_carry is not None and produced:
                produced[0] = produced[0].with_changes(leading_lines=[*comment_carry, *produced[0].leading_lines])
                comment_carry = None
            if not produced and getattr(stmt, "leading_lines", None):
                comment_carry = list(stmt.leading_lines)
            out += produced
        return out

    def statement(self, stmt) -> list:
        if isinstance(stmt, cst.SimpleStatementLine):
            if self.renames:
                stmt = _rename_reads(stmt, self.renames)
            return self.simple(stmt)
        if isinstance(stmt, cst.For):
            unrolled = self.unroll(stmt)
            if unrolled is not None:
                return unrolled
            return [cf.map_blocks(stmt, self.block)]
        if isinstance(stmt, (cst.While, cst.If)):
            self.check_reads(stmt, dataflow.atom_names(stmt.test))
            return [cf.map_blocks(stmt, self.block)]
        return [stmt]

    def bind(self, stmt, target: str, node: _Node) -> list:
        """``target = <a structure>``: a name for the structure, when ``target`` is written only
        here; otherwise (a loop's carry, rebound each pass) a tuple built of the leaves at run time,
        since a read of it in a loop may see a later value than this one."""
        if self.counts.count.get(target) == 1:
            self.env[target] = node
            return []
        out: list = []
        built = self.materialized(stmt, node, out)
        return out + [cf.assign(target, built).with_changes(leading_lines=stmt.leading_lines)]

    def materialized(self, stmt, node: _Node, out: list):
        if node.treedef.kind == "leaf":
            return cst.Name(node.leaves[()])
        if node.treedef.kind not in ("tuple", "list", "dict", "namedtuple", "node"):
            raise TransformError(f"{self.where(stmt)}a {node.treedef.kind} argument structure rebound in the "
                                 f"function (a loop's carry) is not supported; carry a tuple or a list")
        # a dict's children in the order of its sorted keys, a named tuple's and a node's in their
        # fields' order: the positions normalize reads them at
        parts = []
        for position in range(len(node)):
            sub, leaves = node.child(position)
            part = self.materialized(stmt, _Node(sub, leaves), out)
            if not isinstance(part, cst.Name):
                name = self.core.scope.temp()
                out.append(cf.assign(name, part))
                part = cst.Name(name)
            parts.append(part)
        return cf.tuple_of(parts)

    def literal_slice(self, stmt, name, part: cst.Slice) -> slice:
        """The slice ``part`` of the structure ``name`` as a Python slice: its bounds are ints in the
        code or lengths of structures, since the part taken is decided when the function is specialised."""
        bounds = []
        for atom in (part.lower, part.upper, part.step):
            if atom is None:
                bounds.append(None)
                continue
            value = self.lengths.get(atom.value) if isinstance(atom, cst.Name) else _literal_key(atom)
            if not isinstance(value, int):
                self.refuse(stmt, name, "sliced with a bound known only at run time")
            bounds.append(value)
        return slice(*bounds)

    def check_reads(self, stmt, names):
        for name in names:
            if name in self.env:
                self.refuse(stmt, name, "used as a whole here")

    def simple(self, stmt) -> list:
        a = dataflow.classify(stmt)
        if a.kind == "assign" and a.target in self.env:
            del self.env[a.target]     # the name now holds something else
        if a.kind == "assign" and isinstance(a.value, cst.Subscript) and isinstance(a.value.value, cst.Name) \
                and a.value.value.value in self.env:
            node = self.env[a.value.value.value]
            if len(a.value.slice) == 1 and isinstance(a.value.slice[0].slice, cst.Slice):
                part = node.part(self.literal_slice(stmt, a.value.value.value, a.value.slice[0].slice))
                if part is None:
                    self.refuse(stmt, a.value.value.value, "sliced, and only a list or tuple can be")
                return self.bind(stmt, a.target, part)
            if len(a.value.slice) != 1 or not isinstance(a.value.slice[0].slice, cst.Index):
                self.refuse(stmt, a.value.value.value, "indexed with several subscripts")
            key = _literal_key(a.value.slice[0].slice.value)
            if key is None:
                self.refuse(stmt, a.value.value.value, "indexed with a value known only at run time")
            try:
                sub, leaves = node.child(key)
            except KeyError:
                raise TransformError(f"{self.where(stmt)}the argument structure has no entry {key!r} "
                                     f"(it is {node.treedef})") from None
            if sub.kind == "leaf" and self.counts.count.get(a.target) == 1:
                self.renames[a.target] = leaves[()]     # read the leaf parameter directly
                return []
            if sub.kind == "leaf":
                return [cf.assign(a.target, cst.Name(leaves[()])).with_changes(leading_lines=stmt.leading_lines)]
            return self.bind(stmt, a.target, _Node(sub, leaves))
        if a.kind == "assign" and isinstance(a.value, cst.Name) and a.value.value in self.env:
            return self.bind(stmt, a.target, self.env[a.value.value])
        if a.kind == "assign" and _is_python_len(a.value) and \
                isinstance(a.value.args[0].value, cst.Name) and a.value.args[0].value.value in self.env:
            n = len(self.env[a.value.args[0].value.value])
            self.lengths[a.target] = n
            return [cf.assign(a.target, cf.literal(n)).with_changes(leading_lines=stmt.leading_lines)]
        self.check_reads(stmt, dataflow.reads(a))
        return [stmt]

    def unroll(self, loop: cst.For) -> list | None:
        """Unroll ``for i in range(n)`` when the body indexes a structure with ``i``."""
        index = loop.target.value
        uses = [a for a in dataflow.walk(loop.body.body) if a.kind == "assign"
                and isinstance(a.value, cst.Subscript) and isinstance(a.value.value, cst.Name)
                and a.value.value.value in self.env and index in dataflow.index_names(a.value)]
        if not uses:
            return None
        args = [arg.value for arg in loop.iter.args]
        bounds = []
        for atom in args:
            value = _literal_key(atom) if not isinstance(atom, cst.Name) else self.lengths.get(atom.value)
            if not isinstance(value, int):
                raise TransformError(f"{self.where(loop)}a loop that indexes an argument structure needs "
                                     f"bounds known from the structure, e.g. range(len(layers))")
            bounds.append(value)
        out = []
        for i in range(*bounds):
            body = [stmt.visit(_Substitute(index, cf.literal(i))) for stmt in loop.body.body]
            for stmt in body:
                if any(isinstance(s.small, (cst.Break, cst.Continue)) for s in dataflow.walk([stmt])):
                    raise TransformError(f"{self.where(loop)}break/continue in a loop over an argument "
                                         f"structure is not supported")
            out.append(cf.assign(index, cf.literal(i)))
            out += self.block(body)
        if out:
            out[0] = out[0].with_changes(leading_lines=loop.leading_lines)
        return out


class _RenameReads(cst.CSTTransformer):
    def __init__(self, renames):
        self.renames = renames

    def leave_Name(self, original, updated):
        new = self.renames.get(updated.value)
        return cst.Name(new) if new else updated

    def leave_AssignTarget(self, original, updated):
        # the written name stays as it is (a subscript target's array is a read)
        if isinstance(original.target, cst.Name):
            return updated.with_changes(target=original.target)
        return updated


def _rename_reads(stmt, renames):
    return stmt.visit(_RenameReads(renames))


class _Substitute(cst.CSTTransformer):
    def __init__(self, name, atom):
        self.name, self.atom = name, atom

    def leave_Name(self, original, updated):
        return self.atom if updated.value == self.name else updated


# ------------------------------------------------------------- step options
@dataclass(frozen=True)
class ParamLayout:
    """How the user's parameters became leaf parameters."""

    leaves: list          # per user parameter: the indices of its leaf parameters
    structured: set       # indices of the user parameters that are structures
    treedefs: list        # per user parameter: its TreeDef (LEAF for a plain one)


def param_layout(params: list[str], structures: dict) -> ParamLayout:
    leaves, position = [], 0
    treedefs = [structures.get(name, LEAF) for name in params]
    for treedef in treedefs:
        leaves.append(list(range(position, position + treedef.num_leaves)))
        position += treedef.num_leaves
    structured = {i for i, t in enumerate(treedefs) if t.kind != "leaf"}
    return ParamLayout(leaves, structured, treedefs)


def _adapt_argnums(options: dict, layout: ParamLayout) -> dict:
    argnums = options.get("argnums", 0)
    if isinstance(argnums, int):
        leaves = layout.leaves[argnums]
        options["argnums"] = tuple(leaves) if argnums in layout.structured else leaves[0]
    else:
        options["argnums"] = tuple(i for a in argnums for i in layout.leaves[a])
    return options


# step name -> function(options dict, ParamLayout) -> options speaking of leaf parameters
STEP_ADAPTERS = {"grad": _adapt_argnums, "value_and_grad": _adapt_argnums}
# Steps whose generated function takes the same arguments as the function they wrap: the
# options of the step after one still speak of the user's parameters.
KEEP_ARGUMENTS = {"grad", "value_and_grad", "vmap", "pmap"}


def adapt_steps(steps, params: list[str], structures: dict):
    """Rewrite the options of the steps that speak of the user's parameters for the leaves: the
    first step, and each one after steps that keep the user's arguments."""
    if not steps or not structures:
        return steps
    layout = param_layout(params, structures)
    adapted = []
    for i, step in enumerate(steps):
        adapter = STEP_ADAPTERS.get(step.name)
        if adapter is not None:
            step = type(step)(step.name, tuple(sorted(adapter(dict(step.options), layout).items())))
        adapted.append(step)
        if step.name not in KEEP_ARGUMENTS:
            return (*adapted, *steps[i + 1:])
    return tuple(adapted)


def _is_python_len(value) -> bool:
    """``len(x)``: of a structure, its length is known when the function is specialised."""
    prim = cf.primitive_of(value) if isinstance(value, cst.Call) else None
    return prim is not None and prim.impl is len
