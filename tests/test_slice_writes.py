"""Slice writes under jit (``x[1:] = v``) are a loop over the elements where v has the view's shape
and its own memory (numba_indexing.assign_into), and numba's own write otherwise: a value that
broadcasts, a number, or one that overlaps the view (``x[1:] = x[:-1]``, which NumPy reads whole
before writing)."""
import numpy as np
import pytest

import transformer as tr


def shift_right(x):
    y = x * 1.0
    y[1:] = y[:-1]           # overlaps: y[:-1] must be read before any of it is written
    return y


def rows_and_columns(x, row):
    y = x * 1.0
    y[1:, :] = x[:-1, :] * 2.0
    y[0, 1:] = row[1:]
    y[:, 0] = 0.5
    y[::2, 2:] = row[2:]     # a row broadcast over every other row
    return y


def chain_rates(x, y):
    z = np.empty_like(y)
    z[0] = x[0]
    z[1:] = x[1:] * y[:-1]
    return z


@pytest.mark.parametrize("fn, args", [
    (shift_right, (np.arange(5.0),)),
    (rows_and_columns, (np.arange(12.0).reshape(4, 3) + 0.5, np.array([7.0, 8.0, 9.0]))),
    (chain_rates, (np.linspace(0.5, 1.5, 6), np.linspace(-1.0, 1.0, 6))),
])
def test_slice_writes_give_numpys_values(fn, args):
    assert "nl.assign_into(" in tr.show(tr.jit(fn))
    np.testing.assert_array_equal(tr.jit(fn)(*args), fn(*args))


def test_the_gradient_through_slice_writes():
    x, y = np.linspace(0.5, 1.5, 6), np.linspace(-1.0, 1.0, 6)

    def loss(x, y):
        return np.sum(chain_rates(x, y) ** 2)
    for compiled, plain in zip(tr.jit(tr.grad(loss, argnums=(0, 1)))(x, y), tr.grad(loss, argnums=(0, 1))(x, y)):
        np.testing.assert_allclose(compiled, plain, rtol=1e-14)


# A cotangent summed into a slice of another (reverse mode's adjoint of a slice read,
# ``x_bar[1:] = x_bar[1:] + g``) is made in the slice itself: nl.add_into, one pass and no array
# for the sum; where the value overlaps the view, NumPy's order (the whole sum first) is kept.

def neighbours(x):
    return np.sum(np.sin(x[1:]) * x[:-1]) + np.sum(x[1:3] ** 2)


def test_a_cotangent_summed_into_a_slice_is_summed_in_place():
    x = np.linspace(-1.0, 1.5, 7)
    g = tr.jit(tr.grad(neighbours))
    assert "nl.add_into(x_bar[1:]" in tr.show(g, x)
    np.testing.assert_allclose(g(x), tr.grad(neighbours)(x), rtol=1e-14)


@pytest.mark.parametrize("shape", [(9,), (4, 5), (2, 3, 4)])
def test_add_into_gives_numpys_sum_also_where_the_value_overlaps_the_view(shape):
    import numba

    from transformer.backends import cpu, numba_indexing
    cpu.load_numba()
    add_into = numba_indexing.add_into

    @numba.njit
    def apart(a, b):
        add_into(a[1:], b[1:])

    @numba.njit
    def overlapping(a):
        add_into(a[1:], a[:-1])          # reads what it writes: NumPy sums first

    @numba.njit
    def number(a):
        add_into(a[1:], 0.5)

    a = np.arange(np.prod(shape), dtype=float).reshape(shape)
    b = a * 0.25 + 1.0
    expected = a.copy()
    expected[1:] = expected[1:] + b[1:]
    got = a.copy()
    apart(got, b)
    np.testing.assert_array_equal(got, expected)
    expected = a.copy()
    expected[1:] = expected[1:] + expected[:-1]
    got = a.copy()
    overlapping(got)
    np.testing.assert_array_equal(got, expected)
    expected = a.copy()
    expected[1:] = expected[1:] + 0.5
    got = a.copy()
    number(got)
    np.testing.assert_array_equal(got, expected)


# Arithmetic written into a slice (``z[1:] = x[1:] * y[:-1]``) is a loop over the view's elements
# with no array for the product, where every operand is a number or a 1-d array of the view's shape
# apart from it (nl.fits); the whole expression's write otherwise.  Both give NumPy's values.

def products_into_a_new_array(x, k):
    z = np.empty_like(x)
    z[0] = x[0]
    z[1:] = x[1:] * x[:-1] - k / 2.0
    return z


def reads_what_it_writes(x):
    y = x * 1.0
    y[1:] = y[:-1] * 2.0 + x[1:]      # overlaps: NumPy computes the whole right-hand side first
    return y


def broadcasts_a_one_element_array(x, w):
    z = np.zeros_like(x)
    z[1:] = x[1:] * w                 # w of shape (1,): not the view's shape
    return z


def integer_products(a, b):
    z = np.zeros(a.shape[0], dtype=np.int64)
    z[1:] = a[1:] * b[:-1] + 3
    return z


def uses_the_loop_s_names(x, view):
    i = 3
    z = np.empty_like(x)
    z[0] = x[0]
    z[1:] = x[1:] * view[:-1] + i     # the loop's own view and index take other names
    return z * i


def rows_of_a_matrix(x):
    z = np.zeros_like(x)
    z[1:] = x[:-1] * 0.5              # 2-d: the whole expression's write
    return z


@pytest.mark.parametrize("fn, args", [
    (products_into_a_new_array, (np.linspace(-1.0, 2.0, 9), 1.5)),
    (products_into_a_new_array, (np.linspace(-1.0, 2.0, 9, dtype=np.float32), np.float32(1.5))),
    (reads_what_it_writes, (np.linspace(0.5, 1.5, 7),)),
    (broadcasts_a_one_element_array, (np.linspace(0.5, 1.5, 7), np.array([3.0]))),
    (integer_products, (np.arange(6), np.arange(6) * 3 - 4)),
    (rows_of_a_matrix, (np.arange(12.0).reshape(4, 3),)),
    (uses_the_loop_s_names, (np.linspace(0.0, 1.0, 6), np.linspace(1.0, 2.0, 6))),
])
def test_arithmetic_written_into_a_slice_gives_numpys_values(fn, args):
    compiled = tr.jit(fn)
    assert "nl.fits(" in tr.show(compiled, *args)
    got, expected = compiled(*args), fn(*args)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


# The cotangent of a row read by an index held in a name (``main[2 * layer]``) is added into the
# row in place (nl.add_into_part: the row a view where the array has two or more axes, an entry
# added to where it has one); an arithmetic cotangent added into a slice, element by element where
# its operands fit the slice.

def rows_by_index(w, x):
    total = 0.0
    for i in range(w.shape[0]):
        row = w[i]
        total = total + np.sum(np.tanh(row * x[i]) * (row + 1.0))
    return total


def entries_by_index(v):
    total = 0.0
    for i in range(v.shape[0] - 1):
        total = total + v[i] * v[i + 1]
    return total


def tanh_into_a_slice(x):
    return np.sum(np.tanh(x[1:]) * x[:-1])


def central_difference(f, x, *rest):
    grad = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[k] = 1e-6
        grad[k] = (f(x + step, *rest) - f(x - step, *rest)) / 2e-6
    return grad


def test_a_row_cotangent_is_added_in_place_and_entries_as_written():
    w, x = np.linspace(-1.0, 1.0, 12).reshape(4, 3), np.linspace(0.5, 2.0, 4)
    g = tr.jit(tr.grad(rows_by_index))
    assert "nl.add_into_part(w_bar, " in tr.show(g, w, x)
    np.testing.assert_allclose(g(w, x), central_difference(rows_by_index, w, x), rtol=1e-6, atol=1e-8)
    v = np.linspace(-1.0, 2.0, 6)
    np.testing.assert_allclose(tr.jit(tr.grad(entries_by_index))(v), central_difference(entries_by_index, v),
                               rtol=1e-6, atol=1e-8)


def test_an_arithmetic_cotangent_is_added_into_a_slice_element_by_element():
    x = np.linspace(-1.0, 1.5, 7)
    g = tr.jit(tr.grad(tanh_into_a_slice))
    assert "view[i] += " in tr.show(g, x)
    np.testing.assert_allclose(g(x), central_difference(tanh_into_a_slice, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g(x), tr.grad(tanh_into_a_slice)(x), rtol=1e-14)
