"""max, min, sum and mean along axes under numba (backends/numba_reductions.py),
against NumPy: every axis form, keepdims, int, bool and float dtypes,
non-contiguous inputs, NaN anywhere in a row (in the vector body or the
tail), signed zeros, empty axes, and loops that compile to vector
instructions.

max and min must equal NumPy's exactly, NaN included.  Signed zeros: along a
non-last axis the result is np.maximum (np.minimum) applied row after row,
NumPy's own order, so the sign of a zero matches NumPy's too; along the last
axis (or all axes) the sign of a zero result is unspecified when a row holds
both -0.0 and 0.0 (NumPy's own depends on its SIMD lanes), so only equality
is checked there.  Sums of contiguous rows are NumPy's pairwise sums and
sums along a leading axis add in NumPy's order, so both equal NumPy's to the
bit; other layouts (copied contiguous first) are compared to a tolerance."""
import functools
import math
import re
import warnings

import numpy as np
import pytest
from numba import njit, types

from transformer.backends import numba_reductions as nr

HELPERS = {"max": (nr.max_axis, np.max), "min": (nr.min_axis, np.min),
           "sum": (nr.sum_axis, np.sum), "mean": (nr.mean_axis, np.mean)}


@functools.cache
def compiled(name, keepdims):
    """An njit function (x, axis) -> helper(x, axis, keepdims); keepdims must be a literal."""
    helper = HELPERS[name][0]
    if keepdims:
        @njit
        def reduce(x, axis):
            return helper(x, axis, True)
    else:
        @njit
        def reduce(x, axis):
            return helper(x, axis, False)
    return reduce


def numpy_result(name, x, axis, keepdims):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # the mean of an empty axis
        return HELPERS[name][1](x, axis=axis, keepdims=keepdims)


def check(name, x, axis, keepdims=False):
    got = compiled(name, keepdims)(x, axis)
    want = numpy_result(name, x, axis, keepdims)
    where = f"{name}(x{x.shape} {x.dtype}, axis={axis}, keepdims={keepdims})"
    assert np.shape(got) == np.shape(want), f"{where}: shape {np.shape(got)} != {np.shape(want)}"
    if np.ndim(want) > 0:
        assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
    if name in ("max", "min") or not np.issubdtype(np.asarray(want).dtype, np.inexact):
        assert np.array_equal(got, want, equal_nan=np.issubdtype(x.dtype, np.inexact)), f"{where}: {got} != {want}"
    else:
        rtol = 1e-5 if x.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True, err_msg=where)
    return got, want


def values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.3
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# ------------------------------------------------------------------ axis forms
AXES_3D = [0, 1, 2, -1, -2, None, (0, 1), (1, 2), (0, 2), (2, 0)]   # (0, 2), (2, 0): moved to the end first


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES_3D, ids=str)
@pytest.mark.parametrize("name", HELPERS)
def test_every_axis_form_matches_numpy(name, axis, keepdims):
    check(name, values((4, 5, 37), np.float64), axis, keepdims)


# (each dtype is a compile: integers for max and min are below, with their limits)
@pytest.mark.parametrize("name, dtype", [("max", np.float32), ("min", np.float32), ("sum", np.float32),
                                         ("mean", np.float32), ("sum", np.int32), ("mean", np.int32),
                                         ("sum", np.bool_), ("mean", np.uint8)],
                         ids=lambda v: np.dtype(v).name if not isinstance(v, str) else v)
def test_dtypes_match_numpy(name, dtype):
    x = values((6, 41), dtype)
    for axis in (0, -1, None):
        check(name, x, axis)


@pytest.mark.parametrize("name", ["max", "min"])
def test_integer_extremes_and_unsigned_order(name):
    # unsigned values above the signed range compare as unsigned; int64's
    # limits survive (no detour through float)
    for x in (np.array([[0, 2**63 + 5, 7], [2**64 - 1, 1, 2**63]], np.uint64),
              np.array([[np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max]] * 2, np.int64),
              np.array([[200, 3, 129], [127, 128, 0]], np.uint8),
              np.array([[-128, 127, -1], [0, -127, 5]], np.int8)):
        for axis in (0, 1):   # whole rows, and a row at a time
            check(name, x, axis)


def test_bool_max_is_any_and_min_is_all():
    x = np.array([[True, False, False], [False, False, False], [True, True, True]])
    for axis in (0, 1):
        got, _ = check("max", x, axis)
        assert np.array_equal(got, np.any(x, axis=axis))
        got, _ = check("min", x, axis)
        assert np.array_equal(got, np.all(x, axis=axis))


# ------------------------------------------------------------ memory layouts
@pytest.mark.parametrize("name", HELPERS)
def test_non_contiguous_inputs(name):
    x = values((24, 50), np.float64)
    for view in (x.T, x[::2, ::3], x[:, ::-1], x[3:17:4, 1:], np.asfortranarray(x)):
        for axis in (0, 1, -1, None):
            check(name, view, axis)
    check(name, x[::2, ::3], (1, 0))


# ----------------------------------------------------------------------- NaN
# lengths around the vector width times the unroll (4 x 4 doubles, 4 x 8
# floats), so a NaN lands in the vector body, the remainder loop, or alone
ROW_LENGTHS = [1, 2, 3, 7, 15, 16, 17, 31, 33, 64, 100, 256, 1000]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["max", "min"])
def test_a_nan_anywhere_in_a_row_gives_nan(name, dtype):
    for n in ROW_LENGTHS:
        for where in sorted({0, n // 2, n - 1}):
            for nan in (np.nan, -np.nan):
                x = values((3, n), dtype)
                x[1, where] = nan
                got, _ = check(name, x, -1)
                assert np.isnan(got[1]) and not np.isnan(got[[0, 2]]).any(), (n, where)
                check(name, x, None)
                check(name, x[1], 0)
                check(name, np.ascontiguousarray(x.T), 0)   # the same rows along axis 0


@pytest.mark.parametrize("name", ["max", "min"])
def test_nan_among_infinities_and_rows_of_nan(name):
    inf = np.inf
    x = np.array([[inf, -inf, np.nan, 1.0], [np.nan] * 4, [-inf, -inf, -inf, -inf],
                  [inf, inf, 1.0, -inf], [1.0, 2.0, 3.0, np.nan]])
    for axis in (0, 1, None):
        check(name, x, axis)
    check(name, np.tile(x, (1, 70)), 1)


def test_nan_propagates_through_sum_and_mean():
    x = values((5, 300), np.float64)
    x[2, 250] = np.nan
    x[4, 3] = np.inf
    for name in ("sum", "mean"):
        for axis in (0, 1, None):
            check(name, x, axis)


# --------------------------------------------------------------- signed zeros
@pytest.mark.parametrize("name", ["max", "min"])
def test_signed_zeros(name):
    numpy_fn = HELPERS[name][1]
    reduce = compiled(name, False)
    for n in (1, 2, 5, 16, 17, 100):
        negative, positive = np.full((2, n), -0.0), np.full((2, n), 0.0)
        assert np.signbit(reduce(negative, 1)).all() and np.signbit(reduce(negative, None))
        assert not np.signbit(reduce(positive, 1)).any() and not np.signbit(reduce(positive, None))
    # a row with both: either zero (NumPy's own choice depends on its SIMD lanes)
    for row in ([-0.0, 0.0], [0.0, -0.0], [-0.0] * 9 + [0.0] * 9, [0.0, -0.0] * 40):
        x = np.array([row])
        assert reduce(x, 1)[0] == 0.0 and reduce(x, None) == 0.0
    # along axis 0, np.maximum (np.minimum) row after row: a tie gives the later
    # row's zero, as NumPy's does
    x = np.array([[-0.0, 0.0, -0.0, 0.0, 1.0], [0.0, -0.0, -0.0, 0.0, 1.0], [0.0, -0.0, 0.0, -0.0, -1.0]])
    for rows in (x[:1], x[:2], x):
        got, want = reduce(rows, 0), numpy_fn(rows, axis=0)
        assert np.array_equal(np.signbit(got), np.signbit(want)), (rows, got, want)


# -------------------------------------------------------------- empty axes
@pytest.mark.parametrize("name", ["max", "min"])
def test_an_empty_axis_raises_as_numpy_does(name):
    operation = {"max": "maximum", "min": "minimum"}[name]
    for shape, axis in [((3, 0), 1), ((3, 0), -1), ((0, 3), 0), ((0, 0), 1), ((0,), None), ((0,), 0),
                        ((2, 0, 3), (0, 1)), ((0, 3), None)]:
        x = np.zeros(shape)
        with pytest.raises(ValueError, match=f"zero-size array to reduction operation {operation}"):
            HELPERS[name][1](x, axis=axis)
        with pytest.raises(ValueError, match=f"zero-size array to reduction operation {operation}"):
            compiled(name, False)(x, axis)


@pytest.mark.parametrize("name", HELPERS)
def test_nothing_to_reduce_over_a_nonempty_axis(name):
    # an empty kept axis: an empty result, no error
    check(name, np.zeros((0, 3)), 1)
    check(name, np.zeros((0, 3)), 1, keepdims=True)
    check(name, np.zeros((3, 0)), 0)


@pytest.mark.parametrize("name", ["sum", "mean"])
def test_sum_and_mean_of_an_empty_axis(name):
    # 0 and NaN (NumPy warns for the mean), not an error
    for shape, axis in [((3, 0), 1), ((0, 3), 0), ((0,), None)]:
        check(name, np.zeros(shape), axis)


# ------------------------------------------------------- sums to the bit
# lengths around NumPy's pairwise blocks: under 8 (in order), up to 128 (8
# partial sums), beyond (halves, recursively), and not multiples of 8
SUM_LENGTHS = [0, 1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 127, 128, 129, 135, 136, 255, 256, 257, 1000, 4097]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_sums_of_contiguous_rows_are_numpys_to_the_bit(name, dtype):
    rng = np.random.default_rng(3)
    for n in SUM_LENGTHS + [100_003]:
        # magnitudes over six decades, so that any other order rounds differently
        x = (rng.standard_normal((3, n)) * 10 ** rng.uniform(-3, 3, (3, n))).astype(dtype)
        for got, want in ((compiled(name, False)(x, -1), numpy_result(name, x, -1, False)),
                          (compiled(name, False)(x[1], None), numpy_result(name, x[1], None, False)),
                          (compiled(name, False)(x, None), numpy_result(name, x, None, False))):
            assert np.array_equal(got, want, equal_nan=True), (n, got, want)


@pytest.mark.parametrize("name", ["sum", "mean"])
def test_sums_along_a_leading_axis_are_numpys_to_the_bit(name):
    rng = np.random.default_rng(4)
    for n in (1, 2, 9, 130, 1000):
        x = rng.standard_normal((n, 3, 19)) * 10 ** rng.uniform(-3, 3, (n, 3, 19))
        for axis in (0, 1):
            got, want = compiled(name, False)(x, axis), numpy_result(name, x, axis, False)
            assert np.array_equal(got, want), (n, axis)


def test_a_sum_of_negative_zeros_is_zero_as_in_numpy():
    # NumPy adds to its identity 0.0
    for shape in ((3, 5), (3, 200)):
        x = np.full(shape, -0.0)
        for axis in (0, 1, None):
            got, want = compiled("sum", False)(x, axis), np.sum(x, axis=axis)
            assert np.array_equal(np.signbit(got), np.signbit(want)), (shape, axis)


def test_sum_is_more_accurate_than_a_sequential_sum():
    # many small terms after a large one: a sequential float32 sum rounds each
    x = np.concatenate(([1e4], np.full(100_000, 0.01))).astype(np.float32)
    exact = math.fsum(x.astype(np.float64))
    sequential = np.cumsum(x)[-1]          # np.cumsum adds in order
    for got in (compiled("sum", False)(x, None), compiled("sum", False)(x[None], 1)[0]):
        assert abs(got - exact) < abs(sequential - exact) / 10, (got, sequential, exact)


def test_integer_sums_are_exact():
    x = np.full((3, 1000), 2**40 + 1, np.int64)
    check("sum", x, 1)
    check("sum", x, 0)
    check("mean", x, None)


# --------------------------------------------------- loops in vector form
def _llvm(name, dtype=types.float64):
    reduce = compiled(name, False)
    signature = (types.Array(dtype, 2, "C"), types.int64)
    reduce.compile(signature)
    return reduce.inspect_llvm(signature)


@pytest.mark.parametrize("name, op", [("max", "maxnum"), ("min", "minnum")])
def test_max_and_min_compile_to_vector_instructions(name, op):
    ir = _llvm(name)
    # along the last axis: a vector max (min) reduction beside a vector NaN test
    assert re.search(rf"@llvm\.{op}\.v\d+f64\(", ir), "the running max (min) of a row was not vectorised"
    assert re.search(r"fcmp uno <\d+ x double>", ir), "the NaN test of a row was not vectorised"
    # along another axis: whole rows compared at a time
    assert re.search(rf"fcmp o{'gt' if name == 'max' else 'lt'} <\d+ x double>", ir), "the columns were not vectorised"


def test_sum_compiles_to_vector_instructions():
    ir = _llvm("sum")
    # NumPy's 8 partial sums as one vector, and whole rows added at a time
    assert re.search(r"fadd <8 x double>", ir), "the 8 partial sums of a row are not one vector"
    assert re.search(r"fadd <\d+ x double>[^\n]*wide\.load", ir), "the sum of whole rows was not vectorised"


def test_complex_keeps_numbas_order():
    x = np.array([[1 + 2j, 3 - 1j, 3 + 0j], [3 + 0j, -1j, 3 - 2j]])
    for name in ("max", "min"):
        for axis in (0, 1):
            check(name, x, axis)
