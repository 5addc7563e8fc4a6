"""The fence: refuse what we cannot transform, before any transform runs.

One visitor walks the user's function and raises ``TransformError`` at the
first construct outside the supported subset, naming ``file:line:col``, the
construct, and what to write instead.  Nothing behind the fence ever has to
guess, so nothing behind it can silently compute a wrong answer.
"""
from __future__ import annotations

import libcst as cst

from . import jax_names, methods, resolve, walk
from .errors import TransformError
from .source import UserFunction

# node type -> (what it is, what to write instead)
_REFUSED_NODES = {
    cst.Try: ("try/except", "remove it: transformed code cannot catch exceptions"),
    cst.TryStar: ("try/except*", "remove it: transformed code cannot catch exceptions"),
    cst.With: ("a with-statement", "move it outside the transformed function"),
    cst.ClassDef: ("a class definition", "define classes outside transformed functions"),
    # (source.py stands each plain def written inside for a binding of its name: what is left has a
    # decorator or is async)
    cst.FunctionDef: ("a decorated or async def inside a function", "write a plain def, or define it at module level"),
    cst.Global: ("a global statement", "pass the value in as an argument and return the new one"),
    cst.Nonlocal: ("a nonlocal statement", "pass the value in as an argument and return the new one"),
    cst.Import: ("an import inside the function", "import at module level"),
    cst.ImportFrom: ("an import inside the function", "import at module level"),
    cst.Del: ("a del statement", "let the variable go out of use instead"),
    cst.Raise: ("a raise statement", "check inputs before calling the transformed function"),
    cst.Assert: ("an assert statement", "check inputs before calling the transformed function"),
    cst.Yield: ("yield (a generator)", "return an array instead"),
    cst.Await: ("await", "transformed functions are synchronous"),
    # a list or dict comprehension or generator expression over a structure (a list of arrays, zip
    # of two, a dict's items) is unrolled by the normalizer, which refuses one over values known only
    # at run time; a dict display's keys must be known when the function is specialised
    cst.SetComp: ("a set comprehension", "write a for loop"),
    cst.Set: ("a set literal", "use a tuple or an array"),
    cst.NamedExpr: ("an assignment expression (:=)", "assign on its own line"),
    cst.FormattedString: ("an f-string", "transformed functions compute numbers, not text"),
    cst.ConcatenatedString: ("string concatenation", "transformed functions compute numbers, not text"),
    cst.Match: ("a match statement", "use if/elif/else"),
}

# Operators with no primitive: shifts of integers.
_REFUSED_OPERATORS = {
    cst.LeftShift: "<<", cst.RightShift: ">>", cst.LeftShiftAssign: "<<=", cst.RightShiftAssign: ">>=",
}

_REFUSED_COMPARISONS = {
    cst.Is: "is", cst.IsNot: "is not", cst.In: "in", cst.NotIn: "not in",
}

def _is_none_test(node: cst.Comparison) -> bool:
    """``x is None`` or ``x is not None``: one comparison, with None on one side."""
    if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, (cst.Is, cst.IsNot)):
        return False
    sides = (node.left, node.comparisons[0].comparator)
    return any(isinstance(side, cst.Name) and side.value == "None" for side in sides)


# Array attributes the core form can express (besides methods).
_ARRAY_ATTRIBUTES = set(methods.ATTRIBUTES)


class Fence(cst.CSTVisitor):
    def __init__(self, uf: UserFunction, helper: bool = False):
        self.uf = uf
        self.helper = helper    # a function inlined into its caller, which binds its arguments by name
        self.locals = uf.local_names
        self._depth = 0  # nesting depth of FunctionDef nodes
        self._for_iters: set = set()
        self._at_updates: set = set()      # the x.at of each x.at[i].op(v)
        # Names and attributes not read as values; a call's callee and keyword names are added on the way.
        self._not_values: set = not_loaded_nodes(uf.node)
        self._transform_calls: set = set()      # tr.grad(f) inside tr.grad(f)(x): checked as a whole
        # names bound once to a lambda, or to a def written inside (as source.py stands it: its def)
        self._lambda_bound = {name: uf.parsed.nested_defs.get(assign.value, assign.value)
                              for name, assign in _single_assignments(uf.node).items()
                              if isinstance(assign.value, cst.Lambda) or assign.value in uf.parsed.nested_defs}

    def refuse(self, node, what: str, hint: str):
        raise TransformError(f"{what} is not supported in transformed functions",
                             self.uf.location(node), hint)

    def on_visit(self, node) -> bool:
        if isinstance(node, cst.FunctionDef):
            self._depth += 1
            if self._depth == 1:
                self._check_signature(node)
                return True
        entry = _REFUSED_NODES.get(type(node))
        if entry is not None:
            self.refuse(node, *entry)
        return super().on_visit(node)

    def on_leave(self, original_node) -> None:
        if isinstance(original_node, cst.FunctionDef):
            self._depth -= 1
        super().on_leave(original_node)

    def _check_signature(self, node: cst.FunctionDef):
        if node.asynchronous:
            self.refuse(node, "an async function", "write an ordinary def")
        params = node.params
        if isinstance(params.star_arg, cst.Param):
            self.refuse(params.star_arg, "*args", "list the parameters one by one, or pass a tuple")
        if params.star_kwarg is not None:
            self.refuse(params.star_kwarg, "**kwargs", "list the parameters one by one, or pass a dict")
        if params.kwonly_params and not self.helper:
            # compiled functions take positional arguments only (an inlined helper's are bound by name)
            self.refuse(params.kwonly_params[0], "a keyword-only parameter",
                        "make it an ordinary parameter (drop the bare *)")
        if params.posonly_params:
            self.refuse(params.posonly_params[0], "a positional-only parameter (before /)",
                        "make it an ordinary parameter (drop the /)")

    # --- statements -----------------------------------------------------------
    def visit_For(self, node: cst.For):
        if node.asynchronous:
            self.refuse(node, "async for", "write an ordinary for loop")
        it = node.iter
        if isinstance(it, cst.Call):
            r = resolve.resolve(it.func, self.uf.lookup, self.locals)
            if r.kind == "loop":
                self._for_iters.add(it)
                if r.value == "range" and not 1 <= len(it.args) <= 3:
                    self.refuse(it, "range() with this many arguments", "use range(stop), range(start, stop) or range(start, stop, step)")
                if r.value == "enumerate" and len(it.args) != 1:
                    self.refuse(it, "enumerate() with a start argument", "add the offset to the index yourself")
                if r.value == "zip" and len(it.args) < 1:
                    self.refuse(it, "zip() of nothing", "zip one or more arrays")
                if any(arg.keyword is not None or arg.star for arg in it.args):
                    self.refuse(it, "keyword or starred arguments to a loop builtin", "pass positional arguments")
                if r.value in ("enumerate", "zip") and not isinstance(node.target, cst.Tuple):
                    self.refuse(node.target, f"a single loop variable over {r.value}()", "unpack it: for i, v in ...")
                if r.value == "reversed":
                    self._check_reversed(it, node.target)
            elif _is_dict_view(it):
                self._for_iters.add(it)   # d.items() of a dict argument: unrolled (normalize refuses others)
            elif isinstance(node.iter, cst.Call):
                pass  # an array produced by a call: iterate over its rows
        target = node.target
        if not isinstance(target, (cst.Name, cst.Tuple)):
            self.refuse(target, "this loop target", "loop over a plain name")

    def visit_CompFor(self, node: cst.CompFor):
        # a comprehension's zip(), enumerate() or range() is a loop builtin in its place (the
        # normalizer unrolls it, or refuses it when its length is known only at run time)
        it = node.iter
        if _is_dict_view(it) or isinstance(it, cst.Call) and \
                resolve.resolve(it.func, self.uf.lookup, self.locals).kind == "loop":
            self._for_iters.add(it)

    def _check_reversed(self, it: cst.Call, target):
        """``reversed(x)`` (rows from the last) or ``reversed(range(...))``, one argument."""
        if len(it.args) != 1:
            self.refuse(it, "reversed() of other than one argument", "pass one array, or one range()")
        inner = it.args[0].value
        r = resolve.resolve(inner.func, self.uf.lookup, self.locals) if isinstance(inner, cst.Call) else None
        if r is None or r.kind != "loop":
            return
        if r.value != "range":
            self.refuse(inner, f"reversed() of {r.value}()", "loop over reversed(range(len(x))) and index")
        self._for_iters.add(inner)
        if not 1 <= len(inner.args) <= 2:
            self.refuse(inner, "reversed() of a range with a step", "write the range with a negative step: "
                        "range(stop - 1, start - 1, -1)")
        if not isinstance(target, cst.Name):
            self.refuse(target, "reversed(range()) unpacked", "loop over a plain name")

    def visit_AssignTarget(self, node: cst.AssignTarget):
        self._check_target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign):
        self._check_target(node.target)
        self._check_operator(node, node.operator)
        if isinstance(node.target, (cst.Tuple, cst.List)):
            self.refuse(node.target, "augmented assignment to a tuple", "assign each name on its own")

    def visit_AnnAssign(self, node: cst.AnnAssign):
        self._check_target(node.target)

    def _check_target(self, target):
        if isinstance(target, cst.Attribute):
            self.refuse(target, "assignment to an attribute (object state)",
                        "return the new value instead of storing it on an object")
        if isinstance(target, cst.Subscript):
            if isinstance(target.value, cst.Subscript):
                self.refuse(target, "assignment through a chained subscript x[i][j]", "write x[i, j] = ...")
            if not isinstance(target.value, cst.Name):
                self.refuse(target, "assignment into an expression", "assign into a named array")
            elif target.value.value not in self.locals:
                self.refuse(target, f"writing into the global {target.value.value!r}",
                            "pass the array in as an argument")
        if isinstance(target, cst.StarredElement):
            self.refuse(target, "starred assignment", "unpack each element by index")
        if isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                if isinstance(el, cst.StarredElement):   # a, *rest = x
                    self.refuse(el, "starred assignment", "unpack each element by index")
                self._check_target(el.value)

    # --- expressions ----------------------------------------------------------
    def visit_BinaryOperation(self, node: cst.BinaryOperation):
        self._check_operator(node, node.operator)

    def _check_operator(self, node, operator):
        token = _REFUSED_OPERATORS.get(type(operator))
        if token is not None:
            self.refuse(node, f"the shift operator {token}", "use * and // by powers of two on integers")

    def visit_Name(self, node: cst.Name):
        if node not in self._not_values:
            self._check_value_use(node)

    def visit_Comparison(self, node: cst.Comparison):
        if _is_none_test(node):     # decided when the function is specialized (normalize.comparison)
            return
        for target in node.comparisons:
            word = _REFUSED_COMPARISONS.get(type(target.operator))
            if word is not None:
                self.refuse(node, f"the '{word}' comparison", "compare values with == / != / < ...")

    def visit_Call(self, node: cst.Call):
        for arg in node.args:
            if arg.star:
                self.refuse(arg, f"{arg.star}-unpacking in a call", "pass the arguments one by one")
        self._not_values.add(node.func)
        update = methods.at_update(node)
        if update is not None:          # x.at[i].set(v): JAX's functional update, made a copy and a write
            self._at_updates.add(node.func.value.value)
            self._not_values.add(node.func.value.value)
            return
        self._not_values.update(arg.keyword for arg in node.args if arg.keyword is not None)
        if node in self._for_iters or node in self._transform_calls:
            return
        func = node.func
        # What a name, an entry or an expression called holds (a lambda, a function named, a choice or
        # a table of them, a helper's result) is known when the function is specialised: normalize
        # calls it, or refuses a value called, at this line.  Lambdas' bodies are checked here.
        if isinstance(func, (cst.Lambda, cst.IfExp, cst.Subscript)) or \
                isinstance(func, cst.Name) and func.value in self.locals:
            return
        if isinstance(func, cst.Call):     # tr.grad(loss)(w, x): a transform applied in the code
            self._check_transform_call(func)
            return
        if isinstance(func, cst.Attribute):
            if _is_dict_view(node) and isinstance(func.value, cst.Name) and \
                    resolve.resolve(func.value, self.uf.lookup, self.locals).kind == "constant":
                return                  # CONFIG.items(): a global dict, read when transformed
            r = resolve.resolve(func, self.uf.lookup, self.locals)
            # x.sum() on a local, or (a + b).sum() on any expression: a method of an array
            if r.kind == "local" or resolve.dotted_name(func.value) is None:
                if func.attr.value not in methods.METHODS and not _is_dict_view(node):
                    self.refuse(func, f"the method .{func.attr.value}()",
                                "call the NumPy function instead (np.f(x) rather than x.f())")
                return
        else:
            r = resolve.resolve(func, self.uf.lookup, self.locals)
        self._check_callee(node, r)

    def _check_transform_call(self, func: cst.Call):
        """``tr.grad(loss, argnums=1)``, made inside the code to be called (or given to tr.jvp): a
        transform that transformed code applies, to a function or a lambda, with literal options."""
        first = func.args[0].value if func.args else None
        # tr.grad(lambda q: ...)(p): the lambda's body is checked where it is written; a stand-in
        # function lets the transform's options be checked here (normalize makes the real one)
        written = self._lambda_bound.get(first.value) if isinstance(first, cst.Name) else first
        given = {first: _stand_in(written)} if isinstance(written, (cst.Lambda, cst.FunctionDef)) else None
        if given is None and isinstance(first, cst.Name) and first.value in self.locals:
            # a parameter, or a variable of the code around a def written inside, may hold a function
            # passed in: normalize knows which (and refuses a value there)
            given = {first: _stand_in(None)}
        try:
            made = resolve.transform_of_call(func, self.uf.lookup, self.locals, given)
        except (ValueError, TypeError) as err:
            self.refuse(func, f"this transform call ({err})", "write tr.grad(f, argnums=...) with literals")
        if made is None:
            named = resolve.transform_named(func.func, self.uf.lookup, self.locals)
            if named is not None:
                self.refuse(func, f"tr.{named}", _INSIDE_HINT)
            return      # make_step(0.1)(x): normalize calls what the helper returns, or refuses a value
        self._transform_calls.add(func)
        self._not_values.update(arg.value for arg in func.args)
        for arg in func.args:        # tr.vmap(tr.grad(f), in_axes=...): the transform made in place
            if isinstance(arg.value, cst.Call) and resolve.transform_named(arg.value.func, self.uf.lookup, self.locals):
                self._check_transform_call(arg.value)

    def _check_callee(self, node, r: resolve.Resolved):
        named = resolve.transform_named(node.func, self.uf.lookup, self.locals)
        if named in resolve.INLINED_CALLS:      # tr.jvp(f, primals, tangents): normalize inlines it
            self._not_values.update(arg.value for arg in node.args[:1])
            if node.args and isinstance(node.args[0].value, cst.Call):     # tr.jvp(tr.grad(f), ...)
                self._check_transform_call(node.args[0].value)
            return
        if named is not None:
            self.refuse(node, f"tr.{named}(...)", _INSIDE_HINT)
        name = r.dotted or self._code(node.func)
        if r.kind == "unknown":
            owner = resolve.resolve(node.func.value, self.uf.lookup, self.locals) \
                if isinstance(node.func, cst.Attribute) else None
            if owner is not None and owner.kind == "module" and owner.value.__name__.startswith("transformer"):
                # jax.lax.dynamic_slice with `import transformer as jax`: say what to use instead
                module = owner.value.__name__.removeprefix("transformer").lstrip(".")
                raise TransformError(f"{name}: {jax_names.missing(module, node.func.attr.value)}",
                                     self.uf.location(node))
            raise TransformError(f"name {name!r} is not defined", self.uf.location(node))
        if r.kind == "loop":
            self.refuse(node, f"{name}() outside a for statement", f"use {name}() only as a for loop's iterable")
        if r.kind in ("primitive", "user"):
            if r.kind == "primitive" and r.value in (max, min) and len(node.args) != 2:
                # Python's max(a, b) is np.maximum; of one iterable or of three values it is no primitive
                self.refuse(node, f"{name}() of other than two values", f"use np.{r.value.__name__}(x) for an array")
            return
        if r.kind == "dtype":
            return  # np.float32(x): a cast
        if r.kind == "node":
            return  # Dense(W, b): a named tuple or registered dataclass built (normalize binds its fields)
        if r.kind == "library":
            self.refuse(node, f"a call to {name} (a function of the installed package "
                        f"{resolve.installed_package(r.value)}), which has no registered primitive; transformer "
                        f"differentiates and compiles its primitives, and never inlines a library's source",
                        "write it with NumPy functions (for example logsumexp as m + np.log(np.sum(np.exp(x - m)))), "
                        "or make the call outside the transformed function and pass its result in")
        self.refuse(node, f"a call to {name} ({_describe(r.value)}), which is neither a supported "
                    f"primitive nor a Python function with source",
                    "use a NumPy function from transformer/primitives.py, or make the call outside "
                    "the transformed function and pass its result in")

    def visit_Attribute(self, node: cst.Attribute):
        if node in self._at_updates:
            return True
        if resolve.dotted_name(node) is None:
            return True     # an attribute of a computed value, (a + b).T: checked on leaving, after the value
        if node not in self._not_values:
            self._check_value_use(node)
        r = resolve.resolve(node, self.uf.lookup, self.locals)
        # params.W on a local: a field of a pytree argument (a named tuple, a registered class) or
        # an array attribute; which one is known when the function is specialised (normalize.py)
        return False if r.kind != "local" else True

    def leave_Attribute(self, node: cst.Attribute):
        if node in self._at_updates or isinstance(node.value, cst.Subscript) and node.value.value in self._at_updates:
            return
        if isinstance(node.value, (cst.Dict, cst.Subscript)) and node.attr.value in ("items", "keys", "values"):
            return      # {"s": np.sin, ...}.items(), p["layers"].items(): normalize unrolls a loop over it, or refuses
        if resolve.dotted_name(node) is None and node.attr.value not in methods.METHODS \
                and node.attr.value not in _ARRAY_ATTRIBUTES:
            self.refuse(node, f"the attribute .{node.attr.value}",
                        "use a supported array attribute (T, shape, ndim, size) or method")

    def _check_value_use(self, node):
        """A free name read as a value must be a constant: not a function, not mutable state."""
        r = resolve.resolve(node, self.uf.lookup, self.locals)
        if r.dotted in resolve.NAMED_CONSTANTS or r.dotted in ("True", "False", "None") or resolve.is_newaxis(r):
            return
        if r.kind == "primitive" and isinstance(r.primitive.impl, type):
            return  # float, int or bool as a dtype, as in x.astype(float)
        # a function named (act = np.tanh, [np.sin, np.cos]) is bound, kept or passed as Python does;
        # normalize refuses one used as a value, as an operand or an array, at its line
        if r.kind == "library":
            self.refuse(node, f"the function {r.dotted} used as a value",
                        "call it here; transformed code passes only numbers, arrays and tuples around")
        if r.kind == "module":
            self.refuse(node, f"the module {r.dotted} used as a value", "call one of its functions instead")
        if r.kind == "other" and isinstance(r.value, (tuple, list)) and any(callable(v) for v in r.value):
            self.refuse(node, f"the global {r.dotted!r}, a {type(r.value).__name__} of functions, used as a value",
                        "write the functions in the call that takes them, as lax.switch(i, [f, g], x) does")
        if r.kind == "other":
            self.refuse(node, f"reading the global {r.dotted!r}, a {type(r.value).__name__} (mutable state)",
                        "pass it in as an argument, or make it a tuple or a NumPy array constant")

    def visit_Subscript(self, node: cst.Subscript):
        for element in node.slice:
            if isinstance(element.slice, cst.Index) and element.slice.star is not None:
                self.refuse(element, "a starred index", "index with a tuple variable instead")

    @staticmethod
    def _code(node) -> str:
        return cst.Module([]).code_for_node(node)


_INSIDE_HINT = ("call it outside the transformed function and pass its result in; inside one, every "
                "transform but tr.custom_vjp and tr.custom_jvp applies")


def _stand_in(lam):
    """A function of the lambda's (or a def's) arity, which a lambda given to a transform inside
    transformed code stands for while the fence checks the transform's options (normalize makes the
    real one).  None: a function not known here, of any arity up to 32."""
    names = [f"p{k}" for k in range(len(lam.params.params) if lam is not None else 32)]
    return eval(f"lambda {', '.join(names)}: None")     # noqa: S307  (made of the names above)


def _describe(value) -> str:
    mod = getattr(value, "__module__", None) or type(value).__module__
    kind = type(value).__name__
    return f"a {kind} from {mod}" if mod else f"a {kind}"


def _is_dict_view(node) -> bool:
    """``d.items()``, ``d.keys()`` or ``d.values()``: what a loop over a dict (an argument, or a dict
    of functions written in the code) runs over."""
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not node.args \
        and node.func.attr.value in ("items", "keys", "values") \
        and isinstance(node.func.value, (cst.Name, cst.Dict, cst.Subscript))


def _single_assignments(func: cst.FunctionDef) -> dict:
    """Each name assigned exactly once, by an assignment to it alone: name -> that Assign."""
    assigned: dict = {}
    for node in walk.nodes(func):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    assigned.setdefault(target.target.value, []).append(node)
    return {name: assigns[0] for name, assigns in assigned.items()
            if len(assigns) == 1 and len(assigns[0].targets) == 1}


def not_loaded_nodes(func: cst.FunctionDef) -> set:
    """The names and attributes in ``func`` that are not read as values: what
    is assigned or deleted, an attribute's own name (``shape`` in ``x.shape``),
    and the names of parameters and definitions.

    Every other ``Name`` and ``Attribute`` is a load, as libcst's
    ExpressionContextProvider would say; collected in one plain walk, without
    the metadata machinery (a few milliseconds a function).
    """
    skipped: set = set()
    for node in walk.nodes(func):
        if isinstance(node, cst.Attribute):
            skipped.add(node.attr)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Param, cst.AsName)):
            _stored(node.name, skipped)
        elif isinstance(node, _ASSIGNING):
            _stored(node.target, skipped)
    return skipped


# nodes whose .target is written (or deleted)
_ASSIGNING = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.CompFor, cst.Del)


def _stored(target, skipped: set) -> None:
    """A store target: the whole of it, down through tuples, lists and stars;
    the value and index of ``a.b`` or ``a[i]`` inside it are still read."""
    if isinstance(target, (cst.Name, cst.Attribute, cst.Subscript)):
        skipped.add(target)
    elif isinstance(target, (cst.Tuple, cst.List)):
        skipped.add(target)
        for element in target.elements:
            _stored(element.value, skipped)
    elif isinstance(target, cst.StarredElement):
        skipped.add(target)
        _stored(target.value, skipped)


def check(uf: UserFunction, helper: bool = False) -> None:
    """Raise ``TransformError`` at the first unsupported construct in ``uf`` (``helper``: a
    function called from transformed code and inlined there, which may take keyword-only
    parameters).

    Most code passes, so the fence first asks only whether anything is
    refused, in a plain walk (``walk.visit``: about a third of libcst's
    visit).  Only then does libcst's visit, in source order, find the first
    refusal, the one the message names.
    """
    try:
        walk.visit(uf.node, Fence(uf, helper))
    except Exception:
        uf.node.visit(Fence(uf, helper))
        raise
