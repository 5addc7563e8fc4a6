"""The errors a user sees.

Every refusal names the place in the user's own file, so a message reads like
a compiler diagnostic: ``model.py:12:5: try/except is not supported ...``.
"""
from __future__ import annotations

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
