"""vmap on the CUDA target: one thread per example, running the un-batched code.

``vmap`` as a source transform writes array code with a batch axis (the
right thing for NumPy and the CPU).  On a GPU, per-example *scalar* code —
loops, branches, a data-dependent ``while`` — runs best as it was written,
with one thread per example.  So when ``vmap`` is the outermost step of a
chain compiled for ``target="cuda"``, the backend takes that step over
(``take_last_step``): the core form of the function *before* vmap becomes the
body of a kernel, and each thread reads its example's arguments, runs the
body, and writes its results.

Reverse mode's tapes become fixed-size local arrays (``TAPE_CAPACITY``
values each, float64); a loop that pushes more sets a flag and the host
raises.  Cotangent helpers reduce to their scalar meaning (``rt.zeros_like(x)``
is ``0.0``: the "scalar" table of templates/scalar_forms.py).  Code using anything else (array creation, reductions,
in-place writes) is not per-example scalar code: the step is left to the
ordinary vmap transform, and the array path compiles it.
"""
from __future__ import annotations

import libcst as cst

from .. import core_form as cf
from .per_example import PerExampleVmap, return_arity, scalar_form

TAPE_CAPACITY = 256

# ------------------------------------------------------------------ writing
def source(core: PerExampleVmap) -> str:
    """The kernel, the plain one-example function, and the host driver named ``core.name``."""
    name = core.name
    scope = core.scope
    kernel_name = scope.claim(f"{name}_kernel")
    one_name = scope.claim(f"{name}_one_example")
    example = scope.claim("example")
    n_examples = scope.claim("n_examples")
    status = scope.claim("status")
    params = core.params
    in_axes = core.in_axes[-len(params):] if params else ()
    batched = {p: scope.claim(f"{p}_batch") for p, axis in zip(params, in_axes) if axis is not None}
    outs = [scope.claim(f"result{k}") for k in range(return_arity(core.node.body.body))]

    writer = _KernelBody(scope, example, outs, status)
    body = writer.block(core.node.body.body)
    head = [cf.statement(cst.parse_statement(f"{example} = cuda.grid(1)").body[0],
                         "# this thread's example"),
            cst.parse_statement(f"if {example} >= {n_examples}:\n    return\n")]
    head += [cf.assign(p, cst.parse_expression(f"{batched[p]}[{example}]")) for p in params if p in batched]
    kernel_params = [n_examples] + [batched.get(p, p) for p in params] + outs + [status]
    kernel = cst.FunctionDef(
        name=cst.Name(kernel_name),
        params=cst.Parameters([cst.Param(cst.Name(p)) for p in kernel_params]),
        body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Expr(cst.SimpleString(
            f'"""{name}: one thread per example runs the code below on its own arguments."""'))]),
            *head, *body]),
        decorators=[cst.Decorator(cst.parse_expression("cuda.jit")),
                    cst.Decorator(cst.parse_expression("cu.device_math"))])
    one = core.node.with_changes(name=cst.Name(one_name))
    axes = ", ".join(repr(a) for a in in_axes) + ("," if len(in_axes) == 1 else "")
    driver = cst.parse_statement(
        f"def {name}({', '.join(params)}):\n"
        f"    return cu.run_examples({kernel_name}, {one_name}, ({', '.join(params)}{',' if len(params) == 1 else ''}),"
        f" in_axes=({axes}))\n")
    parts = []
    if writer.uses_tapes:
        parts.append(f"TAPE_CAPACITY = {TAPE_CAPACITY}   # values per reverse-mode tape, per thread\n\n\n")
    parts.append(cst.Module([kernel]).code)
    parts.append("\n\n# The same code as plain Python: the host runs it for the first example only, to learn\n"
                 "# the number and dtypes of the results.\n")
    parts.append(cst.Module([one]).code)
    parts.append("\n\n# vmap over the device: copy the arguments there, launch one thread per example.\n")
    parts.append(cst.Module([driver]).code)
    return "".join(parts)


class _KernelBody:
    """Per-example core form -> kernel statements (tapes, returns and helpers rewritten)."""

    def __init__(self, scope, example, outs, status):
        self.scope, self.example, self.outs, self.status = scope, example, outs, status
        self.tape_sizes: dict[str, str] = {}
        self.uses_tapes = False

    def block(self, stmts):
        out = []
        for stmt in stmts:
            out.extend(self.statement(stmt))
        return out

    def statement(self, stmt):
        if isinstance(stmt, cst.SimpleStatementLine):
            new = self.simple(stmt.body[0])
            if new is None:
                return [stmt]
            new = [s if isinstance(s, cst.BaseStatement) else cst.SimpleStatementLine([s]) for s in new]
            new[0] = new[0].with_changes(leading_lines=stmt.leading_lines)
            return new
        return [cf.map_blocks(stmt, self.block)]

    def simple(self, small):
        if isinstance(small, cst.Return):
            values = small.value.elements if isinstance(small.value, cst.Tuple) else [cst.Element(small.value)]
            writes = [cst.parse_statement(f"{out}[{self.example}] = 0").body[0].with_changes(value=v.value)
                      for out, v in zip(self.outs, values)]
            return writes + [cst.Return()]
        if not isinstance(small, cst.Assign) or cf.is_atom(small.value):
            return None
        prim = cf.primitive_of(small.value)
        target = small.targets[0].target.value
        args = [a.value for a in getattr(small.value, "args", ())]
        code = cst.Module([]).code_for_node
        if prim.tape == "new":
            self.uses_tapes = True
            size = self.tape_sizes[target] = self.scope.claim(f"{target}_size")
            return [_parse(f"{target} = cuda.local.array(TAPE_CAPACITY, np.float64)"), _parse(f"{size} = 0")]
        if prim.tape == "push":
            tape = code(args[0])
            size = self.tape_sizes[tape]
            return [_parse(f"{size} = tape_push({tape}, {size}, {code(args[1])}, {self.status})")]
        if prim.tape == "pop":
            tape = code(args[0])
            size = self.tape_sizes[tape]
            return [_parse(f"{size} = {size} - 1"), _parse(f"{target} = tape_peek({tape}, {size})")]
        if prim.tape == "top":
            tape = code(args[0])
            return [_parse(f"{target} = tape_peek({tape}, {self.tape_sizes[tape]} - 1)")]
        spelled = scalar_form(prim, args)
        if spelled is None:
            return None
        return [_parse(f"{target} = {code(spelled)}")]


def _parse(text: str) -> cst.BaseSmallStatement:
    return cst.parse_statement(text + "\n").body[0]
