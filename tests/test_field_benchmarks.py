"""The field's AD benchmarks (benchmarks/field/) at their small sizes, as correctness tests.

Each problem is written as a NumPy user writes it; ``tr.jit(tr.grad)`` of its objective must agree
with central differences (and with JAX's gradient, where JAX is installed).  The runner times
them at GradBench's sizes; here only the answers count."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks" / "field"))
import run as field  # noqa: E402


@pytest.mark.parametrize("name", field.PROBLEMS)
def test_gradient_agrees_with_central_differences(name):
    problem = field.load(name)
    assert set(problem.SIZES) > {"small"}, "a problem has GradBench's sizes besides the small one"
    assert field.check(problem, field.jax_or_none()) == ""
