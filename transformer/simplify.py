"""Small clean-ups of generated core form, so it reads like hand-written code.

* ``merge_first_contributions``: ``x_bar = rt.zeros_like(x)`` (reverse mode's zero start, whose
  helper it names) followed by ``x_bar = x_bar + c`` becomes ``x_bar = c``;
* ``fold_constants``: ``_t = 2 - 1`` is computed now, ``x ** 1`` is ``x``,
  and a temporary holding a literal or a copy is replaced by what it holds
  where that is safe.
"""
from __future__ import annotations

import operator

import libcst as cst

from . import core_form as cf
from . import dataflow

_FOLDABLE = {cst.Add: operator.add, cst.Subtract: operator.sub, cst.Multiply: operator.mul,
             cst.FloorDivide: operator.floordiv, cst.Modulo: operator.mod, cst.Power: operator.pow}


def _is_zero_init(stmt, zeros: str) -> str | None:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return None
    a = dataflow.classify(stmt)
    if a.kind == "assign" and dataflow.spelling(a.value) == zeros:
        return a.target
    return None


def _accumulation(stmt, name: str):
    """``c`` if ``stmt`` is ``name = name + c`` (c not mentioning name), else None."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return None
    a = dataflow.classify(stmt)
    if a.kind == "assign" and a.target == name and isinstance(a.value, cst.BinaryOperation) and \
            isinstance(a.value.operator, cst.Add) and isinstance(a.value.left, cst.Name) and \
            a.value.left.value == name and name not in dataflow.all_names(a.value.right):
        return a.value.right
    return None


def merge_first_contributions(func: cst.FunctionDef, mutated: set, zeros: str) -> cst.FunctionDef:
    """``zeros``: the helper a cotangent starts from (``rt.zeros_like``)."""
    return func.with_changes(body=cf.block(_merge_block(list(func.body.body), mutated, zeros)))


def _merge_block(stmts, mutated, zeros) -> list:
    stmts = [_merge_children(s, mutated, zeros) for s in stmts]
    names = [dataflow.all_names(s) for s in stmts]      # once per statement: the scan below is quadratic
    i = 0
    while i < len(stmts):
        name = _is_zero_init(stmts[i], zeros)
        if name is not None and name not in mutated:
            for j in range(i + 1, len(stmts)):
                if name in names[j]:
                    contribution = _accumulation(stmts[j], name)
                    if contribution is not None:
                        merged = stmts[j].with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(name))], contribution)])
                        stmts[j] = merged
                        names[j] = dataflow.all_names(merged)
                        if i + 1 < len(stmts):
                            stmts[i + 1] = stmts[i + 1].with_changes(
                                leading_lines=[*stmts[i].leading_lines, *stmts[i + 1].leading_lines])
                        del stmts[i], names[i]
                        i -= 1
                    break
        i += 1
    return stmts


def _merge_children(stmt, mutated, zeros):
    return cf.map_blocks(stmt, lambda block: _merge_block(block, mutated, zeros))


# ----------------------------------------------------------- constant folding
def _literal_value(node):
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.Float):
        return float(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _literal_value(node.expression)
        return None if inner is None else -inner
    return None


def integer_arithmetic(left, op, right) -> int | None:
    """The value of an int operator on two int literals, else None (also what the normalizer uses to
    decide ``if k % 4 == 1`` when ``k`` is a literal)."""
    compute = _FOLDABLE.get(type(op))
    a, b = _literal_value(left), _literal_value(right)
    if compute is None or type(a) is not int or type(b) is not int:
        return None
    if b == 0 and compute in (operator.floordiv, operator.mod) or compute is operator.pow and b < 0:
        return None     # an error, or a float: left for run time
    return compute(a, b)


def _fold(value):
    """A simpler right-hand side, or None."""
    if isinstance(value, cst.BinaryOperation):
        folded = integer_arithmetic(value.left, value.operator, value.right)
        if folded is not None:
            return cf.literal(folded)
        right = _literal_value(value.right)
        left = _literal_value(value.left)
        if isinstance(value.operator, cst.Power) and right == 1:
            return value.left
        # integer identities only: x * 1.0 could change an integer x's dtype
        if isinstance(value.operator, cst.Multiply) and right == 1 and isinstance(right, int):
            return value.left
        if isinstance(value.operator, cst.Add) and left == 0 and isinstance(left, int):
            return value.right
        if isinstance(value.operator, (cst.Add, cst.Subtract)) and right == 0 and isinstance(right, int):
            return value.left
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        inner = _literal_value(value.expression)
        if inner is not None and isinstance(value.expression, cst.UnaryOperation):
            return cf.literal(-inner)
    return None


class _Substitute(cst.CSTTransformer):
    def __init__(self, atoms: dict):
        self.atoms = atoms

    def leave_Name(self, original, updated):
        return self.atoms.get(updated.value, updated)


def fold_constants(func: cst.FunctionDef) -> cst.FunctionDef:
    counts = dataflow.write_counts(func)
    body = _fold_block(list(func.body.body), counts)
    return func.with_changes(body=cf.block(body))


def _fold_block(stmts, counts) -> list:
    stmts = [_fold_children(s, counts) for s in stmts]
    out = []
    forwarded = {}          # temp -> the atom it held, substituted in each later statement as it is reached
    carried_lines = []      # a forwarded statement's comments and blank lines, kept on the next one
    for i, stmt in enumerate(stmts):
        if forwarded:
            stmt = stmt.visit(_Substitute(forwarded))
        if carried_lines:
            stmt = stmt.with_changes(leading_lines=[*carried_lines, *stmt.leading_lines])
            carried_lines = []
        if isinstance(stmt, cst.SimpleStatementLine):
            a = dataflow.classify(stmt)
            if a.kind == "assign":
                folded = _fold(a.value)
                if folded is not None:
                    stmt = stmt.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(a.target))], folded)])
                    a = dataflow.classify(stmt)
                # (a tuple stays in its temp: forwarded, t[0] would read (a, b)[0], which transforms cannot)
                if cf.is_atom(a.value) and not isinstance(a.value, cst.Tuple) and counts.count.get(a.target) == 1 \
                        and a.target.startswith("_t") and _can_forward(a, stmts[i + 1:]):
                    forwarded[a.target] = a.value
                    carried_lines = list(stmt.leading_lines)
                    continue
        out.append(stmt)
    return out


def _can_forward(a, rest) -> bool:
    """A temp holding an atom can be replaced by that atom in the statements after it,
    if nothing after it (in this block) writes a name the atom reads, and nothing
    outside this block reads the temp."""
    names = set(dataflow.atom_names(a.value))
    for stmt in rest:
        for b in (dataflow.walk([stmt]) if not isinstance(stmt, cst.SimpleStatementLine) else [dataflow.classify(stmt)]):
            if b.kind in ("assign", "write_into") and b.target in names:
                return False
        if isinstance(stmt, cst.For) and stmt.target.value in names:
            return False
    return True


def _fold_children(stmt, counts):
    return cf.map_blocks(stmt, lambda block: _fold_block(block, counts))


# ------------------------------------------------------------ results named by their users
def name_results(func: cst.FunctionDef, known: set = frozenset()) -> cst.FunctionDef:
    """A value copied to the name its user gave it, ``forget = _t7`` or ``k1 = rates_z``, made under
    that name instead, where the name copied from is this block's and named nowhere after the copy,
    and the name copied to is not named between the two::

        _t7 = 1.0 / _t6                          forget = 1.0 / _t6
        forget = _t7                      ->

        rates_z = np.empty_like(y)               k1 = np.empty_like(y)
        rates_z[0] = x[0]                 ->     k1[0] = x[0]
        k1 = rates_z

    An inlined helper's returned value (``forget = sigmoid(x)``) and the operand made for a call's
    result take the caller's name: the code reads as the user wrote it, and a transform keeps one
    value where it kept two (reverse mode taped both).  Names in ``known`` (the core function
    records a fact of them) and the function's parameters keep theirs."""
    fixed = set(known) | {p.name.value for p in func.params.params}
    if not any(_is_copy(line, fixed) for line in cf.walk(func.body.body)):
        return func                                 # (most functions: no count of names needed)
    counts = dataflow.name_counts(func.body)
    return func.with_changes(body=cf.block(_name_results_in(list(func.body.body), counts, fixed)))


def _is_copy(line, fixed) -> bool:
    """``a = b`` of two names that may change theirs."""
    small = line.body[0]
    return isinstance(small, cst.Assign) and isinstance(small.value, cst.Name) \
        and isinstance(small.targets[0].target, cst.Name) \
        and small.value.value not in fixed and small.targets[0].target.value not in fixed


def _name_results_in(stmts, counts, fixed) -> list:
    out: list = []
    for stmt in stmts:
        stmt = cf.map_blocks(stmt, lambda block: _name_results_in(block, counts, fixed))
        copy = dataflow.classify(stmt) if isinstance(stmt, cst.SimpleStatementLine) else None
        if copy is not None and copy.kind == "assign" and isinstance(copy.value, cst.Name):
            source_name, target = copy.value.value, copy.target
            span = _span_of(out, source_name, target, counts, fixed)
            if span is not None:
                renamed = [dataflow.renamed(s, {source_name: target}) for s in out[span:]]
                out[span:] = renamed
                # (the copy named each once; the other mentions of the source now name the target)
                counts[target] += counts.pop(source_name) - 2
                lines = [line for line in stmt.leading_lines if not _said_in(line, out)]
                if lines:
                    out.append(_CarriedLines(lines))
                continue
        if out and isinstance(out[-1], _CarriedLines):
            stmt = stmt.with_changes(leading_lines=[*out.pop().lines, *stmt.leading_lines])
        out.append(stmt)
    if out and isinstance(out[-1], _CarriedLines):
        out.pop()
    return out


class _CarriedLines:
    """A dropped copy's comment lines, for the statement after it."""

    def __init__(self, lines):
        self.lines = lines


def _span_of(out: list, source_name: str, target: str, counts, fixed) -> int | None:
    """Where the statements naming ``source_name`` start in ``out`` (the block so far), when every
    mention of it is there and ``target`` is named in none of them; else None."""
    if source_name == target or source_name in fixed or target in fixed or not counts[source_name]:
        return None
    seen = 1                                        # the copy's own read
    for start in range(len(out) - 1, -1, -1):
        if isinstance(out[start], _CarriedLines):
            return None
        named = dataflow.name_counts(out[start])
        if named[target] or _leaves_early(out[start]):
            return None
        seen += named[source_name]
        if seen == counts[source_name]:
            first = out[start]             # the value copied is made here (not a module's name)
            made = dataflow.classify(first) if isinstance(first, cst.SimpleStatementLine) else None
            return start if made is not None and made.kind == "assign" and made.target == source_name else None
    return None


def _leaves_early(stmt) -> bool:
    """Whether a statement holds a break, continue or return: leaving there, the target named
    earlier would keep the value the copy never made."""
    return any(isinstance(line.body[0], (cst.Break, cst.Continue, cst.Return)) for line in cf.walk([stmt]))


def _said_in(line, stmts) -> bool:
    """Whether a comment line already stands above one of ``stmts`` (the caller's line, said again
    before the copy that ends it)."""
    if line.comment is None:
        return True                                 # a blank line
    return any(line.comment.value == other.comment.value for stmt in stmts if not isinstance(stmt, _CarriedLines)
               for other in getattr(stmt, "leading_lines", ()) if other.comment is not None)
