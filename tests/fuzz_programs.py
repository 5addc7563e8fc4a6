"""Random programs in the supported subset, written as real source files.

``programs()`` is a hypothesis strategy for a ``Program``: the text of a
module holding one function ``f`` (and the helpers it calls), the shapes of
its array arguments and whether it takes a trailing integer ``n`` (a loop
trip count).  The text is what a user could have written: NumPy expressions
over broadcastable shapes, reductions with axes and keepdims, ``dot`` and
``@`` on compatible shapes, ``if``/``for``/``while`` with bounded trips,
helper calls, and in-place index writes; and what reverse mode must replay
backwards: arrays carried through loops whose rows, columns and slices are
read, written in place and read again in one pass, ``while True`` left by
``break`` or ``return``, returns from nested loops and branches, and
``tr.grad`` of a helper taken inside a loop (``kinds=LOOPS_AND_EXITS`` draws
mostly those).

Every expression is smooth (or non-smooth only on a set of measure zero) and
bounded for inputs of order one, so central differences in float64 are a fair
reference.  ``load(program, directory)`` writes the module and imports it:
transforms read source, so the function must live in a file.
"""
from __future__ import annotations

import hashlib
import importlib.util
import itertools
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

# Elementwise functions defined and bounded-derivative for every real input.
UNARY = [
    "np.sin({a})", "np.cos({a})", "np.tanh({a})", "np.arctan({a})", "np.exp(np.tanh({a}))",
    "np.sqrt({a} * {a} + 1.0)", "np.log({a} * {a} + 1.0)", "np.log1p({a} * {a})",
    "1.0 / (1.0 + {a} * {a})", "0.5 * {a} ** 2", "-{a}", "np.square(np.sin({a}))",
    "2.5 * {a} + 1.0", "np.sinh(np.tanh({a}))", "np.abs({a})",
]
SCALAR_UNARY = ["math.sin({a})", "math.exp(math.tanh({a}))", "math.sqrt({a} * {a} + 2.0)"]
BINARY = [
    "{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / (1.0 + {b} * {b})", "np.arctan2({a}, 1.0 + {b} * {b})",
    "np.maximum({a}, {b})", "np.minimum({a}, {b})", "np.hypot({a}, {b}) + 0.1", "np.add({a}, {b})",
]
REDUCTIONS = ["np.sum", "np.mean", "np.max", "np.min"]

HELPERS = {
    "smooth_mix": "def smooth_mix(a, b):\n    return np.sin(a) * b + 0.5 * a\n",
    "damped": ("def damped(a, steps):\n    out = a * 1.0\n    for i in range(steps):\n"
               "        out = np.tanh(out) * 0.8 + a * 0.1\n    return out\n"),
    "energy": "def energy(a, scale=0.5):\n    return scale * np.sum(a * a)\n",
    # returns early, from a branch and from a loop (inlined as one exit: transformer/early_returns.py)
    "settled": ("def settled(a, steps):\n    out = a * 1.0\n    if np.sum(a) > 1.5:\n        return np.tanh(a)\n"
                "    for i in range(steps):\n        if np.sum(out * out) < 0.05:\n            return out * 2.0\n"
                "        out = np.tanh(out) * 0.7 + a * 0.2\n    return out\n"),
}


# helpers whose gradient a program takes inside a loop (g = tr.grad(potential)(y))
TRANSFORMED_HELPERS = {
    "potential": "def potential(a):\n    return 0.5 * np.sum(a * a) + np.sum(np.cos(a))\n",
    "coupling": "def coupling(a, b):\n    return np.sum(np.sin(a) * b) + 0.25 * np.sum(a * a)\n",
}


@dataclass(frozen=True)
class Program:
    source: str
    shapes: tuple          # shape of each array argument (() means a float)
    takes_n: bool          # a trailing integer argument n (a loop trip count)
    scalar_out: bool

    def arguments(self, rng) -> tuple:
        arrays = tuple(float(rng.uniform(-1, 1)) if s == () else rng.uniform(-1.0, 1.0, size=s)
                       for s in self.shapes)
        return arrays + ((2,) if self.takes_n else ())

    def __str__(self) -> str:
        return f"shapes={self.shapes} n={self.takes_n}\n{self.source}"


class _Writer:
    """Writes the body of ``f`` statement by statement, tracking each variable's shape."""

    def __init__(self, draw, shapes, takes_n, scalar_out):
        self.draw = draw
        self.lines: list[str] = []
        self.shapes = {f"x{i}": s for i, s in enumerate(shapes)}
        self.takes_n = takes_n
        self.scalar_out = scalar_out   # every return, early or last, gives a scalar
        self.helpers: set[str] = set()
        self.transformed: set[str] = set()
        self.returned = False          # the last statement written returns on every path
        self.count = itertools.count()

    # ------------------------------------------------------------- choices
    def pick(self, options):
        return self.draw(st.sampled_from(list(options)))

    def var(self, where=lambda shape: True) -> str | None:
        names = [n for n, s in self.shapes.items() if where(s)]
        return self.pick(names) if names else None

    def fresh(self) -> str:
        return f"v{next(self.count)}"

    def loop_index(self) -> str:
        # every loop counts with "i", as people write: a reused loop variable must not confuse
        # transforms (tests/regressions/test_vmap_loop_variable_reused.py)
        return "i"

    def emit(self, text, indent=1):
        self.lines.append("    " * indent + text)

    def bind(self, name, expr, shape, indent=1):
        self.emit(f"{name} = {expr}", indent)
        self.shapes[name] = shape

    # --------------------------------------------------------- expressions
    def elementwise(self, shape_of_result=None):
        """An expression over existing variables; its shape is ``shape_of_result`` if given."""
        fits = (lambda s: _broadcasts_to(s, shape_of_result)) if shape_of_result is not None else (lambda s: True)
        a = self.var(fits)
        if self.draw(st.booleans()):
            if self.shapes[a] == () and self.draw(st.integers(0, 3)) == 0:
                return self.pick(SCALAR_UNARY).format(a=a), ()
            return self.pick(UNARY).format(a=a), self.shapes[a]
        b = self.var(lambda s: _broadcast(s, self.shapes[a]) is not None and fits(s)
                     and (shape_of_result is None or _broadcast(s, self.shapes[a]) is not None))
        shape = _broadcast(self.shapes[a], self.shapes[b])
        if shape_of_result is not None and shape != shape_of_result:
            return self.pick(UNARY).format(a=a), self.shapes[a]
        return self.pick(BINARY).format(a=a, b=b), shape

    # ---------------------------------------------------------- statements
    def statement(self, kinds=None):
        if kinds is None and self.draw(st.integers(0, 5)) == 0:     # method chains, lambdas, ... (see below)
            return self.write_frontend_form()
        kind = self.pick(kinds or STATEMENTS)
        getattr(self, f"write_{kind}")()

    def write_unary_binary(self):
        expr, shape = self.elementwise()
        self.bind(self.fresh(), expr, shape)

    def write_reduce(self):
        a = self.var(lambda s: len(s) >= 1)
        if a is None:
            return self.write_unary_binary()
        shape = self.shapes[a]
        how = self.pick(["full", "axis", "axis_keepdims", "method"])
        name = self.pick(REDUCTIONS)
        if how == "full":
            self.bind(self.fresh(), f"{name}({a})", ())
            return
        axis = self.draw(st.integers(-len(shape), len(shape) - 1))
        kept = list(shape)
        if how == "axis_keepdims":
            kept[axis] = 1
            self.bind(self.fresh(), f"{name}({a}, axis={axis}, keepdims=True)", tuple(kept))
            return
        del kept[axis]
        if how == "method":
            method = {"np.sum": "sum", "np.mean": "mean", "np.max": "max", "np.min": "min"}[name]
            self.bind(self.fresh(), f"{a}.{method}(axis={axis})", tuple(kept))
        else:
            self.bind(self.fresh(), f"{name}({a}, axis={axis})", tuple(kept))

    def write_dot(self):
        pairs = [(a, b) for a, sa in self.shapes.items() for b, sb in self.shapes.items()
                 if _dot_shape(sa, sb) is not None]
        if not pairs:
            return self.write_unary_binary()
        a, b = self.pick(pairs)
        spelling = self.pick(["np.dot({a}, {b})", "{a} @ {b}"])
        self.bind(self.fresh(), spelling.format(a=a, b=b), _dot_shape(self.shapes[a], self.shapes[b]))

    def write_helper(self):
        helper = self.pick(sorted(HELPERS))
        self.helpers.add(helper)
        a = self.var()
        if helper == "smooth_mix":
            b = self.var(lambda s: _broadcast(s, self.shapes[a]) is not None)
            keyword = self.draw(st.booleans())
            call = f"smooth_mix({a}, b={b})" if keyword else f"smooth_mix({a}, {b})"
            self.bind(self.fresh(), call, _broadcast(self.shapes[a], self.shapes[b]))
        elif helper in ("damped", "settled"):
            steps = "n" if self.takes_n else str(self.draw(st.integers(1, 3)))
            self.bind(self.fresh(), f"{helper}({a}, {steps})", self.shapes[a])
        else:
            scale = self.pick(["", ", 0.25", ", scale=2.0"])
            self.bind(self.fresh(), f"energy({a}{scale})", ())

    def _loop_carried(self):
        """A fresh variable started from an existing one, and an update that keeps its shape."""
        acc = self.fresh()
        a = self.var()
        self.bind(acc, f"{a} * 1.0", self.shapes[a])
        b = self.var(lambda s: _broadcast(s, self.shapes[acc]) == self.shapes[acc])
        update = self.pick(["{acc} * 0.7 + np.sin({b})", "np.cos({acc}) * {b}", "np.tanh({acc} + {b})",
                            "{acc} - 0.1 * {acc} * {b}"])
        return acc, update.format(acc=acc, b=b)

    def write_for(self):
        acc, update = self._loop_carried()
        trips = "n" if self.takes_n and self.draw(st.booleans()) else str(self.draw(st.integers(0, 3)))
        self.emit(f"for {self.loop_index()} in range({trips}):")
        self.emit(f"{acc} = {update}", 2)
        if self.draw(st.integers(0, 3)) == 0:       # an early exit, decided by the data
            self.emit(f"if np.sum({acc}) > 2.0:", 2)
            self.emit("break", 3)

    def write_while(self):
        acc, update = self._loop_carried()
        counter = self.fresh()
        self.emit(f"{counter} = 0")
        self.emit(f"while {counter} < {self.draw(st.integers(1, 3))}:")
        self.emit(f"{acc} = {update}", 2)
        self.emit(f"{counter} += 1", 2)

    def write_if(self):
        test = self.var()
        condition = self.pick(["np.sum({t}) > 0.0", "np.mean({t}) < 0.25", "np.max({t}) > 0.5"]
                              if self.shapes[test] else ["{t} > 0.0", "{t} < 0.3"]).format(t=test)
        target = self.fresh()
        first, shape = self.elementwise()
        second, _ = self.elementwise(shape)
        if _ != shape:
            second = f"{first} * 0.5"
        self.emit(f"if {condition}:")
        self.emit(f"{target} = {first}", 2)
        if self.draw(st.booleans()):
            self.emit("else:")
            self.emit(f"{target} = {second}", 2)
        else:          # no else: the target keeps its value from before the if
            self.lines.insert(len(self.lines) - 2, f"    {target} = {second}")
        self.shapes[target] = shape

    def write_inplace(self):
        a = self.var(lambda s: len(s) >= 1 and s[0] >= 2)
        if a is None:
            return self.write_unary_binary()
        target = self.fresh()
        self.bind(target, self.pick([f"np.copy({a})", f"{a} * 1.0", f"np.zeros_like({a})"]), self.shapes[a])
        write = self.pick(["{t}[0] = np.sin({a}[0]) * 2.0", "{t}[-1] += np.cos({a}[0])",
                           "{t}[1:] = {t}[1:] * np.tanh({a}[:-1])", "{t}[0] -= {t}[1] * 0.5",
                           "{t}[1] *= 0.5 + np.sin({a}[1])"])
        self.emit(write.format(t=target, a=a))

    def write_inplace_loop(self):
        a = self.var(lambda s: len(s) >= 1)
        if a is None:
            return self.write_unary_binary()
        target = self.fresh()
        self.bind(target, f"np.zeros_like({a})", self.shapes[a])
        i = self.loop_index()
        self.emit(f"for {i} in range({self.shapes[a][0]}):")
        body = self.pick(["{t}[{i}] = np.sin({a}[{i}]) + {t}[{i} - 1] * 0.5", "{t}[{i}] = {a}[{i}] * {a}[{i}]",
                          "{t}[{i}] += np.tanh({a}[{i}])"])
        self.emit(body.format(t=target, a=a, i=i), 2)

    def write_index_loop(self):
        a = self.var(lambda s: len(s) >= 1)
        if a is None:
            return self.write_unary_binary()
        acc = self.fresh()
        self.bind(acc, f"{a}[0] * 0.0", self.shapes[a][1:])
        i = self.loop_index()
        self.emit(f"for {i} in range(len({a})):")
        self.emit(f"{acc} = {acc} + np.sin({a}[{i}]) * ({i} + 1)", 2)

    # ------------------------------------------- forms the frontend must read
    def write_frontend_form(self):
        kinds = ["chain", "chain", "lambda", "lambda"] + ["mask_read"] * MASK_READS + ["matmul_rank3"] * MATMUL_RANK3
        getattr(self, f"write_{self.pick(kinds)}")()

    def write_chain(self):
        """A method or attribute on an expression, not a name: (a + b).T, np.sin(a).sum(axis=0).T ..."""
        expr, shape = self.elementwise()
        how = self.pick(["T", "TT", "sum", "reshape", "helper"] if shape else ["TT"])
        if how == "T":
            self.bind(self.fresh(), f"({expr}).T", shape[::-1])
        elif how == "TT":
            self.bind(self.fresh(), f"({expr}).T.T * 1.0" if shape else f"np.array({expr}).T.T", shape)
        elif how == "sum":
            axis = self.draw(st.integers(0, len(shape) - 1))
            kept = shape[:axis] + shape[axis + 1:]
            self.bind(self.fresh(), f"({expr}).sum(axis={axis}).T", kept[::-1])
        elif how == "reshape":
            size = int(np.prod(shape))
            self.bind(self.fresh(), f"({expr}).reshape({size}).reshape(1, {size}).T", (size, 1))
        else:
            a = self.var(lambda s: s == shape) or f"({expr})"     # (no variable has the broadcast shape)
            self.helpers.add("smooth_mix")
            self.bind(self.fresh(), f"smooth_mix({a}, {a}).reshape({int(np.prod(shape))}).sum()", ())

    def write_lambda(self):
        """A lambda bound to a name, called in place, passed to a helper, held by a table of functions
        called by key, chosen against a named function by a conditional expression, kept in a tuple
        with a value, looped over with a named function, given a default, or made by a helper (a
        closure); it may read a variable."""
        a = self.var()
        b = self.var(lambda s: _broadcast(s, self.shapes[a]) == self.shapes[a])
        body = self.pick(UNARY).format(a="v") + self.pick(["", f" * {b}", f" + np.sin({b})"])
        how = self.pick(["bound", "in_place", "passed", "table", "chosen", "kept", "looped", "default", "closure"])
        named = self.pick(["np.sin", "np.tanh", "np.arctan"])
        name = f"fn{next(self.count)}"
        test = f"np.sum({b}) > 0.0" if self.shapes[b] else f"{b} > 0.0"
        # each form: the line that makes the function (or None), and the expression that calls it
        forms = {
            "bound": (f"{name} = lambda v: {body}  # noqa: E731", f"{name}({a}) + {name}({a} * 0.5)"),
            "in_place": (None, f"(lambda v: {body})({a})"),
            "passed": (None, f"apply_fn(lambda v: {body}, {a})"),
            "table": (f'{name} = {{"made": lambda v: {body}, "named": {named}}}',
                      f'{name}["made"]({a}) * {name}["named"]({a})'),
            "chosen": (f"{name} = (lambda v: {body}) if {test} else {named}  # noqa: E731",
                       f"{name}({a}) + {name}({a} * 0.5)"),
            "kept": (f"{name} = ({a}, lambda v: {body}, {named})", f"{name}[1]({name}[0]) - {name}[2]({name}[0])"),
            "looped": (None, f"sum(fn({a}) for fn in [lambda v: {body}, {named}])"),
            "default": (f"{name} = lambda v, k=0.5: ({body}) * k  # noqa: E731", f"{name}({a}) + {name}({a}, k=2.0)"),
            "closure": (None, f"make_scaled({b})({a}) + {named}({a})"),
        }
        definition, expression = forms[how]
        self.helpers.update({"passed": ["apply_fn"], "closure": ["make_scaled"]}.get(how, []))
        if definition is not None:
            self.emit(definition)
        self.bind(self.fresh(), expression, self.shapes[a])

    def write_mask_read(self):
        """A read through a boolean mask, reduced at once (its length depends on the data)."""
        a = self.var(lambda s: len(s) >= 1)
        if a is None:
            return self.write_unary_binary()
        self.bind(self.fresh(), f"np.sum(np.sin({a})[{a} > 0.0]) + np.sum({a}[{a} < 0.5] ** 2)", ())

    def write_matmul_rank3(self):
        """``@`` and np.matmul on stacks of matrices."""
        a = self.var(lambda s: len(s) == 3)
        if a is None:
            return self.write_unary_binary()
        p, q, _ = self.shapes[a]
        spelling = self.pick(["{a} @ np.swapaxes({a}, 1, 2)", "np.matmul(np.sin({a}), np.swapaxes({a}, 1, 2))"])
        self.bind(self.fresh(), spelling.format(a=a), (p, q, q))

    # ------------------- arrays carried through loops, early exits, transforms in loops
    def final_value(self, name) -> str:
        """What ``return`` gives for the value ``name``: the last return's scalar form."""
        return f"np.sum({name}) + 0.5 * np.sum(np.sin(x0))"

    def write_carried_rows(self):
        """An array carried through a loop whose rows, columns or slices are read, written in
        place (``=``, ``+=``, ``*=``) and read again in the same pass, as an LSTM written with
        ``H[t] = ...`` does."""
        a = self.var()
        piece = self.shapes[a]
        rows = 3
        s = self.fresh()
        self.bind(s, f"np.ones({(rows,) + piece}) * {a}", (rows,) + piece)
        i = self.loop_index()
        family = self.pick(["row", "slice"] + (["column"] if piece else []))
        if family == "row":
            parts, shape = ["{s}[0]", "{s}[1]", "{s}[-1]", "{s}[{i}]", "{s}[{i} - 1]"], piece
        elif family == "slice":
            parts, shape = ["{s}[1:]", "{s}[:-1]", "{s}[:2]"], (rows - 1,) + piece
        else:
            parts, shape = ["{s}[:, 0]", "{s}[:, -1]"], (rows,) + piece[1:]
        before, written, after = (self.pick(parts).format(s=s, i=i) for _ in range(3))
        b = self.var(lambda sh: _broadcast(sh, shape) == shape) or "0.5"
        h = self.fresh()
        trips = "n" if self.takes_n and self.draw(st.booleans()) else str(self.draw(st.integers(1, rows)))
        self.emit(f"for {i} in range({trips}):")
        self.emit(f"{h} = " + self.pick(["{r} * {b}", "np.sin({r}) + {b}", "np.tanh({r} * {b})"])
                  .format(r=before, b=b), 2)
        self.emit(self.pick(["{w} = np.tanh({h})", "{w} += np.sin({h}) * 0.5", "{w} *= 0.5 + 0.25 * np.cos({h})",
                             "{w} = {w} * 0.5 + np.cos({h})"]).format(w=written, h=h), 2)
        self.emit(self.pick(["{a} = {a} * {w} * 0.9", "{a} = np.sin({w}) + {a} * 0.5",
                             "{a} -= 0.25 * {w} * {h}"]).format(a=after, w=written, h=h), 2)
        self.shapes[h] = shape
        self.bind(self.fresh(), f"np.sum({s} * {s}, axis=0)", piece)

    def _exit(self, acc, indent, ending):
        """``return`` (scalar programs) or ``break`` out of the innermost loop."""
        if self.scalar_out and ending == "return":
            self.emit(f"return {self.final_value(acc)}", indent)
        else:
            self.emit("break", indent)

    def write_while_true(self):
        """``while True`` left by a counted ``break`` or ``return`` (the return, when it is on
        every path, ends the program), or by one under a condition on the data."""
        acc, update = self._loop_carried()
        counter = self.fresh()
        self.emit(f"{counter} = 0")
        self.emit("while True:")
        self.emit(f"{acc} = {update}", 2)
        self.emit(f"{counter} += 1", 2)
        self.emit(f"if {counter} >= {self.draw(st.integers(1, 4))}:", 2)
        how = self.pick(["break", "return", "return_if"])
        if how == "return_if":
            self.emit(f"if np.sum({acc}) > 0.0:", 3)
            self._exit(acc, 4, "return")
            self.emit("break", 3)
        else:
            self._exit(acc, 3, how)
            self.returned = how == "return" and self.scalar_out

    def write_nested_exit(self):
        """A return (or break) from inside a loop inside a loop, under branches."""
        acc, update = self._loop_carried()
        i, j = self.loop_index(), "j"
        self.emit(f"for {i} in range({self.draw(st.integers(1, 3))}):")
        self.emit(f"for {j} in range({self.draw(st.integers(1, 3))}):", 2)
        self.emit(f"{acc} = {update}", 3)
        condition = self.pick(["np.sum({a}) > 1.0", "np.max({a}) > 0.5"]).format(a=acc)
        if self.draw(st.booleans()):
            self.emit(f"if {j} == 1:", 3)
            self.emit(f"if {condition}:", 4)
            self._exit(acc, 5, self.pick(["return", "break"]))
        else:
            self.emit(f"if {condition}:", 3)
            self._exit(acc, 4, self.pick(["return", "break"]))

    def write_transform_in_loop(self):
        """A gradient taken inside a loop body, as Euler steps of particles in a potential
        take the force: ``g = tr.grad(potential)(y)``, in a ``for`` or a ``while True``; or the
        gradient of a lambda that reads a variable of the code around it."""
        acc = self.fresh()
        a = self.var()
        self.bind(acc, f"{a} * 1.0", self.shapes[a])
        helper = self.pick(sorted(TRANSFORMED_HELPERS) + ["lambda"])
        if helper != "lambda":
            self.transformed.add(helper)
        g, e = self.fresh(), self.fresh()
        if helper == "lambda":
            b = self.var(lambda sh: _broadcast(sh, self.shapes[acc]) == self.shapes[acc])
            body = self.pick(UNARY).format(a="q")
            call = f"{g} = tr.grad(lambda q: np.sum({body} * (1.0 + 0.5 * np.tanh({b}))))({acc})"
            step = f"{acc} = {acc} - 0.1 * {g}"
        elif helper == "coupling":
            b = self.var(lambda sh: _broadcast(sh, self.shapes[acc]) == self.shapes[acc])
            call, step = f"{g} = tr.grad(coupling)({acc}, {b})", f"{acc} = {acc} - 0.1 * {g}"
        elif self.draw(st.booleans()):
            call, step = f"{e}, {g} = tr.value_and_grad(potential)({acc})", f"{acc} = {acc} - 0.1 * {g} + 0.01 * {e}"
        else:
            call, step = f"{g} = tr.grad(potential)({acc})", f"{acc} = {acc} - 0.1 * {g}"
        steps = self.draw(st.integers(1, 3))
        if self.draw(st.booleans()):
            self.emit(f"for {self.loop_index()} in range({steps}):")
            self.emit(call, 2)
            self.emit(step, 2)
        else:
            counter = self.fresh()
            self.emit(f"{counter} = 0")
            self.emit("while True:")
            self.emit(call, 2)
            self.emit(step, 2)
            self.emit(f"{counter} += 1", 2)
            self.emit(f"if {counter} >= {steps}:", 2)
            self._exit(acc, 3, self.pick(["return", "break"]))
            self.returned = self.scalar_out and self.lines[-1].strip().startswith("return")


# Forms drawn by write_frontend_form beside chains and lambdas (off: left out of the draw).
MASK_READS = True
MATMUL_RANK3 = True
FRONTEND_HELPERS = {   # not drawn by write_helper
    "apply_fn": "def apply_fn(fn, a):\n    return fn(a)\n",
    "make_scaled": "def make_scaled(s):\n    return lambda v: v * s\n",
}


STATEMENTS = (["unary_binary"] * 4 + ["reduce", "reduce", "dot", "helper", "for", "while", "if", "inplace",
                                      "inplace_loop", "index_loop", "carried_rows", "while_true", "nested_exit",
                                      "transform_in_loop"])
# what reverse mode replays backwards: loops carrying arrays written in place, early exits,
# transforms called in loops (with a few plain statements to feed them)
LOOPS_AND_EXITS = ["unary_binary", "carried_rows", "carried_rows", "while_true", "nested_exit",
                   "transform_in_loop", "inplace_loop", "inplace"]


def _broadcast(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def _broadcasts_to(shape, target):
    return _broadcast(shape, target) == tuple(target)


def _dot_shape(a, b):
    if len(a) == 1 and len(b) == 1 and a == b:
        return ()
    if len(a) == 2 and len(b) == 1 and a[1] == b[0]:
        return (a[0],)
    if len(a) == 1 and len(b) == 2 and a[0] == b[0]:
        return (b[1],)
    if len(a) == 2 and len(b) == 2 and a[1] == b[0]:
        return (a[0], b[1])
    return None


_BASES = [(3,), (4,), (2, 3), (3, 3), (2, 1, 3)]


def _sub_shapes(base):
    """Shapes that broadcast to ``base``: trailing parts, with some axes set to 1."""
    out = {()}
    for start in range(len(base)):
        tail = base[start:]
        for ones in itertools.product([False, True], repeat=len(tail)):
            out.add(tuple(1 if one else d for d, one in zip(tail, ones)))
    return sorted(out, key=lambda s: (len(s), s))


@st.composite
def programs(draw, scalar_out=None, max_statements=7, kinds=None) -> Program:
    """A program of up to ``max_statements`` statements drawn from ``kinds`` (default all)."""
    base = draw(st.sampled_from(_BASES))
    n_args = draw(st.integers(1, 3))
    first = draw(st.sampled_from([base, base, ()] + _sub_shapes(base)))
    shapes = (first,) + tuple(draw(st.sampled_from(_sub_shapes(base))) for _ in range(n_args - 1))
    takes_n = draw(st.integers(0, 3)) == 0
    if scalar_out is None:
        scalar_out = draw(st.booleans())
    writer = _Writer(draw, shapes, takes_n, scalar_out)
    for _ in range(draw(st.integers(1, max_statements))):
        writer.statement(kinds)
        if writer.returned:
            break
    last = list(writer.shapes)[-1]
    if scalar_out and not writer.returned:
        # mix the last value with the first argument so every program depends on x0
        writer.emit(f"return {writer.final_value(last)}")
    elif not scalar_out:
        mixes = _broadcast(writer.shapes[last], shapes[0]) is not None
        writer.emit(f"return {last} + 0.5 * np.sin(x0)" if mixes else f"return {last}")
    params = [f"x{i}" for i in range(n_args)] + (["n"] if takes_n else [])
    helpers = "\n\n".join([{**HELPERS, **FRONTEND_HELPERS}[h] for h in sorted(writer.helpers)]
                          + [TRANSFORMED_HELPERS[h] for h in sorted(writer.transformed)])
    uses_tr = writer.transformed or any("tr." in line for line in writer.lines)
    imports = "import math\n\nimport numpy as np\n" + ("\nimport transformer as tr\n" if uses_tr else "")
    source = (imports + "\n\n" + (helpers + "\n\n" if helpers else "")
              + f"def f({', '.join(params)}):\n" + "\n".join(writer.lines) + "\n")
    return Program(source, shapes, takes_n, scalar_out)


def load(program: Program, directory: Path):
    """Write the program to a file in ``directory`` named by its text, and import it.

    The same program always gets the same file and module, so hypothesis
    replaying a failure sees the same error from the same place (and the
    generated modules come from the cache).
    """
    name = "fuzz_" + hashlib.sha256(program.source.encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    path = Path(directory) / f"{name}.py"
    path.write_text(program.source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
