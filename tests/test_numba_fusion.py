"""The CPU target puts single-use elementwise temporaries back into one
expression (backends/numba_fusion.py): checked on the generated source, and on
the answers when a substitution would move a read past a write."""
import numpy as np
import pytest

import fusion_cases as cases
import transformer as tr
from transformer.backends import numba_fusion, numba_lowering
from transformer.normalize import normalize


def fused_body(fn) -> list[str]:
    core = numba_lowering.lower_tapes(numba_lowering.lower(normalize(fn)))
    code = numba_fusion.fuse(core).code()
    return [line.strip() for line in code.splitlines()[1:] if line.strip() and not line.strip().startswith("#")]


def test_an_elementwise_chain_becomes_one_statement_per_value_read_twice():
    body = fused_body(cases.chain)
    # np.tanh(x) is read twice by the user's expression, so it keeps its statement
    assert len(body) == 2, body
    assert body[0].endswith("np.tanh(x)")
    assert body[1].startswith("return (np.exp(-(x ** ")


def test_the_user_line_comment_stays_with_the_code():
    core = numba_lowering.lower_tapes(numba_lowering.lower(normalize(cases.chain)))
    code = numba_fusion.fuse(core).code()
    assert "# return np.exp(-x ** 2) * np.sin(3 * x) + 0.5 * np.tanh(x)" in code


@pytest.mark.parametrize("fn", [cases.operand_rewritten_in_place, cases.operand_rebound,
                                cases.operand_written_through_a_view])
def test_a_value_is_not_moved_past_a_write_to_what_it_reads(fn):
    body = fused_body(fn)
    assert any(line.startswith("t = ") for line in body), body
    x, y = np.arange(3.0), np.ones(3)
    np.testing.assert_allclose(tr.jit(fn)(x.copy(), y.copy()), fn(x.copy(), y.copy()))


def test_values_read_twice_or_by_a_reduction_keep_their_statements():
    assert any(line.startswith("t = np.sin(x)") for line in fused_body(cases.read_twice))
    assert any(line.startswith("t = x * ") for line in fused_body(cases.through_a_reduction))


def test_loop_bodies_are_fused_in_place():
    body = fused_body(cases.in_a_loop)
    assert not any(line.startswith("step = ") for line in body), body
    x = np.linspace(0.0, 1.0, 4)
    np.testing.assert_allclose(tr.jit(cases.in_a_loop)(x, 3), cases.in_a_loop(x, 3))


@pytest.mark.parametrize("fn, expands, expands_kept", [(cases.log_sum_exp, 1, 0), (cases.row_log_sum_exp, 2, 0),
                                                       (cases.total_of_column_sums, 2, 2)])
def test_a_reductions_cotangent_broadcasts_inside_the_fused_expression(fn, expands, expands_kept):
    # exp's adjoint multiplies sum's cotangent, expanded over exp's result, by that result.  Over
    # all axes the cotangent is a scalar, which broadcasts as it is: the product needs no array
    # of that shape filled first.  Without keepdims, axis=1's cotangent lacks the axis, which
    # nl.expand_axis puts back as a view; the outer sum's, which log's adjoint divides by the row
    # sums, is read beside an array of their shape (log's result has its operand's).  An expanded
    # cotangent returned, or expanded again, is no elementwise operand: its array is kept.
    gradient = tr.jit(tr.grad(fn))
    assert tr.show(tr.grad(fn)).count("rt.expand_to(") == expands
    assert tr.show(gradient).count("rt.expand_to(") == expands_kept
    x = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    np.testing.assert_allclose(gradient(x), tr.grad(fn)(x), rtol=1e-13)
