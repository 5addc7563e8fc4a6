"""Regressions: values that share memory, and values that must not.

A copy (``np.array(y)``, ``y.copy()``, ``+y``) keeps the values it had when a write into ``y``
follows; a view (``y[:]``, ``y``, ``y.reshape(...)``) shows the write.  Each was mixed up by one
transform or another, with wrong numbers that looked right.  Every check is against NumPy itself
or central differences in float64.
"""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad, central_difference_hessian, central_difference_jvp

X = np.array([0.5, 0.7, -1.1])
T = np.array([1.0, 2.0, -0.5])


# ---------------------------------------------------- copies
# np.array(y) was read as np.asarray(y), which returns y itself: the copy saw the write, and the
# value was wrong under every transform.  The tangent of y.copy() and of +y was y's tangent itself,
# so a write into y's tangent reached the copy's (jvp, jacfwd).

def array_of_an_array(x):
    y = x * 1.0
    prev = np.array(y)
    y[1] = 0.0
    return prev[1] * 3.0 + np.sum(prev * y)


def copy_method(x):
    y = x * 1.0
    prev = y.copy()
    y[1] = 0.0
    return prev[1] * 3.0 + np.sum(prev * y)


def copy_function_in_a_loop(x):
    y = x * 1.0
    for i in range(2):
        prev = np.copy(y)
        y[i + 1] = prev[i] * y[i + 1] + x[i]
    return np.sum(prev * y)


def unary_plus(x):
    y = x * 1.0
    prev = +y
    y[1] = 0.0
    return prev[1] * 3.0 + np.sum(prev * y)


def array_of_a_display(x):
    # a display makes a new array: no copy is added, and the value is the same
    return np.sum(np.array([x[0], 2.0 * x[1]]) ** 2)


COPIES = [array_of_an_array, copy_method, copy_function_in_a_loop, unary_plus, array_of_a_display]


@pytest.mark.parametrize("f", COPIES, ids=lambda f: f.__name__)
def test_a_copy_keeps_its_values_under_every_transform(f):
    np.testing.assert_allclose(tr.jit(f, target="python")(X), f(X), rtol=1e-12)
    np.testing.assert_allclose(tr.grad(f)(X), central_difference_grad(f, (X,)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tr.jvp(f, (X,), (T,))[1], central_difference_jvp(f, (X,), (T,)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tr.jacfwd(f)(X), central_difference_grad(f, (X,)), rtol=1e-6, atol=1e-8)
    xs = np.stack([X, 2.0 * X])
    np.testing.assert_allclose(tr.vmap(f)(xs), [f(each) for each in xs], rtol=1e-12)


def test_copies_under_jit():
    def every(x):
        return (array_of_an_array(x) + copy_method(x) + copy_function_in_a_loop(x) + unary_plus(x)
                + array_of_a_display(x))
    np.testing.assert_allclose(tr.jit(every)(X), every(X), rtol=1e-12)
    np.testing.assert_allclose(tr.jit(tr.grad(every))(X), central_difference_grad(every, (X,)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tr.jit(tr.jacfwd(every))(X), central_difference_grad(every, (X,)), rtol=1e-6,
                               atol=1e-8)


# ---------------------------------------------------- views read after a write
# Reverse mode gives each variable a cotangent of its own: the adjoint of y[1] = 0.0 zeroed y's,
# and the view's cotangent went to y[1] anyway (grad [0, 3, 0] of a function constant in x[1]).
# It is refused now, naming the read; forward mode and jit follow the shared memory as NumPy does.

def alias_read_after_write(x):
    y = x * 1.0
    prev = y
    y[1] = 0.0
    return prev[1] * 3.0 + prev[0]


def slice_read_after_write(x):
    y = x * 1.0
    prev = y[:2]
    y[1] = 0.0
    return prev[1] * 3.0 + prev[0]


def reshape_read_after_write_in_a_loop(x):
    y = x * 1.0
    total = 0.0
    prev = y.reshape(3)
    for i in range(2):
        total = total + prev[i + 1]        # the second pass reads what the first one wrote
        y[i] = 2.0 * x[i]
    return total


VIEWS_READ = [alias_read_after_write, slice_read_after_write, reshape_read_after_write_in_a_loop]


@pytest.mark.parametrize("f", VIEWS_READ, ids=lambda f: f.__name__)
def test_a_view_read_after_a_write_is_refused_by_reverse_mode(f):
    with pytest.raises(tr.TransformError, match="view of an array .* is read here after a write") as err:
        tr.grad(f)(X)
    assert "test_regressions_aliasing.py" in str(err.value)
    np.testing.assert_allclose(tr.jit(f, target="python")(X), f(X), rtol=1e-12)
    np.testing.assert_allclose(tr.jvp(f, (X,), (T,))[1], central_difference_jvp(f, (X,), (T,)), rtol=1e-6, atol=1e-8)


def view_taken_again(x):
    y = x * 1.0
    prev = y[:2]
    y[1] = 0.0
    prev = y[:2]                           # taken again after the write: nothing stale
    return prev[1] * 3.0 + prev[0]


def view_rebound_to_a_new_array(x):
    y = x * 1.0
    prev = y[:2]
    prev = prev * 2.0                      # a new array now
    y[1] = 0.0
    return prev[1] * 3.0 + np.sum(y)


def view_read_before_the_write(x):
    s = np.ones((2, 3)) * x
    for t in range(3):
        row = s[0]
        h = row * x                        # read before the write; the next pass takes it again
        s[0] = np.tanh(h)
    return np.sum(s)


@pytest.mark.parametrize("f", [view_taken_again, view_rebound_to_a_new_array, view_read_before_the_write],
                         ids=lambda f: f.__name__)
def test_views_that_never_read_stale_memory_still_differentiate(f):
    np.testing.assert_allclose(tr.grad(f)(X), central_difference_grad(f, (X,)), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------- reverse over reverse
# Reverse mode's code tapes y (bound afresh in each pass) and then writes into it in place,
# trusting its backward sweep to put back what the write overwrote before it reads the tape.  A
# second reverse sweep read the tape as a value that never changes: jacrev(grad(f)) was not even
# symmetric.  It is refused now; forward over reverse follows the writes.

def rebound_and_written_in_a_loop(x):
    acc = 0.0
    for i in range(2):
        y = x * 1.0
        y[0] = x[0] * x[1]
        acc = acc + np.sum(y * y)
    return acc


def test_reverse_over_reverse_of_a_taped_array_written_in_place_is_refused():
    with pytest.raises(tr.TransformError, match="reverse mode over a derivative whose code writes") as err:
        tr.jacrev(tr.grad(rebound_and_written_in_a_loop))(X)
    assert "test_regressions_aliasing.py" in str(err.value)
    expected = central_difference_hessian(rebound_and_written_in_a_loop, (X,))
    np.testing.assert_allclose(tr.jacfwd(tr.grad(rebound_and_written_in_a_loop))(X), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tr.hessian(rebound_and_written_in_a_loop)(X), expected, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------- augmented assignment to a name
# y += v is y = y + v in core form, a new array, where NumPy changes y in place: z = y (or a
# helper's argument) showed the old values, under jit as under every derivative.  Reading a name
# that shares y's memory after the change is refused now; nothing else changes.

def alias_then_augmented(x):
    y = x * 1.0
    z = y
    y *= x
    return np.sum(z * y)


def doubled_in_place(a):
    a *= 2.0


def helper_changes_its_argument(x):
    y = x * 1.0
    doubled_in_place(y)
    return np.sum(y)


def alias_in_a_loop(x):
    acc = np.zeros(3)
    history = acc
    for i in range(3):
        acc += x * i
    return np.sum(history)


def augmented_without_aliases(x):
    s = 0.0
    t = x * 1.0
    head = t[:2]
    first = np.sum(head)                   # read before the change
    for i in range(3):
        s += np.sum(t * x)
        t *= 0.5
    z = t                                  # taken after it
    return s + first + np.sum(z)


@pytest.mark.parametrize("f", [alias_then_augmented, helper_changes_its_argument, alias_in_a_loop],
                         ids=lambda f: f.__name__)
def test_a_name_sharing_memory_read_after_an_augmented_assignment_is_refused(f):
    for transform in (lambda g: tr.jit(g, target="python"), tr.grad, tr.jacfwd):
        with pytest.raises(tr.TransformError, match="changed by an augmented assignment") as err:
            transform(f)(X)
        assert "test_regressions_aliasing.py" in str(err.value)


def test_augmented_assignments_nothing_else_sees_keep_working():
    f = augmented_without_aliases
    np.testing.assert_allclose(tr.jit(f, target="python")(X), f(X.copy()), rtol=1e-14)
    np.testing.assert_allclose(tr.grad(f)(X), central_difference_grad(f, (X,)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tr.jvp(f, (X,), (T,))[1], central_difference_jvp(f, (X,), (T,)), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------- rows picked by position
# r = y[0] of a 2-d y is a row, a view; of a 1-d y an entry, a number.  The transforms are written
# for any rank, so such a pick was never followed: grad of a row read after a write into its array
# was wrong (Gaussian elimination's pivot row), and `for row in y: row += 1.0` left y unchanged
# under jit.  The ranks of the arguments a function is called with now tell the two apart.
Y = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, -0.5], [0.5, -1.0, 2.0]])


def row_read_after_write(y):
    r = y[0]
    y[0, 1] = 5.0
    return np.sum(r * r)


def pivot_row_read_after_write(a):
    a = a * 1.0
    n = a.shape[0]
    for i in range(n):
        pivot = a[i]
        a[i] = pivot / a[i, i]             # the pivot row, normalised in place: `pivot` sees it
        for j in range(i + 1, n):
            a[j] = a[j] - a[j, i] * pivot
    return np.sum(a * a)


def column_by_ellipsis_read_after_write(y):
    c = y[..., 0]
    y[0, 0] = 5.0
    return np.sum(c * c)


@pytest.mark.parametrize("f", [row_read_after_write, pivot_row_read_after_write, column_by_ellipsis_read_after_write],
                         ids=lambda f: f.__name__)
def test_a_row_read_after_a_write_is_refused_by_reverse_mode(f):
    with pytest.raises(tr.TransformError, match="is read here after a write") as err:
        tr.grad(f)(Y.copy())
    assert "test_regressions_aliasing.py" in str(err.value)
    np.testing.assert_allclose(tr.jit(f, target="python")(Y.copy()), f(Y.copy()), rtol=1e-12)


def entry_read_after_write(y):
    y = y * 1.0
    total = 0.0
    for i in range(y.shape[0]):
        old = y[i]                         # of a 1-d y, a number: it keeps its value
        y[i] = old * old
        total = total + old * y[i]
    return total + np.sum(y)


def test_an_entry_read_after_a_write_still_differentiates():
    f = entry_read_after_write
    np.testing.assert_allclose(tr.grad(f)(X), central_difference_grad(f, (X,)), rtol=1e-6, atol=1e-8)


def rows_incremented(y):
    y = y * 1.0
    for row in y:
        row += 1.0                         # NumPy adds into y's row
    return y


def test_a_row_changed_by_an_augmented_assignment_is_refused():
    for transform in (lambda g: tr.jit(g, target="python"), tr.jit, tr.grad, tr.vmap):
        with pytest.raises(tr.TransformError, match="changed by an augmented assignment") as err:
            f = rows_incremented if transform is not tr.grad else (lambda y: np.sum(rows_incremented(y)))
            transform(f)(Y if transform is not tr.vmap else np.stack([Y, Y]))
        assert "test_regressions_aliasing.py" in str(err.value)
    # of a 1-d y, each entry is a number: nothing changes y, in NumPy as here
    np.testing.assert_array_equal(tr.jit(rows_incremented)(X), rows_incremented(X))


# ---------------------------------------------------- views NumPy returns
# np.moveaxis returns a view (registered now as one: grad of it read after a write was wrong);
# np.diagonal's result is a view in NumPy and a copy here, so reading it after a write into its
# array gave the old values under every transform, and is refused now.

def moved_axes_read_after_write(x):
    y = x * 1.0
    m = np.moveaxis(y, 0, 1)
    y[0, 1] = 5.0
    return np.sum(m * m * np.arange(6.0).reshape(3, 2))


def diagonal_read_after_write(x):
    y = x * 1.0
    d = np.diagonal(y)
    y[1, 1] = 0.0
    return np.sum(d * d)


def diagonal_read_before_write(x):
    y = x * 1.0
    d = np.diagonal(y)
    total = np.sum(d * d)
    y[1, 1] = 0.0
    return total + np.sum(y)


def test_moveaxis_is_a_view():
    x = Y[:2].copy()
    with pytest.raises(tr.TransformError, match="is read here after a write"):
        tr.grad(moved_axes_read_after_write)(x)
    np.testing.assert_allclose(tr.jit(moved_axes_read_after_write)(x), moved_axes_read_after_write(x), rtol=1e-14)


def test_a_diagonal_read_after_a_write_into_its_array_is_refused():
    for transform in (tr.jit, lambda g: tr.jit(g, target="python"), tr.grad):
        with pytest.raises(tr.TransformError, match="NumPy gives as a view") as err:
            transform(diagonal_read_after_write)(Y)
        assert "test_regressions_aliasing.py" in str(err.value)
    f = diagonal_read_before_write
    np.testing.assert_allclose(tr.jit(f)(Y), f(Y), rtol=1e-14)
    np.testing.assert_allclose(tr.grad(f)(Y), central_difference_grad(f, (Y,)), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------- a helper that copies its argument
# x = x.copy() rebinds a helper's parameter to a new array; the write after it changes nothing of
# the caller's.  The check for writes through views followed x's first binding (the caller's
# array) and refused the derivative; it follows the function's order now.

def zero_first(x):
    x = x.copy()
    x[0] = 0.0
    return x


def calls_a_copying_helper(v):
    return np.sum(zero_first(v) * v)


def test_a_helper_writing_into_its_own_copy_differentiates():
    f = calls_a_copying_helper
    np.testing.assert_allclose(tr.grad(f)(X), central_difference_grad(f, (X,)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tr.jvp(f, (X,), (T,))[1], central_difference_jvp(f, (X,), (T,)), rtol=1e-6, atol=1e-8)


def test_the_same_function_called_with_a_matrix_after_a_vector_is_checked_again():
    """A call with plain arguments takes a shortcut to the function built for the first call; a
    2-d argument after a 1-d one must still meet the check its rows need."""
    f = tr.jit(rows_incremented)
    np.testing.assert_array_equal(f(X), X)
    with pytest.raises(tr.TransformError, match="changed by an augmented assignment"):
        f(Y)
