"""Random programs over arrays of a few elements made from tuples, for the CPU target's pass that
keeps them as a number per element (backends/numba_small_arrays.py).

``program(seed)`` is the text of a module with one function ``f(a, b, k)`` of three numbers: arrays
of two to six elements made from tuples of literals and of ``a`` and ``b``, then elementwise
arithmetic (broadcasting rows against matrices, numbers against arrays, ``k`` an argument met in
arithmetic), sums over all axes and over one (with and without keepdims), reads and writes at
literal positions, copies that share an array with a later write into it, loops and branches that
carry arrays; it returns a number.  Every operation is exact in IEEE arithmetic or one NumPy and
numba round alike (+, -, *, /, sqrt, maximum, abs, squares), and sums add in NumPy's order, so the
compiled function must give NumPy's result to the bit.  ``load(text, directory)`` writes it and
imports it.
"""
from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

SHAPES = [(2,), (3,), (2, 2), (2, 3), (3, 2), (6,)]


class _Writer:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.lines: list[str] = []
        self.arrays: dict[str, tuple] = {}      # name -> shape
        self.numbers = ["a", "b"]
        self.count = 0
        self.indent = "    "

    def fresh(self, prefix):
        self.count += 1
        return f"{prefix}{self.count}"

    def emit(self, line):
        self.lines.append(self.indent + line)

    def number(self):
        choice = self.rng.random()
        if choice < 0.4:
            return self.rng.choice(self.numbers)
        if choice < 0.8:
            return repr(self.rng.choice([0.5, -1.25, 2.0, 3.0, 0.1, -0.75]))
        return f"({self.rng.choice(self.numbers)} * 0.5 + 1.0)"

    def tuple_of(self, shape):
        def leaf():
            return repr(self.rng.choice([0.5, -1.5, 2.0, 0.25])) if self.rng.random() < 0.5 else self.number()
        if len(shape) == 1:
            leaves = [leaf() for _ in range(shape[0])]
            leaves[self.rng.randrange(shape[0])] = repr(self.rng.choice([1.0, -0.5, 0.75]))  # a float literal
            return "[" + ", ".join(leaves) + "]"
        return "[" + ", ".join(self.tuple_of(shape[1:]) for _ in range(shape[0])) + "]"

    def new_array(self):
        name, shape = self.fresh("v"), self.rng.choice(SHAPES)
        self.emit(f"{name} = np.array({self.tuple_of(shape)})")
        self.arrays[name] = shape
        return name

    def partner(self, shape):
        """An operand that broadcasts against ``shape`` to ``shape``: an array, a row or a number."""
        same = [n for n, s in self.arrays.items() if s == shape]
        rows = [n for n, s in self.arrays.items() if len(shape) == 2 and s == shape[1:]]
        choice = self.rng.random()
        if choice < 0.45 and same:
            return self.rng.choice(same)
        if choice < 0.65 and rows:
            return self.rng.choice(rows)
        if choice < 0.75:
            return "k"
        return self.number()

    def elementwise(self):
        x = self.rng.choice(list(self.arrays))
        shape = self.arrays[x]
        y = self.partner(shape)
        form = self.rng.choice(["{x} + {y}", "{x} - {y}", "{x} * {y}", "{x} / (1.0 + {y} * {y})",
                                "np.maximum({x}, {y})", "np.sqrt({x} * {x} + 1.0) * {y}", "np.abs({x}) - {y}",
                                "{x} ** 2 + {y}", "-{x} * {y}"])
        name = self.fresh("e")
        self.emit(f"{name} = " + form.format(x=x, y=y))
        self.arrays[name] = shape

    def reduction(self):
        x = self.rng.choice(list(self.arrays))
        shape = self.arrays[x]
        if self.rng.random() < 0.5 or len(shape) == 1:
            name = self.fresh("s")
            self.emit(f"{name} = np.sum({x} * {self.number()})")
            self.numbers.append(name)
            return
        axis, keepdims = self.rng.choice([0, 1, -1]), self.rng.random() < 0.4
        name = self.fresh("r")
        self.emit(f"{name} = np.sum({x}, axis={axis}, keepdims={keepdims})")
        kept = [n for i, n in enumerate(shape) if i != axis % 2]
        self.arrays[name] = (tuple(1 if i == axis % 2 else n for i, n in enumerate(shape)) if keepdims
                             else tuple(kept))

    def position(self, shape):
        return ", ".join(str(self.rng.randrange(n) - (n if self.rng.random() < 0.3 else 0)) for n in shape)

    def read(self):
        x = self.rng.choice(list(self.arrays))
        name = self.fresh("p")
        self.emit(f"{name} = {x}[{self.position(self.arrays[x])}]")
        self.numbers.append(name)

    def write(self):
        x = self.rng.choice(list(self.arrays))
        self.emit(f"{x}[{self.position(self.arrays[x])}] = {self.number()} * 0.5")

    def shared_write(self):
        # a copy that shares the array, then a write the copy sees
        x = self.rng.choice(list(self.arrays))
        name = self.fresh("c")
        self.emit(f"{name} = {x}")
        self.emit(f"{x}[{self.position(self.arrays[x])}] = {self.number()}")
        self.arrays[name] = self.arrays[x]

    def loop(self):
        x = self.rng.choice(list(self.arrays))
        shape = self.arrays[x]
        y = self.partner(shape)
        self.emit(f"for i in range({self.rng.randint(1, 4)}):")
        self.emit(f"    {x} = {x} * 0.5 + {y}")
        if self.rng.random() < 0.5:
            self.emit(f"    if np.sum({x}) > {self.number()}:")
            self.emit(f"        {x} = {x} - 0.25")
        if self.rng.random() < 0.3:
            self.emit(f"    {x}[{self.position(shape)}] = {x}[{self.position(shape)}] * 0.5")

    def body(self, statements, shared_writes):
        for _ in range(self.rng.randint(1, 3)):
            self.new_array()
        steps = [self.elementwise] * 4 + [self.reduction] * 2 + [self.read, self.write, self.loop, self.new_array]
        steps += [self.shared_write] if shared_writes else []
        for _ in range(statements):
            self.rng.choice(steps)()
        terms = [f"np.sum({n})" for n in self.rng.sample(list(self.arrays), min(3, len(self.arrays)))]
        terms += self.rng.sample(self.numbers, min(2, len(self.numbers)))
        self.emit("return " + " + ".join(terms))


def program(seed: int, statements: int = 10, shared_writes: bool = True) -> str:
    """``shared_writes=False``: no write into an array a copy shares (reverse mode refuses those)."""
    writer = _Writer(random.Random(seed))
    writer.body(statements, shared_writes)
    return "import numpy as np\n\n\ndef f(a, b, k):\n" + "\n".join(writer.lines) + "\n"


def load(text: str, directory: Path, name: str):
    path = Path(directory) / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.f
