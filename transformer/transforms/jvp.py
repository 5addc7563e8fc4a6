"""Forward mode: the ``jvp`` source transform.

``jvp_f(x, y, x_dot, y_dot)`` takes the primals, then one tangent per
parameter, and returns ``(out, out_dot)``.  It is ``f`` itself with a
tangent statement after each statement that computes an *active* value —
one that depends on a tangent-carrying input.  Control flow stays as it is
(the tangents ride along), and an in-place write ``y[i] = v`` gets its twin
``y_dot[i] = v_dot``::

    # s = s + np.sin(x[i])   [model.py:4]          _t0 = x[i]
                                                   # jvp of: s = s + np.sin(x[i])   [model.py:4]
                                                   _t0_dot = x_dot[i]
                                                   _t1 = np.sin(_t0)
                                                   _t1_dot = np.cos(_t0) * _t0_dot
                                                   s = s + _t1
                                                   s_dot = s_dot + _t1_dot

Activity and shapes are decided per variable, over the whole function, so
every assignment to an active variable writes its tangent and each tangent
keeps one type (numba needs that).  The rules come from
``templates/tangents.py``; afterwards, tangent statements whose value never
reaches the returned tangent are removed.
"""
from __future__ import annotations

import inspect
from collections import defaultdict

import libcst as cst

from .. import core_form as cf
from .. import custom, naming, primitives, rules
from ..core_form import CoreFunction
from ..errors import Location, TransformError
from ..normalize import apply_template
from . import register
from .shapes import SCALAR, Shapes, assignments, atom_names, is_array, params_and_keywords




@register("jvp")
def jvp(core: CoreFunction, active=None, ndims=None) -> CoreFunction:
    """Forward mode of ``core``.

    ``active``: indices of the parameters whose tangents count (default all;
    the API leaves out integer arguments).  ``ndims``: per parameter its
    number of dimensions, if known; shapes known statically let zero
    tangents be written plainly (``0.0`` or ``np.zeros_like(x)``) and spare
    needless widening of tangents to their result's shape.
    """
    params = core.params
    seeds = {params[i] for i in (range(len(params)) if active is None else active)}
    table = rules.table("tangent")
    forward = _Forward(core, table, seeds, Shapes(core, ndims))
    body = forward.function_body()
    new_params = list(core.node.params.params) + [cst.Param(cst.Name(forward.param_tangents[p])) for p in params]
    body = _prune_dead_tangents(body, forward.tangent_names)
    core.node = core.node.with_changes(params=core.node.params.with_changes(params=new_params),
                                       body=cf.block(body))
    return core


# ------------------------------------------------------------------ activity
def _differentiable(template) -> set[str]:
    """The operands a rule differentiates: those it takes a ``_dot`` of."""
    return {p[:-4] for p in inspect.signature(template).parameters if p.endswith("_dot")}


def active_names(stmts, seeds: set[str], table) -> set[str]:
    """Variables that depend on a tangent-carrying input (a fixpoint: loops feed back)."""
    active = set(seeds)
    changed = True
    while changed:
        changed = False
        for target, value in assignments(stmts):
            name = target.value.value if isinstance(target, cst.Subscript) else target.value
            if name not in active and _value_is_active(value, active, table, write=isinstance(target, cst.Subscript)):
                active.add(name)
                changed = True
    return active


def _value_is_active(value, active, table, write=False) -> bool:
    if write or cf.is_atom(value):
        return bool(atom_names(value) & active)
    prim = cf.primitive_of(value)
    args, keywords = params_and_keywords(value, prim)
    if prim.kind == primitives.INDEX:       # x[index]: the index is never active
        return bool(atom_names(args["x"]) & active)
    template = table.get(prim.name)
    if template is None:            # refused: active if any operand is, so the refusal is reported
        return any(atom_names(a) & active for a in args.values())
    if template.rule_options.get("nondifferentiable"):
        return False
    operand_of = {**keywords, **args}
    return any(atom_names(operand_of[p]) & active for p in _differentiable(template) if p in operand_of)


# ------------------------------------------------------------------- emitting
class _Forward:
    def __init__(self, core: CoreFunction, table, seeds: set[str], shapes: Shapes):
        self.core = core
        self.scope = core.scope
        self.table = table
        self.shapes = shapes
        body = core.node.body.body
        self.active = active_names(body, seeds, table)
        self.written = {t.value.value for t, _ in assignments(body) if isinstance(t, cst.Subscript)}
        self.tangent_names: set[str] = set()      # every name tangent code assigns
        self.dot: dict[str, str] = {}             # active variable -> its tangent's name
        self.param_tangents: dict[str, str] = {}
        for p in core.params:
            self.param_tangents[p] = self.scope.claim(naming.tangent(p))
            shapes.tokens[self.param_tangents[p]] = shapes.of_name(p)
            if p in seeds:
                self.dot[p] = self.param_tangents[p]
        self.zero = self.scope.claim("_zero")      # stands for an inactive tangent inside rules
        self.origin: str | None = None              # the user statement being transformed
        self.comment_pending = False
        self.location: Location | None = None
        self.seeds = seeds

    def function_body(self) -> list:
        start = []
        for p in self.core.params:               # written into, but its tangent is not counted
            if p in self.active and p not in self.seeds:
                start += self.zero_tangent(p, self.shapes.of_name(p), into=self.tangent(p))
        return self.tag(start) + self.block(self.core.node.body.body)

    def tangent(self, name: str) -> str:
        if name not in self.dot:
            self.dot[name] = self.scope.claim(naming.tangent(name))
            self.shapes.tokens[self.dot[name]] = self.shapes.of_name(name)   # a tangent has its primal's shape
        self.tangent_names.add(self.dot[name])
        return self.dot[name]

    def temp(self) -> str:
        name = self.scope.temp()
        self.tangent_names.add(name)
        return name

    def error(self, message: str, hint: str | None = None) -> TransformError:
        return TransformError(message, self.location, hint)

    def tag(self, stmts: list) -> list:
        """Mark tangent statements with the user line they belong to (once per line)."""
        if stmts and self.comment_pending and self.origin:
            stmts[0] = cf.with_comment(stmts[0], f"# jvp of: {self.origin}")
            self.comment_pending = False
        return stmts

    # --------------------------------------------------------- statements
    def block(self, stmts) -> list:
        out = []
        for stmt in stmts:
            self.note_origin(stmt)
            if isinstance(stmt, cst.SimpleStatementLine):
                out += self.simple(stmt)
            else:                           # if / for / while: a loop variable is an integer
                out.append(cf.map_blocks(stmt, self.block))
        return out

    def note_origin(self, stmt):
        for line in stmt.leading_lines:
            if line.comment is not None and cf.ORIGIN_COMMENT.search(line.comment.value):
                self.origin = line.comment.value.lstrip("#").strip()
                self.comment_pending = True
                file, line_no = cf.origin_of(stmt)
                self.location = Location(self.core.sources.get(file, file), line_no)

    def simple(self, stmt) -> list:
        small = stmt.body[0]
        if isinstance(small, cst.Return) and small.value is not None:
            pre, tangent = self.tangent_atom(small.value, self.shapes.of_value(small.value))
            self.tag(pre)
            result = cf.tuple_of([small.value, tangent])
            return pre + [stmt.with_changes(body=[small.with_changes(value=result)])]
        if not isinstance(small, cst.Assign):
            return [stmt]
        target, value = small.targets[0].target, small.value
        if isinstance(target, cst.Subscript):
            return [stmt] + self.tag(self.setitem(target, value))
        name = target.value
        if name not in self.active:
            return [stmt]
        return self.assign(stmt, name, value)

    def setitem(self, target: cst.Subscript, value) -> list:
        array = target.value.value
        if array not in self.active:
            return []
        if atom_names(value) & self.active:
            pre, tangent = self.tangent_atom(value, self.shapes.of_value(value))
        else:
            pre, tangent = [], cf.literal(0.0)
        return pre + [cf.assign(target.with_changes(value=cst.Name(self.tangent(array))), tangent)]

    def assign(self, stmt, name: str, value) -> list:
        dot = self.tangent(name)
        if cf.is_atom(value):
            pre, tangent = self.tangent_atom(value, self.shapes.of_value(value))
            return [stmt] + self.tag(pre + [cf.assign(dot, tangent)])
        prim = cf.primitive_of(value)
        args, keywords = params_and_keywords(value, prim)
        if prim.kind == primitives.INDEX:
            if not atom_names(args["x"]) & self.active:
                return [stmt] + self.tag(self.zero_tangent(name, self.shapes.of_value(value), into=dot))
            x_dot = cst.Name(self.tangent(args["x"].value))
            return [stmt] + self.tag([cf.assign(dot, value.with_changes(value=x_dot))])
        if prim.name == custom.VJP_CALL and getattr(self.core.functions[args["rule"].evaluated_value], "recomputes", False):
            # tr.checkpoint: the output was computed by the function's own code, and its tangent with it
            pre, tangent = self.tangent_atom(args["out"], self.shapes.of_value(args["out"]))
            return [stmt] + self.tag(pre + [cf.assign(dot, tangent)])
        if prim.name == custom.JVP_CALL:
            if not _value_is_active(value, self.active, self.table):
                return [stmt] + self.tag(self.zero_tangent(name, self.shapes.of_value(value), into=dot))
            return [stmt] + self.tag(self.custom_rule(dot, args))
        template = self.rule_for(prim, keywords)
        if getattr(template, "rule_options", {}).get("tape"):
            return self.apply_rule(stmt, name, value, template, args, keywords)   # a tape's tangent keeps in step
        if template is None or not _value_is_active(value, self.active, self.table):
            return [stmt] + self.tag(self.zero_tangent(name, self.shapes.of_value(value), into=dot))
        return self.apply_rule(stmt, name, value, template, args, keywords)

    def custom_rule(self, dot: str, args) -> list:
        """``y = rt.custom_jvp_call(out, inputs, rule)``: inline the user's rule
        ``rule(primals, tangents) -> (out, out_dot)`` and keep its ``out_dot``."""
        jvp_rule = self.core.functions[args["rule"].evaluated_value]
        pre, tangents = [], []
        for element in args["inputs"].elements:
            stmts, tangent = self.tangent_atom(element.value, self.shapes.of_value(element.value))
            pre += stmts
            tangents.append(tangent)
        primals, tangents_param = list(inspect.signature(jvp_rule).parameters)[:2]
        stmts, result = apply_template(self.core, jvp_rule, {primals: args["inputs"],
                                                             tangents_param: cf.tuple_of(tangents)})
        if stmts:                   # the lines that follow are the user's rule, not the function's code
            stmts[0] = cf.with_comment(stmts[0], f"# the custom jvp rule {args['rule'].evaluated_value}")
        for stmt in cf.walk(stmts):             # the rule's own lines are tangent code: unused ones go
            small = stmt.body[0]
            if isinstance(small, cst.Assign) and isinstance(small.targets[0].target, cst.Name):
                self.tangent_names.add(small.targets[0].target.value)
        if isinstance(result, cst.Tuple) and len(result.elements) == 2:
            return pre + stmts + [cf.assign(dot, result.elements[1].value)]
        if result is None:
            raise self.error(f"the custom_jvp rule {jvp_rule.__name__}() must return (output, output tangent)")
        second = cst.Subscript(result, [cst.SubscriptElement(cst.Index(cf.literal(1)))])
        return pre + stmts + [cf.assign(dot, second)]

    def rule_for(self, prim, keywords):
        template = self.table.get(prim.name)
        if template is None:
            reason = rules.UNSUPPORTED["tangent"].get(prim.name, "it has no tangent rule")
            raise self.error(f"jvp cannot differentiate {prim.spelling}: {reason}")
        options = template.rule_options
        if options.get("nondifferentiable"):
            return None
        if "whole_array" in options and "axis" not in keywords:
            return getattr(inspect.getmodule(template), options["whole_array"])
        return rules.variant(template, {k for k, v in keywords.items() if not _is_none(v)})

    def apply_rule(self, stmt, name, value, template, args, keywords) -> list:
        params = inspect.signature(template).parameters
        primal_inputs = set()
        bound, pre = {}, []
        widening_operands = False
        # each term of a product rule (x_dot @ y + x @ y_dot) has the result's full shape: none widens
        product = cf.primitive_of(value).kind == primitives.LINALG
        result_param = "z" in params and "z" not in args     # `z` is the result unless the primitive has a z
        dense = getattr(template, "rule_options", {}).get("tape", False)   # a tape takes real zeros, never a folded one
        for p in params:
            if p == "z" and result_param:
                continue
            if p.endswith("_dot"):
                operand = args.get(p[:-4], keywords.get(p[:-4]))   # a keyword too (uniform's minval=)
                if dense and p == "tape_dot" and isinstance(operand, cst.Name) and operand.value not in self.active:
                    # a tape first pushed under another name (``s_1 = rt.push(s, v)``, an inlined
                    # gradient's): its tangent tape starts empty here
                    fresh = self.scope.temp()
                    pre.append(cf.assign(fresh, cf.call("rt.stack")))
                    bound[p] = cst.Name(fresh)
                elif operand is not None and (dense or atom_names(operand) & self.active):
                    stmts, tangent = self.tangent_atom(operand, self.shapes.of_value(operand))
                    pre += stmts
                    bound[p] = tangent
                else:
                    bound[p] = cst.Name(self.zero)
                    if operand is not None and self.shapes.of_value(operand) != SCALAR and not product:
                        widening_operands = True        # dropping it may lose the broadcast shape
            elif p in args:
                bound[p] = args[p]
                primal_inputs |= atom_names(args[p])
            elif p in keywords:
                bound[p] = keywords[p]
        out = [stmt]
        hazard = name in primal_inputs                   # `z = np.sin(z)`: the rule reads the old z
        if hazard and result_param:                      # compute the new z aside, then assign it
            fresh = self.scope.temp()
            out = [stmt.with_changes(body=[stmt.body[0].with_changes(targets=[cst.AssignTarget(cst.Name(fresh))])])]
            bound["z"] = cst.Name(fresh)
        elif result_param:
            bound["z"] = cst.Name(name)
        stmts, result = apply_template(self.core, template, bound)
        stmts, result, shape_lost = _fold_zeros(stmts, result, self.zero)
        if isinstance(result, cst.Tuple):
            made, result = self.zero_elements(result, bound.get("z", cst.Name(name)))
            stmts += made
        self.tangent_names |= {s.body[0].targets[0].target.value for s in stmts}
        stmts = pre + self.finish(name, [_strip_default_keywords(s, template) for s in stmts], result,
                                  shape_lost and widening_operands)
        if hazard and result_param:
            return out + self.tag(stmts) + [cf.assign(name, bound["z"])]
        if hazard:
            return self.tag(stmts) + out
        return out + self.tag(stmts)

    def zero_elements(self, result: cst.Tuple, z) -> tuple[list, cst.Tuple]:
        """A tuple-valued rule's tangent with each inactive element (``zero``, left by _fold_zeros)
        made zeros shaped like the result's element: ``(x_dot, 0.0 * ...)`` has no folded form."""
        made, elements = [], []
        for k, element in enumerate(result.elements):
            if isinstance(element.value, cst.Name) and element.value.value == self.zero:
                item, zeros = self.temp(), self.temp()
                made += [cf.assign(item, cst.Subscript(z, [cst.SubscriptElement(cst.Index(cf.literal(k)))])),
                         cf.assign(zeros, cf.call("rt.zeros_like", [cst.Name(item)]))]
                element = element.with_changes(value=cst.Name(zeros))
            elements.append(element)
        return made, result.with_changes(elements=elements)

    def finish(self, name, stmts, result, shape_lost) -> list:
        """The rule's statements, ending in the one that sets ``name``'s tangent."""
        dot = self.dot[name]
        for stmt in stmts:
            small = stmt.body[0]
            self.shapes.tokens[small.targets[0].target.value] = self.shapes.of_value(small.value)
        token, result_token = self.shapes.of_name(name), self.shapes.of_value(result)
        if shape_lost and token != SCALAR and not (result_token == token and token[1] is not None):
            zeros = self.temp()     # the tangent may be smaller than the broadcast result: widen it
            return stmts + [cf.assign(zeros, cf.call("np.zeros_like", [cst.Name(name)])),
                            cf.assign(dot, cst.BinaryOperation(result, cst.Add(), cst.Name(zeros)))]
        targets = [stmt.body[0].targets[0].target.value for stmt in stmts]
        if getattr(result, "value", None) in targets:
            at = targets.index(result.value)        # the rule's temporary holding the result becomes the tangent
            if not any(result.value in atom_names(stmt.body[0].value) for stmt in stmts[at + 1:]):
                return stmts[:at] + [cf.assign(dot, stmts[at].body[0].value)] + stmts[at + 1:]
        if isinstance(result, cst.Name) and result.value in self.dot.values() and name in self.written:
            # a new array whose tangent would alias another's: copy, since `name` is written in place
            return stmts + [cf.assign(dot, cf.call("np.copy", [result]))]
        return stmts + [cf.assign(dot, result)]

    # ------------------------------------------------------------ tangents
    def tangent_atom(self, atom, token) -> tuple[list, cst.BaseExpression]:
        """(statements, atom) for the tangent of ``atom`` (a zero if it is inactive)."""
        if isinstance(atom, cst.Name) and atom.value in self.active:
            return [], cst.Name(self.tangent(atom.value))
        if isinstance(atom, cst.Tuple):
            stmts, parts = [], []
            for element in atom.elements:
                more, part = self.tangent_atom(element.value, self.shapes.of_value(element.value))
                stmts += more
                parts.append(part)
            return stmts, cf.tuple_of(parts)
        if not isinstance(atom, cst.Name):
            return [], cf.literal(0.0)          # a literal or a named constant
        zero = self.temp()
        return self.zero_tangent(atom.value, token, into=zero), cst.Name(zero)

    def zero_tangent(self, name: str, token, into: str) -> list:
        """``into = <zeros shaped like name>``: ``0.0``, or float zeros of its shape."""
        self.tangent_names.add(into)
        if token == SCALAR:
            return [cf.assign(into, cf.literal(0.0))]
        zeros = cf.call("np.zeros_like", [cst.Name(name)])
        if is_array(token):
            return [cf.assign(into, zeros)]
        # rank unknown: zeros_like of a scalar is a 0-d array, and adding 0.0 makes it a float again
        temp = self.temp()
        return [cf.assign(temp, zeros), cf.assign(into, cst.BinaryOperation(cst.Name(temp), cst.Add(), cf.literal(0.0)))]


def _is_none(atom) -> bool:
    return isinstance(atom, cst.Name) and atom.value == "None"


# ------------------------------------------------------------- zero folding
def _fold_zeros(stmts, result, zero: str):
    """Drop what multiplies an inactive tangent (``zero``) from a rule's statements.

    Returns (statements, result atom or None if the tangent is zero, whether
    a sum lost an operand — the tangent may then be smaller than the result).
    """
    zeros, alias, out, shape_lost = {zero}, {}, [], False

    def is_zero(atom):
        return isinstance(atom, cst.Name) and atom.value in zeros

    for stmt in stmts:
        small = stmt.body[0]
        target = small.targets[0].target.value
        value = _substitute(small.value, alias)
        folded = _fold_literals(value)
        if folded is not None:                  # `2 - 1` from a rule with a literal exponent
            alias[target] = folded
            continue
        if not atom_names(value) & zeros:
            out.append(cf.assign(target, value))
            continue
        if isinstance(value, cst.BinaryOperation):
            left, right = is_zero(value.left), is_zero(value.right)
            if isinstance(value.operator, (cst.Add, cst.Subtract)):
                shape_lost = True
                if left and right:
                    zeros.add(target)
                elif right:
                    alias[target] = value.left
                elif isinstance(value.operator, cst.Add):
                    alias[target] = value.right
                else:
                    out.append(cf.assign(target, cst.UnaryOperation(cst.Minus(), value.right)))
                continue
            if isinstance(value.operator, (cst.Multiply, cst.MatrixMultiply)) or \
                    (isinstance(value.operator, cst.Divide) and left and not right):
                zeros.add(target)
                continue
        elif isinstance(value, cst.Call):
            prim = cf.primitive_of(value)
            several = (rules.options("tangent", prim.name) or {}).get("linear_in") if prim else None
            if several is None:                 # linear in its one tangent
                zeros.add(target)
                continue
            tangents = [value.args[prim.params.index(p)].value for p in several]
            if all(is_zero(t) for t in tangents):
                zeros.add(target)
                continue
            shape_lost = True
            args = [a.with_changes(value=cf.literal(0.0)) if is_zero(a.value) else a for a in value.args]
            out.append(cf.assign(target, value.with_changes(args=args)))
            continue
        elif isinstance(value, cst.UnaryOperation) or cf.is_atom(value):
            zeros.add(target)
            continue
        raise AssertionError(f"tangent rule is not linear in its tangents: {cst.Module([]).code_for_node(value)}")
    result = _substitute(result, alias) if result is not None else None
    if isinstance(result, cst.Tuple) and not all(is_zero(el.value) for el in result.elements):
        # a tuple-valued rule (np.linalg.lstsq's): each inactive element stands as `zero` (see finish)
        result = result.with_changes(elements=[el.with_changes(value=cst.Name(zero)) if is_zero(el.value) else el
                                               for el in result.elements])
    return out, (None if result is None or is_zero(result) else result), shape_lost


def _number(atom):
    if isinstance(atom, (cst.Integer, cst.Float)):
        return atom.evaluated_value
    if isinstance(atom, cst.UnaryOperation) and isinstance(atom.operator, cst.Minus) \
            and isinstance(atom.expression, (cst.Integer, cst.Float)):
        return -atom.expression.evaluated_value
    return None


def _fold_literals(value):
    """An atom for ``value`` if it is arithmetic on number literals or ``a ** 1``; else None."""
    if not isinstance(value, cst.BinaryOperation):
        return None
    left, right = _number(value.left), _number(value.right)
    if isinstance(value.operator, cst.Power) and right == 1:
        return value.left
    if left is None or right is None:
        return None
    operation = {cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b,
                 cst.Multiply: lambda a, b: a * b}.get(type(value.operator))
    return cf.literal(operation(left, right)) if operation else None


class _Rename(cst.CSTTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Attribute(self, node):
        return False                 # np.sum, np.pi: never renamed

    def leave_Name(self, original, updated):
        return self.mapping.get(updated.value, updated)

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)


def _substitute(node, mapping):
    if not mapping:
        return node
    changed = node.visit(_Rename(mapping))
    return changed


_DEFAULT_KEYWORDS = {"keepdims": "False"}


def _strip_default_keywords(stmt, template):
    """Drop ``axis=None``, ``keepdims=False``...: a rule's defaults, not what the user wrote.
    A keyword the rule takes is dropped only at the rule's own default (np.concatenate's
    ``axis=None`` is not its default, 0)."""
    small = stmt.body[0]
    value = getattr(small, "value", None)
    if not isinstance(value, cst.Call):
        return stmt
    defaults = {p.name: repr(p.default) for p in inspect.signature(template).parameters.values()
                if p.default is not inspect.Parameter.empty}

    def is_default(arg) -> bool:
        if arg.keyword is None or not isinstance(arg.value, cst.Name):
            return False
        if arg.keyword.value in defaults:
            return arg.value.value == defaults[arg.keyword.value]
        return arg.value.value in ("None", _DEFAULT_KEYWORDS.get(arg.keyword.value))
    args = [a for a in value.args if not is_default(a)]
    return stmt.with_changes(body=[small.with_changes(value=value.with_changes(args=args))])


# ------------------------------------------------------- dead tangent removal
def _prune_dead_tangents(body: list, tangent_names: set[str]) -> list:
    """Remove tangent statements whose value never reaches a returned tangent."""
    depends: dict[str, set] = defaultdict(set)
    roots: set[str] = set()
    for stmt in cf.walk(body):
        small = stmt.body[0]
        if isinstance(small, cst.Return) and small.value is not None:
            roots |= atom_names(small.value) & tangent_names
        elif isinstance(small, cst.Assign):
            target = small.targets[0].target
            base = target.value.value if isinstance(target, cst.Subscript) else target.value
            if base in tangent_names:
                depends[base] |= atom_names(small.value) | (atom_names(target) if isinstance(target, cst.Subscript) else set())
            popped = _popped_tape(small.value)
            if popped in tangent_names:
                depends[popped].add(base)    # a live tape keeps every pop, or its pushes and pops fall out of step
    live, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name not in live:
            live.add(name)
            todo.extend(depends[name] & tangent_names)
    return _keep(body, tangent_names - live, tangent_names)


def _popped_tape(value) -> str | None:
    """The tape ``value`` pops (``rt.pop(s_dot)`` -> ``"s_dot"``), if it is a pop."""
    if cf.tape_operation(value) == "pop" and \
            isinstance(value.args[0].value, cst.Name):
        return value.args[0].value.value
    return None


def _keep(stmts, dead: set[str], tangent_names: set[str]) -> list:
    out, orphan = [], None
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            if _assigned_name(stmt) in dead:
                if any(line.comment for line in stmt.leading_lines):
                    orphan = stmt.leading_lines    # a "# jvp of:" comment moves to the next tangent line
                continue
            if orphan is not None and not any(line.comment for line in stmt.leading_lines) \
                    and _assigned_name(stmt) in tangent_names:
                stmt = stmt.with_changes(leading_lines=orphan)
            orphan = None
            out.append(stmt)
            continue
        orphan = None
        out.append(cf.map_blocks(stmt, lambda block: _keep(block, dead, tangent_names)))
    return out


def _assigned_name(stmt) -> str | None:
    """The variable a simple statement assigns (the array, for a setitem)."""
    small = stmt.body[0]
    if not isinstance(small, cst.Assign):
        return None
    target = small.targets[0].target
    return target.value.value if isinstance(target, cst.Subscript) else target.value
