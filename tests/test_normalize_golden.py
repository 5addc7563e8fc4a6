"""Golden before/after tests for the core form.

Each snippet in ``frontend_cases.py`` is normalized and compared exactly with
``tests/golden/<name>.py``.  Run with ``UPDATE_GOLDEN=1`` to rewrite the
golden files (then read the diff before committing).  Every golden output is
also checked against the grammar and run, with the python target, to the same
value as the original function.
"""
import os
from pathlib import Path

import numpy as np
import pytest

import frontend_cases as fc
import transformer as tr
from transformer import core_form
from transformer.normalize import normalize

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

_M = np.arange(12.0).reshape(3, 4) / 7.0
_V = np.array([0.3, -1.2, 2.0, 0.7])

# snippet -> the arguments it is run with
SNIPPETS = {
    "arithmetic_nesting": (0.3, 1.7),
    "unary_and_power": (_V,),
    "methods_to_functions": (_M,),
    "reductions_keepdims": (_M,),
    "casts_and_constants": (_V,),
    "augmented_assignment": (_V, _V[::-1].copy()),
    "tuple_unpacking": (1.5, -2.0),
    "chained_comparison": (0.5, 0.0, 1.0),
    "short_circuit": (1.0, -1.0),
    "ternary": (-2.0,),
    "if_elif_else": (0.5,),
    "early_return": (-1.0,),
    "for_range": (_V, 4),
    "for_rows": (_M, _V),
    "for_enumerate": (_V,),
    "for_zip": (_V, _V[:3].copy()),
    "while_continue": (1.5, 9),
    "for_break": (1.25,),
    "helper_defaults_keywords": (_V,),
    "nested_helpers": (_V,),
    "aliases": (_V,),
    "math_functions": (0.7,),
    "module_constants": (np.array([1.0, 2.0, 3.0]),),
    "closure": (_V,),
    "lambda_square": (_V,),
    "nn_functions": (_V,),
    "loop_rebinds_sequence": (_V,),
    "swap_in_loop": (10,),
}


def _golden_text(name: str) -> str:
    core = normalize(getattr(fc, name))
    # file paths differ per machine; the short names in origin comments do not
    return core.code()


def _assert_same(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_enough_snippets():
    assert len(SNIPPETS) >= 20


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_golden(name):
    text = _golden_text(name)
    path = GOLDEN / f"{name}.py"
    if UPDATE:
        path.write_text(text)
    assert path.exists(), f"no golden file {path}; run with UPDATE_GOLDEN=1"
    assert text == path.read_text()


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_golden_is_core_form_and_runs(name):
    fn = getattr(fc, name)
    core = normalize(fn)
    core_form.check(core.node)
    args = SNIPPETS[name]
    _assert_same(tr.jit(fn, target="python")(*args), fn(*args))
