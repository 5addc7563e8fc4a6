"""``@`` of stacks of matrices under jit hands BLAS each matrix as it lies: a transposed, sliced or
reversed view, whose rows or columns are contiguous but spaced apart, or not (then it is copied).
Checked against NumPy on every such view, float64 and float32, and through einsum's gradient,
whose transposes make such views."""
import numpy as np
import pytest

import transformer as tr


def product(a, b):
    return a @ b


def mahalanobis_loss(q, centered):
    return np.sum(np.einsum("kij,nkj->nki", q, centered) ** 2)


def _views(rng, batch, rows, cols):
    """The same-shaped (batch, rows, cols) operand as each kind of view."""
    return {
        "contiguous": rng.normal(size=(batch, rows, cols)),
        "swapped": np.swapaxes(rng.normal(size=(batch, cols, rows)), 1, 2),
        "transposed stack": np.transpose(rng.normal(size=(cols, batch, rows)), (1, 2, 0)),
        "rows of a wider array": rng.normal(size=(batch, rows + 2, cols))[:, 1:rows + 1, :],
        "reversed": rng.normal(size=(batch, rows, cols))[:, ::-1, :],
        "every other column": rng.normal(size=(batch, rows, 2 * cols))[:, :, ::2],
    }


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m, k, n", [(3, 4, 5), (1, 4, 5), (3, 1, 5), (3, 4, 1), (3, 0, 2)])
def test_every_view_multiplies_as_numpy_does(m, k, n, dtype):
    rng = np.random.default_rng(0)
    compiled = tr.jit(product)
    for a in _views(rng, 3, m, k).values():
        for b in _views(rng, 3, k, n).values():
            a, b = a.astype(dtype), b.astype(dtype)
            got = compiled(a, b)
            assert got.dtype == dtype
            np.testing.assert_allclose(got, a @ b, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-6)
    # one operand a matrix, broadcast over the other's stack
    a, b = _views(rng, 3, m, k)["swapped"][0].astype(dtype), _views(rng, 3, k, n)["transposed stack"].astype(dtype)
    np.testing.assert_allclose(compiled(a, b), a @ b, rtol=1e-5, atol=1e-6)


def test_einsums_gradient_through_transposed_stacks():
    rng = np.random.default_rng(1)
    q, centered = rng.normal(size=(4, 3, 3)), rng.normal(size=(5, 4, 3))
    for compiled, plain in zip(tr.jit(tr.grad(mahalanobis_loss, argnums=(0, 1)))(q, centered),
                               tr.grad(mahalanobis_loss, argnums=(0, 1))(q, centered)):
        np.testing.assert_allclose(compiled, plain, rtol=1e-12)
    # and the python target against NumPy's own einsum, by the product rule
    mahalanobis = np.einsum("kij,nkj->nki", q, centered)
    np.testing.assert_allclose(tr.grad(mahalanobis_loss)(q, centered),
                               2.0 * np.einsum("nki,nkj->kij", mahalanobis, centered), rtol=1e-12)


def matrix_product(a, b):
    return np.dot(a, b)


def test_dot_of_strided_matrices_multiplies_as_numpy_does():
    rng = np.random.default_rng(2)
    compiled = tr.jit(matrix_product)
    for a in _views(rng, 2, 3, 4).values():
        for b in _views(rng, 2, 4, 5).values():
            np.testing.assert_allclose(compiled(a[1], b[0]), a[1] @ b[0], rtol=1e-12)
