"""Regressions (the rule table's jit_grad cells):

* ``e[...] = x`` under ``jit(grad)`` escaped as numba's NotImplementedError: the backward sweep reads
  ``e_bar[...]``, an index numba cannot lower on its own (``nl.whole`` reads it now);
* ``x[None, 0]`` under ``jit(grad)`` was refused: ``rt.add_at``'s overload took no ``np.newaxis``
  part (the new axis of the cotangent is now read at 0);
* ``np.take(x, i, axis=-1)`` with a 2-D ``i``, and ``np.take(x, i, axis=0)`` with a 0-d ``i``,
  did not compile under ``jit(grad)``: ``rt.add_at`` took 1-D integer arrays only, and no ``...``
  (an integer array of any dimension, the index's only one, is now read flat).
"""
import numpy as np

import transformer as tr
from oracles import central_difference_grad
from regressions import newaxis_and_ellipsis_indices as case

X = np.random.default_rng(0).random((3, 4))


def test_jit_grad_through_new_axes_in_basic_indices():
    expected = central_difference_grad(case.basic_slices, (X,))
    for grad in (tr.grad(case.basic_slices), tr.jit(tr.grad(case.basic_slices))):
        np.testing.assert_allclose(grad(X), expected, rtol=1e-6, atol=1e-9)


def test_jit_grad_through_a_write_by_ellipsis():
    expected = central_difference_grad(case.fill_by_ellipsis, (X,))
    np.testing.assert_allclose(tr.jit(tr.grad(case.fill_by_ellipsis))(X), expected, rtol=1e-7)


def test_jit_grad_through_gathers_by_index_arrays_of_other_than_one_dimension():
    x3 = np.random.default_rng(1).random((2, 3, 4))
    repeated = np.array([[1, 1], [3, 0]])           # a position named twice: its cotangents add
    for fn, x, i in [(case.take_by_a_matrix_of_indices, x3, repeated), (case.take_at_a_0d_index, X, np.array(2))]:
        expected = central_difference_grad(lambda x: fn(x, i), (x,))
        np.testing.assert_allclose(tr.jit(tr.grad(fn))(x, i), expected, rtol=1e-6, atol=1e-9)
