"""The layout family (np.tile, np.repeat, np.pad, np.diag, np.diagonal, np.rollaxis, np.atleast_*d,
np.broadcast_arrays, np.meshgrid, np.squeeze without an axis): what the rule table's rows
(tests/rule_rows_layout.py) cannot show — refusals and where they point, vmap of a squeeze whose
batch is itself of length 1, and compiled vmap of the gathers."""
import numpy as np
import pytest

import transformer as tr


def squeeze_all(x):
    return np.squeeze(x) * 2.0


def test_squeeze_without_axis_under_jit_is_refused_at_the_users_line():
    with pytest.raises(tr.TransformError, match=r"needs axis= under jit") as error:
        tr.jit(squeeze_all)(np.ones((3, 1)))
    assert "test_layout.py" in str(error.value)


def test_squeeze_without_axis_under_vmap_keeps_the_batch_axis():
    # every axis of an example has length 1, and so has the batch: only the example's axes go
    x = np.full((1, 1, 1), 0.5)
    out = tr.vmap(squeeze_all)(x)
    assert out.shape == (1,) and out[0] == 1.0
    x = np.random.default_rng(0).uniform(size=(4, 1, 3, 1))
    np.testing.assert_allclose(tr.vmap(squeeze_all, in_axes=0)(x), 2.0 * x[:, 0, :, 0])


def test_squeeze_without_axis_under_jit_of_vmap_is_refused():
    with pytest.raises(tr.TransformError, match=r"needs axis= under jit"):
        tr.jit(tr.vmap(squeeze_all))(np.ones((2, 3, 1)))


def test_pad_refuses_modes_that_compute_values():
    with pytest.raises(ValueError, match="linear_ramp"):
        tr.jit(lambda x: np.pad(x, 1, mode="linear_ramp"), target="python")(np.ones(3))


def repeat_each(x, counts):
    return np.repeat(x, counts)


def test_repeat_with_counts_that_differ_between_examples_is_refused():
    with pytest.raises(tr.TransformError, match="differ between examples"):
        tr.vmap(repeat_each)(np.ones((2, 3)), np.array([[1, 2, 0], [0, 1, 1]]))


def layouts(x):
    return (np.tile(x, (2, 1)), np.pad(x, ((1, 2), (3, 0)), mode="reflect"), np.pad(x, 1, constant_values=0.5),
            np.repeat(x, 2, axis=1), np.diagonal(x, 1), np.diag(x[0]), np.atleast_3d(x))


def test_compiled_vmap_gathers_the_whole_batch():
    x = np.random.default_rng(1).uniform(size=(3, 2, 4))
    got = tr.jit(tr.vmap(layouts))(x)
    want = [np.stack(parts) for parts in zip(*(layouts(example) for example in x))]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


def test_compiled_vmap_of_grad_adds_the_copies_back():
    def loss(x):
        return np.sum(np.tile(x, 3) * np.pad(x, (0, 2 * x.shape[0]), mode="wrap"))
    x = np.random.default_rng(2).uniform(size=(2, 4))
    got = tr.jit(tr.vmap(tr.grad(loss)))(x)
    np.testing.assert_allclose(got, 2 * 3 * x)
