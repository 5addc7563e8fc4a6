"""The core form: the one shape of code every transform reads and writes.

Grammar (a subset of Python; ``atom`` is a name, a literal, a named constant
such as ``np.pi`` or ``np.float32``, or a tuple of atoms)::

    function  := def NAME(NAME, ...): block
    block     := statement+
    statement := NAME = atom                          copy
               | NAME = PRIM(atom, ..., key=atom)     primitive call, spelled as registered (a primitive
                                                      with several ``results`` binds their tuple, which
                                                      picks ``NAME = NAME[k]`` take apart)
               | NAME = atom OP atom                  binary operator primitive (+ - * / // % ** @ < <= > >= == !=)
               | NAME = UOP atom                      unary operator primitive (- + not ~)
               | NAME = atom[index]                   getitem
               | NAME[index] = atom                   setitem (an in-place write)
               | if atom: block [else: block]
               | for NAME in range(atom[, atom[, atom]]): block
               | for NAME in rt.parallel_range(atom[, atom[, atom]]): block
                                                      passes independent of each other (vmap's
                                                      per-example loops); read like range
               | while atom: block                    the condition is recomputed at the end of the body
               | break | continue | return atom | pass
    index     := item | item, item, ...
    item      := atom | [atom]:[atom][:atom] | None | ...

Every statement that starts the code of one user statement carries a comment
naming it: ``# z = np.sin(x)   [model.py:12]``.  Examples::

    y = np.sum(x * w, axis=1) + b       _t0 = x * w
                                        _t1 = np.sum(_t0, axis=1)
                                        y = _t1 + b

    if a < b < c: ...                   _t0 = a < b
                                        if _t0:
                                            _t0 = b < c
                                        if _t0: ...

    for row in X: s += row @ w          _t0 = len(X)
                                        for row_index in range(_t0):
                                            row = X[row_index]
                                            _t1 = row @ w
                                            s = s + _t1

``check(node)`` verifies a function is in this form; transforms are tested
with it, because each one's output is the next one's input.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import libcst as cst

from . import primitives
from .naming import NameScope

ORIGIN_COMMENT = re.compile(r"\[(?P<file>[^\[\]]+):(?P<line>\d+)\]\s*$")


@dataclass
class CoreFunction:
    """A function in core form plus what its module needs around it."""

    node: cst.FunctionDef
    scope: NameScope
    sources: dict[str, str] = field(default_factory=dict)   # short file name -> full path
    constants: dict[str, object] = field(default_factory=dict)  # module-level names bound by value
    # functions transforms call at transform time (custom_vjp backward rules), by name
    functions: dict[str, object] = field(default_factory=dict)
    # names that may hold None at run time (a run-time argument, a variable assigned None): an
    # `is None` test of one cannot be decided when the function is specialized
    maybe_none: set[str] = field(default_factory=set)
    # names whose pytree structure is known when the function is specialized (a structured argument,
    # a gradient regrouped as its argument, a list built by a comprehension over one) -> its TreeDef
    structures: dict[str, object] = field(default_factory=dict)
    # the structure a caller rebuilds the returned tuples as (a list, dict or named tuple built and
    # returned), or None: normalize records it, Transformed applies it (staging.result_structure)
    result_structure: object = None
    # whether some return gives a tuple, list, dict or other structure, not one value
    returns_structure: bool = False
    # the structure of each return's value, in order (normalize's; has_aux checks for pairs)
    returned: list = field(default_factory=list)
    # names given an augmented assignment (``y += v``, written ``y = y + v``): NumPy changes such an
    # array in place, which a name sharing its memory shows (staging refuses reading one after)
    augmented: set[str] = field(default_factory=set)
    # a definition's result that NumPy's function returns as a view of its first argument and ours
    # computes as a copy (np.diagonal): the result's name -> the argument's (staging refuses reading
    # it after a write into that argument, which NumPy's view would show)
    copied_views: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.node.name.value

    @property
    def params(self) -> list[str]:
        return [p.name.value for p in self.node.params.params]

    def code(self) -> str:
        return cst.Module(body=[self.node]).code


# --------------------------------------------------------------- node builders
def name(text: str) -> cst.Name:
    return cst.Name(text)


def literal(value) -> cst.BaseExpression:
    """An atom for a Python scalar, string or tuple of those."""
    if isinstance(value, bool) or value is None:
        return cst.Name(repr(value))
    if isinstance(value, int):
        node = cst.Integer(str(abs(value)))
        return cst.UnaryOperation(cst.Minus(), node) if value < 0 else node
    if isinstance(value, float):
        text = repr(abs(value))
        if text in ("inf", "nan"):
            node = cst.Attribute(cst.Name("np"), cst.Name(text))
        else:
            node = cst.Float(text)
        return cst.UnaryOperation(cst.Minus(), node) if value < 0 or (value == 0 and str(value)[0] == "-") else node
    if isinstance(value, str):
        return cst.SimpleString(repr(value))
    if isinstance(value, tuple):
        return tuple_of([literal(v) for v in value])
    raise TypeError(f"no literal for {value!r}")


def tuple_of(atoms) -> cst.Tuple:
    atoms = list(atoms)
    elements = [cst.Element(a) for a in atoms]
    return cst.Tuple(elements if len(elements) != 1 else [cst.Element(atoms[0], comma=cst.Comma())])


def assign(target: str | cst.BaseAssignTargetExpression, value: cst.BaseExpression,
           comment: str | None = None) -> cst.SimpleStatementLine:
    target_node = cst.Name(target) if isinstance(target, str) else target
    return statement(cst.Assign([cst.AssignTarget(target_node)], value), comment)


def statement(small: cst.BaseSmallStatement, comment: str | None = None) -> cst.SimpleStatementLine:
    return with_comment(cst.SimpleStatementLine([small]), comment)


def with_comment(stmt, comment: str | None):
    if not comment:
        return stmt
    return stmt.with_changes(leading_lines=[*stmt.leading_lines, cst.EmptyLine(comment=cst.Comment(comment))])


def block(stmts) -> cst.IndentedBlock:
    stmts = list(stmts) or [cst.SimpleStatementLine([cst.Pass()])]
    return cst.IndentedBlock(body=stmts)


def call(spelling: str, args=(), keywords=()) -> cst.Call:
    func = callee(spelling)
    arg_nodes = [cst.Arg(a) for a in args] + [
        cst.Arg(value, keyword=cst.Name(key), equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
        for key, value in keywords]
    return cst.Call(func, arg_nodes)


@functools.lru_cache(maxsize=None)
def callee(spelling: str) -> cst.BaseExpression:
    """``np.sin``, ``rt.push``... as an expression, parsed once per process: libcst
    nodes are immutable, so every call of the primitive can share it."""
    return cst.parse_expression(spelling)


def apply_primitive(prim: primitives.Primitive, args, keywords=()) -> cst.BaseExpression:
    """The core-form expression that applies ``prim`` to atoms."""
    if prim.spelling == "[]":                 # x[index]
        value, index = args
        return cst.Subscript(value, index)
    if prim.is_operator:
        if len(args) == 1:
            return cst.UnaryOperation(_UNARY_NODES[prim.spelling](), args[0])
        left, right = args
        comparison = _COMPARISON_NODES.get(prim.spelling)
        if comparison is not None:
            return cst.Comparison(left, [cst.ComparisonTarget(comparison(), right)])
        return cst.BinaryOperation(left, _BINARY_NODES[prim.spelling](), right)
    return call(prim.spelling, args, keywords)


_UNARY_NODES = {"-": cst.Minus, "+": cst.Plus, "not": cst.Not, "~": cst.BitInvert}    # Python's own tokens
_BINARY_NODES = {"+": cst.Add, "-": cst.Subtract, "*": cst.Multiply, "/": cst.Divide,
                 "//": cst.FloorDivide, "%": cst.Modulo, "**": cst.Power, "@": cst.MatrixMultiply,
                 "&": cst.BitAnd, "|": cst.BitOr, "^": cst.BitXor}
_COMPARISON_NODES = {"<": cst.LessThan, "<=": cst.LessThanEqual, ">": cst.GreaterThan,
                     ">=": cst.GreaterThanEqual, "==": cst.Equal, "!=": cst.NotEqual}
BINARY_TOKENS = {cls: token for token, cls in _BINARY_NODES.items()}
COMPARISON_TOKENS = {cls: token for token, cls in _COMPARISON_NODES.items()}
UNARY_TOKENS = {cst.Minus: "-", cst.Plus: "+", cst.Not: "not", cst.BitInvert: "~"}


# -------------------------------------------------------------------- reading
def int_literal(atom):
    """The Python int an atom spells (``3``, ``-1``), or None."""
    if isinstance(atom, cst.Integer):
        return int(atom.value)
    if isinstance(atom, cst.UnaryOperation) and isinstance(atom.operator, cst.Minus) \
            and isinstance(atom.expression, cst.Integer):
        return -int(atom.expression.value)
    return None


def code_of(node) -> str:
    """A node's source text, as the generated module will print it."""
    return cst.Module([]).code_for_node(node)


def is_atom(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.Ellipsis)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return isinstance(node.expression, (cst.Integer, cst.Float, cst.Imaginary)) or \
            is_named_constant(node.expression)
    if isinstance(node, cst.Tuple):
        return all(is_atom(el.value) for el in node.elements)
    return is_named_constant(node)


def is_named_constant(node) -> bool:
    """``np.pi``, ``np.float32``, ``math.inf``: module attributes the core form names directly."""
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and \
        node.value.value in ("np", "math")


def primitive_of(value: cst.BaseExpression) -> primitives.Primitive | None:
    """The primitive a right-hand side applies, or None for a copy of an atom."""
    if is_atom(value):
        return None
    if isinstance(value, cst.Subscript):
        return primitives.get("getitem")
    if isinstance(value, cst.BinaryOperation):
        return primitives.get(primitives.operator_name(BINARY_TOKENS[type(value.operator)], 2))
    if isinstance(value, cst.Comparison):
        token = COMPARISON_TOKENS[type(value.comparisons[0].operator)]
        return primitives.get(primitives.operator_name(token, 2))
    if isinstance(value, cst.UnaryOperation):
        return primitives.get(primitives.operator_name(UNARY_TOKENS[type(value.operator)], 1))
    if isinstance(value, cst.Call):
        spelling = cst.Module([]).code_for_node(value.func)
        return primitives.BY_SPELLING.get(spelling)
    return None


def operands(value) -> list:
    """The positional operand atoms of a right-hand side, in primitive-parameter order: the two
    sides of a binary operator or comparison, the operand of a unary one, a call's positional
    arguments, the array a getitem reads (its index is ``arguments(value)["index"]``); an atom
    (``-1`` included) is its own one operand."""
    if isinstance(value, cst.BinaryOperation):
        return [value.left, value.right]
    if isinstance(value, cst.Comparison):
        return [value.left, value.comparisons[0].comparator]
    if isinstance(value, cst.UnaryOperation) and not is_atom(value):
        return [value.expression]
    if isinstance(value, cst.Call):
        return [a.value for a in value.args if a.keyword is None]
    if isinstance(value, cst.Subscript):
        return [value.value]
    return [value]


def keywords(value) -> dict:
    """A call's keyword arguments, keyword -> atom; empty for an operator or a getitem."""
    if isinstance(value, cst.Call):
        return {a.keyword.value: a.value for a in value.args if a.keyword is not None}
    return {}


def arguments(value, prim: primitives.Primitive | None = None) -> dict:
    """Parameter name -> atom of the primitive application ``value``: its positional operands
    under ``primitive_of(value).params``, its keywords, and a getitem's ``"index"`` (the
    subscript's elements).  ``prim``: that primitive, where the caller has it already."""
    if prim is None:
        prim = primitive_of(value)
    if prim is None:
        raise ValueError(f"not a primitive application: {code_of(value)}")
    bound = dict(zip(prim.params, operands(value)))
    if isinstance(value, cst.Subscript):
        bound["index"] = value.slice
    bound.update(keywords(value))
    return bound


def blocks(stmt) -> list:
    """The statement lists nested directly in ``stmt``: an ``if``'s, ``for``'s or ``while``'s body
    and, when it has one, its ``else`` body (an ``elif``, which the core form spells as a nested
    ``if``, is the one-statement list holding that ``if``); none for a simple statement."""
    if not isinstance(stmt, (cst.If, cst.For, cst.While)):
        return []
    orelse = stmt.orelse
    if orelse is None:
        return [stmt.body.body]
    return [stmt.body.body, [orelse] if isinstance(orelse, cst.If) else orelse.body.body]


def branches(stmt: cst.If) -> tuple[list, list]:
    """An ``if``'s two blocks, the second empty when it has no ``else``."""
    inner = blocks(stmt)
    return inner[0], inner[1] if len(inner) > 1 else []


def map_blocks(stmt, rewrite):
    """``stmt`` with ``rewrite(list_of_statements)`` applied to each block ``blocks`` finds in it,
    the statement's own test and formatting kept; a simple statement is returned as it is."""
    if isinstance(stmt, cst.If):
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):                  # an elif: its own block of one ``if``
            orelse = cst.Else(block(rewrite([orelse])))
        elif orelse is not None:
            orelse = orelse.with_changes(body=block(rewrite(list(orelse.body.body))))
        return stmt.with_changes(body=block(rewrite(list(stmt.body.body))), orelse=orelse)
    if isinstance(stmt, (cst.For, cst.While)):
        return stmt.with_changes(body=block(rewrite(list(stmt.body.body))))
    return stmt


def walk(stmts):
    """Every simple statement under ``stmts``, however deeply nested, in program order."""
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield stmt
        else:
            for inner in blocks(stmt):
                yield from walk(inner)


def tape_operation(value) -> str:
    """What a right-hand side does to reverse mode's tape (the registry's ``tape``: "new", "push",
    "pop" or "top"), or "" for anything else."""
    prim = primitive_of(value) if isinstance(value, cst.Call) else None
    return prim.tape if prim is not None else ""


def origin_of(stmt) -> tuple[str, int] | None:
    """(file, line) from a statement's origin comment, if it has one."""
    for line in reversed(getattr(stmt, "leading_lines", ())):
        if line.comment is not None:
            match = ORIGIN_COMMENT.search(line.comment.value)
            if match:
                return match["file"], int(match["line"])
    return None


def origins(stmts) -> dict:
    """id(simple statement) -> the (file, line) of the user's line it comes from: the origin
    comment on it or, as the normalizer writes one comment a user line, on the nearest
    statement before it in program order."""
    found: dict = {}
    current = None

    def visit(block):
        nonlocal current
        for stmt in block:
            current = origin_of(stmt) or current
            if isinstance(stmt, cst.SimpleStatementLine):
                found[id(stmt)] = current
            for inner in blocks(stmt):
                visit(inner)
    visit(stmts)
    return found


def is_range(call: cst.Call) -> bool:
    """``range(...)`` or ``rt.parallel_range(...)``, the iterables of core-form loops."""
    return isinstance(call.func, cst.Name) and call.func.value == "range" or \
        cst.Module([]).code_for_node(call.func) == "rt.parallel_range"


class CoreFormViolation(AssertionError):
    pass


def check(func: cst.FunctionDef) -> None:
    """Raise ``CoreFormViolation`` if ``func`` is not in core form."""
    _check_block(func.body.body)


def _fail(node, why):
    raise CoreFormViolation(f"{why}: {cst.Module([]).code_for_node(node).strip()}")


def _check_index(node: cst.Subscript):
    for element in node.slice:
        item = element.slice
        if isinstance(item, cst.Index):
            if not is_atom(item.value):
                _fail(node, "index is not an atom")
        else:
            for part in (item.lower, item.upper, item.step):
                if part is not None and not is_atom(part):
                    _fail(node, "slice bound is not an atom")


def _check_block(stmts):
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            if len(stmt.body) != 1:
                _fail(stmt, "more than one statement on a line")
            _check_small(stmt.body[0])
        elif isinstance(stmt, cst.If):
            if not is_atom(stmt.test):
                _fail(stmt.test, "if-condition is not an atom")
            if isinstance(stmt.orelse, cst.If):
                _fail(stmt.orelse, "elif (should be a nested if)")
            for inner in blocks(stmt):
                _check_block(inner)
        elif isinstance(stmt, cst.For):
            it = stmt.iter
            if not (isinstance(stmt.target, cst.Name) and isinstance(it, cst.Call) and is_range(it)
                    and all(is_atom(a.value) for a in it.args)) or stmt.orelse is not None:
                _fail(stmt, "for loop not of the form: for NAME in range(atoms)")
            _check_block(stmt.body.body)
        elif isinstance(stmt, cst.While):
            if not is_atom(stmt.test) or stmt.orelse is not None:
                _fail(stmt, "while-condition is not an atom")
            _check_block(stmt.body.body)
        else:
            _fail(stmt, "statement kind not in core form")


def _check_small(small):
    if isinstance(small, (cst.Break, cst.Continue, cst.Pass)):
        return
    if isinstance(small, cst.Return):
        if small.value is not None and not is_atom(small.value):
            _fail(small, "return value is not an atom")
        return
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        _fail(small, "not a single assignment")
    target, value = small.targets[0].target, small.value
    if isinstance(target, cst.Subscript):
        if not isinstance(target.value, cst.Name) or not is_atom(value):
            _fail(small, "setitem must write an atom into a named array")
        _check_index(target)
        return
    if not isinstance(target, cst.Name):
        _fail(small, "assignment target is not a name")
    if is_atom(value):
        return
    if isinstance(value, cst.Subscript):
        if not isinstance(value.value, cst.Name):
            _fail(small, "getitem of a non-name")
        _check_index(value)
        return
    if primitive_of(value) is None:
        _fail(small, "right-hand side is not a registered primitive")
    if isinstance(value, cst.Comparison) and len(value.comparisons) != 1:
        _fail(small, "chained comparison")
    for operand in [*operands(value), *keywords(value).values()]:
        if not is_atom(operand):
            _fail(small, "operand is not an atom")
