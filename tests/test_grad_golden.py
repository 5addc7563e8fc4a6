"""Golden generated code for reverse mode: readable diffs when the output changes.

Run with UPDATE_GOLDEN=1 to rewrite the expected files after a deliberate change.
"""
import os
from pathlib import Path

import pytest

import corpus_grad
import transformer as tr
from transformer import core_form, staging

GOLDEN = Path(__file__).parent / "golden_grad"
NAMES = ["sin_sum", "poly", "broadcast_bias", "softmax_ce", "quadratic_form", "branch_on_value",
         "scalar_loop", "rosenbrock", "while_data_dependent", "break_loop", "inplace_fill",
         "early_return", "helper_calls", "rnn", "nested_loops", "rosenbrock_slices", "shifted_rates"]


def generated_function(fn) -> str:
    text = tr.show(tr.grad(fn))
    return text[text.index("def "):]


@pytest.mark.parametrize("name", NAMES)
def test_golden_gradient_code(name):
    fn = getattr(corpus_grad, name)
    actual = generated_function(fn)
    path = GOLDEN / f"{name}.py"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(actual)
    assert actual == path.read_text()


@pytest.mark.parametrize("name", sorted(corpus_grad.CASES))
def test_gradient_code_is_core_form(name):
    """grad's output is what every transform takes as input (composition)."""
    fn = corpus_grad.CASES[name][0]
    core = staging.make_core(fn, (staging.Step("grad", (("argnums", 0), ("has_aux", False))),))
    core_form.check(core.node)
