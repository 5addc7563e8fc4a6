"""Regressions: indexing and a few creation/join primitives that gave wrong numbers or crashed.

Every check is against an oracle that needs nothing of ours: central differences
in float64, NumPy itself, or a Python loop (for vmap).
"""
import numpy as np
import pytest

import transformer as tr
from oracles import central_difference_grad, central_difference_jvp

IDX = np.array([0, 2, 2])                 # position 2 named twice
NEG = np.array([-1, 0, -1])               # position -1 named twice
ROWS_I = np.array([0, 1, 0])
COLS_J = np.array([1, 2, 1])              # the pair (0, 1) named twice
X = np.array([1.0, 2.0, 3.0])
A = np.arange(12.0).reshape(3, 4) / 7.0 - 0.6


def gather_1d(x):
    return np.sum(x[IDX] ** 2)


def gather_negative(x):
    return np.sum(x[NEG] ** 3)


def gather_rows(a):
    return np.sum(a[IDX] ** 2)


def gather_columns(a):
    return np.sum(np.sin(a[:, IDX]) * a[:, IDX])


def gather_pairs(a):
    return np.sum(a[ROWS_I, COLS_J] ** 2)


def gather_index_argument(x, idx):
    return np.sum(x[idx] ** 2)


GATHERS = [(gather_1d, X), (gather_negative, X), (gather_rows, A), (gather_columns, A), (gather_pairs, A)]


@pytest.mark.parametrize("f, x", GATHERS, ids=[f.__name__ for f, _ in GATHERS])
def test_gather_with_repeated_indices_accumulates_under_grad_and_vjp(f, x):
    expected = central_difference_grad(f, (x,))
    np.testing.assert_allclose(tr.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    out, f_vjp = tr.vjp(f, x)
    np.testing.assert_allclose(f_vjp(2.0)[0], 2.0 * expected, rtol=1e-6, atol=1e-8)


def test_gather_with_repeated_indices_grad_example_from_the_issue():
    np.testing.assert_allclose(tr.grad(gather_1d)(X), [2.0, 0.0, 12.0])
    np.testing.assert_allclose(tr.grad(gather_index_argument)(X, IDX), [2.0, 0.0, 12.0])


@pytest.mark.parametrize("f, x", GATHERS, ids=[f.__name__ for f, _ in GATHERS])
def test_gather_with_repeated_indices_jvp_and_hessian(f, x):
    v = np.linspace(0.5, -0.7, x.size).reshape(x.shape)
    _, tangent = tr.jvp(f, (x,), (v,))
    np.testing.assert_allclose(tangent, central_difference_jvp(f, (x,), (v,)), rtol=1e-6, atol=1e-8)
    # forward over reverse: the tangent of the scatter-add
    _, hv = tr.jvp(tr.grad(f), (x,), (v,))
    fd = central_difference_jvp(lambda y: central_difference_grad(f, (y,), eps=1e-5), (x,), (v,), eps=1e-4)
    np.testing.assert_allclose(hv, fd, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("f, x", GATHERS, ids=[f.__name__ for f, _ in GATHERS])
def test_gather_with_repeated_indices_under_vmap_of_grad_matches_a_loop(f, x):
    xs = np.stack([x, 2.0 * x, x - 1.0])
    expected = np.stack([central_difference_grad(f, (each,)) for each in xs])
    np.testing.assert_allclose(tr.vmap(tr.grad(f))(xs), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tr.vmap(f)(xs), [f(each) for each in xs], rtol=1e-12)


def test_gather_with_repeated_indices_under_jit_of_grad():
    # one compiled function checks every index form at once
    def all_gathers(x, a, idx):
        return gather_1d(x) + gather_negative(x) + gather_rows(a) + gather_columns(a) + gather_pairs(a) \
            + gather_index_argument(x, idx)
    for argnum, arg in ((0, X), (1, A)):
        expected = central_difference_grad(all_gathers, (X, A, IDX), argnum=argnum)
        got = tr.jit(tr.grad(all_gathers, argnums=argnum))(X, A, IDX)
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)


def write_repeated(x, v):
    y = x * 1.0
    y[IDX] = v * v            # position 2 written twice: NumPy keeps the last write
    return np.sum(y * np.arange(1.0, 4.0))


def test_setitem_with_repeated_indices_cotangent_goes_to_the_last_write_only():
    v = np.array([0.5, -1.5, 2.5])
    for argnum in (0, 1):
        expected = central_difference_grad(write_repeated, (X, v), argnum=argnum)
        np.testing.assert_allclose(tr.grad(write_repeated, argnums=argnum)(X, v), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(tr.jit(tr.grad(write_repeated, argnums=argnum))(X, v), expected,
                                   rtol=1e-6, atol=1e-8)
    tv = np.array([0.3, 0.2, -0.4])
    _, tangent = tr.jvp(write_repeated, (X, v), (tv, tv))
    np.testing.assert_allclose(tangent, central_difference_jvp(write_repeated, (X, v), (tv, tv)), rtol=1e-6)


# ------------------------------------------------------------------ linspace
def linspace_squares(start, stop):
    return np.sum(np.linspace(start, stop, 5) ** 2)


def linspace_open(start, stop):
    return np.sum(np.sin(np.linspace(start, stop, 4, endpoint=False)))


def linspace_one(start, stop):
    return np.sum(np.linspace(start, stop, 1) ** 2)


def linspace_all(start, stop):
    return linspace_squares(start, stop) + linspace_open(start, stop) + linspace_one(start, stop)


@pytest.mark.parametrize("f", [linspace_squares, linspace_open, linspace_one])
def test_linspace_has_a_derivative_in_its_start_and_stop(f):
    args = (0.3, 1.1)
    for argnum in (0, 1):
        expected = central_difference_grad(f, args, argnum=argnum)
        np.testing.assert_allclose(tr.grad(f, argnums=argnum)(*args), expected, rtol=1e-6, atol=1e-9)
    _, tangent = tr.jvp(f, args, (0.5, -2.0))
    np.testing.assert_allclose(tangent, central_difference_jvp(f, args, (0.5, -2.0)), rtol=1e-6, atol=1e-9)


def test_linspace_derivatives_under_jit():
    args = (0.3, 1.1)
    np.testing.assert_allclose(tr.jit(linspace_all, target="python")(*args), linspace_all(*args))
    expected = [central_difference_grad(linspace_all, args, argnum=k) for k in (0, 1)]
    np.testing.assert_allclose(tr.jit(tr.grad(linspace_all, argnums=(0, 1)))(*args), expected, rtol=1e-6)


# ------------------------------------------------------- concatenate and clip
def concatenate_flat(x, a):
    return np.sum(np.concatenate((x, a), axis=None) ** 2 * np.arange(15.0))


def clip_below(x):
    return np.sum(np.clip(x, 0.0, None) ** 2)


def clip_above(x):
    return np.sum(np.clip(x, None, 0.5) ** 3)


XS = np.array([-1.0, 0.2, 0.9])


def test_concatenate_axis_none_under_vjp_jvp_and_jit():
    out, f_vjp = tr.vjp(concatenate_flat, X, A)
    np.testing.assert_allclose(out, concatenate_flat(X, A))
    x_bar, a_bar = f_vjp(1.0)
    np.testing.assert_allclose(x_bar, central_difference_grad(concatenate_flat, (X, A), argnum=0), rtol=1e-6)
    np.testing.assert_allclose(a_bar, central_difference_grad(concatenate_flat, (X, A), argnum=1), rtol=1e-6)
    tangents = (X - 2.0, A * 3.0)
    _, tangent = tr.jvp(concatenate_flat, (X, A), tangents)
    np.testing.assert_allclose(tangent, central_difference_jvp(concatenate_flat, (X, A), tangents), rtol=1e-6)
    got = tr.jit(tr.grad(concatenate_flat, argnums=(0, 1)))(X, A)
    np.testing.assert_allclose(got[1], a_bar, rtol=1e-12)


@pytest.mark.parametrize("f", [clip_below, clip_above])
def test_clip_with_one_bound_left_out_under_vjp_and_jvp(f):
    out, f_vjp = tr.vjp(f, XS)
    np.testing.assert_allclose(out, f(XS))
    np.testing.assert_allclose(f_vjp(1.0)[0], central_difference_grad(f, (XS,)), rtol=1e-6, atol=1e-9)
    v = np.array([0.5, 1.0, -1.5])
    _, tangent = tr.jvp(f, (XS,), (v,))
    np.testing.assert_allclose(tangent, central_difference_jvp(f, (XS,), (v,)), rtol=1e-6)


def test_clip_with_one_bound_left_out_under_jit():
    def both(x):
        return clip_below(x) + clip_above(x)
    np.testing.assert_allclose(tr.jit(both)(XS), both(XS))
    np.testing.assert_allclose(tr.jit(tr.grad(both))(XS), central_difference_grad(both, (XS,)), rtol=1e-6)


# ------------------------------------------------------------ boolean masks
def mask_from_comparison(a):
    return np.sum(a[a > 0])


def mask_weighted(a, mask):
    return np.sum(a[mask] ** 2 * 0.5)


def mask_of_leading_axis(a, rows):
    return np.sum(np.cos(a[rows]))


def mask_written(a):
    y = a * 2.0
    y[a < 0] = 0.0          # relu through a masked write
    return np.sum(y * y)


def all_masks(a, mask, rows):
    return mask_from_comparison(a) + mask_weighted(a, mask) + mask_of_leading_axis(a, rows) + mask_written(a)


MASK = A > 0.1
ROWS = np.array([True, False, True])
MASK_CASES = [(mask_from_comparison, (A,)), (mask_from_comparison, (X - 1.5,)), (mask_weighted, (A, MASK)),
              (mask_weighted, (X, X > 1.5)), (mask_of_leading_axis, (A, ROWS)), (mask_written, (A,))]


@pytest.mark.parametrize("f, args", MASK_CASES, ids=[f"{f.__name__}-{args[0].ndim}d" for f, args in MASK_CASES])
def test_boolean_mask_read_under_grad_and_jvp(f, args):
    expected = central_difference_grad(f, args)
    np.testing.assert_allclose(tr.grad(f)(*args), expected, rtol=1e-6, atol=1e-9)
    tangents = (np.cos(args[0]),) + (None,) * (len(args) - 1)
    _, tangent = tr.jvp(f, args, tuple(np.zeros(np.shape(a), bool) if t is None else t
                                       for a, t in zip(args, tangents)))
    np.testing.assert_allclose(tangent, central_difference_jvp(f, args, tangents), rtol=1e-6)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_boolean_mask_read_under_jit(target):
    args = (A, MASK, ROWS)
    np.testing.assert_allclose(tr.jit(all_masks, target=target)(*args), all_masks(*args), rtol=1e-12)
    np.testing.assert_allclose(tr.jit(mask_from_comparison, target=target)(X - 2.0),
                               mask_from_comparison(X - 2.0))


def test_boolean_mask_read_under_jit_of_grad():
    args = (A, MASK, ROWS)
    expected = central_difference_grad(all_masks, args)
    np.testing.assert_allclose(tr.jit(tr.grad(all_masks))(*args), expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(tr.jit(tr.grad(mask_from_comparison))(X - 2.0), [0.0, 0.0, 1.0])


# -------------------------------------------------------- arange, np.where
def arange_from(start, step):
    return np.sum(np.sin(np.arange(start, 3.0, step)))


def arange_default_step(start, step):
    return np.sum(np.arange(start, 5.0) ** 2) * step


def where_positions(x, step):
    return np.sum(x[np.where(x > 0)[0]] ** 2) * step


@pytest.mark.parametrize("f", [arange_from, arange_default_step])
def test_arange_start_and_step_have_derivatives(f):
    args = (0.3, 0.7)
    expected = [central_difference_grad(f, args, argnum=k) for k in (0, 1)]
    np.testing.assert_allclose(tr.grad(f, argnums=(0, 1))(*args), expected, rtol=1e-6)
    _, tangent = tr.jvp(f, args, (1.0, -0.5))
    np.testing.assert_allclose(tangent, central_difference_jvp(f, args, (1.0, -0.5)), rtol=1e-6)


def test_arange_and_where_positions_under_jit_of_grad():
    def both(start, step):
        return arange_from(start, step) + arange_default_step(start, step) + where_positions(X - 1.5, step)
    args = (0.3, 0.7)
    expected = [central_difference_grad(both, args, argnum=k) for k in (0, 1)]
    np.testing.assert_allclose(tr.jit(tr.grad(both, argnums=(0, 1)))(*args), expected, rtol=1e-6)
    xs = X - 1.5
    np.testing.assert_allclose(tr.grad(where_positions)(xs, 0.7), central_difference_grad(where_positions, (xs, 0.7)),
                               rtol=1e-6)


def test_setitem_with_repeated_indices_under_vmap_matches_a_loop():
    vs = np.stack([np.array([0.5, -1.5, 2.5]), np.array([1.0, 2.0, -3.0])])
    per_example = tr.vmap(tr.grad(write_repeated, argnums=1), in_axes=(None, 0))(X, vs)
    np.testing.assert_allclose(per_example, [central_difference_grad(write_repeated, (X, v), argnum=1) for v in vs],
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(tr.vmap(write_repeated, in_axes=(None, 0))(X, vs), [write_repeated(X, v) for v in vs])


# ------------------------------------------------------------ a list as an index
# NumPy reads x[[0, 1, 1]] as one index array, and x[(0, 1, 1)] as one index per axis.  Lists
# are tuples in core form, and the list index was written as the tuple: the value itself was
# wrong (x[0, 1, 1] of a 3-d array, an IndexError for a 1-d one).

def list_index_rows(x):
    return np.sum(x[[0, 1, 1]] ** 2)


def list_index_named(x):
    idx = [2, 2, 0]
    return np.sum(x.ravel()[idx] * x.ravel()[[1, 0, 0]])


def list_index_pairs_and_mask(x):
    m = x.reshape(2, 4)
    return np.sum(m[[1, 0], [3, 3]] ** 3) + np.sum(m[[True, False]] ** 2)


def list_index_writes(x):
    y = x.ravel() * 1.0
    y[[0, 0, 1]] = x.ravel()[[5, 6, 7]] * 3.0
    y[[2, 2]] += np.sin(x.ravel()[[4, 3]])
    return np.sum(y ** 2)


LIST_INDICES = [list_index_rows, list_index_named, list_index_pairs_and_mask, list_index_writes]
X3 = np.arange(1.0, 9.0).reshape(2, 2, 2) / 5.0 - 0.3


@pytest.mark.parametrize("f", LIST_INDICES, ids=lambda f: f.__name__)
def test_a_list_index_is_an_index_array_under_every_transform(f):
    np.testing.assert_allclose(tr.jit(f, target="python")(X3), f(X3), rtol=1e-12)
    expected = central_difference_grad(f, (X3,))
    np.testing.assert_allclose(tr.grad(f)(X3), expected, rtol=1e-6, atol=1e-8)
    v = np.linspace(0.5, -0.7, X3.size).reshape(X3.shape)
    np.testing.assert_allclose(tr.jvp(f, (X3,), (v,))[1], central_difference_jvp(f, (X3,), (v,)), rtol=1e-6, atol=1e-8)
    xs = np.stack([X3, 2.0 * X3])
    np.testing.assert_allclose(tr.vmap(f)(xs), [f(each) for each in xs], rtol=1e-12)


def test_a_list_index_under_jit_of_grad():
    def every(x):
        return sum(f(x) for f in (list_index_rows, list_index_named, list_index_pairs_and_mask, list_index_writes))
    np.testing.assert_allclose(tr.jit(every)(X3), every(X3), rtol=1e-12)
    np.testing.assert_allclose(tr.jit(tr.grad(every))(X3), central_difference_grad(every, (X3,)), rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------ a tuple as an index
# x[(0, 1)] and x[idx] with idx = (0, 1) are x[0, 1], one index per axis.  Reverse mode's rule saw
# one part, a tuple, and added the cotangent along the first axis as an index array: rows 0 and 1
# of a 3x3 gradient where only entry (0, 1) was read.  a[()] (a 0-d array's element) raised.

def tuple_display_index(x):
    return x[(0, 1)] * 3.0 + np.sum(x[(2,)] ** 2)


def tuple_name_index(x, i):
    idx = (i, 1)
    first = (0, 2)
    return x[idx] * 3.0 + x[first] ** 2


def element_of_a_zero_d_array(a):
    return a[()] * 3.0 + a[()] ** 2


def test_a_tuple_index_is_one_index_per_axis():
    x = np.arange(9.0).reshape(3, 3) / 5.0 - 0.4
    v = np.linspace(-1.0, 1.0, 9).reshape(3, 3)
    for f, args in ((tuple_display_index, (x,)), (tuple_name_index, (x, 2))):
        np.testing.assert_allclose(tr.jit(f, target="python")(*args), f(*args), rtol=1e-14)
        np.testing.assert_allclose(tr.grad(f)(*args), central_difference_grad(f, args), rtol=1e-6, atol=1e-9)
        tangents = (v,) + (None,) * (len(args) - 1)
        np.testing.assert_allclose(tr.jvp(f, args, tangents)[1], central_difference_jvp(f, args, tangents), rtol=1e-6)
    np.testing.assert_allclose(tr.jit(tr.grad(tuple_name_index))(x, 2), central_difference_grad(tuple_name_index, (x, 2)),
                               rtol=1e-6, atol=1e-9)


def test_the_element_of_a_zero_d_array_under_every_derivative():
    # forward mode gave a 0-d array's tangent as a Python float, which a[()] could not index
    a = np.array(0.7)
    for derivative in (tr.grad(element_of_a_zero_d_array), tr.jacrev(element_of_a_zero_d_array),
                       tr.jacfwd(element_of_a_zero_d_array),
                       lambda b: tr.jvp(element_of_a_zero_d_array, (b,), (np.array(1.0),))[1]):
        np.testing.assert_allclose(derivative(a), 3.0 + 2 * 0.7, rtol=1e-14)
