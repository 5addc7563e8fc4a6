"""np.linalg.svd, svdvals, pinv, qr, lstsq and matrix_power: what the rule table cannot show —
refusals at the user's line, JAX's conventions at degenerate points, rank-deficient behaviour."""
import numpy as np
import pytest

import transformer as tr


def _line_of(marker):
    import inspect
    lines, start = inspect.getsourcelines(inspect.getmodule(_line_of))
    return next(i for i, text in enumerate(lines, 1) if f"# refused: {marker}" in text)


def tall(seed=0, shape=(4, 3)):
    return np.random.default_rng(seed).uniform(0.1, 0.9, shape) + np.eye(*shape)


# ------------------------------------------------------------------ refusals
def complete_by_default(a):
    u, s, vh = np.linalg.svd(a)                                # refused: default
    return np.sum(u) + np.sum(s)


def complete_by_keyword(a):
    u, s, vh = np.linalg.svd(a, full_matrices=True)            # refused: keyword
    return np.sum(s)


def hermitian_svd(a):
    return np.linalg.svd(a, hermitian=True)[1]                 # refused: hermitian


def qr_mode(a):
    return np.linalg.qr(a, mode="complete")[0]                 # refused: mode


def power_of_a_variable(a, n):
    return np.linalg.matrix_power(a, n)


def summed_power(a, n):
    return np.sum(np.linalg.matrix_power(a, n))


def lstsq_vmapped(a, b):
    return np.linalg.lstsq(a, b, rcond=None)[0]


@pytest.mark.parametrize("f, marker, words", [
    (complete_by_default, "default", "full_matrices=True"),
    (complete_by_keyword, "keyword", "full_matrices=True"),
    (hermitian_svd, "hermitian", "hermitian"),
    (qr_mode, "mode", "mode"),
])
def test_unsupported_forms_are_refused_at_the_users_line(f, marker, words):
    with pytest.raises(tr.TransformError, match=words) as info:
        tr.grad(lambda a: np.sum(f(a)))(tall()) if f in (hermitian_svd, qr_mode) else tr.grad(f)(tall())
    assert f"test_linalg2.py:{_line_of(marker)}" in str(info.value)


def complete_by_keyword_values(a):
    return np.linalg.svd(a, full_matrices=True)


def test_the_complete_decomposition_runs_where_nothing_is_differentiated():
    a = tall()
    for got, want in zip(tr.jit(complete_by_keyword_values, target="python")(a), np.linalg.svd(a)):
        np.testing.assert_allclose(np.abs(got), np.abs(want), atol=1e-12)


def test_a_power_passed_as_an_argument_is_specialized_on_its_value():
    a = tall(shape=(3, 3)) / 3
    for n in (3, -2, 0):
        np.testing.assert_allclose(tr.jit(power_of_a_variable, target="python")(a, n), np.linalg.matrix_power(a, n))
    np.testing.assert_allclose(tr.grad(summed_power)(a, 2), np.ones((3, 3)) @ a.T + a.T @ np.ones((3, 3)))


def test_vmap_of_lstsq_solves_each_example():
    # NumPy has no stacked lstsq: vmap loops over the examples (it was refused)
    a, b = np.stack([tall(0, (5, 3)), tall(1, (5, 3))]), np.stack([np.ones(5), np.arange(5.0)])
    np.testing.assert_allclose(tr.vmap(lstsq_vmapped)(a, b), np.stack([lstsq_vmapped(*ab) for ab in zip(a, b)]),
                               rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------ degenerate singular values
def singular_values_through_svd(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(s ** 2) + np.sum(s)


def singular_values_alone(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) ** 2) + np.sum(np.linalg.svdvals(a))


def singular_vector_sum(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(u[:, 1:2] * u[:1, 1:2])        # one vector of the repeated pair (s sorted: 5, 2, 2)


def test_singular_values_alone_have_a_finite_gradient_at_repeated_singular_values():
    """d (sum s^2 + sum s) = 2 a + U Vh, whichever singular vectors LAPACK picks: finite at the
    identity (every singular value repeated), as JAX gives (its zero cotangents are symbolic)."""
    a = np.diag([2.0, 2.0, 5.0])
    want = 2 * a + np.eye(3)
    with np.errstate(divide="ignore", invalid="ignore"):
        for fn in (singular_values_through_svd, singular_values_alone):
            np.testing.assert_allclose(tr.grad(fn)(a), want, atol=1e-12)
            np.testing.assert_allclose(tr.jit(tr.grad(fn))(a), want, atol=1e-12)
        np.testing.assert_allclose(tr.jvp(singular_values_through_svd, (a,), (np.eye(3),))[1], np.sum(want * np.eye(3)),
                                   atol=1e-12)


def test_a_zero_singular_value_keeps_the_singular_values_gradient_finite():
    a = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])         # tall, rank 1: s = (1, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        assert np.all(np.isfinite(tr.grad(singular_values_through_svd)(a)))


def test_singular_vectors_at_repeated_singular_values_have_no_finite_derivative():
    """The singular vectors of a repeated singular value are not unique: F_ij = 1 / (s_j^2 - s_i^2) is
    infinite, and the derivative is inf or nan (JAX gives them too), not a finite number that would be wrong."""
    rng = np.random.default_rng(7)
    left, right = np.linalg.qr(rng.normal(size=(3, 3)))[0], np.linalg.qr(rng.normal(size=(3, 3)))[0]
    a = left @ np.diag([2.0, 2.0, 5.0]) @ right.T
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        gradient = tr.grad(singular_vector_sum)(a)
    # rounding splits the repeated pair by ~1e-16, so F is ~1e16 rather than inf (as in JAX): either way
    # the derivative is no usable number
    assert not np.all(np.isfinite(gradient)) or np.max(np.abs(gradient)) > 1e8


def test_svd_derivatives_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def ours(a):
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return np.sum(np.sin(u * u[..., :1, :])) + np.sum(s ** 3) + np.sum(np.cos(vh * vh[..., :, :1]))

    def theirs(a):
        u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        return jnp.sum(jnp.sin(u * u[..., :1, :])) + jnp.sum(s ** 3) + jnp.sum(jnp.cos(vh * vh[..., :, :1]))
    for shape in [(4, 3), (3, 4), (2, 5, 3)]:
        a = tall(1, shape) if len(shape) == 2 else np.random.default_rng(2).uniform(0.1, 0.9, shape)
        np.testing.assert_allclose(tr.grad(ours)(a), np.asarray(jax.grad(theirs)(a)), rtol=1e-9, atol=1e-10)
        t = np.random.default_rng(3).normal(size=shape)
        np.testing.assert_allclose(tr.jvp(ours, (a,), (t,))[1], float(jax.jvp(theirs, (a,), (t,))[1]), rtol=1e-9)


# ------------------------------------------------------------------ pinv, qr, lstsq
def pinv_loss(a):
    return np.sum(np.sin(np.linalg.pinv(a)))


def test_pinv_of_a_rank_deficient_matrix_has_the_constant_rank_derivative():
    """pinv is not continuous where the rank changes; at a rank-deficient matrix the rule gives the
    derivative along perturbations that keep the rank (Golub and Pereyra), as JAX's pinv does."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(4)
    a = rng.normal(size=(4, 2)) @ rng.normal(size=(2, 3))          # rank 2 of 3
    ours = tr.grad(pinv_loss)(a)
    theirs = np.asarray(jax.grad(lambda a: jax.numpy.sum(jax.numpy.sin(jax.numpy.linalg.pinv(a))))(a))
    np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-10)
    # and along a perturbation that keeps the rank, central differences agree
    direction = a @ rng.normal(size=(3, 3))                        # a (I + eps M) keeps rank 2
    eps = 1e-6
    difference = (pinv_loss(a + eps * direction) - pinv_loss(a - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(np.sum(ours * direction), difference, rtol=1e-6)


def qr_loss(a):
    q, r = np.linalg.qr(a)
    return np.sum(q ** 2 * 0.5) + np.sum(r ** 2)


def test_qr_of_a_wide_matrix_has_no_derivative():
    """R of a wide matrix is not square: the rule's np.linalg.inv(R) raises at run time (JAX raises
    NotImplementedError), never a wrong number."""
    with pytest.raises(np.linalg.LinAlgError):
        tr.grad(qr_loss)(tall(0, (3, 4)))


def lstsq_loss(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(x ** 2) + np.sum(residuals) + np.sum(s)


def test_lstsq_derivatives_match_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def theirs(a, b):
        x, residuals, rank, s = jnp.linalg.lstsq(a, b, rcond=None)
        return jnp.sum(x ** 2) + jnp.sum(residuals) + jnp.sum(s)
    a, b = tall(5, (5, 3)), np.random.default_rng(6).uniform(size=(5, 2))
    for got, want in zip(tr.grad(lstsq_loss, argnums=(0, 1))(a, b), jax.grad(theirs, argnums=(0, 1))(a, b)):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-9, atol=1e-10)


def test_matrix_power_zero_is_the_identity_in_the_arguments_dtype():
    a = np.arange(9).reshape(3, 3)
    got = tr.jit(lambda a: np.linalg.matrix_power(a, 0), target="python")(a)
    np.testing.assert_array_equal(got, np.linalg.matrix_power(a, 0))
    assert got.dtype == np.linalg.matrix_power(a, 0).dtype
