"""The errors a user sees.

Every refusal names the place in the user's own file, so a message reads like
a compiler diagnostic: ``model.py:12:5: try/except is not supported ...``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """A place in a user's source file (1-based line, 1-based column)."""

    filename: str
    line: int
    col: int = 0

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col}" if self.col else f"{self.filename}:{self.line}"


class TransformError(Exception):
    """Raised when a function cannot be transformed: unsupported syntax, a call
    to something that is neither a primitive nor user code, a numba typing
    failure traced back to the user's line, and so on."""

    def __init__(self, message: str, location: Location | None = None, hint: str | None = None):
        self.location = location
        self.hint = hint
        self.bare_message = message
        text = f"{location}: {message}" if location else message
        if hint:
            text += f"; {hint}"
        super().__init__(text)


class NoSourceError(TransformError):
    """The function has no source file to read (defined in a REPL or by exec)."""


class CompileError(TransformError):
    """A backend failed to compile generated code; the message names the user line."""


class ConcreteValueError(TransformError, TypeError, ValueError):
    """One Python number or truth value was asked of an array: ``float(x)``, ``int(x)``,
    ``if x > 0:`` with ``x`` holding several elements.  JAX raises its ConcretizationTypeError
    for these under ``jit``; here the function runs on the values, so the mistake is NumPy's own
    error, told at the user's line with what to write instead.  It is also a TypeError and a
    ValueError, the classes NumPy raises for the two kinds, so code catching those still does."""


# What NumPy (on the python target) and numba (typing, or its compiled code at run time) say for
# each kind of mistake, and the hint that names what to write instead.
_NUMBER_OF_AN_ARRAY = re.compile(
    r"only (0-dimensional|length-1|integer scalar) arrays can be converted"
    r"|No implementation of function Function\(<class '(float|int|complex|bool|range)'>\)[^\n]*\(array\(")
_TRUTH_OF_AN_ARRAY = re.compile(r"truth value of an array with more than one element is ambiguous")
_NUMBER_HINT = ("a Python number (float(), int(), range(), an index) needs one element, and this is "
                "an array with several; pick one (`x[i]`), reduce it (`np.sum(x)`), or keep "
                "array arithmetic (`x.astype(np.float64)`)")
_TRUTH_HINT = ("`if`, `while`, `and`, `or` and `not` need one truth value, and this condition is an "
               "array with several; choose per element with `np.where(c, a, b)` (or "
               "`tr.lax.select`), or decide once with `np.any(c)` / `np.all(c)`")


def concrete_value_hint(message: str) -> str | None:
    """What to write instead, when ``message`` is NumPy's or numba's error for a Python number or
    truth value asked of an array; None for any other error."""
    if _NUMBER_OF_AN_ARRAY.search(message):
        return _NUMBER_HINT
    if _TRUTH_OF_AN_ARRAY.search(message):
        return _TRUTH_HINT
    return None
