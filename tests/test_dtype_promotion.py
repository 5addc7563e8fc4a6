"""Compiled code gives NumPy's result dtype, and NumPy's numbers, where integers meet floats.

numba alone lets any integer cast to float32 when the operands mix kinds, so an int64 array plus
a float32 array came back float32 (16777217 read as 16777216).  The oracle is NumPy itself.
"""
import numba
import numpy as np
import pytest

import transformer as tr

BIG = 16777217          # the first integer float32 cannot hold


def arithmetic(a, b):
    return a + b, a - b, a * b, a / b, np.maximum(a, b)


def scaled_by_its_length(x):
    n = x.shape[0]                  # a Python int in NumPy: weak, so float32 stays float32
    return x * n + 2


INTEGERS = [np.int8, np.int32, np.int64, np.uint8, np.uint64]
FLOATS = [np.float32, np.float64]


def _operands(integer, real):
    ints = np.array([BIG if np.iinfo(integer).max > BIG else 7, 3, 1], dtype=integer)
    return ints, np.array([0.0, 1.5, -2.0], dtype=real)


def _same_as_numpy(got, expected):
    for g, e in zip(got, expected):
        g = np.asarray(g)
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("integer", INTEGERS, ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("real", FLOATS, ids=lambda t: np.dtype(t).name)
def test_an_integer_array_and_a_float_array(integer, real):
    ints, reals = _operands(integer, real)
    compiled = tr.jit(arithmetic, tiered=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        _same_as_numpy(compiled(ints, reals), arithmetic(ints, reals))
        _same_as_numpy(compiled(reals, ints), arithmetic(reals, ints))


@pytest.mark.parametrize("integer", [np.int32, np.int64], ids=lambda t: np.dtype(t).name)
def test_a_float32_scalar_and_an_integer_array(integer):
    ints, _ = _operands(integer, np.float32)
    compiled = tr.jit(arithmetic, tiered=False)
    _same_as_numpy(compiled(np.float32(1.5), ints), arithmetic(np.float32(1.5), ints))


def test_a_python_int_keeps_float32():
    x = np.array([0.5, 1.5], np.float32)
    got = tr.jit(scaled_by_its_length, tiered=False)(x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, scaled_by_its_length(x))


def test_numba_code_outside_ours_keeps_numbas_rule():
    tr.jit(arithmetic, tiered=False)(*_operands(np.int64, np.float32))     # installs the rule

    @numba.njit
    def users_own(a, b):
        return a + b
    assert users_own(np.array([1]), np.array([1.0], np.float32)).dtype == np.float32


def differences(a):
    return np.diff(a)


def test_booleans_are_not_subtracted():
    """numba subtracts booleans as int8, where NumPy refuses: the compiled tier gave int8
    differences for np.diff of a bool array.  Now both tiers refuse at the user's line."""
    flags = np.array([True, False, False])
    with pytest.raises(tr.TransformError, match="test_dtype_promotion.py"):
        tr.jit(differences, tiered=False)(flags)


# --------------------------------- what an adversarial hunt found numba computing otherwise
def quotient(a, b):
    return a / b


def signs(x):
    return np.sign(x)


def close(a, b):
    return np.isclose(a, b)


def integer_power(i, j):
    return i ** j


@pytest.mark.parametrize("integer", [np.int8, np.int16, np.uint8, np.bool_], ids=lambda t: np.dtype(t).name)
def test_small_integers_divide_in_float64(integer):
    """numba took float32's loop for int8 / int8 (the first that fits); NumPy divides in float64."""
    a, b = np.array([7, 1, 0], dtype=integer), np.array([3, 3, 1], dtype=integer)
    got, expected = tr.jit(quotient, tiered=False)(a, b), quotient(a, b)
    assert got.dtype == expected.dtype == np.float64
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.uint64, np.int8, np.float64], ids=lambda t: np.dtype(t).name)
def test_sign_of_unsigned_integers(dtype):
    """numba read an unsigned integer as signed: the sign of 249 as uint8 came out 255."""
    x = np.array([np.iinfo(dtype).max if dtype != np.float64 else 2.0, 1, 0], dtype=dtype)
    got = tr.jit(signs, tiered=False)(x)
    assert got.dtype == signs(x).dtype
    np.testing.assert_array_equal(got, signs(x))


def test_isclose_of_infinities():
    a, b = np.array([-np.inf, np.inf, 1.0, np.inf, np.nan]), np.array([np.inf, -np.inf, np.inf, np.inf, np.nan])
    np.testing.assert_array_equal(tr.jit(close, tiered=False)(a, b), np.isclose(a, b))
    np.testing.assert_array_equal(tr.jit(close)(a, b), np.isclose(a, b))


def test_integer_arrays_to_negative_integer_powers_are_refused_as_numpy_refuses():
    with pytest.raises(ValueError, match="negative integer powers"):
        integer_power(np.array([2, 3]), np.array([-1, 2]))
    with pytest.raises(ValueError, match="negative integer powers"):
        tr.jit(integer_power, tiered=False)(np.array([2, 3]), np.array([-1, 2]))
    np.testing.assert_array_equal(tr.jit(integer_power, tiered=False)(np.array([2, 3]), np.array([3, 2])), [8, 9])
    np.testing.assert_allclose(tr.jit(integer_power, tiered=False)(np.array([2.0, 3.0]), np.array([-1.0, 0.5])),
                               integer_power(np.array([2.0, 3.0]), np.array([-1.0, 0.5])), rtol=1e-15)


def clipped_between_floats(x):
    return np.clip(x, 0.5, 2.5)


def clipped_between_ints(x):
    return np.clip(x, 1, 3)


def remainders(a, b):
    return np.fmod(a, b)


def test_booleans_clipped_as_numbers():
    """numba clipped booleans as booleans: [True, True] where NumPy gives [1.0, 0.5]."""
    flags = np.array([True, False])
    for f in (clipped_between_floats, clipped_between_ints):
        got, expected = tr.jit(f, tiered=False)(flags), f(flags)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("integer", [np.uint8, np.uint16, np.uint32, np.int8, np.int32], ids=lambda t: np.dtype(t).name)
def test_fmod_keeps_the_integer_type(integer):
    a, b = np.array([7, 100, 9], dtype=integer), np.array([2, 3, 4], dtype=integer)
    got = tr.jit(remainders, tiered=False)(a, b)
    assert got.dtype == remainders(a, b).dtype
    np.testing.assert_array_equal(got, remainders(a, b))
