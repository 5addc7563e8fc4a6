"""vmap against a Python loop over examples, on the python target and jit."""
import numpy as np
import pytest

import corpus_vmap as c
import transformer as tr
from transformer import core_form, primitives, rules
from transformer.normalize import normalize
from transformer.staging import Step
from transformer.transforms import TRANSFORMS

rng = np.random.default_rng(0)
B = 4


def loop_oracle(fn, args, in_axes=0, out_axes=0, axis_size=None):
    """Run ``fn`` once per example and stack the results: needs nothing of ours."""
    if not isinstance(in_axes, tuple):
        in_axes = (in_axes,) * len(args)
    size = axis_size or next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
    results = [fn(*[a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, in_axes)])
               for b in range(size)]
    if isinstance(results[0], tuple):
        axes = out_axes if isinstance(out_axes, tuple) else (out_axes,) * len(results[0])
        return tuple(stack([r[i] for r in results], ax) for i, ax in enumerate(axes))
    return stack(results, out_axes)


def stack(values, axis):
    return values[0] if axis is None else np.stack([np.asarray(v) for v in values], axis=axis)


def r(*shape):
    return rng.normal(size=shape)


def spd(n):
    a = rng.normal(size=(B, n, n))
    return a @ np.swapaxes(a, 1, 2) + n * np.eye(n)


# name -> (function, args, in_axes, out_axes)
CORPUS = {
    "scale_shift": (c.scale_shift, (r(B, 3), 2.0), (0, None), 0),
    "dot_weights": (c.dot_weights, (r(B, 5), r(5)), (0, None), 0),
    "dot_both": (c.dot_weights, (r(B, 5), r(B, 5)), 0, 0),
    "logistic_loss": (c.logistic_loss, (r(5), r(B, 5), (rng.random(B) > 0.5) * 1.0), (None, 0, 0), 0),
    "normalize_rows": (c.normalize_rows, (np.abs(r(B, 2, 3)) + 0.1,), 0, 0),
    "vector_norm": (c.vector_norm, (r(B, 2, 3),), 0, 0),
    "mean_var": (c.mean_var, (r(B, 6),), 0, 0),
    "relu_if": (c.relu_if, (r(B),), 0, 0),
    "collatz_steps": (c.collatz_steps, (np.array([1, 6, 7, 27]),), 0, 0),
    "sum_first": (c.sum_first, (r(B, 6), np.array([0, 2, 5, 6])), 0, 0),
    "clip_inplace": (c.clip_inplace, (r(B, 5) * 2,), 0, 0),
    "write_row": (c.write_row, (r(B), r(B, 2)), 0, 0),
    "gather": (c.gather, (r(B, 5), np.array([4, 0, 2, 1])), 0, 0),
    "gather_unbatched_x": (c.gather, (r(5), np.array([4, 0, 2, 1])), (None, 0), 0),
    "matvec": (c.matvec, (r(3, 4), r(B, 4)), (None, 0), 0),
    "outer_sum": (c.outer_sum, (r(B, 3), r(2)), (0, None), 0),
    "shapes": (c.shapes, (r(B, 3),), 0, 0),
    "transpose_mat": (c.transpose_mat, (r(B, 2, 3),), 0, 0),
    "softmax": (c.softmax, (r(B, 5),), 0, 0),
    "max_min": (c.max_min, (r(B, 2, 3),), 0, 0),
    "argmax_row": (c.argmax_row, (r(B, 3, 4),), 0, 0),
    "cumulative": (c.cumulative, (r(B, 2, 3),), 0, 0),
    "ode_steps": (c.ode_steps, (np.array([0.5, 1.0, 2.0, 0.005]),), 0, 0),
    "stack_two": (c.stack_two, (r(B, 3), r(3)), (0, None), 0),
    "concat": (c.concat, (r(B, 3), r(2)), (0, None), 0),
    "expand": (c.expand, (r(B, 2),), 0, 0),
    "where_abs": (c.where_abs, (r(B, 3),), 0, 0),
    "piecewise": (c.piecewise, (np.array([-2.0, -0.5, 0.5, 3.0]),), 0, 0),
    "count_positive": (c.count_positive, (r(B, 7),), 0, 0),
    "newton_sqrt": (c.newton_sqrt, (np.array([0.5, 2.0, 9.0, 100.0]),), 0, 0),
    "poly": (c.poly, (r(B), r(4)), (0, None), 0),
    "matmul_both": (c.matmul_both, (r(B, 2, 3), r(B, 3, 2)), 0, 0),
    "solve_lin": (c.solve_lin, (spd(3), r(B, 3)), 0, 0),
    "det_inv": (c.det_inv, (spd(3),), 0, 0),
    "flip_all": (c.flip_all, (r(B, 2, 3),), 0, 0),
    "swap": (c.swap, (r(B, 2, 3),), 0, 0),
    "reduce_axis0": (c.reduce_axis0, (r(B, 3, 2),), 0, 0),
    "std_ddof": (c.std_ddof, (r(B, 5),), 0, 0),
    "any_all": (c.any_all, (r(B, 4),), 0, 0),
    "prod_of": (c.prod_of, (r(B, 3),), 0, 0),
    "first_last": (c.first_last, (r(B, 5),), 0, 0),
    "count_to": (c.count_to, (np.array([0, 1, 4, 7]),), 0, 0),
    "masked_update": (c.masked_update, (r(B, 3), np.array([1.0, -1.0, 2.0, -3.0])), 0, 0),
    "nested_if": (c.nested_if, (r(B), r(B)), 0, 0),
    "shape_query": (c.shape_query, (r(B, 2, 3),), 0, 0),
    "clip_scalar": (c.clip_scalar, (r(B, 3),), 0, 0),
    "mixed_rank": (c.mixed_rank, (r(B), r(B, 3)), 0, 0),
    "norm2": (c.norm2, (r(B, 3),), 0, 0),
    "linspace_scale": (c.linspace_scale, (r(B, 1),), 0, 0),
    "returns_unbatched": (c.returns_unbatched, (r(B, 3), r(3)), (0, None), (0, None)),
}


def check(fn, args, in_axes, out_axes, target):
    mapped = tr.vmap(fn, in_axes=in_axes, out_axes=out_axes)
    if target == "cpu":
        mapped = tr.jit(mapped)
    got = mapped(*args)
    want = loop_oracle(fn, args, in_axes, out_axes)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        assert np.shape(got) == np.shape(want)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_python(name):
    check(*CORPUS[name], "python")


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_jit(name):
    check(*CORPUS[name], "cpu")


def test_corpus_outputs_are_core_form():
    for name, (fn, args, in_axes, out_axes) in CORPUS.items():
        axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        core = TRANSFORMS["vmap"](normalize(fn), in_axes=axes, out_axes=out_axes)
        core_form.check(core.node)
