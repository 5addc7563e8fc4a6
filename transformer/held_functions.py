"""What a name can stand for in transformed code besides a value: a function.

A function is a value only while a function is specialised (normalize.py binds, keeps, passes and
loops over them as Python does), never at run time: each call of one is written out where it is
called.  These are the kinds of function normalize holds, each with the ``call`` that writes its
call into the caller (normalize.py's ``_Normalizer``):

- ``LocalLambda``: a lambda written in the code, inlined in the scope it was written in;
- ``LocalDef``: a def written in the code (``def step(carry, x): ...``), inlined where it is called;
- ``PassedFunction``: a function named (``act = np.tanh``, a helper's name passed on);
- ``FunctionChoice``: one of two chosen at run time (``f if c else g``, ``fs[k]``): an if statement;
- ``PulledBack``: the function ``tr.vjp`` returns inside transformed code;
- ``PushedForward``: the function ``tr.linearize`` returns there;
- ``FunctionTuple``: a tuple, list or dict holding functions (and values beside them), read by key.
"""
from __future__ import annotations

import dataclasses
import types
from typing import TYPE_CHECKING

import libcst as cst

from . import core_form as cf
from . import resolve, walk

if TYPE_CHECKING:
    from .normalize import _Normalizer


@dataclasses.dataclass
class LocalLambda:
    """A lambda written in transformed code; each call inlines its body in the
    scope it was written in (``home``), its parameters bound to the call's atoms.
    Reading the enclosing variables when called is Python's late binding; its
    defaults were read where it was written, as Python reads them."""
    node: cst.Lambda
    home: "_Normalizer"
    defaults: dict = dataclasses.field(default_factory=dict)   # parameter -> atom or function
    frame: dict = dataclasses.field(default_factory=dict)      # an enclosing lambda's parameters, as bound

    @classmethod
    def written(cls, node: cst.Lambda, home: "_Normalizer") -> "LocalLambda":
        params = node.params
        if params.posonly_params or params.star_kwarg:
            raise home.error(node, "a lambda with / or ** parameters", "give it plain, *args or keyword "
                                   "parameters, or write a def at module level")
        defaults = {}
        for param in [*params.params, *params.kwonly_params]:
            if param.default is not None:
                defaults[param.name.value] = home.snapshot(home.operand(param.default))
        return cls(node, home, defaults, dict(home.frame))

    def call(self, caller: "_Normalizer", call: cst.Call):
        params = self.node.params
        names = [p.name.value for p in params.params]
        star = params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
        positional = [caller.argument(a.value) for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a for a in call.args if a.keyword is not None}
        if len(positional) > len(names) and star is None:
            raise caller.error(call, f"this lambda takes {len(names)} positional arguments but got {len(positional)}")
        bound = dict(zip(names, positional))
        if star is not None:
            rest = positional[len(names):]
            bound[star] = FunctionTuple(rest, tuple(range(len(rest)))) \
                if any(isinstance(a, FUNCTIONS) for a in rest) else cf.tuple_of(rest)
        allowed = names + [p.name.value for p in params.kwonly_params]
        for key, arg in keywords.items():
            if key not in allowed or key in bound:
                raise caller.error(arg, f"this lambda has no parameter {key!r}" if key not in allowed
                                   else f"this lambda got two values for {key!r}")
            bound[key] = caller.argument(arg.value)
        for name in allowed:
            if name not in bound:
                if name not in self.defaults:
                    raise caller.error(call, f"this lambda is missing the argument {name!r}")
                bound[name] = self.defaults[name]
        if any(isinstance(n, cst.Lambda) for n in walk.nodes(self.node.body)):
            # lambda a: (lambda v: v * a): the inner one keeps this call's arguments as they are now
            bound = {name: caller.snapshot(atom) for name, atom in bound.items()}
        frame = {**self.frame, **bound}
        home = self.home
        # its statements go where it is called, under the caller's comment for that line
        pending, caller.comment = caller.comment, None
        saved = home.substitute, home.lambdas, home.out, home.comment, home.frame
        home.substitute, home.lambdas, home.frame = dict(home.substitute), dict(home.lambdas), frame
        for name, atom in frame.items():
            home.substitute.pop(name, None)
            home.lambdas.pop(name, None)
            (home.lambdas if isinstance(atom, FUNCTIONS) else home.substitute)[name] = atom
        home.out, home.comment = caller.out, pending
        try:
            return home.bindable(self.node.body)      # a lambda may return a function: lambda: np.sin
        finally:
            leftover = home.comment
            home.substitute, home.lambdas, home.out, home.comment, home.frame = saved
            caller.comment = leftover


def function_of(code: types.CodeType, globals_: dict) -> types.FunctionType:
    """The function of a def written inside another, made from its code; its free variables' cells
    are left empty, for what they hold is passed to it as parameters (LocalDef)."""
    fn = types.FunctionType(code, globals_, code.co_name, None, tuple(types.CellType() for _ in code.co_freevars))
    fn.__qualname__ = code.co_qualname
    return fn


@dataclasses.dataclass
class LocalDef:
    """A def written in transformed code (``def step(carry, x): ...``, passed to lax.scan): each
    call inlines its body where it is called.  ``fn`` is made from the def's code, with the variables
    of the enclosing function it reads (its code's free variables) as keyword-only parameters after
    its own (``__transformer_enclosed__``, source.load): each call passes what they hold in ``home``, the scope it was
    written in, as it is called, which is when Python reads them.  Its defaults were read where it
    was written, as Python reads them."""
    fn: types.FunctionType
    home: "_Normalizer"
    defaults: dict          # parameter -> atom or function

    @classmethod
    def written(cls, node: cst.FunctionDef, line: int, home: "_Normalizer") -> "LocalDef":
        name = node.name.value
        enclosing = home.uf.fn.__code__
        codes = [c for c in enclosing.co_consts if isinstance(c, types.CodeType) and c.co_name == name]
        code = next((c for c in codes if c.co_firstlineno == line), codes[0] if len(codes) == 1 else None)
        if code is None:
            raise home.error(node, f"cannot find the code of the def {name!r} in {home.uf.name}'s "
                                   f"(was the file edited since it was imported?)")
        fn = function_of(code, home.uf.globals)
        fn.__transformer_enclosed__ = code.co_freevars
        params = node.params
        defaults = {}
        for param in [*params.params, *params.kwonly_params]:
            if param.default is not None:
                defaults[param.name.value] = home.snapshot(home.operand(param.default))
        return cls(fn, home, defaults)

    def call(self, caller: "_Normalizer", call: cst.Call):
        return caller.inline_local_def(call, self)


@dataclasses.dataclass
class PassedFunction:
    """A function passed by name to a helper (``lax.fori_loop(0, n, step, x)``): each call of the
    parameter that holds it inlines it (or applies it, for a primitive) where the helper calls it."""
    resolved: resolve.Resolved

    def call(self, caller: "_Normalizer", call: cst.Call):
        if self.resolved.kind == "primitive":
            return caller.primitive_call(call, self.resolved.primitive, list(call.args))
        return caller.inline(call, self.resolved.value, discard=False)


@dataclasses.dataclass
class FunctionTuple:
    """A list, tuple or dict holding functions: lax.switch's branches passed to its definition, a
    table written in the code (``ops = {"sq": lambda v: v * v}``), or functions kept with values
    (``pair = (x, lambda v: v * v)``).  It exists only while the function is specialised: ``name[k]``,
    with ``k`` known then, is the entry under key ``k``, a function to call or an atom to read."""
    entries: list               # functions (see FUNCTIONS), and atoms for the values among them
    keys: tuple
    by_key: bool = False        # a dict's: looked up by key, never by position


@dataclasses.dataclass
class FunctionChoice:
    """A function chosen at run time by a conditional expression (``act = np.tanh if c else
    (lambda v: v)``), or by a key known only at run time (``fs[k]``, a chain of them): each call is
    written as an if statement on the test, as read where the choice was made, with the call of
    either function in its branch."""
    test: cst.Name
    if_true: object
    if_false: object

    def call(self, caller: "_Normalizer", call: cst.Call):
        result = caller.temp()
        pending, caller.comment = caller.comment, None
        saved, caller.out = caller.out, []
        caller.assign(result, self.if_true.call(caller, call))
        body, caller.out = caller.out, []
        caller.assign(result, self.if_false.call(caller, call))
        orelse, caller.out = caller.out, saved
        caller.comment = pending
        caller.emit(cst.If(test=self.test, body=cf.block(body), orelse=cst.Else(cf.block(orelse))))
        return cst.Name(result)


@dataclasses.dataclass
class PulledBack:
    """The function ``tr.vjp`` returns inside transformed code: ``vjp_fn(out_bar)`` inlines the vjp of
    ``fn`` at the primals' atoms and gives a tuple of cotangents, one per primal, as JAX's does."""
    fn: object
    primals: list

    def call(self, caller: "_Normalizer", call: cst.Call):
        from .staging import Step
        from .transformed import Transformed
        if len(call.args) != 1 or call.args[0].keyword is not None:
            raise caller.error(call, "a vjp function takes one cotangent, shaped like the output")
        made = Transformed.of(self.fn).then(Step("vjp", (("has_aux", False),)))
        cotangents = caller.inline_transformed(call, made, atoms=self.primals + [caller.atom(call.args[0].value)])
        # the generated vjp returns a tuple for several primals and may for one: JAX's is always one
        return cotangents if isinstance(cotangents, cst.Tuple) else cf.tuple_of([cotangents])


@dataclasses.dataclass
class PushedForward:
    """The function ``tr.linearize`` returns inside transformed code: ``f_jvp(*tangents)`` inlines
    the jvp of ``fn`` at the primals' atoms and gives its tangent output, as JAX's does."""
    fn: object
    primals: list

    def call(self, caller: "_Normalizer", call: cst.Call):
        from .staging import Step
        from .transformed import Transformed
        if len(call.args) != len(self.primals) or any(arg.keyword is not None for arg in call.args):
            raise caller.error(call, f"a linearized function takes {len(self.primals)} tangent(s) by position, "
                                     f"one per primal")
        active = tuple(range(sum(caller.leaf_count(atom) for atom in self.primals)))   # leaves of structures
        made = Transformed.of(self.fn).then(Step("jvp", (("active", active), ("ndims", None))))
        tangents = [caller.held(caller.atom(arg.value)) for arg in call.args]    # a tuple: known as a structure
        pair = caller.inline_transformed(call, made, atoms=self.primals + tangents)
        return pair.elements[1].value if isinstance(pair, cst.Tuple) else cst.Subscript(
            pair, [cst.SubscriptElement(cst.Index(cf.literal(1)))])


# What a name can stand for besides a value: a function called where the name is called, or a table
CALLABLES = (LocalLambda, LocalDef, PassedFunction, FunctionChoice, PulledBack, PushedForward)
FUNCTIONS = CALLABLES + (FunctionTuple,)
