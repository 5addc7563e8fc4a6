"""Array code on the CUDA target: fused elementwise kernels and a host driver.

The core form already has one operation per statement.  Here each maximal
run of consecutive elementwise statements (arithmetic, comparisons, math
functions, ``np.where``, ``np.clip``, casts, copies) becomes ONE kernel:

    def f_fused0(x, b):                      # the run's code, for one element
        # y = np.tanh(x * 2.0 + b)   [model.py:12]
        _t0 = x * 2.0
        ...
        return (y,)
    f_fused0_device = cuda.jit(device=True)(cu.device_math(f_fused0))

    @cuda.jit
    def f_fused0_kernel(n, x, x_step, b, b_step, y):
        i = cuda.grid(1)                     # one thread per element
        if i < n:
            (y[i],) = f_fused0_device(x[i * x_step], b[i * b_step])

so temporaries of the run never reach memory; only values used after it are
written out.  ``cu.device_math`` compiles the device copy with ``np`` standing
for ``cuda_numpy`` (NumPy's scalar functions as numba-cuda lowers them).  The function itself becomes the *host driver*: plain Python
that launches the kernels in order on device arrays (``cu.elementwise``,
``cu.reduce``, ``cu.matmul`` from ``cuda_runtime``).  The per-element function
is plain NumPy on scalars, so the host also runs it: once on stand-in values
to learn each output's dtype, and outright when a run has no array operand
(shape arithmetic such as ``1.0 / np.sqrt(d)``).

Anything without a CUDA lowering here raises TransformError naming the line.
"""
from __future__ import annotations

import libcst as cst

from .. import core_form as cf
from .. import primitives, rules
from ..core_form import CoreFunction
from ..errors import Location, TransformError
from .per_example import scalar_form

ELEMENTWISE_KINDS = (primitives.UNARY, primitives.BINARY, primitives.COMPARE)


def source(core: CoreFunction) -> str:
    return _Driver(core).write()


def is_elementwise(stmt) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    small = stmt.body[0]
    if not isinstance(small, cst.Assign) or not isinstance(small.targets[0].target, cst.Name):
        return False
    if cf.is_atom(small.value):
        return True
    prim = cf.primitive_of(small.value)
    return prim is not None and is_fused(prim)


def is_fused(prim) -> bool:
    """Whether fused kernels run ``prim``: the "cuda" table gives the driver no strategy for it, and
    it is an elementwise kind or has a scalar form that holds per element (templates/scalar_forms.py)."""
    if rules.options("cuda", prim.name) is not None:
        return False
    return prim.kind in ELEMENTWISE_KINDS or (rules.options("scalar", prim.name) or {}).get("per_element", False)


class _Names(cst.CSTVisitor):
    """Names a node reads (not attribute bases such as ``np``, nor call targets)."""

    def __init__(self):
        self.found: list[str] = []

    def visit_Name(self, node):
        if node.value not in ("True", "False", "None"):
            self.found.append(node.value)

    def visit_Attribute(self, node):
        return False

    def visit_Call(self, node):
        for arg in node.args:
            arg.visit(self)
        return False


def reads(node) -> list[str]:
    visitor = _Names()
    node.visit(visitor)
    return visitor.found


class _Driver:
    def __init__(self, core: CoreFunction):
        self.core = core
        self.scope = core.scope
        self.kernels: list[str] = []
        self.on_device = self.scope.claim("on_device")
        self.origin = None
        self.origin_comment = None
        self.code = cst.Module([]).code_for_node
        self.all_reads = self._reads_per_statement(core.node.body.body)

    # ----------------------------------------------------------- analysis
    def _reads_per_statement(self, stmts) -> list[tuple[object, list[str]]]:
        """(statement, names it reads) for every simple statement and control-flow header."""
        found = []
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                small = stmt.body[0]
                if isinstance(small, cst.Assign):
                    target = small.targets[0].target
                    names = reads(small.value) + (reads(target) if isinstance(target, cst.Subscript) else [])
                else:
                    names = reads(small)
                found.append((stmt, names))
            else:
                header = stmt.test if isinstance(stmt, (cst.If, cst.While)) else stmt.iter
                found.append((stmt, reads(header)))
                for block in cf.blocks(stmt):
                    found += self._reads_per_statement(block)
        return found

    def _read_outside(self, group) -> set[str]:
        ids = {id(s) for s in group}
        return {n for stmt, names in self.all_reads if id(stmt) not in ids for n in names}

    def _where(self) -> Location | None:
        if self.origin is None:
            return None
        return Location(self.core.sources.get(self.origin[0], self.origin[0]), self.origin[1])

    def _refuse(self, what: str):
        raise TransformError(f"{what} has no lowering on the cuda target", self._where(),
                             "use target='cpu' for this function, or write it with elementwise operations, "
                             "sum/mean/max/min and dot/@")

    # ------------------------------------------------------------ writing
    def write(self) -> str:
        params = self.core.params
        entry = [cf.statement(cst.parse_statement(f"{self.on_device} = cu.any_device({', '.join(params)})").body[0],
                              "# arrays from the host are copied to the device once; results go back "
                              "unless the caller passed device arrays")]
        entry += [cf.assign(p, cst.parse_expression(f"cu.device({p})")) for p in params]
        body = self.block(self.core.node.body.body)
        driver = self.core.node.with_changes(body=cst.IndentedBlock([*entry, *body]))
        return "".join(self.kernels) + \
            "# The host driver: launches the kernels above in order; arrays stay on the device.\n" + \
            cst.Module([driver]).code

    def block(self, stmts):
        out, run = [], []
        for stmt in stmts:
            if cf.origin_of(stmt):
                self.origin = cf.origin_of(stmt)
                self.origin_comment = [line.comment.value for line in stmt.leading_lines if line.comment][-1]
            prim = cf.primitive_of(stmt.body[0].value) if isinstance(stmt, cst.SimpleStatementLine) \
                and isinstance(stmt.body[0], cst.Assign) else None
            if prim is not None and not prim.on_device:
                self._refuse(prim.spelling)
            if is_elementwise(stmt):
                if not run and not cf.origin_of(stmt) and self.origin_comment:
                    # the run starts inside a user line whose first operation was not elementwise
                    stmt = cf.with_comment(stmt, self.origin_comment.replace("# ", "# (continued) ", 1))
                run.append(stmt)
                continue
            if run:
                out += self.fuse(run)
                run = []
            out += self.statement(stmt)
        if run:
            out += self.fuse(run)
        return out

    def statement(self, stmt):
        if isinstance(stmt, (cst.If, cst.While)):
            return [cf.map_blocks(stmt, self.block).with_changes(test=_host_value(stmt.test))]
        if isinstance(stmt, cst.For):
            return [cf.map_blocks(stmt, self.block)]
        small = stmt.body[0]
        if isinstance(small, cst.Return) and small.value is not None:
            value = cst.parse_expression(f"cu.result({self.code(small.value)}, {self.on_device})")
            return [stmt.with_changes(body=[small.with_changes(value=value)])]
        if not isinstance(small, cst.Assign) or cf.is_atom(small.value):
            return [stmt]
        if isinstance(small.targets[0].target, cst.Subscript):
            return [stmt]                       # an in-place write: device arrays take it as NumPy does
        prim = cf.primitive_of(small.value)
        return [stmt.with_changes(body=[small.with_changes(value=self.lower(prim, small.value))])]

    def lower(self, prim, value):
        """The driver's expression for one non-elementwise primitive, as its "cuda" rule's strategy
        has it (templates/cuda.py)."""
        rule = rules.options("cuda", prim.name) or {}
        strategy = rule.get("strategy")
        if strategy == "unchanged":
            return value
        if strategy == "host_scalar":
            arg = value.args[0].value
            return value.with_changes(args=[cst.Arg(cst.parse_expression(f"cu.value({self.code(arg)})"))])
        if strategy == "reduction":
            keywords = {key: self.code(atom) for key, atom in cf.keywords(value).items()}
            unknown = set(keywords) - {"axis", "keepdims"}
            if unknown:
                self._refuse(f"{prim.spelling} with {', '.join(sorted(unknown))}=")
            return cst.parse_expression(
                f"cu.reduce({prim.name!r}, {self.code(value.args[0].value)}, axis={keywords.get('axis', 'None')}, "
                f"keepdims={keywords.get('keepdims', 'False')})")
        if strategy == "driver":
            if isinstance(value, cst.BinaryOperation):          # x @ y
                return cst.parse_expression(f"{rule['call']}({self.code(value.left)}, {self.code(value.right)})")
            return value.with_changes(func=cst.parse_expression(rule["call"]))
        if strategy == "host_made":
            return cst.parse_expression(f"cu.device({self.code(value)})")
        self._refuse(f"{prim.spelling}" if not prim.is_operator else f"the operator {prim.spelling}")

    # -------------------------------------------------------------- fusion
    def fuse(self, run):
        assigned, inputs = set(), []
        for stmt in run:
            small = stmt.body[0]
            for n in reads(small.value):
                if n not in assigned and n not in inputs:
                    inputs.append(n)
            assigned.add(small.targets[0].target.value)
        outside = self._read_outside(run)
        outputs = [n for n in _ordered_targets(run) if n in outside]
        if not outputs:
            return []                                           # nothing of the run is used later
        k = len(self.kernels)
        base = self.core.name
        element = self.scope.claim(f"{base}_fused{k}")
        kernel = self.scope.claim(f"{element}_kernel")
        lines = sorted({cf.origin_of(s)[1] for s in run if cf.origin_of(s)} or {0})
        span = f"line {lines[0]}" if len(lines) == 1 else f"lines {lines[0]}-{lines[-1]}"
        file = next((cf.origin_of(s)[0] for s in run if cf.origin_of(s)), "")
        self.kernels.append(self._element_and_kernel(element, kernel, run, inputs, outputs, f"{file} {span}"))
        targets = ", ".join(outputs) + ("," if len(outputs) == 1 else "")
        call = (f"{targets} = cu.elementwise({kernel}, {element}, ({', '.join(inputs)}"
                f"{',' if len(inputs) == 1 else ''}))")
        comment = f"# fused kernel {element}: {span} ({len(run)} elementwise operations, one launch)"
        first_origin = [line for line in run[0].leading_lines if line.comment is not None]
        stmt = cst.parse_statement(call + "\n")
        return [stmt.with_changes(leading_lines=[*first_origin, cst.EmptyLine(comment=cst.Comment(comment))])]

    def _element_and_kernel(self, element, kernel, run, inputs, outputs, span) -> str:
        body = []
        for stmt in run:
            small = stmt.body[0]
            if not cf.is_atom(small.value):
                prim = cf.primitive_of(small.value)
                spelled = scalar_form(prim, [a.value for a in getattr(small.value, "args", ())])
                if spelled is not None:
                    stmt = stmt.with_changes(body=[small.with_changes(value=spelled)])
            body.append(stmt)
        result = cst.parse_statement(f"return ({', '.join(outputs)}{',' if len(outputs) == 1 else ''})\n")
        doc = cst.SimpleStatementLine([cst.Expr(cst.SimpleString(
            f'"""{span}, for one element: the kernel below runs it per element, the host on scalars."""'))])
        fn = cst.FunctionDef(cst.Name(element), cst.Parameters([cst.Param(cst.Name(p)) for p in inputs]),
                             cst.IndentedBlock([doc, *body, result]))
        taken = set(inputs) | {f"{p}_step" for p in inputs} | {f"{o}_out" for o in outputs}
        i, n = _free("i", taken), _free("n", taken)
        loads = ", ".join(f"{p}[{i} * {p}_step]" for p in inputs)
        stores = ", ".join(f"{o}_out[{i}]" for o in outputs) + ("," if len(outputs) == 1 else "")
        kernel_params = ", ".join([n] + [f"{p}, {p}_step" for p in inputs] + [f"{o}_out" for o in outputs])
        return (cst.Module([fn]).code +
                f"# the device copy: the same code, its np.exp, np.sqrt... taken from libdevice (cuda_numpy)\n"
                f"{element}_device = cuda.jit(device=True)(cu.device_math({element}))\n\n\n"
                f"@cuda.jit\n"
                f"def {kernel}({kernel_params}):\n"
                f"    {i} = cuda.grid(1)   # one thread per element; a step of 0 broadcasts a single value\n"
                f"    if {i} < {n}:\n"
                f"        ({stores}) = {element}_device({loads})\n\n\n")


def _free(name: str, taken: set) -> str:
    while name in taken:
        name += "_"
    return name


def _ordered_targets(run) -> list[str]:
    seen = []
    for stmt in run:
        name = stmt.body[0].targets[0].target.value
        if name not in seen:
            seen.append(name)
    return seen


def _host_value(test):
    return cst.parse_expression(f"cu.value({cst.Module([]).code_for_node(test)})")
