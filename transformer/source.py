"""Frontend: find a function's source, parse it with libcst, and know its names.

``load(fn)`` returns a ``UserFunction``: the function's ``def`` as a libcst
node (decorators stripped; a lambda rewritten as a ``def``; a body written on
its header's line, ``for i in r: s += x[i]``, made an indented block; type
annotations dropped), where each node sits in the user's file, and the
namespace (globals, closure cells, builtins) its names resolve through.
"""
from __future__ import annotations

import ast
import builtins
import functools
import inspect
import linecache
import os
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from . import resolve, walk
from .errors import Location, NoSourceError, TransformError


@dataclass
class UserFunction:
    fn: types.FunctionType
    name: str
    filename: str
    node: cst.FunctionDef
    parsed: "ParsedSource"              # where each node sits in the user's file
    globals: dict
    closure: dict
    lambda_: bool = False

    @property
    def short_filename(self) -> str:
        return os.path.basename(self.filename)

    def location(self, node: cst.CSTNode) -> Location:
        line, col = self.parsed.positions().get(node, (self.first_line, 0))
        return Location(self.filename, line, col)

    def line(self, node: cst.CSTNode) -> int:
        """The user's line of ``node``: what ``location(node).line`` says, cheaply for a statement."""
        line = self.parsed.statement_lines.get(node)
        return line if line is not None else self.location(node).line

    @functools.cached_property
    def local_names(self) -> frozenset:
        """The function's parameters and the names it assigns (see ``resolve.local_names``)."""
        return frozenset(resolve.local_names(self.node))

    @property
    def first_line(self) -> int:
        return self.fn.__code__.co_firstlineno

    def lookup(self, name: str) -> tuple[bool, Any]:
        """(found, value) for a free name: closure cells first, then globals, then builtins."""
        if name in self.closure:
            return True, self.closure[name]
        if name in self.globals:
            return True, self.globals[name]
        if hasattr(builtins, name):
            return True, getattr(builtins, name)
        return False, None


def _closure_values(fn: types.FunctionType) -> dict:
    values = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            values[name] = cell.cell_contents
        except ValueError:  # cell not yet filled (a helper defined later in the enclosing scope)
            pass
    return values


def unwrap(fn):
    """The plain Python function behind a decorator wrapper or bound method."""
    if isinstance(fn, types.MethodType):
        raise TransformError(f"{fn.__qualname__} is a bound method; transform the plain function "
                             f"and pass the object's arrays as arguments")
    if hasattr(fn, "transform_refusal"):        # a function transformer computes in Python (jacfwd's)
        raise TransformError(fn.transform_refusal)
    while not isinstance(fn, types.FunctionType):
        if hasattr(fn, "__transformer_fn__"):    # a transformed function: read the user's function
            fn = fn.__transformer_fn__
        elif hasattr(fn, "__wrapped__"):         # a functools.wraps decorator
            fn = fn.__wrapped__
        else:
            break
    if not isinstance(fn, types.FunctionType):
        raise TransformError(f"cannot transform {fn!r}: it is not a Python function")
    return fn


@dataclass
class ParsedSource:
    """One parse of a function's source, and where its nodes sit in the user's file.

    Every node's line and column come from libcst's PositionProvider, which
    generates the code again to count (a millisecond or more a function), so
    they are found when first asked, for an error message.  The line of each
    statement, which every transform needs for its comments, comes from
    Python's own parser instead (``_statement_lines``).
    """
    module: cst.Module
    node: cst.FunctionDef               # the def, decorators stripped
    parsed_def: cst.FunctionDef         # the def as parsed: its position is the stripped one's
    first: int                          # the user's line number of the parsed text's first line
    indent: int                         # columns that dedenting the text took away
    statement_lines: dict               # statement node -> its line in the user's file
    rebuilt: dict = field(default_factory=dict)   # node of ``node`` made anew -> the parsed node it stands for
    nested_defs: dict = field(default_factory=dict)   # a def inside ``node``: its stand-in's marker -> the def
    derived: dict = field(default_factory=dict)   # what is made from this parse once (early_returns')
    _positions: dict | None = None

    def stand_in(self, made, original) -> None:
        """Note ``made``, a node made anew from this parse, as standing for ``original`` in it: its
        line and column, in comments and errors, are ``original``'s."""
        line = self.statement_lines.get(original)
        if line is not None:
            self.statement_lines[made] = line
        original = self.rebuilt.get(original, original)
        self.rebuilt[made] = original
        if self._positions is not None:
            self._positions[made] = self._positions.get(original, (0, 0))

    def positions(self) -> dict:
        """node -> (line, col) in the user's file."""
        if self._positions is None:
            # no defensive deep copy: the metadata keys must be the nodes we hold
            found = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
            positions = {node: (rng.start.line + self.first - 1, rng.start.column + self.indent + 1)
                         for node, rng in found.items()}
            if self.node is not self.parsed_def:
                positions[self.node] = positions.get(self.parsed_def, (0, 0))
            for node, parsed in self.rebuilt.items():
                positions.setdefault(node, positions.get(parsed, (0, 0)))
            self._positions = positions
        return self._positions


# (file, code object) -> ParsedSource: each function's source is parsed once
# per process (libcst nodes are immutable, so sharing them is safe).  Code
# objects compare by what they compile to, line table included, not by file:
# the file is part of the key.
_parsed: dict = {}


def load(fn) -> UserFunction:
    fn = unwrap(fn)
    code = fn.__code__
    key = (code.co_filename, code)
    if key not in _parsed:
        _parsed[key] = _parse(fn)
    parsed = _parsed[key]
    is_lambda = fn.__name__ == "<lambda>"
    node = parsed.node
    captured = getattr(fn, "__transformer_captured__", ())
    if captured:    # a lambda transformed inside transformed code: what it reads there is passed in
        node = node.with_changes(params=node.params.with_changes(
            params=[*node.params.params, *(cst.Param(cst.Name(name)) for name in captured)]))
    enclosed = getattr(fn, "__transformer_enclosed__", ())
    if enclosed:    # a def written inside transformed code: the enclosing variables it reads, by keyword
        node = node.with_changes(params=node.params.with_changes(
            kwonly_params=[*node.params.kwonly_params, *(cst.Param(cst.Name(name)) for name in enclosed)]))
    return UserFunction(fn=fn, name=fn.__name__ if not is_lambda else "lambda_fn", filename=code.co_filename,
                        node=node, parsed=parsed, globals=fn.__globals__,
                        closure=_closure_values(fn), lambda_=is_lambda)


def _parse(fn) -> ParsedSource:
    """The ``def`` of ``fn`` (a lambda made one), parsed from the user's file."""
    code = fn.__code__
    filename = code.co_filename
    linecache.checkcache(filename)      # the file may have been edited since it was last read
    if filename.startswith("<") or not linecache.getlines(filename) and not os.path.exists(filename):
        raise NoSourceError(f"{fn.__qualname__} has no source to read: {_no_source_situation(filename)}",
                            hint="define it in a .py file and import it")
    if fn.__name__ == "<lambda>":
        return _parse_lambda(fn, filename)
    try:
        lines, first = _def_lines(fn) or inspect.getsourcelines(fn)
    except (OSError, TypeError) as err:
        raise NoSourceError(f"cannot read the source of {fn.__qualname__}: {err}",
                            hint="define it in a .py file and import it") from err
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    indent = len(lines[0]) - len(lines[0].lstrip()) if text != raw else 0
    module = cst.parse_module(text)
    parsed_def = _find_def(fn, module)
    plain = _PlainForm()
    node = parsed_def.visit(plain).with_changes(decorators=())
    nested = _NestedDefs(plain.rebuilt)
    if any(isinstance(inner, cst.FunctionDef) for inner in walk.nodes(node.body)):
        node = node.with_changes(body=node.body.visit(nested))
    lines = _def_statement_lines(module.body.index(parsed_def), node, text, first)
    return ParsedSource(module, node, parsed_def, first, indent, lines, plain.rebuilt, nested.found)


NESTED_DEF = "__nested_def__"


class _NestedDefs(cst.CSTTransformer):
    """Each def written inside the function (``def step(carry, x): ...``, passed to lax.scan) stands
    as ``step = __nested_def__``, a statement that binds its name: the passes that read the enclosing
    function see a name bound, not a body whose returns and names are another function's.  The
    normalizer binds the name to the def (held_functions.LocalDef), whose body is read from its own
    code when it is called.  A decorated or async def is left as it is, for the fence to refuse."""

    def __init__(self, rebuilt: dict):
        self.rebuilt = rebuilt
        self.found: dict = {}       # the stand-in's marker -> the def

    def visit_FunctionDef(self, node) -> bool:
        return False

    def on_leave(self, original, updated):
        updated = super().on_leave(original, updated)
        if updated is not original and original not in self.found.values():
            self.rebuilt[updated] = self.rebuilt.get(original, original)   # libcst made it anew
        return updated

    def leave_FunctionDef(self, original, updated):
        if original.decorators or original.asynchronous:
            return updated
        marker = cst.Name(NESTED_DEF)
        target = cst.Name(original.name.value)
        assign = cst.Assign([cst.AssignTarget(target)], marker)
        line = cst.SimpleStatementLine([assign])
        for made in (line, assign, target, marker):     # errors there name the def's line
            self.rebuilt[made] = original
        self.found[marker] = original
        return line


class _PlainForm(cst.CSTTransformer):
    """The def in the one form every later pass reads, where the user's differs only
    in how it is written:

    - a body on its header's line (``for i in r: s += x[i]``, ``def f(x): return x``)
      becomes an indented block of that one line;
    - type annotations go (``x: np.ndarray``, ``-> float``, ``total: float = 0.0``
      as ``total = 0.0``, a bare ``total: float`` as ``pass``): Python does not
      evaluate them in a function's body, and a parameter's says nothing the
      arguments do not.

    The statements and expressions kept are the parsed nodes themselves, so their
    positions are the user's; each node made anew around them is noted in
    ``rebuilt`` with the node it stands for."""

    def __init__(self):
        self.rebuilt: dict = {}

    def on_leave(self, original, updated):
        if isinstance(updated, cst.SimpleStatementSuite):
            line = cst.SimpleStatementLine(updated.body)
            first = updated.body[0]
            self.rebuilt[line] = self.rebuilt.get(first, first)   # the line starts where its first statement does
            updated = cst.IndentedBlock([line])
        elif isinstance(updated, cst.Param) and updated.annotation is not None:
            updated = updated.with_changes(annotation=None)
        elif isinstance(updated, cst.FunctionDef) and updated.returns is not None:
            updated = updated.with_changes(returns=None)
        elif isinstance(updated, cst.AnnAssign):
            updated = cst.Pass(semicolon=updated.semicolon) if updated.value is None else \
                cst.Assign([cst.AssignTarget(updated.target)], updated.value, semicolon=updated.semicolon)
        if updated is not original:
            self.rebuilt[updated] = self.rebuilt.get(original, original)
        return updated


def _def_statement_lines(index: int, node: cst.FunctionDef, text: str, first: int) -> dict:
    """The line of each statement of ``node``, the def at ``index`` in the parsed text's module."""
    try:
        python_def = ast.parse(text).body[index]
    except (SyntaxError, IndexError):
        return {}
    lines: dict = {}
    if isinstance(python_def, (ast.FunctionDef, ast.AsyncFunctionDef)):
        _block_lines(node.body, python_def.body, first - 1, lines)
    return lines


def _parse_lambda(fn, filename: str) -> ParsedSource:
    """The lambda ``fn`` is, told from every other lambda in its file by where
    its code's instructions sit (Python 3.11 gives each a line and column):
    the innermost lambda whose body holds them all."""
    lines = linecache.getlines(filename)
    lam = _lambda_in_file(fn, "".join(lines), filename)
    first_line, last_line = lam.lineno, lam.end_lineno
    head = lines[first_line - 1].encode()
    column = len(head[:lam.col_offset].decode())
    tail = lines[last_line - 1].encode()[:lam.end_col_offset].decode()
    middle = lines[first_line - 1:last_line - 1] + [tail]
    middle[0] = " " * column + (middle[0][column:] if last_line > first_line else tail[column:])
    # Inside a list the lambda keeps its own lines and columns; the bracket takes the line above.
    module = cst.parse_module("[\n" + "".join(middle) + "\n]\n")
    parsed = ParsedSource(module, None, None, first_line - 1, 0, {})
    parsed.node = parsed.parsed_def = _lambda_as_def(module, parsed.positions())
    return parsed


def _lambda_in_file(fn, text: str, filename: str):
    """The ``ast.Lambda`` in ``text`` whose body holds every instruction of ``fn``'s code."""
    spans = [(line, col, end_line, end_col) for line, end_line, col, end_col in fn.__code__.co_positions()
             if line is not None and col is not None and (end_line, end_col) > (line, col)]
    where = Location(filename, fn.__code__.co_firstlineno)
    try:
        tree = ast.parse(text)
    except SyntaxError:
        raise NoSourceError("the file no longer parses; cannot read the lambda's source", where) from None
    if not spans:
        raise NoSourceError("the lambda's code says nothing of where it sits", where, hint="write it as a def")
    start, end = min(s[:2] for s in spans), max(s[2:] for s in spans)
    holding = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda)
               and (node.body.lineno, node.body.col_offset) <= start
               and end <= (node.body.end_lineno, node.body.end_col_offset)]
    if not holding:
        raise NoSourceError("cannot find this lambda in its file (was the file edited?)", where,
                            hint="write it as a def")
    # a lambda inside another's body is held by both: the innermost is the one
    return min(holding, key=lambda node: (node.end_lineno - node.lineno, node.end_col_offset - node.col_offset))


def _block_lines(block, python_statements, offset: int, lines: dict) -> None:
    """The line of each libcst statement in ``block``, from the ``ast``
    statements Python's parser made of the same text (``offset``: the line
    before the text's first).

    The two trees have the same statements in the same order, except that
    libcst groups ``a = 1; b = 2`` in one line.  Where they do not pair up
    (a construct the fence will refuse), the rest are left to ``positions``.
    """
    python_statements = iter(python_statements)
    for stmt in block.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                python = next(python_statements, None)
                if python is None:
                    return
                lines[small] = offset + python.lineno
                lines.setdefault(stmt, lines[small])
            continue
        python = next(python_statements, None)
        if not isinstance(python, _PAIRS.get(type(stmt), ())):
            return
        lines[stmt] = offset + python.lineno
        _block_lines(stmt.body, python.body, offset, lines)
        if isinstance(stmt.orelse, cst.If):            # elif: an if alone in the else branch
            _block_lines(cst.IndentedBlock([stmt.orelse]), python.orelse, offset, lines)
        elif stmt.orelse is not None:
            _block_lines(stmt.orelse.body, python.orelse, offset, lines)


# the compound statements whose blocks are paired too (the fence refuses the others)
_PAIRS = {cst.If: ast.If, cst.For: ast.For, cst.While: ast.While}


def _def_lines(fn) -> tuple[list[str], int] | None:
    """The lines of ``fn``'s def statement and its first line number, as
    ``inspect.getsourcelines`` gives them, found without tokenizing the file
    (compiling tokenize's patterns alone is 4 ms in a fresh process).

    The code object knows where the statement starts (its first decorator)
    and the last line any of its code covers; lines after that still belong
    to the def while they are indented deeper than it (a final ``pass``, a
    comment in the block).
    None for a lambda, or a start that is not a def: inspect decides those.
    """
    fn = inspect.unwrap(fn)      # as inspect does: a functools.wraps wrapper shows what it wraps
    code = fn.__code__
    lines = linecache.getlines(code.co_filename)
    first = code.co_firstlineno
    if fn.__name__ == "<lambda>" or not 0 < first <= len(lines):
        return None
    head = lines[first - 1]
    if not head.lstrip().startswith(("def ", "@", "async def ")):
        return None
    depth = len(head) - len(head.lstrip())
    end = max(first, _last_line(code))
    for number in range(end + 1, len(lines) + 1):
        text = lines[number - 1]
        deeper = len(text) - len(text.lstrip()) > depth
        if not text.strip() or text.lstrip().startswith("#") and not deeper:
            continue        # blank, or a comment that does not say where the block ends
        if not deeper:
            break
        end = number
    return lines[first - 1:end], first


def _last_line(code) -> int:
    """The last source line covered by ``code`` or any code nested in it."""
    last = max((end for _, end, _, _ in code.co_positions() if end is not None), default=0)
    for const in code.co_consts:
        if isinstance(const, type(code)):
            last = max(last, _last_line(const))
    return last


def _no_source_situation(filename: str) -> str:
    if filename in ("<stdin>", "<console>"):
        return f"it was typed into an interactive session ({filename})"
    if filename == "<string>":
        return "it was built by exec() or compile() from a string (<string>)"
    if filename.startswith("<"):
        return f"it was built from {filename}, not read from a file"
    return f"its file {filename} no longer exists"


def _find_def(fn, module: cst.Module) -> cst.FunctionDef:
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == fn.__name__:
            return stmt
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            return stmt
    raise NoSourceError(f"cannot find the def of {fn.__qualname__} in its source")


def _lambda_as_def(module: cst.Module, positions: dict) -> cst.FunctionDef:
    """``lambda x: body``, the one lambda at the top of ``module``, as ``def lambda_fn(x): return body``."""
    lam = module.body[0].body[0].value.elements[0].value
    body = cst.IndentedBlock(body=[cst.SimpleStatementLine([cst.Return(lam.body)])])
    node = cst.FunctionDef(name=cst.Name("lambda_fn"), params=lam.params, body=body)
    positions[node] = positions[lam]
    positions[body.body[0]] = positions[lam.body]
    positions[body.body[0].body[0]] = positions[lam.body]
    return node
