"""Softmax, and a sum of squares, along the last axis in one loop over rows (backends/numba_rows.py),
and the passes that find them in generated code (numba_fusion.fuse_rows, fuse_sums_of_squares)."""
import numpy as np
import pytest
from numba import njit

import row_fusion_cases as cases
import transformer as tr
from transformer.backends import numba_fusion, numba_lowering
from transformer.backends.numba_reductions import sum_axis as nl_sum_axis
from transformer.backends.numba_rows import softmax_last_axis, sum_of_squares
from transformer.normalize import normalize


@njit
def kernel(x, divisor):
    return softmax_last_axis(x, divisor)


@njit
def kernel_undivided(x):
    return softmax_last_axis(x, None)


def numpy_softmax(x, divisor=None):
    return softmax_last_axis(x, divisor)        # the helper's plain-NumPy meaning


def rows(shape, dtype=np.float64, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 4).astype(dtype)


@pytest.mark.parametrize("shape", [(7,), (5, 33), (2, 3, 17), (1, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_kernel_matches_numpy(shape, dtype):
    x = rows(shape, dtype)
    got = kernel_undivided(x)
    assert got.dtype == dtype and got.shape == x.shape
    rtol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got, numpy_softmax(x), rtol=rtol, atol=0)


@pytest.mark.parametrize("divisor", [3, 8.0, np.float32(2.5)])
def test_a_scalar_divisor_is_divided_first(divisor):
    x = rows((6, 40))
    np.testing.assert_allclose(kernel(x, divisor), numpy_softmax(x, divisor), rtol=1e-14, atol=0)


def test_the_divisor_sets_the_dtype_as_numpy_does():
    x = rows((4, 9), np.float32)
    assert kernel(x, np.float32(2.0)).dtype == np.float32
    assert kernel(x, 2.0).dtype == np.float64       # a float64 scalar makes the quotient float64
    np.testing.assert_allclose(kernel(x, 2.0), numpy_softmax(x, np.float64(2.0)), rtol=1e-12)


def test_an_array_divisor_broadcasts_as_numpy_does():
    x, divisor = rows((3, 5)), np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    np.testing.assert_allclose(kernel(x, divisor), numpy_softmax(x, divisor), rtol=1e-14)


def test_a_strided_view_is_read_as_its_values():
    x = rows((30, 20))
    np.testing.assert_allclose(kernel_undivided(x.T), numpy_softmax(x.T), rtol=1e-14)
    np.testing.assert_allclose(kernel_undivided(x[:, ::3]), numpy_softmax(x[:, ::3]), rtol=1e-14)


def test_infinities_and_nans_propagate_as_in_numpy():
    x = np.array([[0.0, -np.inf, 1.0], [np.inf, 0.0, 1.0], [np.nan, 0.0, 1.0], [-np.inf, -np.inf, -np.inf]])
    with np.errstate(invalid="ignore"):
        expected = numpy_softmax(x)
    np.testing.assert_array_equal(np.isnan(kernel_undivided(x)), np.isnan(expected))
    np.testing.assert_allclose(kernel_undivided(x), expected, rtol=1e-14)


def test_empty_rows_are_refused_and_no_rows_are_fine():
    with pytest.raises(ValueError):
        numpy_softmax(np.zeros((3, 0)))
    with pytest.raises(ValueError):
        kernel_undivided(np.zeros((3, 0)))
    assert kernel_undivided(np.zeros((0, 4))).shape == (0, 4)


# ------------------------------------------------------------ the pass
def fused(fn) -> str:
    core = numba_lowering.lower_tapes(numba_lowering.lower(normalize(fn)))
    return numba_fusion.fuse_sums_of_squares(numba_fusion.fuse(numba_fusion.fuse_rows(core))).code()


@pytest.mark.parametrize("fn, call", [
    (cases.attention_weights, "nl.softmax_last_axis(_t1, _t4)"),
    (cases.plain_softmax, "nl.softmax_last_axis(x, None)"),
    (cases.written_out, "nl.softmax_last_axis(x, None)"),
])
def test_a_softmax_becomes_one_call(fn, call):
    code = fused(fn)
    assert call in code, code
    assert "nl.max_axis" not in code and "nl.sum_axis" not in code, code
    assert "# (one loop over rows:" in code


def test_the_user_lines_of_the_replaced_statements_stay_each_once():
    code = fused(cases.attention_weights)
    # tr.nn.softmax's two lines (commented "(nn.py:N)": lines of transformer's own, not origins)
    first = tr.nn.softmax.__code__.co_firstlineno + 1
    shifted, divided = f"(nn.py:{first})", f"(nn.py:{first + 1})"
    assert code.count(shifted) == 1 and code.count(divided) == 1, code
    assert code.index(divided) < code.index("nl.softmax_last_axis")


def test_a_softmax_in_a_loop_body_is_fused_there():
    code = fused(cases.in_a_loop)
    assert "nl.softmax_last_axis(" in code and "nl.max_axis" not in code, code


def test_a_scale_by_a_product_stays_its_own_pass():
    code = fused(cases.scaled_by_a_product)
    assert "nl.softmax_last_axis(softmax_x, None)" in code or "nl.softmax_last_axis(_t" in code, code


@pytest.mark.parametrize("fn", [cases.along_the_first_axis, cases.exponentials_read_again,
                                cases.peak_read_again])
def test_what_reads_a_middle_value_keeps_the_passes(fn):
    code = fused(fn)
    assert "nl.softmax_last_axis" not in code, code
    assert "nl.max_axis" in code and "nl.sum_axis" in code


def test_a_scale_read_again_is_not_folded_in():
    code = fused(cases.scale_read_again)
    assert "nl.softmax_last_axis(scaled, None)" in code, code


@pytest.mark.parametrize("fn, args", [
    (cases.attention_weights, (rows((9, 4)), rows((11, 4), seed=1))),
    (cases.plain_softmax, (rows((3, 4, 5)),)),
    (cases.written_out, (rows((6, 7), np.float32),)),
    (cases.in_a_loop, (rows((5, 6)), 3)),
    (cases.scaled_by_a_product, (rows((5, 6)),)),
    (cases.along_the_first_axis, (rows((5, 6)),)),
    (cases.exponentials_read_again, (rows((5, 6)),)),
    (cases.peak_read_again, (rows((5, 6)),)),
    (cases.scale_read_again, (rows((5, 6)),)),
])
def test_the_compiled_function_matches_the_python_target(fn, args):
    got = tr.jit(fn)(*args)
    expected = tr.jit(fn, target="python")(*args)
    for g, e in zip(*(tuple(r) if isinstance(r, tuple) else (r,) for r in (got, expected))):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-5 if e.dtype == np.float32 else 1e-13)


# ------------------------------------------------------------ sum of squares
@njit
def squares_kernel(x, axis):
    return sum_of_squares(x, axis, False)


@njit
def squares_kernel_kept(x, axis):
    return sum_of_squares(x, axis, True)


@njit
def squares_kernel_everything(x):
    return sum_of_squares(x, None, False)


def two_passes(x, axis, keepdims=False):
    return np.sum(x ** 2, axis=axis, keepdims=keepdims)


# rows shorter than the 8 partial sums, a multiple of them, a remainder, past the 128 that NumPy
# adds in one block (summed by halves), and empty
@pytest.mark.parametrize("shape", [(4, 3), (5, 2, 8), (3, 21), (2, 128), (3, 300), (2, 1029), (6, 0), (0, 5)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_sum_of_squares_is_numpys_to_the_bit(shape, dtype):
    x = rows(shape, dtype)
    got = squares_kernel(x, len(shape) - 1)
    expected = two_passes(x, -1)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(squares_kernel(x, -1), expected)


@njit
def compiled_two_passes(x, axis):
    return nl_sum_axis(x ** 2, axis, False)


def test_a_strided_view_of_squares_is_read_as_its_values():
    # NumPy keeps a transpose's layout in x ** 2 and adds its strided rows in order, not pairwise:
    # the compiled squares are contiguous rows, added pairwise, as the kernel adds them
    x = rows((40, 30))
    for view in (x.T, x[:, ::3], rows((300, 7)).T, rows((7, 600))[:, ::2]):
        np.testing.assert_array_equal(squares_kernel(view, 1), compiled_two_passes(view, 1))
        np.testing.assert_allclose(squares_kernel(view, 1), two_passes(view, 1), rtol=1e-14)
    # stacks: GMM's transpose of einsum's product, a middle axis moved, rows past 128; stacks of
    # contiguous rows in another order (read in memory order, no copy): 3-d and 4-d, rows past
    # 128, reversed, broadcast, with gaps, empty, float32
    stack = rows((6, 5, 40))
    four = rows((2, 3, 4, 9))
    for view in (np.transpose(stack, (2, 0, 1)), np.transpose(stack, (1, 0, 2)), stack[:, ::2, ::3],
                 np.transpose(rows((3, 200, 4)), (0, 2, 1)), np.transpose(rows((3, 5, 200)), (1, 0, 2)),
                 np.transpose(four, (2, 0, 1, 3)), np.transpose(four, (1, 2, 0, 3)), stack[::-1],
                 np.broadcast_to(rows((5, 1, 7)), (5, 4, 7)), stack[:, ::2, :], np.transpose(stack, (1, 0, 2))[:, 1:4],
                 np.transpose(rows((4, 0, 3)), (1, 0, 2)), np.transpose(stack, (1, 0, 2)).astype(np.float32)):
        last = view.ndim - 1
        assert squares_kernel(view, last).shape == view.shape[:-1]
        np.testing.assert_array_equal(squares_kernel(view, last), compiled_two_passes(view, last))
        np.testing.assert_array_equal(squares_kernel(view, -1), compiled_two_passes(view, last))
        np.testing.assert_allclose(squares_kernel(view, last), two_passes(view, last),
                                   rtol=1e-14 if view.dtype == np.float64 else 1e-5)


def test_other_axes_and_types_are_the_two_passes():
    x = rows((5, 7, 9))
    np.testing.assert_array_equal(squares_kernel(x, 0), two_passes(x, 0))
    np.testing.assert_array_equal(squares_kernel(x, 1), two_passes(x, 1))
    np.testing.assert_array_equal(squares_kernel_kept(x, 2), two_passes(x, 2, keepdims=True))
    np.testing.assert_array_equal(squares_kernel_everything(x), two_passes(x, None))
    whole = np.arange(12).reshape(3, 4)
    assert squares_kernel(whole, 1).dtype == two_passes(whole, 1).dtype
    np.testing.assert_array_equal(squares_kernel(whole, 1), two_passes(whole, 1))
    vector = rows((300,))
    assert squares_kernel(vector, 0) == two_passes(vector, 0)


def test_infinities_and_nans_in_squares_propagate_as_in_numpy():
    x = np.array([[1.0, np.inf, 2.0], [np.nan, 1.0, 0.0], [1e200, 1e200, 0.0], [-0.0, -0.0, -0.0]])
    np.testing.assert_array_equal(squares_kernel(x, 1), two_passes(x, 1))


@pytest.mark.parametrize("fn", [cases.squared_distances, cases.nearest_distance_total])
def test_a_sum_of_squares_becomes_one_call(fn):
    code = fused(fn)
    assert "nl.sum_of_squares(_t2, 2, False)" in code, code
    assert "scalar_like(_t2, 2)" not in code.split("nl.sum_of_squares")[0], code
    assert "# (one loop over rows: each square added as it is computed" in code


def test_the_squares_of_a_gradient_join_after_their_cotangent_stops_reading_them():
    # grad's backward sweep takes the squares' shape (expand_to), a read that fuse removes
    code = tr.show(tr.jit(tr.grad(cases.nearest_distance_total)), rows((7, 3)), rows((50, 3), seed=1))
    assert "distances = nl.sum_of_squares(_t2, 2, False)" in code, code


@pytest.mark.parametrize("fn", [cases.squares_read_again])
def test_squares_read_again_keep_their_array(fn):
    code = fused(fn)
    assert "nl.sum_of_squares" not in code and "nl.sum_axis" in code, code


def test_a_sum_of_squares_in_a_loop_body_is_fused_there():
    assert "nl.sum_of_squares(" in fused(cases.squares_summed_in_a_loop)


@pytest.mark.parametrize("fn, args", [
    (cases.squared_distances, (rows((50, 3)), rows((7, 3), seed=1))),
    (cases.nearest_distance_total, (rows((7, 3)), rows((50, 3), seed=1))),
    (cases.squares_along_the_first_axis, (rows((5, 6)),)),
    (cases.squares_read_again, (rows((5, 6)),)),
    (cases.squares_summed_in_a_loop, (rows((5, 200)), 3)),
])
def test_sums_of_squares_compiled_match_the_python_target_to_the_bit(fn, args):
    np.testing.assert_array_equal(tr.jit(fn)(*args), tr.jit(fn, target="python")(*args))


def test_the_gradient_through_a_sum_of_squares_matches_the_python_target():
    centroids, points = rows((7, 3)), rows((50, 3), seed=1)
    got = tr.jit(tr.grad(cases.nearest_distance_total))(centroids, points)
    expected = tr.jit(tr.grad(cases.nearest_distance_total), target="python")(centroids, points)
    np.testing.assert_array_equal(got, expected)
