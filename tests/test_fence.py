"""The fence refuses every unsupported construct with the user's file:line:col.

Cases live in ``fence_cases.py``; each marks its offending line with
``# REFUSED: <text>`` and the column is where ``<text>`` starts.
"""
import inspect
import os
import re

import pytest

import fence_cases
from transformer import TransformError
from transformer.normalize import normalize

CASES_FILE = fence_cases.__file__
# Functions in fence_cases that are scaffolding, not cases: a factory, and the
# second half of a mutual recursion (whose cycle is reported from the first).
NOT_CASES = {"make_nonlocal", "mutual_b"}
_MARK = re.compile(r"#\s*REFUSED:\s*(.*?)\s*(#.*)?$")


def _cases():
    """name -> (line, col) of the marked construct, for every case function."""
    with open(CASES_FILE) as handle:
        lines = handle.read().splitlines()
    marks = {}
    for number, text in enumerate(lines, start=1):
        match = _MARK.search(text)
        if match:
            col = text.index(match.group(1)) + 1
            marks[number] = col
    cases = {name: fn for name, fn in vars(fence_cases).items()
             if inspect.isfunction(fn) and fn.__module__ == "fence_cases"
             and not name.startswith("_") and name not in NOT_CASES}
    return cases, marks


CASES, MARKS = _cases()


def _expected_mark(fn):
    """The marked line of ``fn``: the first mark in its body or in a helper it names."""
    lines, first = inspect.getsourcelines(fn)
    own = [n for n in range(first, first + len(lines)) if n in MARKS]
    if own:
        return own[0], MARKS[own[0]]
    # the refusal is inside a helper the case calls (early return, try in a helper)
    for name in fn.__code__.co_names:
        helper = getattr(fence_cases, name, None)
        if inspect.isfunction(helper):
            h_lines, h_first = inspect.getsourcelines(helper)
            marked = [n for n in range(h_first, h_first + len(h_lines)) if n in MARKS]
            if marked:
                return marked[0], MARKS[marked[0]]
    raise AssertionError(f"{fn.__name__} has no # REFUSED mark")


def test_enough_cases():
    assert len(CASES) >= 30


@pytest.mark.parametrize("name", sorted(CASES))
def test_refused_with_file_line_col(name):
    fn = CASES[name]
    line, col = _expected_mark(fn)
    with pytest.raises(TransformError) as info:
        normalize(fn)
    err = info.value
    message = str(err)
    assert err.location is not None, message
    assert os.path.basename(err.location.filename) == "fence_cases.py", message
    assert f"fence_cases.py:{line}:" in message, message
    assert err.location.line == line, message
    assert err.location.col == col, message
    assert err.hint or "not defined" in message, f"no advice in: {message}"
