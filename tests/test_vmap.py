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
    # np.dot of batched rows with one unbatched operand: one np.dot of the stacked examples
    "dot_matrix_vector": (c.dot_weights, (r(B, 2, 5), r(5)), (0, None), 0),
    "dot_vector_matrix": (c.dot_weights, (r(5, B), r(5, 3)), (1, None), 0),
    "dot_matrix_matrix": (c.dot_weights, (r(B, 2, 5), r(5, 3)), (0, None), -1),
    "dot_after_update": (c.dot_after_update, (r(B, 5), r(5)), (0, None), 0),
    "gather_after_write": (c.gather_after_write, (r(B, 5), np.array([4, 0, 2, 1])), 0, 0),
    "write_through_alias": (c.write_through_alias, (r(B, 5), np.array([0, 0, 2, 1])), 0, 0),
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
    # exits under per-example conditions (exits.structure_exits turns them into flags)
    "first_positive": (c.first_positive, (r(B, 5) - 1.0,), 0, 0),
    "sum_until_negative": (c.sum_until_negative, (r(B, 5) + 0.5,), 0, 0),
    "sum_skip_negative": (c.sum_skip_negative, (r(B, 5),), 0, 0),
    "stop_index": (c.stop_index, (r(B, 5),), 0, 0),
    "newton_capped": (c.newton_capped, (np.array([0.5, 2.0, 1e6, 1.0]),), 0, 0),
    "nested_return": (c.nested_return, (r(B, 4) + 0.8,), 0, 0),
    "break_in_batched": (c.break_in_batched, (np.array([1.0, 60.0, 0.5, 3.0]),), 0, 0),
    "return_in_batched": (c.return_in_batched, (np.array([1.0, -60.0, 0.5, -3.0]),), 0, 0),
    "sign_and_size": (c.sign_and_size, (np.array([1.0, -60.0, 0.5, -3.0]),), 0, 0),
    # first assigned inside a loop under a per-example condition, read after it
    "last_crossing": (c.last_crossing, (np.hstack([r(B, 2), np.full((B, 1), 5.0), r(B, 2)]), 0.3), (0, None), 0),
    "return_in_a_branch_no_pass_takes": (c.return_in_a_branch_no_pass_takes, (r(B, 3),), 0, 0),
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


# ------------------------------------------------------------ in_axes / out_axes
AXES_CASES = [
    # (function, args, in_axes, out_axes)
    (c.scale_shift, (r(3, B), 2.0), (1, None), 0),
    (c.scale_shift, (r(3, B), 2.0), (-1, None), 1),
    (c.scale_shift, (r(3, B), 2.0), [-1, None], -1),
    (c.mixed_rank, (r(B), r(3, B)), (0, 1), 0),
    (c.transpose_mat, (r(2, B, 3),), 1, 2),
    (c.transpose_mat, (r(2, 3, B),), -1, -2),
    (c.returns_unbatched, (r(B, 3), r(3)), (0, None), 0),     # unbatched output broadcast
    (c.returns_unbatched, (r(3, B), r(3)), (1, None), (0, None)),
    (c.mean_var, (r(6, B),), 1, (0, -1)),
]


@pytest.mark.parametrize("case", range(len(AXES_CASES)))
def test_in_axes_out_axes_forms(case):
    fn, args, in_axes, out_axes = AXES_CASES[case]
    axes = tuple(in_axes) if isinstance(in_axes, list) else in_axes
    check(fn, args, axes, out_axes, "python")


def test_axis_size_with_all_unbatched_arguments():
    got = tr.vmap(c.scale_shift, in_axes=(None, None), axis_size=3)(np.ones(2), 2.0)
    np.testing.assert_allclose(got, np.broadcast_to(np.sin(np.ones(2)) * 2.0 + 1.0, (3, 2)))


def test_nested_vmap_matches_double_loop():
    x, w = r(3, B, 5), r(5)
    inner = tr.vmap(c.dot_weights, in_axes=(0, None))
    outer = tr.vmap(inner, in_axes=(1, None), out_axes=1)
    want = np.stack([np.stack([np.dot(x[i, b], w) for i in range(3)]) for b in range(B)], axis=1)
    np.testing.assert_allclose(outer(x, w), want)
    np.testing.assert_allclose(tr.jit(outer)(x, w), want)


def test_nested_vmap_with_batched_control_flow():
    x = np.array([[0.5, 2.0, 9.0], [100.0, 3.0, 0.25]])
    twice = tr.vmap(tr.vmap(c.newton_sqrt))
    np.testing.assert_allclose(twice(x), np.sqrt(x))


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_jvp_of_vmap_is_the_batched_jvp(target):
    # each tangent is batched as its primal: x_dot along in_axes 0, a_dot shared by the batch
    x, a, x_dot, a_dot = r(3, 2), r(2), r(3, 2), r(2)
    batched = tr.vmap(c.scale_shift, in_axes=(0, None))
    out, out_dot = tr.jvp(batched if target == "python" else tr.jit(batched), (x, a), (x_dot, a_dot))
    np.testing.assert_allclose(out, loop_oracle(c.scale_shift, (x, a), (0, None)))
    np.testing.assert_allclose(out_dot, np.cos(x) * x_dot * a + np.sin(x) * a_dot)


def test_jvp_of_vmap_still_checks_the_batch_sizes():
    batched = tr.vmap(c.dot_weights, in_axes=(0, 0))
    x, w = r(3, 2), r(4, 2)
    with pytest.raises(ValueError, match="inconsistent batch sizes"):
        tr.jvp(batched, (x, w), (x, w))


# ------------------------------------------------------------------ named axes
@pytest.mark.parametrize("target", ["python", "cpu"])
def test_collectives_over_the_vmapped_axis(target):
    x = r(B, 3)
    run = (lambda f: tr.jit(f)) if target == "cpu" else (lambda f: f)
    np.testing.assert_allclose(run(tr.vmap(c.psum_normalize, axis_name="batch"))(x), x / x.sum(0))
    np.testing.assert_allclose(run(tr.vmap(c.pmean_center, axis_name="batch"))(x), x - x.mean(0))
    np.testing.assert_allclose(run(tr.vmap(c.pmax_pmin, axis_name="batch"))(x),
                               np.broadcast_to(x.max(0) - x.min(0), x.shape))
    np.testing.assert_allclose(run(tr.vmap(c.gather_all, axis_name="batch"))(x), np.broadcast_to(x, (B, B, 3)))
    np.testing.assert_allclose(run(tr.vmap(c.index_of, axis_name="batch"))(x), x * np.arange(B)[:, None])


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_forward_mode_of_pmax_and_pmin_inside_the_vmap(target):
    # the tangent of the examples that attain the extremum, ties averaged; oracle: central differences
    # of the same function written with NumPy's max and min over the batch
    x, t = r(B, 3), r(B, 3)
    x[1, 0] = x[2, 0] = x[:, 0].max() + 1.0        # a tie at the maximum
    run = (lambda f: tr.jit(f)) if target == "cpu" else (lambda f: f)
    got = run(tr.vmap(c.pmax_pmin_directional, axis_name="batch"))(x, t)

    def same(v):
        return v * v.max(0) + np.sin(v.min(0))
    eps = 1e-6
    at_tie = same(x + eps * t) - same(x - eps * t)      # one-sided at the tie: the rule averages
    tie_tangent = (t[1, 0] + t[2, 0]) / 2.0
    want = at_tie / (2 * eps)
    want[:, 0] = t[:, 0] * x[:, 0].max() + x[:, 0] * tie_tangent + \
        np.cos(x[:, 0].min()) * t[np.argmin(x[:, 0]), 0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_collective_outside_vmap_is_an_unbound_axis():
    with pytest.raises(NameError, match="unbound axis name"):
        tr.lax.psum(1.0, "batch")


def test_nested_named_axes():
    x = r(3, B)
    inner = tr.vmap(c.psum_normalize, axis_name="batch")        # normalizes over the inner axis
    outer = tr.vmap(inner, in_axes=1, out_axes=1, axis_name="outer")
    np.testing.assert_allclose(outer(x), x / x.sum(0))


# ------------------------------------------------------------------- bad input
def test_mismatched_batch_sizes():
    with pytest.raises(ValueError, match="inconsistent batch sizes"):
        tr.vmap(c.mixed_rank)(r(3), r(4, 2))


def test_axis_out_of_range():
    with pytest.raises(ValueError, match="out of range"):
        tr.vmap(c.scale_shift, in_axes=(2, None))(r(3, 2), 1.0)


def test_in_axes_length_mismatch():
    with pytest.raises(ValueError, match="in_axes has 3 entries"):
        tr.vmap(c.scale_shift, in_axes=(0, None, 0))


def test_no_batched_argument_and_no_axis_size():
    with pytest.raises(ValueError, match="axis_size"):
        tr.vmap(c.scale_shift, in_axes=None)


def test_batched_output_with_out_axes_none():
    with pytest.raises(ValueError, match="out_axes is None"):
        tr.vmap(c.scale_shift, in_axes=(0, None), out_axes=None)(r(3, 2), 1.0)


def test_a_tuple_assigned_in_a_loop_whose_passes_differ_is_masked_element_by_element():
    """Each example stops after its own passes: (1, 0) for 1.0, which never enters the loop."""
    xs = np.array([1.0, 60.0, 2.0])
    first, second = tr.vmap(c.tuple_in_loop)(xs)
    expected = [c.tuple_in_loop(x) for x in xs]
    np.testing.assert_array_equal(first, [pair[0] for pair in expected])
    np.testing.assert_array_equal(second, [pair[1] for pair in expected])


@pytest.mark.parametrize("fn, line_text", [
    (c.tuple_of_tuples_in_loop, "pair = ((x, 1.0), 2.0)"),
    (c.bad_arange, "np.arange(0, n)"),
])
def test_unbatchable_constructs_name_the_user_line(fn, line_text):
    with pytest.raises(tr.TransformError) as info:
        tr.vmap(fn)(np.array([1.0, 60.0, 2.0]) if fn is not c.bad_arange else np.array([1, 2]))
    location = info.value.location
    assert location is not None and location.filename.endswith("corpus_vmap.py")
    with open(location.filename) as source:
        assert line_text in source.read().splitlines()[location.line - 1]


# --------------------------------------------------------------- rule coverage
def test_every_primitive_has_a_batching_rule_or_a_documented_refusal():
    table = rules.table("batching")
    missing = [name for name in primitives.REGISTRY
               if name not in table and name not in rules.UNSUPPORTED["batching"]]
    assert not missing, f"no batching rule for {missing}"
    for name, template in table.items():
        assert template.rule_options.get("strategy"), name


# ------------------------------------------------------------ golden generated code
GOLDEN = __import__("pathlib").Path(__file__).parent / "golden_vmap"
UPDATE = __import__("os").environ.get("UPDATE_GOLDEN") == "1"
GOLDEN_CASES = ["relu_if", "ode_steps", "sum_first", "masked_update", "matmul_both", "gather", "mean_var",
                "first_positive", "newton_capped", "dot_weights", "matvec"]


def generated_function(fn, in_axes, out_axes) -> str:
    """The generated function's text (the module header names temp paths, so it is left out)."""
    core = TRANSFORMS["vmap"](normalize(fn), in_axes=in_axes, out_axes=out_axes)
    return core.code()


@pytest.mark.parametrize("name", GOLDEN_CASES)
def test_golden_generated_code(name):
    fn, args, in_axes, out_axes = CORPUS[name]
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    text = generated_function(fn, axes, out_axes)
    path = GOLDEN / f"{name}.py"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"generated code for {name} changed; rerun with UPDATE_GOLDEN=1 and read the diff"


# ------------------------------------------------------------ per-example gradients
def test_vmap_of_grad_gives_per_example_gradients():
    from oracles import central_difference_grad
    w, x, y = r(5), r(B, 5), (rng.random(B) > 0.5) * 1.0
    per_example = tr.vmap(tr.grad(c.logistic_loss), in_axes=(None, 0, 0))(w, x, y)
    want = np.stack([central_difference_grad(c.logistic_loss, (w, x[b], y[b])) for b in range(B)])
    np.testing.assert_allclose(per_example, want, rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------ pytree arguments
def test_structured_argument_shares_its_axis_over_leaves():
    params = {"W": r(B, 3, 2), "b": r(B, 3)}
    x = r(B, 2)
    want = np.stack([c.affine({"W": params["W"][i], "b": params["b"][i]}, x[i]) for i in range(B)])
    np.testing.assert_allclose(tr.vmap(c.affine)(params, x), want)
    shared = {"W": params["W"][0], "b": params["b"][0]}
    want = np.stack([c.affine(shared, x[i]) for i in range(B)])
    np.testing.assert_allclose(tr.vmap(c.affine, in_axes=(None, 0))(shared, x), want)
    with pytest.raises(ValueError, match="inconsistent batch sizes within argument 0"):
        tr.vmap(c.affine)({"W": params["W"], "b": params["b"][:3]}, x)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_in_axes_prefix_gives_each_leaf_its_own_axis(target):
    W, bs, x = r(3, 2), r(3, B), r(B, 2)
    want = np.stack([c.affine({"W": W, "b": bs[:, i]}, x[i]) for i in range(B)])
    mapped = tr.vmap(c.affine, in_axes=({"W": None, "b": 1}, 0))
    np.testing.assert_allclose(tr.jit(mapped, target=target)({"W": W, "b": bs}, x), want)


def test_in_axes_prefix_of_a_tuple_argument():
    scale, shifts, x = 2.0, r(B, 3), r(3)
    want = np.stack([c.scaled_pair((scale, shifts[i]), x) for i in range(B)])
    np.testing.assert_allclose(tr.vmap(c.scaled_pair, in_axes=((None, 0), None))((scale, shifts), x), want)
    np.testing.assert_allclose(tr.vmap(c.scaled_pair, in_axes=[[None, 0], None])([scale, shifts], x), want)


def test_vmap_of_grad_of_a_structured_argument():
    from oracles import central_difference_grad
    params, x = {"W": r(3, 2), "b": r(3)}, r(B, 2)
    per_example = tr.vmap(tr.grad(c.affine_loss), in_axes=(None, 0))(params, x)
    for name in ("W", "b"):
        def of_leaf(leaf, xi, name=name):
            return c.affine_loss({**params, name: leaf}, xi)
        want = np.stack([central_difference_grad(of_leaf, (params[name], x[i])) for i in range(B)])
        np.testing.assert_allclose(per_example[name], want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("in_axes, message", [
    (({"W": None}, 0), "does not match the argument's structure"),
    (((None, 0), 0), "a tuple prefix needs a tuple or list of 2 items"),
    (({"W": None, "b": "x"}, 0), "must be an int, None, or a tuple/list/dict"),
    (({"W": None, "b": 2}, 0), "out of range for argument 0"),
])
def test_in_axes_prefix_mismatch_is_a_value_error(in_axes, message):
    with pytest.raises(ValueError, match=message):
        tr.vmap(c.affine, in_axes=in_axes)({"W": r(3, 2), "b": r(3, B)}, r(B, 2))


def test_in_axes_prefix_all_none_needs_an_axis_size():
    with pytest.raises(ValueError, match="at least one non-None"):
        tr.vmap(c.affine, in_axes=({"W": None, "b": None}, None))


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_number_or_truth_value_of_an_example_that_is_an_array_is_refused_as_numpy_refuses_it(target):
    # Each example a number: the same values as a loop over the examples.  Each example an array
    # of three: NumPy's own error at the user's line (vmap cast or masked each element before, and
    # returned numbers where NumPy refuses); vmap of vmap checks the inner examples.
    numbers = np.array([0.5, 3.0, -2.0, 8.0])
    for fn in (c.steps_until_small, c.negated_condition, c.number_of_the_example):
        batched = tr.jit(tr.vmap(fn), target=target)
        np.testing.assert_allclose(batched(numbers), [fn(v) for v in numbers])
        twice = tr.jit(tr.vmap(tr.vmap(fn)), target=target)
        np.testing.assert_allclose(twice(numbers.reshape(2, 2)), [[fn(v) for v in row] for row in numbers.reshape(2, 2)])
        line = fn.__code__.co_firstlineno + 1
        for call in (batched, tr.jit(tr.vmap(tr.vmap(fn)), target=target)):
            rows = np.arange(12.0).reshape(4, 3) if call is batched else np.arange(24.0).reshape(2, 4, 3)
            with pytest.raises(tr.ConcreteValueError, match=rf"corpus_vmap\.py:{line}: "):
                call(rows)


@pytest.mark.parametrize("target", ["python", "cpu"])
def test_a_range_bound_of_an_example_that_is_an_array_is_refused(target):
    x = np.arange(12.0).reshape(4, 3)
    counts = np.array([1, 2, 3, 0])
    batched = tr.jit(tr.vmap(c.repeated_sum), target=target)
    np.testing.assert_allclose(batched(x, counts), x * counts[:, None])
    with pytest.raises(tr.ConcreteValueError, match=r"corpus_vmap\.py:\d+: .*range\(\)"):
        batched(x, np.array([[1, 2], [1, 2], [3, 1], [0, 0]]))


@pytest.mark.parametrize("jit", [False, True], ids=["vmap", "jit(vmap)"])
def test_out_axes_as_a_dict_places_each_entry_of_a_dict_output(jit):
    x = np.arange(12.0).reshape(4, 3)
    f = tr.vmap(c.scaled_and_summed, out_axes={"scaled": 1, "total": 0})
    got = (tr.jit(f) if jit else f)(x)
    assert set(got) == {"scaled", "total"}
    np.testing.assert_array_equal(got["scaled"], (x * 2.0).T)
    np.testing.assert_array_equal(got["total"], x.sum(axis=1))
    with pytest.raises(ValueError, match="out_axes is a dict with keys"):
        tr.vmap(c.scaled_and_summed_pair, out_axes={"scaled": 1, "total": 0})(x)
    with pytest.raises(ValueError, match="out_axes is a dict with keys"):
        tr.vmap(c.scaled_and_summed, out_axes={"scaled": 1, "sum": 0})(x)


@pytest.mark.parametrize("jit", [False, True], ids=["vmap", "jit(vmap)"])
def test_axes_given_by_keyword_are_shifted_too(jit):
    """vmap of np.expand_dims(x, axis=1) lost the keyword (a TypeError from NumPy, or a numba
    compile error): keyword axes are shifted as positional ones are."""
    x = np.arange(24.0).reshape(2, 3, 4) / 7.0
    f = tr.vmap(c.axes_by_keyword)
    got = (tr.jit(f) if jit else f)(x)
    np.testing.assert_array_equal(got, np.stack([c.axes_by_keyword(x[i]) for i in range(2)]))
