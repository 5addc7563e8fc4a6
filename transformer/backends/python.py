"""The python backend: run generated code as plain Python and NumPy.

No compilation at all — for teaching, debugging (pdb steps through the
generated file) and as the reference the compiled backends are tested against.
An error raised while the generated code runs is told at the user's line by the
transformed function's call (``emit.told_at_user_line``).
"""
from __future__ import annotations

from ..emit import MODULE_PREAMBLE

NAME = "python"


def source(core):
    return core.code(), MODULE_PREAMBLE


def finish(function, core):
    return function
