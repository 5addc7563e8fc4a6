"""The CPU target puts single-use elementwise temporaries back into one
expression (backends/numba_fusion.py): checked on the generated source, and on
the answers when a substitution would move a read past a write."""
import numpy as np
import pytest

from numba import njit

import fusion_cases as cases
import transformer as tr
from transformer import runtime as rt
from transformer.backends import cpu, numba_fusion, numba_lowering
from transformer.backends.numba_arrays import extremum_vjp_added as nl_extremum_vjp_added
from transformer.backends.numba_arrays import unbroadcast_product as nl_unbroadcast_product
from transformer.normalize import normalize


cpu.load_numba()          # the overloads the njit helpers below call


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


# ------------------------------------------------ a cotangent added in its own pass
@njit
def extremum_added(base, g, x, peak, axis, keepdims):
    if keepdims:
        return nl_extremum_vjp_added(base, g, x, peak, axis=axis, keepdims=True)
    return nl_extremum_vjp_added(base, g, x, peak, axis=axis, keepdims=False)


@njit
def extremum_then_add(base, g, x, peak, axis, keepdims):
    if keepdims:
        return base + rt.extremum_vjp(g, x, peak, axis=axis, keepdims=True)
    return base + rt.extremum_vjp(g, x, peak, axis=axis, keepdims=False)


def _ties(shape, dtype=np.float64, seed=0):
    # rounded values: rows hold ties for their max
    return np.round(np.random.default_rng(seed).standard_normal(shape), 1).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_a_max_cotangent_added_in_its_pass_is_the_add_to_the_bit(dtype, axis, keepdims):
    x = _ties((40, 6), dtype)
    peak = np.max(x, axis=axis, keepdims=keepdims)
    g = np.random.default_rng(1).standard_normal(np.shape(peak)).astype(dtype)
    base = np.random.default_rng(2).standard_normal(x.shape).astype(dtype)
    for b in (base, base[:1], np.asfortranarray(base), base.astype(np.float64), np.arange(x.size).reshape(x.shape)):
        got = extremum_added(b, g, x, peak, axis, keepdims)
        expected = extremum_then_add(b, g, x, peak, axis, keepdims)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
        if b.dtype == dtype:       # (numba's mixed-dtype adds are its own affair, the same either way)
            np.testing.assert_array_equal(got, b + rt.extremum_vjp(g, x, peak, axis=axis, keepdims=keepdims))


def test_a_log_sum_exp_gradient_adds_the_max_cotangent_in_its_pass():
    x = np.random.default_rng(0).standard_normal(50)
    code = tr.show(tr.jit(tr.grad(cases.shifted_log_sum_exp)), x)
    assert "x_bar = nl.extremum_vjp_added(x_bar, top_bar, x, top, axis=None, keepdims=False)" in code, code
    assert "rt.extremum_vjp(" not in code


def test_a_cotangent_kept_in_one_layout_is_added_in_the_pass_too():
    code = tr.show(tr.jit(tr.grad(cases.log_sum_exp_transposed)), _ties((6, 5)))
    assert "y_bar = nl.c_ordered(nl.extremum_vjp_added(y_bar, top_bar, y, top, axis=1, keepdims=True))" in code, code


@pytest.mark.parametrize("fn, shape", [(cases.shifted_log_sum_exp, (50,)), (cases.log_sum_exp_rows, (9, 7)),
                                       (cases.max_only, (5, 4)), (cases.log_sum_exp_kept, (30,)),
                                       (cases.log_sum_exp_transposed, (6, 5))])
def test_gradients_through_a_max_match_the_python_target(fn, shape):
    # (to an ulp: the compiled exp is numba_vecmath's, not NumPy's; the add itself is checked above)
    x = _ties(shape)
    np.testing.assert_allclose(tr.jit(tr.grad(fn))(x), tr.jit(tr.grad(fn), target="python")(x), rtol=1e-14, atol=0)


def test_a_max_cotangent_read_by_nothing_but_itself_is_left_as_it_is():
    code = tr.show(tr.jit(tr.grad(cases.max_only)), _ties((5, 4)))
    assert "rt.extremum_vjp(" in code and "extremum_vjp_added" not in code, code


# ------------------------------------------------ a product summed as it is computed
@njit
def product_summed(a, b, like, then):
    return nl_unbroadcast_product(a, b, like, then)


@njit
def product_summed_once(a, b, like):
    return nl_unbroadcast_product(a, b, like)


@njit
def product_written_then_summed(a, b, like, then):
    return rt.unbroadcast(rt.unbroadcast(a * b, like), then)


@njit
def product_written_then_summed_once(a, b, like):
    return rt.unbroadcast(a * b, like)


def _normal(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# (a, b, like) shapes: rows of the target (k-means' and a bias's), and shapes the walk leaves to
# the written product (a sum over a middle or last axis, an operand that grows, an empty axis)
_PRODUCTS = [((50, 7, 1), (50, 7, 3), (1, 7, 3)), ((50, 7, 3), (50, 7, 1), (1, 7, 3)),
             ((50, 1, 3), (50, 7, 3), (1, 7, 3)), ((1, 7, 3), (50, 7, 3), (1, 1, 3)),
             ((50, 7, 3), (50, 7, 3), (1, 7, 3)), ((50, 7, 1), (50, 7, 3), (50, 1, 3)),
             ((50, 7, 1), (50, 7, 3), (1, 7, 1)), ((50, 7, 1), (50, 7, 3), (50, 7, 3)),
             ((50, 1, 1), (1, 7, 3), (1, 7, 3)), ((4, 0), (4, 0), (1, 0)), ((3, 0), (3, 1), (3, 1)),
             # a bias's: operands and target of fewer dims, aligned to the last ones
             ((20, 6), (6,), (6,)), ((6,), (20, 6), (6,)), ((20, 6), (20, 6), (6,)), ((20, 1), (20, 6), (6,)),
             ((3, 20, 6), (20, 6), (20, 6)), ((20, 6), (3, 20, 6), (6,)),
             # nothing summed (LSTM's rows): the product itself
             ((14,), (14,), (14,)), ((5, 4), (5, 4), (5, 4)), ((14,), (1,), (14,))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shapes", _PRODUCTS)
def test_a_product_summed_as_computed_is_the_written_sum_to_the_bit(dtype, shapes):
    a, b = _normal(shapes[0], dtype), _normal(shapes[1], dtype, seed=1)
    like = np.zeros(shapes[2], dtype)
    got, expected = product_summed_once(a, b, like), product_written_then_summed_once(a, b, like)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_allclose(got, rt.unbroadcast(a * b, like), rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_a_product_summed_twice_is_the_two_sums_to_the_bit():
    a, b = _normal((60, 9, 1)), _normal((60, 9, 4), seed=1)
    for like, then in ((b, np.zeros((1, 9, 4))), (b, np.zeros((1, 1, 4))), (np.zeros((60, 1, 4)), np.zeros((1, 1, 4))),
                       (b, np.zeros((60, 9, 4))), (b, np.zeros((1, 9, 1)))):
        got, expected = product_summed(a, b, like, then), product_written_then_summed(a, b, like, then)
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
    # nothing summed by either unbroadcast
    np.testing.assert_array_equal(product_summed(b, b, b, b), b * b)
    # a strided operand, and one in Fortran order: the written product, then its sums
    for big in (_normal((60, 9, 8), seed=2)[:, :, ::2], np.asfortranarray(b)):
        np.testing.assert_array_equal(product_summed(a, big, big, np.zeros((1, 9, 4))),
                                      product_written_then_summed(a, big, big, np.zeros((1, 9, 4))))


def test_a_k_means_gradient_sums_its_products_as_it_computes_them():
    centroids, points = _normal((7, 3)), _normal((50, 3), seed=1)
    code = tr.show(tr.jit(tr.grad(cases.nearest_centroid_total)), centroids, points)
    # (the square's own sum down to _t2, of its shape, is left out: the product is summed once, to _t1)
    assert "nl.unbroadcast_product(nl.expand_axis(distances_bar, 2) * nl.scalar_like(distances_bar, 2), _t2, _t1)" \
        in code, code


def test_a_product_summed_to_an_operand_given_a_new_axis_is_summed_as_computed():
    code = tr.show(tr.jit(tr.grad(cases.row_weighted_total)), _normal(6), _normal((20, 6), seed=1))
    assert "nl.unbroadcast_product(" in code, code


def test_a_product_summed_to_an_operand_of_unknown_rank_is_left_written():
    # (its ranks are unknown where the code is written; summing it in the walk would be a compile of
    # its own for each gradient, for a sum that is mostly of nothing)
    code = tr.show(tr.jit(tr.grad(cases.scaled_rows_total, argnums=1)), _normal((20, 6)), _normal(6, seed=1))
    assert "rt.unbroadcast(" in code and "unbroadcast_product" not in code, code


@pytest.mark.parametrize("fn, args", [
    (cases.nearest_centroid_total, (_normal((7, 3)), _normal((50, 3), seed=1))),
    (cases.scaled_rows_total, (_normal((20, 6)), _normal((6,), seed=1))),
    (cases.row_weighted_total, (_normal(6), _normal((20, 6), seed=1))),
    (cases.row_weighted_total, (_normal(6), _normal((1, 6), seed=1))),
    (cases.middle_axis_total, (_normal(5), _normal((4, 3), seed=1))),
    (cases.nearest_centroid_total, (_normal((7, 3)).astype(np.float32), _normal((50, 3), seed=1).astype(np.float32))),
])
def test_gradients_through_summed_products_match_the_python_target(fn, args):
    # (the python target's unbroadcast is np.sum, which adds in another order: to a few ulps)
    for argnums in range(len(args)):
        got = tr.jit(tr.grad(fn, argnums=argnums))(*args)
        expected = tr.jit(tr.grad(fn, argnums=argnums), target="python")(*args)
        tolerance = dict(rtol=1e-5, atol=1e-6) if got.dtype == np.float32 else dict(rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got, expected, **tolerance)


def test_a_batched_gradient_sums_its_products_as_it_computes_them_and_matches_the_python_target():
    # vmap adds a leading axis to every operand: the walk's ranks are not the code's
    weights, x = _normal((5, 6)), _normal((20, 6), seed=1)
    batched = tr.vmap(tr.grad(cases.row_weighted_total), in_axes=(0, None))
    assert "nl.unbroadcast_product(" in tr.show(tr.jit(batched), weights, x)
    np.testing.assert_allclose(tr.jit(batched)(weights, x), tr.jit(batched, target="python")(weights, x),
                               rtol=1e-12, atol=1e-14)


def test_a_cotangent_made_before_a_pop_of_what_it_read_joins_the_statement_after():
    """Reverse mode reads a taped value (x = rt.top(t)), uses it, then pops it (x = rt.pop(t)): the
    pop gives x the same value, so the sigmoid's cotangent (its division by 1 + e) and exp's (its
    product with e) are one expression, not an array each."""
    w, x = 0.7, _normal(40)
    code = tr.show(tr.jit(tr.grad(cases.sigmoid_layers, argnums=1)), w, x)
    assert "-((((-h_bar) * h) / _t3) * _t2)" in code, code
    got = tr.jit(tr.grad(cases.sigmoid_layers, argnums=1))(w, x)
    np.testing.assert_allclose(got, tr.grad(cases.sigmoid_layers, argnums=1)(w, x), rtol=1e-12)
